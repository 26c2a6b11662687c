"""`qola add NAME URL`: pin a new dependency, resolved with ls-remote, in the manifest (a new
qola.toml where there is none), ignore its folder, and check it out.

Everything that can refuse runs before anything is written: the URL and path are checked
by the loader before git runs, the ref is resolved before the manifest is touched, and
the new text is loaded again before it is written. A checkout that fails afterwards
leaves the pin written (it is the remote's answer, and right): its message says so.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from qola.base import console
from qola.base.errors import EXIT_USAGE, QolaError, RefusedError, UsageError
from qola.commands import options
from qola.commands.session import Common, finite, tracked_manifests
from qola.history.add import Resolved, Wanted, check_wanted, resolve
from qola.manifest import BOM, Dep, Manifest
from qola.manifest.write_new import appended, check_appended, dep_table
from qola.output import cmake_env

if TYPE_CHECKING:
    from qola.gitrun.git import Runner

# How a new pin is found: from a git runner and the dependency's URL (as the loader makes it).
Resolver = Callable[["Runner", str], Resolved]

DEFAULT_FOLDER = "3rdparty"  # without --path: 3rdparty/NAME beside the manifest
DEFAULT_LOCK_TIMEOUT = 600.0  # as gitrun/lock.py's (not imported: git's modules load late)
_PLACEHOLDER = "0" * 40  # the pin while nothing is resolved yet: checks all the rest


class AddOptions(NamedTuple):  # not a dataclass, as options.Spec: dataclasses cost imports
    """How `add` pins and checks out: its options (cli.py), from click."""

    wanted: Wanted  # --tag, --branch, --commit
    path: str | None  # --path (default: 3rdparty/NAME beside the manifest)
    submodules: bool  # not --no-submodules
    no_checkout: bool
    fetch_timeout: float
    keys: tuple[tuple[str, str], ...] = ()  # --allowed-signers, --keyring: (key, file)
    allow_unsigned: bool = False
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT


class NewPin(NamedTuple):
    """What `add` (and `lock`) writes, all of it decided before the first write."""

    manifest: Path
    raw: bytes | None  # the manifest's bytes as read; None: it is created
    text: str  # the new manifest, less its byte order mark
    dep: Dep
    ignore: tuple[Path, bytes | None, str] | None  # .gitignore: its path, bytes, new text
    root: Path  # the manifest's root


def add(common: Common, name: str, url: str, opts: AddOptions) -> int:
    """Resolve, write the pin (and the ignore line), then check it out."""
    from qola.gitrun import git  # lazy: only where git runs

    git.scrub_environment()
    console.configure(common.verbose, common.quiet)
    check_wanted(opts.wanted)
    retry = _retry_words(opts)

    def resolver(runner: Runner, resolved_url: str) -> Resolved:
        return resolve(runner, name, resolved_url, opts.wanted, retry)

    keys = tuple((key, _from_manifest(common, file)) for key, file in opts.keys)
    new = NewTable(name, opts.path, url, opts.submodules, keys, opts.allow_unsigned)
    plan, resolved = write_pin(common, new, opts.fetch_timeout, resolver, opts.lock_timeout)
    console.result(f"added {name}: {described(resolved)} at {plan.dep.path}, in {plan.manifest}")
    if plan.ignore is not None:
        console.result(f"added /{ignore_pattern(plan.dep.path)}/ to {plan.ignore[0]}")
    code = 0 if opts.no_checkout else checkout_new(common, plan, name, opts.lock_timeout)
    if plan.dep.submodule_name is not None and code != EXIT_USAGE:  # (else taken back)
        stage_gitlink(common, plan.root, plan.dep)
    return code


def described(resolved: Resolved) -> str:
    """`0123456789ab (tag v2.0)`: the new pin and where it came from, for people."""
    said = resolved.source
    if resolved.tag is not None and said.split(",")[0] != f"tag {resolved.tag}":
        said += f", tag {resolved.tag}"
    return f"{resolved.commit[:12]} ({said})"


def write_pin(common: Common, new: NewTable, fetch_timeout: float, resolver: Resolver,
              lock_timeout: float = DEFAULT_LOCK_TIMEOUT
              ) -> tuple[NewPin, Resolved]:  # fmt: skip
    """Resolve the new dependency's pin with resolver and write its table (a new manifest
    where there is none) and its ignore line. Everything that can refuse runs first: the
    name, folder and URL are checked before git runs, the pin is resolved before the
    manifest is touched."""
    from qola import manifest as manifests  # lazy: some commands only

    path, exists = which_manifest(common)
    existing = manifests.load(path, common.root, allow_empty=True) if exists else None
    raw = path.read_bytes() if exists else None
    text = raw.decode("utf-8").removeprefix(BOM) if raw is not None else ""
    given = new.path is not None
    if existing is not None:
        if not given:  # its folder beside the manifest, which need not be the root's top
            new = _with_path(new, default_folder(path, existing.root, new.name))
        _refuse_taken(existing, new.name, new.path or "")
    # Every check the loader makes of the new table (name, path, URL) before git runs.
    placeholder = Resolved(_PLACEHOLDER, None, None, "")
    _, loaded, dep = _loaded(path, common.root, text, _with_path(new, new.path), placeholder)
    if new.path is None:  # a new manifest: its root is known now
        new = _with_path(new, default_folder(path, loaded.root, new.name))
        _, loaded, dep = _loaded(path, common.root, text, new, placeholder)
    _refuse_in_the_way(loaded.root, dep, given)
    plan, resolved = _plan(common, path, raw, text, new, loaded.root, dep, fetch_timeout,
                           resolver)  # fmt: skip
    from qola.gitrun.lock import root_lock  # lazy: only where git runs

    # The check that the manifest is as read, then its write, while no other qola writes.
    with root_lock(loaded.root, lock_timeout, console.note, "add writes the manifest"):
        _write(plan)
    return plan, resolved


def default_folder(manifest: Path, root: Path, name: str) -> str:
    """3rdparty/NAME beside the manifest, as a path from the root: where two projects of
    one repository (each with its manifest) do not share a folder."""
    beside = os.path.relpath(manifest.parent / DEFAULT_FOLDER / name, root)
    if beside.startswith(".."):  # a manifest outside its root (--root): the root's own
        return f"{DEFAULT_FOLDER}/{name}"
    return Path(beside).as_posix()


def _with_path(new: NewTable, path: str | None) -> NewTable:
    return new._replace(path=path if path is not None else f"{DEFAULT_FOLDER}/{new.name}")


class InTheWay(RefusedError):
    """The new dependency's folder holds what the checkout would not replace."""


