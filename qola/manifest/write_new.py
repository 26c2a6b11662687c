"""Write a new manifest, whole, for `qola init` (edits of existing ones go through edit.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import tomli_w

from qola.base.errors import ManifestError
from qola.manifest import SCHEMA

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
