"""The names of the refs qola writes for its own memory, in one place."""

from __future__ import annotations

# Every commit qola checked out in a repository (a dependency, a nested submodule) and
# every pin asked of a --cache mirror: refs/qola/pins/<sha>. The ref keeps the commit
# from garbage collection, and a HEAD there is never taken for someone's local work.
PINS_PREFIX = "refs/qola/pins/"


def pin_ref(sha: str) -> str:
    """The ref that remembers commit sha."""
    return PINS_PREFIX + sha
