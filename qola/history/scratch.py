"""A scratch repository that learns a dependency's history from its remote, commits only.

What it fetches and why not into the dependency: docs/workflow.md, "The scratch
repository"."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base.shas import is_full_sha
from qola.gitrun import queries
from qola.gitrun.git import command_error
from qola.repo import gitfiles, store

if TYPE_CHECKING:
    from qola.gitrun.git import Runner

SLACK = 86400  # a day of clock skew between a commit and the ones made after it
REF = store.PROBE_REF  # where the fetched ref lands in the scratch repository
_FILTER = "--filter=tree:0"  # commits are all a log and an ancestry check read


@dataclass(frozen=True)
class Probe:
    """The scratch repository of one dependency's remote."""

    runner: Runner
    subject: str  # the dependency, for messages
    url: str
    path: Path

    def fetch(self, want: str, depth: str | None = None, required: bool = False) -> bool:
        """Fetch want (a ref or a SHA) and its history into REF; False when that failed
        (GitError when required). depth: --depth=N, --shallow-since=T or --unshallow."""
        args = ["fetch", "-q", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
                _FILTER, *([depth] if depth else []), "--end-of-options", "origin",
                f"+{want}:{REF}"]  # fmt: skip
        out = self.runner.run(self.path, *args, check=False, network=True, progress=True)
        if out.status != 0 and required:
            raise command_error(self.subject, [*args[:-2], self.url, want], out)
        return out.status == 0

    def history(self, want: str, since: int | None, reaching: str | None = None) -> None:
        """want's history in REF: back to a day before since (seconds) when given, else
        all of it; all of it too when the shortcut failed or did not reach `reaching`."""
        if since is None or not self.fetch(want, f"--shallow-since={since - SLACK}"):
            self.fetch(want, required=True)
        elif reaching is not None and not self.reaches(reaching, REF):
            self.deepen(want)

    def deepen(self, want: str, required: bool = True) -> None:
        """The whole history of want: what a shallow fetch cut, or a commit not fetched yet."""
        if gitfiles.is_shallow(self.path):
            self.fetch(want, "--unshallow", required=required)
        elif is_full_sha(want) and not self.has(want):
            self.fetch(want, required=required)

    def has(self, sha: str) -> bool:
        return queries.has_commit(self.runner, self.path, sha)

    def reaches(self, old: str, new: str) -> bool:
        """True when old is in new's history as fetched (False when either is missing)."""
        return self.has(old) and queries.is_ancestor(self.runner, self.path, old, new)

    def time(self, sha: str) -> int | None:
        """The committer date of a commit, fetching it alone (depth 1) when needed."""
        if not self.has(sha) and not self.fetch(sha, "--depth=1"):
            return None
        return queries.commit_time(self.runner, self.path, sha)

    def cut_between(self, old: str, new: str) -> bool:
        """True when the fetched history of old..new ends at a shallow boundary before
        reaching old (a merged branch older than the date fetched back to): counts from
        it would be short."""
        return is_cut(self.runner, self.path, old, new)


@contextmanager
def scratch(runner: Runner, subject: str, url: str) -> Iterator[Probe]:
    """A new scratch repository for url, removed afterwards."""
    # Its own new folder: never a shared one such as $TMPDIR, whose repository, if any,
    # git would read config from.
    with tempfile.TemporaryDirectory(prefix="qola-probe-") as folder:
        path = Path(folder) / "probe.git"
        runner.run(Path(folder), "init", "-q", "--bare", "--end-of-options", str(path),
                   subject=subject)  # fmt: skip
        runner.run(path, "remote", "add", "--end-of-options", "origin", url, subject=subject)
        yield Probe(runner, subject, url, path)


def is_cut(runner: Runner, repo: Path, old: str, new: str) -> bool:
    """True when some commit of old..new in repo is a shallow boundary (its parents were
    not fetched): the history between the two is incomplete there."""
    gitdir = repo if (repo / "HEAD").is_file() else gitfiles.git_dir(repo)
    if gitdir is None or not gitfiles.is_shallow(gitdir):
        return False
    shallow = set(gitfiles.shallow_commits(gitdir))
    span = queries.commits(runner, repo, new, old)
    return any(commit.sha in shallow for commit in span)
