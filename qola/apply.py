"""Carry out a plan with git: clone, fetch, protect local work, check out, update submodules."""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from qola import cache, gitfiles, names, patches, recovery, store
from qola.errors import GitError, RefusedError, UsageError
from qola.git import Runner, command_error
from qola.manifest import Dep
from qola.observe import (
    LocalWork,
    gitlinks,
    has_commit,
    observe_local_work,
    submodule_states,
)
from qola.patches import Series
from qola.plan import Options, Plan

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
PIN_REF = store.PIN_REF  # the commit qola checked out last: not someone's unsaved work
# Writing the files dominates a large checkout: let git use every core for it.
_PARALLEL = ("-c", "checkout.workers=0")
# Creating a clone's parent folders and removing them after a failed clone take turns
# (--jobs threads): a failed clone never removes the folder another clone is starting in.
_FOLDERS = threading.Lock()
# What the fallback fetch takes when a server refuses to send a commit by SHA.
_BROAD = ("+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*")


@dataclass
class Outcome:
    """What apply did to one dependency, for the summary and for -v."""

    dep: Dep
    actions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def apply(plan: Plan, runner: Runner, options: Options) -> Outcome:
    """Bring one dependency to its pin; raise a QolaError when that cannot be done safely."""
    outcome = Outcome(plan.state.dep)
    if plan.is_noop:
        return outcome
    _check_nested_series(plan.state.dep, plan.state.series)
    if plan.clone:
        _clone(plan, runner, options, outcome)
        return outcome
    state = plan.state
    dep = state.dep
    move_head = plan.move_head
    target = state.wanted
    found = None
    if state.patched and target is None and state.head is not None:
        # The series' result is not remembered here. HEAD may be it all the same (qola's
        # memory lost): worked out in a scratch store, so a refusal below writes nothing.
        found = _already_patched(runner, state.worktree, dep, state.series[""], state.head)
        target = found.head if found else None
        move_head = found is None
    work = observe_local_work(runner, state, list(plan.moving_submodules), move_head)
    if work and not options.force:
        raise refusal(dep, work)
    # From here on a kill leaves a move to finish (recovery.py): recorded before --force's
    # save and reset, the first step that can leave git state behind.
    recovery.begin(state.worktree, state.head, target if move_head else state.head)
    if work:
        outcome.notes.extend(_back_up(runner, plan, work))
    if found is not None and state.gitdir is not None:
        patches.remember(state.gitdir, state.series[""], found)
    # git itself never gets --force: --force's saved work has been reset above, and
    # anything else in the way (an untracked file the pin adds) makes git refuse.
    if move_head:
        _ensure_commit(runner, state.worktree, dep, options, outcome)
        if target is None:
            target = _build(runner, state.worktree, dep, state.series[""], dep.commit, outcome)
            recovery.begin(state.worktree, state.head, target)  # now known: where HEAD goes
        _run(runner, state.worktree, dep, *_PARALLEL, "checkout", "-q", "--detach", target)
        # Only now: a failed checkout must not make the old pin look like unsaved work.
        _run(runner, state.worktree, dep, "update-ref", "--no-deref", PIN_REF, target)
        outcome.actions.append(f"checked out {_label(dep.commit, state.series.get(''))}")
    if plan.update_submodules:
        _update_submodules(runner, state.worktree, dep)
        outcome.actions.append("updated nested submodules")
    if plan.update_submodules or move_head:
        _patch_nested(runner, state.worktree, dep, state.series, outcome)
    recovery.end(state.worktree)
    return outcome


def _label(commit: str, series: Series | None) -> str:
    if series is None:
        return commit[:12]
    return f"{commit[:12]} + {len(series.patches)} patch(es)"


