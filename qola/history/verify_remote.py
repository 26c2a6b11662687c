"""`verify --remote`: is each pin still in the history of what it follows upstream?

Why it matters and how it is checked: docs/workflow.md, "How `verify --remote` checks"."""

from __future__ import annotations

import dataclasses
import os
import shlex
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
    """The report with an `unreachable` problem added to each dep whose pin is not
    upstream, and a `tag-moved` one to each whose label names another commit there."""
    with tempfile.TemporaryDirectory(prefix="qola-remote-") as folder:
        deps = []
        for dep_report in report.deps:
            dep = dep_report.dep
            with console.activity(dep.name):
                console.step("checking upstream", dep.url)
                refs = upstream_refs(dep, runner, Path(folder))
                problem = reachability(report.manifest, dep, runner, refs)
                moved = label_moved(report.manifest, dep, refs)
            found = tuple(one for one in (problem, moved) if one is not None)
            if found:
                problems = (*dep_report.problems, *found)
                dep_report = dataclasses.replace(dep_report, problems=problems)
            deps.append(dep_report)
    return dataclasses.replace(report, deps=tuple(deps))


def upstream_refs(dep: Dep, runner: Runner, folder: Path) -> dict[str, str]:
    """{ref: commit} of what dep's track and label name upstream, from one ls-remote (none
    when it has neither)."""
    asked = []
    if dep.track is not None:
        asked.append("refs/tags/*" if releases.is_pattern(dep.track) else dep.track)
    if dep.tag is not None and asked != ["refs/tags/*"]:
        asked.append(f"refs/tags/{dep.tag}")
    if not asked:
        return {}
    empty = folder / f"{dep.name}.ls-remote"
    empty.mkdir(exist_ok=True)
    return queries.remote_refs(runner, empty, dep.name, dep.url, asked)


def reachability(
    manifest: Manifest, dep: Dep, runner: Runner, refs: dict[str, str]
) -> Problem | None:
    """None when the pin is in the history of dep's followed ref upstream, else the problem;
    refs: what upstream_refs found."""
    if dep.track is None:
        # The same ref `qola bump` follows when no track is set.
        (source, label), tip = dep.follows, None
    else:
        if releases.is_pattern(dep.track):
            # Releases: the pin is upstream when a tag the pattern matches names it (a
            # maintenance release, v2.13.10 beside v3.5.0, is in no newer one's history),
            # else when the newest release's history holds it.
            if releases.pinned_release(refs, dep.track, dep.commit, dep.tag) is not None:
                return None
            newest = releases.newest(refs, dep.track)
            found = None if newest is None else (f"refs/tags/{newest[0]}", newest[1])
        else:
            found = queries.pick_ref(refs, dep.track)
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
    if dep.track is not None and releases.is_pattern(dep.track):
        return Problem(
            UNREACHABLE,
            f"the pin {dep.commit[:12]} is no release {dep.track!r} matches at {dep.url}: no "
            f"tag it matches names the pin, and the newest, {source.removeprefix('refs/tags/')} "
            f"({tip[:12]}), does not hold it in its history; it was never released, or its "
            "release was moved",
        )
    return Problem(
        UNREACHABLE,
        f"the pin {dep.commit[:12]} is not in the history of {label} at {dep.url} "
        f"(now at {tip[:12]}): it was never on it, or it was rewritten or moved back since",
    )


def label_moved(manifest: Manifest, dep: Dep, refs: dict[str, str]) -> Problem | None:
    """A `tag-moved` problem when the pin's label no longer names the pinned commit
    upstream (retagged, or deleted); None when it does, or the pin has no label.

    refs: what upstream_refs found. The hint says how to look at both commits: a retag
    may be an honest fix or an attack, and only a person can tell which."""
    if dep.tag is None:
        return None
    ref = f"refs/tags/{dep.tag}"
    now = refs.get(ref)
    if now == dep.commit:
        return None
    if now is None:
        return Problem(
            TAG_MOVED,
            f"tag {dep.tag} at {dep.url} no longer exists, not the pin {dep.commit[:12]}: "
            f"it was deleted upstream; the pin itself is unchanged. Keep the commit and drop "
            f"the label with: qola bump {dep.name} --to {dep.commit}",
        )
    clone = manifest.root / dep.path
    compare = ""
    gitdir = gitfiles.git_dir(clone)
    if gitdir is not None:
        where = shlex.quote(os.path.relpath(clone))
        # A clone qola made is shallow: one commit more, not the new one's whole history.
        depth = " --depth=1" if (gitdir / "shallow").is_file() else ""
        compare = (
            f" (git -C {where} fetch -q --no-tags{depth} {shlex.quote(dep.url)} "
            f"{shlex.quote(ref)} && git -C {where} diff --stat {dep.commit[:12]} FETCH_HEAD)"
        )
    return Problem(
        TAG_MOVED,
        f"{releases.retagged(dep, now)}; compare the two commits before trusting it"
        f"{compare}, and move the pin (qola bump {dep.name} --to {dep.tag} "
        "--allow-downgrade, as a retag may move it back) only if the new one is trusted",
    )


def _pin_date(manifest: Manifest, dep: Dep, runner: Runner) -> int | None:
    """The pin's commit date, when the checkout has the pin; else None."""
    worktree = manifest.root / dep.path
    if gitfiles.git_dir(worktree) is None:
        return None
    return queries.commit_time(runner, worktree, dep.commit)
