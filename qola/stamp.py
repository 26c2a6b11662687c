"""Stamps: what must stay as it is on disk for a checkout's answer to stay true.

A stamp is a list of (path, expectation) pairs. An expectation is `missing`,
`dir`, `sha256:<hex>` (a file's content), `glob:<hex>` (the sorted `*.patch`
files below a folder, as CMake's GLOB_RECURSE lists them) or `realpath:<hex>`
(the sha256 of the path with every symlink resolved: the manifest's check that
no path leaves the root through a symlink depends on it). Every repository
HEAD must be detached: a symbolic HEAD can move without its file changing.

QoLA.cmake checks the stamp in the CMake results file to skip starting
Python; qola/noop.py checks one it keeps in the root repository's git dir to
skip reading the manifest. Both are taken with `proven`; checking (`holds`)
needs only hashlib and os.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qola.manifest import Dep, Manifest

_DETACHED_HEAD = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?\n?$")


def entries(
    manifest: Manifest, deps: Sequence[tuple[str, Path]]
) -> list[tuple[Path, str]] | None:
    """The pairs that prove the checkout of deps (name, source folder) unchanged, or None."""
    version = Path(__file__).with_name("__init__.py")  # another qola may decide otherwise
    pairs: list[tuple[Path, str]] = [
        (version, expect(version)),
        (manifest.path, expect(manifest.path)),
        (manifest.root / ".gitmodules", expect(manifest.root / ".gitmodules")),
        *_root_lookup_entries(manifest.path.parent),
    ]
    # What loading the manifest checks of every dependency, selected or not: where its
    # folders lead (symlinks), and the root's remote URL that relative submodule URLs
    # are resolved against.
    pairs.append((manifest.root, expect_realpath(manifest.root)))
    for declared in manifest.deps:
        for relative in (declared.path, declared.patches):
            if relative is not None:
                folder = manifest.root / relative
                pairs.append((folder, expect_realpath(folder)))
    config = _root_config(manifest.root)
    if config is not None:
        pairs.append((config, expect(config)))
    by_name = {dep.name: dep for dep in manifest.deps}
    for name, source_dir in deps:
        dep = by_name.get(name)
        if dep is None:
            return None
        if dep.patches:
            folder = manifest.root / dep.patches
            pairs.append((folder, expect_patches(folder)))
            pairs += [(p, expect(p)) for p in patch_files(folder)]
        worktree = manifest.root / dep.path
        if os.path.realpath(worktree) != os.path.realpath(source_dir):
            continue  # overridden: used as it is, nothing to prove
        repo_pairs = _repository_entries(worktree, dep.submodules)
        if repo_pairs is None:
            return None
        pairs += repo_pairs
    return pairs


def proven(
    manifest: Manifest, deps: Sequence[Dep], look: Callable[[], bool] | None = None
) -> list[tuple[Path, str]] | None:
    """The entries for deps, kept only when they read the same before and after look()
    confirms the tree (default: every dependency at its pin or overridden, from files).

    Another run may move a dependency while this one looks: a stamp taken only before or
    only after could then vouch for files that were never seen at their pins. look()
    runs even when no stamp can be had (its answer may be what the caller is after).
    """
    from qola.observe import override_dir

    sources = [(d.name, override_dir(d.name) or manifest.root / d.path) for d in deps]
    before = entries(manifest, sources)
    seen = (look or (lambda: _at_pins(manifest, deps)))()
    if before is None or not seen:
        return None
    return before if entries(manifest, sources) == before else None


def _at_pins(manifest: Manifest, deps: Sequence[Dep]) -> bool:
    from qola.errors import QolaError
    from qola.observe import observe

    try:
        states = [observe(manifest, dep, None) for dep in deps]
    except QolaError:
        return False
    return all(state.is_synced or state.overridden for state in states)


def holds(pairs: Iterable[tuple[str, str]]) -> bool:
    """True when every path still meets its expectation (an unknown expectation: False)."""
    for path, expectation in pairs:
        if expectation == "missing":
            if os.path.exists(path):
                return False
        elif expectation == "dir":
            if not os.path.isdir(path):
                return False
        elif expectation.startswith("sha256:"):
            try:
                with open(path, "rb") as handle:
                    if hashlib.sha256(handle.read()).hexdigest() != expectation[7:]:
                        return False
            except OSError:  # missing, or a folder
                return False
        elif expectation.startswith("glob:"):
            if not os.path.isdir(path) or expect_patches(Path(path)) != expectation:
                return False
        elif expectation.startswith("realpath:"):
            if expect_realpath(path) != expectation:
                return False
        else:
            return False
    return True


def expect(path: Path) -> str:
    if path.is_dir():
        return "dir"
    try:
        return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "missing"


def expect_realpath(path: str | Path) -> str:
    """The same digest as QoLA.cmake's: sha256 of file(REAL_PATH)'s bytes."""
    return "realpath:" + hashlib.sha256(os.fsencode(os.path.realpath(path))).hexdigest()


def _root_config(root: Path) -> Path | None:
    from qola import gitfiles

    gitdir = gitfiles.git_dir(root)
    return None if gitdir is None else gitfiles.common_dir(gitdir) / "config"


def patch_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.patch") if p.is_file())


def expect_patches(folder: Path) -> str:
    """The same digest as QoLA.cmake's: sorted relative paths, joined by `;`."""
    relative = sorted(p.relative_to(folder).as_posix() for p in patch_files(folder))
    return "glob:" + hashlib.sha256(";".join(relative).encode("utf-8")).hexdigest()


def _root_lookup_entries(folder: Path) -> list[tuple[Path, str]]:
    """The `.git` of each folder the default root lookup visits: one appearing moves the root."""
    pairs = []
    for current in [folder, *folder.parents]:
        expectation = expect(current / ".git")
        pairs.append((current / ".git", expectation))
        if expectation != "missing":
            break
    return pairs


def _repository_entries(worktree: Path, recurse: bool) -> list[tuple[Path, str]] | None:
    """What must stay as it is in a work tree (and its submodules) for HEAD to stay put."""
    from qola import gitfiles
    from qola.observe import gitlinks

    dotgit = worktree / ".git"
    gitdir = gitfiles.git_dir(worktree)
    if gitdir is None:
        return None
    head = gitdir / "HEAD"
    try:
        text = head.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return None
    if not _DETACHED_HEAD.match(text):
        return None
    pairs = [(dotgit, expect(dotgit)), (head, expect(head))]
    if not recurse:
        return pairs
    gitmodules = worktree / ".gitmodules"
    pairs.append((gitmodules, expect(gitmodules)))
    # The nested submodules are those HEAD's commit records (what the checkout and its
    # check follow), not what the work tree's .gitmodules says now: remembered per commit.
    links = gitlinks(None, worktree, gitdir, text.strip(), write_cache=False)
    if links is None:
        return None  # not remembered: nothing to prove them with
    for link in links:
        sub = worktree / link.path
        if not (sub / ".git").exists():
            pairs.append((sub / ".git", "missing"))  # left uninitialised by the checkout
            continue
        nested = _repository_entries(sub, True)
        if nested is None:
            return None
        pairs += nested
    return pairs
