"""One lock per root, held while qola changes anything, so concurrent runs take turns.

How it is held and how a waiter names the holder: docs/development.md, "The root's lock"."""

from __future__ import annotations

import errno
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from qola.base import hints
from qola.base.errors import GitError
from qola.repo import gitfiles, store

# Generous: another build folder may be cloning a large dependency right now,
# but a CI job whose lock holder is stuck must end with an error, not at the
# job's own timeout with no word about why (README "Guarantees").
DEFAULT_TIMEOUT = 600.0
# The locks this thread holds (by the lock file's real path) and how deeply: a command that
# holds its root's lock across several steps (bump: the record of its edit, the checkout,
# the commit) takes it again in the checkout, and a second flock of the same file from the
# same process would wait for itself.
_held = threading.local()


@dataclass(frozen=True)
class Holder:
    """Who holds (or last held) the lock, as it wrote itself into the file."""

    pid: int
    host: str
    started: float
    command: str

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started))
        return f"pid {self.pid} on {self.host} since {when}: {self.command}"

    @property
    def is_alive_here(self) -> bool | None:
        """Whether the holder runs; None when it runs on another host (a shared file system)."""
        if self.host != socket.gethostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


class LockError(GitError):
    """The root's lock could not be had in time (exit 3); nothing was changed."""


def lock_path(root: Path) -> Path:
    """Where the root's lock lives: in its git dir, else in the root itself."""
    return store.lock_file(root, gitfiles.git_dir(root))


@contextmanager
def root_lock(
    root: Path,
    timeout: float = DEFAULT_TIMEOUT,
    on_wait: Callable[[str], None] | None = None,
    needs: str = "",
) -> Iterator[None]:
    """Hold the root's lock; wait up to timeout seconds, then raise LockError (exit 3).

    needs: what the lock is for, said when a read-only file system refuses it.
    """
    path = lock_path(root)
    held: dict[str, int] = _held.__dict__.setdefault("depth", {})
    key = os.path.realpath(path)
    if held.get(key):
        held[key] += 1
        try:
            yield
        finally:
            held[key] -= 1
        return
    # No O_TRUNC: the file may be someone else's record, and they hold the lock. The
    # record is written in place, so a link planted there (to a file of the user's,
    # when qola runs as root in a tree someone else owns) is refused, not followed.
    try:
        fd = store.open_lock(path)
    except store.UnsafePathError as error:
        raise LockError(
            str(root),
            f"cannot take the lock {path}: it {error.strerror}",
            f"remove {path} (qola creates it again)",
        ) from None
    except PermissionError as error:
        raise LockError(
            str(root),
            f"cannot take the lock {path}: {error.strerror}{_owner(path)}; nothing was changed",
            f"once no qola run is using it, remove {path} (qola makes it again); or run "
            "qola as the user the tree belongs to",
        ) from None
    except OSError as error:
        if error.errno != errno.EROFS:
            raise
        raise LockError(
            str(root),
            f"cannot take the lock {path}: the file system is read-only"
            + (f", and {needs}" if needs else "") + "; nothing was changed",
            "run qola checkout where the tree is writable, then use it read-only",
        ) from None
    waiting = None if on_wait is None else lambda fd: on_wait(_waiting(fd, root))
    with store.flocked(fd, timeout, waiting, lambda fd: _timed_out(fd, path, root, timeout)):
        _write_holder(fd)
        held[key] = 1
        try:
            yield
        finally:
            del held[key]
            # Cleared while still held: a record in the file means a run holds the lock,
            # or died holding it (SIGKILL), which `read_holder` callers can tell apart.
            os.ftruncate(fd, 0)


def _owner(path: Path) -> str:
    """`(it belongs to uid N)` when another user made the lock file (a build run as root,
    say, before the tree's owner ran qola), else nothing."""
    try:
        uid = path.stat().st_uid
    except OSError:
        return ""
    return f" (it belongs to uid {uid}, not {os.geteuid()})" if uid != os.geteuid() else ""


def read_holder(path: Path) -> Holder | None:
    """The record in a lock file, or None when it is empty or unreadable."""
    return _parse_holder(store.read_file(path, path.parent) or b"")


def _holder_of(fd: int) -> Holder | None:
    """The record in the lock file this run has open (and waits on)."""
    try:
        return _parse_holder(os.pread(fd, 4096, 0))
    except OSError:
        return None


def _parse_holder(raw: bytes) -> Holder | None:
    try:
        data = json.loads(raw.split(b"\n", 1)[0])
        return Holder(
            int(data["pid"]), str(data["host"]), float(data["started"]), str(data["command"])
        )
    except (ValueError, KeyError, TypeError):
        return None


def _waiting(fd: int, root: Path) -> str:
    holder = _holder_of(fd)
    by = f" (held by {holder.describe()})" if holder else ""
    return f"waiting for the lock on {root}{by}"


def _timed_out(fd: int, path: Path, root: Path, timeout: float) -> LockError:
    holder = _holder_of(fd)
    return LockError(
        str(root),
        f"could not take the lock {path} within {timeout:g} s: "
        + (f"it is held by {holder.describe()}" if holder else "its holder is unknown"),
        hints.either(
            "wait for that run to finish, or raise --lock-timeout (env QOLA_LOCK_TIMEOUT)",
            "wait for that run to finish and configure again, or wait longer: ",
            hints.configure(env="QOLA_LOCK_TIMEOUT=1800"),
        ),
    )


def _write_holder(fd: int) -> None:
    record = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": time.time(),
        "command": " ".join(["qola", *sys.argv[1:]])[:500],
    }
    data = (json.dumps(record) + "\n").encode()
    # Write first, then cut off what an older, longer record left after it.
    os.pwrite(fd, data, 0)
    os.ftruncate(fd, len(data))