def _build(
    runner: Runner, worktree: Path, dep: Dep, series: Series, base: str, outcome: Outcome
) -> str:
    """The commit base + series, made (or found remembered) in the repository at worktree."""
    gitdir = gitfiles.git_dir(worktree)
    applied = patches.remembered(gitdir, series, base) if gitdir else None
    if applied is None:
        applied = patches.build(runner, worktree, base, series, dep.name, scratch=False)
        if gitdir is not None:
            patches.remember(gitdir, series, applied)
        where = f" in {series.repo}" if series.repo else ""
        outcome.notes.append(f"applied {len(series.patches)} patch(es){where}: {applied.head[:12]}")
    return applied.head


def _already_patched(
    runner: Runner, worktree: Path, dep: Dep, series: Series, head: str
) -> patches.Applied | None:
    """The series as applied, when HEAD is exactly the pin plus the series; else None."""
    found = patches.on_head(runner, worktree, dep.commit, head, len(series.patches))
    if found is None or [name for _, name in found] != [p.name for p in series.patches]:
        return None
    applied = patches.build(runner, worktree, dep.commit, series, dep.name, scratch=True)
    return applied if applied.head == head else None


def _check_nested_series(dep: Dep, series: Mapping[str, Series]) -> None:
    """Refuse, before anything is fetched or moved, nested patches git would not check out."""
    nested = [repo for repo in series if repo]
    if nested and not dep.submodules:
        raise UsageError(
            dep.name,
            f"the patch folder {dep.patches} has patches for nested submodules "
            f"({', '.join(nested)}) but submodules = false",
            "set submodules = true, or move those patches away",
        )


def _patch_nested(
    runner: Runner, worktree: Path, dep: Dep, series: Mapping[str, Series], outcome: Outcome
) -> None:
    """Put each nested submodule's series on top of its gitlink (parents first)."""
    nested = [s for repo, s in series.items() if repo]
    for one in nested:
        gitdir = gitfiles.git_dir(worktree)
        head = gitfiles.read_head(gitdir)[0] if gitdir else None
        links = (
            submodule_states(runner, worktree, gitdir, head, write_cache=False)
            if gitdir and head
            else None
        )
        found = {s.path: s for top in links or () for s in top.walk()}
        sub = found.get(one.repo)
        if sub is None or sub.head is None:
            raise UsageError(
                dep.name,
                f"{dep.patches}/{one.repo} holds patches, but {one.repo} is not a "
                f"nested submodule of {dep.path} that git checks out",
                f"name the sub-folder after the submodule's path in {dep.name}",
            )
        tree = worktree / one.repo
        target = _build(runner, tree, dep, one, sub.expected, outcome)
        if sub.head != target:
            _run(runner, tree, dep, "checkout", "-q", "--detach", target)
        _run(runner, tree, dep, "update-ref", "--no-deref", PIN_REF, target)


def _run(runner: Runner, cwd: Path, dep: Dep, *args: str) -> str:
    return runner.run(cwd, *args, subject=dep.name).stdout


def _clone(plan: Plan, runner: Runner, options: Options, outcome: Outcome) -> None:
    """Clone into a temporary sibling, then rename: a killed clone leaves no half-repo."""
    dep = plan.state.dep
    target = plan.state.worktree
    if options.offline and options.cache is None:
        raise GitError(
            dep.name,
            f"{dep.path} is not checked out and --offline forbids fetching {dep.commit}",
            f"run once without --offline, or point {names.override_variable(dep.name)} "
            "at a local copy",
        )
    mirror = None
    if options.cache is not None:
        mirror = cache.ensure(runner, options.cache, dep, options.offline)
    created = [folder for folder in target.parents if not folder.exists()]
    temp = store.temp_clone(target)
    with _FOLDERS:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_abandoned_clones(target)
        shutil.rmtree(temp, ignore_errors=True)
        temp.mkdir()
    try:
        _run(runner, temp, dep, "init", "-q")
        _run(runner, temp, dep, "remote", "add", "--end-of-options", "origin", dep.url)
        if mirror is not None:
            cache.borrow(temp / ".git", mirror)
            outcome.notes.append(f"borrowed the objects of {mirror}")
        else:
            _fetch(runner, temp, dep, shallow=True, outcome=outcome)
        head = dep.commit
        if "" in plan.state.series:
            head = _build(runner, temp, dep, plan.state.series[""], dep.commit, outcome)
        _run(runner, temp, dep, *_PARALLEL, "checkout", "-q", "--detach", head)
        _run(runner, temp, dep, "update-ref", "--no-deref", PIN_REF, head)
        if dep.submodules:
            _update_submodules(runner, temp, dep, fresh_at=head)
        _patch_nested(runner, temp, dep, plan.state.series, outcome)
        if target.exists():
            target.rmdir()  # an empty folder, e.g. an uninitialised submodule of the root
        os.replace(temp, target)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        _remove_empty(created)  # a failed first clone leaves no empty 3rdparty/ behind
        raise
    outcome.actions.append(f"cloned {dep.url} at {dep.commit[:12]}")


