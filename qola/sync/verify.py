"""Read-only comparison of the tree with the manifest, as a report. Never fetches."""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from qola.base import safetext
from qola.base.errors import GitError
from qola.base.plural import count
from qola.gitrun import flagged, queries
from qola.gitrun.git import Runner
from qola.gitrun.guard import UnsafeRepositoryError
from qola.gitrun.queries import head_sha
from qola.manifest import Dep, Manifest
from qola.repo import gitfiles
from qola.sync import developing, patches, signatures, tag_objects
from qola.sync.local_work import StatusEntry, half_made_changes, status
from qola.sync.observe import (
    DepState,
    SubmoduleState,
    observe,
    override_dir,
    own_series,
    submodule_states,
)
from qola.sync.patches import Series, SeriesError

# Kinds of problem. Only `overridden` is not a failure.
MISSING = "missing"
WRONG_COMMIT = "wrong-commit"
SUBMODULE = "submodule"
DIRTY = "dirty"
PATCHES = "patches"
GITLINK = "gitlink"
OVERRIDDEN = "overridden"
UNSAFE = "unsafe"  # git would run a repository's own command, or write outside the project
UNREACHABLE = "unreachable"  # only with --remote: the pin is not upstream in what it follows
TAG = "tag"  # the pin's label is a tag of the clone's own that names another commit
TAG_MOVED = "tag-moved"  # only with --remote: the pin's label names another commit upstream
ABBREVIATED = "abbreviated"  # only with --manifest-only: a legacy pin is not a full SHA
DEVELOPING = "developing"  # `qola develop NAME` marked it: a failure, CI is never green on it
SIGNATURE = "signature"  # the pin (or its label's tag) carries no good signature by a listed key
NOT_FAILURES = frozenset({OVERRIDDEN})
_NOT_READ = "its git dir lies outside the project, so its commit is not read"


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
    seconds: float = field(default=0.0, compare=False)  # how long checking it took (JUnit)
    own: Series | None = None  # its own patch series, split at its pin's nested submodules
    signed_by: str | None = None  # who signed the pin, when a key its manifest lists did
    signed_on: str | None = None  # what that signature is on: "tag v1.2", "commit 1a2b3c4d5e6f"

    @property
    def ok(self) -> bool:
        return not any(p.is_failure for p in self.problems)


@dataclass(frozen=True)
class Report:
    manifest: Manifest
    deps: tuple[DepReport, ...] = field(default_factory=tuple)
    checked: str | None = None  # what was read, when not the work tree (e.g. the index)

    @property
    def ok(self) -> bool:
        return all(d.ok for d in self.deps)


def verify(
    manifest: Manifest, deps: tuple[Dep, ...], runner: Runner, strict: bool = False
) -> Report:
    """Check every selected dependency; the tree, its index and its refs are left untouched."""
    # verify changes nothing: each repository is judged once; the keys that check
    # signatures live in a folder of qola's, removed at the end.
    with gitfiles.unchanging(), signatures.Keys() as keys:
        return _verify(manifest, deps, runner, strict, keys)


def _verify(
    manifest: Manifest, deps: tuple[Dep, ...], runner: Runner, strict: bool,
    keys: signatures.Keys,
) -> Report:
    links, unread = guarded(lambda: root_gitlinks(manifest, deps, runner))

    def check(dep: Dep) -> DepReport:
        started = time.monotonic()
        found = with_problem(_verify_one(manifest, dep, runner, strict, links, keys), unread)
        return replace(found, seconds=time.monotonic() - started)

    if len(deps) <= 1:
        return Report(manifest, tuple(map(check, deps)))
    # The dependencies are checked side by side: the time goes to waiting for git
    # processes (Python lets go of the GIL meanwhile). Each thread reads and runs git
    # in its own dependency only; the Runner's log and trusted set take appends and
    # adds, which the GIL keeps whole, and the shim's trust callback has its own lock.
    # Its version check runs here, once, before any thread can run git unchecked.
    runner.ensure_version()
    # The repositories qola will run git in, trusted in one step (not one shim write each).
    folders = [manifest.root / dep.path for dep in deps if override_dir(dep.name) is None]
    runner.trust_first([folder for folder in folders if gitfiles.git_dir(folder) is not None])
    pool = ThreadPoolExecutor(max_workers=min(len(deps), max(2, os.cpu_count() or 2)))
    try:
        futures = [pool.submit(check, dep) for dep in deps]
        # In manifest order; the first error (in that order) is raised as a loop would.
        return Report(manifest, tuple(future.result() for future in futures))
    finally:
        # Interrupted: what has not started never does; git calls under way finish.
        pool.shutdown(wait=True, cancel_futures=True)


