"""What is on disk for each dependency: HEADs, nested submodules, local work.

`observe` reads files only (plus, once per new commit, a git call whose answer
is remembered); `observe_local_work` runs git and is for the paths that move
something.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base import names, safetext
from qola.gitrun import flagged
from qola.manifest import Dep, Manifest
from qola.repo import commitcache, configfile, gitfiles, trail
from qola.sync import patches, submodules
from qola.sync.patches import Series

if TYPE_CHECKING:
    from qola.gitrun.git import Runner
    from qola.sync.ignored import Way

_GITLINK = re.compile(r"^160000 commit ([0-9a-f]+)\t(.*)$", re.S)


@dataclass(frozen=True)
class Gitlink:
    """A submodule recorded in a commit: its path, name and pinned commit."""

    path: str
    name: str
    sha: str


@dataclass(frozen=True)
class SubmoduleState:
    """A nested submodule against the gitlink its parent's commit records."""

    path: str  # relative to the dependency's work tree
    expected: str  # the gitlink
    head: str | None  # None: not initialised
    children: tuple[SubmoduleState, ...] = ()
    patched: bool = False  # a patch series goes on top of the gitlink
    target: str | None = None  # gitlink + series, when known
    half_made: bool = False  # HEAD names a commit but no checkout ever finished (no index)
    refusal: str | None = None  # why git does not take it for a repository (head is None)
    # Initialised in its parent's config, as git counts it (`git submodule status`: not -).
    initialised: bool = True

    @property
    def wanted(self) -> str | None:
        """The commit HEAD should be at; None when a series' result is not known yet."""
        return self.target if self.patched else self.expected

    @property
    def at_target(self) -> bool:
        return self.head is not None and self.head == self.wanted

    @property
    def ok(self) -> bool:
        return (
            self.at_target
            and not self.half_made
            and self.initialised
            and all(c.ok for c in self.children)
        )

    def walk(self) -> list[SubmoduleState]:
        """This submodule and every one below it."""
        out = [self]
        for child in self.children:
            out.extend(child.walk())
        return out


@dataclass(frozen=True)
class DepState:
    """One dependency as found on disk."""

    dep: Dep
    worktree: Path
    exists: bool  # the folder exists and is not empty
    gitdir: Path | None
    head: str | None
    branch: str | None
    submodules: tuple[SubmoduleState, ...] | None  # against HEAD's gitlinks; None: unknown
    overridden: bool = False
    series: Mapping[str, Series] = field(default_factory=dict)  # "" and nested paths
    target: str | None = None  # pin + the dependency's own series, when known
    # A submodule of the root is initialised in the root's config (always True for others).
    initialised: bool = True
    half_made: bool = False  # HEAD names a commit but no checkout ever finished (no index)
    root: Path | None = None  # where the manifest's paths start
    manifest_path: Path | None = None
    refusal: str | None = None  # why git would not take the folder's .git for a repository
    moving: bool = False  # a record of a move that no run has finished (recovery.py)
    # Overridden: why the dependency's own folder in the project holds a repository qola
    # would refuse (no fast path answers for it then).
    own_refusal: str | None = None

    @property
    def is_repo(self) -> bool:
        return self.gitdir is not None

    @property
    def patched(self) -> bool:
        return "" in self.series

    @property
    def wanted(self) -> str | None:
        """The commit HEAD should be at; None when the series' result is not known yet."""
        return self.target if self.patched else self.dep.commit

    @property
    def at_pin(self) -> bool:
        return self.head is not None and self.head == self.dep.commit

    @property
    def at_target(self) -> bool:
        """HEAD is the pin, or the pin plus the patch series."""
        return self.head is not None and self.head == self.wanted

    @property
    def is_synced(self) -> bool:
        """HEAD and every nested submodule at their pins (and patches): nothing to do."""
        if not self.at_target or self.half_made or not self.initialised or self.moving:
            return False
        if not self.dep.submodules:
            return True
        return self.submodules is not None and all(s.ok for s in self.submodules)