def _refuse_in_the_way(root: Path, dep: Dep, given: bool) -> None:
    """A folder that holds something other than a git repository (a vendored copy, the
    project's own files) would stop the checkout after the pin is written: refused before
    anything is, with the option that chooses another folder."""
    where = root / dep.path
    if not os.path.lexists(where) or (where / ".git").exists():
        return  # the checkout clones into it, or judges the repository there
    if where.is_dir() and not where.is_symlink() and not any(where.iterdir()):
        return
    what = "is a file" if not where.is_dir() else "holds files and is not a git repository"
    raise InTheWay(
        dep.name,
        f"{where} {what}: the checkout would not put {dep.name} there; nothing was written",
        "choose another folder with --path P" if not given else
        "choose another folder with --path P, or move what is there away",
    )


def _from_manifest(common: Common, file: str) -> str:
    """A key file named on the command line (relative to the current folder), as the
    manifest writes it: relative to the manifest's folder, with '/'."""
    folder = which_manifest(common)[0].parent
    return Path(os.path.relpath(os.path.abspath(file), folder)).as_posix()


class NewTable(NamedTuple):
    """The new dependency as the command line gives it."""

    name: str
    path: str | None  # None: 3rdparty/NAME beside the manifest (write_pin decides)
    url: str  # as given: written so (the loader makes a local path absolute)
    submodules: bool
    keys: tuple[tuple[str, str], ...] = ()  # (allowed-signers or keyring, the file)
    allow_unsigned: bool = False  # pin a commit its keys did not sign


