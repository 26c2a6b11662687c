"""Reading a git dir's small files as git does, each read noted for the stamp being recorded
(qola/repo/trail.py); and where its common dir is."""

from __future__ import annotations

import os

from qola.repo import trail

TYPE_CHECKING = False  # the stamped no-op imports this: typing would cost it more than the rest
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path


def physical(path: str) -> str | None:
    """path with every `..` resolved against the real folder it follows, as the operating
    system resolves it (None: not absolute). Each folder so resolved is noted."""
    if not os.path.isabs(path):
        return None
    current = os.sep
    real = True  # current has no symlink in it (the parent of a real path is real)
    for part in path.split(os.sep):
        if part in ("", "."):
            continue
        if part == "..":
            if not real:
                resolved = os.path.realpath(current)
                trail.saw_folder(current, resolved)
                current, real = resolved, True
            current = os.path.dirname(current)
        else:
            current = os.path.join(current, part)
            real = False
    return current


def read(path: str) -> bytes | None:
    """A file's bytes (noted for the stamp), or None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except (FileNotFoundError, NotADirectoryError):
        trail.saw_file(path, None)
        return None
    except OSError as error:  # a folder, unreadable: nothing a stamp can vouch for
        trail.cannot_prove(f"{path}: {error.strerror}")
        return None
    trail.saw_file(path, data)
    return data


def git_dir_of(worktree: str) -> str | None:
    """Where a work tree's `.git` leads (the folder, or a gitfile's target), without asking
    whether git would take it: for where qola keeps files of its own, not for answers."""
    dotgit = os.path.join(worktree, ".git")
    if os.path.isdir(dotgit):
        trail.saw_dir(dotgit)
        return dotgit
    data = read(dotgit)
    if data is None:
        return None
    text = data.decode("utf-8", "surrogateescape").rstrip("\r\n")
    if not text.startswith("gitdir: "):
        return None
    target = physical(os.path.join(worktree, text[len("gitdir: ") :]))
    return target if target is not None and os.path.isdir(target) else None


def common_dir(gitdir: Path) -> Path:
    """Where refs and objects live (differs from gitdir for linked worktrees)."""
    from pathlib import Path  # lazy: the stamped no-op, which imports this, needs no pathlib

    found = common_dir_text(os.fspath(gitdir))
    return Path(found) if found is not None else gitdir


def common_dir_text(gitdir: str) -> str | None:
    """common_dir on strings (None: its `commondir` file leads to no absolute path)."""
    data = read(os.path.join(gitdir, "commondir"))
    if data is None:
        return gitdir
    text = data.decode("utf-8", "surrogateescape").rstrip("\r\n")
    return physical(os.path.join(gitdir, text))  # an absolute text stays absolute


def signature(paths: Iterable[str]) -> tuple[object, ...]:
    """What says each path has not changed: (mtime, ctime, size, device, inode, mode), None
    when missing. The ctime, which no one but the kernel sets, catches a file rewritten in
    place with its size kept and its mtime put back."""
    found: list[object] = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            found.append(None)
            continue
        found.append((info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_dev,
                      info.st_ino, info.st_mode))  # fmt: skip
    return tuple(found)


def is_git_dir(path: str) -> bool:
    """Whether git would take path for a git dir (its is_git_directory, setup.c, by the
    names alone): a HEAD, and objects/ and refs/ in its common dir (a linked worktree's
    `commondir` names it; else it is path itself). Each look is noted for the stamp: a
    folder that becomes a git dir voids it."""
    if not trail.exists(os.path.join(path, "HEAD")):
        return False  # the one look most folders need
    common = common_dir_text(path) if trail.exists(os.path.join(path, "commondir")) else path
    if common is None:
        return False  # a commondir that names no folder: git dies reading it
    return trail.exists(os.path.join(common, "objects")) and trail.exists(
        os.path.join(common, "refs")
    )


def may_hold_repository(path: str) -> bool:
    """Whether git may run in path as in a bare repository (a HEAD file, an objects/ folder),
    for the questions where too many is harmless: which folders to trust, which configs git
    might read, when to name the git dir with --git-dir. Not whether git takes it for one:
    that is is_git_dir."""
    return os.path.isfile(os.path.join(path, "HEAD")) and os.path.isdir(
        os.path.join(path, "objects")
    )


def explicit_git_dir(cwd: Path) -> list[str]:
    """`--git-dir=<cwd>` when cwd is a git dir itself (a bare repository, a submodule's
    under modules/): git finds no repository there by itself when the user's config says
    safe.bareRepository = explicit (git 2.38), and --git-dir is explicit."""
    if os.path.lexists(cwd / ".git") or not may_hold_repository(os.fspath(cwd)):
        return []
    return [f"--git-dir={os.path.abspath(cwd)}"]
