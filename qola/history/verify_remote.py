"""`verify --remote`: is each pin still in the history of what it follows upstream?

Why it matters and how it is checked: docs/workflow.md, "How `verify --remote` checks"."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from qola.base import console
from qola.gitrun import queries
from qola.gitrun.git import Runner
from qola.history import releases
from qola.history.scratch import REF, scratch
from qola.manifest import Dep, Manifest
from qola.repo import gitfiles
from qola.sync.verify import TAG_MOVED, UNREACHABLE, Problem, Report


def add_problems(report: Report, runner: Runner) -> Report:
    """The report with an `unreachable` problem added to each dep whose pin is not upstream."""
    with tempfile.TemporaryDirectory(prefix="qola-remote-") as folder:
        deps = []
        for dep_report in report.deps:
            with console.activity(dep_report.dep.name):
                console.step("checking upstream", dep_report.dep.url)
                problem = reachability(report.manifest, dep_report.dep, runner, Path(folder))
                moved = label_moved(dep_report.dep, runner, Path(folder))
            found = tuple(one for one in (problem, moved) if one is not None)
            if found:
                problems = (*dep_report.problems, *found)
                dep_report = dataclasses.replace(dep_report, problems=problems)
            deps.append(dep_report)
    return dataclasses.replace(report, deps=tuple(deps))


def reachability(manifest: Manifest, dep: Dep, runner: Runner, folder: Path) -> Problem | None:
    """None when the pin is in the history of dep's followed ref upstream, else the problem."""
    if dep.track is None:
        # The same ref `qola bump` follows when no track is set.
        (source, label), tip = dep.follows, None
    else:
        empty = folder / f"{dep.name}.ls-remote"
        empty.mkdir()
        if releases.is_pattern(dep.track):
            # Releases: the pin is upstream when the newest release's history holds it.
            newest = releases.newest(queries.remote_refs(runner, empty, dep.name, dep.url,
                                                         ["refs/tags/*"]), dep.track)  # fmt: skip
            found = None if newest is None else (f"refs/tags/{newest[0]}", newest[1])
        else:
            found = queries.remote_ref(runner, empty, dep.name, dep.url, dep.track)
        if found is None:
            return Problem(
                UNREACHABLE,
                f"track {dep.track!r} no longer exists at {dep.url} (deleted?); nothing "
                f"upstream is known to contain the pin {dep.commit[:12]}",
            )
        source, tip = found
        label = f"{'tag' if source.startswith('refs/tags/') else 'branch'} {dep.track!r}"
    with scratch(runner, dep.name, dep.url) as repo:
        repo.history(source, _pin_date(manifest, dep, runner), reaching=dep.commit)
        if repo.reaches(dep.commit, REF):
            return None
        if tip is None:
            tip = queries.commit_sha(runner, repo.path, REF) or "?"
    return Problem(
        UNREACHABLE,
        f"the pin {dep.commit[:12]} is not in the history of {label} at {dep.url} "
        f"(now at {tip[:12]}): it was never on it, or it was rewritten or moved back since",
    )


def label_moved(dep: Dep, runner: Runner, folder: Path) -> Problem | None:
    """A `tag-moved` problem when the pin's label no longer names the pinned commit
    upstream (retagged, or deleted); None when it does, or the pin has no label."""
    if dep.tag is None:
        return None
    empty = folder / f"{dep.name}.tag"
    empty.mkdir(exist_ok=True)
    ref = f"refs/tags/{dep.tag}"
    now = queries.remote_refs(runner, empty, dep.name, dep.url, [ref]).get(ref)
    if now == dep.commit:
        return None
    what = "no longer exists" if now is None else f"names {now[:12]} now"
    return Problem(
        TAG_MOVED,
        f"tag {dep.tag} at {dep.url} {what}, not the pin {dep.commit[:12]}: it was "
        f"{'deleted' if now is None else 'moved (retagged)'} upstream; compare the two "
        f"commits before trusting it, and move the pin (qola bump {dep.name} --to "
        f"{dep.tag}) only if the new one is trusted",
    )


def _pin_date(manifest: Manifest, dep: Dep, runner: Runner) -> int | None:
    """The pin's commit date, when the checkout has the pin; else None."""
    worktree = manifest.root / dep.path
    if gitfiles.git_dir(worktree) is None:
        return None
    return queries.commit_time(runner, worktree, dep.commit)