def _plan(common: Common, path: Path, raw: bytes | None, text: str, new: NewTable, root: Path,
          dep: Dep, fetch_timeout: float, resolver: Resolver
          ) -> tuple[NewPin, Resolved]:  # fmt: skip
    """Resolve the ref and compute every file's new text (nothing written)."""
    from qola.gitrun import git  # lazy: only where git runs
    from qola.gitrun.shim import install_signal_handlers, shim  # lazy: some commands only
    from qola.history import signed  # lazy: only where git runs

    restore_signals = install_signal_handlers()
    try:
        with shim(common.safe_directory, [root]) as env:
            runner = git.Runner(env=env, trust=env.add, timeout=finite(fetch_timeout))
            ignore = _ignore_plan(runner, root, dep)
            resolved = resolver(runner, dep.url)
            new_text, loaded, dep = _loaded(path, common.root, text, new, resolved)  # or exit 2
            named = resolved.source.startswith("tag ")  # else the label is qola's choice
            tag, unsigned = signed.vet(runner, loaded, dep, dep.commit, dep.tag, False,
                                       new.allow_unsigned, named)  # fmt: skip
            if tag != resolved.tag:  # a label that verifies, or none: the commit does
                resolved = resolved._replace(tag=tag)
                new_text, loaded, dep = _loaded(path, common.root, text, new, resolved)
    finally:
        restore_signals()
    if unsigned:
        console.warning(f"{dep.name}: pinned with --allow-unsigned: {unsigned}")
    return NewPin(path, raw, new_text, dep, ignore, root), resolved


def _text(text: str, new: NewTable, resolved: Resolved) -> str:
    """The manifest text with the new table appended (its parse checked: the old one's
    and the table, nothing else)."""
    assert new.path is not None  # write_pin gave it one
    table = dep_table(new.name, new.path, new.url, resolved.commit, resolved.tag,
                      resolved.track, new.submodules, new.keys)  # fmt: skip
    new_text = appended(text, table)
    check_appended(text, new_text, new.name, _parse_table(table, new.name))
    return new_text


def _loaded(path: Path, root: Path | None, text: str, new: NewTable, resolved: Resolved
            ) -> tuple[str, Manifest, Dep]:  # fmt: skip
    """The manifest text with the new table, what the loader makes of it, and its new Dep:
    an error of the new table is the command line's (exit 2, nothing written)."""
    from qola import manifest as manifests  # lazy: some commands only

    new_text = _text(text, new, resolved)
    try:
        loaded = manifests.load(path, root, staged=(new_text.encode("utf-8"), None))
    except QolaError as error:
        raise UsageError(new.name, f"{error.problem}; nothing was written", error.hint) from None
    [dep] = [dep for dep in loaded.deps if dep.name == new.name]
    return new_text, loaded, dep


def _parse_table(table: str, name: str) -> dict[str, object]:
    import sys  # lazy: as the parser

    if sys.version_info >= (3, 11):
        import tomllib  # lazy: only to check the table
    else:  # pragma: no cover
        import tomli as tomllib  # lazy: only to check the table
    found: dict[str, object] = tomllib.loads(table)["deps"][name]
    return found


def which_manifest(common: Common) -> tuple[Path, bool]:
    """The manifest to add to, as every command finds it (-m; else qola.toml here or
    above, up to the repository's top; else the one manifest its index tracks), and
    whether it exists: where none does, qola.toml at the top of the repository (here,
    outside one)."""
    path = Path(os.path.abspath(common.manifest))
    if common.searched_from is None or path.is_file():
        return path, path.is_file()
    top = Path(options.search_top(os.fspath(common.searched_from)))
    found = tracked_manifests(top, common.safe_directory)
    if len(found) > 1:
        raise UsageError(
            str(top),
            f"no {options.MANIFEST_NAME} here or above, and its index tracks "
            f"{len(found)} manifests: {', '.join(found)}; nothing was written",
            "pass --manifest PATH (or set QOLA_MANIFEST) to choose one",
        )
    if found:
        return top / found[0], True
    return top / options.MANIFEST_NAME, False


