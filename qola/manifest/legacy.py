"""Expand the abbreviated SHAs that legacy `[qola] <name>_commit` manifests may carry."""

from __future__ import annotations

import dataclasses

from qola.base.errors import ManifestError
from qola.gitrun.git import Runner
from qola.gitrun.queries import commit_sha, root_gitlinks
from qola.manifest import Dep, Manifest
from qola.repo import gitfiles


def resolve(manifest: Manifest, deps: tuple[Dep, ...], runner: Runner) -> tuple[Dep, ...]:
    """The deps with abbreviated pins expanded locally (root gitlink, else the dep's repo)."""
    return tuple(_resolve_one(manifest, dep, runner) if dep.is_abbreviated else dep for dep in deps)


def _resolve_one(manifest: Manifest, dep: Dep, runner: Runner) -> Dep:
    candidates = set()
    link = root_gitlinks(runner, manifest.root, [dep.path]).get(dep.path)
    if link and link.startswith(dep.commit):
        candidates.add(link)
    worktree = manifest.root / dep.path
    if not candidates and gitfiles.git_dir(worktree) is not None:
        found = commit_sha(runner, worktree, dep.commit)
        if found:
            candidates.add(found)
    if len(candidates) != 1:
        why = "ambiguous" if candidates else "not in the root's gitlink nor in the checkout"
        raise ManifestError(
            f"{manifest.path}:{dep.line}" if dep.line else str(manifest.path),
            f"{dep.key}: cannot expand the abbreviated SHA {dep.commit!r} locally ({why})",
            # Not `qola freeze`: it writes what is checked out, which for a pin just moved
            # is the old commit. A remote is asked for a commit by its full SHA only.
            "write the full 40-hex SHA in its place",
        )
    return dataclasses.replace(dep, commit=candidates.pop(), abbreviated_from=dep.commit)