def _remove_empty(folders: list[Path]) -> None:
    """Remove the folders a clone created (deepest first) while they are still empty."""
    with _FOLDERS:
        for folder in folders:
            try:
                folder.rmdir()
            except OSError:
                return  # not empty (another dependency's clone is in it), or already gone


def _remove_abandoned_clones(target: Path) -> None:
    """Remove temporary clones whose run has died (killed mid-clone): the next run redoes them."""
    for leftover in store.abandoned_clones(target):
        shutil.rmtree(leftover, ignore_errors=True)  # refuses a link: removes nothing through one


def _ensure_commit(
    runner: Runner, worktree: Path, dep: Dep, options: Options, outcome: Outcome
) -> None:
    if has_commit(runner, worktree, dep.commit):
        outcome.notes.append(f"{dep.commit[:12]} is present locally: no fetch")
        return
    gitdir = gitfiles.git_dir(worktree)
    if options.cache is not None and gitdir is not None:
        mirror = store.mirror_path(options.cache, dep.url)
        if cache.borrows_from(gitfiles.common_dir(gitdir), mirror):
            cache.ensure(runner, options.cache, dep, options.offline)
            outcome.notes.append(f"{dep.commit[:12]} fetched into the cache {mirror}")
            return
    if options.offline:
        raise GitError(
            dep.name,
            f"commit {dep.commit} is not present locally and --offline forbids fetching it",
            "run once without --offline",
        )
    _fetch(
        runner,
        worktree,
        dep,
        shallow=gitdir is not None and gitfiles.is_shallow(gitdir),
        outcome=outcome,
    )


def _fetch(runner: Runner, worktree: Path, dep: Dep, shallow: bool, outcome: Outcome) -> None:
    """Fetch only the pinned commit; fall back to all branches and tags for servers that refuse."""
    depth = ["--depth", "1"] if shallow else []
    first = runner.run(
        worktree,
        "fetch",
        "-q",
        "--no-tags",
        *depth,
        "--end-of-options",
        dep.url,
        dep.commit,
        check=False,
        network=True,
    )
    if first.status == 0:
        outcome.notes.append(f"fetched {dep.commit[:12]} by SHA{' (depth 1)' if shallow else ''}")
        return
    if first.timed_out is not None:
        # A remote that hangs would hang the fallback too: one timeout is the answer.
        shown = ["fetch", "-q", "--no-tags", *depth, "--end-of-options", dep.url, dep.commit]
        raise command_error(dep.name, shown, first)
    broad = runner.run(
        worktree,
        "fetch",
        "-q",
        "--end-of-options",
        dep.url,
        *_BROAD,
        check=False,
        network=True,
    )
    if broad.status != 0:
        raise command_error(dep.name, ["fetch", "-q", "--end-of-options", dep.url, *_BROAD], broad)
    if not has_commit(runner, worktree, dep.commit):
        raise GitError(
            dep.name,
            f"commit {dep.commit} does not exist in {dep.url}",
            f"check the pin, or move it: qola bump {dep.name} --to REF",
        )
    outcome.notes.append(
        f"the server refused to send {dep.commit[:12]} by SHA; fetched all branches and tags"
    )


