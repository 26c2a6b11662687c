"""Load and validate a manifest into frozen dataclasses; nothing later sees a raw dict."""

from __future__ import annotations

import errno
import os
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from qola.base import hints, names
from qola.base.errors import ManifestError
from qola.base.hints import Hint
from qola.base.shas import is_full_sha
from qola.repo import configfile, fslimits
from qola.repo.trail import cannot_prove, recording, saw_dir, saw_file, saw_folder

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib
from qola.manifest.gitmodules import (
    SCHEME,
    SCP_LIKE,
    by_path,
    named_git_dir,
    read_gitmodules,
    repository_top,
)

SCHEMA = 1
BOM = "\ufeff"
DEP_KEYS = ("path", "url", "commit", "track", "submodules", "patches", "groups")
# What the legacy form may say beside `[qola] <name>_commit`, as `<name>_<key>`. Read only
# for a name that has a `<name>_commit`: every other key in [qola] is other tools'.
LEGACY_KEYS = ("track", "url", "submodules", "patches", "groups")

_ABBREV_SHA = re.compile(r"^[0-9a-f]{7,64}$")
_HELPER_TRANSPORT = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")
_ALLOWED_SCHEMES = ("https", "http", "ssh", "git", "file")
_ALLOWED_URLS = "https://, http://, ssh://, git://, file://, user@host:path or a local path"
# tomllib (and tomli) end their messages with the position; only Python 3.14 adds attributes.
_TOML_AT = re.compile(r"\s*\((?:at line (\d+), column (\d+)|at end of document)\)$")
# What a manifest's names, paths, URLs and refs may not hold: the characters qola/base/safetext.py
# escapes in output (controls, line separators, bidirectional overrides), so that the no-op,
# which prints them as they are, shows what the full command shows.
_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
_HEADER = re.compile(r"^\[\[?\s*([^\[\]]+?)\s*\]")
_DOTS = re.compile(r"\s*\.\s*")
_KEY = re.compile(r"^\s*[\"']?([^\"'=\s]+?)[\"']?\s*=")
_DRIVE = re.compile(r"^[A-Za-z]:")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_OFF_LIMITS = "git's own folders are off limits"
_SIMPLER = "a manifest is a short TOML file; check that this is the file you meant"


def _pass_root(
    before: str = "", command_line: str = "pass --root (or QOLA_ROOT) on the command line"
) -> Hint:
    """How to point qola at another root, in the terms of whoever runs it, after `before`."""
    return hints.either(before + command_line, before + "give qola_checkout() ROOT <folder>")


class Followed(NamedTuple):
    """The upstream ref a pin follows: its track, else the remote's default branch."""

    ref: str  # what git fetches or ls-remote asks for: the track, or HEAD
    label: str  # for people: the track as written, or "the default branch"


def followed(track: str | None) -> Followed:
    """The ref followed with this track (None: none set): what `bump` moves the pin to."""
    return Followed("HEAD", "the default branch") if track is None else Followed(track, track)


@dataclass(frozen=True)
class Dep:
    """One pinned dependency, validated."""

    name: str
    path: str  # POSIX, relative to the root
    url: str  # absolute URL or absolute local path
    commit: str  # the pin: a full SHA, or an abbreviated one (legacy form only)
    track: str | None  # branch or tag that `bump` follows
    submodules: bool  # nested submodules follow the pinned commit's gitlinks
    patches: str | None  # folder of *.patch, relative to the root
    submodule_name: str | None  # its name in the root's .gitmodules, when it is one
    key: str  # where the pin stands in the manifest, e.g. "deps.aiter.commit"
    line: int | None  # the pin's line in the manifest (1-based), when found
    abbreviated_from: str | None = None  # the legacy abbreviated pin this one was expanded from
    groups: tuple[str, ...] = ()  # the groups `--group NAME` selects it by

    @property
    def follows(self) -> Followed:
        return followed(self.track)

    @property
    def is_abbreviated(self) -> bool:
        return not is_full_sha(self.commit)