def _verify_one(
    manifest: Manifest,
    dep: Dep,
    runner: Runner,
    strict: bool,
    root_gitlinks: dict[str, str | None],
    keys: signatures.Keys,
) -> DepReport:
    problems: list[Problem] = []
    try:
        return _check_one(manifest, dep, runner, strict, root_gitlinks, problems, keys)
    except UnsafeRepositoryError as error:
        # qola runs no git where a repository's own config would run a command or have a
        # checkout write out of the project: judged from its files alone, and failed.
        return _judged_from_files(manifest, dep, root_gitlinks, Problem(UNSAFE, error.problem))


def _judged_from_files(
    manifest: Manifest, dep: Dep, root_gitlinks: dict[str, str | None], unsafe: Problem
) -> DepReport:
    """What the files say of the commits (no git), plus why git was not run: never a
    commit at its pin that the files cannot show is."""
    try:
        state = observe(manifest, dep, None)
    except SeriesError as error:
        return DepReport(dep, dep.path, None, (Problem(PATCHES, error.problem), unsafe))
    problems = gitlink_problems(dep, root_gitlinks)
    if not state.at_target:
        seen = f"HEAD is {state.head[:12]}" if state.head else "HEAD cannot be read from its files"
        problems.append(Problem(WRONG_COMMIT, f"{seen}; the pin is {dep.commit[:12]}"))
    elif dep.submodules:
        subs = state.submodules
        if subs is None:
            problems.append(Problem(SUBMODULE, "its nested submodules cannot be read from files"))
        for sub in (s for top in subs or () for s in top.walk() if not s.at_target):
            at = sub.head[:12] if sub.head else "not initialised"
            shown = safetext.path(sub.path)
            problems.append(Problem(SUBMODULE, f"{shown} is {at}, not {sub.expected[:12]}",
                                    sub.path))  # fmt: skip
        for sub in (s for top in subs or () for s in top.walk() if s.head and not s.initialised):
            problems.append(_uninitialised(sub))
    return DepReport(dep, dep.path, state.head, (*problems, unsafe), state.submodules or ())


def _check_one(
    manifest: Manifest,
    dep: Dep,
    runner: Runner,
    strict: bool,
    root_gitlinks: dict[str, str | None],
    problems: list[Problem],
    keys: signatures.Keys,
) -> DepReport:
    try:
        state = observe(manifest, dep, None)
    except SeriesError as error:
        # Never green for a tree whose patches cannot even be read: report it, check the rest.
        problems.append(Problem(PATCHES, error.problem))
        state = observe(manifest, replace(dep, patches=None), None)
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
    if state.developing:
        said = "being developed" + developing.words(runner, state).removeprefix("developing")
        problems.append(Problem(DEVELOPING, f"{said}; "
                                f"{developing.ENDING.format(name=dep.name)}"))  # fmt: skip
        return DepReport(dep, where, state.head, tuple(problems))
    problems.extend(gitlink_problems(dep, root_gitlinks))
    if state.gitdir is None:
        _missing_problems(dep, state, problems)
        return DepReport(dep, where, None, tuple(problems))
    head, at_target, own = _commit_problems(runner, dep, state, problems)
    problems.extend(label_problems(runner, dep, state.worktree))
    signed = signed_on = None
    if dep.is_signed:
        verdict = signatures.check(runner, keys, dep, state.worktree, manifest.root)
        signed = verdict.signer
        signed_on = verdict.checked if signed else None
        if verdict.problem is not None:
            problems.append(Problem(SIGNATURE, verdict.problem))
    submodules = _submodule_problems(runner, dep, state, state.gitdir, head, at_target, problems)
    if not any(sub.refusal for top_sub in submodules for sub in top_sub.walk()):
        # Not below a refused nested submodule: git stops on it when it looks for changes
        # ("cannot chdir", "not a git repository"), and its problem fails the dependency.
        patched = frozenset(s.path for top in submodules for s in top.walk() if s.patched)
        problems.extend(_local_changes(runner, dep, state, strict, patched))
    return DepReport(dep, where, head, tuple(problems), submodules, own=own, signed_by=signed,
                     signed_on=signed_on)  # fmt: skip


