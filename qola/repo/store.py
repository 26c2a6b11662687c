"""Every path and ref qola writes, and the one safe way to write a file.

The list of paths and how a write avoids links: docs/development.md, "Every path qola
writes, and how"."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from qola.repo import noop_stamp
from qola.repo.gitpaths import common_dir
from qola.repo.noop_stamp import STATE as STATE

LOCK_NAME = "qola.lock"
QOLA_REFS = "refs/qola"  # every ref qola makes is below this
BACKUP_PREFIX = f"{QOLA_REFS}/backup"
# Every commit qola checked out in a repository (a dependency, a nested submodule) and
# every pin asked of a --cache mirror: the ref keeps the commit from garbage collection,
# and a HEAD there is never taken for someone's local work.
PINS_PREFIX = f"{QOLA_REFS}/pins/"
PROBE_REF = f"{QOLA_REFS}/track"
_CLONE_MARK = ".qola-clone-"



def pin_ref(sha: str) -> str:
    """The ref that remembers a commit qola checked out (or a mirror was asked for)."""
    return PINS_PREFIX + sha


_serial = itertools.count(1)  # next() is atomic under the GIL: unique within the process


# ----------------------------------------------------------------------------- where


def lock_file(root: Path, gitdir: Path | None) -> Path:
    """The root's lock: in its common git dir (gitdir given), else in the root itself."""
    return (common_dir(gitdir) if gitdir is not None else root) / LOCK_NAME


def moving_marker(gitdir: Path) -> Path:
    """The record of a move under way in the repository of gitdir."""
    return gitdir / STATE / "moving"


def editing_record(gitdir: Path) -> Path:
    """The record of an edit of the manifest under way, in the root's (own) git dir."""
    return gitdir / STATE / "editing"


def noop_stamps(gitdir: Path) -> Path:
    """The folder of the no-op stamps (noop_stamp.py: where each one lives, its format)."""
    return Path(noop_stamp.path(os.fspath(gitdir), "x")).parent


def backup_ref(name: str, nested: str = "", why: str = "") -> str:
    """A backup ref name no other save can have: UTC time to the microsecond, pid, a counter."""
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now))
    micro = int((now % 1) * 1_000_000)
    unique = f"{stamp}.{micro:06d}Z-{os.getpid()}-{next(_serial)}"
    tail = f"{unique}-{why}" if why else unique
    return f"{backup_prefix(name)}{ref_path(nested) + '/' if nested else ''}{tail}"


_REF_SAFE = re.compile(r"[A-Za-z0-9_+,=-]")  # '.' is safe only inside a component (below)


# Each ref is a file (and each folder of its name a folder) below refs/: a component may be
# no longer than NAME_MAX (255 bytes on every file system qola supports), with room left for
# git's `<name>.lock` and more. The whole nested part is kept well below PATH_MAX besides, as
# the git dir's own path (.git/modules/<path>/refs/...) comes before it.
_MAX_REF_COMPONENT = 200
_MAX_REF_PATH = 1024
_SHORTENED = "%-"  # never in a %XX encoding ('%' is always followed by two hex digits there)
_HASHED = 24  # hex digits of sha256 that name what was cut


def ref_path(path: str) -> str:
    """A nested path as ref name components git accepts, one per folder, readable where it
    can be: every byte git refuses (a space, `~^:?*[\\`, a control character), a leading
    or doubled or final '.', `@{`, a `.lock` ending, anything not ASCII, and '%' itself is
    %XX. `extern/nested` stays itself; `ext/my lib` is `ext/my%20lib`, `.deps/x` `%2Edeps/x`.

    A component whose encoding is over _MAX_REF_COMPONENT bytes is cut, and `%-` and a hash
    of the whole component follow; a whole over _MAX_REF_PATH keeps the components that fit
    and then `%-` and a hash of the whole path: each still one name no other path has (a
    cut one has `%-`, which no encoding holds)."""
    parts = [_shortened(_ref_component(part), part) for part in path.split("/")]
    whole = "/".join(parts)
    if len(whole) <= _MAX_REF_PATH:
        return whole
    kept: list[str] = []
    room = _MAX_REF_PATH - len(_SHORTENED) - _HASHED
    for part in parts:
        if sum(len(k) + 1 for k in kept) + len(part) + 1 > room:
            break
        kept.append(part)
    return "/".join([*kept, _SHORTENED + _digest(path)])


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:_HASHED]


