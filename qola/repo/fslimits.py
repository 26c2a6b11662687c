"""What a file system can hold: the length of a name and of a whole path, in bytes.

What is measured at load, and what qola and git add: docs/manifest.md, "Names and paths a
file system can hold"."""

from __future__ import annotations

import os
from pathlib import Path

from qola.repo import store

NAME_MAX = 255
PATH_MAX = 4096  # with the terminating NUL: the longest path is one byte less
# `.` + name + `.qola-clone-` + a pid (pid_max is at most 4194304 on Linux: 7 digits).
CLONE_NAME = len(store.temp_clone(Path("x")).name) - len("x") - len(str(os.getpid())) + 7
GIT_ROOM = len("/.git/objects/pack/pack-") + 64 + len(".idx")


def limits(folder: Path) -> tuple[int, int]:
    """(NAME_MAX, PATH_MAX) of the file system holding folder (or the usual values when
    the system does not say)."""
    found = []
    for key, usual in (("PC_NAME_MAX", NAME_MAX), ("PC_PATH_MAX", PATH_MAX)):
        try:
            value = os.pathconf(folder, key)
        except (OSError, ValueError, AttributeError):
            value = -1
        found.append(value if value > 0 else usual)
    return found[0], found[1]


def problem(
    path: Path, parts: tuple[str, ...], within: Path, kind: str = "folder"
) -> tuple[str, str] | None:
    """(problem, hint) when path, whose last len(parts) components are parts (the ones
    the user wrote), cannot be held by the file system of `within`; None when it can.

    kind: "dependency" (a clone is made beside it and git writes inside it), "gitdir"
    (a repository git makes there, as .git/modules/<name>), "folder" (read, or written
    into by qola's own short names).
    """
    name_max, path_max = limits(within)
    for at, part in enumerate(parts):
        size = len(os.fsencode(part))
        last = at == len(parts) - 1
        allowed = name_max - CLONE_NAME if kind == "dependency" and last else name_max
        if size > allowed:
            why = (
                f"{name_max} bytes less the {CLONE_NAME} of the temporary clone qola makes "
                "beside it"
                if allowed < name_max
                else "what a file system allows"
            )
            return (
                f"the name {_short(part)} is {size} bytes long; a name may have {allowed} "
                f"({why})",
                "shorten that folder name (bytes count: a UTF-8 letter such as é is two)",
            )
    size = len(os.fsencode(str(path)))
    room = {"dependency": CLONE_NAME + GIT_ROOM, "gitdir": GIT_ROOM}.get(kind, 0)
    if size + room > path_max - 1:
        more = ","
        if kind == "dependency":
            more = (f"; with {room} bytes more for the temporary clone beside it and git's "
                    "own files in it, that is")  # fmt: skip
        elif kind == "gitdir":
            more = f"; with {room} bytes more for git's own files in it, that is"
        return (
            f"its full path {_short(str(path))} is {size} bytes long{more} more than the "
            f"{path_max - 1} bytes a path may have on this system (PATH_MAX)",
            "use a shorter path, or move the project to a folder with a shorter path",
        )
    return None


def _short(text: str) -> str:
    """A long name, shown by its ends."""
    return repr(text) if len(text) <= 60 else repr(text[:28] + "…" + text[-28:])
