"""Shared bare mirrors, one per URL (`--cache DIR`): a second checkout fetches nothing it has.

A mirror holds the upstream's branches and tags plus every pin asked of it (under
`refs/qola/pins/`, so that git's garbage collection keeps them). Nested submodules
get mirrors of their own, keyed by their URL as git resolves it. A dependency
cloned with the cache borrows the mirror's objects through
`objects/info/alternates`, as `git clone --reference` does: its own store only
gets what qola makes there (patch commits). Mirrors are updated under a lock per
mirror, so build folders and CI jobs sharing a cache take turns.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from qola.errors import GitError
from qola.git import Runner, command_error
from qola.observe import has_commit
from qola.refs import PINS_PREFIX

_BRANCHES_AND_TAGS = ("+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")


def mirror_path(cache: Path, url: str) -> Path:
    """The mirror for url: a readable name plus a hash of the whole URL."""
    tail = url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", tail)[:40] or "repo"
    return cache / f"{name}-{hashlib.sha256(url.encode()).hexdigest()[:16]}.git"


def ensure(runner: Runner, cache: Path, subject: str, url: str, commit: str, offline: bool) -> Path:
    """The mirror of url, holding commit (fetched under the mirror's lock)."""
    mirror = mirror_path(cache, url)
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise GitError(subject, f"cannot create the cache folder {cache}: {error}") from None
    with _locked(mirror.with_name(mirror.name + ".lock")):
        if not (mirror / "HEAD").is_file():
            _create(runner, mirror, subject)
        if has_commit(runner, mirror, commit):
            return mirror
        if offline:
            raise GitError(
                subject,
                f"commit {commit} is not in the cache ({mirror}) and --offline "
                "forbids fetching it",
                "run once without --offline",
            )
        _fetch(runner, mirror, subject, url, commit)
    return mirror


def borrow(clone_gitdir: Path, mirror: Path) -> None:
    """Let a repository read the mirror's objects (what `clone --reference` sets up)."""
    info = clone_gitdir / "objects" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "alternates").write_text(f"{mirror / 'objects'}\n")


def borrows_from(gitdir: Path, mirror: Path) -> bool:
    try:
        lines = (gitdir / "objects" / "info" / "alternates").read_text().splitlines()
    except OSError:
        return False
    return str(mirror / "objects") in lines


def _create(runner: Runner, mirror: Path, subject: str) -> None:
    temp = mirror.with_name(f"{mirror.name}.tmp{os.getpid()}")
    shutil.rmtree(temp, ignore_errors=True)
    try:
        runner.run(mirror.parent, "init", "-q", "--bare", "--end-of-options", str(temp),
                   subject=subject)  # fmt: skip
        os.replace(temp, mirror)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


def _fetch(runner: Runner, mirror: Path, subject: str, url: str, commit: str) -> None:
    """Bring the mirror up to date with the upstream's branches and tags, and the pin."""
    pin_ref = f"+{commit}:{PINS_PREFIX}{commit}"
    args = ["fetch", "-q", "--no-tags", "--end-of-options", url, *_BRANCHES_AND_TAGS]
    out = runner.run(mirror, *args, check=False, network=True)
    if out.status != 0:
        raise command_error(subject, args, out)
    if has_commit(runner, mirror, commit):
        runner.run(mirror, "update-ref", f"{PINS_PREFIX}{commit}", commit, subject=subject)
        return
    # A pin on no branch or tag: ask for it by SHA.
    args = ["fetch", "-q", "--no-tags", "--end-of-options", url, pin_ref]
    out = runner.run(mirror, *args, check=False, network=True)
    if out.status != 0:
        raise command_error(subject, args, out)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
