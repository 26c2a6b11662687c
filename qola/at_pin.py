"""Whether every dependency is at its pin (or overridden), with the stamp that vouches for it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from qola import stamp
from qola.errors import QolaError
from qola.observe import observe

if TYPE_CHECKING:
    from qola.manifest import Dep, Manifest
    from qola.observe import DepState, SubmoduleState


def verdict(state: DepState) -> str | None:
    """What a fast path may say of a dependency from its files alone: "up to date",
    "overridden by <folder>", or None (the full command decides, and says why)."""
    if state.overridden:
        return None if state.own_refusal is not None else f"overridden by {state.worktree}"
    if not state.is_synced or _lfs_config_in(state):
        return None
    return "up to date"


def _lfs_config_in(state: DepState) -> bool:
    """A `.lfsconfig` in the dependency's work tree or a nested submodule's: whether git-lfs
    may read it (the pinned commit's own, and the user's config running git-lfs) only git
    can tell, so no fast path answers; that there is none is noted for a stamp."""
    trees = [state.worktree, *(state.worktree / sub.path for sub in _nested(state.submodules))]
    return any(stamp.exists(tree / ".lfsconfig") for tree in trees)


def _nested(subs: Sequence[SubmoduleState] | None) -> list[SubmoduleState]:
    found: list[SubmoduleState] = []
    for sub in subs or ():
        found += [sub, *_nested(sub.children)]
    return found

def proven(
    manifest: Manifest, deps: Sequence[Dep], look: Callable[[], bool] | None = None
) -> stamp.Proof:
    """What vouches for look()'s answer (default: every dependency at its pin or overridden,
    from files): stamp.vouch's proof of that look."""
    return stamp.vouch(manifest, look if look is not None else lambda: _at_pins(manifest, deps))


def _at_pins(manifest: Manifest, deps: Sequence[Dep]) -> bool:
    try:
        states = [observe(manifest, dep, None) for dep in deps]
    except QolaError:
        return False
    return all(verdict(state) is not None for state in states)