@dataclass
class LocalWork:
    """Work in a dependency that moving it would lose."""

    dirty: list[str] = field(default_factory=list)  # "path: file" of modified tracked files
    unsaved: list[str] = field(default_factory=list)  # "path: sha subject" of unreachable commits
    dirty_trees: dict[str, Path] = field(default_factory=dict)  # label -> work tree, for hints
    commits: list[tuple[str, Path, str]] = field(default_factory=list)  # (label, tree, SHA)
    no_index: set[str] = field(default_factory=set)  # labels of dirty trees with no index
    untracked: set[str] = field(default_factory=set)  # labels of trees with untracked files
    # label -> files (from that repository) flagged assume-unchanged or skip-worktree and
    # edited: git stash and status see them only once the flag is cleared.
    hidden: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # label, flag, files
    ways: list[Way] = field(default_factory=list)  # ignored files in a checkout's way (ways.py)

    def __bool__(self) -> bool:
        return bool(self.dirty or self.unsaved or self.ways)


def override_dir(name: str) -> Path | None:
    """The QOLA_SOURCE_DIR_<NAME> folder for a dependency, when one is set."""
    value = os.environ.get(names.override_variable(name))
    return Path(os.path.abspath(value)) if value else None


def observe(
    manifest: Manifest, dep: Dep, runner: Runner | None, write_cache: bool = False
) -> DepState:
    """The dependency's state, read from its files (git runs only for an unseen commit).

    Raises SeriesError when the dependency's patch folder cannot be read.
    """
    override = override_dir(dep.name)
    if override is not None:
        # The dependency's own folder stays in the project, where git in the root reaches
        # it (and verify, which runs git there, refuses what qola refuses in it): looked at
        # as without the override, what is read noted for a stamp.
        own = own_folder_refusal(manifest, dep)
        # An override is used as it is: nothing in it changes the answer, and its
        # repository may be anywhere (the user named the folder).
        with trail.paused(), gitfiles.chosen_by_user():
            state = _observe(manifest, dep, runner, write_cache, override)
        return replace(state, own_refusal=own) if own is not None else state
    return _observe(manifest, dep, runner, write_cache, None)


def own_folder_refusal(manifest: Manifest, dep: Dep) -> str | None:
    """Why the dependency's own folder in the project (or, for a submodule of the root,
    its git dir under the root's modules/) holds a repository qola would not take, with
    or without an override; None when it holds none, or one qola takes. Files only, and
    not its HEAD's branch or commit: what the override stands for."""
    _, refusal = gitfiles.inspect(manifest.root / dep.path)
    if refusal is not None:
        return f"{dep.path} is not a repository git accepts ({refusal})"
    if dep.submodule_name is not None:
        return gitfiles.modules_dir_problem(manifest.root, dep.submodule_name)
    return None


def _observe(
    manifest: Manifest, dep: Dep, runner: Runner | None, write_cache: bool, override: Path | None
) -> DepState:
    worktree = override or manifest.root / dep.path
    gitdir, refusal = gitfiles.inspect(worktree)
    # A file where the folder should be counts as existing: it must never be replaced.
    exists = gitfiles.is_populated(worktree) or (worktree.exists() and not worktree.is_dir())
    series = {} if override else patches.load(manifest.root, dep)
    if dep.patches is not None and not override:
        folder = manifest.root / dep.patches
        trail.saw_patches(folder, [p.name for s in series.values() for p in s.patches])
        for patch in (p for s in series.values() for p in s.patches):
            trail.saw_file(patch.path, patch.data)
    if gitdir is None:
        return DepState(
            dep, worktree, exists, None, None, None, None, override is not None, series,
            root=manifest.root, manifest_path=manifest.path, refusal=refusal,
        )  # fmt: skip
    head, branch = gitfiles.read_head(gitdir)
    if head is None and runner is not None:
        from qola.gitrun import queries  # lazy: git runs only here: not on the no-op path

        head = queries.head_sha(runner, worktree)
        trail.cannot_prove(f"{worktree}: git read its HEAD")  # no file of it says so
    initialised = override is not None or is_initialised_in_root(manifest.root, dep)
    half_made = head is not None and not gitfiles.has_index(gitdir)
    moving = override is None and gitfiles.move_recorded(gitdir)
    target = None
    if "" in series:
        applied = patches.remembered(gitdir, series[""], dep.commit)
        target = applied.head if applied else None
    nested = None
    if dep.submodules and head is not None:
        writes = write_cache and runner is not None
        nested = submodule_states(runner, worktree, gitdir, head, writes, series)
    return DepState(
        dep, worktree, exists, gitdir, head, branch, nested, override is not None, series,
        target, initialised, half_made, manifest.root, manifest.path, moving=moving,
    )  # fmt: skip


def is_initialised_in_root(root: Path, dep: Dep) -> bool:
    """False only for a submodule of the root that the root's config does not initialise."""
    if dep.submodule_name is None or submodules.config_file(root) is None:
        return True
    return submodules.is_initialised(root, dep.submodule_name, dep.path)


