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
from qola.base.shas import is_full_sha
from qola.gitrun.git import Runner
from qola.gitrun.queries import has_checkout
from qola.repo import gitfiles, store
from qola.sync import fetch, refs


def ensure(
    runner: Runner,
    cache: Path,
    source: fetch.Source,
    commit: str,
    offline: bool,
    env: dict[str, str] | None = None,
) -> tuple[Path, str | None]:
    """The mirror of source.url, holding commit (fetched under the mirror's lock, one
    commit deep, as a checkout without the cache fetches it; env: as that fetch's), and
    how the commit was fetched (None: the mirror had it)."""
    subject, url = source.subject, source.url
    mirror = store.mirror_path(cache, url)
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise GitError(subject, f"cannot create the cache folder {cache}: {error}") from None
    with _locked(store.mirror_lock(mirror)):
        if not (mirror / "HEAD").is_file():
            _create(runner, mirror, subject)
        if has_checkout(runner, mirror, commit):
            return mirror, None
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
        # Only the pin, at depth 1 (with fetch.py's fallback for a server that refuses a
        # SHA): not the upstream's whole history, which a first fill used to fetch (for
        # TE's AITER 59.5 MB, against 13.4 MB for a checkout without the cache).
        how = fetch.fetch_commit(runner, mirror, source, commit, shallow=True, env=env)
        refs.keep_pin(runner, mirror, commit, subject)  # (for gc, as in a dependency)
    return mirror, how


def borrow(clone_gitdir: Path, mirror: Path) -> None:
    """Let a repository read the mirror's objects (what `clone --reference` sets up), and
    see the mirror's history as cut where the mirror's is (share_shallow)."""
    alternates = clone_gitdir / "objects" / "info" / "alternates"
    store.write_file(alternates, os.fsencode(f"{mirror / 'objects'}\n"), clone_gitdir)
    share_shallow(clone_gitdir)


def share_shallow(gitdir: Path) -> None:
    """Add to a repository's `shallow` file the commits whose parents the mirrors it
    borrows from do not have (theirs): without them, git would take those parents for
    objects the repository has lost, and fail every walk of its history (git clone
    refuses a shallow --reference for that reason; a shallow file is the repository's own,
    never read through alternates). Call it before the repository uses a commit that
    came from a mirror."""
    common = gitfiles.common_dir(gitdir)
    try:
        lines = (common / "objects" / "info" / "alternates").read_text().splitlines()
    except OSError:
        return
    theirs: set[str] = set()
    for line in lines:
        if line.endswith("/objects") and line.startswith("/"):
            theirs.update(_shallow(Path(line).parent))
    if not theirs:
        return
    ours = set(gitfiles.shallow_commits(common))
    if theirs <= ours:
        return
    text = "".join(f"{sha}\n" for sha in sorted(ours | theirs))
    store.write_file(common / "shallow", text.encode(), common)


def _shallow(repo: Path) -> list[str]:
    try:
        listed = (repo / "shallow").read_text().split()
    except OSError:
        return []
    return [sha for sha in listed if is_full_sha(sha)]


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
