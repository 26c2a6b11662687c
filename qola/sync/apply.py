"""Carry out a plan with git: clone, fetch, protect local work, check out, update submodules."""

from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path

from qola.base import console, hints, names
from qola.base.errors import GitError
from qola.base.plural import count
from qola.gitrun.git import Runner
from qola.gitrun.queries import has_checkout
from qola.manifest import Dep
from qola.repo import gitfiles, store
from qola.sync import (
    complete,
    fetch,
    ignored,
    mirrors,
    nested,
    patches,
    patching,
    recovery,
    submodules,
    tag_objects,
)
from qola.sync.local_work import observe_local_work, without_upstream_commits
from qola.sync.observe import DepState, own_series
from qola.sync.plan import Options, Plan
from qola.sync.protect import back_up, clear_ways
from qola.sync.protect import refusal as refusal  # batch.py and others import it from here
from qola.sync.refs import keep_pin

# Creating a clone's parent folders and removing them after a failed clone take turns
# (--jobs threads): a failed clone never removes the folder another clone is starting in.
_FOLDERS = threading.Lock()


@dataclass
class Outcome:
    """What apply did to one dependency, for the summary and for -v."""

    dep: Dep
    actions: list[str] = field(default_factory=list)  # for people: "cloned URL at SHA"
    notes: list[str] = field(default_factory=list)  # for -v, but what says "saved"
    shown: list[str] = field(default_factory=list)  # notes said without -v too
    # For machines (checkout --format json): cloned, fetched, moved, patched, initialised,
    # updated-submodules; in the order they happened.
    did: list[str] = field(default_factory=list)
    nested: int = 0  # nested submodules brought to their gitlinks


def apply(plan: Plan, runner: Runner, options: Options) -> Outcome:
    """Bring one dependency to its pin; raise a QolaError when that cannot be done safely."""
    outcome = Outcome(plan.state.dep)
    if plan.is_noop:
        return outcome
    patching.refuse_nested_without_submodules(plan.state.dep, plan.state.series)
    if plan.clone:
        _clone(plan, runner, options, outcome)
        return outcome
    state = plan.state
    dep = state.dep
    move_head = plan.move_head
    target = state.wanted
    found = None
    own, known = patching.own(runner, state, write=False)  # a refusal below writes nothing
    if own is not None and known and target is None and state.head is not None:
        # The series' result is not remembered here. HEAD may be it all the same (qola's
        # memory lost): worked out in a scratch store, so a refusal below writes nothing.
        found = patching.already_patched(runner, state.worktree, dep.commit, own, state.head,
                                         dep.name)  # fmt: skip
        target = found.head if found else None
        move_head = found is None
    work = observe_local_work(runner, state, list(plan.moving_submodules), move_head)
    if work.unsaved and not options.offline:
        upstream = without_upstream_commits(runner, state, work)
        if upstream is not None:
            outcome.shown.append(upstream)
    if move_head and target is not None and has_checkout(runner, state.worktree, target):
        # Known before anything is fetched: named with the rest of the local work.
        work.ways += _own_way(runner, state, target)
    if work and not options.force:
        raise refusal(dep, work)
    early = move_head and bool(work.dirty or work.unsaved)
    if move_head:
        _check_offline(runner, state.worktree, dep, options)  # before anything is written
        if early:
            # --force saves and resets that work below: the pin first, so that a pin
            # refused once it is here (a tag object) has reset nothing.
            _ensure_commit(runner, state.worktree, dep, options, outcome)
        tag_objects.refuse(runner, state.worktree, dep)  # a pin that names no commit
    # From here on a kill leaves a move to finish (recovery.py): recorded before --force's
    # save and reset, the first step that can leave git state behind.
    recovery.begin(state.worktree, state.head, target if move_head else state.head)
    if work.dirty or work.unsaved:
        outcome.notes.extend(back_up(runner, plan, work))
    if found is not None and own is not None and state.gitdir is not None:
        patches.remember(state.gitdir, own, found)
    # git itself never gets --force: --force's saved work has been reset above, and
    # anything else in the way (an untracked file the pin adds) makes git refuse.
    # The exception is a repository with no index in which nothing differs from HEAD
    # but missing files (its first checkout never finished): git without -f would
    # keep its "deleted" files.
    if move_head:
        if not early:
            _ensure_commit(runner, state.worktree, dep, options, outcome)
            tag_objects.refuse(runner, state.worktree, dep)  # before HEAD or the files move
        # The pin's gitlinks, which the split needs, are here now: remembered for the no-op.
        own, was_known = patching.own(runner, state, write=True)
        if not known:
            known, target = was_known, None
        if target is None:
            target = (
                patching.build(runner, state.worktree, dep, own, dep.commit, outcome)
                if own is not None
                else dep.commit
            )
            recovery.begin(state.worktree, state.head, target)  # now known: where HEAD goes
        patching.check_nested(runner, state, target)
        ctx = _nested_context(runner, dep, options)
        nested_ways = nested.ways(ctx, state.worktree, target, _url(runner, state.worktree, dep))
        _clear_ways(runner, dep, [*_own_way(runner, state, target), *nested_ways], options,
                    outcome)  # fmt: skip
        # Still without an index (--force gave one to a half-made tree it saved work
        # of): nothing in it differs from HEAD but missing files (observe_local_work).
        half_made = state.gitdir is not None and not gitfiles.has_index(state.gitdir)
        forced = ("-f",) if half_made else ()
        if half_made:
            outcome.notes.append(f"{dep.path} never finished its first checkout: finishing it")
        console.step("checking out", target[:12])
        complete.checkout(runner, state.worktree, target, dep.name, dep.path, *complete.PARALLEL,
                          "checkout", "-q", *forced, "--detach", target, progress=True)  # fmt: skip
        # Only now: a failed checkout must not make the old pin look like unsaved work.
        keep_pin(runner, state.worktree, target, dep.name)
        # The line it ends names the pin already (`lib 3rdparty/lib d32b0cb62ecc ...`).
        patched = f" + {count(len(own.patches), 'patch', 'patches')}" if own else ""
        outcome.actions.append(f"checked out{patched}")
        outcome.did.append("moved")
    if plan.initialise:
        _initialise_in_root(runner, state.worktree, dep, outcome)
    if plan.update_submodules:
        head = target if move_head and target else state.head
        if head is not None and not move_head:
            patching.check_nested(runner, state, head)
        if head is not None:
            _nested_at(runner, state, head, move_head, options, outcome)
    if plan.update_submodules or move_head:
        patching.patch_nested(runner, state.worktree, dep, state.series, options, outcome)
    recovery.end(state.worktree)
    return outcome


