"""What a repository says on disk, read from its files without running git.

These reads serve the no-op path that every CMake configure takes; anything
they cannot answer with certainty returns None and the caller asks git.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def git_dir(worktree: Path) -> Path | None:
    """The git directory of a work tree (`.git` folder or `gitdir:` file), or None."""
    # os.path on strings: this runs for every repository on the no-op path.
    dotgit = os.path.join(worktree, ".git")
    try:
        if os.path.isdir(dotgit):
            return Path(dotgit) if os.path.isfile(os.path.join(dotgit, "HEAD")) else None
        with open(dotgit, encoding="utf-8", errors="replace") as handle:
            text = handle.read().strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = os.path.join(worktree, text[len("gitdir:") :].strip())  # absolute stays absolute
    return Path(target) if os.path.isfile(os.path.join(target, "HEAD")) else None


def common_dir(gitdir: Path) -> Path:
    """Where refs and objects live (differs from gitdir for linked worktrees)."""
    return Path(_common_dir(gitdir))


def _common_dir(gitdir: str | Path) -> str | Path:
    try:
        with open(os.path.join(gitdir, "commondir"), errors="surrogateescape") as handle:
            text = handle.read().strip()
    except OSError:
        return gitdir
    return os.path.join(gitdir, text)  # an absolute text stays absolute


def read_head(gitdir: Path) -> tuple[str | None, str | None]:
    """(commit SHA, branch ref) of HEAD; the SHA is None when it cannot be read."""
    try:
        with open(os.path.join(gitdir, "HEAD"), errors="surrogateescape") as handle:
            text = handle.read().strip()
    except OSError:
        return None, None
    if _SHA.match(text):
        return text, None
    if text.startswith("ref:"):
        ref = text[4:].strip()
        return resolve_ref(gitdir, ref), ref
    return None, None


def resolve_ref(gitdir: Path, ref: str) -> str | None:
    """A ref's SHA from its loose file or packed-refs, or None (symbolic or unknown)."""
    for base in (gitdir, common_dir(gitdir)):
        try:
            text = (base / ref).read_text(errors="surrogateescape").strip()
        except OSError:
            continue
        return text if _SHA.match(text) else None
    try:
        packed = (common_dir(gitdir) / "packed-refs").read_text(errors="surrogateescape")
    except OSError:
        return None
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref and _SHA.match(sha):
            return sha
    return None


def is_shallow(gitdir: Path) -> bool:
    return (common_dir(gitdir) / "shallow").is_file()


def is_populated(worktree: Path) -> bool:
    """True when the folder exists and holds anything at all."""
    try:
        with os.scandir(worktree) as it:
            return any(True for _ in it)
    except OSError:
        return False


# What qola learned about a commit is remembered in the repository's git dir:
# a commit's gitlinks never change, so the cache never goes stale.
# A patch series' result is remembered the same way, keyed by a hash of pin and patches.
def read_commit_cache(gitdir: Path, key: str, folder: str = "commits") -> dict[str, object] | None:
    path = os.path.join(_common_dir(gitdir), "qola", folder, f"{key}.json")  # store.record_file
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_commit_cache(
    gitdir: Path, key: str, data: dict[str, object], folder: str = "commits"
) -> None:
    from qola import store

    path = store.record_file(gitdir, folder, key)
    # A cache that cannot be written (or a link in the way) is only slower next time.
    with contextlib.suppress(OSError):
        store.write_file(path, json.dumps(data, sort_keys=True).encode(), common_dir(gitdir))


def has_index(gitdir: Path) -> bool:
    """True when the repository has an index: every finished checkout writes one.

    A repository whose HEAD names a commit but that has no index never finished its
    first checkout: `git clone --no-checkout` (what `git submodule update` does before
    its checkout) or qola's own population, stopped half-way.
    """
    return os.path.exists(os.path.join(gitdir, "index"))
