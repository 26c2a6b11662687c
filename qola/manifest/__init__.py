"""Load and validate a manifest into frozen dataclasses; nothing later sees a raw dict."""

from __future__ import annotations

import errno
import os
import re
import sys
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from qola.base import names
from qola.base.errors import ManifestError
from qola.base.hints import Hint
from qola.manifest import legacy_keys, roots, values
from qola.manifest.gitmodules import by_path, read_gitmodules
from qola.manifest.model import (
    BOM,
    DEP_KEYS,
    LEGACY_KEYS,
    SCHEMA,
    Dep,
    Followed,
    Manifest,
    did_you_mean,
    followed,
)
from qola.manifest.values import UNPINNED, check_name, match_submodule
from qola.repo import configfile, fslimits
from qola.repo.trail import cannot_prove, recording, saw_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# What `from qola.manifest import …` gives: the model, and load.
__all__ = [
    "BOM", "DEP_KEYS", "LEGACY_KEYS", "SCHEMA", "UNPINNED", "Dep", "Followed", "Manifest",
    "followed", "load",
]


# tomllib (and tomli) end their messages with the position; only Python 3.14 adds attributes.
_TOML_AT = re.compile(r"\s*\((?:at line (\d+), column (\d+)|at end of document)\)$")
_HEADER = re.compile(r"^\[\[?\s*([^\[\]]+?)\s*\]")
_DOTS = re.compile(r"\s*\.\s*")
_KEY = re.compile(r"^\s*[\"']?([^\"'=\s]+?)[\"']?\s*=")
_SIMPLER = "a manifest is a short TOML file; check that this is the file you meant"


def load(
    path: Path,
    root: Path | None = None,
    staged: tuple[bytes, str | None] | None = None,
    allow_empty: bool = False,
    repair: str | None = None,
) -> Manifest:
    """Read, parse and validate the manifest at path (noting what it read, for a stamp).

    staged: (the manifest's bytes, the root's .gitmodules text or None) as the index holds
    them, for `verify --manifest-only --staged`; the file and .gitmodules are then not read.
    allow_empty: a file that declares no dependency at all loads too (`qola add` adds the
    first one to another tool's file).
    repair: the one dependency whose pin may be a branch or tag name (`bump NAME --to REF`,
    which rewrites it): its commit is then UNPINNED. Every other command passes None.
    """
    with recording() as trail:
        manifest = _load(path, root, staged, allow_empty, repair)
    return replace(manifest, looked=None if trail.unprovable else tuple(trail.pairs()))


def _load(
    path: Path,
    root: Path | None,
    staged: tuple[bytes, str | None] | None,
    allow_empty: bool,
    repair: str | None = None,
) -> Manifest:
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
    loader = Loader(path, text, data, root)
    loader.allow_empty = allow_empty
    loader.repair = repair
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


class Loader:
    """One manifest's load: its text and data, the root, what it warns of; the steps of the
    check live beside it (values, roots, legacy_keys) and take it as `loader`."""

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
        self.allow_empty = False  # a file that declares no dependency loads (for `qola add`)
        self.repair: str | None = None  # the dependency whose ref-name pin passes (load's repair)

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
        root = roots.root(self, qola)
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
        deps.extend(legacy_keys.deps(self, qola, root, modules, {d.name for d in deps}))
        misspelt = self._misspelt_deps()
        # An empty [deps] table says so on purpose (what `qola init` writes before the
        # first `qola add`); a file without one that pins nothing is not a manifest.
        if not deps and (misspelt or "deps" not in self.data) and not self.allow_empty:
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


    def _dep(self, name: str, table: Any, root: Path, modules: list[configfile.Submodule]) -> Dep:
        where = f"deps.{name}"
        if not isinstance(table, dict):
            raise self.fail(where, "must be a table", f"write it as [deps.{name}]")
        check_name(self, where, name)
        for key in table:
            if key not in DEP_KEYS:
                hint = did_you_mean(key, list(DEP_KEYS)) or f"known keys: {', '.join(DEP_KEYS)}"
                if key in ("version", "release"):
                    hint = ('a pin\'s release is its label: write tag = "v1.2" in its place '
                            "(a tag that names the pinned commit; qola keeps it true)")
                raise self.fail(f"{where}.{key}", "unknown key", hint)
        for key in ("path", "url", "commit", "tag", "track", "patches", "allowed-signers",
                    "keyring"):
            if key in table and not isinstance(table[key], str):
                raise self.fail(f"{where}.{key}", f"must be a string, not {table[key]!r}",
                                values.string_hint(f"{where}.{key}"))  # fmt: skip
        if "submodules" in table and not isinstance(table["submodules"], bool):
            raise self.fail(f"{where}.submodules", "must be true or false")
        groups = values.groups(self, f"{where}.groups", table.get("groups", []))
        if "commit" not in table:
            raise self.fail(where, "has no commit", f"pin it: qola bump {name} --to REF")
        commit = values.commit(self, f"{where}.commit", name, table["commit"], legacy=False)
        path = table.get("path")
        url = table.get("url")
        module = None
        if path is None or url is None:
            module = match_submodule(self, where, name, path, modules)
            path = path if path is not None else module.path
            if url is None:
                if not module.url:
                    raise self.fail(where, f"submodule {module.name!r} in .gitmodules has no url")
                url = module.url
        elif path is not None:
            if self._modules_by_path is None:
                self._modules_by_path = by_path(modules)
            module = self._modules_by_path.get(str(PurePosixPath(path)))
        path = values.path(self, f"{where}.path", path, root, "dependency")
        url = values.url(self, f"{where}.url", url, root)
        track = table.get("track")
        if track is not None:
            track = values.track(self, f"{where}.track", track)
        patches = table.get("patches")
        if patches is not None:
            patches = values.path(self, f"{where}.patches", patches, root)
        tag = table.get("tag")
        if tag is not None:
            tag = values.tag(self, f"{where}.tag", tag)
        signers, keyring = (values.key_file(self, f"{where}.{key}", table.get(key), root)
                            for key in ("allowed-signers", "keyring"))  # fmt: skip
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
            tag=tag,
            allowed_signers=signers,
            keyring=keyring,
        )


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


def _path_key(dep: Dep) -> str:
    """Where a dep's path comes from: deps.<name>.path, or the legacy <name>_commit key."""
    return f"deps.{dep.name}.path" if dep.key == f"deps.{dep.name}.commit" else dep.key


def _is_almost_deps(key: str) -> bool:
    """A table name someone meant as `deps`: dep, dependencies, Deps, depss ..."""
    import difflib  # only for this check, on a manifest that needs it

    folded = key.lower().replace("_", "").replace("-", "")
    if folded in ("dep", "deps", "dependency", "dependencies"):
        return True
    return difflib.SequenceMatcher(None, folded, "deps").ratio() >= 0.75


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