def _missing_problems(dep: Dep, state: DepState, problems: list[Problem]) -> None:
    """Why a dependency with no git dir qola takes is missing, first in problems."""
    what = "does not exist" if not state.worktree.exists() else "is not a git repository"
    if isinstance(state.refusal, gitfiles.Outside):
        # Why (unsafe), and what it means for the commit: none is known (missing).
        problems[:0] = [
            Problem(MISSING, f"{dep.path} is not a repository qola takes: {_NOT_READ}"),
            Problem(UNSAFE, f"{dep.path}: {state.refusal}"),
        ]
        return
    if state.refusal is not None:
        what = f"is not a repository git accepts: {state.refusal}"
    problems.insert(0, Problem(MISSING, f"{dep.path} {what}"))


def _commit_problems(
    runner: Runner, dep: Dep, state: DepState, problems: list[Problem]
) -> tuple[str | None, bool, Series | None]:
    """(HEAD, whether it is where the pin and its patches put it, the dependency's own
    series); a commit that is not, first in problems."""
    head = state.head or head_sha(runner, state.worktree)
    # The split by nested submodule read with git where no record of it was found.
    top = own_series(runner, dep, state.series, state.worktree, state.gitdir, False)[0]
    # Every patch may reach into nested submodules only: then the pin itself is wanted.
    at_target = head is not None and head == (state.wanted if top else dep.commit)
    problem = None
    if top is not None and head is not None and not at_target:
        at_target, problem = _check_series(runner, state.worktree, dep.commit, head, top, state)
        if problem is not None:
            problems.insert(0, problem)
    if not at_target and problem is None:
        series = f" + {count(len(top.patches), 'patch', 'patches')}" if top else ""
        # A pin that is no commit (a tag's object) no HEAD can ever be: say what it is.
        found = tag_objects.look(runner, state.worktree, dep.commit)
        why = f": {found.problem()}" if found is not None else ""
        problems.insert(
            0,
            Problem(
                WRONG_COMMIT,
                f"HEAD is {head[:12] if head else 'not a commit'}, "
                f"the pin is {dep.commit[:12]}{series}{why}",
            ),
        )
    return head, at_target, top


def label_problems(runner: Runner, dep: Dep, worktree: Path) -> list[Problem]:
    """A `tag` problem when the clone has the pin's label as a tag of its own and that tag
    names another commit; none when it names the pin, or the clone has no such tag (a
    checkout by SHA fetches no tags: only `verify --remote` can then check the label)."""
    if dep.tag is None:
        return []
    named = queries.local_tag(runner, worktree, dep.tag)
    if named is None or named == dep.commit:
        return []
    return [
        Problem(
            TAG,
            f"the clone's tag {dep.tag} names {named[:12]}, not the pin {dep.commit[:12]}: "
            "the label and the pin disagree. qola verify --remote says what the tag names "
            "upstream; where it names the pin, the clone's tag is stale (`git -C "
            f"{shlex.quote(str(worktree))} fetch -q --force --no-tags {shlex.quote(dep.url)} "
            f"{shlex.quote(f'refs/tags/{dep.tag}:refs/tags/{dep.tag}')}` takes upstream's), "
            f"else the label is wrong (`qola bump {dep.name} --to {dep.commit}` relabels it)",
        )
    ]


def _submodule_problems(
    runner: Runner,
    dep: Dep,
    state: DepState,
    gitdir: Path,
    head: str | None,
    at_target: bool,
    problems: list[Problem],
) -> tuple[SubmoduleState, ...]:
    """The nested submodules (with submodules = true), each one's problems added."""
    submodules: tuple[SubmoduleState, ...] = ()
    if dep.submodules:
        # The gitlinks of the commit HEAD should be at (patches may change them).
        source = head if at_target and head else dep.commit
        found = submodule_states(runner, state.worktree, gitdir, source, False, state.series,
                                 "", dep.name)  # fmt: skip
        if found is None and at_target:
            problems.append(Problem(SUBMODULE, "cannot read the pinned commit's submodules"))
        submodules = found or ()
        for sub in (s for top_sub in submodules for s in top_sub.walk()):
            problems.extend(_check_submodule(runner, state, sub))
    elif any(repo for repo in state.series):
        problems.append(
            Problem(PATCHES, f"{dep.patches} has patches for nested submodules, but "
                    "submodules = false")
        )  # fmt: skip
    return submodules


