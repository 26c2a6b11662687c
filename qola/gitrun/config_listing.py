"""git's own listing of a config, for the decisions that need exactly what git reads.

`git config --list --show-scope --show-origin --includes` with nothing else enabled,
one git process per repository per run, listed again only when a file it was read from
(or could read) changes (docs/development.md, "git's own listing of a config").
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from qola.gitrun.overrides import UnsafeConfigError
from qola.gitrun.process import LEAKED_VARIABLES, execute_raw
from qola.repo.configfile import Entry, UnreadableConfig, parse_listing
from qola.repo.gitpaths import signature

# git's own limit on includes within includes (config.c MAX_INCLUDE_DEPTH).
_MAX_INCLUDE_DEPTH = 10
# A listing reads a few files: one that takes longer is waiting on something (a FIFO
# among the includes) that would make every git in that repository wait too.
TIMEOUT = 20.0
_REPOSITORY_SCOPES = ("local", "worktree")
_USER_SCOPES = ("system", "global", "command")
# A git dir that is not there: git lists config outside any repository, whatever cwd is.
_NO_REPOSITORY = os.path.join(os.sep, "nonexistent", "qola-no-repository")
_LIST = ("config", "--list", "-z", "--show-scope", "--show-origin", "--includes")


class ListingError(UnsafeConfigError):
    """git could not list a repository's config (it rejects it, or it did not finish): git
    would fail there too, and qola runs none."""


@dataclass(frozen=True)
class Listing:
    """A repository's own config entries as git reads them, and what they depend on."""

    entries: tuple[Entry, ...]
    watched: tuple[str, ...]  # every file read, and every one that could be read later
    found: bool  # False: git found no repository there (it reads no config of one)


def _environment(cwd: str | None) -> dict[str, str]:
    """os.environ with no config of anyone's: no system, global or GIT_CONFIG_* settings."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GIT_CONFIG") and key not in LEAKED_VARIABLES
    }
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat"})  # fmt: skip
    if cwd is not None:
        env["GIT_CEILING_DIRECTORIES"] = os.path.dirname(os.path.realpath(cwd))
    return env


def _git(
    where: list[str],
    args: tuple[str, ...] | list[str],
    env: dict[str, str],
    stdin: bytes | None = None,
    trust: bool = True,
) -> tuple[int | None, bytes, str]:
    """Run one listing (trust: accept a repository whoever owns it, as only this reads it)."""
    trusting = ["-c", "safe.directory=*"] if trust else []
    return execute_raw(["git", "--no-pager", *trusting, *where, *args], env, TIMEOUT, stdin)


def repository(cwd: str, explicit_git_dir: list[str], common: str, gitdir: str) -> Listing:
    """The config of the repository git finds at cwd (with explicit_git_dir, as the
    Runner passes it), includes followed whatever their condition."""
    where = ["-C", cwd, *explicit_git_dir]
    watched = [os.path.join(common, "config"), os.path.join(gitdir, "config.worktree"),
               os.path.join(gitdir, "commondir")]  # fmt: skip
    for path in watched[:2]:
        _regular(path, cwd)
    status, out, err = _git(where, _LIST, _environment(cwd))
    if status != 0:
        if "not a git repository" in err:
            return Listing((), tuple(watched), False)
        raise _failed(cwd, err, status)
    listed = [e for e in parse_listing(out, True) if e.scope in _REPOSITORY_SCOPES]
    entries = _with_every_include(listed, cwd, where, watched)
    return Listing(tuple(entries), tuple(dict.fromkeys(watched)), True)


class IrregularConfig(UnsafeConfigError):
    """A config file that is a FIFO, a socket or a device: git would read it again, and
    get other text, in every command; what the listing said of it proves nothing."""


def _regular(path: str, cwd: str) -> None:
    """Raise IrregularConfig where path (a config git reads, or would) is there and is no
    regular file nor a folder (a folder: git refuses it, and says so)."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
        raise IrregularConfig(
            cwd,
            f"{path} is {kind}: git reads a config again in every command, and may get "
            "other settings from it each time, so qola cannot know what git would run",
            "make it a regular file (or remove it) and run again",
        )


def _failed(where: str, err: str, status: int | None) -> ListingError:
    if status is None:
        problem = (f"git did not finish reading the repository's config within {TIMEOUT:g} s "
                   "(a FIFO or a device among its includes?)")  # fmt: skip
    else:
        problem = f"git cannot read the repository's config: {_first_error(err)}"
    return ListingError(where, problem, "look at the config files of that repository")


def _first_error(err: str) -> str:
    """git's fatal message (else its first line): what a warning before it led to."""
    lines = [line.strip() for line in err.splitlines() if line.strip()] or ["(no output)"]
    return next((line for line in lines if line.startswith("fatal: ")), lines[0])


