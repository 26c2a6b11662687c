"""The checkout command's engine: observe, plan, apply and check every dependency."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field

from qola.apply import Options, Outcome, apply
from qola.errors import EXIT_MISMATCH, GitError, MismatchError, QolaError, UsageError
from qola.git import Runner
from qola.lock import DEFAULT_TIMEOUT, LockError, root_lock
from qola.manifest import Dep, Manifest
from qola.observe import DepState, observe
from qola.plan import make_plan
from qola.recovery import end as end_move
from qola.recovery import repair


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
    lock_timeout: float = DEFAULT_TIMEOUT,
) -> Result:
    """Bring each dependency to its pin; failures are collected, the others still run."""
    result = Result()
    with ExitStack() as stack:
        lock = _LazyLock(manifest, stack, lock_timeout, progress)
        for dep in deps:
            _checkout_one(manifest, dep, runner, options, progress, result, lock)
    return result


class _LazyLock:
    """The root's lock, taken the first time a dependency needs changing."""

    def __init__(
        self,
        manifest: Manifest,
        stack: ExitStack,
        timeout: float = DEFAULT_TIMEOUT,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        self.manifest = manifest
        self.stack = stack
        self.timeout = timeout
        self.on_wait = on_wait
        self.held = False

    def take(self) -> bool:
        """Take the lock; True when this call took it (the caller should look again)."""
        if self.held:
            return False
        self.stack.enter_context(root_lock(self.manifest.root, self.timeout, self.on_wait))
        self.held = True
        return True


def _checkout_one(
    manifest: Manifest,
    dep: Dep,
    runner: Runner,
    options: Options,
    progress: Callable[[str], None],
    result: Result,
    lock: _LazyLock,
) -> None:
    try:
        if dep.patches is not None:
            raise UsageError(
                dep.name,
                f"patch series ({dep.patches}) are not supported by this qola yet; "
                "nothing was done",
                "remove the patches key to check out the bare pin",
            )
        state = observe(manifest, dep, None)
        if state.is_synced or state.overridden:
            # The fast path every configure takes: files read, no git run, no lock.
            result.states[dep.name] = state
            return
        if lock.take():
            # Something has to change: take turns with other runs on this root
            # (another build folder configuring at the same moment), then look again.
            state = observe(manifest, dep, None)
            if state.is_synced:
                result.states[dep.name] = state
                return
        # Under the lock: finish a move that a killed or interrupted run left half-done.
        for note in repair(runner, state.worktree, dep):
            progress(f"{dep.name}: {note}")
        # The cache is written only for commits qola itself put in place (below),
        # so a refused checkout leaves the disk exactly as it was.
        state = observe(manifest, dep, runner)
        plan = make_plan(state)
        if not plan.is_noop:
            progress(plan.describe())
        try:
            result.outcomes[dep.name] = apply(plan, runner, options)
        except (QolaError, OSError):
            # git failed cleanly (it checks before it writes): the normal path copes with
            # what is left. Only a kill or a signal leaves the move for repair() to finish.
            end_move(state.worktree)
            raise
        result.states[dep.name] = _check_commits(manifest, dep, runner)
    except LockError:
        raise  # without the lock no dependency may change: the whole run stops, unchanged
    except QolaError as error:
        result.failures[dep.name] = error
    except OSError as error:
        # A read-only or full file system fails this dependency; the others still run.
        result.failures[dep.name] = GitError(
            dep.name,
            f"cannot write {error.filename or dep.path}: {error.strerror or error}",
            "make the folder writable or free some space, then run again",
        )


def _check_commits(manifest: Manifest, dep: Dep, runner: Runner) -> DepState:
    """The post-checkout verifier: HEAD and every nested submodule at the manifest's commits."""
    state = observe(manifest, dep, runner, write_cache=True)
    if not state.at_pin:
        raise MismatchError(
            dep.name, f"HEAD is {state.head or 'unreadable'} after checkout, not {dep.commit}"
        )
    if dep.submodules:
        bad = [s for top in state.submodules or () for s in top.walk() if s.head != s.expected]
        if state.submodules is None or bad:
            detail = ", ".join(f"{s.path} at {s.head or 'uninitialised'}" for s in bad)
            raise MismatchError(
                dep.name, f"nested submodules are not at their gitlinks: {detail or 'unknown'}"
            )
    return state