def _nested_at(
    runner: Runner, state: DepState, head: str, moved: bool, options: Options, outcome: Outcome
) -> None:
    """Bring the nested submodules to head's gitlinks (moved: the dependency has just been
    checked out at head, having looked at what is in their way already)."""
    dep = state.dep
    # Which nested submodules are where they belong, patches included, is known for
    # HEAD's gitlinks: after a move the new commit's gitlinks decide.
    at_target = frozenset(
        s.path for top in state.submodules or () for s in top.walk()
        if s.at_target and not s.half_made and not moved
    )  # fmt: skip
    ctx = _nested_context(runner, dep, options, at_target)
    if not moved:
        in_way = nested.ways(ctx, state.worktree, head, _url(runner, state.worktree, dep))
        _clear_ways(runner, dep, in_way, options, outcome)
    _update_nested(runner, state.worktree, dep, head, outcome, ctx)


def _own_way(runner: Runner, state: DepState, target: str) -> list[ignored.Way]:
    """The ignored files in the way of the dependency's own checkout of target."""
    found = ignored.of(runner, state.worktree, target, state.dep.name, state.dep.path)
    return [found] if found is not None else []


def _clear_ways(
    runner: Runner, dep: Dep, found: list[ignored.Way], options: Options, outcome: Outcome
) -> None:
    """Refuse (exit 4) over ignored files in a checkout's way; --force keeps, then clears."""
    outcome.notes.extend(clear_ways(runner, dep, found, options.force))


def _url(runner: Runner, worktree: Path, dep: Dep) -> str:
    """Where the dependency comes from, which relative nested URLs resolve against: the
    manifest's URL, never the remote.origin.url of the dependency's own config (which
    would choose where the nested fetches go)."""
    return dep.url


def _run(runner: Runner, cwd: Path, dep: Dep, *args: str, progress: bool = False) -> str:
    return runner.run(cwd, *args, subject=dep.name, progress=progress).stdout


