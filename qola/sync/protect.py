"""Protect local work before a move: the refusal that names it, and --force's save.

What a move would lose is found by qola/sync/observe.py (modified files, commits only the
user has) and qola/sync/ignored.py (ignored files in a checkout's way). Without --force the move
stops with exit 4, every item listed with the commands that save it, nothing changed;
with it, each repository's work is saved under refs/qola/backup/<name>/... (a stash
commit, or the commits themselves) and then cleared so that git can move the tree.
"""

from __future__ import annotations

from pathlib import Path

from qola.base import hints, safetext
from qola.base.errors import RefusedError
from qola.base.plural import count
from qola.base.shas import is_full_sha
from qola.gitrun.git import Runner
from qola.gitrun.queries import head_sha
from qola.manifest import Dep
from qola.repo import gitfiles, store
from qola.sync import ignored
from qola.sync.complete import SHOWN
from qola.sync.local_work import LocalWork
from qola.sync.plan import Plan
from qola.sync.refs import save, save_then_reset


def refusal(dep: Dep, work: LocalWork) -> RefusedError:
    """Exit 4: what would be lost, and the commands that save it."""
    lines = [f"moving {dep.path} to {dep.commit[:12]} would lose local work:"]
    lines += [f"  uncommitted: {item}" for item in work.dirty]
    lines += _unsaved_lines(work)
    if work.unasked and work.unsaved:
        lines.append(f"  ({work.unasked}: they count as local work)")
    lines += ignored.lines(work.ways)
    lines.append("nothing was changed; to keep that work, save it first:")
    for label, tree in work.dirty_trees.items():
        where, shown = safetext.shell_word(str(tree)), safetext.line(label)
        if label in work.no_index:
            # stash works from the index: without one it would see every file as new.
            lines.append(f"  git -C {where} reset -q  # {shown} has no index: one from HEAD, "
                         "the files left as they are")  # fmt: skip
        for flag, paths in work.hidden.get(label, {}).items():
            files = " ".join(safetext.shell_word(path) for path in paths)
            lines.append(f"  git -C {where} update-index --no-{flag} -- {files}"
                         "  # stash sees them only then")  # fmt: skip
        untracked = " -u" if label in work.untracked else ""
        lines.append(
            f"  git -C {where} stash push{untracked} -m 'before qola'  # the changes in {shown}"
        )
    lines += ignored.save_commands(work.ways)
    newest: dict[str, tuple[Path, str]] = {}
    for label, tree, sha in work.commits:
        newest.setdefault(label, (tree, sha))  # git log lists HEAD, the newest, first
    for label, (tree, sha) in newest.items():
        where, label = safetext.shell_word(str(tree)), safetext.line(label)
        lines.append(f"  git -C {where} branch keep-{sha[:7]} {sha}  # the commits in {label}")
    if work.commits:  # commits to build with: what `develop` and `freeze` are for
        develop, freeze = (hints.qola_command(what, dep.name) for what in ("develop", "freeze"))
        lines.append(f"or build with it instead of the pin: `{develop}` leaves {dep.path} as "
                     f"it is until `qola develop --end {dep.name}`; `{freeze}` pins the "
                     "commit checked out")  # fmt: skip
    backups = store.backup_prefix(dep.name)
    hint = hints.either(
        f"then run qola again; or run it with --force to save all of it under {backups} "
        "and go on",
        f"then configure again; or let qola save all of it under {backups} and go on, "
        "once:\n    ",
        hints.rerun("--force"),
        "\nor on every configure: ",
        hints.configure("-DQOLA_FORCE=ON"),
        " (it stays in the cache until set OFF)",
    )
    return RefusedError(dep.name, "\n".join(lines), hint)


def _unsaved_lines(work: LocalWork) -> list[str]:
    """One line per commit only this checkout has, the newest SHOWN of each repository;
    the rest counted (one `git branch` below keeps them all)."""
    lines: list[str] = []
    listed: dict[str, int] = {}
    more: dict[str, int] = {}
    for (label, _, _), item in zip(work.commits, work.unsaved, strict=True):
        if listed.get(label, 0) < SHOWN:
            lines.append(f"  commit on no branch: {item}")
            listed[label] = listed.get(label, 0) + 1
        else:
            more[label] = more.get(label, 0) + 1
    lines += [f"  and {count(n, 'more commit')} on no branch in {label}"
              for label, n in more.items()]  # fmt: skip
    return lines


def back_up(runner: Runner, plan: Plan, work: LocalWork) -> list[str]:
    """Save the work that moving would lose under refs/qola/backup/, then clear it for git
    (refs.save_then_reset: every one saved before any is reset, the deepest first)."""
    dep = plan.state.dep
    nested = [s.path for top in plan.state.submodules or () for s in top.walk() if s.head]
    moving = [sub for sub in nested if plan.move_head or _overlaps_any(sub, plan.moving_submodules)]
    repos = [("", plan.state.worktree)] if plan.move_head else []
    repos += [(sub, plan.state.worktree / sub) for sub in moving]
    repos = [(sub, tree) for sub, tree in repos if gitfiles.git_dir(tree) is not None]

    def save_one(sub: str, tree: Path) -> tuple[list[str], bool]:
        ref = store.backup_ref(dep.name, sub)
        label = f"{dep.path}/{sub}" if sub else dep.path
        if label in work.no_index:
            # stash works from the index: first one made from HEAD, the files left alone.
            runner.run(tree, "reset", "-q", subject=dep.name)
        for flag, paths in work.hidden.get(label, {}).items():
            # Flagged files are invisible to stash, and reset --hard writes over them. (One
            # flag a call: git applies only one of --no-assume-unchanged --no-skip-worktree.)
            runner.run(tree, "update-index", f"--no-{flag}", "--", *paths, subject=dep.name)
        stash = runner.run(tree, "stash", "create", check=False)
        saved = stash.stdout.strip()
        # An error says something (a merge in progress: "needs merge"). Silence with no
        # commit means nothing to save; nothing is reset then, and git (never forced)
        # refuses to move over anything left.
        if stash.stderr.strip() or (saved and not is_full_sha(saved)):
            raise RefusedError(
                dep.name,
                f"cannot save the uncommitted changes of {label} "
                f"(git stash create: {(stash.stderr or stash.stdout).strip()}); nothing was moved",
                f"resolve it by hand in {tree}",
            )
        head = head_sha(runner, tree)
        if saved:
            save(runner, tree, ref, saved, dep.name)
            return [
                f"saved uncommitted changes of {label} as {ref}; "
                f"restore with: git -C {safetext.shell_word(str(tree))} stash apply {ref}"
            ], True
        if head and any(item.startswith(label + ": ") for item in work.unsaved):
            save(runner, tree, ref, head, dep.name)
            return [
                f"saved the commits of {label} as {ref}; "
                f"restore with: git -C {safetext.shell_word(str(tree))} switch -c rescued {ref}"
            ], False
        return [], False

    return save_then_reset(runner, repos, dep.name, save_one)


def _overlaps_any(path: str, others: tuple[str, ...]) -> bool:
    return any(path == o or path.startswith(o + "/") or o.startswith(path + "/") for o in others)


def clear_ways(runner: Runner, dep: Dep, found: list[ignored.Way], force: bool) -> list[str]:
    """Refuse (exit 4) over ignored files in a checkout's way; with force keep them, then
    clear them, and say so (the notes returned)."""
    if not found:
        return []
    if not force:
        raise refusal(dep, LocalWork(ways=found))
    return ignored.keep_and_clear(runner, found, dep.name)
