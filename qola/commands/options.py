"""The options two parsers read: click's (qola/cli.py) and the no-op's (qola/noop.py).

Both build from these tables, so they cannot drift: cli.py turns each Spec into a
click option, noop.py reads argv with the same spellings and checks values with
`accepts`, which refuses whatever click's type would refuse. A test compares the
two option by option. This module imports nothing heavy: the no-op reads it
before click is imported.
"""

from __future__ import annotations

import math
import os

TYPE_CHECKING = False  # the no-op imports this: typing would cost it more than the rest
if TYPE_CHECKING:
    from pathlib import Path

MANIFEST_NAME = "qola.toml"
MANIFEST_PATTERN = "*qola*manifest*.toml"  # TE's qola_manifest.toml, found in the index
MANIFEST_NAMES = f"{MANIFEST_NAME} or {MANIFEST_PATTERN}"

# What click's boolean conversion accepts from an environment variable (anything else is
# an error there); "" is an unset flag.
BOOLEAN_WORDS = frozenset(
    {"", "1", "0", "true", "false", "t", "f", "yes", "no", "y", "n", "on", "off"}
)


class Spec:
    """One option: its spellings, where else its value may come from, and its type.

    (A plain class: a NamedTuple would import typing, a dataclass inspect, each costing the
    no-op more than the rest of this module.)
    """

    __slots__ = ("choices", "default", "dest", "envvar", "flags", "help", "kind", "metavar")

    def __init__(
        self,
        dest: str,  # the parameter's name in Python
        flags: tuple[str, ...],  # every spelling, e.g. ("-m", "--manifest")
        help: str,  # click's name for it
        kind: str = "flag",  # flag, file, folder, choice, count, seconds, positive-seconds
        envvar: str | None = None,
        choices: tuple[str, ...] = (),
        default: str | None = None,  # as typed on the command line (None: none)
        metavar: str | None = None,
    ) -> None:
        self.dest = dest
        self.flags = flags
        self.help = help
        self.kind = kind
        self.envvar = envvar
        self.choices = choices
        self.default = default
        self.metavar = metavar

    def __repr__(self) -> str:
        return f"Spec({self.dest!r}, {self.flags!r})"

    @property
    def is_flag(self) -> bool:
        return self.kind == "flag"

    def accepts(self, value: str) -> bool:
        """Would click's type for this option take value (as the no-op needs to know)?"""
        if self.kind == "flag":
            return value.strip().lower() in BOOLEAN_WORDS
        if self.kind == "choice":
            return value.lower() in self.choices
        if self.kind == "count":
            return value.isascii() and value.strip().isdigit() and int(value) >= 1
        if self.kind in ("seconds", "positive-seconds"):
            try:
                seconds = float(value)
            except ValueError:
                return False
            if math.isnan(seconds) or seconds < 0:
                return False
            return seconds > 0 or self.kind == "seconds"
        # click.Path(dir_okay=False) and (file_okay=False) refuse these before anything
        # runs; and click.Path(readable=True), its default, an existing unreadable path.
        if not value:
            return False
        if self.kind == "file" and os.path.isdir(value):
            return False
        if self.kind == "folder" and os.path.isfile(value):
            return False
        return not (os.path.exists(value) and not os.access(value, os.R_OK))


MANIFEST = Spec(
    "manifest",
    ("-m", "--manifest"),
    f"The manifest file (env QOLA_MANIFEST). Default: {MANIFEST_NAME} in the current "
    "folder or the nearest folder above it, up to the top of the git repository; else "
    f"the one {MANIFEST_NAMES} that repository's index tracks.",
    kind="file",
    envvar="QOLA_MANIFEST",
)
ROOT = Spec(
    "root",
    ("--root",),
    "Folder the manifest's paths are relative to (env QOLA_ROOT). "
    "Default: the top of the git repository holding the manifest.",
    kind="folder",
    envvar="QOLA_ROOT",
)
SAFE_DIRECTORY = Spec(
    "safe_directory",
    ("--safe-directory",),
    "Which repositories git may trust when they belong to another user "
    "(env QOLA_SAFE_DIRECTORY).",
    kind="choice",
    envvar="QOLA_SAFE_DIRECTORY",
    choices=("scoped", "all", "off"),
    default="scoped",
)
VERBOSE = Spec("verbose", ("-v", "--verbose"), "Say which path each step took and each git "
               "command as it starts.")  # fmt: skip