def _refuse_taken(existing: Manifest, name: str, folder: str) -> None:
    """A name or a folder another dependency has (or a folder inside one's, or holding
    one) is refused, naming it."""
    from qola.base import names  # lazy: some commands only

    for dep in existing.deps:
        if names.variable_name(dep.name) == names.variable_name(name):
            same = "" if dep.name == name else f"is one name to CMake with {dep.name!r}, which "
            raise UsageError(
                name,
                f"{same}is already a dependency in {existing.path} (at {dep.path}); nothing "
                "was written",
                f"give the new one another name; `qola bump {dep.name} --to REF` moves "
                "the existing pin",
            )
    wanted = posixpath.normpath(folder.replace("\\", "/")).strip("/")
    for dep in existing.deps:
        if wanted == dep.path:
            how = "is"
        elif wanted.startswith(dep.path + "/"):
            how = "is inside"
        elif dep.path.startswith(wanted + "/"):
            how = "holds"
        else:
            continue
        raise UsageError(
            name,
            f"its folder {wanted} {how} the folder of {dep.name}, {dep.path}; nothing was "
            "written",
            "give it a folder of its own: --path P",
        )


def _ignore_plan(runner: Runner, root: Path, dep: Dep) -> tuple[Path, bytes | None, str] | None:
    """The root's .gitignore with `/PATH/` added, for a plain clone (not a submodule of
    the root) in a repository whose ignore rules do not ignore it yet; else None."""
    from qola.gitrun import queries  # lazy: only where git runs
    from qola.repo import gitfiles  # lazy: some commands only

    if dep.submodule_name is not None or gitfiles.git_dir(root) is None:
        return None
    if queries.is_ignored(runner, root, dep.name, dep.path):
        return None
    ignore = root / ".gitignore"
    try:
        raw: bytes | None = ignore.read_bytes()
    except FileNotFoundError:
        raw = None
    text = raw.decode("utf-8", errors="surrogateescape") if raw is not None else ""
    newline = "\r\n" if text.partition("\n")[0].endswith("\r") else "\n"
    if text and not text.endswith("\n"):
        text += newline
    return ignore, raw, f"{text}/{ignore_pattern(dep.path)}/{newline}"


def ignore_pattern(path: str) -> str:
    """path as a .gitignore pattern matching itself alone: git reads \\, *, ? and [ as
    glob characters unless a backslash escapes them."""
    return "".join(f"\\{char}" if char in "\\*?[" else char for char in path)


class Raced(UsageError):
    """The manifest changed (or was made) since it was read: another qola wrote it."""


def _write(plan: NewPin) -> None:
    """The manifest (atomically; refused if it changed since it was read), then the
    .gitignore line (added to the file as it is then: another qola may have added one)."""
    from qola.commands.init import create  # lazy: some commands only
    from qola.manifest import edit  # lazy: some commands only

    try:
        now: bytes | None = plan.manifest.read_bytes()
    except FileNotFoundError:
        now = None
    if now != plan.raw:
        said = "was made" if plan.raw is None else "changed on disk"
        raise Raced(str(plan.manifest), f"{said} since qola read it; nothing was written",
                    "run the command again")  # fmt: skip
    if plan.raw is None:
        create(plan.manifest, plan.text.encode("utf-8"))
    else:
        bom = BOM if plan.raw.startswith(BOM.encode()) else ""
        edit.write_atomically(plan.manifest, bom + plan.text, plan.raw)
    if plan.ignore is None:
        return
    ignore, raw, text = plan.ignore
    try:
        now = ignore.read_bytes()
    except FileNotFoundError:
        now = None
    if now != raw and now is not None:  # changed meanwhile: the line goes on what is there now
        line = f"/{ignore_pattern(plan.dep.path)}/"
        current = now.decode("utf-8", errors="surrogateescape")
        if line in current.splitlines():
            return
        newline = "\r\n" if current.partition("\n")[0].endswith("\r") else "\n"
        sep = newline if current and not current.endswith("\n") else ""
        raw, text = now, f"{current}{sep}{line}{newline}"
    data = text.encode("utf-8", errors="surrogateescape")
    try:
        if raw is None:
            create(ignore, data)
        else:
            replace_file(ignore, data, raw)
    except (QolaError, OSError) as error:
        why = error.problem if isinstance(error, QolaError) else error.strerror
        raise UsageError(
            str(ignore),
            f"cannot add /{plan.dep.path}/ to it ({why}); the pin of {plan.dep.name} is "
            f"written in {plan.manifest}",
            f"add the line /{plan.dep.path}/ to {ignore} yourself",
        ) from None


