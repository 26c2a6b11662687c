"""What git's setup reads of a repository's config before anything else (core.* and
extensions.*), read from its files as git does, and the refusals it leads to."""

from __future__ import annotations

import os
import re

from qola.repo import trail
from qola.repo.gitpaths import physical as _physical

# Repository extensions git honours in a repository of format 0, and those it honours in
# format 1 only (setup.c: handle_extension_v0, handle_extension). An unknown one makes git
# refuse a format-1 repository; a format-0 repository ignores it, unless git knows it as a
# format-1 extension. refstorage and compatobjectformat are left out on purpose: the
# refs and objects they describe are not what these reads understand.
_EXTENSIONS_V0 = frozenset({"noop", "preciousobjects", "partialclone", "worktreeconfig"})
_EXTENSIONS_V1 = frozenset({"noop-v1", "objectformat"})
_V1_ONLY = frozenset({"noop-v1", "objectformat", "compatobjectformat", "refstorage"})
_OBJECT_FORMATS = frozenset({"sha1", "sha256"})


def format_problem(settings: dict[str, str]) -> str | None:
    """Why git would refuse the repository's format (check_repository_format_gently)."""
    raw = settings.get("core.repositoryformatversion", "0")
    if not re.fullmatch(r"\s*[0-9]+\s*", raw):
        return f"core.repositoryformatversion is {raw!r}, not a number"
    version = int(raw)
    if version > 1:
        return f"its format version is {version}; git reads versions 0 and 1"
    for key, value in settings.items():
        if not key.startswith("extensions."):
            continue
        name = key[len("extensions.") :]
        if version == 0 and name in _V1_ONLY:
            return f"format version 0 with the version-1 extension {name}"
        if version == 1 and name not in _EXTENSIONS_V0 | _EXTENSIONS_V1:
            return f"unknown repository extension: {name}"
        if name == "objectformat" and value.lower() not in _OBJECT_FORMATS:
            return f"unknown object format {value!r}"
    return None


def worktree_problem(settings: dict[str, str], gitdir: str, worktree: str) -> str | None:
    """Why git would not see worktree as this repository's work tree (core.bare, core.worktree)."""
    bare = _boolean(settings.get("core.bare", "false"))
    if bare is None:
        return f"core.bare is {settings['core.bare']!r}, not a boolean"
    if bare:
        return "core.bare is true: git sees no work tree"
    configured = settings.get("core.worktree")
    if configured is None:
        return None
    # git changes into the git dir and then into core.worktree (setup_explicit_git_dir).
    where = _physical(os.path.join(gitdir, configured))
    if where is None or not os.path.isdir(where):
        return f"core.worktree is {configured}, which does not exist"
    if where == worktree:
        return None  # the same path, wherever it leads (as git writes it for submodules)
    real_where, real_worktree = os.path.realpath(where), os.path.realpath(worktree)
    trail.saw_folder(where, real_where)
    trail.saw_folder(worktree, real_worktree)
    if real_where != real_worktree:
        return f"core.worktree is {configured}, not this folder"
    return None


def read_settings(data: bytes, name: str) -> dict[str, str] | str:
    """The core.* and extensions.* values of a config file as git's setup reads them (no
    includes), or why git cannot read it. Read here only where that reading is exact;
    else git reads it, or (on the no-op path, which runs no git) it is a reason to leave
    the answer to the full command."""
    if re.fullmatch(_PLAIN_CONFIG, data):
        plain = _plain_settings(data.decode("ascii"))
        if plain is not None:
            return plain
    from qola.repo import configfile  # lazy: rare configs only (dataclasses: 6 ms)

    try:
        entries = configfile.entries(data)
    except configfile.UnreadableConfig as error:
        line = re.search(r"bad config line (\d+)", error.why)
        return f"{name}: bad config line {line.group(1)}" if line else f"{name}: {error.why}"
    if entries is None:
        # Git held back (the no-op): the answer is git's to give, and nothing read here can
        # vouch for "not a repository", so no stamp and no observation handed on rests on it.
        trail.cannot_prove(f"{name}: read exactly only by git")
        return f"{name}: a config qola reads exactly only with git"
    found = {}
    for entry in entries:
        if entry.subsection is None and entry.section in ("core", "extensions"):
            found[f"{entry.section}.{entry.key}"] = "true" if entry.value is None else entry.value
    return found


# A config as git writes it: headers, comments and `key = value` lines with no quote,
# escape or comment in the value, in printable ASCII (and tabs), each line ended. Read line
# by line without the full parser (this runs for every repository on the no-op path);
# anything else takes the careful way. Patterns, not compiled here: re caches them.
_VALUE_CHARS = r"\t\x20\x21\x24-\x3a\x3c-\x5b\x5d-\x7e"  # not " # ; \\


_PLAIN_CONFIG = (
    rb'(?:[ \t]*(?:\[[A-Za-z0-9.-]+(?:[ \t]+"[\t\x20\x21\x23-\x5b\x5d-\x7e]*")?\]'
    rb"|[#;][\t\x20-\x7e]*"
    rb"|[A-Za-z][A-Za-z0-9-]*(?:[ \t]*=[" + _VALUE_CHARS.encode() + rb"]*)?)?[ \t]*\r?\n)*"
)


def _plain_settings(text: str) -> dict[str, str] | None:
    """The core.* and extensions.* values of a plain config (None: not read here after all:
    a key before any section)."""
    found = {}
    section: str | None = None
    for line in text.split("\n"):
        line = line.strip(" \t\r")
        if line.startswith("["):
            name = line[1:-1]
            section = name.lower() if name.lower() in ("core", "extensions") else ""
        elif line and line[0] not in "#;":
            if section is None:
                return None
            key, equals, value = line.partition("=")
            # git turns each blank inside a value into a space and drops those at its ends.
            value = value.strip(" \t").replace("\t", " ") if equals else "true"
            if section:
                found[section + "." + key.strip(" \t").lower()] = value
    return found


def _boolean(value: str) -> bool | None:
    """git's reading of a boolean setting, or None when git would refuse it."""
    lowered = value.strip().lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off", ""):
        return False
    number = re.fullmatch(r"[-+]?[0-9]+[kmg]?", lowered)
    return None if number is None else int(lowered.rstrip("kmg")) != 0
