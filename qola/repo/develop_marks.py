"""Which dependencies are being developed in this checkout of the root (`qola develop`).

A mark is an empty file, `<root's git dir>/qola/developing/<name>`: kept in the git dir
of this work tree (a linked worktree of the root has its own), so it is never committed
and never seen by another checkout. A dependency name is a file name already
([A-Za-z0-9][A-Za-z0-9_-]*, checked when the manifest loads)."""

from __future__ import annotations

import os
from pathlib import Path

from qola.repo import trail
from qola.repo.gitfiles import find_git_dir
from qola.repo.noop_stamp import STATE

FOLDER = "developing"


def mark_path(gitdir: Path, name: str) -> Path:
    """Where the mark of dependency `name` lives in the root's git dir."""
    return gitdir / STATE / FOLDER / name


def is_marked(root: Path, name: str) -> bool:
    """Whether `qola develop NAME` marked the dependency in this checkout (noted for a
    stamp: a mark made later means the stamp no longer holds)."""
    gitdir = find_git_dir(root)
    return gitdir is not None and trail.exists(mark_path(gitdir, name))


def marked(root: Path) -> list[str]:
    """Every name marked in this checkout, sorted (names the manifest may no longer have)."""
    gitdir = find_git_dir(root)
    if gitdir is None:
        return []
    try:
        return sorted(os.listdir(gitdir / STATE / FOLDER))
    except OSError:
        return []


def mark(gitdir: Path, name: str) -> bool:
    """Mark the dependency; False when it was marked already."""
    from qola.repo import store  # lazy: writes only (the no-op reads marks, never writes)

    path = mark_path(gitdir, name)
    if os.path.lexists(path):
        return False
    store.write_file(path, b"", gitdir)
    return True


def unmark(gitdir: Path, name: str) -> bool:
    """Remove the mark; False when there was none."""
    from qola.repo import store  # lazy: writes only

    return store.remove_file(mark_path(gitdir, name), gitdir)
