"""What a file system can hold: the length of a name and of a whole path, in bytes.

A manifest's paths (a dependency's folder, its patches, `[qola] root`) and the command
line's `--root` become folders qola and git create and open. A name longer than the file
system allows (NAME_MAX, 255 bytes on Linux and macOS) or a path longer than PATH_MAX
(4096 bytes on Linux, 1024 on macOS; the terminating NUL included) loads as any other
text, and then every command fails with "File name too long". So they are measured at
load, as the file system will see them: in the bytes of the file system's encoding (a
UTF-8 "é" is two), with what qola and git add to them counted in:

- beside a dependency's folder, the temporary clone `.<name>.qola-clone-<pid>`
  (CLONE_NAME bytes more than the folder's own name);
- below it, git's own files: `.git/objects/pack/pack-<64 hex>.idx` is the longest name
  git writes directly in a repository (GIT_ROOM bytes).
"""

from __future__ import annotations

import os
from pathlib import Path

from qola import store

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
