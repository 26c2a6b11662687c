"""What every command that reads a manifest starts from: the options, the manifest, git."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base import console
from qola.commands import options

if TYPE_CHECKING:
    from qola.gitrun.git import Runner
    from qola.gitrun.shim import Shim
    from qola.manifest import Dep, Manifest
    from qola.sync.at_pin import Handoff, Seen
    from qola.sync.verify_index import Staged


@dataclass(frozen=True)
class Common:
    """The options every command that reads a manifest takes."""

    manifest: Path
    root: Path | None
    safe_directory: str
    verbose: bool
    quiet: bool
    names: tuple[str, ...]
    searched_from: Path | None = None  # without -m: the folder the search for it began in
    groups: tuple[str, ...] = ()  # --group: every dependency in these is selected too


@dataclass
class Session:
    """A loaded manifest, the selected deps and a git runner, for one command."""

    manifest: Manifest
    deps: tuple[Dep, ...]
    runner: Runner
    common: Common
    env: Shim  # git's environment overlay: the safe.directory shim
    seen: dict[str, Seen] = field(default_factory=dict)  # the no-op's observations, if taken

    def note(self, message: str) -> None:
        """A note for people, unless --quiet."""
        console.note(message)

    def debug(self, message: str) -> None:
        """A detail for -v."""
        console.debug(message)


@contextmanager
def session(
    common: Common, resolve_pins: bool = True, staged: Staged | None = None,
    offline: bool = False, handoff: Handoff | None = None, repair: str | None = None,
) -> Iterator[Session]:
    """Load the manifest, select deps, and run git under the safe.directory shim.

    resolve_pins=False leaves abbreviated legacy pins as written (no checkout is read).
    staged: read the manifest from the index instead of the file.
    offline: a command that never uses the network: no git of it may use a transport
    (nothing is fetched, a partial clone's missing objects included), but for the calls
    that say they do (network=True).
    handoff: what the no-op loaded and observed before it stepped aside; its manifest is
    taken (not loaded again) when it is this invocation's and all its loading read holds.
    repair: the one dependency whose pin may be a branch or tag name (`bump NAME --to
    REF`, which writes a commit there; manifest.load's repair).
    """
    import os

    from qola import manifest  # lazy: some commands only
    from qola.gitrun import git  # lazy: only where git runs
    from qola.gitrun.shim import install_signal_handlers, shim  # lazy: some commands only
    from qola.manifest import (
        gitmodules,  # lazy: some commands only
        legacy,  # lazy: some commands only
    )
    from qola.repo import gitfiles  # lazy: some commands only
    from qola.sync import verify_index  # lazy: some commands only

    handed = _handed_over(common, handoff) if staged is None else None  # before the scrub
    git.scrub_environment()
    console.configure(common.verbose, common.quiet)
    tracked = None  # the top of the repository whose index named the manifest
    if common.searched_from is not None and not os.path.isfile(common.manifest):
        tracked = options.search_top(os.fspath(common.searched_from))
        common = dataclasses.replace(common, manifest=_tracked_manifest(common))
    console.debug(options.manifest_note(common.manifest, common.searched_from, tracked))
    loaded = None
    if staged is None:
        loaded = (
            handed.manifest
            if handed and repair is None
            else manifest.load(common.manifest, common.root, repair=repair)
        )
        roots = [loaded.root]
    else:
        roots = [gitmodules.repository_top(Path(os.path.abspath(common.manifest)).parent)]
    restore_signals = install_signal_handlers()
    try:
        with shim(common.safe_directory, roots) as env:
            # The shim trusts each repository at the moment qola first runs git in it.
            runner = git.Runner(env=env, trust=env.add, offline=offline)
            if loaded is None:
                assert staged is not None
                loaded = verify_index.load_staged(common.manifest, common.root, runner, staged)
            deps = loaded.select(common.names, common.groups)
            for dep in deps:
                env.add_clone_source(dep.url, loaded.root)
            runner.expect_sources(dep.url for dep in loaded.deps)
            sess = Session(loaded, deps, runner, common, env, handed.seen if handed else {})
            for warning in loaded.warnings:
                console.warning(warning)
            # No repository of the project's is taken whose git dir lies elsewhere.
            with gitfiles.confined(loaded.root):
                if resolve_pins:
                    sess.deps = legacy.resolve(loaded, sess.deps, runner)
                    _name_expanded_pins(loaded, sess.deps)
                yield sess
    finally:
        restore_signals()


def _handed_over(common: Common, handoff: Handoff | None) -> Handoff | None:
    """handoff, when it is what loading this invocation's manifest would give now: the same
    manifest and root, no variable the scrub removes (the no-op read with them set), and
    every file its loading read unchanged."""
    import os

    from qola.gitrun import git  # lazy: as session's own (git is not the no-op's)
    from qola.repo import trail  # lazy: as session's own (git is not the no-op's)

    if handoff is None or handoff.manifest.looked is None:
        return None
    root = os.path.abspath(common.root) if common.root is not None else None
    if (str(handoff.manifest.path), handoff.root) != (os.path.abspath(common.manifest), root):
        return None
    if any(var in os.environ for var in git.LEAKED_VARIABLES):
        return None
    return handoff if trail.holds(handoff.manifest.looked) else None


def finite(seconds: float) -> float | None:
    """A timeout for the Runner: None for infinity."""
    return None if seconds == float("inf") else seconds


def write_cmake(path: Path, sess: Session, seen: Mapping[str, Seen] | None = None) -> None:
    """The CMake results file for the session's deps (with a stamp when one can be proven:
    from this run's observations, seen, where they still hold)."""
    from qola.output.cmake_results import write_for  # lazy: some commands only
    from qola.sync import at_pin  # lazy: some commands only

    loaded = _read_again(sess)
    write_for(path, loaded, sess.deps, at_pin.proven(loaded, sess.deps, seen), sess.runner)


def _read_again(sess: Session) -> Manifest:
    """The session's manifest with what loading it reads now, when that changed meanwhile
    and it still loads the same: a checkout writes some of what the loader read
    (initialising a submodule rewrites the root's .git/config), and a stamp must list it
    as the checkout left it, or the next configure starts Python for nothing."""
    from qola import manifest  # lazy: some commands only
    from qola.base.errors import QolaError  # lazy: some commands only
    from qola.repo import trail  # lazy: some commands only

    looked = sess.manifest.looked
    if looked is None or trail.holds(looked):
        return sess.manifest
    try:
        again = manifest.load(sess.manifest.path, sess.common.root)
    except (QolaError, OSError, UnicodeDecodeError):
        return sess.manifest
    if (again.root, again.deps) != (sess.manifest.root, sess.manifest.deps):
        return sess.manifest  # edited meanwhile: no stamp can vouch for this run's answer
    return again


def _name_expanded_pins(manifest: Manifest, deps: tuple[Dep, ...]) -> None:
    """The full SHA of each abbreviated pin, found here: what to write in its place."""
    for dep in deps:
        if dep.abbreviated_from:
            where = f"{manifest.path}:{dep.line}" if dep.line else str(manifest.path)
            console.note(
                f"{where}: {dep.key}: {dep.abbreviated_from!r} is {dep.commit} (expanded from "
                "the root's gitlink or the checkout)"
            )


def _tracked_manifest(common: Common) -> Path:
    """No qola.toml in the folder the search began in or above it: the one manifest the
    index of the repository holding that folder tracks (options.is_manifest_name), or
    exit 2 naming where qola looked, or listing the several it found."""
    import os

    from qola.base.errors import ManifestError, UsageError  # lazy: some commands only

    start = common.searched_from
    assert start is not None
    name, top = options.MANIFEST_NAME, Path(options.search_top(os.fspath(start)))
    if top != start:
        where = f"no {name} here or in a folder above, up to {top} (its repository's top)"
    elif os.path.lexists(start / ".git"):
        where = f"no {name} here (the top of its repository)"
    else:
        where = f"no {name} here (outside a git repository, qola looks only here)"
    found = tracked_manifests(top, common.safe_directory)
    if os.path.lexists(top / ".git") and not found:
        where += f", nor does its index track a manifest ({options.MANIFEST_NAMES})"
    if len(found) == 1:
        return top / found[0]
    choose = "pass --manifest PATH (or set QOLA_MANIFEST)"
    if found:
        listed = ", ".join(found)
        where += f", and its index tracks {len(found)} manifests: {listed}"
        raise UsageError(str(start), where, f"{choose} to choose one")
    raise ManifestError(str(start), where, f"create one with `qola init`, or {choose}")


def tracked_manifests(top: Path, safe_directory: str) -> list[str]:
    """The manifests (options.is_manifest_name) the index of the repository at top tracks,
    relative to it; none outside a repository."""
    import os

    from qola.gitrun import git  # lazy: only where git runs
    from qola.gitrun.queries import tracked_files  # lazy: only where git runs
    from qola.gitrun.shim import shim  # lazy: some commands only

    if not os.path.lexists(top / ".git"):
        return []
    with shim(safe_directory, [top]) as env:
        files = tracked_files(git.Runner(env=env, trust=env.add, offline=True), top)
    return [path for path in files or () if options.is_manifest_name(path)]
