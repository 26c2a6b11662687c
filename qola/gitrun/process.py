"""Starting git processes: through GitPython for the Runner (waiting for git, or streaming
its progress), plainly for a command that only reads outside it (a config listing); the
variables no git of qola's inherits; and killing a git with its children."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import Any

from qola.base import console
from qola.base.errors import UsageError

# Variables that bind git to one repository. Hooks and IDEs leak them into the
# processes they start (pre-commit learned this in its issue #300); inherited
# by qola they would point every command at the wrong repository.
LEAKED_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_SHALLOW_FILE",
    "GIT_NAMESPACE",
)


def execute_raw(
    command: list[str], env: Mapping[str, str], timeout: float, stdin: bytes | None = None
) -> tuple[int | None, bytes, str]:
    """Run a git command that only reads (a config listing): (status, stdout's bytes as git
    wrote them, stderr); status None when it did not finish within timeout and was killed."""
    try:
        done = subprocess.run(command, input=stdin if stdin is not None else b"",
                              capture_output=True, env=dict(env), timeout=timeout,
                              check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return None, b"", ""
    except FileNotFoundError:
        raise UsageError("git", "the git executable was not found",
                         "install git 2.32 or newer and put it on PATH") from None  # fmt: skip
    return done.returncode, done.stdout, _text(done.stderr)


def execute_program(
    command: list[str], env: Mapping[str, str], timeout: float
) -> tuple[int | None, str, str]:
    """Run a program other than git that reads and writes only what its command names (gpg
    importing keys into a home of qola's): (status, stdout, stderr); status None when it
    did not finish within timeout and was killed. FileNotFoundError: it is not installed."""
    try:
        done = subprocess.run(command, input=b"", capture_output=True, env=dict(env),
                              timeout=timeout, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return None, "", ""
    return done.returncode, _text(done.stdout), _text(done.stderr)


def _git_class() -> Any:
    """GitPython's Git, imported only when git must run (it costs 100-300 ms)."""
    try:
        from git.cmd import Git
    except ModuleNotFoundError as error:
        if error.name not in ("git", "git.cmd"):
            raise
        # GitPython itself is missing: the entry points check for it (base/requirements.py),
        # so only a caller that bypassed them gets here.
        from qola.base import requirements  # lazy: the error path only

        [gitpython] = [r for module, r in requirements.needed() if module == "git"]
        raise requirements.missing_error(sys.executable, [gitpython]) from None
    except ImportError as error:  # GitPython refuses to import when it cannot find git
        raise UsageError("git", f"cannot run git: {error}".splitlines()[0],
                         "install git 2.32 or newer and put it on PATH") from None  # fmt: skip
    return Git


def execute(
    command: list[str], env: Mapping[str, str], timeout: float | None
) -> tuple[int, str, str]:
    Git = _git_class()

    kwargs: dict[str, Any] = {}
    if timeout is not None:
        kwargs["kill_after_timeout"] = timeout
    before = set(threading.enumerate())
    try:
        result = Git().execute(
            command,
            with_extended_output=True,
            with_exceptions=False,
            env=dict(env),
            strip_newline_in_stdout=False,
            **kwargs,
        )
    except FileNotFoundError:
        raise UsageError(
            "git",
            "the git executable was not found",
            "install git 2.32 or newer and put it on PATH",
        ) from None
    except BaseException:
        # GitPython's timeout watchdog is a non-daemon threading.Timer, cancelled only
        # when git returns: after Ctrl-C or SIGTERM the interpreter would wait for it
        # (up to --fetch-timeout) before exiting. Observed with GitPython 3.1.
        for thread in set(threading.enumerate()) - before:
            if isinstance(thread, threading.Timer):
                thread.cancel()
        raise
    status, stdout, stderr = result
    return int(status), _text(stdout), _text(stderr)


def stream(
    command: list[str], env: Mapping[str, str], timeout: float | None, activity: console.Activity
) -> tuple[int, str, str]:
    """Run git reading its stderr as it comes: progress to activity, the rest kept.

    What is kept is what git says without --progress, so an error shows git's words
    and not a thousand progress updates. The timeout kills git and its children, as
    GitPython's kill_after_timeout does for the other commands.
    """
    Git = _git_class()
    try:
        handle = Git().execute(command, as_process=True, env=dict(env))
    except FileNotFoundError:
        raise UsageError("git", "the git executable was not found",
                         "install git 2.32 or newer and put it on PATH") from None  # fmt: skip
    proc: subprocess.Popen[bytes] = handle.proc
    assert proc.stdout is not None and proc.stderr is not None
    out: list[bytes] = []
    stdout = proc.stdout

    def read_stdout() -> None:
        out.append(stdout.read())

    reader = threading.Thread(target=read_stdout, daemon=True)
    reader.start()
    watchdog = None
    if timeout is not None:
        watchdog = threading.Timer(timeout, kill_tree, args=(proc.pid,))
        watchdog.daemon = True
        watchdog.start()
    kept: list[str] = []
    pending = b""
    try:
        fd = proc.stderr.fileno()
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            pending += chunk
            # git ends a progress update with \r and a finished phase (or any message) \n.
            *segments, pending = re.split(rb"[\r\n]", pending)
            for segment in segments:
                _take(segment, activity, kept)
        _take(pending, activity, kept)
        status = proc.wait()
        reader.join()
    except BaseException:
        kill_tree(proc.pid)
        proc.wait()
        raise
    finally:
        if watchdog is not None:
            watchdog.cancel()
        proc.stderr.close()
    return status, _text(b"".join(out)), "\n".join(kept) + ("\n" if kept else "")


def _take(segment: bytes, activity: console.Activity, kept: list[str]) -> None:
    line = segment.decode("utf-8", errors="replace").rstrip()
    if not line or activity.git_line(line) or line.startswith("remote: Total "):
        return
    kept.append(line)


def kill_tree(pid: int) -> None:
    """Kill a process and its descendants (ssh, remote helpers, index-pack)."""
    pids = [pid]
    for parent in pids:
        try:
            found = subprocess.run(["pgrep", "-P", str(parent)], capture_output=True,
                                   text=True, check=False).stdout  # fmt: skip
        except OSError:
            continue
        pids.extend(int(child) for child in found.split() if child.isdigit())
    for each in pids:
        with contextlib.suppress(OSError):
            os.kill(each, signal.SIGKILL)


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value or "")
