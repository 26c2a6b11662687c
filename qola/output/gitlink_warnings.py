"""Pins the root's gitlinks disagree with: the warning a CMake configure shows.

When it shows and what it costs the stamp: docs/cmake.md, "The warning when a pin and its
gitlink disagree"."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from qola.base import hints
from qola.repo import gitfiles
from qola.repo.index import gitlinks

if TYPE_CHECKING:
    from qola.gitrun.git import Runner
    from qola.manifest import Dep, Manifest

Pair = tuple[str, str]


def warnings(
    manifest: Manifest, deps: Sequence[Dep], runner: Runner | None = None
) -> tuple[list[str], list[Pair]] | None:
    """One warning per dependency whose pin the root's gitlink contradicts, and the stamp
    entries that keep them true (empty when there is no warning, or when no file can
    prove them). None when the index file cannot be read without git and no runner is
    given: then only the full command can tell."""
    gitdir = gitfiles.git_dir(manifest.root)
    if gitdir is None or not deps:
        return [], []
    index = gitdir / "index"
    found = gitlinks(gitdir)
    links: dict[str, str | None] = {}
    entries: list[Pair] = []
    if found is not None:
        links, data = found
        entries = [(str(index), "sha256:" + hashlib.sha256(data).hexdigest())]
    elif not index.exists():
        entries = [(str(index), "missing")]  # nothing staged yet: no gitlink anywhere
    elif runner is None:
        return None
    else:
        from qola.gitrun.queries import (
            index_gitlinks,  # lazy: git is asked only when the file is unsure
        )

        links = index_gitlinks(runner, manifest.root, [dep.path for dep in deps])
    texts = [_text(manifest, dep, links[dep.path]) for dep in deps
             if dep.path in links and links[dep.path] != dep.commit]  # fmt: skip
    return texts, entries if texts else []


def _text(manifest: Manifest, dep: Dep, link: str | None) -> str:
    agree = hints.qola_command("bump", dep.name, "--to", dep.commit, "-m", str(manifest.path))
    if link is None:
        found = f"the root's index holds {dep.path} in conflict"
    else:
        found = (
            f"the root's index records {dep.path} at {link[:12]}: the root's next commit "
            "would keep that commit as its gitlink"
        )
    return (
        f"{dep.name}: the manifest pins {dep.commit[:12]} but {found}. "
        f"To stage the pin as the gitlink, run:\n    {agree}"
    )
