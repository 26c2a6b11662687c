"""A `.lfsconfig` that is not the upstream's, refused before git runs where git-lfs reads it.

git-lfs, run by the user's own `filter.lfs` as the smudge filter of a checkout and the
clean filter of a status, reads settings from a `.lfsconfig` at the top of the work tree
it runs in (git-lfs-config(5), "LFSCONFIG"; when there is none, from the index's
`:.lfsconfig`, then HEAD's): `lfs.url`, `remote.<name>.lfsurl`, `lfs.<url>.access` ...
which say where it sends its requests, with the user's credentials. qola's overrides of a
repository's config (qola/gitrun/guard.py) cover only the keys the repository's config
sets. So where the user's config runs git-lfs, a dependency's (or a nested submodule's)
`.lfsconfig` that git-lfs would read must be the one HEAD's commit holds: the upstream's.
One that is not (untracked, changed, staged, a link) stops every git command there
(UnsafeConfigError, exit 3). The project's own root is the user's, and is not looked at.

No git runs for a repository without a `.lfsconfig` in its work tree or its index (the
usual case), and each answer is kept until the files it was read from change.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

from qola.gitrun import config_listing, fetchtarget
from qola.gitrun.overrides import UnsafeConfigError
from qola.repo import gitfiles
from qola.repo.gitpaths import signature

if TYPE_CHECKING:
    from qola.gitrun.git import Runner

NAME = ".lfsconfig"
_MAX_SIZE = 1 << 20  # a .lfsconfig larger than this is no upstream's: read no further
# Set while this module runs git itself (the blob HEAD holds): that git is not checked again.
_PROBING: ContextVar[bool] = ContextVar("qola_lfsconfig_probing", default=False)
# (work tree, git dir) -> the signature under which it was found to be the upstream's.
_FINE: dict[tuple[str, str], tuple[object, ...]] = {}
_LOCK = threading.Lock()


def refuse_foreign(runner: Runner, cwd: Path, environ: Mapping[str, str]) -> None:
    """Raise UnsafeConfigError where git run at cwd (or in a repository nested in it that
    git may enter) would have the user's git-lfs read a `.lfsconfig` that is not HEAD's.
    environ: the environment git gets, whose command scope is part of the user's config."""
    if _PROBING.get() or not fetchtarget.lfs_filter(config_listing.user(environ)):
        return
    root = gitfiles.project_root()
    for gitdir, worktree in runner.repositories(cwd):
        if worktree is None or os.path.realpath(worktree) == root:
            continue  # a git dir alone: git-lfs reads HEAD's only; the root: the user's
        _check(runner, Path(worktree), Path(gitdir), str(cwd))


def _check(runner: Runner, worktree: Path, gitdir: Path, subject: str) -> None:
    key = (str(worktree), str(gitdir))
    watched = _watched(worktree, gitdir)
    with _LOCK:
        if _FINE.get(key) == _signature(watched):
            return
    before = _signature(watched)
    problem = _problem(runner, worktree, gitdir)
    if problem is not None:
        raise UnsafeConfigError(
            subject,
            f"{worktree / NAME} {problem}; git-lfs (your filter.lfs) would read it and send "
            "its requests, with your credentials, where it says, and qola runs no git where "
            "git-lfs would read a .lfsconfig that is not the upstream's",
            f"if you did not put it there, remove it ({_undo(worktree, problem)}), and run "
            "again",
        )
    with _LOCK:
        _FINE[key] = before


def _problem(runner: Runner, worktree: Path, gitdir: Path) -> str | None:
    """Why the .lfsconfig git-lfs would read at worktree is not HEAD's (None: it is, or
    there is none)."""
    path = worktree / NAME
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    except OSError as error:
        return f"cannot be read ({error.strerror})"
    if info is not None:
        if not stat.S_ISREG(info.st_mode):
            return "is not a regular file (git-lfs reads where a link leads)"
        data = _read(path)
        if data is None:
            return "cannot be read"
        theirs = _tracked(runner, worktree, "ls-tree", "--full-tree", "HEAD")
        if theirs is None:
            return "is not tracked (HEAD's commit has none)"
        mode, sha = theirs
        if mode != "100644" and mode != "100755":
            return f"is a file where HEAD's commit has a {mode} entry"
        if sha not in (_blob(data, sha), _blob(data.replace(b"\r\n", b"\n"), sha)):
            return "differs from HEAD's"
        return None
    if not _maybe_in_index(gitdir):
        return None
    staged = _tracked(runner, worktree, "ls-files", "-s")
    if staged is None:
        return None  # git-lfs reads HEAD's: the upstream's
    if staged != _tracked(runner, worktree, "ls-tree", "--full-tree", "HEAD"):
        return "is missing, and the index holds one that is not HEAD's"
    return None


