"""Patch series put in place during a checkout: the dependency's own on top of its pin,
each nested submodule's on top of its gitlink, and the checks that keep a series that
cannot be applied from moving anything.

How a series becomes commits: qola/sync/patches.py; how a patch is cut by submodule:
qola/sync/patch_parts.py."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base import console
from qola.base.errors import UsageError
from qola.base.plural import count
from qola.gitrun.git import Runner
from qola.gitrun.queries import has_checkout
from qola.manifest import Dep
from qola.repo import gitfiles
from qola.sync import complete, ignored, patches
from qola.sync.observe import DepState, gitlinks, own_series, submodule_states
from qola.sync.patches import Series
from qola.sync.plan import Options
from qola.sync.protect import clear_ways
from qola.sync.refs import keep_pin

if TYPE_CHECKING:
    from qola.sync.apply import Outcome


def own(runner: Runner, state: DepState, write: bool) -> tuple[Series | None, bool]:
    """The dependency's own series, split at the nested submodules its pin records (read
    with git, and with write remembered, where observe had no record of them), and
    whether that split is known."""
    dep = state.dep
    return own_series(runner, dep, state.series, state.worktree, state.gitdir, write)


def already_patched(
    runner: Runner, worktree: Path, base: str, series: Series, head: str, subject: str
) -> patches.Applied | None:
    """The series as applied, when HEAD is exactly base plus the series; else None.
    Worked out in a scratch store: nothing is written in the repository."""
    found = patches.on_head(runner, worktree, base, head, len(series.patches))
    if found is None or [name for _, name in found] != [p.name for p in series.patches]:
        return None
    applied = patches.build(runner, worktree, base, series, subject, scratch=True)
    return applied if applied.head == head else None


def build(
    runner: Runner, worktree: Path, dep: Dep, series: Series, base: str, outcome: Outcome
) -> str:
    """The commit base + series, made (or found remembered) in the repository at worktree."""
    gitdir = gitfiles.git_dir(worktree)
    applied = patches.remembered(gitdir, series, base) if gitdir else None
    if applied is None:
        where = f" in {series.repo}" if series.repo else ""
        console.step("applying", f"{count(len(series.patches), 'patch', 'patches')}{where}")
        applied = patches.build(runner, worktree, base, series, dep.name, scratch=False)
        if gitdir is not None:
            patches.remember(gitdir, series, applied)
        applied_count = count(len(series.patches), "patch", "patches")
        outcome.notes.append(f"applied {applied_count}{where}: {applied.head[:12]}")
        outcome.did.append("patched")
    return applied.head


def refuse_nested_without_submodules(dep: Dep, series: Mapping[str, Series]) -> None:
    """Refuse, before anything is fetched or moved, nested patches git would not check out."""
    nested = [repo for repo in series if repo]
    if nested and not dep.submodules:
        raise UsageError(
            dep.name,
            f"the patch folder {dep.patches} has patches for nested submodules "
            f"({', '.join(nested)}) but submodules = false",
            "set submodules = true, or move those patches away",
        )


def check_nested(runner: Runner, state: DepState, head: str) -> None:
    """Build, in a scratch store, each nested series whose result is not known yet on the
    gitlink it will go on (where that commit is here): a patch that does not apply stops
    the run before the dependency or a nested submodule moves."""
    subs = [s for top in state.submodules or () for s in top.walk()]
    if state.gitdir is None or not any(s.series and s.target is None for s in subs):
        return
    links = gitlinks(runner, state.worktree, state.gitdir, head, write_cache=False) or []
    pinned = {link.path: link.sha for link in links}
    todo = [s for s in state.submodules or () if pinned.get(s.path) == s.expected]
    while todo:
        sub = todo.pop(0)
        tree = state.worktree / sub.path
        if sub.series is not None and sub.target is None:
            if sub.head is None or not has_checkout(runner, tree, sub.expected):
                continue  # fetched later: it is built (or stops) then
            patches.build(runner, tree, sub.expected, sub.series, state.dep.name, scratch=True)
        if sub.head == sub.wanted:  # its own gitlinks stay where they are
            todo.extend(sub.children)


def patch_nested(
    runner: Runner, worktree: Path, dep: Dep, series: Mapping[str, Series], options: Options,
    outcome: Outcome,
) -> None:
    """Put each nested submodule's series on top of its gitlink (parents first): the
    patches of its folder, and the parts of the patches above it that reach into it."""
    if not dep.submodules or not (any(series) or patches.reaches(series, "", deeper=True)):
        return
    done: set[str] = set()
    while True:
        gitdir = gitfiles.git_dir(worktree)
        head = gitfiles.read_head(gitdir)[0] if gitdir else None
        # Read again after each submodule is patched: a patch may move the gitlinks below.
        links = (
            submodule_states(runner, worktree, gitdir, head, True, series, "", dep.name)
            if gitdir and head
            else None
        )
        found = {s.path: s for top in links or () for s in top.walk()}
        for repo in series:
            if repo and (found.get(repo) is None or found[repo].head is None):
                raise _not_a_submodule(dep, repo)
        todo = [(s, s.series) for s in found.values() if s.series and s.path not in done]
        if not todo:
            return
        sub, one = todo[0]
        done.add(sub.path)
        if sub.head is None:
            raise _not_a_submodule(dep, sub.path)
        tree = worktree / sub.path
        target = build(runner, tree, dep, one, sub.expected, outcome)
        if sub.head != target:
            # A patch may add a file the nested repository ignores (and the user keeps
            # something at): the same local work as in any other checkout's way.
            way = ignored.of(runner, tree, target, dep.name, f"{dep.path}/{sub.path}", sub.path)
            outcome.notes.extend(clear_ways(runner, dep, [way] if way else [], options.force))
            complete.checkout(runner, tree, target, dep.name, f"{dep.path}/{sub.path}",
                              "checkout", "-q", "--detach", target)  # fmt: skip
        keep_pin(runner, tree, target, dep.name)


def _not_a_submodule(dep: Dep, repo: str) -> UsageError:
    return UsageError(
        dep.name,
        f"{dep.patches}/{repo} holds patches, but {repo} is not a nested submodule of "
        f"{dep.path} that git checks out",
        f"name the sub-folder after the submodule's path in {dep.name}",
    )


def check_nested_folders(
    runner: Runner, worktree: Path, dep: Dep, series: Mapping[str, Series], head: str
) -> None:
    """Refuse, before a new clone lands, patch folders for paths head records no submodule
    at (the first level: deeper ones are known once their parents are fetched)."""
    nested = [repo for repo in series if repo]
    if not nested:
        return
    gitdir = gitfiles.git_dir(worktree)
    links = gitlinks(runner, worktree, gitdir, head, write_cache=False) if gitdir else None
    links = links or []
    for repo in nested:
        if not any(repo == link.path or repo.startswith(link.path + "/") for link in links):
            raise _not_a_submodule(dep, repo)
