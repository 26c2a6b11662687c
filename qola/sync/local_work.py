"""Local work in a dependency that a move would lose: changes, untracked and hidden files,
commits only it has. Unlike observe, this runs git: for the dependencies that move."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base import safetext
from qola.base.plural import count
from qola.gitrun import flagged
from qola.repo import gitfiles

if TYPE_CHECKING:
    from qola.gitrun.git import Runner
    from qola.sync.ignored import Way
    from qola.sync.observe import DepState


@dataclass
class LocalWork:
    """Work in a dependency that moving it would lose."""

    dirty: list[str] = field(default_factory=list)  # "path: file" of modified tracked files
    unsaved: list[str] = field(default_factory=list)  # "path: sha subject" of unreachable commits
    dirty_trees: dict[str, Path] = field(default_factory=dict)  # label -> work tree, for hints
    commits: list[tuple[str, Path, str]] = field(default_factory=list)  # (label, tree, SHA)
    no_index: set[str] = field(default_factory=set)  # labels of dirty trees with no index
    untracked: set[str] = field(default_factory=set)  # labels of trees with untracked files
    # label -> files (from that repository) flagged assume-unchanged or skip-worktree and
    # edited: git stash and status see them only once the flag is cleared.
    hidden: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # label, flag, files
    ways: list[Way] = field(default_factory=list)  # ignored files in a checkout's way (ways.py)
    unasked: str = ""  # why the remote could not say whether it has the commits (refusal)

    def __bool__(self) -> bool:
        return bool(self.dirty or self.unsaved or self.ways)


def observe_local_work(
    runner: Runner, state: DepState, moving: list[str], head_moves: bool
) -> LocalWork:
    """What moving the dependency (and the nested submodules in `moving`) would lose.

    A repository with no index (half-made: a clone git or a killed run left, or the
    user's `rm .git/index`) is compared with HEAD through an index made from HEAD
    (qola/sync/unfinished.py): every file that differs from HEAD but by being missing, and
    every untracked file, is local work; so is a commit only it has.
    """
    work = LocalWork()
    nested = {s.path: s for top in state.submodules or () for s in top.walk()}
    half_made = {path for path, s in nested.items() if s.half_made}
    if state.half_made:
        changes = half_made_changes(runner, state.worktree, state.dep.name, "")
    else:
        patched = {path for path, s in nested.items() if s.patched}
        changes = _modified(runner, state.worktree, state.dep.name, "", half_made, patched)
    for sub in sorted(half_made):
        if head_moves or any(_overlaps(sub, m) for m in moving):
            changes += half_made_changes(runner, state.worktree / sub, state.dep.name, sub + "/")
    hidden = hidden_changes(runner, state.worktree, state.dep.name, set(nested) - half_made)
    for path, kind, repo in changes + hidden:
        if head_moves or any(_overlaps(path, m) for m in moving):
            work.dirty.append(f"{safetext.path(f'{state.dep.path}/{path}')} ({kind})")
            label = f"{state.dep.path}/{repo}" if repo else state.dep.path
            work.dirty_trees.setdefault(label, state.worktree / repo)
            if repo in half_made or (not repo and state.half_made):
                work.no_index.add(label)
            if kind == _UNTRACKED:
                work.untracked.add(label)
            if _HIDDEN in kind:
                flags = work.hidden.setdefault(label, {})
                flag = kind.rsplit(" ", 1)[1]
                flags.setdefault(flag, []).append(path[len(repo) + 1 if repo else 0 :])
    if head_moves and state.head is not None:
        # The pin is where HEAD goes: what it holds stays. What the root records (its
        # index or HEAD gitlink, the pin in its HEAD's manifest) excuses nothing: a commit
        # that exists only in this repository is the user's, whoever staged it.
        found = unsaved_commits(runner, state.worktree, (state.dep.commit,))
        _add_unsaved(work, found, state.worktree, state.dep.path)
    for sub in moving:
        sub_tree = state.worktree / sub
        if gitfiles.git_dir(sub_tree) is not None:
            # A half-made nested submodule at its gitlink is one qola's own population
            # left (HEAD written, killed before the index): its commit, recorded by the
            # parent's, is not the user's alone even when no ref holds it yet.
            state_of = nested.get(sub)
            kept = (state_of.expected,) if state_of is not None and state_of.half_made else ()
            label = f"{state.dep.path}/{sub}"
            _add_unsaved(work, unsaved_commits(runner, sub_tree, kept), sub_tree, label)
    return work


_UNTRACKED = "untracked"


_HIDDEN = "hidden from git status by"


def hidden_changes(
    runner: Runner, worktree: Path, subject: str, repos: set[str]
) -> list[tuple[str, str, str]]:
    """(path, kind, repository) of edited files flagged assume-unchanged or skip-worktree:
    local work git status cannot see, which `reset --hard` and a checkout write over. A
    skip-worktree file that is missing is what a sparse checkout leaves, nobody's work."""
    found = []
    for entry in flagged.flagged_files(runner, worktree, subject):
        change = flagged.file_change(worktree / entry.path, entry.mode, entry.sha)
        if change is None or change == "deleted":
            continue
        repo = max((r for r in repos if entry.path.startswith(r + "/")), key=len, default="")
        kind = f"{change}, {_HIDDEN} {entry.flag}"
        found.append((entry.path, kind, repo))
    return found


def half_made_changes(
    runner: Runner, tree: Path, subject: str, prefix: str
) -> list[tuple[str, str, str]]:
    """(path, kind, repository) of what a repository with no index holds that HEAD does
    not: modified and untracked files (a missing one is what an unfinished checkout
    leaves); nested submodules are looked at on their own."""
    from qola.sync import unfinished  # lazy: a half-made first checkout only

    found = []
    with unfinished.head_index(runner, tree, subject) as env:
        entries = status(runner, tree, subject, untracked=True, submodules=False, env=env)
    for entry in entries:
        if entry.untracked:
            found.append((prefix + entry.path, _UNTRACKED, prefix.rstrip("/")))
        elif entry.modified and not entry.missing:
            found.append((prefix + entry.path, "modified", prefix.rstrip("/")))
    return found


def _modified(
    runner: Runner, tree: Path, subject: str, prefix: str, half_made: set[str],
    patched: set[str],
) -> list[tuple[str, str, str]]:
    """(path, kind, repository) of modified tracked files below tree (paths from the
    dependency; the repository holding the change), half-made submodules left out
    (looked at on their own); patched: nested submodules that carry a patch series."""
    found = []
    for entry in status(runner, tree, subject, untracked=False):
        path = prefix + entry.path
        if not entry.modified or path in half_made:
            continue  # a nested submodule at another commit: moving it is the point
        below = half_made | patched
        if entry.is_submodule and any(h.startswith(path + "/") for h in below):
            # Its "modified content" may be only the half-made one below, or one below at
            # qola's patch commits (git counts a nested submodule's new commits as
            # modified content of its parent): look inside.
            found += _modified(runner, tree / entry.path, subject, path + "/", half_made,
                               patched)  # fmt: skip
            continue
        if entry.is_submodule:
            found.append((path, "modified content in submodule", path))
        else:
            found.append((path, "modified", prefix.rstrip("/")))
    return found


@dataclass(frozen=True)
class StatusEntry:
    """One line of `git status --porcelain=v2`: a changed path, maybe a nested submodule."""

    path: str
    is_submodule: bool = False
    modified: bool = True  # tracked changes (for a submodule: inside it)
    untracked: bool = False  # an untracked file (for a submodule: inside it)
    missing: bool = False  # a tracked file deleted from the work tree, nothing else changed


def status(
    runner: Runner,
    worktree: Path,
    subject: str,
    untracked: bool,
    submodules: bool = True,
    env: Mapping[str, str] | None = None,
) -> list[StatusEntry]:
    """Changed paths in a work tree and, recursively, its nested submodules (unless told
    not to look into them); writes nothing. env may name another index."""
    out = runner.run(
        worktree,
        "--no-optional-locks",  # a read must not refresh (rewrite) the index
        "status",
        "--porcelain=v2",
        "-z",
        f"--untracked-files={'all' if untracked else 'no'}",
        f"--ignore-submodules={'none' if submodules else 'all'}",
        subject=subject,
        env=env,
    )
    return parse_status(out.stdout)


def parse_status(text: str) -> list[StatusEntry]:
    """Entries of `status --porcelain=v2 -z` output."""
    entries = []
    records = text.split("\0")
    i = 0
    while i < len(records):
        record = records[i]
        i += 1
        if not record:
            continue
        kind = record[0]
        if kind == "?":
            entries.append(StatusEntry(record[2:], modified=False, untracked=True))
            continue
        fields = record.split(" ")
        if kind == "1" and len(fields) >= 9:
            path = record.split(" ", 8)[8]
        elif kind == "2" and len(fields) >= 10:
            path = record.split(" ", 9)[9]
            i += 1  # the original path follows in its own record
        elif kind == "u" and len(fields) >= 11:
            path = record.split(" ", 10)[10]
        else:
            continue
        sub = fields[2]
        if sub.startswith("S"):
            # A staged change of the gitlink itself (removed, added, another commit
            # staged) is a change to the tree too, not only modified content inside.
            staged = fields[1][0] != "."
            entries.append(StatusEntry(path, True, staged or sub[2] == "M", sub[3] == "U"))
        else:
            entries.append(StatusEntry(path, missing=kind == "1" and fields[1] == ".D"))
    return entries


def _overlaps(a: str, b: str) -> bool:
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _add_unsaved(
    work: LocalWork, found: list[tuple[str, str]], worktree: Path, label: str
) -> None:
    for sha, subject in found:
        work.unsaved.append(f"{label}: {sha[:7]} {subject}")
        work.commits.append((label, worktree, sha))


# How long qola waits for the remote's list of refs before it counts the commits as local
# work after all: the answer only spares a refusal, and must not hold one up for the
# whole fetch timeout on a machine off the network.
ASK_SECONDS = 20.0


def without_upstream_commits(runner: Runner, state: DepState, work: LocalWork) -> str | None:
    """Take out of work the dependency's own commits on no branch when its remote (the
    manifest's URL) advertises HEAD as the tip of one of its refs (a branch, a tag, a
    pull request's refs/pull/N/head): fetched by SHA to test an upstream pull request,
    they are the remote's, not local work. Only a ref's tip counts: a server sends any
    object it holds when asked by SHA, also one no ref keeps any more (a branch pushed and
    deleted), and `FETCH_HEAD` names a commit of one's own after `git fetch origin <sha>`
    of it. Nested submodules' commits stay local work. Returns the note that says what
    the move leaves, or None when nothing was taken out (work.unasked then says why the
    remote gave no answer, if it did not)."""
    from qola.gitrun import queries  # lazy: a move with commits on no branch only

    label, head = state.dep.path, state.head
    mine = [i for i, (where, _, _) in enumerate(work.commits) if where == label]
    if not mine or head is None or work.commits[mine[0]][2] != head:
        return None
    url = state.dep.url
    if _is_itself(url, state):
        return None
    tips = queries.advertised(runner, state.worktree, url, ASK_SECONDS)
    if tips is None:
        work.unasked = f"{safetext.line(url)} could not be asked whether it has them"
        return None
    if head not in tips:
        return None
    work.unsaved = [item for i, item in enumerate(work.unsaved) if i not in mine]
    work.commits = [item for i, item in enumerate(work.commits) if i not in mine]
    where = safetext.shell_word(str(state.worktree))
    return (
        f"{safetext.path(label)} was at {head[:12]} with {count(len(mine), 'commit')} on no "
        f"branch here, all of which {safetext.line(url)} has under a ref of its own: moving "
        f"loses none of them (`git -C {where} checkout {head[:12]}` goes back)"
    )


def _is_itself(url: str, state: DepState) -> bool:
    """A URL that is a path to the dependency's own work tree or git dir (a root whose
    .gitmodules says `./3rdparty/lib`): what it has is what is here."""
    path = url.removeprefix("file://")
    if "://" in path or not os.path.isabs(path):
        return False
    real = os.path.realpath(path)
    own = [state.worktree, *([state.gitdir] if state.gitdir is not None else [])]
    return any(real == os.path.realpath(p) for p in own)


def unsaved_commits(
    runner: Runner, worktree: Path, kept: tuple[str, ...] = ()
) -> list[tuple[str, str]]:
    """(SHA, subject) of commits on HEAD that only this repository has, and that moving
    would lose (queries.only_here); kept: the commits HEAD goes to."""
    from qola.gitrun import queries  # lazy: git runs only here, not on the no-op path

    return queries.only_here(runner, worktree, "HEAD", kept) or []