def _tracked(runner: Runner, worktree: Path, *command: str) -> tuple[str, str] | None:
    """(mode, object name) of .lfsconfig in `git ls-tree HEAD` or `git ls-files -s`."""
    token = _PROBING.set(True)
    try:
        out = runner.run(worktree, *command, "-z", "--", NAME, check=False)
    finally:
        _PROBING.reset(token)
    if out.status != 0:
        return None
    for record in out.stdout.split("\0"):
        meta, tab, path = record.partition("\t")
        words = meta.split()
        if tab and path == NAME and len(words) >= 3:
            if command[0] == "ls-files" and words[2] != "0":
                continue  # git-lfs reads `:.lfsconfig`, stage 0
            return words[0], words[1] if command[0] == "ls-files" else words[2]
    return None


def _blob(data: bytes, like: str) -> str:
    """The object name git gives a blob of data (sha1, or sha256 as like is long)."""
    algorithm = hashlib.sha256 if len(like) == 64 else hashlib.sha1
    return algorithm(b"blob %d\0" % len(data) + data).hexdigest()


def _read(path: Path) -> bytes | None:
    """The file's bytes; None for one that is no regular file by now, or too large."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = handle.read(_MAX_SIZE + 1)
    return data if len(data) <= _MAX_SIZE else None


def _maybe_in_index(gitdir: Path) -> bool:
    """Whether the index may have a .lfsconfig entry: False only for an index of version
    2 or 3, of no split index, whose bytes do not hold the name (git is asked otherwise)."""
    try:
        with open(gitdir / "index", "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return False
    except OSError:
        return True
    if data[:4] != b"DIRC" or data[4:8] not in (b"\0\0\0\2", b"\0\0\0\3"):
        return True
    return b"lfsconfig" in data or b"link" in data  # `link`: the entries are elsewhere


def _watched(worktree: Path, gitdir: Path) -> list[str]:
    """The files an answer is read from: the .lfsconfig, the index, HEAD and its ref."""
    common = gitfiles.common_dir(gitdir)
    files = [str(worktree / NAME), str(gitdir / "index"), str(gitdir / "HEAD"),
             str(common / "packed-refs")]  # fmt: skip
    try:
        head = (gitdir / "HEAD").read_text("utf-8", "replace")
    except OSError:
        head = ""
    if head.startswith("ref: "):
        files.append(str(common / head[5:].strip()))
    return files


def _signature(paths: list[str]) -> tuple[object, ...]:
    return signature(paths)


def _undo(worktree: Path, problem: str) -> str:
    """The command that leaves only HEAD's .lfsconfig (or none) at worktree."""
    if problem.startswith("is not tracked") or "link" in problem:
        return f"rm {_quoted(worktree / NAME)}"
    if problem.startswith("is missing"):  # the index's: back to HEAD's (or none)
        return f"git -C {_quoted(worktree)} reset -q -- {NAME}"
    return f"git -C {_quoted(worktree)} checkout HEAD -- {NAME}"


def _quoted(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))


# What git says when the user's git-lfs failed as a filter (convert.c), and git-lfs itself.
_FILTER_FAILED = ("filter lfs failed", "external filter 'git-lfs", "Smudge error:")


def overridden_endpoints(
    runner: Runner, cwd: Path, stderr: str, environ: Mapping[str, str]
) -> list[tuple[str, str, str, str]]:
    """Where git-lfs failed at cwd (stderr says so): each LFS endpoint key the repository's
    config sets that qola gave another value, as (key, its value, the value given, file)."""
    if not any(words in stderr for words in _FILTER_FAILED):
        return []
    try:
        entries = runner.repository_config(cwd)
        user = config_listing.user(environ)
    except Exception:  # a hint is not worth a second failure
        return []
    given = dict(fetchtarget.settings(entries, user)[0])
    found = []
    for entry in entries:
        endpoint = entry.section == "lfs" or (
            entry.section == "remote" and entry.key in ("lfsurl", "lfspushurl")
        )
        if endpoint and entry.name in given and given[entry.name] != entry.text:
            found.append((entry.name, entry.text, given[entry.name], entry.origin))
    return found


def endpoint_hint(found: list[tuple[str, str, str, str]]) -> str:
    """The hint for a git-lfs failure where qola overrode the endpoint keys found."""
    said = "; ".join(
        f"{key} = {value!r} of {origin} was given "
        + (f"your own {mine!r}" if mine else "an empty one (no endpoint)")
        for key, value, mine, origin in found
    )
    key, value = found[0][0], found[0][1]
    return (
        f"git-lfs failed where qola overrode the repository's LFS endpoint ({said}): a "
        "repository's own config does not choose where git-lfs sends your credentials; if "
        f"you trust it, set it in your own config (git config --global {key} "
        f"{_quoted_text(value)}, which applies to every repository), and run again"
    )


def _quoted_text(text: str) -> str:
    import shlex

    return shlex.quote(text)
