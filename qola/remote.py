"""`verify --remote`: is each pin still in the history of what it follows upstream?

A pin that exists only on a deleted branch, or on a branch that was force-pushed to
a commit that no longer contains it, builds today from the pinned SHA but is one
garbage collection away from being unfetchable. This is the one check that uses the
network, and only when asked.

How: `ls-remote` finds the followed ref (the dep's `track`, else the remote's
default branch); its history is fetched into a private, temporary bare repository
(never into the dependency, which stays untouched), shallow back to a day before the
pin's commit date when the checkout knows that date, and in full when that was not
enough; then `merge-base --is-ancestor pin tip`.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from qola import bump, console, gitfiles, store
from qola.git import Runner, command_error
from qola.manifest import Dep, Manifest
from qola.observe import has_commit
from qola.verify import UNREACHABLE, Problem, Report

_PROBE_REF = store.PROBE_REF
_SLACK = 86400  # a day of clock skew between the pin's commit and the ones after it


def add_problems(report: Report, runner: Runner) -> Report:
    """The report with an `unreachable` problem added to each dep whose pin is not upstream."""
    with tempfile.TemporaryDirectory(prefix="qola-remote-") as scratch:
        deps = []
        for dep_report in report.deps:
            with console.activity(dep_report.dep.name):
                console.step("checking upstream", dep_report.dep.url)
                problem = reachability(report.manifest, dep_report.dep, runner, Path(scratch))
            if problem is not None:
                problems = (*dep_report.problems, problem)
                dep_report = dataclasses.replace(dep_report, problems=problems)
            deps.append(dep_report)
    return dataclasses.replace(report, deps=tuple(deps))


def reachability(manifest: Manifest, dep: Dep, runner: Runner, scratch: Path) -> Problem | None:
    """None when the pin is in the history of dep's followed ref upstream, else the problem."""
    if dep.track is None:
        # The same ref `qola bump` follows when no track is set.
        source, label, tip = "HEAD", "the default branch", None
    else:
        empty = scratch / f"{dep.name}.ls-remote"
        empty.mkdir()
        found = bump.find_ref(runner, dep, empty, dep.track)
        if found is None:
            return Problem(
                UNREACHABLE,
                f"track {dep.track!r} no longer exists at {dep.url} (deleted?); nothing "
                f"upstream is known to contain the pin {dep.commit[:12]}",
            )
        source, tip = found
        label = f"{'tag' if source.startswith('refs/tags/') else 'branch'} {dep.track!r}"
    probe = scratch / f"{dep.name}.git"
    runner.run(scratch, "init", "-q", "--bare", str(probe), subject=dep.name)
    since = _pin_date(manifest, dep, runner)
    if since is None or not _fetch(runner, dep, probe, source, f"--shallow-since={since}"):
        _fetch(runner, dep, probe, source, None, required=True)
    if not _contains(runner, probe, dep.commit) and gitfiles.is_shallow(probe):
        _fetch(runner, dep, probe, source, "--unshallow", required=True)
    if _contains(runner, probe, dep.commit):
        return None
    if tip is None:
        tip = runner.run(probe, "rev-parse", f"{_PROBE_REF}^{{commit}}").stdout.strip()
    return Problem(
        UNREACHABLE,
        f"the pin {dep.commit[:12]} is not in the history of {label} at {dep.url} "
        f"(now at {tip[:12]}): it was never on it, or it was rewritten or moved back since",
    )


def _pin_date(manifest: Manifest, dep: Dep, runner: Runner) -> int | None:
    """A day before the pin's commit date, when the checkout has the pin; else None."""
    worktree = manifest.root / dep.path
    if gitfiles.git_dir(worktree) is None:
        return None
    out = runner.run(
        worktree, "--no-optional-locks", "log", "-1", "--format=%ct", "--end-of-options",
        f"{dep.commit}^{{commit}}", "--", check=False,
    )  # fmt: skip
    date = out.stdout.strip()
    return int(date) - _SLACK if out.status == 0 and date.isdigit() else None


def _fetch(
    runner: Runner, dep: Dep, probe: Path, source: str, depth: str | None, required: bool = False
) -> bool:
    """Fetch source's history into the probe; False (or GitError when required) on failure."""
    args = ["fetch", "-q", "--no-tags", "--no-write-fetch-head", *([depth] if depth else [])]
    out = runner.run(
        probe, *args, "--end-of-options", dep.url, f"+{source}:{_PROBE_REF}",
        check=False, network=True, progress=True,
    )  # fmt: skip
    if out.status != 0 and required:
        raise command_error(dep.name, [*args, dep.url, source], out)
    return out.status == 0


def _contains(runner: Runner, probe: Path, sha: str) -> bool:
    """True when sha is a commit in the history of the fetched ref."""
    if not has_commit(runner, probe, sha):
        return False
    out = runner.run(probe, "merge-base", "--is-ancestor", sha, _PROBE_REF, check=False)
    return out.status == 0