def _clone(plan: Plan, runner: Runner, options: Options, outcome: Outcome) -> None:
    """Clone into a temporary sibling, then rename: a killed clone leaves no half-repo.

    A submodule of the root keeps its repository where git keeps it, under the root's
    git dir in modules/<name>: an existing one is reused (fetched into, never cloned
    again), a new one is made whole there before anything is fetched into it, so
    what a failed or killed clone fetched is kept for the next run. Nested
    submodules are brought in after the rename, in place (nested.py).
    """
    target = plan.state.worktree
    gitdir = _root_modules_dir(runner, plan)
    reuse = gitdir is not None and submodules.is_valid_gitdir(gitdir)
    created = [folder for folder in (target, *target.parents) if not folder.exists()]
    try:
        _clone_into(plan, runner, options, outcome, gitdir, reuse)
    except BaseException:
        _remove_empty(created)  # a failed first clone leaves no empty 3rdparty/ behind
        raise


def _clone_into(plan: Plan, runner: Runner, options: Options, outcome: Outcome,
                gitdir: Path | None, reuse: bool) -> None:  # fmt: skip
    """_clone's steps, any failure of which removes the folders it made."""
    dep = plan.state.dep
    target = plan.state.worktree
    if reuse:
        # Its core.worktree names the folder, and git reads nothing of a repository whose
        # work tree it cannot enter (`cannot chdir`: the folder deleted): made first, empty.
        target.mkdir(parents=True, exist_ok=True)
    present = reuse and gitdir is not None and has_checkout(runner, gitdir, dep.commit)
    if options.offline and options.cache is None and not present:
        raise GitError(
            dep.name,
            f"{dep.path} is not checked out and --offline forbids fetching {dep.commit}",
            hints.either(
                f"run once without --offline, or point {names.override_variable(dep.name)} "
                "at a local copy",
                "configure once with the network: ",
                hints.configure("-DQOLA_OFFLINE=OFF"),
                "; or use a copy you have: ",
                hints.configure(f"-D{names.override_variable(dep.name)}=/path/to/it"),
            ),
        )
    if gitdir is not None and not reuse:
        submodules.refuse_unusable(gitdir, dep.name)
    mirror = None
    if options.cache is not None and not present:
        mirror, how = mirrors.ensure(runner, options.cache, _source(dep), dep.commit,
                                     options.offline)  # fmt: skip
        if how is not None:
            outcome.notes.append(f"into the cache {mirror}: {how}")
    temp = store.temp_clone(target)
    with _FOLDERS:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_abandoned_clones(target)
        shutil.rmtree(temp, ignore_errors=True)
        temp.mkdir()
    try:
        fresh = _make_repository(runner, temp, gitdir, reuse, dep, outcome)
        _bring_pin(runner, temp, dep, fresh, present, mirror, outcome)
        tag_objects.refuse(runner, temp, dep)  # a pin that names no commit: temp goes
        head, ctx = _check_out_clone(runner, temp, plan, options, outcome)
        if gitdir is not None:
            worktree = submodules.worktree_value(target, gitdir)
            submodules.set_worktree(runner, gitdir, worktree, dep.name)
        if target.exists():
            target.rmdir()  # an empty folder, e.g. an uninitialised submodule of the root
        os.replace(temp, target)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    outcome.actions.append(f"cloned {dep.url}")
    outcome.did.insert(0, "cloned")
    if plan.initialise or dep.submodule_name is not None:
        _initialise_in_root(runner, target, dep, outcome)
    if dep.submodules:
        _update_nested(runner, target, dep, head, outcome, ctx)
    patching.patch_nested(runner, target, dep, plan.state.series, options, outcome)


def _bring_pin(
    runner: Runner,
    temp: Path,
    dep: Dep,
    fresh: bool,
    present: bool,
    mirror: Path | None,
    outcome: Outcome,
) -> None:
    """Make the pin present in the clone being made: there already (a reused repository),
    borrowed from the cache's mirror, or fetched (one commit deep into a new repository)."""
    if present:
        mirrors.share_shallow(_git_dir(temp))  # a reused git dir may borrow from a mirror
        outcome.notes.append(f"{dep.commit[:12]} is present locally: no fetch")
    elif mirror is not None and not has_checkout(runner, temp, dep.commit):
        mirrors.borrow(gitfiles.common_dir(_git_dir(temp)), mirror)
        outcome.notes.append(f"borrowed the objects of {mirror}")
    elif not has_checkout(runner, temp, dep.commit):
        shallow = fresh or gitfiles.is_shallow(_git_dir(temp))
        outcome.notes.append(_fetch(runner, temp, dep, shallow))
        outcome.did.append("fetched")


