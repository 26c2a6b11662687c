"""Files in the way of a checkout: at a path the target commit tracks and the index does not.

`find` lists them with what git's rules say of each (ignored or not); `keep` saves them
in a commit of their own. Who decides what becomes of them: docs/checkout.md, "Files in a
checkout's way".
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qola.repo import store
from qola.sync.refs import save

if TYPE_CHECKING:
    from qola.gitrun.git import Runner

# Who made a backup commit of files in the way: qola, whatever the user's identity (which
# may not be configured at all on a build machine).
_SAVER = {
    "GIT_AUTHOR_NAME": "qola",
    "GIT_AUTHOR_EMAIL": "qola@backup.invalid",
    "GIT_COMMITTER_NAME": "qola",
    "GIT_COMMITTER_EMAIL": "qola@backup.invalid",
}
_GITLINK = "160000"
_SYMLINK = "120000"
_CHUNK = 500  # paths per git command line


@dataclass(frozen=True)
class Found:
    """A file (or symlink, or repository) in the work tree where the target needs the path."""

    path: str  # relative to the work tree
    wanted: tuple[str, str] | None  # the target's (mode, blob) at path, when it has a file
    ignored: bool  # git's ignore rules cover it: a plain checkout writes over it silently
    repository: bool = False  # a folder holding a `.git`: nothing to keep in a commit


def find(
    runner: Runner, tree: Path, target: str, subject: str, env: Mapping[str, str] | None = None
) -> list[Found]:
    """Every file a checkout of target would write over or remove though the index (env
    may name another) does not track it; nested repositories' own files left out."""
    wanted, tracked = _compare(runner, tree, target, subject, env)
    if not wanted:
        return []
    candidates: dict[str, tuple[str, str] | None] = {}
    repositories: set[str] = set()
    for path, entry in wanted.items():
        repository = _repository_on_the_way(tree, path)
        if repository is not None and repository not in tracked:
            # The user's own repository where target has files: git's checkout writes into
            # its work tree whatever its ignore rules say (its uncommitted edits lost).
            candidates.setdefault(repository, None)
            repositories.add(repository)
            continue
        lead = _file_on_the_way(tree, path)
        if lead is not None:
            if lead not in tracked:  # a tracked one is git's own: the checkout replaces it
                candidates.setdefault(lead, None)
            continue
        full = tree / path
        if full.is_symlink() or full.is_file():
            candidates[path] = None if entry[0] == _GITLINK else entry
        elif full.is_dir() and entry[0] != _GITLINK:  # a gitlink's folder is its own
            for inside, is_repo in _files_below(tree, path):
                if inside not in tracked:
                    candidates.setdefault(inside, None)
                    if is_repo:
                        repositories.add(inside)
    if not candidates:
        return []
    paths = list(candidates)
    ignored = _ignored(runner, tree, paths, subject, env)
    # A repository in the way is one whether or not git's rules ignore its folder.
    return [Found(path, candidates[path], path in ignored or path in repositories,
                  path in repositories) for path in paths]  # fmt: skip


def in_the_way(
    runner: Runner, tree: Path, target: str, subject: str
) -> tuple[list[str], list[str]]:
    """(every file in the way of target, those of them that differ from target's own file
    at the path). A file where target has a folder differs; so does any file below a
    folder where target has a file."""
    found = [f for f in find(runner, tree, target, subject) if not f.repository]
    differing = [
        f.path for f in found
        if f.wanted is None or not _same(runner, tree, f.path, *f.wanted, subject)
    ]  # fmt: skip
    return [f.path for f in found], differing


def keep(runner: Runner, tree: Path, paths: list[str], target: str, subject: str) -> str:
    """A commit of exactly these files of tree's, as they are (for a backup ref)."""
    with tempfile.TemporaryDirectory(prefix="qola-in-the-way-") as folder:
        env = {"GIT_INDEX_FILE": os.path.join(folder, "index")}  # a new index: empty
        for start in range(0, len(paths), _CHUNK):
            runner.run(tree, "--literal-pathspecs", "update-index", "--add", "--",
                       *paths[start : start + _CHUNK], subject=subject, env=env)  # fmt: skip
        saved = runner.run(tree, "write-tree", subject=subject, env=env).stdout.strip()
    message = f"qola: files in the way of {target}, kept before the move was finished"
    # qola's own commit, never signed (commit-tree reads no commit.gpgSign; said anyway).
    return runner.run(tree, "commit-tree", "--no-gpg-sign", saved, "-m", message,
                      subject=subject, env=_SAVER).stdout.strip()  # fmt: skip