def _local_changes(
    runner: Runner, dep: Dep, state: DepState, strict: bool, patched: frozenset[str]
) -> list[Problem]:
    """What differs in the dependency's files from its HEAD (untracked files with strict);
    patched: the nested submodules that carry a patch series."""
    problems = []
    if state.half_made:
        # With no index git sees every file as a staged deletion: what differs is what
        # differs from HEAD (an index made from it, elsewhere), beside the index itself.
        problems.append(Problem(DIRTY, "no index (its first checkout never finished, or "
                                ".git/index was removed)"))  # fmt: skip
        for path, kind, _ in half_made_changes(runner, state.worktree, dep.name, ""):
            if strict or kind != "untracked":
                problems.append(Problem(DIRTY, f"{path}: {kind}", path))
        return problems
    try:
        entries = _status(runner, state.worktree, dep.name, strict, patched)
    except GitError as error:
        # A nested submodule git cannot look into (with submodules = false nothing above
        # checked it) is a problem of the tree, not a failed command: say what git said,
        # and look at the dependency's own files (anything else fails again, and stops).
        said = error.problem.strip().splitlines()[-1].strip()
        entries = status(runner, state.worktree, dep.name, untracked=strict, submodules=False)
        problems.append(Problem(DIRTY, f"git status cannot look into a nested submodule: {said}"))
    for entry in entries:
        shown = safetext.path(entry.path)  # a name from the dependency, quoted as git does
        if entry.is_submodule:
            if entry.modified:
                problems.append(Problem(DIRTY, f"{shown}: modified content", entry.path))
            if strict and entry.untracked:
                problems.append(Problem(DIRTY, f"{shown}: untracked content", entry.path))
        elif entry.modified:
            problems.append(Problem(DIRTY, f"{shown}: modified", entry.path))
        elif strict and entry.untracked:
            problems.append(Problem(DIRTY, f"{shown}: untracked", entry.path))
    for path, how in hidden_changes(runner, state.worktree, dep.name):
        problems.append(Problem(DIRTY, f"{safetext.path(path)}: {how}", path))
    return problems


def _status(
    runner: Runner, tree: Path, subject: str, strict: bool, patched: frozenset[str],
    prefix: str = "",
) -> list[StatusEntry]:
    """git status of tree; a nested submodule above a patched one looked into instead:
    git counts the new commits of a submodule inside it (its series) as modified
    content, though each is checked against its series on its own."""
    found = []
    for entry in status(runner, tree, subject, untracked=strict):
        path = prefix + entry.path
        if entry.is_submodule and entry.modified and any(p.startswith(path + "/") for p in patched):
            found += _status(runner, tree / entry.path, subject, strict, patched, path + "/")
        else:
            found.append(replace(entry, path=path))
    return found


def _check_submodule(runner: Runner, state: DepState, sub: SubmoduleState) -> list[Problem]:
    if isinstance(sub.refusal, gitfiles.Outside):
        return [
            Problem(SUBMODULE, f"{safetext.path(sub.path)} is not a repository qola takes: "
                    f"{_NOT_READ}", sub.path),
            Problem(UNSAFE, f"{safetext.path(sub.path)}: {sub.refusal}", sub.path),
        ]  # fmt: skip
    if sub.refusal is not None:
        message = f"{safetext.path(sub.path)} is not a repository git accepts: {sub.refusal}"
        return [Problem(SUBMODULE, message, sub.path)]
    if sub.head is None:
        return [Problem(SUBMODULE, f"{safetext.path(sub.path)} is not initialised", sub.path)]
    if not sub.initialised:
        rest = _check_submodule(runner, state, replace(sub, initialised=True))
        return [_uninitialised(sub), *rest]
    if sub.at_target:
        return []
    series = sub.series
    if series is not None:
        tree = state.worktree / sub.path
        ok, problem = _check_series(runner, tree, sub.expected, sub.head, series, state)
        if ok:
            return []
        if problem is not None:
            message = f"{safetext.path(sub.path)}: {problem.message}"
            return [replace(problem, message=message, path=sub.path)]
    patched = f" + {count(len(series.patches), 'patch', 'patches')}" if series else ""
    return [
        Problem(
            SUBMODULE,
            f"{safetext.path(sub.path)} is at {sub.head[:12]}, the pinned commit records "
            f"{sub.expected[:12]}{patched}",
            sub.path,
        )
    ]