def replace_file(path: Path, data: bytes, expected: bytes) -> None:
    """Replace the file at path with data (a rename: whole or not at all), unless it no
    longer holds expected."""
    import contextlib
    import stat
    import tempfile

    if path.read_bytes() != expected:
        raise UsageError(str(path), "changed on disk since qola read it")
    status = path.stat()
    fd, temp = tempfile.mkstemp(prefix=".qola-edit-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, stat.S_IMODE(status.st_mode))
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _retry_words(opts: AddOptions) -> list[str]:
    """The options after `qola add NAME URL` that a hint naming another ref repeats."""
    words = ["--path", opts.path] if opts.path is not None else []
    words += ["--no-submodules"] * (not opts.submodules)
    return words + ["--no-checkout"] * opts.no_checkout


def stage_gitlink(common: Common, root: Path, dep: Dep) -> None:
    """A submodule of the root: its gitlink staged at the new pin, as `bump` stages it, so
    that the root records what the manifest pins (verify checks that they agree)."""
    from qola.gitrun import git, queries  # lazy: only where git runs
    from qola.gitrun.shim import shim  # lazy: some commands only
    from qola.history import bump  # lazy: some commands only
    with shim(common.safe_directory, [root]) as env:
        runner = git.Runner(env=env, trust=env.add)
        if queries.root_gitlinks(runner, root, [dep.path]).get(dep.path) == dep.commit:
            return
        bump.stage_gitlink(runner, root, dep, dep.commit)
    console.result(f"staged the gitlink of {dep.path} at {dep.commit[:12]}, the pin: commit "
                   "it with the manifest")  # fmt: skip


def _undo(plan: NewPin) -> None:
    """The manifest and the .gitignore as they were before `add` wrote them."""
    from qola.manifest import edit  # lazy: some commands only

    bom = BOM if plan.raw is not None and plan.raw.startswith(BOM.encode()) else ""
    written = (bom + plan.text).encode("utf-8")
    if plan.raw is None:
        if plan.manifest.read_bytes() == written:
            plan.manifest.unlink()
    else:
        edit.write_atomically(plan.manifest, plan.raw.decode("utf-8"), written)
    if plan.ignore is not None:
        ignore, raw, text = plan.ignore
        data = text.encode("utf-8", errors="surrogateescape")
        if raw is None:
            if ignore.read_bytes() == data:
                ignore.unlink()
        else:
            replace_file(ignore, raw, data)


def checkout_new(common: Common, plan: NewPin, name: str,
                 lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> int:  # fmt: skip
    """`qola checkout NAME` of the new dependency; when it fails, say that the pin stays
    written and what to run once the cause is fixed. A pin the checkout refuses as no
    commit (a tag of a tree or a blob: ls-remote cannot tell) is taken back: nothing
    stays written, since checking it out again would fail again."""
    from qola.commands.checkout import CheckoutOptions, checkout  # lazy: some commands only

    manifest = plan.manifest
    only = dataclasses.replace(common, manifest=manifest, names=(name,), groups=(),
                               searched_from=None)  # fmt: skip
    code = checkout(only, CheckoutOptions(False, False, 1, None, None, lock_timeout, 600.0,
                                          "text"))  # fmt: skip
    if code == EXIT_USAGE:
        _undo(plan)
        cmake_env.report(cmake_env.render(UsageError(
            name,
            f"{plan.dep.commit[:12]} is no commit to check out (above); {manifest} is as it "
            "was: nothing was written",
            "give --tag, --branch or --commit naming a commit",
        )))  # fmt: skip
        return code
    if code != 0:
        again = ["qola", "checkout", name]
        if common.searched_from is None:  # -m given: the checkout must be told too
            again[2:2] = ["-m", str(manifest)]
        if common.root is not None:
            again[2:2] = ["--root", str(common.root)]
        cmake_env.report(cmake_env.render(UsageError(
            name,
            f"its pin is written in {manifest}, but the checkout failed (above); the pin "
            "stays: it is what the remote named",
            f"once the cause is fixed, check it out: {shlex.join(again)}",
        )))  # fmt: skip
    return code
