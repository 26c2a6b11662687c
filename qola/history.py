"""The commits from an old pin to a new one, learned without writing anywhere.

`qola bump` shows them and refuses a new pin that does not descend from the old
one. Online, the history comes into a temporary bare repository, never into the
dependency (which `bump --dry-run` and `--no-checkout` must leave alone): commits
only (`--filter=tree:0`, where the server allows filters), back to a day before
the old pin's date when the dependency's checkout knows that date, and the whole
history of the followed ref when it does not or when that was not enough. Offline,
it is read from the dependency's own repository, which must hold both commits.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from qola import gitfiles
from qola.errors import GitError, UsageError
from qola.git import command_error
from qola.manifest import Dep
from qola.observe import has_commit

if TYPE_CHECKING:
    from qola.git import Runner

_SLACK = 86400  # a day of clock skew between the old pin's commit and the ones after it
_NEW = "refs/qola/new"
_FILTER = "--filter=tree:0"  # commits are all the log and the ancestry check read


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
class Commit:
    """One commit between two pins, for `bump --format json`."""

    sha: str
    subject: str
    author: str
    email: str
    date: str  # the author date, ISO 8601 with its offset


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
    with tempfile.TemporaryDirectory(prefix="qola-history-") as scratch:
        probe = Path(scratch) / "history.git"
        runner.run(Path(scratch), "init", "-q", "--bare", "--end-of-options", str(probe),
                   subject=dep.name)  # fmt: skip
        runner.run(probe, "remote", "add", "--end-of-options", "origin", dep.url,
                   subject=dep.name)  # fmt: skip
        want = source or new
        since = _old_date(runner, worktree, dep.commit)
        if since is None or not _fetch(runner, dep, probe, want, f"--shallow-since={since}"):
            _fetch(runner, dep, probe, want, None, required=True)
        if not has_commit(runner, probe, new):
            # The branch moved since it was read; the commit read is still the new pin.
            _fetch(runner, dep, probe, new, "--depth=1", required=True)
        if not _descends(runner, probe, dep.commit, new) and gitfiles.is_shallow(probe):
            _fetch(runner, dep, probe, want, "--unshallow")
        if not has_commit(runner, probe, dep.commit):
            _fetch(runner, dep, probe, dep.commit, "--depth=1")
        return _span(runner, dep, probe, new, lines)


def _read(runner: Runner, dep: Dep, worktree: Path, new: str, lines: int) -> Span:
    for sha in (new, dep.commit):
        if gitfiles.git_dir(worktree) is None or not has_commit(runner, worktree, sha):
            raise GitError(
                dep.name,
                f"commit {sha} is not present locally and --offline forbids fetching it",
                "run without --offline",
            )
    return _span(runner, dep, worktree, new, lines)


def _span(runner: Runner, dep: Dep, repo: Path, new: str, lines: int) -> Span:
    peeled = runner.run(repo, "rev-parse", "--verify", "-q", "--end-of-options",
                        f"{new}^{{commit}}", check=False)  # fmt: skip
    if peeled.status != 0:
        raise UsageError(dep.name, f"{new} is not a commit; nothing was changed")
    new = peeled.stdout.strip()
    old = dep.commit
    if old == new:
        return Span(new, True)
    if not has_commit(runner, repo, old):
        return Span(new, False, known=False)
    out = runner.run(repo, "log", "--format=%H%x00%h%x00%an%x00%ae%x00%aI%x00%s",
                     f"{old}..{new}", "--", subject=dep.name)  # fmt: skip
    commits, log = [], []
    for line in out.stdout.splitlines():
        sha, short, author, email, date, subject = line.split("\0", 5)
        commits.append(Commit(sha, subject, author, email, date))
        log.append(f"{short} {subject}")
    descends = _descends(runner, repo, old, new)
    return Span(new, descends, len(log), log[:lines], commits=commits)


def _descends(runner: Runner, repo: Path, old: str, new: str) -> bool:
    if not has_commit(runner, repo, old):
        return False
    out = runner.run(repo, "merge-base", "--is-ancestor", old, new, check=False)
    return out.status == 0


def _old_date(runner: Runner, worktree: Path, old: str) -> int | None:
    """A day before the old pin's commit date, when the dependency's checkout has it."""
    if gitfiles.git_dir(worktree) is None or not has_commit(runner, worktree, old):
        return None
    out = runner.run(worktree, "--no-optional-locks", "log", "-1", "--format=%ct",
                     "--end-of-options", old, "--", check=False)  # fmt: skip
    date = out.stdout.strip()
    return int(date) - _SLACK if out.status == 0 and date.isdigit() else None


def _fetch(
    runner: Runner, dep: Dep, probe: Path, want: str, depth: str | None, required: bool = False
) -> bool:
    """Fetch want's history (commits only) into the probe; False (GitError when required)."""
    args = ["fetch", "-q", "--no-tags", "--no-write-fetch-head", _FILTER,
            *([depth] if depth else []), "--end-of-options", "origin",
            f"+{want}:{_NEW}"]  # fmt: skip
    out = runner.run(probe, *args, check=False, network=True)
    if out.status != 0 and required:
        raise command_error(dep.name, args, out)
    return out.status == 0
