"""Moving several pins at once, all or nothing (`qola bump --all`).

The order that makes it all or nothing: docs/bump.md, "How `bump --all` stays all or
nothing"."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base.errors import GitError, RefusedError
from qola.gitrun import queries
from qola.history import bump
from qola.repo import gitfiles
from qola.sync import fetch
from qola.sync.apply import refusal
from qola.sync.engine import checkout as run_checkout
from qola.sync.local_work import observe_local_work, without_upstream_commits
from qola.sync.observe import observe
from qola.sync.plan import make_plan

if TYPE_CHECKING:
    from qola.gitrun.git import Runner
    from qola.history.bump import Move
    from qola.manifest import Dep, Manifest
    from qola.sync.engine import Result
    from qola.sync.plan import Options


@dataclass(frozen=True)
class Planned:
    """A move, and what the dependency's HEAD was before it (None: nothing to move)."""

    move: Move
    head: str | None  # None: not checked out, or overridden (QOLA_SOURCE_DIR_<NAME>)
    synced: bool  # the dependency was at its old pin (patches and nested submodules included)
    overridden: str | None = None  # the folder used as it is instead, which qola never moves

    @property
    def moved_dep(self) -> Dep:
        return dataclasses.replace(self.move.dep, commit=self.move.new, tag=self.move.tag)


def plan(
    runner: Runner,
    manifest: Manifest,
    deps: tuple[Dep, ...],
    offline: bool,
    allow_downgrade: bool,
) -> list[Move]:
    """Every dep's move to the tip of its track, in manifest order (the old pin when it is
    already there); a QolaError from any of them stops all, with nothing written."""
    found = []
    for dep in deps:
        worktree = manifest.root / dep.path
        target = bump.resolve(runner, dep, worktree, None, offline)
        move = bump.Move(dep, dep.commit, target.sha, dep.follows.label, tag=target.tag,
                         forward=target.forward, following=True)  # fmt: skip
        found.append(bump.describe(runner, move, worktree, target.ref, offline, allow_downgrade))
    return found


def prepare(
    runner: Runner, manifest: Manifest, moving: list[Move], options: Options
) -> tuple[list[Planned], list[RefusedError]]:
    """What moving each would lose (refusals, unless forced); when nothing, each new pin
    fetched into its dependency. Moves nothing."""

    planned, refused = [], []
    for move in moving:
        before = observe(manifest, move.dep, runner)
        if before.overridden:
            planned.append(Planned(move, None, False, str(before.worktree)))
            continue
        head = before.head if before.is_repo else None
        planned.append(Planned(move, head, before.is_synced))
        if head is None:
            continue
        state = observe(manifest, dataclasses.replace(move.dep, commit=move.new), runner)
        steps = make_plan(state)  # RefusedError: a folder git does not accept
        work = observe_local_work(runner, state, list(steps.moving_submodules), steps.move_head)
        if work.unsaved and not options.offline:
            without_upstream_commits(runner, state, work)  # as checkout judges them
        if work and not options.force:
            refused.append(refusal(state.dep, work))
    if refused:
        return planned, refused
    for item in planned:
        if item.head is not None:
            _fetch(runner, manifest.root / item.move.dep.path, item.moved_dep, options.offline)
    return planned, []


def _fetch(runner: Runner, worktree: Path, dep: Dep, offline: bool) -> None:
    """The new pin into the dependency's object store (nothing else changes there)."""
    if queries.has_commit(runner, worktree, dep.commit):
        return
    if offline:
        raise GitError(
            dep.name,
            f"commit {dep.commit} is not present locally and --offline forbids fetching it; "
            "nothing was changed",
            "run without --offline",
        )
    gitdir = gitfiles.git_dir(worktree)
    shallow = gitdir is not None and gitfiles.is_shallow(gitdir)
    source = fetch.Source(dep.name, dep.url, dep.track)
    fetch.fetch_commit(runner, worktree, source, dep.commit, shallow)
    if dep.is_signed and dep.tag is not None:  # the tag whose signature verify checks
        fetch.fetch_label(runner, worktree, dep.name, dep.url, dep.tag)


def move_all(
    runner: Runner,
    manifest: Manifest,
    planned: list[Planned],
    options: Options,
    progress: Callable[[str], None],
    lock_timeout: float,
) -> tuple[Result, Result | None]:
    """Check out every new pin that has a checkout; on a failure, put every one back.

    Returns the checkout's result and, when it failed, the result of putting them back.
    """

    present = [item for item in planned if item.head is not None]
    result = run_checkout(manifest, tuple(item.moved_dep for item in present), runner, options,
                          progress, lock_timeout)  # fmt: skip
    if not result.failures:
        return result, None
    back = tuple(_where_it_was(item) for item in present)
    undo = dataclasses.replace(options, offline=True, force=False, jobs=1)
    restored = run_checkout(manifest, back, runner, undo, progress, lock_timeout)
    return result, restored


def _where_it_was(item: Planned) -> Dep:
    """The dependency as it was: its old pin (with its patches) when it was synced there,
    else exactly the commit its HEAD was at."""
    if item.synced or item.head is None:
        return item.move.dep
    return dataclasses.replace(item.move.dep, commit=item.head, patches=None)


def message(moved: list[Move]) -> str:
    """The commit message of a bump --all: one line, then each move with its short log."""
    names = ", ".join(move.dep.name for move in moved)
    plural = "dependency" if len(moved) == 1 else "dependencies"
    body = []
    for move in moved:
        body.append(move.headline())
        body.extend(f"  {line}" for line in move.details())
        body.append("")
    return f"Bump {len(moved)} {plural}: {names}\n\n" + "\n".join(body)

