"""Stamps: what a look read, recorded as it read it, and whether all of it still holds.

What each kind of entry means and why: docs/stamps.md, "What a stamp entry means"."""

from __future__ import annotations

import os
from contextvars import ContextVar

from qola.base.digest import sha256_hex

TYPE_CHECKING = False  # typing's own costs the stamped no-op a third of its time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from pathlib import Path

# The one version of a stamp's meaning, for the no-op's stamp files and the CMake results
# file alike (QoLA.cmake keeps a copy; a test proves the two equal). Bump it whenever what
# an entry means changes: stamps of another format are then never trusted.
FORMAT = 2

Pair = tuple[str, str]


class Trail:
    """What a look read, as stamp entries; and the files whose change re-runs a configure."""

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str], str] = {}  # (path, what of it) -> expectation
        self.watch: dict[str, None] = {}  # HEAD files, gitfiles, a branch's ref (ordered set)
        self.unprovable: str | None = None  # why no stamp can be made from this look

    def note(self, path: str, expectation: str) -> None:
        if not os.path.isabs(path) or ".." in path.split(os.sep):
            self.unprovable = self.unprovable or f"{path}: not a plain absolute path"
            return
        # What is there (missing, dir, content), where it leads, what it globs to.
        kind = expectation.partition(":")[0]
        aspect = kind if kind in ("realpath", "glob") else ""
        if self.entries.setdefault((path, aspect), expectation) != expectation:
            self.unprovable = self.unprovable or f"{path} changed while it was read"

    def pairs(self) -> list[Pair]:
        return [(path, expectation) for (path, _), expectation in self.entries.items()]

    def absorb(self, other: Trail) -> None:
        for key, expectation in other.entries.items():  # each a plain path: note checked it
            if self.entries.setdefault(key, expectation) != expectation:
                self.unprovable = self.unprovable or f"{key[0]} changed while it was read"
        self.watch.update(other.watch)
        self.unprovable = self.unprovable or other.unprovable


_TRAIL: ContextVar[Trail | None] = ContextVar("qola_stamp_trail", default=None)


class recording:  # lower case: used as the function it was, `with recording() as trail`
    """Note what is read meanwhile (on this thread); an enclosing recording gets it too.

    (A class, not a contextlib.contextmanager: the stamped no-op imports no contextlib.)
    """

    def __enter__(self) -> Trail:
        self.trail = Trail()
        self.token = _TRAIL.set(self.trail)
        return self.trail

    def __exit__(self, *exc: object) -> None:
        _TRAIL.reset(self.token)
        outer = _TRAIL.get()
        if outer is not None:
            outer.absorb(self.trail)


class paused:  # lower case: used as the function it was, `with paused()`
    """Reads meanwhile do not count (they cannot change the answer)."""

    def __enter__(self) -> None:
        self.token = _TRAIL.set(None)

    def __exit__(self, *exc: object) -> None:
        _TRAIL.reset(self.token)


def replay(trail: Trail) -> None:
    """What an earlier look read counts as read now (it still holds: the caller checked)."""
    current = _TRAIL.get()
    if current is not None:
        current.absorb(trail)


def saw_file(path: str | Path, data: bytes | None) -> None:
    """A file was read (None: it did not exist)."""
    trail = _TRAIL.get()
    if trail is not None:
        expectation = "missing" if data is None else "sha256:" + sha256_hex(data)
        trail.note(os.fspath(path), expectation)


def saw_file_exists(path: str | Path) -> None:
    """A file was found to be there (its content follows from its name)."""
    trail = _TRAIL.get()
    if trail is not None:
        trail.note(os.fspath(path), "file")


def saw_dir(path: str | Path) -> None:
    """A folder was found to be there."""
    trail = _TRAIL.get()
    if trail is not None:
        trail.note(os.fspath(path), "dir")


def saw_folder(path: str | Path, real: str | None = None) -> None:
    """Where a folder leads (real: its realpath, when known) mattered: a `..` after it,
    a symlink check on the way."""
    trail = _TRAIL.get()
    if trail is not None and (os.fspath(path), "realpath") not in trail.entries:
        if real is None:
            real = os.path.realpath(path)
        trail.note(os.fspath(path), "realpath:" + sha256_hex(os.fsencode(real)))


def exists(path: str | Path) -> bool:
    """os.path.exists, noted as what is there (a folder, a file's content) or nothing."""
    trail = _TRAIL.get()
    if trail is None:
        return os.path.exists(path)
    expectation = expect(path)
    if expectation == "missing" and os.path.exists(path):
        trail.unprovable = trail.unprovable or f"{path} cannot be read"
        return True
    trail.note(os.fspath(path), expectation)
    return expectation != "missing"


def saw_patches(folder: Path, names: Iterable[str]) -> None:
    """The `*.patch` files found below a folder (relative POSIX paths)."""
    trail = _TRAIL.get()
    if trail is not None:
        trail.note(os.fspath(folder), _glob(names))


def watch(path: str | Path) -> None:
    """A file a hand checkout or commit rewrites: a CMake configure depends on it."""
    trail = _TRAIL.get()
    if trail is not None:
        trail.watch[os.fspath(path)] = None


