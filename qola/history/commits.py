"""The commits between two pins, learned without writing anywhere.

Where they come from: docs/workflow.md, "The commits between two pins"."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base import safetext
from qola.base.errors import GitError, UsageError
from qola.gitrun import queries
from qola.gitrun.queries import Commit
from qola.history import scratch
from qola.manifest import Dep
from qola.repo import gitfiles

if TYPE_CHECKING:
    from qola.gitrun.git import Runner

_SHORTSTAT = re.compile(
    r"(\d+) files? changed(?:, (\d+) insertions?\(\+\))?(?:, (\d+) deletions?\(-\))?"
)


@dataclass(frozen=True)
class Span:
    """old..new: whether new descends from old, and the commits in between (newest first)."""

    new: str  # the new pin, a commit SHA
    descends: bool
    count: int = 0
    log: list[str] = field(default_factory=list)
    known: bool = True  # False: the old pin was found nowhere, so the count is unknown
    commits: list[Commit] = field(default_factory=list)  # all of them, newest first


@dataclass(frozen=True)
class Stat:
    """What `git diff --shortstat old new` counts."""

    files: int
    insertions: int
    deletions: int
    submodules: tuple[tuple[str, str, str], ...] = ()  # (path, old gitlink, new gitlink)


@dataclass(frozen=True)
class Comparison:
    """Two commits of one repository, and the commits each has that the other lacks."""

    old: str
    new: str
    added: tuple[Commit, ...]  # in new's history and not old's, newest first
    dropped: tuple[Commit, ...]  # in old's history and not new's: a move back or sideways
    known: bool  # False: old is nowhere to be found; added and dropped are then empty
    fetched: bool  # the history came from the remote, not from the dependency
    old_commit: Commit | None = None
    new_commit: Commit | None = None
    stat: Stat | None = None

    @property
    def descends(self) -> bool:
        """True when new is old or comes after it (nothing of old's is dropped)."""
        return self.known and not self.dropped


def learn(
    runner: Runner,
    dep: Dep,
    worktree: Path,
    new: str,
    source: str | None,
    offline: bool,
    lines: int,
) -> Span:
    """old (dep.commit) .. new; source: the remote ref new was read from (None: a SHA)."""
    if offline:
        return _read(runner, dep, worktree, new, lines)
    with scratch.scratch(runner, dep.name, dep.url) as repo:
        want = source or new
        repo.history(want, _local_time(runner, worktree, dep.commit))
        if not repo.has(new):
            # The branch moved since it was read; the commit read is still the new pin.
            repo.fetch(new, "--depth=1", required=True)
        if not repo.reaches(dep.commit, new):
            repo.deepen(want, required=False)
        if not repo.has(dep.commit):
            repo.fetch(dep.commit, "--depth=1")
        return _span(runner, dep, repo.path, new, lines)


def compare(
    runner: Runner,
    subject: str,
    url: str,
    old: str,
    new: str,
    local: Path | None,
    want: str | None = None,
    stat: bool = False,
) -> Comparison:
    """old against new: read from local (the dependency's work tree) when it can answer,
    else learned from url. want: the remote ref new was read from (default: new itself).
    stat: also `git diff --shortstat` (which needs the trees and the changed blobs)."""
    if local is not None and _answers(runner, local, old, new, stat):
        return _comparison(runner, local, old, new, stat, fetched=False)
    with scratch.scratch(runner, subject, url) as repo:
        want = want or new
        repo.history(want, _local_time(runner, local, old) or repo.time(old))
        if not repo.has(new):
            repo.fetch(new, "--depth=1", required=True)  # the branch moved since it was read
        if not repo.reaches(old, new) or repo.cut_between(old, new):
            repo.deepen(want)
            if not repo.reaches(old, new):
                # Back or sideways (or old is not upstream at all): old's own history too.
                repo.deepen(old, required=False)
        return _comparison(runner, repo.path, old, new, stat, fetched=True)


def _answers(runner: Runner, worktree: Path, old: str, new: str, stat: bool) -> bool:
    """True when the dependency's repository holds both commits and the history between
    (and, for stat, their files: in a partial clone git would fetch them into it)."""
    gitdir = gitfiles.git_dir(worktree)
    if gitdir is None:
        return False
    if stat and any((gitfiles.common_dir(gitdir) / "objects" / "pack").glob("*.promisor")):
        return False
    if not all(queries.has_commit(runner, worktree, sha) for sha in (old, new)):
        return False
    if not gitfiles.is_shallow(gitdir):
        return True
    # A shallow repository answers a forward move whose history it holds whole.
    return queries.is_ancestor(runner, worktree, old, new) and not scratch.is_cut(
        runner, worktree, old, new
    )


def _comparison(
    runner: Runner, repo: Path, old: str, new: str, stat: bool, fetched: bool
) -> Comparison:
    new_commit = queries.commit(runner, repo, new)
    if not queries.has_commit(runner, repo, old):
        return Comparison(old, new, (), (), False, fetched, None, new_commit)
    added = tuple(queries.commits(runner, repo, new, old)) if old != new else ()
    dropped = tuple(queries.commits(runner, repo, old, new)) if old != new else ()
    found = _shortstat(runner, repo, old, new) if stat and old != new else None
    return Comparison(old, new, added, dropped, True, fetched, queries.commit(runner, repo, old),
                      new_commit, found)  # fmt: skip


def _shortstat(runner: Runner, repo: Path, old: str, new: str) -> Stat:
    """Files changed and lines added and removed (in a scratch repository git fetches the
    trees and the changed blobs it needs, lazily, from the remote)."""
    out = runner.run(repo, "diff", "--shortstat", "--no-renames", "--end-of-options", old, new,
                     network=True)  # fmt: skip
    found = _SHORTSTAT.search(out.stdout)
    files, insertions, deletions = (int(g or 0) for g in found.groups()) if found else (0, 0, 0)
    return Stat(files, insertions, deletions, _gitlink_moves(runner, repo, old, new))


def _gitlink_moves(
    runner: Runner, repo: Path, old: str, new: str
) -> tuple[tuple[str, str, str], ...]:
    """The nested submodules whose recorded commit differs between the two (trees only)."""
    out = runner.run(repo, "diff-tree", "-r", "-z", "--no-renames", "--end-of-options", old, new,
                     network=True)  # fmt: skip
    fields = out.stdout.split("\0")
    moves = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        parts = meta.lstrip(":").split()
        if len(parts) == 5 and "160000" in parts[:2]:
            moves.append((path, parts[2], parts[3]))
    return tuple(moves)


def _read(runner: Runner, dep: Dep, worktree: Path, new: str, lines: int) -> Span:
    for sha in (new, dep.commit):
        if gitfiles.git_dir(worktree) is None or not queries.has_commit(runner, worktree, sha):
            raise GitError(
                dep.name,
                f"commit {sha} is not present locally and --offline forbids fetching it",
                "run without --offline",
            )
    return _span(runner, dep, worktree, new, lines)


def _span(runner: Runner, dep: Dep, repo: Path, new: str, lines: int) -> Span:
    peeled = queries.commit_sha(runner, repo, new)
    if peeled is None:
        raise UsageError(dep.name, f"{new} is not a commit; nothing was changed")
    new = peeled
    old = dep.commit
    if old == new:
        return Span(new, True)
    if not queries.has_commit(runner, repo, old):
        return Span(new, False, known=False)
    commits = queries.commits(runner, repo, new, old, subject=dep.name)
    log = [f"{c.sha[:7]} {safetext.line(c.subject)}" for c in commits]  # for logs and messages
    descends = queries.is_ancestor(runner, repo, old, new)
    return Span(new, descends, len(log), log[:lines], commits=commits)


def _local_time(runner: Runner, worktree: Path | None, sha: str) -> int | None:
    """The commit's date, when the dependency's checkout has the commit."""
    if worktree is None or gitfiles.git_dir(worktree) is None:
        return None
    if not queries.has_commit(runner, worktree, sha):
        return None
    return queries.commit_time(runner, worktree, sha)