def _check_out_clone(
    runner: Runner, temp: Path, plan: Plan, options: Options, outcome: Outcome
) -> tuple[str, nested.Context]:
    """Check the pin (its patches applied) out in the clone being made, the nested
    submodules' commits fetched meanwhile; the commit checked out, and the nested
    submodules' context."""
    dep = plan.state.dep
    head = dep.commit
    # The split by nested submodule needs the pin's gitlinks: known once it is fetched.
    own, _ = own_series(runner, dep, plan.state.series, temp, _git_dir(temp), True)
    if own is not None:
        head = patching.build(runner, temp, dep, own, dep.commit, outcome)
    # The nested submodules' commits are fetched while the files are written.
    ctx = _nested_context(runner, dep, options)
    ahead = nested.prefetch(ctx, temp, head, dep.url) if dep.submodules else None
    try:
        # -f: temp is qola's own folder, and a reused repository's last checkout (its
        # index, removed) says nothing about it.
        console.step("checking out", head[:12])
        complete.checkout(runner, temp, head, dep.name, dep.path, *complete.PARALLEL,
                          "checkout", "-q", "-f", "--detach", head, progress=True)  # fmt: skip
    finally:
        if ahead is not None:
            ahead.join()
    keep_pin(runner, temp, head, dep.name)
    if dep.submodules:
        patching.check_nested_folders(runner, temp, dep, plan.state.series, head)
    return head, ctx


def _git_dir(worktree: Path) -> Path:
    gitdir = gitfiles.git_dir(worktree)
    if gitdir is None:  # pragma: no cover - qola has just made it
        raise GitError(str(worktree), "has no repository")
    return gitdir


def _make_repository(
    runner: Runner, temp: Path, gitdir: Path | None, reuse: bool, dep: Dep, outcome: Outcome
) -> bool:
    """A repository for the work tree temp; True when it is new (nothing fetched yet)."""
    if gitdir is None:
        _run(runner, temp, dep, "init", "-q")
    elif reuse:
        for lock in submodules.remove_stale_locks(gitdir):
            outcome.notes.append(f"removed {lock}, left by a git that was stopped")
        # The work tree is temp until the rename; the old index describes nothing here.
        submodules.set_worktree(runner, gitdir, None, dep.name)
        (gitdir / "index").unlink(missing_ok=True)
        submodules.write_gitfile(temp, gitdir)
        outcome.notes.append(f"reusing the repository in {gitdir}")
        return False
    else:
        submodules.create_gitdir(runner, gitdir, dep.name)
        submodules.write_gitfile(temp, gitdir)
    _run(runner, temp, dep, "remote", "add", "--end-of-options", "origin", dep.url)
    return True


def _root_modules_dir(runner: Runner, plan: Plan) -> Path | None:
    """Where git keeps the dependency's repository when it is a submodule of the root."""
    dep = plan.state.dep
    root = _root_of(plan.state.worktree, dep)
    if dep.submodule_name is None or gitfiles.git_dir(root) is None:
        return None
    return submodules.modules_dir(runner, root, dep.submodule_name, dep.name)


def _root_of(worktree: Path, dep: Dep) -> Path:
    """The root, from the dependency's work tree and its path below the root."""
    return worktree.parents[len(Path(dep.path).parts) - 1]


def _initialise_in_root(runner: Runner, worktree: Path, dep: Dep, outcome: Outcome) -> None:
    """Initialise the dependency in the root's config, as `git submodule init` would."""
    root = _root_of(worktree, dep)
    if dep.submodule_name is None or gitfiles.git_dir(root) is None:
        return
    if submodules.initialise(runner, root, dep.submodule_name, dep.url, dep.name):
        outcome.notes.append(f"initialised the submodule {dep.submodule_name} in the root's config")
        outcome.did.append("initialised")
    wrote = submodules.stop_recursive_fetch(runner, root, dep.submodule_name, dep.name)
    if wrote and "initialised" not in outcome.did:  # a tree git set up: say what changed
        outcome.notes.append(
            f"set submodule.{dep.submodule_name}.fetchRecurseSubmodules=false in the "
            "root's config: a fetch or pull in the root leaves this dependency to qola"
        )


