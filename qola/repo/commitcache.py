"""What qola learned about a commit (its gitlinks) or a patch series (what it produced),
remembered in the repository's common git dir: neither ever goes stale."""

from __future__ import annotations

import json
import os
from pathlib import Path

from qola.repo import store
from qola.repo.gitpaths import common_dir


def record_file(gitdir: Path, folder: str, key: str) -> Path:
    """A remembered fact about a commit (folder "commits") or patch series ("series")."""
    return common_dir(gitdir) / store.STATE / folder / f"{key}.json"


def read_commit_cache(gitdir: Path, key: str, folder: str = "commits") -> dict[str, object] | None:
    path = os.path.join(common_dir(gitdir), store.STATE, folder, f"{key}.json")  # record_file
    # Not noted for a stamp: what a file holds is a function of its name (a commit, or a
    # pin and its patches), and one that goes away only makes the next look ask git.
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    try:
        found = json.loads(data)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def write_commit_cache(
    gitdir: Path, key: str, data: dict[str, object], folder: str = "commits"
) -> bool:
    """Remember data; False when it could not be written."""
    path = record_file(gitdir, folder, key)
    # A cache that cannot be written (or a link in the way) is only slower next time.
    try:
        store.write_file(path, json.dumps(data, sort_keys=True).encode(), common_dir(gitdir))
    except OSError:
        return False
    return True
