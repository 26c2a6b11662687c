"""What `qola diff` compares: the pins at a revision of the root, and the pins now.

How the two are read and paired: docs/workflow.md, "What `diff` compares"."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base.errors import ManifestError, QolaError, UsageError
from qola.gitrun import queries
from qola.history import commits
from qola.manifest import Dep, Manifest, load
from qola.manifest.gitmodules import repository_top
from qola.repo import gitfiles

if TYPE_CHECKING:
    from qola.gitrun.git import Runner
    from qola.history.commits import Comparison

ADDED = "added"
REMOVED = "removed"
MOVED = "moved"
REPOINTED = "repointed"  # the same commit, from another URL or in another folder
RELABELLED = "relabelled"  # the same commit, URL and folder; its label added, removed or renamed


@dataclass(frozen=True)
class Change:
    """One dependency whose pin differs between the revision and the work tree."""

    name: str
    kind: str  # ADDED, REMOVED, MOVED, REPOINTED or RELABELLED
    before: Dep | None
    after: Dep | None
    comparison: Comparison | None = None  # for MOVED, once learned
    error: QolaError | None = None  # why the commits between could not be learned

    @property
    def dep(self) -> Dep:
        """The dependency as it is now (as it was, for a removed one)."""
        found = self.after or self.before
        assert found is not None
        return found

    @property
    def is_relabelled(self) -> bool:
        """Whether the label beside the pin differs (of a pin on both sides)."""
        return self.before is not None and self.after is not None and (
            self.before.tag != self.after.tag)


@dataclass(frozen=True)
class Diff:
    """The changes between the pins at rev and the pins in the work tree."""

    rev: str
    rev_commit: str
    manifest: Manifest  # the work tree's
    changes: tuple[Change, ...]
    unchanged: tuple[str, ...]
    at_rev: bool  # False: the manifest did not exist at rev (every pin is new)


def compare(
    manifest: Manifest,
    deps: tuple[Dep, ...],
    root_arg: Path | None,
    runner: Runner,
    rev: str,
    stat: bool = False,
) -> Diff:
    """The pins at rev against deps (the work tree's, abbreviated legacy pins expanded as
    those at rev are: a pin is compared by the commit it means, never by how it is
    spelled); every moved pin's commits learned (errors kept)."""
    top = repository_top(manifest.path.parent)
    if gitfiles.find_git_dir(top) is None:
        raise UsageError(
            str(manifest.path),
            "is in no git repository: there is no revision to compare with",
            "run qola diff in the repository that holds the manifest",
        )
    sha = queries.commit_sha(runner, top, rev)
    if sha is None:
        raise UsageError(
            rev,
            f"is not a commit of {top}",
            "give a branch, tag or commit of the root's repository (e.g. origin/main); "
            "in CI, fetch it first",
        )
    before = at_revision(manifest.path, root_arg, runner, top, rev, sha)
    changes, unchanged = pair(before.deps if before else (), deps)
    learned = tuple(_learn(manifest, runner, change, stat) for change in changes)
    return Diff(rev, sha, manifest, learned, unchanged, before is not None)


def at_revision(
    path: Path, root_arg: Path | None, runner: Runner, top: Path, rev: str, sha: str
) -> Manifest | None:
    """The manifest as commit sha (named rev) of the repository at top holds it; None when
    the file did not exist there. Abbreviated legacy pins are expanded by the gitlinks
    recorded in the same commit."""
    rel = Path(os.path.relpath(path, top)).as_posix()
    text = queries.blob_at(runner, top, sha, rel)
    if text is None:
        return None
    raw = text.encode("utf-8")
    where = f"{rev}:{rel}"
    try:
        found = load(path, root_arg, staged=(raw, queries.blob_at(runner, top, sha, ".gitmodules")))
        if found.root != top:
            # [qola] root (or --root) names another folder: its .gitmodules is that folder's.
            below = Path(os.path.relpath(found.root, top)).as_posix()
            modules = queries.blob_at(runner, top, sha, f"{below}/.gitmodules")
            found = load(path, root_arg, staged=(raw, modules or ""))
    except ManifestError as error:
        raise ManifestError(error.subject.replace(str(path), where, 1), error.problem,
                            error.hint) from None  # fmt: skip
    deps = tuple(_expand(runner, top, sha, found, dep, where) for dep in found.deps)
    return dataclasses.replace(found, deps=deps)


def _expand(runner: Runner, top: Path, sha: str, manifest: Manifest, dep: Dep, where: str) -> Dep:
    """dep with an abbreviated legacy pin expanded: the gitlink the same commit records, else
    the dependency's repository (the only commits that can mean)."""
    if not dep.is_abbreviated:
        return dep
    below = os.path.relpath(manifest.root / dep.path, top)
    link = queries.tree_gitlink(runner, top, sha, Path(below).as_posix())
    full = link if link and link.startswith(dep.commit) else None
    worktree = manifest.root / dep.path
    if full is None and gitfiles.git_dir(worktree) is not None:
        full = queries.commit_sha(runner, worktree, dep.commit)
    if full is None:
        raise ManifestError(
            f"{where}:{dep.line}" if dep.line else where,
            f"{dep.key}: cannot expand the abbreviated SHA {dep.commit!r} (not the gitlink "
            "recorded there, nor a commit of the checkout)",
            "compare with a revision whose manifest pins full SHAs",
        )
    return dataclasses.replace(dep, commit=full, abbreviated_from=dep.commit)


def pair(
    before: tuple[Dep, ...], after: tuple[Dep, ...]
) -> tuple[tuple[Change, ...], tuple[str, ...]]:
    """The changes by name (in the work tree's order, removed ones last) and the names of
    the pins that did not change. A change is of one kind, the first that applies: the
    commit moved, the same commit comes from elsewhere, only its label differs."""
    old = {dep.name: dep for dep in before}
    changes, unchanged = [], []
    for dep in after:
        was = old.get(dep.name)
        if was is None:
            changes.append(Change(dep.name, ADDED, None, dep))
        elif was.commit != dep.commit:
            changes.append(Change(dep.name, MOVED, was, dep))
        elif (was.url, was.path) != (dep.url, dep.path):
            changes.append(Change(dep.name, REPOINTED, was, dep))
        elif was.tag != dep.tag:
            changes.append(Change(dep.name, RELABELLED, was, dep))
        else:
            unchanged.append(dep.name)
    now = {dep.name for dep in after}
    changes.extend(Change(d.name, REMOVED, d, None) for d in before if d.name not in now)
    return tuple(changes), tuple(unchanged)


def _learn(manifest: Manifest, runner: Runner, change: Change, stat: bool) -> Change:
    if change.kind != MOVED or change.before is None or change.after is None:
        return change
    dep = change.after
    worktree = manifest.root / dep.path
    local = worktree if gitfiles.git_dir(worktree) is not None else None
    try:
        found = commits.compare(runner, dep.name, dep.url, change.before.commit, dep.commit,
                                local, stat=stat)  # fmt: skip
    except QolaError as error:  # a remote that cannot be reached: the others still answer
        return dataclasses.replace(change, error=error)
    return dataclasses.replace(change, comparison=found)
