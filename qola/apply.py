"""Carry out a plan with git: clone, fetch, protect local work, check out, update submodules."""

from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass, field
from glob import escape as glob_escape
from pathlib import Path

from qola import gitfiles, recovery
from qola.errors import GitError, RefusedError
from qola.git import Runner, command_error
from qola.manifest import Dep
from qola.observe import LocalWork, has_commit, observe_local_work
from qola.plan import Plan

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
PIN_REF = "refs/qola/pin"  # the commit qola checked out last: not someone's unsaved work
BACKUP_PREFIX = "refs/qola/backup"
# What the fallback fetch takes when a server refuses to send a commit by SHA.
_BROAD = ("+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*")


@dataclass(frozen=True)
class Options:
    offline: bool = False
    force: bool = False


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
    if plan.clone:
        _clone(plan, runner, options, outcome)
        return outcome
    state = plan.state
    dep = state.dep
    work = observe_local_work(runner, state, list(plan.moving_submodules), plan.move_head)
    if work:
        if not options.force:
            raise refusal(dep, work)
        outcome.notes.extend(_back_up(runner, plan, work))
    recovery.begin(state.worktree)  # from here on a kill leaves a move to finish (recovery.py)
    # git itself never gets --force: --force's saved work has been reset above, and
    # anything else in the way (an untracked file the pin adds) makes git refuse.
    if plan.move_head:
        _ensure_commit(runner, state.worktree, dep, options, outcome)
        _run(runner, state.worktree, dep, "checkout", "-q", "--detach", dep.commit)
        # Only now: a failed checkout must not make the old pin look like unsaved work.
        _run(runner, state.worktree, dep, "update-ref", "--no-deref", PIN_REF, dep.commit)
        outcome.actions.append(f"checked out {dep.commit[:12]}")
    if plan.update_submodules:
        _update_submodules(runner, state.worktree, dep)
        outcome.actions.append("updated nested submodules")
    recovery.end(state.worktree)
    return outcome


def _run(runner: Runner, cwd: Path, dep: Dep, *args: str) -> str:
    return runner.run(cwd, *args, subject=dep.name).stdout


def _clone(plan: Plan, runner: Runner, options: Options, outcome: Outcome) -> None:
    """Clone into a temporary sibling, then rename: a killed clone leaves no half-repo."""
    dep = plan.state.dep
    target = plan.state.worktree
    if options.offline:
        raise GitError(
            dep.name,
            f"{dep.path} is not checked out and --offline forbids fetching {dep.commit}",
            "run once without --offline, or point QOLA_SOURCE_DIR_"
            f"{dep.name.upper()} at a local copy",
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned_clones(target)
    temp = target.parent / f".{target.name}.qola-clone-{os.getpid()}"
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir()
    try:
        _run(runner, temp, dep, "init", "-q")
        _run(runner, temp, dep, "remote", "add", "--end-of-options", "origin", dep.url)
        _fetch(runner, temp, dep, shallow=True, outcome=outcome)
        _run(runner, temp, dep, "checkout", "-q", "--detach", dep.commit)
        _run(runner, temp, dep, "update-ref", "--no-deref", PIN_REF, dep.commit)
        if dep.submodules:
            _update_submodules(runner, temp, dep)
        if target.exists():
            target.rmdir()  # an empty folder, e.g. an uninitialised submodule of the root
        os.replace(temp, target)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    outcome.actions.append(f"cloned {dep.url} at {dep.commit[:12]}")


def _remove_abandoned_clones(target: Path) -> None:
    """Remove temporary clones whose run has died (killed mid-clone): the next run redoes them."""
    for leftover in target.parent.glob(f".{glob_escape(target.name)}.qola-clone*"):
        pid = leftover.name.rsplit("-", 1)[-1]
        if pid.isdigit() and _is_alive(int(pid)):
            continue
        shutil.rmtree(leftover, ignore_errors=True)


def _is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _ensure_commit(
    runner: Runner, worktree: Path, dep: Dep, options: Options, outcome: Outcome
) -> None:
    if has_commit(runner, worktree, dep.commit):
        outcome.notes.append(f"{dep.commit[:12]} is present locally: no fetch")
        return
    if options.offline:
        raise GitError(
            dep.name,
            f"commit {dep.commit} is not present locally and --offline forbids fetching it",
            "run once without --offline",
        )
    gitdir = gitfiles.git_dir(worktree)
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


def _update_submodules(runner: Runner, worktree: Path, dep: Dep) -> None:
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
        f"{BACKUP_PREFIX}/{dep.name}/ and go on",
    )


def _back_up(runner: Runner, plan: Plan, work: LocalWork) -> list[str]:
    """Save the work that moving would lose under refs/qola/backup/, then clear it for git."""
    dep = plan.state.dep
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    notes = []
    nested = [s.path for top in plan.state.submodules or () for s in top.walk() if s.head]
    moving = [sub for sub in nested if plan.move_head or _overlaps_any(sub, plan.moving_submodules)]
    repos = [("", plan.state.worktree)] if plan.move_head else []
    repos += [(sub, plan.state.worktree / sub) for sub in moving]
    for sub, tree in repos:
        if gitfiles.git_dir(tree) is None:
            continue
        ref = f"{BACKUP_PREFIX}/{dep.name}/{sub + '/' if sub else ''}{stamp}"
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
            runner.run(tree, "update-ref", ref, saved, subject=dep.name)
            # Saved: now the tracked changes may go, so that git can move the tree.
            runner.run(tree, "reset", "-q", "--hard", subject=dep.name)
            notes.append(
                f"saved uncommitted changes of {label} as {ref}; "
                f"restore with: git -C {tree} stash apply {ref}"
            )
        elif head and any(item.startswith(label + ": ") for item in work.unsaved):
            runner.run(tree, "update-ref", ref, head, subject=dep.name)
            notes.append(
                f"saved the commits of {label} as {ref}; "
                f"restore with: git -C {tree} switch -c rescued {ref}"
            )
    return notes


def _overlaps_any(path: str, others: tuple[str, ...]) -> bool:
    return any(path == o or path.startswith(o + "/") or o.startswith(path + "/") for o in others)