def gitlinks(
    runner: Runner | None, worktree: Path, gitdir: Path, sha: str, write_cache: bool
) -> list[Gitlink] | None:
    """The submodules a commit records; remembered per commit, since that never changes."""
    cached = commitcache.read_commit_cache(gitdir, sha)
    items = cached.get("gitlinks") if cached is not None else None
    if isinstance(items, list) and all(
        isinstance(i, list) and len(i) == 3 and all(isinstance(x, str) for x in i) for i in items
    ):
        return [Gitlink(*item) for item in items]
    if runner is None:
        return None
    out = runner.run(worktree, "ls-tree", "-r", "-z", "--end-of-options", sha, check=False)
    if out.status != 0:
        return None
    links: dict[str, str] = {}
    has_gitmodules = False
    for record in out.stdout.split("\0"):
        match = _GITLINK.match(record)
        if match:
            links[match.group(2)] = match.group(1)
        has_gitmodules = has_gitmodules or record.endswith("\t.gitmodules")
    result: list[Gitlink] = []
    if links:
        modules = []
        if has_gitmodules:
            spec = f"{sha}:.gitmodules"
            blob = runner.run(worktree, "cat-file", "blob", "--end-of-options", spec, check=False)
            if blob.status != 0:
                return None  # unknown is not "no submodules": nothing is cached
            read = configfile.submodules(blob.stdout)  # as git reads it
            if read is None:
                return None  # git rejects it: unknown, not "no submodules"
            modules = read
        by_path = {m.path: m for m in modules}
        for path, link_sha in sorted(links.items()):
            module = by_path.get(path)
            # git submodule update skips these too: no .gitmodules entry, or update = none.
            if module is None or module.update == "none":
                continue
            result.append(Gitlink(path, module.name, link_sha))
    data = [[g.path, g.name, g.sha] for g in result]
    if not (write_cache and commitcache.write_commit_cache(gitdir, sha, {"gitlinks": data})):
        # Read by git alone: a look without git finds no gitlinks here (none remembered).
        trail.cannot_prove(f"{worktree}: git read the gitlinks of {sha}")
    return result


def submodule_states(
    runner: Runner | None,
    worktree: Path,
    gitdir: Path,
    sha: str,
    write_cache: bool,
    series: Mapping[str, Series] | None = None,
    prefix: str = "",
) -> tuple[SubmoduleState, ...] | None:
    """Every nested submodule below worktree against the gitlinks of commit sha.

    Paths are relative to the dependency (prefix: where worktree is in it); series
    are the dependency's patch series by those paths.
    """
    links = gitlinks(runner, worktree, gitdir, sha, write_cache)
    if links is None:
        return None
    # Asked before looking below: each repository's config is parsed once (sync/submodules.py).
    config = gitfiles.common_dir(gitdir) / "config"
    initialised = {
        link.name: submodules.is_initialised_by(config, link.name, link.path) for link in links
    }
    states = []
    for link in links:
        path = prefix + link.path
        sub_tree = worktree / link.path
        linked = _linked_folder(worktree, link.path)
        if linked is None:
            sub_gitdir, refusal = gitfiles.inspect(sub_tree)
        else:
            sub_gitdir, refusal = None, f"{linked} is a symlink, which git does not follow"
        head = None
        children: tuple[SubmoduleState, ...] = ()
        sub_series = (series or {}).get(path)
        target = None
        half_made = False
        if sub_gitdir is not None:
            head, _ = gitfiles.read_head(sub_gitdir)
            if head is None and runner is not None:
                from qola.gitrun import queries  # lazy: only where git runs

                head = queries.head_sha(runner, sub_tree)
                trail.cannot_prove(f"{sub_tree}: git read its HEAD")
            half_made = head is not None and not gitfiles.has_index(sub_gitdir)
            if sub_series is not None:
                applied = patches.remembered(sub_gitdir, sub_series, link.sha)
                target = applied.head if applied else None
            if head is not None:
                found = submodule_states(
                    runner, sub_tree, sub_gitdir, head, write_cache, series, path + "/"
                )
                if found is None:
                    return None
                children = found
        states.append(
            SubmoduleState(
                path, link.sha, head, children, sub_series is not None, target, half_made,
                refusal, initialised[link.name],
            )
        )
    return tuple(states)


