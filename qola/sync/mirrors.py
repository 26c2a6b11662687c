"""Shared bare mirrors, one per URL (`--cache DIR`): a second checkout fetches nothing it has.

What a mirror holds and how clones borrow from it: docs/performance.md, "The mirrors of
`--cache`"."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from qola.base import hints
from qola.base.errors import GitError
from qola.gitrun.git import Runner, command_error
from qola.gitrun.queries import has_checkout
from qola.repo import store
from qola.sync import refs

_BRANCHES_AND_TAGS = ("+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")


def ensure(runner: Runner, cache: Path, subject: str, url: str, commit: str, offline: bool) -> Path:
    """The mirror of url, holding commit (fetched under the mirror's lock)."""
    mirror = store.mirror_path(cache, url)
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise GitError(subject, f"cannot create the cache folder {cache}: {error}") from None
    with _locked(store.mirror_lock(mirror)):
        if not (mirror / "HEAD").is_file():
            _create(runner, mirror, subject)
        if has_checkout(runner, mirror, commit):
            return mirror
        if offline:
            raise GitError(
                subject,
                f"commit {commit} is not in the cache ({mirror}) and --offline "
                "forbids fetching it",
                hints.either(
                    "run once without --offline",
                    "configure once with the network: ",
                    hints.configure("-DQOLA_OFFLINE=OFF"),
                ),
            )
        _fetch(runner, mirror, subject, url, commit)
    return mirror


def borrow(clone_gitdir: Path, mirror: Path) -> None:
    """Let a repository read the mirror's objects (what `clone --reference` sets up)."""
    alternates = clone_gitdir / "objects" / "info" / "alternates"
    store.write_file(alternates, os.fsencode(f"{mirror / 'objects'}\n"), clone_gitdir)


def borrows_from(gitdir: Path, mirror: Path) -> bool:
    try:
        lines = (gitdir / "objects" / "info" / "alternates").read_text().splitlines()
    except OSError:
        return False
    return str(mirror / "objects") in lines


def _create(runner: Runner, mirror: Path, subject: str) -> None:
    # A new folder of a name no one else uses, made here (mkdir fails on anything in the
    # way, a planted link included), so that `git init` writes nowhere but in it.
    temp = store.mirror_temp(mirror)
    temp.mkdir()
    try:
        runner.run(mirror.parent, "init", "-q", "--bare", "--end-of-options", str(temp),
                   subject=subject)  # fmt: skip
        os.replace(temp, mirror)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


def _fetch(runner: Runner, mirror: Path, subject: str, url: str, commit: str) -> None:
    """Bring the mirror up to date with the upstream's branches and tags, and the pin."""
    pin_ref = f"+{commit}:{store.pin_ref(commit)}"
    args = ["fetch", "-q", "--no-tags", "--end-of-options", url, *_BRANCHES_AND_TAGS]
    out = runner.run(mirror, *args, check=False, network=True, progress=True)
    if out.status != 0:
        raise command_error(subject, args, out)
    if has_checkout(runner, mirror, commit):
        refs.keep_pin(runner, mirror, commit, subject)  # (for gc, as in a dependency)
        return
    # A pin on no branch or tag: ask for it by SHA.
    args = ["fetch", "-q", "--no-tags", "--end-of-options", url, pin_ref]
    out = runner.run(mirror, *args, check=False, network=True, progress=True)
    if out.status != 0:
        raise command_error(subject, args, out)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    # A cache folder may be shared between users: a link planted at the lock is refused.
    try:
        fd = store.open_lock(path)
    except OSError as error:
        raise GitError(str(path), f"cannot open the cache's lock: {error.strerror}",
                       f"remove {path} (qola creates it again)") from None  # fmt: skip
    with store.flocked(fd):
        yield
