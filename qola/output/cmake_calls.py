"""The build's other qola_checkout() calls, as QoLA.cmake describes them: a folder two
manifests pin to different commits stops a checkout before anything moves.

The variable QoLA.cmake sets: docs/cmake.md, "What QoLA.cmake tells the qola it starts"."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote

from qola import manifest
from qola.base.errors import QolaError, UsageError
from qola.manifest import Dep, Manifest
from qola.output.cmake_env import reconfigure
from qola.repo import trail
from qola.sync.observe import override_dir

CALLS = "QOLA_CMAKE_CALLS"


class Call(NamedTuple):  # not a dataclass: the no-op imports this module
    """Another qola_checkout() of the build, as QoLA.cmake describes it."""

    earlier: bool  # made earlier in this configure; else one the last configure made later
    manifest: Path
    root: Path | None
    names: tuple[str, ...]
    groups: tuple[str, ...]


def other_calls() -> list[Call]:
    """The build's other qola_checkout() calls (QOLA_CMAKE_CALLS), earlier ones first."""
    calls: list[Call] = []
    for line in os.environ.get(CALLS, "").splitlines():
        fields = line.split("|")
        if len(fields) != 5 or fields[0] not in ("earlier", "later") or not fields[1]:
            continue
        names, groups = (
            tuple(unquote(item) for item in field.split(",") if item) for field in fields[3:]
        )
        root = Path(unquote(fields[2])) if fields[2] else None
        calls.append(Call(fields[0] == "earlier", Path(unquote(fields[1])), root, names, groups))
    return sorted(calls, key=lambda call: not call.earlier)


def check_claims(manifest: Manifest, deps: tuple[Dep, ...]) -> None:
    """Stop, before anything moves, when another qola_checkout() of this build pins one of
    deps' folders to another commit, whether it came earlier in this configure or comes
    later (the last configure made it)."""
    calls = other_calls()
    if not calls:
        return
    mine = {
        _folder(manifest.root, dep.path): dep for dep in deps if override_dir(dep.name) is None
    }
    for call in calls:
        if os.path.abspath(call.manifest) == os.path.abspath(manifest.path):
            continue  # one manifest pins a folder once
        for folder, commit in _pins(call):
            dep = mine.get(folder)
            if dep is None or commit.startswith(dep.commit) or dep.commit.startswith(commit):
                continue  # (a legacy pin may be abbreviated)
            when = (
                "checked out earlier in this configure"
                if call.earlier
                else "which a later qola_checkout() of this build checks out"
            )
            hint = (
                "pin the same commit in both manifests, or give the dependency its own "
                "path in one of them"
            )
            if not call.earlier:
                hint += (
                    f"; if no qola_checkout() reads {call.manifest} any more, forget the "
                    f"calls of the last configure: {reconfigure('-U_QOLA_CALLS')}"
                )
            raise UsageError(
                dep.name,
                f"{folder} is pinned to {dep.commit[:12]} by {manifest.path} and to "
                f"{commit[:12]} by {call.manifest}, {when}; one folder cannot hold both, so "
                "nothing was changed",
                hint,
            )


def _pins(call: Call) -> list[tuple[str, str]]:
    """(folder, commit) for each dependency the call checks out; none when its manifest
    cannot be read (that call fails by itself and says why)."""
    try:
        with trail.paused():  # another call's manifest: not what this call's answer rests on
            loaded = manifest.load(call.manifest, call.root)
        deps = loaded.select(call.names, call.groups)
    except (QolaError, OSError, UnicodeDecodeError):
        return []
    return [
        (_folder(loaded.root, dep.path), dep.commit)
        for dep in deps
        if override_dir(dep.name) is None
    ]


def _folder(root: Path, path: str) -> str:
    return os.path.normpath(os.path.abspath(root / path))
