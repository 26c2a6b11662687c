"""What each dependency needs, decided from what was observed. Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from qola.base.errors import RefusedError
from qola.base.names import override_variable
from qola.repo import gitfiles
from qola.sync.observe import DepState


@dataclass(frozen=True)
class Options:
    """How checkout may carry plans out (the command line's choices)."""

    offline: bool = False  # never fetch
    force: bool = False  # save local work and move anyway
    jobs: int = 1  # dependencies worked on at once
    cache: Path | None = None  # folder of shared bare mirrors (--cache)


@dataclass(frozen=True)
class Plan:
    """The steps one dependency needs; all False means nothing to do."""

    state: DepState
    clone: bool = False
    move_head: bool = False
    moving_submodules: tuple[str, ...] = ()  # nested paths not at their gitlinks
    update_submodules: bool = False
    # A submodule of the root whose entry in the root's config is not as qola leaves it:
    # not initialised (as `git submodule init` would), or its fetchRecurseSubmodules unset.
    initialise: bool = False

    @property
    def is_noop(self) -> bool:
        return not (self.clone or self.move_head or self.update_submodules or self.initialise)

    def describe(self) -> str:
        """One line saying what will happen, for people."""
        dep = self.state.dep
        short = dep.commit[:12]
        if self.is_noop:
            return f"{dep.name}: at {short}, nothing to do"
        if self.clone:
            return f"{dep.name}: clone {dep.url} at {short} into {dep.path}"
        if self.move_head and self.state.half_made and self.state.at_target:
            return f"{dep.name}: finish the first checkout of {dep.path} at {short}"
        if self.move_head and self.state.head == dep.commit:  # the pin, without its patches
            return f"{dep.name}: {dep.path} is at {short}; its patches go on top"
        if self.move_head:
            old = (self.state.head or "unknown")[:12]
            return f"{dep.name}: move {dep.path} from {old} to {short}"
        if self.update_submodules:
            uninitialised = [
                f"{s.path} is not initialised"
                for top in self.state.submodules or () for s in top.walk()
                if s.head and s.at_target and not s.initialised
            ]  # fmt: skip
            moving = ", ".join([*self.moving_submodules, *uninitialised])
            moving = moving or "their state was unknown"
            return f"{dep.name}: update nested submodules ({moving})"
        if not self.state.initialised:
            return f"{dep.name}: initialise {dep.path} in the root's config (as git submodule init)"
        return (
            f"{dep.name}: set submodule.{dep.submodule_name}.fetchRecurseSubmodules=false in "
            "the root's config (a fetch in the root leaves the pin to qola)"
        )


def make_plan(state: DepState) -> Plan:
    """Decide the steps for one dependency.

    A patch series whose result is not known yet plans a move: apply works the
    result out first and then sees whether HEAD is already there.
    """
    dep = state.dep
    if state.overridden or state.developing:
        return Plan(state)
    if not state.is_repo:
        if state.exists:
            what = "is not a git repository"
            hint = "move its contents away (or delete the folder) and run qola again"
            if state.refusal is not None:
                what = f"is not a repository git accepts ({state.refusal})"
            if isinstance(state.refusal, gitfiles.Outside):
                hint = (
                    f"to use that repository as it is, point {override_variable(dep.name)} "
                    f"at {state.worktree}; else remove {state.worktree / '.git'} and run "
                    "qola again"
                )
            raise RefusedError(
                dep.name, f"{state.worktree} exists and {what}; nothing was changed", hint
            )
        return Plan(state, clone=True, update_submodules=dep.submodules, initialise=True)
    if state.is_synced:
        return Plan(state)
    for sub in (s for top in state.submodules or () for s in top.walk()):
        if sub.refusal is not None:
            # git would stop on it half-way; what is there may be someone's work.
            raise RefusedError(
                dep.name,
                f"{dep.path}/{sub.path} is not a repository git accepts ({sub.refusal}); "
                "nothing was changed",
                "put the submodule's folder back as git left it (or move it away) "
                "and run qola again",
            )
    initialise = not state.initialised or not state.fetch_stopped
    moving = tuple(
        s.path
        for top in (state.submodules or ())
        for s in top.walk()
        if not s.at_target or s.half_made
    )
    # A checkout git (or a killed run) never finished is finished like a move.
    if not state.at_target or state.half_made:
        return Plan(
            state,
            move_head=True,
            moving_submodules=moving,
            update_submodules=dep.submodules,
            initialise=initialise,
        )
    nested = dep.submodules and (
        state.submodules is None or not all(s.ok for s in state.submodules)
    )
    return Plan(
        state, moving_submodules=moving, update_submodules=nested, initialise=initialise
    )
