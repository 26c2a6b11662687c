"""A patch file cut by repository: the part of it that changes files of one repository.

A patch in a dependency's folder may change files that lie inside one of its nested
submodules (`3rdparty/composable_kernel/include/x.hpp`): git cannot apply those in the
dependency, whose tree only records the submodule's commit. Each `diff --git` section
belongs to the repository its path lies in; the part for a nested submodule has the
submodule's path taken off its file names, as if the patch had been made there.
How the parts are ordered and named: docs/patches.md, "Patches that reach into a
nested submodule"."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator

_SECTION = re.compile(rb"^diff --git ", re.M)
# The header lines of a section that name its files, and how each spells a path.
_NAMES = (
    (b"--- a/", b"\t"),
    (b"+++ b/", b"\t"),
    (b"rename from ", b""),
    (b"rename to ", b""),
    (b"copy from ", b""),
    (b"copy to ", b""),
)


class CrossingError(ValueError):
    """A section whose files lie in two repositories (a rename across a submodule's edge)."""


# Each patch is read by several questions (does it reach below a path? its part?) on
# every look, the no-op's included: its sections and their paths are worked out once.
_READ: dict[bytes, tuple[bytes, list[tuple[bytes, frozenset[str]]]]] = {}


def sections(data: bytes) -> tuple[bytes, list[tuple[bytes, frozenset[str]]]]:
    """The text before a patch's first `diff --git` (a mail's headers and message), and
    each file's section with the paths it names; no sections for a diff that is not in
    git's form."""
    found = _READ.get(data)
    if found is None:
        starts = [match.start() for match in _SECTION.finditer(data)]
        ends = [*starts[1:], len(data)] if starts else []
        cut = [data[a:b] for a, b in zip(starts, ends, strict=True)]
        found = data[: starts[0]] if starts else data, [(c, frozenset(paths(c))) for c in cut]
        _READ[data] = found
    return found


def _header(section: bytes) -> Iterator[bytes]:
    """The lines of a section before its first hunk or binary data."""
    for line in section.splitlines(keepends=True):
        if line.startswith((b"@@", b"GIT binary patch", b"Binary files ")):
            return
        yield line


def paths(section: bytes) -> set[str]:
    """The files a section changes, as the patch names them (relative to its repository).

    Names git quotes (unusual characters) are not read: such a section stays where its
    patch file is, as if it named no file.
    """
    found: set[str] = set()
    lines = list(_header(section))
    for line in lines[1:]:
        for start, end in _NAMES:
            if line.startswith(start):
                name = line[len(start) :].rstrip(b"\r\n")
                if end:
                    name = name.split(end, 1)[0]
                if not name.startswith(b'"'):
                    found.add(name.decode("utf-8", errors="surrogateescape"))
    if not found and lines:
        # No ---/+++ lines (a mode change, an empty file): `diff --git a/P b/P` names it.
        rest = lines[0][len(b"diff --git ") :].rstrip(b"\r\n")
        half = (len(rest) - 1) // 2
        symmetric = rest[2:half] == rest[half + 3 :] and len(rest) % 2
        if rest.startswith(b"a/") and rest[half : half + 3] == b" b/" and symmetric:
            found.add(rest[2:half].decode("utf-8", errors="surrogateescape"))
    return found


def inside(path: str, repo: str) -> bool:
    """path (relative to the dependency) lies in the repository at repo ("": anywhere)."""
    return not repo or path.startswith(repo + "/")


def part(data: bytes, folder: str, repo: str, inner: Collection[str]) -> bytes | None:
    """The part of a patch from the folder for repository `folder` that changes the files
    of repository `repo` (paths relative to the dependency), none of those inside its
    nested submodules `inner`; None when it changes none of them. A patch entirely for
    repo comes back unchanged."""
    head, found = sections(data)
    if not found:
        return data if folder == repo else None
    kept: list[bytes] = []
    for section, named in found:
        names = {_join(folder, name) for name in named} or {_join(folder, "-")}
        here = [inside(n, repo) and not any(inside(n, sub) for sub in inner) for n in names]
        if all(here):
            kept.append(section)
        elif any(here):
            raise CrossingError(", ".join(sorted(names)))
    if not kept:
        return None
    if len(kept) == len(found) and folder == repo:
        return data
    prefix = (repo[len(folder) + 1 :] if folder else repo) + "/" if repo != folder else ""
    return head + b"".join(_strip(section, prefix.encode()) for section in kept)


def reaches(data: bytes, folder: str, repo: str) -> bool:
    """The patch (from the folder for repository `folder`) changes a file below repo."""
    return any(_below(data, folder, repo, deeper=False))


def reaches_deeper(data: bytes, folder: str, repo: str) -> bool:
    """The patch changes a file inside a directory of repo: one that may lie in a nested
    submodule of repo's, so where its sections belong depends on repo's gitlinks."""
    return any(_below(data, folder, repo, deeper=True))


def _below(data: bytes, folder: str, repo: str, deeper: bool) -> Iterator[bool]:
    _, found = sections(data)
    if not found:
        yield folder == repo and not deeper
        return
    for _, named in found:
        for name in named or {"-"}:
            full = _join(folder, name)
            rest = full[len(repo) + 1 :] if repo else full
            yield inside(full, repo) and (not deeper or "/" in rest)


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _strip(section: bytes, prefix: bytes) -> bytes:
    """The section with prefix taken off the file names in its header."""
    if not prefix:
        return section
    out = []
    lines = section.splitlines(keepends=True)
    header = len(list(_header(section)))
    for i, line in enumerate(lines):
        if i == 0:
            line = line.replace(b" a/" + prefix, b" a/", 1).replace(b" b/" + prefix, b" b/", 1)
        elif i < header:
            for start, _ in _NAMES:
                if line.startswith(start + prefix):
                    line = start + line[len(start) + len(prefix) :]
                    break
        out.append(line)
    return b"".join(out)
