"""The checkout command's engine: observe, plan, apply and check every dependency."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from qola.errors import EXIT_MISMATCH, MismatchError, QolaError
from qola.git import Runner
from qola.lock import root_lock
from qola.manifest import Dep, Manifest
from qola.observe import DepState, observe
from qola.plan import Options, make_plan

if TYPE_CHECKING:
    from qola.apply import Outcome


@dataclass
class Result:
    """What happened to each dependency, and what failed."""

    states: dict[str, DepState] = field(default_factory=dict)
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    failures: dict[str, QolaError] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """The most serious failure's code: refused 4, then git 3, then mismatch 1, then 2."""
        codes = {error.exit_code for error in self.failures.values()}
        for code in (4, 3, EXIT_MISMATCH, 2):
            if code in codes:
                return code
        return 0


def checkout(
    manifest: Manifest,
    deps: tuple[Dep, ...],
    runner: Runner,
    options: Options,
    progress: Callable[[str], None] = lambda _msg: None,
) -> Result:
    """Bring each dependency to its pin; failures are collected, the others still run.

    Dependencies that need work run options.jobs at a time, each in its own thread
    (every git call is its own process; a dependency is only ever touched by one).
    """
    result = Result()
    pending = [dep for dep in deps if not _already_there(manifest, dep, result)]
    if not pending:
        return result  # the fast path every configure takes: files read, no git, no lock
    # Something has to change: take turns with other runs on this root (another
    # build folder configuring at the same moment), then look again.
    with root_lock(manifest.root):
        pending = [dep for dep in pending if not _already_there(manifest, dep, result)]
        if options.jobs <= 1 or len(pending) <= 1:
            for dep in pending:
                _checkout_one(manifest, dep, runner, options, progress, result)
            return result
        pool = ThreadPoolExecutor(max_workers=min(options.jobs, len(pending)))
        try:
            wait(
                [
                    pool.submit(_checkout_one, manifest, dep, runner, options, progress, result)
                    for dep in pending
                ]
            )
        finally:
            # Interrupted: dependencies not started stay as they were; those under way
            # finish (a clone lands whole or not at all) before the run exits.
            pool.shutdown(wait=True, cancel_futures=True)
    return result


def _already_there(manifest: Manifest, dep: Dep, result: Result) -> bool:
    """True (and recorded) when dep needs nothing: read from files, no git run."""
    try:
        state = observe(manifest, dep, None)
    except QolaError as error:
        result.failures[dep.name] = error
        return True
    if state.is_synced or state.overridden:
        result.states[dep.name] = state
        return True
    return False


def _checkout_one(
    manifest: Manifest,
    dep: Dep,
    runner: Runner,
    options: Options,
    progress: Callable[[str], None],
    result: Result,
) -> None:
    from qola.apply import apply  # not needed (nor imported) on the no-op path

    try:
        # The cache is written only for commits qola itself put in place (below),
        # so a refused checkout leaves the disk exactly as it was.
        state = observe(manifest, dep, runner)
        plan = make_plan(state)
        if not plan.is_noop:
            progress(plan.describe())
        result.outcomes[dep.name] = apply(plan, runner, options)
        result.states[dep.name] = _check_commits(manifest, dep, runner)
    except QolaError as error:
        result.failures[dep.name] = error


def _check_commits(manifest: Manifest, dep: Dep, runner: Runner) -> DepState:
    """The post-checkout verifier: HEAD and every nested submodule at the manifest's commits
    (plus their patch series)."""
    state = observe(manifest, dep, runner, write_cache=True)
    if not state.at_target:
        wanted = state.wanted or f"{dep.commit} + its patch series"
        raise MismatchError(
            dep.name, f"HEAD is {state.head or 'unreadable'} after checkout, not {wanted}"
        )
    if dep.submodules:
        bad = [s for top in state.submodules or () for s in top.walk() if not s.at_target]
        if state.submodules is None or bad:
            detail = ", ".join(f"{s.path} at {s.head or 'uninitialised'}" for s in bad)
            raise MismatchError(
                dep.name, f"nested submodules are not at their gitlinks: {detail or 'unknown'}"
            )
    return state