def _shortened(encoded: str, part: str) -> str:
    """encoded (part's encoding), cut to _MAX_REF_COMPONENT bytes with a hash of part."""
    if len(encoded) <= _MAX_REF_COMPONENT:
        return encoded
    cut = _MAX_REF_COMPONENT - len(_SHORTENED) - _HASHED
    # Never inside a %XX: a '%' in the last two characters kept is cut off with them.
    at = encoded.rfind("%", cut - 2, cut)
    return encoded[: at if at >= 0 else cut] + _SHORTENED + _digest(part)


def _ref_component(part: str) -> str:
    out = []
    for i, char in enumerate(part):
        inner_dot = char == "." and 0 < i < len(part) - 1 and part[i - 1] != "." and (
            part[i:] != ".lock"
        )
        if _REF_SAFE.match(char) or inner_dot or (char == "@" and part[i + 1 : i + 2] != "{"):
            out.append(char)
        else:
            out.append("".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogateescape")))
    return "".join(out)


def backup_prefix(name: str) -> str:
    """Where a dependency's backups are listed (`git for-each-ref` this)."""
    return f"{BACKUP_PREFIX}/{name}/"


def mirror_path(cache: Path, url: str) -> Path:
    """The mirror for url in a cache folder: a readable name plus a hash of the whole URL."""
    tail = url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", tail)[:40] or "repo"
    return cache / f"{name}-{hashlib.sha256(url.encode()).hexdigest()[:16]}.git"


def mirror_lock(mirror: Path) -> Path:
    return mirror.with_name(mirror.name + ".lock")


def mirror_temp(mirror: Path) -> Path:
    """A new name for a mirror being created (it must not exist yet)."""
    return mirror.with_name(f"{mirror.name}.tmp{os.getpid()}-{next(_serial)}")


def temp_clone(target: Path) -> Path:
    """Where a clone of target is made before it is renamed into place."""
    return target.parent / f".{target.name}{_CLONE_MARK}{os.getpid()}"


def abandoned_clones(target: Path) -> list[Path]:
    """Temporary clones of target whose run is gone (killed mid-clone)."""
    from glob import escape

    found = []
    # Without the dash: older qola named them `.<name>.qola-clone` too.
    for leftover in target.parent.glob(f"{escape('.' + target.name + _CLONE_MARK[:-1])}*"):
        pid = leftover.name.rsplit("-", 1)[-1]
        if not (pid.isdigit() and is_alive(int(pid))):
            found.append(leftover)
    return found


def is_alive(pid: int) -> bool:
    """True when a process with this pid runs on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ----------------------------------------------------------------------------- how


def write_file(path: Path | str, data: bytes, under: Path | str, mode: int = 0o666) -> None:
    """Replace path (below the trusted folder `under`) with data, atomically.

    Folders on the way are created; none is followed if it is a symbolic link, and
    the file itself is renamed into place, so a link planted there is replaced and its
    target never written. Raises OSError (ELOOP, ENOTDIR, EISDIR, ENOSPC ...).
    """
    folder, name = _split(path, under)
    dir_fd = _open_folder(under, folder, create=True)
    try:
        tmp = f".{name}.{os.getpid()}.{threading.get_ident()}.{next(_serial)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(tmp, flags, mode, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
    finally:
        os.close(dir_fd)


def make_folders(path: Path | str, under: Path | str) -> None:
    """Create path and the folders on the way below the trusted folder `under`, following
    no symbolic link among them (OSError when one is in the way)."""
    folders = list(Path(os.path.relpath(path, under)).parts)
    if folders[:1] == [".."] or os.path.isabs(os.path.relpath(path, under)):
        raise ValueError(f"{path} is not below {under}")
    if folders == ["."]:
        return
    os.close(_open_folder(under, folders, create=True))


def remove_file(path: Path | str, under: Path | str) -> bool:
    """Remove path (below `under`) without following a link on the way; False if absent."""
    folder, name = _split(path, under)
    try:
        dir_fd = _open_folder(under, folder, create=False)
    except FileNotFoundError:
        return False
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return False
    finally:
        os.close(dir_fd)
    return True


def read_file(path: Path | str, under: Path | str) -> bytes | None:
    """The content of a regular file qola wrote below `under`; None when there is none.

    Links are not followed (on the way or at the name), and anything but a regular
    file (a FIFO would hang the read) counts as absent.
    """
    folder, name = _split(path, under)
    try:
        dir_fd = _open_folder(under, folder, create=False)
        try:
            # O_NONBLOCK: a FIFO planted at the name must not hang qola
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
            fd = os.open(name, flags, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            return handle.read()
    except OSError:
        return None


def open_lock(path: Path, mode: int = 0o644) -> int:
    """Open (creating) a lock file for reading and writing, refusing links and non-files.

    The lock's record is written in place, so the file must be a regular file of
    qola's own: not a symbolic link (O_NOFOLLOW) and not a hard link to someone's file.
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, mode)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EMLINK):  # EMLINK: some BSDs, for O_NOFOLLOW
            raise _unsafe(path, "is a symbolic link") from None
        raise
    info = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(info.st_mode):
        problem = "is not a regular file"
    elif info.st_nlink != 1:
        problem = f"is a hard link ({info.st_nlink} names for one file)"
    if problem is not None:
        os.close(fd)
        raise _unsafe(path, problem)
    return fd