def _uninitialised(sub: SubmoduleState) -> Problem:
    return Problem(
        SUBMODULE,
        f"{safetext.path(sub.path)} is not initialised in its parent's config "
        "(git submodule status shows it with -)",
        sub.path,
    )


def _check_series(
    runner: Runner, tree: Path, base: str, head: str, series: Series, state: DepState
) -> tuple[bool, Problem | None]:
    """Is head exactly base + series? (False, None) when head is not base + patches at all."""
    names = [p.name for p in series.patches]
    if head == base:
        return False, Problem(PATCHES, f"the patch series is not applied ({', '.join(names)})")
    found = patches.on_head(runner, tree, base, head, len(names) + 20)
    if found is None:
        return False, None
    gitdir = gitfiles.git_dir(tree)
    applied = patches.remembered(gitdir, series, base) if gitdir else None
    if applied is None:
        try:
            # Worked out in a scratch object store: verify writes nothing.
            applied = patches.build(runner, tree, base, series, state.dep.name, scratch=True)
        except GitError as error:
            return False, Problem(PATCHES, " ".join(error.problem.split()))
    if head == applied.head:
        return True, None
    on_head = [name for _, name in found]
    changed = []
    if on_head == names:
        pairs = zip([sha for sha, _ in found], applied.chain, strict=False)
        changed = [names[i] for i, (a, b) in enumerate(pairs) if a != b][:1]
    described = patches.describe(on_head, names, changed)
    return False, Problem(PATCHES, f"the applied patches differ: {described}")


def gitlink_problems(dep: Dep, root_gitlinks: dict[str, str | None]) -> list[Problem]:
    """A `gitlink` problem when the root's index disagrees with the pin."""
    gitlink = root_gitlinks.get(dep.path, dep.commit)
    if gitlink is None:
        return [Problem(GITLINK, f"the root's gitlink for {dep.path} is in conflict")]
    if gitlink != dep.commit:
        return [
            Problem(
                GITLINK,
                f"the root records {dep.path} at {gitlink[:12]} but the manifest pins "
                f"{dep.commit[:12]}",
            )
        ]
    return []


def hidden_changes(runner: Runner, worktree: Path, subject: str) -> list[tuple[str, str]]:
    """Files whose change git status cannot see: assume-unchanged or skip-worktree, then edited."""
    # The flagged files (normally none) are compared with the index by hashing them
    # here, without filters: a file a clean filter would change is reported, never passed.
    found = []
    for entry in flagged.flagged_files(runner, worktree, subject):
        change = flagged.file_change(worktree / entry.path, entry.mode, entry.sha)
        if change:
            shown = os.fsencode(entry.path).decode("utf-8", errors="replace")  # as git's output
            found.append((shown, f"{change} (hidden by {entry.flag})"))
    return found


def guarded(
    read: Callable[[], dict[str, str | None]],
) -> tuple[dict[str, str | None], Problem | None]:
    """The root's gitlinks, or none and why, when qola runs no git in the root as it is: a
    problem of the root's, which every dependency's report then carries (each one's gitlink
    is unchecked), so that every format still has its document."""
    try:
        return read(), None
    except UnsafeRepositoryError as error:
        return {}, Problem(UNSAFE, f"the root's gitlinks are not read: {error.problem}")


def with_problem(report: DepReport, problem: Problem | None) -> DepReport:
    return report if problem is None else replace(report, problems=(*report.problems, problem))


def root_gitlinks(
    manifest: Manifest, deps: tuple[Dep, ...], runner: Runner
) -> dict[str, str | None]:
    """The gitlinks the root's index records at the deps' paths (one git call for all)."""
    return queries.root_gitlinks(runner, manifest.root, [dep.path for dep in deps])