def _with_every_include(
    listed: list[Entry], cwd: str, where: list[str], watched: list[str], depth: int = 0
) -> list[Entry]:
    """listed, with what each include it names could add: the files git read are listed
    already; an includeIf whose condition did not hold here is read too."""
    read = {os.path.join(cwd, e.origin) for e in listed if e.origin}
    watched.extend(sorted(read))
    entries = [_absolute(e, cwd) for e in listed]
    for entry in list(entries):
        if entry.key != "path" or entry.section not in ("include", "includeif") or not entry.value:
            continue
        target = include_target(entry.value, entry.origin)
        if target is None:
            raise ListingError(cwd, f"{entry.origin} includes {entry.value!r}, a path qola "
                               "cannot resolve", "use an absolute path or one relative to the "
                               "including file")  # fmt: skip
        watched.append(target)
        if where:  # a repository's (the user's own config, listed with no where, is theirs)
            _regular(target, cwd)
        if target in read or not os.path.isfile(target) or depth >= _MAX_INCLUDE_DEPTH:
            continue
        args = ("config", "--file", target, *_LIST[1:])
        status, out, err = _git(where, args, _environment(cwd))
        if status != 0:
            raise _failed(cwd, err, status)
        more = [e for e in parse_listing(out, True) if e.origin != "command line:"]
        entries += _with_every_include(more, cwd, where, watched, depth + 1)
    return entries


def _absolute(entry: Entry, cwd: str) -> Entry:
    if not entry.origin or os.path.isabs(entry.origin):
        return entry
    return Entry(entry.section, entry.subsection, entry.key, entry.value,
                 os.path.join(cwd, entry.origin), entry.scope)  # fmt: skip


def include_target(value: str, including: str) -> str | None:
    """Where an include points, as git's handle_path_include() resolves it (None: `~`
    without a home, or a `%(prefix)/` git does not resolve)."""
    if value.startswith("~"):
        expanded = os.path.expanduser(value)  # ~/ from $HOME, ~user/ from the password file
        if expanded.startswith("~"):
            return None
        value = expanded
    elif value.startswith(_PREFIX):
        prefix = _git_prefix()
        if prefix is None:
            return None
        value = os.path.join(prefix, value[len(_PREFIX):])
    return value if os.path.isabs(value) else os.path.join(os.path.dirname(including), value)


_PREFIX = "%(prefix)/"
_PREFIXES: list[str | None] = []


def _git_prefix() -> str | None:
    """Where git's `%(prefix)/` leads (its install prefix, or the runtime one), as git
    itself resolves a path setting; asked once per process."""
    if not _PREFIXES:
        args = ("config", "--file", os.devnull, "--type=path", "--default", _PREFIX, "--get",
                "qola.prefix")  # fmt: skip
        status, out, _ = _git([], args, _environment(None))
        text = out.decode("utf-8", "surrogateescape").rstrip("\n")
        _PREFIXES.append(text if status == 0 and os.path.isabs(text) else None)
    return _PREFIXES[0]


def read_text(data: bytes, path: str | None, includes: bool) -> list[Entry]:
    """git's reading of config text: of the file at path (includes followed when asked,
    relative to it), or of these bytes on standard input. UnreadableConfig when git
    rejects it."""
    folder = os.path.dirname(path) if path else None
    source = ["--file", path] if path is not None and includes else ["--file", "-"]
    args = ["config", *source, "--list", "-z", "--includes" if includes else "--no-includes"]
    env = _environment(folder)
    if includes and folder and os.path.isdir(folder):
        where = ["-C", folder]  # in its repository, where git evaluates includeIf
    else:
        where, env["GIT_DIR"] = [], _NO_REPOSITORY  # the text alone: no repository's setup
    status, out, err = _git(where, args, env, None if includes else data)
    if status != 0:
        raise UnreadableConfig(path or "config", _first_error(err).removeprefix("fatal: "))
    return parse_listing(out, False)


_USER: dict[tuple[str, ...], tuple[tuple[object, ...], list[Entry], tuple[str, ...]]] = {}
_USER_LOCK = threading.Lock()


def user(environ: Mapping[str, str] | None = None) -> list[Entry]:
    """The user's own config: system, global (with every include) and the command scope
    (GIT_CONFIG_COUNT, GIT_CONFIG_PARAMETERS) of environ, the environment git will get
    (os.environ by default), as git lists them outside any repository. Read once per
    process (again when one of its files changed)."""
    environ = os.environ if environ is None else environ
    names = ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "HOME",
             "XDG_CONFIG_HOME", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS")  # fmt: skip
    key = tuple(environ.get(name, "\0") for name in names) + tuple(
        f"{name}={value}" for name, value in sorted(environ.items())
        if name.startswith("GIT_CONFIG_")
    )
    with _USER_LOCK:
        known = _USER.get(key)
        if known is not None and signature(known[2]) == known[0]:
            return known[1]
        env = {k: v for k, v in environ.items() if k not in LEAKED_VARIABLES}
        env["GIT_DIR"] = _NO_REPOSITORY
        status, out, err = _git([], _LIST, env, trust=False)
        if status != 0:
            raise _failed("your git config", err, status)
        listed = [e for e in parse_listing(out, True) if e.scope in _USER_SCOPES]
        watched: list[str] = []
        found = _with_every_include(listed, os.getcwd(), [], watched)
        watched_files = tuple(dict.fromkeys(watched))
        _USER[key] = (signature(watched_files), found, watched_files)
        return found