def _nested_context(
    runner: Runner, dep: Dep, options: Options, at_target: frozenset[str] = frozenset()
) -> nested.Context:
    return nested.Context(
        runner, dep.name, dep.path, options.offline, options.cache, at_target=at_target,
        force=options.force,
    )


def _update_nested(
    runner: Runner, worktree: Path, dep: Dep, head: str, outcome: Outcome, ctx: nested.Context
) -> None:
    """Bring the nested submodules to the gitlinks head records (nested.py)."""
    try:
        nested.update(ctx, worktree, head, _url(runner, worktree, dep))
    finally:
        outcome.notes.extend(ctx.notes)
        if ctx.brought:
            outcome.nested += ctx.brought
            if "cloned" not in outcome.did:  # a clone brings its nested submodules with it
                noun = "submodule" if ctx.brought == 1 else "submodules"
                outcome.actions.append(f"updated {ctx.brought} nested {noun}")
                outcome.did.append("updated-submodules")


def _remove_empty(folders: list[Path]) -> None:
    """Remove the folders a clone created (deepest first) while they are still empty."""
    with _FOLDERS:
        for folder in folders:
            try:
                folder.rmdir()
            except FileNotFoundError:
                continue  # already gone (or never made: the clone's own folder)
            except OSError:
                return  # not empty (another dependency's clone is in it)


def _remove_abandoned_clones(target: Path) -> None:
    """Remove temporary clones whose run has died (killed mid-clone): the next run redoes them."""
    for leftover in store.abandoned_clones(target):
        shutil.rmtree(leftover, ignore_errors=True)  # refuses a link: removes nothing through one


def _ensure_commit(
    runner: Runner, worktree: Path, dep: Dep, options: Options, outcome: Outcome
) -> None:
    gitdir = gitfiles.git_dir(worktree)
    if has_checkout(runner, worktree, dep.commit):
        if gitdir is not None:
            mirrors.share_shallow(gitdir)  # (another checkout may have put it in the mirror)
        outcome.notes.append(f"{dep.commit[:12]} is present locally: no fetch")
        return
    if options.cache is not None and gitdir is not None:
        mirror = store.mirror_path(options.cache, dep.url)
        if mirrors.borrows_from(gitfiles.common_dir(gitdir), mirror):
            _, how = mirrors.ensure(runner, options.cache, _source(dep), dep.commit,
                                    options.offline)  # fmt: skip
            mirrors.share_shallow(gitdir)
            how = f" ({how})" if how else ""
            outcome.notes.append(f"{dep.commit[:12]} fetched into the cache {mirror}{how}")
            return
    _check_offline(runner, worktree, dep, options)
    shallow = gitdir is not None and gitfiles.is_shallow(gitdir)
    outcome.notes.append(_fetch(runner, worktree, dep, shallow))
    outcome.did.append("fetched")


def _check_offline(runner: Runner, worktree: Path, dep: Dep, options: Options) -> None:
    """With --offline, stop (before anything moves) when the pin would have to be fetched."""
    if not options.offline or has_checkout(runner, worktree, dep.commit):
        return
    gitdir = gitfiles.git_dir(worktree)
    if options.cache is not None and gitdir is not None:
        mirror = store.mirror_path(options.cache, dep.url)
        if mirrors.borrows_from(gitfiles.common_dir(gitdir), mirror):
            return  # the cache may have it (cache.ensure says, with its own message)
    raise GitError(
        dep.name,
        f"commit {dep.commit} is not present locally and --offline forbids fetching it",
        hints.either(
            "run once without --offline",
            "configure once with the network: ",
            hints.configure("-DQOLA_OFFLINE=OFF"),
        ),
    )


def _fetch(runner: Runner, worktree: Path, dep: Dep, shallow: bool) -> str:
    """Fetch only the pinned commit (fetching.py has the fallback); returns a note."""
    console.step("fetching", f"{dep.commit[:12]}{' (depth 1)' if shallow else ''}")
    note = fetch.fetch_commit(runner, worktree, _source(dep), dep.commit, shallow)
    if dep.is_signed and dep.tag is not None:
        note += fetch.fetch_label(runner, worktree, dep.name, dep.url, dep.tag)
    return note


def _source(dep: Dep) -> fetch.Source:
    """Where dep's pin comes from, and how its hint names the track."""
    legacy = dep.key.startswith("qola.")
    where = f"{dep.name}_track = \"…\" in [qola]" if legacy else "track = \"…\""
    return fetch.Source(dep.name, dep.url, dep.track, hint_track=where)
