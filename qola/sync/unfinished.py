"""Repositories whose first checkout never finished: HEAD names a commit, there is no index.

How they come about and when one may be finished: docs/submodules.md, "A first checkout
that never finished"."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qola.gitrun.git import Runner


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
