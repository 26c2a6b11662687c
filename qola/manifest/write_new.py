"""Write a new manifest, whole, for `qola init`, or a new dependency's table for `qola add`
(edits of existing pins go through edit.py)."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import Any

import tomli_w

from qola.base.errors import ManifestError
from qola.manifest import SCHEMA

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# (name, path, url, commit); a url of None is left out and comes from .gitmodules at load.
Submodule = tuple[str, str, str | None, str]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")  # the rule of manifest._check_name
_HEADER = "# Pins of this project's git dependencies; `qola bump NAME` moves one.\n"


def render_init(submodules: Sequence[Submodule]) -> str:
    """The text of a new manifest pinning each submodule at its commit."""
    deps: dict[str, dict[str, Any]] = {}
    for name, path, url, commit in submodules:
        if not _NAME.fullmatch(name):
            raise ManifestError(
                path,
                f"{name!r} is not a usable dependency name",
                "use letters, digits, '_' and '-', starting with a letter or digit",
            )
        if name in deps:
            raise ManifestError(
                path,
                f"dependency name {name!r} is also used for {deps[name]['path']!r}",
                "give one of them another name",
            )
        dep = {"path": path, "url": url, "commit": commit}
        deps[name] = {key: value for key, value in dep.items() if value is not None}
    return _HEADER + "\n" + tomli_w.dumps({"qola": {"schema": SCHEMA}, "deps": deps})


# What `qola init` writes where the root has no submodules: a manifest that loads, with
# no dependency yet (an empty [deps] table says there are none on purpose).
EMPTY = """\
# Add a dependency:  qola add NAME URL --tag T
#   e.g. qola add fmt https://github.com/fmtlib/fmt.git --tag 11.0.2
# (or --branch B, --commit SHA; none: the remote's default branch). It resolves the
# ref to a full commit SHA, appends a [deps.NAME] table here and checks it out in
# 3rdparty/NAME (--path P to choose). `qola bump NAME` moves a pin; `qola checkout`
# brings every dependency to its pin.

[qola]
schema = 1

[deps]
"""


def dep_table(
    name: str,
    path: str,
    url: str,
    commit: str,
    tag: str | None = None,
    track: str | None = None,
    submodules: bool = True,
    keys: tuple[tuple[str, str], ...] = (),
) -> str:
    """The `[deps.NAME]` table `qola add` appends: path, url, commit, then tag (on the
    line after commit), track and `submodules = false` where they apply, then keys (the
    files of signing keys: allowed-signers, keyring)."""
    if not _NAME.fullmatch(name):
        raise ManifestError(
            name,
            f"{name!r} is not a usable dependency name",
            "use letters, digits, '_' and '-', starting with a letter or digit",
        )
    lines = [f"[deps.{name}]"]
    for key, value in (("path", path), ("url", url), ("commit", commit), ("tag", tag),
                       ("track", track)):  # fmt: skip
        if value is not None:
            lines.append(tomli_w.dumps({key: value}).rstrip("\n"))
    if not submodules:
        lines.append("submodules = false")
    for key, value in keys:
        lines.append(tomli_w.dumps({key: value}).rstrip("\n"))
    return "\n".join(lines) + "\n"


def appended(text: str, table: str) -> str:
    """text with table added at its end after a blank line, in the file's own line endings
    (CRLF where its first line ends so); a last line without its newline gets one."""
    newline = "\r\n" if text.partition("\n")[0].endswith("\r") else "\n"
    if text and not text.endswith("\n"):
        text += newline
    if text.strip():
        text += newline if not text.endswith(newline * 2) else ""
    return text + table.replace("\n", newline)


def check_appended(old_text: str, new_text: str, name: str, table: dict[str, Any]) -> None:
    """Refuse an addition whose parse is not the old one's plus deps.<name> = table."""
    try:
        old, new = tomllib.loads(old_text), tomllib.loads(new_text)
        deps = dict(new.get("deps", {}))
        added = deps.pop(name, None)
        rest = {**new, "deps": deps} if deps or "deps" in old else {
            key: value for key, value in new.items() if key != "deps"}  # fmt: skip
        same = repr(added) == repr(table) and repr(rest) == repr(old)
    except (tomllib.TOMLDecodeError, AttributeError, TypeError):
        same = False
    if not same:
        raise ManifestError(
            name,
            "adding its table would change more of the manifest than the table (a [deps] "
            "written as an inline table, or dotted keys?); nothing was written",
            f"add the [deps.{name}] table by hand",
        )
