"""`qola lock NAME URL [GIT_TAG]`: pin a FetchContent declaration in the manifest at the
commit its GIT_TAG names now, as `qola add` pins a new dependency (the same checks, the
same table, the same ignore line), unless the manifest pins NAME already.

QoLAProvider.cmake runs it for each declaration its pins file does not know: with
`--check` (an unpinned declaration is then an error that says how to lock it), or,
under `-DQOLA_LOCK=ON`, to lock it; `--cmake-out FILE` writes that pins file
(output/cmake_pins.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from qola.base import console, hints
from qola.base.errors import UsageError
from qola.commands.add import (
    DEFAULT_LOCK_TIMEOUT,
    InTheWay,
    NewTable,
    Raced,
    checkout_new,
    described,
    which_manifest,
    write_pin,
)
from qola.commands.session import Common
from qola.history.add import Resolved
from qola.history.lock import DEFAULT_GIT_TAG, resolve_git_tag
from qola.output.cmake_pins import fetchcontent_name

if TYPE_CHECKING:
    from qola.gitrun.git import Runner
    from qola.manifest import Dep, Manifest


class LockOptions(NamedTuple):  # not a dataclass, as options.Spec: dataclasses cost imports
    """How `lock` pins: its options (cli.py), from click."""

    git_tag: str | None  # as the declaration gives it; None: none (FetchContent's master)
    path: str | None  # --path (default: 3rdparty/NAME beside the manifest)
    submodules: bool  # not --no-submodules (GIT_SUBMODULES "")
    no_checkout: bool
    check: bool  # write nothing: an unpinned declaration is an error
    cmake_out: Path | None  # the provider's pins file
    fetch_timeout: float
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT


def lock(common: Common, name: str, url: str, opts: LockOptions) -> int:
    """Pin the declaration unless the manifest does (or, with --check, fail when it does
    not); then write the pins file."""
    from qola import manifest as manifests  # lazy: some commands only
    from qola.gitrun import git  # lazy: only where git runs

    git.scrub_environment()
    console.configure(common.verbose, common.quiet)
    for attempt in range(_ATTEMPTS):
        try:
            code, path = _lock_once(common, name, url, opts)
            break
        except Raced:  # another configure (Debug beside Release) locked meanwhile: read again
            if attempt == _ATTEMPTS - 1:
                raise
    if opts.cmake_out is not None:
        from qola.output.cmake_pins import write_pins  # lazy: for CMake only

        raw = path.read_bytes()
        write_pins(opts.cmake_out, manifests.load(path, common.root, allow_empty=True), raw)
    return code


_ATTEMPTS = 5  # reads of the manifest a lock makes when other qolas keep writing it


def _lock_once(common: Common, name: str, url: str, opts: LockOptions) -> tuple[int, Path]:
    """One read of the manifest, and the lock it decides (nothing where it pins NAME)."""
    from qola import manifest as manifests  # lazy: some commands only

    path, exists = which_manifest(common)
    existing = manifests.load(path, common.root, allow_empty=True) if exists else None
    pinned = pinned_by(existing, name) if existing is not None else None
    other = one_to_cmake(existing, name) if existing is not None else None
    code = 0
    if pinned is not None:
        label = f" (tag {pinned.tag})" if pinned.tag else ""
        console.result(f"{name}: pinned at {pinned.commit[:12]}{label} in {path} already; "
                       f"`qola bump {pinned.name} --to REF` moves it")  # fmt: skip
    elif other is not None and opts.cmake_out is not None:
        # The provider leaves it to FetchContent, with a warning naming both.
        console.result(f"{name}: not pinned: it is one name to CMake with {other.name}, "
                       f"which {path} pins")  # fmt: skip
    elif opts.check:
        raise _unpinned(name, url, opts, path, exists)
    else:
        git_tag = opts.git_tag if opts.git_tag is not None else DEFAULT_GIT_TAG

        def resolver(runner: Runner, resolved_url: str) -> Resolved:
            return resolve_git_tag(runner, name, resolved_url, git_tag)

        try:
            plan, resolved = write_pin(common, NewTable(name, opts.path, url, opts.submodules),
                                       opts.fetch_timeout, resolver, opts.lock_timeout)  # fmt: skip
        except InTheWay as error:  # the lock's own command, which a configure cannot give
            raise InTheWay(name, error.problem, "choose another folder for it, once: " +
                           _command(name, url, opts, path, "--path", "P") +
                           " (P: a folder below the root)") from None  # fmt: skip
        except UsageError as error:
            if opts.git_tag is not None or not error.problem.startswith("GIT_TAG "):
                raise
            raise UsageError(name, f"declares no GIT_TAG, and FetchContent then checks out "
                             f"{DEFAULT_GIT_TAG}, which {url} does not have; nothing was written",
                             "give the declaration a GIT_TAG (a tag, a branch or a commit "
                             "SHA)") from None  # fmt: skip
        console.result(f"locked {name}: {described(resolved)} at {plan.dep.path}, "
                       f"in {plan.manifest}")  # fmt: skip
        if plan.ignore is not None:
            console.result(f"added /{plan.dep.path}/ to {plan.ignore[0]}")
        if not opts.no_checkout:
            code = checkout_new(common, plan, name, opts.lock_timeout)
    return code, path


def pinned_by(manifest: Manifest, name: str) -> Dep | None:
    """The dependency that serves the FetchContent declaration NAME: the one whose name is
    NAME but for case (FetchContent's names are), if any."""
    key = fetchcontent_name(name)
    return next((dep for dep in manifest.deps if fetchcontent_name(dep.name) == key), None)


def one_to_cmake(manifest: Manifest, name: str) -> Dep | None:
    """A dependency the manifest pins whose name is NAME's to CMake (QOLA_<NAME>_SOURCE_DIR:
    a-b and a_b) but not to FetchContent, which tells them apart."""
    from qola.base import names  # lazy: some commands only

    key = names.variable_name(name)
    return next((dep for dep in manifest.deps if names.variable_name(dep.name) == key), None)


def _unpinned(name: str, url: str, opts: LockOptions, path: Path, exists: bool) -> UsageError:
    """The declaration is not pinned: the error that names it and the commands that pin it."""
    declared = f"FetchContent_Declare({name} GIT_REPOSITORY {url}"
    if opts.git_tag is not None:
        declared += f" GIT_TAG {opts.git_tag}"
    where = str(path) if exists else f"{path}, which does not exist yet"
    command = _command(name, url, opts, path)
    tag = opts.git_tag if opts.git_tag is not None else DEFAULT_GIT_TAG
    return UsageError(
        name,
        f"{declared}) is not pinned in {where}; nothing was written",
        hints.either(
            f"pin it at the commit GIT_TAG {tag} names now: {command}",
            "pin every unpinned declaration at the commit its GIT_TAG names now: ",
            hints.configure("-DQOLA_LOCK=ON"),
            f" (it stays in the cache until set OFF); or this one alone, once: {command}",
        ),
    )


def _command(name: str, url: str, opts: LockOptions, path: Path, *extra: str) -> str:
    """The `qola lock` command line that pins the declaration (with extra options)."""
    words = ["lock", name, url]
    if opts.git_tag is not None:
        words.append(opts.git_tag)
    if opts.path is not None and "--path" not in extra:
        words += ["--path", opts.path]
    if not opts.submodules:
        words.append("--no-submodules")
    return hints.qola_command(*words, *extra, "-m", str(path))
