"""What a repository says on disk, read from its files without running git.

These reads serve the no-op path that every CMake configure takes; anything
they cannot answer with certainty returns None and the caller asks git.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def git_dir(worktree: Path) -> Path | None:
    """The git directory of a work tree (`.git` folder or `gitdir:` file), or None."""
    dotgit = worktree / ".git"
    try:
        if dotgit.is_dir():
            return dotgit if (dotgit / "HEAD").is_file() else None
        text = dotgit.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:") :].strip())
    if not target.is_absolute():
        target = worktree / target
    return target if (target / "HEAD").is_file() else None


def common_dir(gitdir: Path) -> Path:
    """Where refs and objects live (differs from gitdir for linked worktrees)."""
    try:
        text = (gitdir / "commondir").read_text(errors="surrogateescape").strip()
    except OSError:
        return gitdir
    path = Path(text)
    return path if path.is_absolute() else gitdir / path


def read_head(gitdir: Path) -> tuple[str | None, str | None]:
    """(commit SHA, branch ref) of HEAD; the SHA is None when it cannot be read."""
    try:
        text = (gitdir / "HEAD").read_text(errors="surrogateescape").strip()
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
def _cache_file(gitdir: Path, key: str, folder: str) -> Path:
    return common_dir(gitdir) / "qola" / folder / f"{key}.json"


def read_commit_cache(gitdir: Path, key: str, folder: str = "commits") -> dict[str, object] | None:
    try:
        data = json.loads(_cache_file(gitdir, key, folder).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_commit_cache(
    gitdir: Path, key: str, data: dict[str, object], folder: str = "commits"
) -> None:
    path = _cache_file(gitdir, key, folder)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(data, sort_keys=True))
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written is only slower next time
