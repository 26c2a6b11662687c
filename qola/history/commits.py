"""The commits between two pins, learned without writing anywhere.

Where they come from: docs/workflow.md, "The commits between two pins"."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base import safetext
from qola.base.errors import GitError, QolaError, UsageError
from qola.base.plural import count as counted
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
class Nested:
    """A nested submodule whose recorded commit differs between two commits of the
    repository holding it (a SHA of zeros: not there on that side)."""

    path: str
    old: str
    new: str
    count: int | None = None  # the commits between, when a checkout of it could count them

    back: int = 0  # the commits of old's history that new's lacks (counted with count)

    def line(self) -> str:
        """`submodule 3rdparty/ck: 1234567..89abcde (12 commits)`, as bump and diff say it
        (`back 2 commits` for a move backwards)."""
        said = f"submodule {self.path}: {_short(self.old)}..{_short(self.new)}"
        return said if self.count is None else f"{said} ({moved(self.count, self.back)})"


def moved(forward: int, back: int) -> str:
    """How far a move goes: `37 commits`; `back 2 commits` (a downgrade: every commit
    counted is one the old commit has and the new one lacks); `3 commits back, 1 forward`
    (sideways: the new commit is on another line of history)."""
    if not back:
        return counted(forward, "commit")
    if not forward:
        return f"back {counted(back, 'commit')}"
    return f"{counted(back, 'commit')} back, {forward} forward"


@dataclass(frozen=True)
class Span:
    """old..new: whether new descends from old, and the commits in between (newest first)."""

    new: str  # the new pin, a commit SHA
    descends: bool
    count: int | None = 0  # None: unknown (see known and cut)
    log: list[str] = field(default_factory=list)
    known: bool = True  # False: the old pin was found nowhere, so the count is unknown
    commits: list[Commit] = field(default_factory=list)  # all of them, newest first
    nested: tuple[Nested, ...] = ()  # the nested submodules the move moves
    cut: bool = False  # offline in a shallow clone: the history between is not all there
    back: int = 0  # the commits of the old pin's history that new's lacks (a move back)
    peeled: str = ""  # the commit the old pin names, where that pin is no commit (a tag's)


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
    nested: tuple[Nested, ...] | None = None  # None: the trees could not be read

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
    """old (dep.commit) .. new; source: the remote ref new was read from (None: a SHA).
    The commits are learned as `diff` and `outdated` learn them (compare), so that all
    three count what `git rev-list --count new ^old` counts in a whole history."""
    if offline:
        return _read(runner, dep, worktree, new, lines)
    local = worktree if gitfiles.git_dir(worktree) is not None else None
    # From the remote even where the checkout could answer: a new pin that is not
    # upstream (a commit made here) fails its fetch there, before anything is written.
    found = compare(runner, dep.name, dep.url, dep.commit, new, local, want=source,
                    from_remote=True)  # fmt: skip
    return _span(dep, found, lines)


def compare(
    runner: Runner,
    subject: str,
    url: str,
    old: str,
    new: str,
    local: Path | None,
    want: str | None = None,
    stat: bool = False,
    from_remote: bool = False,
) -> Comparison:
    """old against new: read from local (the dependency's work tree) when it can answer,
    else learned from url. want: the remote ref new was read from (default: new itself).
    stat: also `git diff --shortstat` (which needs the trees and the changed blobs).
    from_remote: learned from url whatever local holds (local still gives old's date)."""
    if not from_remote and local is not None and _answers(runner, local, old, new, stat):
        return _comparison(runner, local, old, new, stat, fetched=False, local=local)
    with scratch.scratch(runner, subject, url) as repo:
        want = want or new
        repo.history(want, _local_time(runner, local, old) or repo.time(old))
        if not repo.has(new):
            repo.fetch(new, "--depth=1", required=True)  # the branch moved since it was read
        # A shallow fetch back to old's date stops at every older commit: a long-lived
        # branch merged since (its first commits older than old) would be counted short.
        if not repo.reaches(old, new) or repo.cut_between(old, new):
            repo.deepen(want)
            if not repo.reaches(old, new):
                # Back or sideways (or old is not upstream at all): old's own history too.
                repo.deepen(old, required=False)
        return _comparison(runner, repo.path, old, new, stat, fetched=True, local=local)


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
    runner: Runner, repo: Path, old: str, new: str, stat: bool, fetched: bool, local: Path | None
) -> Comparison:
    new_commit = queries.commit(runner, repo, new)
    if new_commit is None or not queries.has_commit(runner, repo, old):
        return Comparison(old, new, (), (), False, fetched, None, new_commit)
    added = tuple(queries.commits(runner, repo, new, old)) if old != new else ()
    dropped = tuple(queries.commits(runner, repo, old, new)) if old != new else ()
    moves = _gitlink_moves(runner, repo, old, new, fetched) if old != new else ()
    found = _shortstat(runner, repo, old, new, moves) if stat and old != new else None
    nested = None if moves is None else tuple(_nested(runner, local, *move) for move in moves)
    return Comparison(old, new, added, dropped, True, fetched, queries.commit(runner, repo, old),
                      new_commit, found, nested)  # fmt: skip


def _shortstat(
    runner: Runner, repo: Path, old: str, new: str, moves: tuple[tuple[str, str, str], ...] | None
) -> Stat:
    """Files changed and lines added and removed (in a scratch repository git fetches the
    trees and the changed blobs it needs, lazily, from the remote)."""
    out = runner.run(repo, "diff", "--shortstat", "--no-renames", "--end-of-options", old, new,
                     network=True)  # fmt: skip
    found = _SHORTSTAT.search(out.stdout)
    files, insertions, deletions = (int(g or 0) for g in found.groups()) if found else (0, 0, 0)
    return Stat(files, insertions, deletions, moves or ())


def _gitlink_moves(
    runner: Runner, repo: Path, old: str, new: str, fetched: bool
) -> tuple[tuple[str, str, str], ...] | None:
    """The nested submodules whose recorded commit differs between the two (trees only:
    a scratch repository fetches them lazily, the trees of each commit in one fetch; the
    dependency's own repository is read as it is). None when git could not read them."""
    out = runner.run(repo, "diff-tree", "-r", "-z", "--no-renames", "--end-of-options", old, new,
                     check=False, network=fetched)  # fmt: skip
    if out.status != 0:
        return None
    fields = out.stdout.split("\0")
    moves = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        parts = meta.lstrip(":").split()
        if len(parts) == 5 and "160000" in parts[:2]:
            moves.append((path, parts[2], parts[3]))
    return tuple(moves)


def _nested(runner: Runner, local: Path | None, path: str, old: str, new: str) -> Nested:
    """The move, with its count when the dependency's checkout of the nested submodule
    holds both commits and the whole history between (qola's own are one commit deep:
    then the move alone, rather than fetch a second repository's history)."""
    worktree = None if local is None else local / path
    if worktree is None or "0" * 40 in (old, new):
        return Nested(path, old, new)
    try:
        if _answers(runner, worktree, old, new, stat=False):
            forward = len(queries.commits(runner, worktree, new, old))
            return Nested(path, old, new, forward, len(queries.commits(runner, worktree, old, new)))
    except QolaError:  # git may not run there (its config, say): the move is still known
        pass
    return Nested(path, old, new)


def _read(runner: Runner, dep: Dep, worktree: Path, new: str, lines: int) -> Span:
    """Offline: what the dependency's own repository holds. Where its history between the
    two is cut short (a shallow clone), the count is unknown, never a short number."""
    for sha in (new, dep.commit):
        if gitfiles.git_dir(worktree) is None or not queries.has_commit(runner, worktree, sha):
            raise GitError(
                dep.name,
                f"commit {sha} is not present locally and --offline forbids fetching it",
                "run without --offline",
            )
    found = _comparison(runner, worktree, dep.commit, new, False, fetched=False, local=worktree)
    span = _span(dep, found, lines)
    if span.new == dep.commit or not scratch.is_cut(runner, worktree, dep.commit, span.new):
        return span
    # Ancestry found through the commits present holds; its absence proves nothing here.
    descends = queries.is_ancestor(runner, worktree, dep.commit, span.new)
    return dataclasses.replace(span, descends=descends, count=None, cut=True)


def _span(dep: Dep, found: Comparison, lines: int) -> Span:
    if found.new_commit is None:
        raise UsageError(dep.name, f"{found.new} is not a commit; nothing was changed")
    new = found.new_commit.sha
    if dep.commit == new:
        return Span(new, True)
    if not found.known:
        return Span(new, False, None, known=False)
    commits = list(found.added)
    log = [f"{c.sha[:7]} {safetext.line(c.subject)}" for c in commits]  # for logs and messages
    old = found.old_commit.sha if found.old_commit is not None else dep.commit
    return Span(new, found.descends, len(log), log[:lines], commits=commits,
                nested=found.nested or (), back=len(found.dropped),
                peeled=old if old != dep.commit else "")  # fmt: skip


def _local_time(runner: Runner, worktree: Path | None, sha: str) -> int | None:
    """The commit's date, when the dependency's checkout has the commit."""
    if worktree is None or gitfiles.git_dir(worktree) is None:
        return None
    if not queries.has_commit(runner, worktree, sha):
        return None
    return queries.commit_time(runner, worktree, sha)


def _short(sha: str) -> str:
    return "-" if set(sha) == {"0"} else sha[:7]
