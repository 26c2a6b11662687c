"""How far each pin is behind what it follows upstream, for `qola outdated`.

Which ref is followed and where the commits come from: docs/workflow.md, "How `outdated`
measures"."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base.errors import GitError, QolaError, UsageError
from qola.base.plural import count
from qola.gitrun import queries
from qola.history import releases
from qola.history.commits import compare
from qola.manifest import Dep, Manifest
from qola.repo import gitfiles

if TYPE_CHECKING:
    from qola.gitrun.git import Runner
    from qola.history.commits import Comparison

DAY = 86400
_LIMIT = re.compile(r"^(\d+)(d?)$")


@dataclass(frozen=True)
class Limit:
    """--fail-if-behind: more than `commits` commits, or more than `days` days, fails."""

    commits: int | None = None
    days: int | None = None

    def describe(self) -> str:
        if self.days is not None:
            return f"more than {count(self.days, 'day')} behind"
        return f"more than {count(self.commits or 0, 'commit')} behind"


def parse_limit(text: str) -> Limit:
    """`10` (commits) or `30d` (days since the oldest change the pin lacks landed)."""
    found = _LIMIT.match(text.strip())
    if found is None:
        raise UsageError(
            "--fail-if-behind",
            f"{text!r} is neither a number of commits nor of days",
            "write 10 for ten commits, 30d for thirty days",
        )
    number = int(found[1])
    return Limit(days=number) if found[2] else Limit(commits=number)


@dataclass(frozen=True)
class Lag:
    """One pin against the tip of what it follows."""

    dep: Dep
    follows: str  # what people call it: "main", "tag v2.0", "the default branch"
    ref: str  # the remote's ref: refs/heads/main, refs/tags/v2.0, HEAD
    tip: str | None = None
    comparison: Comparison | None = None
    error: QolaError | None = None
    tip_tag: str | None = None  # the tag that names the tip, where one does
    releases_behind: int | None = None  # a track of releases: how many are newer than the pin

    @property
    def behind(self) -> int | None:
        """Commits on the followed ref that the pin lacks; None when unknown."""
        found = self.comparison
        return len(found.added) if found is not None and found.known else None

    @property
    def ahead_of_newest(self) -> bool:
        """A track of releases whose pin is a release no older than the newest (the newest
        by another tag, or a pre-release of the next), though not the newest's commit."""
        return self.releases_behind == 0 and self.tip is not None and self.tip != self.dep.commit

    @property
    def on_track(self) -> bool | None:
        """True when the pin is in the followed ref's history (None: unknown)."""
        found = self.comparison
        return (not found.dropped) if found is not None and found.known else None

    @property
    def waiting_since(self) -> int | None:
        """When the oldest change the pin lacks landed on what it follows: the committer
        date of the oldest commit the pin lacks on the tip's first-parent line.

        Not the oldest commit of all: a branch merged today brings commits made long
        ago, but the update has waited since the merge, whose date the first-parent
        line carries.
        """
        found = self.comparison
        if found is None or not found.added:
            return None
        lacking = {commit.sha: commit for commit in found.added}
        landed = []
        sha: str | None = found.new
        while sha in lacking:
            commit = lacking[sha]
            landed.append(commit.time)
            sha = commit.parents[0] if commit.parents else None
        return min(landed or [commit.time for commit in found.added])

    def days_behind(self, now: float) -> int | None:
        since = self.waiting_since
        return None if since is None else max(0, int((now - since) // DAY))

    def exceeds(self, limit: Limit | None, now: float) -> bool:
        """True when the pin is further behind than the limit allows."""
        if limit is None:
            return False
        if limit.days is not None:
            days = self.days_behind(now)
            return days is not None and days > limit.days
        return self.behind is not None and limit.commits is not None and self.behind > limit.commits


def measure_all(manifest: Manifest, deps: tuple[Dep, ...], runner: Runner) -> list[Lag]:
    """Each dependency's lag, in manifest order; a remote that fails is kept as an error."""
    lags = []
    with tempfile.TemporaryDirectory(prefix="qola-outdated-") as scratch:
        for dep in deps:
            try:
                lags.append(measure(manifest, dep, runner, Path(scratch)))
            except QolaError as error:
                lags.append(Lag(dep, dep.follows.label, dep.follows.ref, error=error))
    return lags


def measure(manifest: Manifest, dep: Dep, runner: Runner, scratch: Path) -> Lag:
    """dep's pin against the tip of its followed ref (for a track of releases, the newest
    release), with the tags that name the tip, in one ls-remote."""
    ref, follows = dep.follows
    # ls-remote runs in a new empty folder: never in one whose repository git would read.
    empty = Path(tempfile.mkdtemp(prefix=f"{dep.name}-", dir=scratch))
    asked = ["refs/tags/*"] if releases.is_pattern(dep.track) else [ref, "refs/tags/*"]
    refs = queries.remote_refs(runner, empty, dep.name, dep.url, asked)
    behind = None
    if dep.track is None:
        tip = refs.get("HEAD")
        if tip is None:
            raise GitError(
                dep.name, f"{dep.url} has no default branch (HEAD)", "give it a track to follow"
            )
    elif releases.is_pattern(dep.track):
        newest = releases.newest(refs, dep.track)
        if newest is None:
            raise GitError(dep.name, f"no release of {dep.url} matches track {dep.track!r}",
                           "point track at the remote's tags, e.g. refs/tags/v*")  # fmt: skip
        ref, tip = f"refs/tags/{newest[0]}", newest[1]
        behind = releases.behind(refs, dep.track, dep.commit, dep.tag)
    else:
        found = queries.pick_ref(refs, dep.track)
        if found is None:
            raise GitError(
                dep.name,
                f"track {dep.track!r} no longer exists at {dep.url} (deleted?)",
                "point track at an existing branch or tag",
            )
        ref, tip = found
        kind = "tag" if ref.startswith("refs/tags/") else "branch"
        follows = f"{kind} {dep.track}" if kind == "tag" else dep.track
    worktree = manifest.root / dep.path
    local = worktree if gitfiles.git_dir(worktree) is not None else None
    comparison = compare(runner, dep.name, dep.url, dep.commit, tip, local, want=ref)
    tip_tag = releases.label_for(refs, tip, ref.removeprefix("refs/tags/"))
    return Lag(dep, follows, ref, tip, comparison, tip_tag=tip_tag, releases_behind=behind)