@dataclass(frozen=True)
class Manifest:
    """A loaded manifest: where it is, its root, and its dependencies."""

    path: Path
    root: Path
    deps: tuple[Dep, ...]
    warnings: tuple[str, ...] = ()
    # What loading it read, as stamp entries (qola/repo/trail.py); None: nothing vouches for it.
    looked: tuple[tuple[str, str], ...] | None = None

    def select(
        self, names: tuple[str, ...] | list[str], groups: tuple[str, ...] | list[str] = ()
    ) -> tuple[Dep, ...]:
        """The named dependencies and those in any of the groups (all when neither is given),
        in manifest order."""
        if not names and not groups:
            return self.deps
        known = {dep.name: dep for dep in self.deps}
        for name in names:
            if name not in known:
                raise ManifestError(
                    str(self.path),
                    f"no dependency named {name!r}",
                    _did_you_mean(name, list(known)) or f"known: {', '.join(known) or 'none'}",
                )
        every = sorted({group for dep in self.deps for group in dep.groups})
        for group in groups:
            if group not in every:
                raise ManifestError(
                    str(self.path),
                    f"no dependency is in group {group!r}",
                    _did_you_mean(group, every) or _known_groups(every),
                )
        return tuple(
            dep for dep in self.deps if dep.name in names or any(g in groups for g in dep.groups)
        )


def load(
    path: Path, root: Path | None = None, staged: tuple[bytes, str | None] | None = None
) -> Manifest:
    """Read, parse and validate the manifest at path (noting what it read, for a stamp).

    staged: (the manifest's bytes, the root's .gitmodules text or None) as the index holds
    them, for `verify --manifest-only --staged`; the file and .gitmodules are then not read.
    """
    with recording() as trail:
        manifest = _load(path, root, staged)
    return replace(manifest, looked=None if trail.unprovable else tuple(trail.pairs()))


def _load(path: Path, root: Path | None, staged: tuple[bytes, str | None] | None) -> Manifest:
    path = Path(os.path.abspath(path))
    try:
        if staged is None:
            raw = path.read_bytes()
            saw_file(path, raw)
        else:
            raw = staged[0]
            cannot_prove("the manifest was read from the index")
    except FileNotFoundError:
        raise ManifestError(
            str(path), "no such manifest", "pass --manifest PATH or set QOLA_MANIFEST"
        ) from None
    except OSError as exc:
        hint = None
        if exc.errno == errno.ENAMETOOLONG:
            hint = "give a shorter path to the manifest (a relative one, from a folder nearer it)"
        raise ManifestError(str(path), f"cannot read the manifest: {exc.strerror}", hint) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(str(path), f"not UTF-8 text (byte {exc.start})") from None
    # Editors on Windows start UTF-8 files with a byte order mark, which TOML does not
    # allow; it carries no meaning, so it is skipped (and bump/freeze write it back).
    text = text.removeprefix(BOM)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at, problem = _toml_error(text, exc)
        raise ManifestError(
            f"{path}:{at}" if at else str(path),
            f"invalid TOML: {problem}",
            "fix the syntax there; the manifest is TOML (https://toml.io)",
        ) from None
    except Exception as exc:
        # Whatever else a document does to the parser is still an invalid manifest (exit 2):
        # tomllib recurses once per nesting level, so some hundreds of [[[...]]] exhaust
        # the stack (RecursionError).
        problem = f"cannot parse the manifest: {_why(exc)}"
        raise ManifestError(str(path), problem, _SIMPLER) from None
    loader = _Loader(path, text, data, root)
    if staged is not None:
        loader.gitmodules = staged[1]  # None: read .gitmodules from disk
    try:
        return loader.load()
    except (RecursionError, MemoryError) as exc:
        problem = f"cannot read the manifest: {_why(exc)}"
        raise ManifestError(str(path), problem, _SIMPLER) from None


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "it is nested too deeply"
    if isinstance(exc, MemoryError):
        return "it is too large to hold in memory"
    return f"{type(exc).__name__}: {exc}"[:200]


def _toml_error(text: str, exc: ValueError) -> tuple[str, str]:
    """("line:column", problem) of a TOML syntax error, from tomllib's message."""
    message = str(exc)
    found = _TOML_AT.search(message)
    if not found:
        return "", message
    problem = message[: found.start()]
    if found.group(1):
        return f"{found.group(1)}:{found.group(2)}", problem
    body = text.rstrip()
    line = body.count("\n") + 1
    column = len(body) - body.rfind("\n")
    return f"{line}:{column}", f"{problem} at the end of the file"


