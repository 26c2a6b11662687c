"""The safe.directory shim: a temporary global git config that trusts the repositories qola
touches.

What the file holds and how it is removed: docs/safe-directory.md, "How the shim is made
and removed"."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import FrameType
from typing import Any, Union
from urllib.parse import unquote

from qola.base.errors import UsageError
from qola.repo import store
from qola.repo.gitpaths import is_git_dir

StrPath = Union[str, "os.PathLike[str]"]

MODES = ("scoped", "all", "off")

_PREFIX = "qola-shim-"
_UNKNOWN = "x"  # a start time that could not be read
# The shim's folders, and the overrides file's (qola/gitrun/guard.py): both may hold the
# user's own config (a proxy's password), and a SIGKILL leaves them.
_OWNED = re.compile(r"qola-(?:shim|overrides)-(\d+)-(\d+|x)-.+")
_CONFIG_NAME = "gitconfig"
_TRUSTED_NAME = "trusted"  # the trusted values, NUL-separated: what add() merges with
_LOCK_NAME = "lock"

_live: dict[int, Shim] = {}  # every open shim of this process by id(), for the signal handlers


class Shim(Mapping[str, str]):
    """The environment overlay for git (`GIT_CONFIG_GLOBAL`) and the repositories it trusts."""

    def __init__(self, mode: str, folder: Path | None) -> None:
        self.mode = mode
        self.folder = folder
        self.config = folder / _CONFIG_NAME if folder else None
        self._env = {"GIT_CONFIG_GLOBAL": str(self.config)} if self.config else {}
        self._includes: list[str] = []
        self._trusted: list[str] = []
        self._owner = os.getpid()
        self._lock = threading.Lock()

    # The Mapping interface: a Shim is the environment overlay itself.
    def __getitem__(self, key: str) -> str:
        return self._env[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._env)

    def __len__(self) -> int:
        return len(self._env)

    def __repr__(self) -> str:
        return f"Shim(mode={self.mode!r}, config={self.config!r}, trusted={self._trusted!r})"

    @property
    def trusted(self) -> tuple[str, ...]:
        """The safe.directory values this process has written, in order."""
        return tuple(self._trusted)

    def add(self, *repos: StrPath) -> None:
        """Trust more repositories (work trees, or bare git dirs) by their real paths."""
        # Git compares the work tree top it discovered, which comes from
        # getcwd() and is therefore a real path; git < 2.46 compares strings
        # exactly, so no trailing slash and no symlinks (observed on 2.39.5).
        # For a submodule that is its own work tree, not .git/modules/<name>.
        self._trust([os.path.realpath(os.fspath(repo)) for repo in repos])

    def add_clone_source(self, url: str, cwd: StrPath | None = None) -> None:
        """Trust a local clone or fetch source; network URLs need nothing."""
        self._trust(trust_paths_for_url(url, cwd))

    def close(self) -> None:
        """Remove the temporary folder; idempotent, and a no-op in other processes."""
        _live.pop(id(self), None)
        if self.folder is not None and os.getpid() == self._owner:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _trust(self, values: list[str]) -> None:
        if self.mode != "scoped" or self.config is None or not values:
            return
        if not self.config.parent.is_dir():
            # Trusting nothing would surface later as a puzzling dubious-ownership error.
            msg = f"the safe.directory shim {self.config} was already removed"
            raise RuntimeError(msg)
        with self._lock, _file_lock(self.config.parent / _LOCK_NAME):
            # Another process given this shim may have added values since:
            # merge with the file's list rather than overwrite it.
            on_disk = _read_trusted(self.config.parent)
            merged = _unique([*on_disk, *self._trusted, *values])
            if merged != on_disk:
                _write(self.config, render(self._includes, merged))
                _write(self.config.parent / _TRUSTED_NAME, _encode_list(merged))
            self._trusted = merged

    def _write_initial(self, includes: list[str], trusted: list[str]) -> None:
        assert self.config is not None
        self._includes = includes
        self._trusted = _unique(trusted)
        directories = ["*"] if self.mode == "all" else self._trusted
        _write(self.config, render(includes, directories))
        _write(self.config.parent / _TRUSTED_NAME, _encode_list(self._trusted))


@contextlib.contextmanager
def shim(mode: str, repos: Iterable[StrPath] = ()) -> Iterator[Shim]:
    """Yield the git environment overlay for mode "scoped", "all" or "off"; clean up on exit."""
    mode = check_mode(mode)
    if mode == "off":
        yield Shim(mode, None)
        return
    sweep_abandoned(Path(tempfile.gettempdir()))
    env = Shim(mode, Path(tempfile.mkdtemp(prefix=owned_prefix(_PREFIX))))  # mkdtemp: 0700
    _live[id(env)] = env
    try:
        env._write_initial(
            [str(path) for path in user_global_configs()],
            [os.path.realpath(os.fspath(repo)) for repo in repos] if mode == "scoped" else [],
        )
        yield env
    finally:
        env.close()


def owned_prefix(prefix: str) -> str:
    """prefix, then this process's pid and start time: what sweep_abandoned checks."""
    return f"{prefix}{os.getpid()}-{_process_start(os.getpid()) or _UNKNOWN}-"


