"""Repositories whose first checkout never finished: HEAD names a commit, there is no index.

`git clone --no-checkout` (what `git submodule update` runs before its checkout)
leaves one when that checkout fails, and a run of qola killed while it populated
a nested submodule leaves one: both hold nothing but HEAD's files, some of them
missing, and `git checkout -f` finishes them. A user's `rm .git/index` (the usual
cure for "index file corrupt") leaves one too, with the user's edits, new files
and commits in it. git cannot tell them apart (with no index, every file is
untracked to it), so what such a repository holds is compared with HEAD through
an index made from HEAD in a temporary folder; the repository's own files are
neither read for an index nor written. Only a repository in which nothing
differs from HEAD but missing files may be finished with -f.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qola.git import Runner


@contextlib.contextmanager
def head_index(runner: Runner, tree: Path, subject: str) -> Iterator[dict[str, str]]:
    """An environment in which git reads, as tree's index, one made from HEAD's tree."""
    with tempfile.TemporaryDirectory(prefix="qola-head-index-") as folder:
        env = {"GIT_INDEX_FILE": os.path.join(folder, "index")}
        runner.run(tree, "read-tree", "HEAD", subject=subject, env=env)
        yield env


def holds_only_git(folder: Path) -> bool:
    """True when folder holds nothing but its `.git` (nothing of anyone's to overwrite)."""
    try:
        with os.scandir(folder) as entries:
            return all(entry.name == ".git" for entry in entries)
    except OSError:
        return False