@dataclass
class _LegacyExtras:
    """What `[qola] <name>_<key>` keys add to a legacy `<name>_commit` pin."""

    track: str | None = None
    url: str | None = None
    submodules: bool = True
    patches: str | None = None
    groups: tuple[str, ...] = ()


class _Loader:
    def __init__(self, path: Path, text: str, data: dict[str, Any], root: Path | None) -> None:
        self.path = path
        self.text = text
        self.data = data
        self.root_arg = root
        self.warnings: list[str] = []
        self._lines: _Lines | None = None
        self._real_root: tuple[Path, str] | None = None
        self._modules_by_path: dict[str, configfile.Submodule] | None = None
        self._git_dirs: dict[str, bool] = {}  # real folder -> is a git dir
        self.gitmodules: str | None = None  # the root's .gitmodules text, when not read from disk

    def line(self, where: str) -> int | None:
        if self._lines is None:
            self._lines = _Lines(self.text)
        return self._lines.find(where)

    def fail(self, where: str, problem: str, hint: str | Hint | None = None) -> ManifestError:
        return ManifestError(self.at(where), f"{where}: {problem}", hint)

    def at(self, where: str) -> str:
        """`<file>:<line>` of a key, or the file alone when the line is unknown."""
        line = self.line(where)
        return f"{self.path}:{line}" if line else str(self.path)

    def load(self) -> Manifest:
        qola = self.data.get("qola", {})
        if not isinstance(qola, dict):
            raise self.fail("qola", "must be a table")
        self._check_schema(qola)
        root = self._root(qola)
        modules = read_gitmodules(root, self.gitmodules)
        deps: list[Dep] = []
        tables = self.data.get("deps", {})
        if not isinstance(tables, dict):
            raise self.fail(
                "deps",
                "must be a table of [deps.<name>] tables",
                "write each dependency as a [deps.<name>] table with path, url and commit",
            )
        for name, table in tables.items():
            deps.append(self._dep(name, table, root, modules))
        deps.extend(self._legacy_deps(qola, root, modules, {d.name for d in deps}))
        misspelt = self._misspelt_deps()
        if not deps:
            raise ManifestError(
                str(self.path),
                "declares no dependencies",
                misspelt or "add a [deps.<name>] table with path, url and commit",
            )
        if misspelt:
            self.warnings.append(f"{self.path}: {misspelt.removesuffix('?')} (it is ignored)")
        self._check_paths(deps, root)
        self._check_variables(deps)
        return Manifest(self.path, root, tuple(deps), tuple(self.warnings))

    def _misspelt_deps(self) -> str | None:
        """`did you mean [deps.lib]?` for a table that is almost `deps` ([dep.lib] ...).

        Other tables belong to other tools and are left alone; only one this close to
        `deps`, holding tables, is taken for a typo.
        """
        for key, value in self.data.items():
            if key == "deps" or not isinstance(value, dict) or not value:
                continue
            if _is_almost_deps(key) and all(isinstance(v, dict) for v in value.values()):
                first = next(iter(value))
                return f"did you mean [deps.{first}] instead of [{key}.{first}]?"
        return None

    def _check_schema(self, qola: dict[str, Any]) -> None:
        schema = qola.get("schema", SCHEMA)
        if not isinstance(schema, int) or isinstance(schema, bool) or schema < 1:
            raise self.fail("qola.schema", f"must be a positive integer, not {schema!r}")
        if schema > SCHEMA:
            from qola.base.install import upgrade_hint  # lazy: the error path only

            raise self.fail(
                "qola.schema",
                f"schema {schema} is newer than this qola understands (schema {SCHEMA})",
                upgrade_hint(),
            )

    def _root(self, qola: dict[str, Any]) -> Path:
        if self.root_arg is not None:
            # The command line may point anywhere (its user chose), but never into git's
            # own folders.
            root = Path(os.path.abspath(self.root_arg))
            too_long = fslimits.problem(root, root.parts[1:], self.path.parent)
            if too_long is not None:
                raise ManifestError(f"{_short(str(root))} (--root)", *too_long)
            if not root.is_dir():
                raise ManifestError(
                    str(root),
                    "the root folder does not exist",
                    hints.either("check --root (or QOLA_ROOT)", "check qola_checkout()'s ROOT"),
                )
            inside = self._git_dir_on(os.path.realpath(root))
            if inside is not None:
                raise ManifestError(
                    str(root),
                    f"the root lies inside the git dir {inside}",
                    "give the top of the work tree (the folder holding .git), not git's own",
                )
            saw_dir(root)
            return root
        if "root" in qola:
            root = self._qola_root(qola["root"])
            saw_dir(root)
            return root
        root = repository_top(self.path.parent)
        inside = self._git_dir_on(os.path.realpath(root))
        if inside is not None:  # a manifest in no work tree, inside a bare repository
            raise ManifestError(
                str(self.path),
                f"its folder lies inside the git dir {inside}",
                _pass_root("keep the manifest in a work tree, or ", "pass --root"),
            )
        return root

    def _qola_root(self, value: Any) -> Path:
        """`[qola] root`: the rules of a path, but relative to the manifest's folder, where
        `..` may climb up to the top of the repository holding the manifest (no further)."""
        where = "qola.root"
        if not isinstance(value, str) or not value:
            raise self.fail(where, "must be a non-empty string")
        here = self.path.parent
        top = repository_top(here)
        plain = f"write a folder relative to the manifest's, {here}, inside {top}"
        parts = self._relative(where, value, plain, _pass_root(f"{plain}; or ", "pass --root"))
        self._outside_git(where, value, parts)
        root = Path(os.path.normpath(here / value))
        too_long = fslimits.problem(root, parts, here)
        if too_long is not None:
            raise self.fail(where, *too_long)
        if os.path.commonpath([top, root]) != str(top):
            raise self.fail(
                where,
                f"{value!r} leaves {top}, the repository holding the manifest",
                _pass_root(
                    "a manifest may only point inside its own repository; to use another "
                    "folder, "
                ),
            )
        if not root.is_dir():
            raise self.fail(
                where,
                f"{root} is not a folder",
                f"[qola] root is relative to the manifest's folder, {here}",
            )
        real_top, real = os.path.realpath(top), os.path.realpath(root)
        saw_folder(top, real_top)
        saw_folder(root, real)
        if os.path.commonpath([real_top, real]) != real_top:
            raise self.fail(
                where,
                f"{value!r} leaves {top} through a symlink (to {real})",
                _pass_root(
                    "a manifest may only point inside its own repository; to use another "
                    "folder, "
                ),
            )
        inside = self._git_dir_on(real)
        if inside is not None:
            raise self.fail(where, f"{value!r} leads into the git dir {inside}", _OFF_LIMITS)
        return root

    def _git_dir_on(self, real: str) -> str | None:
        """The first folder on the real path `real` that is a git dir, if any.

        A name like `.git` is refused as written; this catches the same folder reached
        through a symbolic link, and git dirs of other names (bare repositories,
        .git/modules/<name>) — anywhere qola would write into git's own files.
        """
        folder = real
        chain = []
        while True:
            chain.append(folder)
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        for folder in reversed(chain):  # from / down: the outermost git dir is named
            known = self._git_dirs.get(folder)
            if known is None:
                known = self._git_dirs[folder] = named_git_dir(folder)
            if known:
                return folder
        return None

    def _dep(self, name: str, table: Any, root: Path, modules: list[configfile.Submodule]) -> Dep:
        where = f"deps.{name}"
        if not isinstance(table, dict):
            raise self.fail(where, "must be a table", f"write it as [deps.{name}]")
        _check_name(self, where, name)
        for key in table:
            if key not in DEP_KEYS:
                hint = _did_you_mean(key, list(DEP_KEYS)) or f"known keys: {', '.join(DEP_KEYS)}"
                raise self.fail(f"{where}.{key}", "unknown key", hint)
        for key in ("path", "url", "commit", "track", "patches"):
            if key in table and not isinstance(table[key], str):
                raise self.fail(f"{where}.{key}", f"must be a string, not {table[key]!r}")
        if "submodules" in table and not isinstance(table["submodules"], bool):
            raise self.fail(f"{where}.submodules", "must be true or false")
        groups = self._groups(f"{where}.groups", table.get("groups", []))
        if "commit" not in table:
            raise self.fail(where, "has no commit", f"pin it: qola bump {name} --to REF")
        commit = self._commit(f"{where}.commit", name, table["commit"], legacy=False)
        path = table.get("path")
        url = table.get("url")
        module = None
        if path is None or url is None:
            module = _match_submodule(self, where, name, path, modules)
            path = path if path is not None else module.path
            if url is None:
                if not module.url:
                    raise self.fail(where, f"submodule {module.name!r} in .gitmodules has no url")
                url = module.url
        elif path is not None:
            if self._modules_by_path is None:
                self._modules_by_path = by_path(modules)
            module = self._modules_by_path.get(str(PurePosixPath(path)))
        path = self._path(f"{where}.path", path, root, "dependency")
        url = self._url(f"{where}.url", url, root)
        track = table.get("track")
        if track is not None:
            track = self._track(f"{where}.track", track)
        patches = table.get("patches")
        if patches is not None:
            patches = self._path(f"{where}.patches", patches, root)
        return Dep(
            name=name,
            path=path,
            url=url,
            commit=commit,
            track=track,
            submodules=table.get("submodules", True),
            patches=patches,
            submodule_name=module.name if module else None,
            key=f"{where}.commit",
            line=self.line(f"{where}.commit"),
            groups=groups,
        )

    def _legacy_deps(
        self,
        qola: dict[str, Any],
        root: Path,
        modules: list[configfile.Submodule],
        taken: set[str],
    ) -> list[Dep]:
        deps: list[Dep] = []
        patches_dir = qola.get("patches_dir")
        if patches_dir is not None:
            if not isinstance(patches_dir, str):
                raise self.fail("qola.patches_dir", "must be a string")
            patches_dir = self._path("qola.patches_dir", patches_dir, root)
        for key, value in qola.items():
            if not key.endswith("_commit") or key == "_commit":
                continue
            name = key[: -len("_commit")]
            where = f"qola.{key}"
            if name in taken:
                raise self.fail(
                    where,
                    f"dependency {name!r} is also declared as [deps.{name}]",
                    f"keep one: remove {key} or the [deps.{name}] table",
                )
            if not isinstance(value, str):
                raise self.fail(where, f"must be a string, not {value!r}")
            _check_name(self, where, name)
            commit = self._commit(where, name, value, legacy=True)
            extra = self._legacy_extras(qola, name, root)
            module = _match_submodule(self, where, name, None, modules)
            url = extra.url
            if url is None:
                if not module.url:
                    raise self.fail(
                        where,
                        f"submodule {module.name!r} in .gitmodules has no url",
                        f'give one: {name}_url = "…"',
                    )
                url = self._url(where, module.url, root)
            deps.append(
                Dep(
                    name=name,
                    path=self._path(where, module.path, root, "dependency"),
                    url=url,
                    commit=commit,
                    track=extra.track,
                    submodules=extra.submodules,
                    patches=extra.patches or patches_dir,
                    submodule_name=module.name,
                    key=where,
                    line=self.line(where),
                    groups=extra.groups,
                )
            )
        shared = [d for d in deps if f"{d.name}_patches" not in qola]
        if patches_dir is not None and deps and not shared:
            raise self.fail(
                "qola.patches_dir",
                "is the patch folder of no dependency: each [qola] pin names its own "
                "(<name>_patches)",
                "remove patches_dir, or the <name>_patches it stands for",
            )
        if patches_dir is not None and len(shared) > 1:
            # One folder cannot be the patch series of several repositories.
            raise self.fail(
                "qola.patches_dir",
                f"is one patch folder but [qola] pins {len(shared)} dependencies "
                f"({', '.join(d.name for d in shared)})",
                f'give each its own: {shared[0].name}_patches = "…" (or a [deps.<name>] table)',
            )
        return deps

    def _legacy_extras(self, qola: dict[str, Any], name: str, root: Path) -> _LegacyExtras:
        """The `<name>_track`, `_url`, `_submodules` and `_patches` keys beside `<name>_commit`."""
        found = _LegacyExtras()
        for key in LEGACY_KEYS:
            full = f"{name}_{key}"
            if full not in qola:
                continue
            where, value = f"qola.{full}", qola[full]
            if key == "submodules":
                if not isinstance(value, bool):
                    raise self.fail(where, "must be true or false")
                found.submodules = value
            elif key == "groups":
                found.groups = self._groups(where, value)
            elif not isinstance(value, str):
                raise self.fail(where, f"must be a string, not {value!r}")
            elif key == "track":
                found.track = self._track(where, value)
            elif key == "url":
                found.url = self._url(where, value, root)
            else:
                found.patches = self._path(where, value, root)
        return found

    def _groups(self, where: str, value: Any) -> tuple[str, ...]:
        """A list of group names: each a name as dependency names are, none twice."""
        example = 'write it as a list of names, e.g. groups = ["fa", "gemm"]'
        if not isinstance(value, list):
            raise self.fail(where, f"must be a list of group names, not {value!r}", example)
        for group in value:
            if not isinstance(group, str) or not _NAME.fullmatch(group):
                raise self.fail(
                    where,
                    f"{group!r} is not a usable group name",
                    "use letters, digits, '_' and '-', starting with a letter or digit",
                )
        if len(set(value)) != len(value):
            twice = next(g for g in value if value.count(g) > 1)
            raise self.fail(where, f"names the group {twice!r} twice", "name each group once")
        return tuple(value)

    def _track(self, where: str, track: str) -> str:
        if not track or track.startswith("-") or _CONTROL.search(track):
            raise self.fail(where, f"{track!r} is not a branch or tag name")
        why = names.ref_name_problem(track)
        if why is not None:
            # git asks the remote for it, and a fetch takes it as a refspec: `a:b` would
            # write the ref b, `+a` force it, `a*` fetch every ref it matches.
            raise self.fail(
                where,
                f"{track!r} is not a branch or tag name git accepts ({why})",
                "give the branch or tag as git names it, e.g. main, release/2.1 or v2.1.0",
            )
        return track

    def _commit(self, where: str, name: str, value: str, legacy: bool) -> str:
        commit = value.strip().lower()
        if is_full_sha(commit):
            return commit
        if legacy and _ABBREV_SHA.match(commit):
            self.warnings.append(
                f"{self.at(where)}: {where}: abbreviated SHA {commit!r}; "
                f"`qola freeze {name}` writes it in full"
            )
            return commit
        if re.fullmatch(r"[0-9a-fA-F]+", value.strip()):
            problem = f"{value!r} is not a full commit SHA (40 hex digits, or 64 for sha256)"
        else:
            problem = f"{value!r} is a branch or tag name, not a commit SHA"
        raise self.fail(where, problem, f"qola bump {name} --to {value.strip() or 'REF'}")

    def _relative(
        self, where: str, value: str, plain: str, absolute: str | Hint
    ) -> tuple[str, ...]:
        """The parts of a relative POSIX path (a dependency's or the root's), or exit 2."""
        if _CONTROL.search(value):
            raise self.fail(where, f"{value!r} contains control characters", plain)
        if "\\" in value:
            raise self.fail(where, f"{value!r} contains '\\'", "separate folders with '/'")
        if value.startswith("/") or _DRIVE.match(value):
            raise self.fail(where, f"{value!r} is absolute", absolute)
        return PurePosixPath(value).parts

    def _outside_git(self, where: str, value: str, parts: tuple[str, ...]) -> None:
        if any(part.lower() == ".git" for part in parts):
            raise self.fail(where, f"{value!r} has a .git component", _OFF_LIMITS)

    def _path(self, where: str, value: str, root: Path, kind: str = "folder") -> str:
        """A folder below the root (kind "dependency": one qola clones, see fslimits)."""
        plain = 'write a relative path such as "3rdparty/aiter"'
        if not value:
            raise self.fail(where, "is empty", plain)
        parts = self._relative(where, value, plain, f"paths are relative to the root, {root}")
        if ".." in parts:
            raise self.fail(where, f"{value!r} contains '..'", "paths must stay inside the root")
        self._outside_git(where, value, parts)
        norm = str(PurePosixPath(*[p for p in parts if p != "."])) if parts else ""
        if norm in ("", "."):
            raise self.fail(
                where, f"{value!r} is the root itself", "give it a folder below the root"
            )
        too_long = fslimits.problem(root / norm, tuple(norm.split("/")), root, kind)
        if too_long is not None:
            raise self.fail(where, *too_long)
        if self._real_root is None or self._real_root[0] != root:
            self._real_root = (root, os.path.realpath(root))
            saw_folder(root, self._real_root[1])
        real_root = self._real_root[1]
        real = os.path.realpath(os.path.join(root, norm))
        saw_folder(os.path.join(root, norm), real)
        if os.path.commonpath([real_root, real]) != real_root:
            raise self.fail(
                where,
                f"{value!r} leaves the root through a symlink (to {real})",
                f"paths must stay inside the root, {real_root}",
            )
        inside = self._git_dir_on(real)
        if inside is not None:
            raise self.fail(
                where,
                f"{value!r} leads into the git dir {inside} through a symlink",
                "git's own folders are off limits",
            )
        return norm

    def _url(self, where: str, value: str, root: Path) -> str:
        allowed = f"use {_ALLOWED_URLS}"
        if not value or _CONTROL.search(value) or value != value.strip():
            raise self.fail(
                where,
                f"{value!r} is not a usable URL (empty, blanks or control characters)",
                allowed,
            )
        if value.startswith("-"):
            raise self.fail(
                where, f"{value!r} starts with '-', which git would read as an option", allowed
            )
        if _HELPER_TRANSPORT.match(value):
            raise self.fail(
                where, f"{value!r} uses a '<helper>::' transport, which can run commands", allowed
            )
        scheme = SCHEME.match(value)
        if scheme:
            if scheme.group(1).lower() not in _ALLOWED_SCHEMES:
                raise self.fail(
                    where, f"{value!r}: scheme {scheme.group(1)!r} is not allowed", allowed
                )
            return value
        if SCP_LIKE.match(value) and not value.startswith(("/", "./", "../")):
            return value
        local = Path(value if os.path.isabs(value) else os.path.normpath(root / value))
        # A repository no file system can hold: git could only fail to find it.
        too_long = fslimits.problem(local, local.parts[1:], self.path.parent)
        if too_long is not None:
            raise self.fail(where, *too_long)
        return value if os.path.isabs(value) else str(local)

    def _check_variables(self, deps: list[Dep]) -> None:
        """Two names that CMake and the override spell as one variable (`my-lib`, `my_lib`,
        `MY_LIB`): each would silently take the other's QOLA_<NAME>_SHA and
        QOLA_SOURCE_DIR_<NAME>."""
        seen: dict[str, Dep] = {}
        for dep in deps:
            variable = names.variable_name(dep.name)
            other = seen.setdefault(variable, dep)
            if other is not dep:
                raise self.fail(
                    dep.key.removesuffix(".commit"),
                    f"{dep.name} and {other.name} are one name to CMake and to the source "
                    f"override: both become QOLA_{variable}_SHA and "
                    f"{names.override_variable(dep.name)}",
                    "give one of them a name that differs in more than case, '-' and '_'",
                )

    def _check_paths(self, deps: list[Dep], root: Path) -> None:
        seen: dict[str, Dep] = {}
        for dep in deps:
            if dep.submodule_name is not None:  # its repository: .git/modules/<name>
                gitdir = root / ".git" / "modules" / dep.submodule_name
                folders = tuple(dep.submodule_name.split("/"))
                too_long = fslimits.problem(gitdir, folders, root, "gitdir")
                if too_long is not None:
                    raise self.fail(
                        _path_key(dep),
                        f"its submodule's name in .gitmodules, where git keeps its "
                        f"repository (.git/modules/<name>): {too_long[0]}",
                        "give the submodule a shorter name in .gitmodules",
                    )
            if dep.path in seen:
                raise self.fail(
                    _path_key(dep),
                    f"{dep.name} and {seen[dep.path].name} have the same path {dep.path!r}",
                    "give each dependency its own folder",
                )
            seen[dep.path] = dep
        order = {dep.name: i for i, dep in enumerate(deps)}
        for dep in deps:
            # The folders above dep's path that other dependencies hold: the first declared.
            parts = dep.path.split("/")
            above = [seen["/".join(parts[:i])] for i in range(1, len(parts))
                     if "/".join(parts[:i]) in seen]  # fmt: skip
            if above:
                other = min(above, key=lambda o: order[o.name])
                raise self.fail(
                    _path_key(dep),
                    f"{dep.name} at {dep.path!r} is inside {other.name} at {other.path!r}",
                    "give each dependency its own folder; a dependency's own submodules "
                    "follow its pin and need no entry",
                )


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:28] + "…" + text[-28:]