# How often a wait for a lock with a timeout tries again: soon, then every half second.
_FIRST_POLL = 0.02
_MAX_POLL = 0.5


@contextlib.contextmanager
def flocked(
    fd: int,
    timeout: float | None = None,
    waiting: Callable[[int], None] | None = None,
    timed_out: Callable[[int], BaseException] | None = None,
) -> Iterator[None]:
    """Hold an exclusive flock on fd (a lock file open_lock opened) meanwhile, then close fd,
    which releases it. With no timeout it waits as long as the holder holds; with one,
    waiting(fd) is called once if it must wait, and timed_out(fd) raised when it is over."""
    import fcntl  # lazy: Windows lacks it, and platforms refuses Windows before any lock

    try:
        if timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        elif not _waited_for(fd, timeout, waiting):
            raise timed_out(fd) if timed_out is not None else TimeoutError(fd)
        yield
    finally:
        os.close(fd)


def _waited_for(fd: int, timeout: float, waiting: Callable[[int], None] | None) -> bool:
    """Whether fd's flock was had within timeout seconds (tried again with a growing pause)."""
    import fcntl  # lazy: see flocked

    def taken() -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    if taken():
        return True
    if waiting is not None:
        waiting(fd)
    deadline = time.monotonic() + timeout
    poll = _FIRST_POLL
    while (remaining := deadline - time.monotonic()) > 0:
        time.sleep(min(poll, remaining))
        poll = min(poll * 2, _MAX_POLL)
        if taken():
            return True
    return taken()


def is_unsafe(error: OSError) -> bool:
    """True for the errors of a link or a non-folder in the way of a write."""
    return error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EISDIR) or isinstance(
        error, UnsafePathError
    )


class UnsafePathError(OSError):
    """A path qola writes is a link or not a regular file: qola writes nothing there."""


def _unsafe(path: Path | str, problem: str) -> UnsafePathError:
    return UnsafePathError(
        errno.ELOOP, f"{problem}; qola writes only regular files of its own there", str(path)
    )


def _split(path: Path | str, under: Path | str) -> tuple[list[str], str]:
    relative = os.path.relpath(path, under)
    parts = Path(relative).parts
    if not parts or parts[0] == ".." or os.path.isabs(relative):
        raise ValueError(f"{path} is not below {under}")
    return list(parts[:-1]), parts[-1]