def _update_submodules(
    runner: Runner, worktree: Path, dep: Dep, fresh_at: str | None = None
) -> None:
    """Sync and update the nested submodules; fresh_at: the commit a new clone is at."""
    if fresh_at is not None:
        # A new clone has no submodule initialised, so there is nothing to sync; and a
        # commit that records no submodule git would update needs no update either.
        # Both are a git process or more each, on the cold path of every dependency.
        links = gitlinks(runner, worktree, worktree / ".git", fresh_at, write_cache=False)
        if links == []:
            return
    else:
        _run(runner, worktree, dep, "submodule", "sync", "-q", "--recursive")
    # Clones nested submodules: a network command, under --fetch-timeout.
    update = ("submodule", "update", "-q", "--init", "--checkout", "--recursive")
    runner.run(worktree, *update, subject=dep.name, network=True)


def refusal(dep: Dep, work: LocalWork) -> RefusedError:
    lines = [f"moving {dep.path} to {dep.commit[:12]} would lose local work:"]
    lines += [f"  uncommitted: {item}" for item in work.dirty]
    lines += [f"  commit on no branch: {item}" for item in work.unsaved]
    lines.append("nothing was changed")
    return RefusedError(
        dep.name,
        "\n".join(lines),
        "commit or stash it, or run with --force to save it under "
        f"{store.backup_prefix(dep.name)} and go on",
    )


def _back_up(runner: Runner, plan: Plan, work: LocalWork) -> list[str]:
    """Save the work that moving would lose under refs/qola/backup/, then clear it for git."""
    dep = plan.state.dep
    notes = []
    nested = [s.path for top in plan.state.submodules or () for s in top.walk() if s.head]
    moving = [sub for sub in nested if plan.move_head or _overlaps_any(sub, plan.moving_submodules)]
    repos = [("", plan.state.worktree)] if plan.move_head else []
    repos += [(sub, plan.state.worktree / sub) for sub in moving]
    for sub, tree in repos:
        if gitfiles.git_dir(tree) is None:
            continue
        ref = store.backup_ref(dep.name, sub)
        label = f"{dep.path}/{sub}" if sub else dep.path
        stash = runner.run(tree, "stash", "create", check=False)
        saved = stash.stdout.strip()
        # An error says something (a merge in progress: "needs merge"). Silence with no
        # commit means nothing to save; nothing is reset then, and git (never forced)
        # refuses to move over anything left.
        if stash.stderr.strip() or (saved and not _SHA.match(saved)):
            raise RefusedError(
                dep.name,
                f"cannot save the uncommitted changes of {label} "
                f"(git stash create: {(stash.stderr or stash.stdout).strip()}); nothing was moved",
                f"resolve it by hand in {tree}",
            )
        head = runner.run(tree, "rev-parse", "--verify", "-q", "HEAD", check=False).stdout.strip()
        if saved:
            recovery.save(runner, tree, ref, saved, dep.name)
            # Saved: now the tracked changes may go, so that git can move the tree.
            runner.run(tree, "reset", "-q", "--hard", subject=dep.name)
            notes.append(
                f"saved uncommitted changes of {label} as {ref}; "
                f"restore with: git -C {tree} stash apply {ref}"
            )
        elif head and any(item.startswith(label + ": ") for item in work.unsaved):
            recovery.save(runner, tree, ref, head, dep.name)
            notes.append(
                f"saved the commits of {label} as {ref}; "
                f"restore with: git -C {tree} switch -c rescued {ref}"
            )
    return notes


def _overlaps_any(path: str, others: tuple[str, ...]) -> bool:
    return any(path == o or path.startswith(o + "/") or o.startswith(path + "/") for o in others)
