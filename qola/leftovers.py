"""Files in the way of a checkout that a killed one began: kept if they are anyone's, then
cleared, so that git's own (unforced) checkout can finish the move.

A checkout killed half-way has written some files of the new commit, among them
files at paths the old commit lacks. Once the repository is reset to the old
commit (qola/recovery.py) those are untracked, and a plain `git checkout` refuses
to overwrite them, run after run; `checkout -f` would overwrite them, and with
them any file of the user's at such a path (one made before the move, or between
the kill and the next run). So each file at a path the new commit adds is
compared with the new commit's: one with the same content is removed (the
checkout writes it again), one that differs is saved first, in a commit of its
own (`keep`) that recovery.py saves under refs/qola/backup/<name>/...-in-the-way,
with the command that brings it back. Nothing else is touched, and git refuses
to overwrite anything left (a folder where the new commit has a file, say).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qola.git import Runner

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


def in_the_way(
    runner: Runner, tree: Path, target: str, subject: str
) -> tuple[list[str], list[str]]:
    """(every file at a path target adds to tree's HEAD, those of them that differ from
    target's). A file where target has a folder differs."""
    added = _added(runner, tree, target, subject)
    if not added:
        return [], []
    listed = runner.run(tree, "ls-files", "-z", subject=subject).stdout.split("\0")
    tracked = set(listed) - {""}
    found: dict[str, tuple[str, str] | None] = {}  # path -> target's (mode, blob), if a file
    for path, wanted in added.items():
        parts = path.split("/")
        for depth in range(1, len(parts)):
            lead = "/".join(parts[:depth])
            if lead in tracked:
                break  # git's own: reset to HEAD, and moved by the checkout
            full = tree / lead
            if full.is_symlink() or (full.exists() and not full.is_dir()):
                found[lead] = None
                break
        else:
            full = tree / path
            if full.is_symlink() or full.is_file():
                found[path] = wanted
    differing = [path for path, wanted in found.items()
                 if wanted is None or not _same(runner, tree, path, *wanted, subject)]  # fmt: skip
    return list(found), differing


def keep(runner: Runner, tree: Path, paths: list[str], target: str, subject: str) -> str:
    """A commit of exactly these files of tree's, as they are (for a backup ref)."""
    with tempfile.TemporaryDirectory(prefix="qola-in-the-way-") as folder:
        env = {"GIT_INDEX_FILE": os.path.join(folder, "index")}  # a new index: empty
        runner.run(tree, "update-index", "--add", "--", *paths, subject=subject, env=env)
        saved = runner.run(tree, "write-tree", subject=subject, env=env).stdout.strip()
    message = f"qola: files in the way of {target}, kept before the move was finished"
    return runner.run(tree, "commit-tree", saved, "-m", message, subject=subject,
                      env=_SAVER).stdout.strip()  # fmt: skip


def _added(runner: Runner, tree: Path, target: str, subject: str) -> dict[str, tuple[str, str]]:
    """The files (no gitlinks) target has and HEAD lacks: path -> (mode, blob)."""
    out = runner.run(tree, "diff-tree", "-r", "-z", "--no-renames", "--diff-filter=A",
                     "--end-of-options", "HEAD", target, subject=subject).stdout  # fmt: skip
    records = out.split("\0")
    found = {}
    for meta, path in zip(records[::2], records[1::2], strict=False):
        fields = meta.lstrip(":").split()
        if len(fields) >= 4 and fields[1] != _GITLINK:
            found[path] = (fields[1], fields[3])
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