def _open_folder(under: Path | str, folders: list[str], create: bool) -> int:
    """A descriptor of under/folders..., reached without following a link below under."""
    fd = os.open(under, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    step = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    current = Path(under)
    try:
        for part in folders:
            current = current / part
            try:
                following = os.open(part, step, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                # FileExistsError: made meanwhile (another thread or run); opened all the same.
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                following = os.open(part, step, dir_fd=fd)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _unsafe(current, "is a symbolic link or not a folder") from None
                raise
            os.close(fd)
            fd = following
    except BaseException:
        os.close(fd)
        raise
    return fd


# ----------------------------------------------------------------------------- git's writes

# What git writes in a repository by its path (git 2.39): a file is replaced through a
# `<name>.lock` it creates, but lockfile.c first follows a symbolic link at the name
# (config, index, packed-refs, shallow), so the link's target is what gets replaced; a
# reflog (logs/...) is appended to, and FETCH_HEAD truncated, through one; new refs,
# reflogs and objects are made in folders on the way, where a link leads anywhere. Per
# worktree (in the git dir) or shared (in the common dir): both are checked.
_GIT_FILES = ("config", "config.worktree", "index", "HEAD", "ORIG_HEAD", "FETCH_HEAD",
              "packed-refs", "shallow", "logs/HEAD")  # fmt: skip
_GIT_FOLDERS = ("refs", "logs/refs", "objects/pack", "objects/info", QOLA_REFS,
                f"logs/{QOLA_REFS}")  # fmt: skip


def git_write_problem(gitdir: Path, refs: tuple[str, ...] = ()) -> str | None:
    """Why git must not write in the repository of gitdir: a symbolic link where git writes
    (or on the way there), or something other than a file of its own where git writes a
    file; None when there is none. refs: refs about to be written (and their reflogs)."""
    bases = dict.fromkeys([gitdir, common_dir(gitdir)])
    for base in bases:
        for name in (*_GIT_FILES, *refs, *(f"logs/{ref}" for ref in refs)):
            problem = _path_problem(base, name, is_file=True)
            if problem is not None:
                return problem
        for name in _GIT_FOLDERS:
            problem = _path_problem(base, name, is_file=False)
            if problem is not None:
                return problem
        problem = _linked_entry(base / "objects")  # the loose objects' 00..ff folders
        if problem is not None:
            return problem
        for tree in _GIT_TREES:
            problem = _linked_below(base / tree, appended=tree == "logs")
            if problem is not None:
                return problem
    return None


# Every ref and reflog, at any depth: a fetch from a named remote updates its remote-tracking
# refs (and appends to their reflogs), a fetch of tags writes refs/tags/..., whatever refs
# the caller names. A folder there that is a link takes the ref elsewhere; a reflog, which
# git appends to in place, writes through a link or a hard link. And what a fetch may write
# beside the objects: packs and their indexes, commit-graph chains (objects/info/commit-
# graphs/, fetch.writeCommitGraph), multi-pack indexes; a link among them leads git out.
_GIT_TREES = ("refs", "logs", "objects/info", "objects/pack")


def _linked_below(folder: Path, appended: bool) -> str | None:
    """A symbolic link anywhere below folder (not followed), or with appended, a file there
    that is not a regular file of its own; None when there is none."""
    pending = [str(folder)]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                found = list(entries)
        except OSError:
            continue  # not there, or not a folder: git makes its own (or fails)
        for entry in found:
            if entry.is_symlink():
                return f"{entry.path} is a symbolic link (to {os.readlink(entry.path)})"
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            elif appended:
                problem = _path_problem(Path(entry.path).parent, entry.name, is_file=True)
                if problem is not None:
                    return problem
    return None


def _path_problem(base: Path, name: str, is_file: bool) -> str | None:
    current = base
    parts = Path(name).parts
    for at, part in enumerate(parts):
        current = current / part
        try:
            info = os.lstat(current)
        except OSError:
            return None  # not there: git makes a real one (or fails on its own)
        if stat.S_ISLNK(info.st_mode):
            return f"{current} is a symbolic link (to {os.readlink(current)})"
        if at < len(parts) - 1 or not is_file:
            continue
        if not stat.S_ISREG(info.st_mode):
            return f"{current} is not a regular file"
        if info.st_nlink != 1:
            return f"{current} is a hard link ({info.st_nlink} names for one file)"
    return None


def _linked_entry(folder: Path) -> str | None:
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_symlink():
                    return f"{entry.path} is a symbolic link (to {os.readlink(entry.path)})"
    except OSError:
        pass
    return None