def _linked_folder(worktree: Path, path: str) -> str | None:
    """The first folder of path (below worktree) that is a symlink, or None.

    git neither reads nor checks out a submodule through a symlink ("expected … not
    to be a symbolic link"); where the submodule's folder really is counts for a stamp.
    """
    current = worktree
    for part in path.split("/"):
        current = current / part
        if current.is_symlink():
            return str(current.relative_to(worktree))
    trail.saw_folder(current)  # a symlink appearing on the way changes where it leads
    return None


def observe_local_work(
    runner: Runner, state: DepState, moving: list[str], head_moves: bool
) -> LocalWork:
    """What moving the dependency (and the nested submodules in `moving`) would lose.

    A repository with no index (half-made: a clone git or a killed run left, or the
    user's `rm .git/index`) is compared with HEAD through an index made from HEAD
    (qola/sync/unfinished.py): every file that differs from HEAD but by being missing, and
    every untracked file, is local work; so is a commit only it has.
    """
    work = LocalWork()
    nested = {s.path: s for top in state.submodules or () for s in top.walk()}
    half_made = {path for path, s in nested.items() if s.half_made}
    if state.half_made:
        changes = half_made_changes(runner, state.worktree, state.dep.name, "")
    else:
        changes = _modified(runner, state.worktree, state.dep.name, "", half_made)
    for sub in sorted(half_made):
        if head_moves or any(_overlaps(sub, m) for m in moving):
            changes += half_made_changes(runner, state.worktree / sub, state.dep.name, sub + "/")
    hidden = hidden_changes(runner, state.worktree, state.dep.name, set(nested) - half_made)
    for path, kind, repo in changes + hidden:
        if head_moves or any(_overlaps(path, m) for m in moving):
            work.dirty.append(f"{safetext.path(f'{state.dep.path}/{path}')} ({kind})")
            label = f"{state.dep.path}/{repo}" if repo else state.dep.path
            work.dirty_trees.setdefault(label, state.worktree / repo)
            if repo in half_made or (not repo and state.half_made):
                work.no_index.add(label)
            if kind == _UNTRACKED:
                work.untracked.add(label)
            if _HIDDEN in kind:
                flags = work.hidden.setdefault(label, {})
                flag = kind.rsplit(" ", 1)[1]
                flags.setdefault(flag, []).append(path[len(repo) + 1 if repo else 0 :])
    if head_moves and state.head is not None:
        # The pin is where HEAD goes: what it holds stays. What the root records (its
        # index or HEAD gitlink, the pin in its HEAD's manifest) excuses nothing: a commit
        # that exists only in this repository is the user's, whoever staged it.
        found = unsaved_commits(runner, state.worktree, (state.dep.commit,))
        _add_unsaved(work, found, state.worktree, state.dep.path)
    for sub in moving:
        sub_tree = state.worktree / sub
        if gitfiles.git_dir(sub_tree) is not None:
            # A half-made nested submodule at its gitlink is one qola's own population
            # left (HEAD written, killed before the index): its commit, recorded by the
            # parent's, is not the user's alone even when no ref holds it yet.
            state_of = nested.get(sub)
            kept = (state_of.expected,) if state_of is not None and state_of.half_made else ()
            label = f"{state.dep.path}/{sub}"
            _add_unsaved(work, unsaved_commits(runner, sub_tree, kept), sub_tree, label)
    return work


_UNTRACKED = "untracked"
_HIDDEN = "hidden from git status by"


def hidden_changes(
    runner: Runner, worktree: Path, subject: str, repos: set[str]
) -> list[tuple[str, str, str]]:
    """(path, kind, repository) of edited files flagged assume-unchanged or skip-worktree:
    local work git status cannot see, which `reset --hard` and a checkout write over. A
    skip-worktree file that is missing is what a sparse checkout leaves, nobody's work."""
    found = []
    for entry in flagged.flagged_files(runner, worktree, subject):
        change = flagged.file_change(worktree / entry.path, entry.mode, entry.sha)
        if change is None or change == "deleted":
            continue
        repo = max((r for r in repos if entry.path.startswith(r + "/")), key=len, default="")
        kind = f"{change}, {_HIDDEN} {entry.flag}"
        found.append((entry.path, kind, repo))
    return found


