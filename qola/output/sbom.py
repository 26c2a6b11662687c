"""A bill of materials of the pins, in CycloneDX 1.6 or SPDX 2.3 JSON, made with each
format's own library (qola's `sbom` extra): whether the library is there, and the document
with its identifier derived from its content. sbom_cyclonedx and sbom_spdx build each
format's document, from what sbom_common says alike.

What each document says and why: docs/sbom.md."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from qola.base import safetext
from qola.base.errors import UsageError
from qola.output.sbom_common import Options as Options

if TYPE_CHECKING:
    from qola.sync.inventory import Inventory

# What qola's `sbom` extra holds (pyproject.toml), by the module each format imports.
REQUIREMENTS = {
    "cyclonedx": "cyclonedx-python-lib>=8.0",
    "spdx_tools": "spdx-tools>=0.8.2",
    "packageurl": "packageurl-python>=0.11.1",
}
_NEEDS = {"cyclonedx": ("cyclonedx", "packageurl"), "spdx": ("spdx_tools", "packageurl")}
_NIL = uuid.UUID(int=0)
# A UUID of no document: the namespace of the UUIDs qola derives from a document's content.
_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "qola:sbom")


class MissingPackagesError(UsageError):
    """A format's library is not installed (or cannot be imported) in qola's Python."""


Builder = Callable[["Inventory", Options, uuid.UUID], str]


def render(inventory: Inventory, build: Builder, options: Options) -> str:
    """The document build makes, as JSON text (ASCII, ending in a newline): the same
    inventory and options give the same bytes."""
    text = build(inventory, options, _NIL)
    # The serial number (CycloneDX) or namespace (SPDX) is derived from everything else
    # the document says: equal documents share it, documents that differ never do.
    derived = uuid.uuid5(_NAMESPACE, hashlib.sha256(text.encode()).hexdigest())
    return _ascii_json(build(inventory, options, derived))


def _ascii_json(text: str) -> str:
    """JSON text as a CI log may show it: `##[` (a command to a GitHub runner) written
    `#\\u0023[`, the same string to a parser; one newline at the end."""
    return text.rstrip("\n").replace("##[", "#\\u0023[") + "\n"


def builder(fmt: str) -> Builder:
    """The format's document builder; MissingPackagesError when its libraries are missing."""
    missing = [REQUIREMENTS[m] for m in _NEEDS[fmt] if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingPackagesError(
            "sbom",
            f"--format {fmt} needs {_listed(missing)}, which this Python "
            f"({sys.executable}) does not have",
            f"install {'it' if len(missing) == 1 else 'them'} (qola's sbom extra): "
            + install_command(missing),
        )
    try:
        if fmt == "cyclonedx":
            from qola.output import sbom_cyclonedx  # lazy: needs the sbom extra

            return sbom_cyclonedx.document
        from qola.output import sbom_spdx  # lazy: needs the sbom extra

        return sbom_spdx.document
    except ImportError as error:
        needed = [REQUIREMENTS[m] for m in _NEEDS[fmt]]
        raise MissingPackagesError(
            "sbom",
            f"--format {fmt} cannot import what it needs ({error}); it needs {_listed(needed)}",
            "install them anew (qola's sbom extra): " + install_command(needed, upgrade=True),
        ) from None


def install_command(requirements: list[str], upgrade: bool = False) -> str:
    """The pip command that installs requirements into the Python that runs qola."""
    words = [sys.executable, "-m", "pip", "install", *(["--upgrade"] if upgrade else []),
             *requirements]  # fmt: skip
    return " ".join(safetext.shell_word(word) for word in words)


def _listed(items: list[str]) -> str:
    names = [re.split(r"[<>=!~\[ ]", item, maxsplit=1)[0] for item in items]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
