"""One lock per root, held while qola changes anything, so concurrent runs take turns."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from qola import gitfiles


def lock_path(root: Path) -> Path:
    """Where the root's lock lives: in its git dir, else in the root itself."""
    gitdir = gitfiles.git_dir(root)
    return (gitfiles.common_dir(gitdir) if gitdir else root) / "qola.lock"


@contextmanager
def root_lock(root: Path) -> Iterator[None]:
    """Hold the root's lock; a second run waits here, then finds the work done."""
    fd = os.open(lock_path(root), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released by the kernel if the process dies
        yield
    finally:
        os.close(fd)