def keep_aside(runner: Runner, tree: Path, paths: list[str], target: str, name: str,
               nested: str = "") -> str:  # fmt: skip
    """Keep the files in a commit under a new backup ref of the dependency's (name: its
    nested repository's path, if any); the ref. Clearing them is the caller's next step."""
    kept = keep(runner, tree, paths, target, name)
    ref = store.backup_ref(name, nested, "in-the-way")
    save(runner, tree, ref, kept, name)
    return ref


def clear(tree: Path, paths: list[str]) -> None:
    """Remove the files (kept first), and the folders that held nothing else."""
    folders: set[str] = set()
    for path in paths:
        full = tree / path
        if full.is_symlink() or full.is_file():
            full.unlink()
        folders.update(str(parent) for parent in Path(path).parents if str(parent) != ".")
    for folder in sorted(folders, key=len, reverse=True):  # the deepest first
        try:
            (tree / folder).rmdir()
        except OSError:
            continue  # not empty (tracked files, or more of the user's), or gone


def _compare(
    runner: Runner, tree: Path, target: str, subject: str, env: Mapping[str, str] | None
) -> tuple[dict[str, tuple[str, str]], set[str]]:
    """(what target has and the index lacks: path -> (mode, object); what the index has
    and target lacks). A file at a leading folder of a path target adds, or below a
    folder where target has a file, that the index tracks is of the second kind: git's
    own, which the checkout removes."""
    out = runner.run(tree, "diff-index", "--cached", "-z", "--no-renames", "--diff-filter=AD",
                     "--end-of-options", target, "--", subject=subject, env=env).stdout  # fmt: skip
    records = out.split("\0")
    wanted, tracked = {}, set()
    for meta, path in zip(records[::2], records[1::2], strict=False):
        fields = meta.lstrip(":").split()
        if len(fields) < 5:
            continue
        if fields[4] == "D":
            wanted[path] = (fields[0], fields[2])  # the source side: the target's entry
        else:
            tracked.add(path)
    return wanted, tracked


def _file_on_the_way(tree: Path, path: str) -> str | None:
    """The first leading folder of path that is a file or a symlink on disk, or None."""
    parts = path.split("/")
    for depth in range(1, len(parts)):
        lead = "/".join(parts[:depth])
        full = tree / lead
        if full.is_symlink() or (full.exists() and not full.is_dir()):
            return lead
        if not full.exists():
            return None
    return None


def _repository_on_the_way(tree: Path, path: str) -> str | None:
    """The first leading folder of path that holds a `.git` (a repository), or None."""
    parts = path.split("/")
    for depth in range(1, len(parts)):
        lead = "/".join(parts[:depth])
        full = tree / lead
        if full.is_symlink() or not full.is_dir():
            return None
        if os.path.lexists(full / ".git"):
            return lead
    return None


def _files_below(tree: Path, folder: str) -> list[tuple[str, bool]]:
    """(path, is a repository) of each file below folder; a folder holding a `.git` counts
    as one entry (a repository git would not write into)."""
    found = []
    for current, dirs, files in os.walk(tree / folder):  # does not follow links to folders
        relative = Path(current).relative_to(tree).as_posix()
        if ".git" in dirs or ".git" in files:
            found.append((relative, True))
            dirs[:] = []
            continue
        found.extend((f"{relative}/{name}", False) for name in sorted(files))
        found.extend((f"{relative}/{name}", False) for name in sorted(dirs)
                     if os.path.islink(os.path.join(current, name)))  # fmt: skip
        dirs[:] = sorted(name for name in dirs if not os.path.islink(os.path.join(current, name)))
    return found


def _ignored(
    runner: Runner, tree: Path, paths: list[str], subject: str, env: Mapping[str, str] | None
) -> set[str]:
    """Which of paths git's ignore rules cover, as its checkout reads them (the work tree's
    `.gitignore` files, `info/exclude`, the user's `core.excludesFile`)."""
    found: set[str] = set()
    for start in range(0, len(paths), _CHUNK):
        out = runner.run(tree, "--literal-pathspecs", "ls-files", "-z", "--others", "--ignored",
                         "--exclude-standard", "--", *paths[start : start + _CHUNK],
                         subject=subject, env=env)  # fmt: skip
        found.update(path.rstrip("/") for path in out.stdout.split("\0") if path)
    return found


def _same(runner: Runner, tree: Path, path: str, mode: str, blob: str, subject: str) -> bool:
    """Whether the file at path is what target has there (as git would store it)."""
    full = tree / path
    if mode == _SYMLINK or full.is_symlink():
        if mode != _SYMLINK or not full.is_symlink():
            return False
        wanted = runner.run(tree, "cat-file", "blob", blob, subject=subject).stdout
        return os.readlink(full) == wanted
    # hash-object applies what `git add` would (the path's filters and line endings).
    found = runner.run(tree, "hash-object", "--", path, check=False, subject=subject)
    return found.status == 0 and found.stdout.strip() == blob
