"""Whether a dependency is already at its pin (or overridden), from one observation, with
the stamp that vouches for it; and what the no-op hands the full command when it steps
aside."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from qola.base.errors import QolaError
from qola.repo.trail import Proof, Trail, exists, holds, recording, replay, vouch
from qola.sync import observe as observation  # called as observation.observe: tests wrap it
from qola.sync import report

if TYPE_CHECKING:
    from qola.gitrun.git import Runner
    from qola.manifest import Dep, Manifest
    from qola.sync.observe import DepState, SubmoduleState


class Seen(NamedTuple):  # not a dataclass: the no-op must not import inspect
    """One observation of a dependency and what it read (its trail)."""

    state: DepState
    trail: Trail

    def still_holds(self, dep: Dep) -> bool:
        """This observation is what observing dep again (without git) would find: it was of
        dep, needed no git, and nothing it read has changed since."""
        return (
            self.state.dep == dep
            and self.trail.unprovable is None
            and holds(self.trail.pairs())
        )


class Handoff(NamedTuple):
    """What the no-op loaded and observed before it stepped aside, for the full command to
    start from (qola/commands/session.py takes the manifest when it is the same invocation's)."""

    manifest: Manifest
    root: str | None  # the --root it was loaded with (absolute), as the invocation's
    seen: dict[str, Seen]


def look_at(
    manifest: Manifest, dep: Dep, runner: Runner | None = None, write_cache: bool = False
) -> Seen:
    """Observe dep once, noting what the observation read."""
    with recording() as trail:
        state = observation.observe(manifest, dep, runner, write_cache)
    return Seen(state, trail)


def needs_nothing(state: DepState) -> bool:
    """The full command's answer: nothing to do for this dependency (at its pin, an
    override used as it is, or one being developed). Wherever verdict(state) answers, this
    is true too; it is also true where only the full command may say so (an override it
    must warn about, a `.lfsconfig` it leaves to git, a dependency being developed)."""
    return state.is_synced or state.overridden or state.developing


def verdict(state: DepState) -> str | None:
    """What a fast path may say of a dependency from its files alone: "up to date",
    "overridden by <folder>", or None (the full command decides, and says why)."""
    if state.developing:
        return None  # the full command says where it is, every time
    if state.overridden:
        return None if state.own_refusal is not None else report.overridden(state.worktree)
    if not state.is_synced or _lfs_config_in(state):
        return None
    return report.UP_TO_DATE


def _lfs_config_in(state: DepState) -> bool:
    """A `.lfsconfig` in the dependency's work tree or a nested submodule's: whether git-lfs
    may read it (the pinned commit's own, and the user's config running git-lfs) only git
    can tell, so no fast path answers; that there is none is noted for a stamp."""
    trees = [state.worktree, *(state.worktree / sub.path for sub in _nested(state.submodules))]
    return any(exists(tree / ".lfsconfig") for tree in trees)


def _nested(subs: Sequence[SubmoduleState] | None) -> list[SubmoduleState]:
    found: list[SubmoduleState] = []
    for sub in subs or ():
        found += [sub, *_nested(sub.children)]
    return found


def proven(
    manifest: Manifest, deps: Sequence[Dep], seen: Mapping[str, Seen] | None = None
) -> Proof:
    """What vouches for every dependency being at its pin or overridden (verdict answers for
    each): stamp.vouch's proof. A dependency observed earlier in this run (seen) is taken
    from that observation while all it read still holds; any other is observed now."""
    known = seen or {}

    def at_pins() -> bool:
        for dep in deps:
            found = known.get(dep.name)
            if found is not None and found.still_holds(dep):
                replay(found.trail)
                state = found.state
            else:
                try:
                    state = observation.observe(manifest, dep, None)
                except QolaError:
                    return False
            if verdict(state) is None:
                return False
        return True

    return vouch(manifest.looked, at_pins)