def _path_key(dep: Dep) -> str:
    """Where a dep's path comes from: deps.<name>.path, or the legacy <name>_commit key."""
    return f"deps.{dep.name}.path" if dep.key == f"deps.{dep.name}.commit" else dep.key


def _check_name(loader: _Loader, where: str, name: str) -> None:
    # No dots: a name is a TOML key segment (deps.<name>.commit) and a CMake variable part.
    if not _NAME.fullmatch(name):
        raise loader.fail(
            where,
            f"{name!r} is not a usable dependency name",
            "use letters, digits, '_' and '-', starting with a letter or digit",
        )
    if len(name) > fslimits.NAME_MAX:
        # The name is a folder of qola's refs: refs/qola/backup/<name>/ holds its backups.
        raise loader.fail(
            where,
            f"the name {name[:20]}… is {len(name)} characters long; a name may have "
            f"{fslimits.NAME_MAX} (it names a folder, refs/qola/backup/<name>/)",
            "give it a shorter name",
        )


def _match_submodule(
    loader: _Loader,
    where: str,
    name: str,
    path: str | None,
    modules: list[configfile.Submodule],
) -> configfile.Submodule:
    if path is not None:
        found = by_path(modules).get(str(PurePosixPath(path)))
        if found:
            return found
        raise loader.fail(
            where,
            f"has no url and no submodule of the root is at {path!r}",
            'add url = "…" or declare the submodule in .gitmodules',
        )
    matches = [m for m in modules if m.name == name]
    if not matches:
        matches = [m for m in modules if PurePosixPath(m.path).name == name]
    if len(matches) == 1:
        return matches[0]
    candidates = ", ".join(f"{m.name} ({m.path})" for m in (matches or modules)) or "none"
    if not matches:
        problem = f"no submodule of the root matches {name!r} (candidates: {candidates})"
    else:
        problem = f"more than one submodule matches {name!r} (candidates: {candidates})"
    if where.startswith("qola."):
        hint = f'declare it as a [deps.{name}] table with path = "…" and url = "…"'
    else:
        hint = 'give path = "…" (and url = "…") explicitly'
    raise loader.fail(where, problem, hint)


