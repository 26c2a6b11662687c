"""Files whose edits git status cannot see: flagged assume-unchanged or skip-worktree in
an index (the dependency's or a nested submodule's), and how each differs from its blob."""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from qola.repo import gitfiles, index

if TYPE_CHECKING:
    from qola.gitrun.git import Runner

_DEEPEST = 16  # levels of submodules within submodules


def flagged_files(
    runner: Runner, tree: Path, subject: str, prefix: str = "", depth: int = 0
) -> list[index.Entry]:
    """The flagged files of tree and its nested submodules, by path from the dependency.

    Read from the index files; a repository whose index the reader declines is asked
    with `git ls-files -v` instead (which covers the submodules below it too).
    """
    gitdir = gitfiles.git_dir(tree)
    entries = index.flagged_entries(gitdir) if gitdir is not None else None
    # Submodules nested this deep are a loop (a folder linking back up) rather than a
    # real tree: git decides what it is.
    if gitdir is None or entries is None or depth > _DEEPEST:
        return _listed_flagged_files(runner, tree, subject, prefix)
    found = []
    for entry in entries:
        if not entry.is_gitlink:
            found.append(replace(entry, path=prefix + entry.path))
        elif gitfiles.git_dir(tree / entry.path) is not None:
            # Every populated submodule, as git status looks into each (ls-files only
            # into active ones): never fewer files than git would list.
            below = f"{prefix}{entry.path}/"
            found.extend(flagged_files(runner, tree / entry.path, subject, below, depth + 1))
        elif (gitfiles.common_dir(gitdir) / "modules").is_dir():
            # Not populated, but git may read its index from .git/modules/<name>
            # (repo_submodule_init, when active): only git knows, so ask it.
            return _listed_flagged_files(runner, tree, subject, prefix)
    return found


# `git ls-files -v` tags: lower case marks assume-unchanged, S skip-worktree.
_HIDDEN_TAGS = frozenset("hsmrck") | {"S"}


def _listed_flagged_files(
    runner: Runner, tree: Path, subject: str, prefix: str
) -> list[index.Entry]:
    # One git process for the repository and its nested submodules.
    out = runner.run(
        tree, "--no-optional-locks", "ls-files", "-v", "-s", "-z", "--recurse-submodules",
        subject=subject,
    )  # fmt: skip
    found = []
    for record in out.stdout.split("\0"):
        meta, _, path = record.partition("\t")
        fields = meta.split()
        if len(fields) != 4 or fields[0] not in _HIDDEN_TAGS or fields[1] == "160000":
            continue
        flag = index.SKIP_WORKTREE if fields[0] in "Ss" else index.ASSUME_UNCHANGED
        found.append(index.Entry(prefix + path, fields[1], fields[2], flag))
    return found


def file_change(file: Path, mode: str, sha: str) -> str | None:
    """How a file differs from the blob (and mode) its index entry records, if it does."""
    try:
        data = os.readlink(file).encode() if mode == "120000" else file.read_bytes()
        executable = os.access(file, os.X_OK) and mode != "120000"
    except FileNotFoundError:
        return "deleted"
    except OSError:
        return "unreadable"
    algorithm = hashlib.sha256 if len(sha) == 64 else hashlib.sha1
    if algorithm(b"blob %d\0" % len(data) + data).hexdigest() != sha:
        return "modified"
    if mode in ("100644", "100755") and executable != (mode == "100755"):
        return "mode changed"
    return None