QUIET = Spec("quiet", ("-q", "--quiet"), "Only errors and results: no notes, no progress.")

# Every command that reads a manifest takes these, before or after its name.
COMMON = (MANIFEST, ROOT, SAFE_DIRECTORY, VERBOSE, QUIET)

OFFLINE = Spec("offline", ("--offline",), "Never use the network.", envvar="QOLA_OFFLINE")
FORCE = Spec("force", ("--force",), "Move dependencies even over local work (saved first).")
JOBS = Spec(
    "jobs",
    ("-j", "--jobs"),
    "Dependencies to clone or fetch at once (env QOLA_JOBS).",
    kind="count",
    envvar="QOLA_JOBS",
    default="1",
)
CACHE = Spec(
    "cache",
    ("--cache",),
    "Folder of shared bare mirrors, one per URL; clones borrow their objects "
    "(env QOLA_CACHE_DIR).",
    kind="folder",
    envvar="QOLA_CACHE_DIR",
)
CMAKE_OUT = Spec(
    "cmake_out",
    ("--cmake-out",),
    "Write QOLA_<NAME>_SHA/_SOURCE_DIR for CMake here (only when it changes).",
    kind="file",
)
LOCK_TIMEOUT = Spec(
    "lock_timeout",
    ("--lock-timeout",),
    "How long to wait for another qola run on this root (0: not at all, inf: for ever; "
    "env QOLA_LOCK_TIMEOUT). Then exit 3.",
    kind="seconds",
    envvar="QOLA_LOCK_TIMEOUT",
    default="600",
    metavar="SECONDS",
)
FETCH_TIMEOUT = Spec(
    "fetch_timeout",
    ("--fetch-timeout",),
    "Stop any one git network command (clone, fetch, ls-remote) after this long "
    "(inf: never; env QOLA_FETCH_TIMEOUT). Then exit 3.",
    kind="positive-seconds",
    envvar="QOLA_FETCH_TIMEOUT",
    default="600",
    metavar="SECONDS",
)

# checkout's own options, after the common ones: what the no-op reads.
CHECKOUT = (OFFLINE, FORCE, JOBS, CACHE, CMAKE_OUT, LOCK_TIMEOUT, FETCH_TIMEOUT)


def by_flag(specs: tuple[Spec, ...]) -> dict[str, Spec]:
    """Each spelling of each option, to its Spec."""
    return {flag: spec for spec in specs for flag in spec.flags}


def find_manifest(start: str) -> tuple[str, bool]:
    """The manifest a command without -m reads, and whether it was found there.

    qola.toml in start or the nearest folder above it, up to the top of the git
    repository holding start (the nearest folder with a .git); outside any repository,
    in start only. Not found: start/qola.toml, which the loader reports as missing.
    (Strings, not Paths: the no-op imports no pathlib.)
    """
    top = search_top(start)
    folder = start
    while True:
        candidate = os.path.join(folder, MANIFEST_NAME)
        if os.path.isfile(candidate):
            return candidate, True
        parent = os.path.dirname(folder)
        if folder == top or parent == folder:
            return os.path.join(start, MANIFEST_NAME), False
        folder = parent


def search_top(start: str) -> str:
    """The last folder find_manifest looks in: the top of the git repository holding
    start (the nearest folder with a .git), or start itself outside any repository."""
    top = start
    while not os.path.lexists(os.path.join(top, ".git")):
        parent = os.path.dirname(top)
        if parent == top:
            return start  # in no repository
        top = parent
    return top


def is_manifest_name(path: str) -> bool:
    """Whether a file the index tracks is a manifest a command without -m may take, when
    no qola.toml is found upward: named qola.toml, or *qola*manifest*.toml (TE's
    qola_manifest.toml), in any folder."""
    import fnmatch  # lazy: the no-op imports this module, and never looks in the index

    name = path.rpartition("/")[2]
    return name == MANIFEST_NAME or fnmatch.fnmatchcase(name, MANIFEST_PATTERN)


def manifest_note(
    manifest: str | Path, searched_from: str | Path | None, tracked: str | None = None
) -> str:
    """Which manifest a command reads, as -v says it (the no-op's words too); tracked: the
    top of the repository whose index named it."""
    path = os.path.abspath(manifest)
    if searched_from is None:
        return f"manifest: {path}"
    if tracked is not None:
        return (
            f"manifest: {path} (none found upward from {searched_from}; the one the index "
            f"of {tracked} tracks)"
        )
    return f"manifest: {path} (searched for from {searched_from})"
