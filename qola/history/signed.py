"""A new pin of a dependency whose manifest lists who may sign it: signed so, or refused
(exit 4) unless --allow-unsigned, before anything is written.

The commit is checked where it is: the dependency's clone when it holds it (and the tag of
its label), else a scratch repository that fetches the commit alone (commits only, one
deep) and the tag of the label, which is what `verify` checks once it is checked out."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from qola.base.errors import RefusedError
from qola.gitrun import queries
from qola.history import scratch
from qola.repo import gitfiles
from qola.sync import signatures

if TYPE_CHECKING:
    from qola.gitrun.git import Runner
    from qola.manifest import Dep, Manifest

ALLOWED = "Pinned with --allow-unsigned"  # how a commit message records what was let through


def check(runner: Runner, manifest: Manifest, dep: Dep, sha: str, tag: str | None,
          offline: bool, allow_unsigned: bool) -> str | None:  # fmt: skip
    """None when dep lists no keys or sha (or its label tag) is signed by one; with
    allow_unsigned, why it is not (for the commit message); else a RefusedError."""
    if not dep.is_signed:
        return None
    worktree = manifest.root / dep.path
    with signatures.Keys() as keys:
        verdict = _verdict(runner, keys, manifest, dep, worktree, sha, tag, offline)
    if verdict.problem is None:
        return None
    if allow_unsigned:
        return verdict.problem
    files = signatures.key_files(dep, manifest.root)
    raise RefusedError(
        dep.name,
        f"{verdict.problem}; nothing was changed",
        f"pin a commit signed by a key {files} lists, or add --allow-unsigned to pin it all "
        "the same (a commit message records that)",
    )


def _verdict(runner: Runner, keys: signatures.Keys, manifest: Manifest, dep: Dep,
             worktree: Path, sha: str, tag: str | None, offline: bool
             ) -> signatures.Verdict:  # fmt: skip
    here = gitfiles.git_dir(worktree) is not None and queries.has_commit(runner, worktree, sha)
    if here and (offline or tag is None or queries.local_tag(runner, worktree, tag) == sha):
        return signatures.check(runner, keys, dep, worktree, manifest.root, sha, tag or "")
    with scratch.scratch(runner, dep.name, dep.url) as repo:
        fetched = tag is not None and repo.fetch(f"refs/tags/{tag}", "--depth=1")
        if not repo.has(sha):
            repo.fetch(sha, "--depth=1", required=True)
        return signatures.check(runner, keys, dep, repo.path, manifest.root, sha, tag or "",
                                tag_ref=scratch.REF if fetched else None)  # fmt: skip


def recorded(message: str, problems: dict[str, str]) -> str:
    """A commit message with what --allow-unsigned let through, by dependency, at its end."""
    if not problems:
        return message
    lines = [f"{ALLOWED}: {problem} ({name})" for name, problem in problems.items()]
    return message.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