def sweep_abandoned(folder: Path) -> list[Path]:
    """Remove the shim and overrides folders (of this user) in folder whose run is gone;
    returns them."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = _OWNED.fullmatch(entry.name)
        if match is None or _owner_runs(int(match.group(1)), match.group(2)):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        # Only real folders of this user: never one another user made under this name.
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid():
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def _owner_runs(pid: int, start: str) -> bool:
    if not store.is_alive(pid):
        return False
    now = _process_start(pid)
    # The same pid started at another time is another process (pids are reused).
    return start == _UNKNOWN or now is None or now == start


def _process_start(pid: int) -> str | None:
    """When the process started (clock ticks since boot, /proc/<pid>/stat field 22)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None  # no /proc (macOS): the pid alone must do
    # Field 2 is the command in parentheses and may hold spaces: count after its end.
    fields = data.rsplit(b")", 1)[-1].split()
    return fields[19].decode() if len(fields) > 19 and fields[19].isdigit() else None


def check_mode(mode: str) -> str:
    """The mode in lower case; an unknown mode is a UsageError."""
    lowered = mode.lower()
    if lowered not in MODES:
        raise UsageError(
            "--safe-directory",
            f"unknown mode {mode!r}",
            f"use one of {', '.join(MODES)}",
        )
    return lowered


def user_global_configs(environ: Mapping[str, str] = os.environ) -> list[Path]:
    """The user's global config files that exist, in the order git reads them."""
    # git reads $GIT_CONFIG_GLOBAL instead of both files when it is set (2.32+);
    # otherwise the XDG file first and ~/.gitconfig second, so the latter wins.
    explicit = environ.get("GIT_CONFIG_GLOBAL")
    if explicit:
        candidates = [Path(os.path.abspath(explicit))]
    else:
        home = environ.get("HOME")
        xdg = environ.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
        candidates = [Path(xdg, "git", "config")] if xdg else []
        if home:
            candidates.append(Path(home, ".gitconfig"))
        candidates = [Path(os.path.abspath(path)) for path in candidates]
    return [path for path in candidates if path.exists()]


def render(includes: Iterable[str], directories: Iterable[str]) -> str:
    """The text of the shim's config file."""
    lines = ["# Written by qola for one run and removed when it ends (safe.directory shim)."]
    includes = list(includes)
    if includes:
        lines.append("[include]")
        lines.extend(f"\tpath = {quote(path)}" for path in includes)
    directories = list(directories)
    if directories:
        lines.append("[safe]")
        lines.extend(f"\tdirectory = {quote(path)}" for path in directories)
    return "\n".join(lines) + "\n"


def quote(value: str) -> str:
    """A git-config value that reads back as exactly `value`."""
    # Inside double quotes only `\` and `"` need escaping; newline, tab and
    # backspace have escapes; a raw CR is kept (checked with git 2.39.5).
    escaped = (
        value.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\t", "\\t")
        .replace("\b", "\\b")
    )
    return f'"{escaped}"'


# The suffixes git tries, in this order, to find the repository of a local
# URL (builtin/clone.c get_repo_path, path.c enter_repo; git 2.39).
_GIT_DIR_SUFFIXES = ("/.git", "", ".git/.git", ".git")


def trust_paths_for_url(url: str, cwd: StrPath | None = None) -> list[str]:
    """Every spelling of a local URL's repository that git compares with safe.directory."""
    # Since CVE-2024-32004 (2.39.4/2.45.1) git checks the owner of a local
    # clone or fetch source, and compares safe.directory with the path as it
    # spelled it, not normalised (observed with 2.39.5):
    #   clone /a/src/       -> "/a/src//.git"   (clone.c, as given plus suffix)
    #   fetch /a/src/       -> "/a/src/.git"    (upload-pack: trailing / removed)
    #   clone ./src         -> "<cwd>/./src/.git", <cwd> from $PWD when it names
    #                          the same folder as getcwd() (even under -C)
    #   fetch ../src        -> "../src/.git"    (relative, as given)
    #   clone /link/src     -> "/link/src/.git" (symlinks not resolved)
    #   file:///a/b%20c     -> "/a/b c/.git"    (percent-decoded)
    #   clone <gitfile dir> -> the real path of the git dir the .git file names
    # Passing git normalised URLs (real, absolute, no trailing slash) makes
    # all of these one spelling; the others are listed for URLs qola does not
    # choose, such as nested submodules'.
    path = local_path(url)
    if path is None:
        return []
    here = os.path.realpath(os.fspath(cwd) if cwd is not None else os.getcwd())
    bases = [path]
    if not os.path.isabs(path):
        bases += [_join(folder, path) for folder in _cwd_spellings(here)]
    spellings: list[str] = []
    for base in bases:
        for variant in (base, base.rstrip("/") or "/"):
            found = _git_dir(variant, here)
            if found is None:
                continue
            spelling, target = found
            spellings.append(spelling)
            if target is not None:
                spellings.append(target)
            spellings.append(os.path.realpath(os.path.join(here, spelling)))
    return _unique(spellings)


