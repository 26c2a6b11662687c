"""The checkout command's engine: observe, plan, apply and check every dependency."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base import console
from qola.base.errors import EXIT_MISMATCH, GitError, MismatchError, QolaError
from qola.gitrun.git import Runner
from qola.gitrun.lock import DEFAULT_TIMEOUT, lock_path, root_lock
from qola.manifest import Dep, Manifest
from qola.sync import submodules
from qola.sync.at_pin import Seen, look_at, needs_nothing
from qola.sync.complete import IncompleteError
from qola.sync.observe import DepState, SubmoduleState, observe, own_series
from qola.sync.patching import already_patched
from qola.sync.plan import Options, make_plan
from qola.sync.recovery import end as end_move
from qola.sync.recovery import finish_broken_pin, repair
from qola.sync.recovery import unfinished as unfinished_move

if TYPE_CHECKING:
    from qola.sync.apply import Outcome


@dataclass
class Result:
    """What happened to each dependency, and what failed."""

    states: dict[str, DepState] = field(default_factory=dict)
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    failures: dict[str, QolaError] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)  # each dependency's work
    received: dict[str, int] = field(default_factory=dict)  # bytes git reported fetching
    # Each dependency's last observation with what it read: the pre-check's, or for one
    # that was worked on the post-check's (what a CMake stamp is made of).
    seen: dict[str, Seen] = field(default_factory=dict)

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
    lock_timeout: float = DEFAULT_TIMEOUT,
    seen: Mapping[str, Seen] | None = None,
) -> Result:
    """Bring each dependency to its pin; failures are collected, the others still run.

    seen: observations made earlier in this run (the no-op's), each used in place of
    observing again while everything it read still holds.
    Dependencies that need work run options.jobs at a time, each in its own thread
    (every git call is its own process; a dependency is only ever touched by one).
    """
    result = Result(seen=dict(seen or {}))
    pending = [dep for dep in deps if not _already_there(manifest, dep, result)]
    if not pending:
        return result  # the fast path every configure takes: files read, no git, no lock
    pending = [dep for dep in pending if not _uninitialised_on_read_only(manifest, dep, runner,
                                                                         result)]  # fmt: skip
    if not pending:
        return result
    # Something has to change: take turns with other runs on this root (another
    # build folder configuring at the same moment), then look again. A lock that
    # cannot be had (LockError) stops the whole run, with nothing changed.
    names = ", ".join(dep.name for dep in pending)
    needs = f"{names} {'needs' if len(pending) == 1 else 'need'} a checkout"
    with root_lock(manifest.root, lock_timeout, progress, needs):
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
    """True (and recorded) when dep needs nothing: read from files, no git run. An earlier
    observation answers while all it read still holds (under the lock: nobody moved it
    while this run waited); otherwise dep is observed again."""
    known = result.seen.get(dep.name)
    if known is None or not known.still_holds(dep):
        try:
            known = result.seen[dep.name] = look_at(manifest, dep)
        except QolaError as error:
            result.seen.pop(dep.name, None)
            result.failures[dep.name] = error
            return True
    state = known.state
    if needs_nothing(state):
        if state.own_refusal is not None:
            console.warning(
                f"{dep.name}: {state.worktree} is used as it is, but {state.own_refusal}; git in "
                "the root still reaches it (qola verify runs git there), so no fast path "
                "answers for this tree until it is put right or moved away"
            )
        result.states[dep.name] = state
        return True
    return False


def _uninitialised_on_read_only(
    manifest: Manifest, dep: Dep, runner: Runner, result: Result
) -> bool:
    """True (recorded, with a warning) when dep is at its pins as git reads it, but lacks
    what only a write would record, and the tree is on a read-only file system (a
    container's read-only mount of the sources): its initialisation in the root's config,
    or qola's record of a patch series' result, which verify works out again without
    writing and which checkout now works out the same way. git reads only; the lock is
    not needed to read."""

    folder = lock_path(manifest.root).parent
    if not _read_only(folder):
        return False
    try:
        state = observe(manifest, dep, runner)
        found = _series_worked_out(runner, state)
    except QolaError:
        return False  # the full path reports it
    if found is None:
        return False
    if not dataclasses.replace(found, initialised=True, fetch_stopped=True).is_synced:
        return False
    config = submodules.config_file(manifest.root)
    if not found.initialised:
        console.warning(
            f"{dep.name}: {dep.path} is at its pin, but the root's config does not initialise "
            f"it (git submodule status shows -), and {config} is on a read-only file system: "
            f"left as it is; where the tree is writable, `git submodule init -- {dep.path}` "
            "or qola checkout initialises it"
        )
    if found is not state:  # a series' result, worked out again
        console.warning(
            f"{dep.name}: {dep.path} is at its pin and its patch series (worked out again: "
            f"qola's record of the series' result is missing), and {folder} is on a "
            "read-only file system: left as it is; where the tree is writable, qola checkout "
            "records it"
        )
    result.states[dep.name] = found
    return True


def _series_worked_out(runner: Runner, state: DepState) -> DepState | None:
    """state with the result of each patch series that qola has no record of worked out
    (in a scratch store: nothing is written), where HEAD is exactly pin + series; None when
    a series is applied on no HEAD there."""

    if not state.is_repo or state.head is None:
        return None
    found = state
    if state.patched and state.target is None:
        own, _ = own_series(runner, state.dep, state.series, state.worktree, state.gitdir, False)
        if own is None:
            return None
        applied = already_patched(runner, state.worktree, state.dep.commit, own, state.head,
                                  state.dep.name)  # fmt: skip
        if applied is None:
            return None
        found = dataclasses.replace(found, target=applied.head, own=own)
    subs = found.submodules
    if subs is not None and any(s.patched and s.target is None for t in subs for s in t.walk()):
        worked = tuple(_sub_worked_out(runner, state, sub) for sub in subs)
        if any(sub is None for sub in worked):
            return None
        found = dataclasses.replace(found, submodules=tuple(s for s in worked if s is not None))
    return found


def _sub_worked_out(runner: Runner, state: DepState, sub: SubmoduleState) -> SubmoduleState | None:
    """The same for a nested submodule and those below it."""

    target = sub.target
    if sub.series is not None and target is None:
        if sub.head is None:
            return None
        applied = already_patched(runner, state.worktree / sub.path, sub.expected,
                                  sub.series, sub.head, state.dep.name)  # fmt: skip
        if applied is None:
            return None
        target = applied.head
    children = tuple(_sub_worked_out(runner, state, child) for child in sub.children)
    if any(child is None for child in children):
        return None
    return dataclasses.replace(sub, target=target,
                               children=tuple(c for c in children if c is not None))  # fmt: skip


def _read_only(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _checkout_one(
    manifest: Manifest,
    dep: Dep,
    runner: Runner,
    options: Options,
    progress: Callable[[str], None],
    result: Result,
) -> None:
    started = time.monotonic()
    with console.activity(dep.name) as activity:
        try:
            _work_on(manifest, dep, runner, options, progress, result)
        finally:
            result.seconds[dep.name] = time.monotonic() - started
            result.received[dep.name] = activity.received


def _work_on(
    manifest: Manifest,
    dep: Dep,
    runner: Runner,
    options: Options,
    progress: Callable[[str], None],
    result: Result,
) -> None:
    from qola.sync.apply import apply  # lazy: not needed (nor imported) on the no-op path

    try:
        # Under the lock: finish a move that a killed or interrupted run left half-done.
        for note in repair(runner, manifest.root / dep.path, dep, options.offline):
            progress(f"{dep.name}: {note}")
        # The cache is written only for commits qola itself put in place (below),
        # so a refused checkout leaves the disk exactly as it was.
        state = observe(manifest, dep, runner)
        plan = make_plan(state)  # a folder git would refuse is refused before git runs there
        finished = finish_broken_pin(runner, state.worktree, dep, options.offline)
        if finished:
            for note in finished:
                progress(f"{dep.name}: {note}")
            state = observe(manifest, dep, runner)
            plan = make_plan(state)
        if not plan.is_noop:
            progress(plan.describe())
        try:
            result.outcomes[dep.name] = apply(plan, runner, options)
        except IncompleteError:
            # git said done, but the checkout is not whole: the record stays, so that no
            # fast path calls the tree up to date, and the next run finishes it.
            unfinished_move(state.worktree)
            raise
        except (QolaError, OSError):
            # git failed cleanly (it checks before it writes): the normal path copes with
            # what is left. Only a kill or a signal leaves the move for repair() to finish.
            end_move(state.worktree)
            raise
        result.states[dep.name] = _check_commits(manifest, dep, runner, result)
    except QolaError as error:
        result.failures[dep.name] = error
    except OSError as error:
        # A read-only or full file system fails this dependency; the others still run.
        result.failures[dep.name] = GitError(
            dep.name,
            f"cannot write {error.filename or dep.path}: {error.strerror or error}",
            "make the folder writable or free some space, then run again",
        )


def _check_commits(manifest: Manifest, dep: Dep, runner: Runner, result: Result) -> DepState:
    """The post-checkout verifier: HEAD and every nested submodule at the manifest's commits
    (plus their patch series). Its observation, with what it read, is the dependency's
    part of a CMake stamp (at_pin.proven judges it as the fast paths do)."""
    seen = result.seen[dep.name] = look_at(manifest, dep, runner, write_cache=True)
    state = seen.state
    if not state.at_target:
        wanted = state.wanted or f"{dep.commit} + its patch series"
        raise MismatchError(
            dep.name, f"HEAD is {state.head or 'unreadable'} after checkout, not {wanted}"
        )
    if dep.submodules:
        bad = [s for top in state.submodules or () for s in top.walk()
               if not (s.at_target and s.initialised)]  # fmt: skip
        if state.submodules is None or bad:
            detail = ", ".join(_where(s) for s in bad)
            raise MismatchError(
                dep.name, f"nested submodules are not at their gitlinks: {detail or 'unknown'}"
            )
    return state


def _where(sub: SubmoduleState) -> str:
    """Where a nested submodule the check found wrong is, for the message."""
    if sub.head is None:
        return f"{sub.path} at uninitialised"
    if not sub.at_target:
        return f"{sub.path} at {sub.head}"
    return f"{sub.path} not initialised in its parent's config"