def half_made_changes(
    runner: Runner, tree: Path, subject: str, prefix: str
) -> list[tuple[str, str, str]]:
    """(path, kind, repository) of what a repository with no index holds that HEAD does
    not: modified and untracked files (a missing one is what an unfinished checkout
    leaves); nested submodules are looked at on their own."""
    from qola.sync import unfinished  # lazy: a half-made first checkout only

    found = []
    with unfinished.head_index(runner, tree, subject) as env:
        entries = status(runner, tree, subject, untracked=True, submodules=False, env=env)
    for entry in entries:
        if entry.untracked:
            found.append((prefix + entry.path, _UNTRACKED, prefix.rstrip("/")))
        elif entry.modified and not entry.missing:
            found.append((prefix + entry.path, "modified", prefix.rstrip("/")))
    return found


def _modified(
    runner: Runner, tree: Path, subject: str, prefix: str, half_made: set[str]
) -> list[tuple[str, str, str]]:
    """(path, kind, repository) of modified tracked files below tree (paths from the
    dependency; the repository holding the change), half-made submodules left out
    (looked at on their own)."""
    found = []
    for entry in status(runner, tree, subject, untracked=False):
        path = prefix + entry.path
        if not entry.modified or path in half_made:
            continue  # a nested submodule at another commit: moving it is the point
        if entry.is_submodule and any(h.startswith(path + "/") for h in half_made):
            # Its "modified content" may be only the half-made one below: look inside.
            found += _modified(runner, tree / entry.path, subject, path + "/", half_made)
            continue
        if entry.is_submodule:
            found.append((path, "modified content in submodule", path))
        else:
            found.append((path, "modified", prefix.rstrip("/")))
    return found


@dataclass(frozen=True)
class StatusEntry:
    """One line of `git status --porcelain=v2`: a changed path, maybe a nested submodule."""

    path: str
    is_submodule: bool = False
    modified: bool = True  # tracked changes (for a submodule: inside it)
    untracked: bool = False  # an untracked file (for a submodule: inside it)
    missing: bool = False  # a tracked file deleted from the work tree, nothing else changed


def status(
    runner: Runner,
    worktree: Path,
    subject: str,
    untracked: bool,
    submodules: bool = True,
    env: Mapping[str, str] | None = None,
) -> list[StatusEntry]:
    """Changed paths in a work tree and, recursively, its nested submodules (unless told
    not to look into them); writes nothing. env may name another index."""
    out = runner.run(
        worktree,
        "--no-optional-locks",  # a read must not refresh (rewrite) the index
        "status",
        "--porcelain=v2",
        "-z",
        f"--untracked-files={'all' if untracked else 'no'}",
        f"--ignore-submodules={'none' if submodules else 'all'}",
        subject=subject,
        env=env,
    )
    return parse_status(out.stdout)


def parse_status(text: str) -> list[StatusEntry]:
    """Entries of `status --porcelain=v2 -z` output."""
    entries = []
    records = text.split("\0")
    i = 0
    while i < len(records):
        record = records[i]
        i += 1
        if not record:
            continue
        kind = record[0]
        if kind == "?":
            entries.append(StatusEntry(record[2:], modified=False, untracked=True))
            continue
        fields = record.split(" ")
        if kind == "1" and len(fields) >= 9:
            path = record.split(" ", 8)[8]
        elif kind == "2" and len(fields) >= 10:
            path = record.split(" ", 9)[9]
            i += 1  # the original path follows in its own record
        elif kind == "u" and len(fields) >= 11:
            path = record.split(" ", 10)[10]
        else:
            continue
        sub = fields[2]
        if sub.startswith("S"):
            # A staged change of the gitlink itself (removed, added, another commit
            # staged) is a change to the tree too, not only modified content inside.
            staged = fields[1][0] != "."
            entries.append(StatusEntry(path, True, staged or sub[2] == "M", sub[3] == "U"))
        else:
            entries.append(StatusEntry(path, missing=kind == "1" and fields[1] == ".D"))
    return entries


def _overlaps(a: str, b: str) -> bool:
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _add_unsaved(
    work: LocalWork, found: list[tuple[str, str]], worktree: Path, label: str
) -> None:
    for sha, subject in found:
        work.unsaved.append(f"{label}: {sha[:7]} {subject}")
        work.commits.append((label, worktree, sha))


def unsaved_commits(
    runner: Runner, worktree: Path, kept: tuple[str, ...] = ()
) -> list[tuple[str, str]]:
    """(SHA, subject) of commits on HEAD that only this repository has, and that moving
    would lose (queries.only_here); kept: the commits HEAD goes to."""
    from qola.gitrun import queries  # lazy: git runs only here, not on the no-op path

    return queries.only_here(runner, worktree, "HEAD", kept) or []