def local_path(url: str) -> str | None:
    """The path of a local-path or file:// URL as git reads it; None for other URLs."""
    if url.startswith("file://"):
        return unquote(url[len("file://") :]) or None
    if "://" in url or not url:
        return None
    # git's url_is_local_not_ssh(): a colon before any slash makes it scp-like host:path.
    colon, slash = url.find(":"), url.find("/")
    if colon >= 0 and (slash < 0 or colon < slash):
        return None
    return url


def _cwd_spellings(here: str) -> list[str]:
    # strbuf_add_absolute_path() prefers $PWD when it is the same folder.
    spellings = [here]
    pwd = os.environ.get("PWD")
    if pwd and os.path.isabs(pwd) and pwd != here:
        with contextlib.suppress(OSError):
            if os.path.samefile(pwd, here):
                spellings.append(pwd)
    return spellings


def _join(folder: str, path: str) -> str:
    return (folder if folder.endswith("/") else folder + "/") + path


def _git_dir(base: str, here: str) -> tuple[str, str | None] | None:
    """(spelling, git dir named by a .git file or None) for the first suffix git accepts."""
    for suffix in _GIT_DIR_SUFFIXES:
        spelling = base + suffix
        candidate = os.path.join(here, spelling)
        if os.path.isdir(candidate) and is_git_dir(candidate):
            return spelling, None
        if os.path.isfile(candidate):
            target = _read_gitfile(candidate)
            if target is not None:
                return spelling, target
    return None


def _read_gitfile(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            text = os.fsdecode(handle.read(4096)).strip()
    except OSError:
        return None
    if not text.startswith("gitdir: "):
        return None
    target = os.path.join(os.path.dirname(path), text[len("gitdir: ") :])
    # git's read_gitfile() resolves the git dir to a real path.
    return os.path.realpath(target) if os.path.isdir(target) else None


def install_signal_handlers() -> Callable[[], None]:
    """On SIGINT, SIGTERM and SIGHUP remove every shim, then unwind; returns a restorer."""
    # Only the main thread may install handlers (signal.signal raises
    # ValueError elsewhere). Signals that are ignored (nohup, a parent that
    # set SIG_IGN) stay ignored.
    previous: dict[int, Any] = {}
    for signum in _handled_signals():
        current = signal.getsignal(signum)
        if current is signal.SIG_IGN:
            continue
        previous[signum] = signal.signal(signum, _on_signal)

    def restore() -> None:
        for signum, handler in previous.items():
            signal.signal(signum, handler)

    return restore


class Terminated(SystemExit):
    """Raised by the installed handlers on SIGTERM or SIGHUP; exits with 128 + the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum


def remove_all() -> None:
    """Remove every shim this process opened (what the signal handlers do first)."""
    for env in list(_live.values()):
        env.close()


def _handled_signals() -> list[int]:
    return [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def _on_signal(signum: int, frame: FrameType | None) -> None:
    # Remove the files now, before unwinding: unwinding can be delayed or
    # swallowed, and the files are what must not outlive the process.
    remove_all()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _encode_list(values: list[str]) -> str:
    return "".join(value + "\0" for value in values)


def _read_trusted(folder: Path) -> list[str]:
    try:
        data = (folder / _TRUSTED_NAME).read_bytes()
    except FileNotFoundError:
        return []
    return [os.fsdecode(value) for value in data.split(b"\0") if value]


def _write(path: Path, text: str) -> None:
    """Replace path atomically with a 0600 file: git never reads half a file."""
    # os.fsencode keeps bytes of non-UTF-8 paths exactly (surrogateescape).
    store.write_file(path, os.fsencode(text), path.parent, mode=0o600)


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock across processes; threads use Shim's own lock."""
    with store.flocked(store.open_lock(path, mode=0o600)):
        yield
