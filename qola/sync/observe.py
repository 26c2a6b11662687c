"""What is on disk for each dependency: HEADs, nested submodules, their state.

`observe` reads files only (plus, once per new commit, a git call whose answer
is remembered); what a move would lose is sync/local_work.py's, which runs git.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base import names
from qola.manifest import Dep, Manifest
from qola.repo import commitcache, configfile, gitfiles, trail
from qola.repo.develop_marks import is_marked
from qola.sync import patches, submodules
from qola.sync.patches import Series

if TYPE_CHECKING:
    from qola.gitrun.git import Runner

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
    series: Series | None = None  # the patch series that goes on top of the gitlink
    target: str | None = None  # gitlink + series, when known
    half_made: bool = False  # HEAD names a commit but no checkout ever finished (no index)
    refusal: str | None = None  # why git does not take it for a repository (head is None)
    # Initialised in its parent's config, as git counts it (`git submodule status`: not -).
    initialised: bool = True

    @property
    def patched(self) -> bool:
        return self.series is not None

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
    # The patch folder's series by the repository each folder names ("" and nested paths),
    # before any is split by submodule; what each repository gets: own, SubmoduleState.
    series: Mapping[str, Series] = field(default_factory=dict)
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
    # A submodule of the root: the root's config says whether a fetch or pull in the root
    # recurses into it (always True for others).
    fetch_stopped: bool = True
    # `qola develop NAME` marked it in this checkout: used as the developer has it.
    developing: bool = False
    own: Series | None = None  # the dependency's own series (its part of each patch)

    @property
    def is_repo(self) -> bool:
        return self.gitdir is not None

    @property
    def patched(self) -> bool:
        return self.own is not None

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
        if not self.fetch_stopped:
            return False
        if not self.dep.submodules:
            return True
        return self.submodules is not None and all(s.ok for s in self.submodules)


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
    state = _observe(manifest, dep, runner, write_cache, None)
    return replace(state, developing=True) if is_marked(manifest.root, dep.name) else state


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
    fetch_stopped = override is not None or is_fetch_stopped_in_root(manifest.root, dep)
    half_made = head is not None and not gitfiles.has_index(gitdir)
    moving = override is None and gitfiles.move_recorded(gitdir)
    target = None
    writes = write_cache and runner is not None
    own, known = own_series(runner, dep, series, worktree, gitdir, writes)
    if own is not None and known:
        applied = patches.remembered(gitdir, own, dep.commit)
        target = applied.head if applied else None
    nested = None
    if dep.submodules and head is not None:
        nested = submodule_states(runner, worktree, gitdir, head, writes, series, "", dep.name)
    return DepState(
        dep, worktree, exists, gitdir, head, branch, nested, override is not None, series,
        target, initialised, half_made, manifest.root, manifest.path, moving=moving, own=own,
        fetch_stopped=fetch_stopped,
    )  # fmt: skip


def own_series(
    runner: Runner | None, dep: Dep, layout: Mapping[str, Series], worktree: Path,
    gitdir: Path | None, write_cache: bool,
) -> tuple[Series | None, bool]:
    """The dependency's own series, split at the nested submodules its pin records, and
    whether that split is known (those read; else split at none, and not to be trusted)."""
    if "" not in layout:
        return None, True
    if not (dep.submodules and patches.reaches(layout, "", deeper=True)):
        return patches.split(layout, "", (), dep.name), True
    links = gitlinks(runner, worktree, gitdir, dep.commit, write_cache) if gitdir else None
    inner = [link.path for link in links or ()]
    return patches.split(layout, "", inner, dep.name), links is not None


def nested_series(
    runner: Runner | None, layout: Mapping[str, Series], path: str, tree: Path,
    gitdir: Path | None, link: str, write_cache: bool, subject: str,
) -> tuple[Series | None, bool]:
    """The series of the nested submodule at path (its gitlink: link), split at the
    submodules that commit records, and whether that split is known."""
    if not patches.reaches(layout, path):
        return None, True
    if not patches.reaches(layout, path, deeper=True):
        return patches.split(layout, path, (), subject), True
    links = gitlinks(runner, tree, gitdir, link, write_cache) if gitdir else None
    inner = [f"{path}/{item.path}" for item in links or ()]
    return patches.split(layout, path, inner, subject), links is not None


def is_initialised_in_root(root: Path, dep: Dep) -> bool:
    """False only for a submodule of the root that the root's config does not initialise."""
    if dep.submodule_name is None or submodules.config_file(root) is None:
        return True
    return submodules.is_initialised(root, dep.submodule_name, dep.path)


def is_fetch_stopped_in_root(root: Path, dep: Dep) -> bool:
    """False only for a submodule of the root whose root config does not say whether a
    fetch in the root recurses into it (qola writes false: submodules.stop_recursive_fetch)."""
    if dep.submodule_name is None or submodules.config_file(root) is None:
        return True
    return submodules.fetches_on_its_own(root, dep.submodule_name)


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
    subject: str = "",
) -> tuple[SubmoduleState, ...] | None:
    """Every nested submodule below worktree against the gitlinks of commit sha.

    Paths are relative to the dependency (prefix: where worktree is in it); series
    are the dependency's patch folders by those paths (DepState.series), each
    submodule's own series split from them; subject names the dependency in errors.
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
        sub_series, known = nested_series(
            runner, series or {}, path, sub_tree, sub_gitdir, link.sha, write_cache, subject
        )
        target = None
        half_made = False
        if sub_gitdir is not None:
            head, _ = gitfiles.read_head(sub_gitdir)
            if head is None and runner is not None:
                from qola.gitrun import queries  # lazy: only where git runs

                head = queries.head_sha(runner, sub_tree)
                trail.cannot_prove(f"{sub_tree}: git read its HEAD")
            half_made = head is not None and not gitfiles.has_index(sub_gitdir)
            if sub_series is not None and known:
                applied = patches.remembered(sub_gitdir, sub_series, link.sha)
                target = applied.head if applied else None
            if head is not None:
                found = submodule_states(
                    runner, sub_tree, sub_gitdir, head, write_cache, series, path + "/", subject
                )
                if found is None:
                    return None
                children = found
        states.append(
            SubmoduleState(
                path, link.sha, head, children, sub_series, target, half_made,
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


