"""Read-only comparison of the tree with the manifest, as a report. Never fetches."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from qola import gitfiles
from qola.git import Runner
from qola.manifest import Dep, Manifest
from qola.observe import (
    SubmoduleState,
    head_sha,
    index_gitlinks,
    observe,
    status,
    submodule_states,
)

# Kinds of problem (DESIGN §6). Only `overridden` is not a failure.
MISSING = "missing"
WRONG_COMMIT = "wrong-commit"
SUBMODULE = "submodule"
DIRTY = "dirty"
PATCHES = "patches"
GITLINK = "gitlink"
OVERRIDDEN = "overridden"
NOT_FAILURES = frozenset({OVERRIDDEN})


@dataclass(frozen=True)
class Problem:
    kind: str
    message: str
    path: str | None = None  # the file or nested submodule concerned, relative to the dep

    @property
    def is_failure(self) -> bool:
        return self.kind not in NOT_FAILURES


@dataclass(frozen=True)
class DepReport:
    dep: Dep
    path: str  # where it was checked (the override folder when overridden)
    head: str | None
    problems: tuple[Problem, ...]
    submodules: tuple[SubmoduleState, ...] = ()

    @property
    def ok(self) -> bool:
        return not any(p.is_failure for p in self.problems)


@dataclass(frozen=True)
class Report:
    manifest: Manifest
    deps: tuple[DepReport, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return all(d.ok for d in self.deps)


def verify(
    manifest: Manifest, deps: tuple[Dep, ...], runner: Runner, strict: bool = False
) -> Report:
    """Check every selected dependency; the tree, its index and its refs are left untouched."""
    root_gitlinks = _root_gitlinks(manifest, deps, runner)
    return Report(
        manifest, tuple(_verify_one(manifest, dep, runner, strict, root_gitlinks) for dep in deps)
    )


def _verify_one(
    manifest: Manifest,
    dep: Dep,
    runner: Runner,
    strict: bool,
    root_gitlinks: dict[str, str | None],
) -> DepReport:
    state = observe(manifest, dep, None)
    problems: list[Problem] = []
    if dep.patches is not None:
        # Never green for a tree whose manifest asks for patches qola cannot check yet.
        problems.append(Problem(PATCHES, f"patch series ({dep.patches}) are not supported yet"))
    where = (
        str(state.worktree.relative_to(manifest.root))
        if not state.overridden
        else str(state.worktree)
    )
    if state.overridden:
        problems.append(
            Problem(OVERRIDDEN, f"using {state.worktree} as is (QOLA_SOURCE_DIR_ override)")
        )
        return DepReport(dep, where, state.head, tuple(problems))
    gitlink = root_gitlinks.get(dep.path, dep.commit)
    if gitlink is None:
        problems.append(Problem(GITLINK, f"the root's gitlink for {dep.path} is in conflict"))
    elif gitlink != dep.commit:
        problems.append(
            Problem(
                GITLINK,
                f"the root records {dep.path} at {gitlink[:12]} but the manifest pins "
                f"{dep.commit[:12]}",
            )
        )
    if state.gitdir is None:
        what = "does not exist" if not state.worktree.exists() else "is not a git repository"
        problems.insert(0, Problem(MISSING, f"{dep.path} {what}"))
        return DepReport(dep, where, None, tuple(problems))
    head = state.head or head_sha(runner, state.worktree)
    if head != dep.commit:
        problems.insert(
            0,
            Problem(
                WRONG_COMMIT,
                f"HEAD is {head[:12] if head else 'not a commit'}, the pin is {dep.commit[:12]}",
            ),
        )
    submodules: tuple[SubmoduleState, ...] = ()
    if dep.submodules:
        found = submodule_states(runner, state.worktree, state.gitdir, dep.commit, False)
        if found is None and head == dep.commit:
            problems.append(Problem(SUBMODULE, "cannot read the pinned commit's submodules"))
        submodules = found or ()
        for sub in (s for top in submodules for s in top.walk()):
            if sub.head is None:
                problems.append(Problem(SUBMODULE, f"{sub.path} is not initialised", sub.path))
            elif sub.head != sub.expected:
                problems.append(
                    Problem(
                        SUBMODULE,
                        f"{sub.path} is at {sub.head[:12]}, the pinned commit records "
                        f"{sub.expected[:12]}",
                        sub.path,
                    )
                )
    for entry in status(runner, state.worktree, dep.name, untracked=strict):
        if entry.is_submodule:
            if entry.modified:
                problems.append(Problem(DIRTY, f"{entry.path}: modified content", entry.path))
            if strict and entry.untracked:
                problems.append(Problem(DIRTY, f"{entry.path}: untracked content", entry.path))
        elif entry.modified:
            problems.append(Problem(DIRTY, f"{entry.path}: modified", entry.path))
        elif strict and entry.untracked:
            problems.append(Problem(DIRTY, f"{entry.path}: untracked", entry.path))
    for path, how in hidden_changes(runner, state.worktree, dep.name):
        problems.append(Problem(DIRTY, f"{path}: {how}", path))
    return DepReport(dep, where, head, tuple(problems), submodules)


# `git ls-files -v` tags: lower case marks assume-unchanged, S skip-worktree.
_HIDDEN_TAGS = frozenset("hsmrck") | {"S"}


def hidden_changes(runner: Runner, worktree: Path, subject: str) -> list[tuple[str, str]]:
    """Files whose change git status cannot see: assume-unchanged or skip-worktree, then edited."""
    # One git process for the dependency and its nested submodules; the flagged files
    # (normally none) are then compared with the index by hashing them here, without
    # filters: a file a clean filter would change is reported, never passed.
    out = runner.run(
        worktree, "--no-optional-locks", "ls-files", "-v", "-s", "-z", "--recurse-submodules",
        subject=subject,
    )  # fmt: skip
    found = []
    for record in out.stdout.split("\0"):
        meta, _, path = record.partition("\t")
        fields = meta.split()
        if len(fields) != 4 or fields[0] not in _HIDDEN_TAGS or fields[1] == "160000":
            continue
        flag = "skip-worktree" if fields[0] in "Ss" else "assume-unchanged"
        change = _file_change(worktree / path, fields[1], fields[2])
        if change:
            found.append((path, f"{change} (hidden by {flag})"))
    return found


def _file_change(file: Path, mode: str, sha: str) -> str | None:
    try:
        data = os.readlink(file).encode() if mode == "120000" else file.read_bytes()
        executable = os.access(file, os.X_OK) and mode != "120000"
    except FileNotFoundError:
        return "deleted"
    except OSError:
        return "unreadable"
    algorithm = hashlib.sha256 if len(sha) == 64 else hashlib.sha1
    if algorithm(b"blob %d\0" % len(data) + data).hexdigest() != sha:
        return "modified"
    if mode in ("100644", "100755") and executable != (mode == "100755"):
        return "mode changed"
    return None


def _root_gitlinks(
    manifest: Manifest, deps: tuple[Dep, ...], runner: Runner
) -> dict[str, str | None]:
    """The gitlinks the root's index records at the deps' paths (one git call for all)."""
    if gitfiles.git_dir(manifest.root) is None or not deps:
        return {}
    return index_gitlinks(runner, manifest.root, [dep.path for dep in deps])