def cannot_prove(why: str) -> None:
    """What was read cannot vouch for the answer later (a branch HEAD, an unreadable file)."""
    trail = _TRAIL.get()
    if trail is not None and trail.unprovable is None:
        trail.unprovable = why


class Proof:  # a plain class: a NamedTuple would import typing, a dataclass inspect
    """A look's stamp (None when nothing can vouch for its answer) and the files to watch."""

    __slots__ = ("entries", "watch")

    def __init__(self, entries: list[Pair] | None, watch: tuple[str, ...] = ()) -> None:
        self.entries = entries
        self.watch = watch

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Proof):
            return NotImplemented
        return (self.entries, self.watch) == (other.entries, other.watch)

    def __repr__(self) -> str:
        return f"Proof({self.entries!r}, {self.watch!r})"


def vouch(loaded: Sequence[Pair] | None, look: Callable[[], bool]) -> Proof:
    """What vouches for look()'s answer: what loading the manifest read (loaded, its
    `looked`; None: nothing vouches for it) and what look() reads, if they all still hold
    after it (qola/sync/at_pin.py's `proven` is the look of "every dependency at
    its pin").

    Each entry is what was read, as it was read: another run moving a dependency while
    this one looks leaves an entry that no longer holds, so no stamp vouches for a mix.
    look() runs even when no stamp can be had (its answer may be what the caller is after).
    """
    version = os.path.join(os.path.dirname(os.path.dirname(__file__)), "__init__.py")
    # (another qola may decide otherwise)
    with recording() as trail:
        seen = look()
    watched = tuple(trail.watch)
    if not seen or trail.unprovable or loaded is None:
        return Proof(None, watched)
    combined = Trail()
    combined.note(str(version), expect(version))
    for path, expectation in [*loaded, *trail.pairs()]:
        combined.note(path, expectation)
    pairs = combined.pairs()
    if combined.unprovable or not holds(pairs):
        return Proof(None, watched)
    return Proof(pairs, watched)


def holds(pairs: Iterable[tuple[str, str]]) -> bool:
    """True when every path still meets its expectation (an unknown expectation: False)."""
    real: dict[str, str] = {}  # folders resolved so far: the entries share most of them
    for path, expectation in pairs:
        if expectation == "missing":
            if os.path.exists(path):
                return False
        elif expectation == "dir":
            if not os.path.isdir(path):
                return False
        elif expectation == "file":
            if not os.path.isfile(path):
                return False
        elif expectation.startswith("sha256:"):
            try:
                with open(path, "rb") as handle:
                    if sha256_hex(handle.read()) != expectation[7:]:
                        return False
            except OSError:  # missing, or a folder
                return False
        elif expectation.startswith("glob:"):
            if not os.path.isdir(path) or expect_patches(path) != expectation:
                return False
        elif expectation.startswith("realpath:"):
            resolved = os.fsencode(_realpath(path, real))
            if "realpath:" + sha256_hex(resolved) != expectation:
                return False
        else:
            return False
    return True


def _realpath(path: str, known: dict[str, str]) -> str:
    """os.path.realpath(path) for an absolute path without `.` or `..`, each folder on the
    way resolved once per `known` (os.path.realpath looks at every one of them each time)."""
    found = known.get(path)
    if found is None:
        parent, name = os.path.split(path)
        if not name or parent == path:
            found = path
        else:
            candidate = os.path.join(_realpath(parent, known), name)
            found = os.path.realpath(candidate) if os.path.islink(candidate) else candidate
        known[path] = found
    return found


def expect(path: str | Path) -> str:
    """The expectation a path meets now: `dir`, `sha256:<hex>` or `missing`."""
    if os.path.isdir(path):
        return "dir"
    try:
        with open(path, "rb") as handle:
            return "sha256:" + sha256_hex(handle.read())
    except OSError:
        return "missing"


def expect_realpath(path: str | Path) -> str:
    """The same digest as QoLA.cmake's: sha256 of file(REAL_PATH)'s bytes."""
    return "realpath:" + sha256_hex(os.fsencode(os.path.realpath(path)))


def patch_files(folder: str | Path) -> list[Path]:
    from pathlib import Path  # lazy: a stamp of a tree without patches never globs

    return sorted(p for p in Path(folder).rglob("*.patch") if p.is_file())


def expect_patches(folder: str | Path) -> str:
    """The same digest as QoLA.cmake's: sorted relative paths, joined by `;`."""
    return _glob(p.relative_to(folder).as_posix() for p in patch_files(folder))


def _glob(names: Iterable[str]) -> str:
    return "glob:" + sha256_hex(";".join(sorted(names)).encode("utf-8"))


def found(path: str, expectation: str) -> str:
    """What path meets now, in the terms of expectation's kind."""
    kind = expectation.partition(":")[0]
    if kind == "realpath":
        return expect_realpath(path)
    if kind == "glob":
        return expect_patches(path) if os.path.isdir(path) else "missing"
    if kind == "file":
        return "file" if os.path.isfile(path) else expect(path)
    return expect(path)


def explain(pairs: Sequence[Pair]) -> list[str]:
    """One line per entry that no longer holds: the path, what was seen, what is there now."""
    return [
        f"{path}: was {expectation}, now {found(path, expectation)}"
        for path, expectation in pairs
        if not holds([(path, expectation)])
    ]