def _is_almost_deps(key: str) -> bool:
    """A table name someone meant as `deps`: dep, dependencies, Deps, depss ..."""
    import difflib  # only for this check, on a manifest that needs it

    folded = key.lower().replace("_", "").replace("-", "")
    if folded in ("dep", "deps", "dependency", "dependencies"):
        return True
    return difflib.SequenceMatcher(None, folded, "deps").ratio() >= 0.75


def _known_groups(every: list[str]) -> str:
    """The hint of an unknown group: the groups there are, or how a dependency joins one."""
    if every:
        return f"groups: {', '.join(every)}"
    return 'the manifest has no groups; a dependency joins one with groups = ["NAME"]'


def _did_you_mean(word: str, choices: list[str]) -> str | None:
    import difflib  # only for messages

    close = difflib.get_close_matches(word, choices, n=1)
    return f"did you mean {close[0]!r}?" if close else None


class _Lines:
    """Where each key and table header stands in a manifest (1-based): one pass, then lookups.

    A key the file does not spell out (a path taken from .gitmodules) falls back to the
    header of its own table, then of its parent (best effort, for messages).
    """

    def __init__(self, text: str) -> None:
        self.keys: dict[tuple[str, str], int] = {}
        self.headers: dict[str, int] = {}
        current = ""
        for number, line in enumerate(text.splitlines(), 1):
            # [table] and [[array.of.tables]] (e.g. the [[modules]] of TE manifests) alike.
            header = _HEADER.match(line.strip())
            if header:
                current = _DOTS.sub(".", header.group(1).replace('"', "").replace("'", ""))
                self.headers.setdefault(current, number)
                continue
            key = _KEY.match(line)
            if key:
                self.keys.setdefault((current, key.group(1)), number)

    def find(self, dotted: str) -> int | None:
        """The line of a key like deps.aiter.commit or qola.aiter_commit."""
        table, _, key = dotted.rpartition(".")
        return self.keys.get((table, key)) or self.headers.get(dotted) or self.headers.get(table)
