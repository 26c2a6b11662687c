"""A bill of materials of the pins, in CycloneDX 1.6 or SPDX 2.3 JSON, made with each
format's own library (qola's `sbom` extra): this module holds what both formats say alike
(package URLs, licenses, identifiers); sbom_cyclonedx and sbom_spdx build the documents.

What each document says and why: docs/sbom.md."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from qola.base import licenses, safetext, urls
from qola.base.errors import UsageError

if TYPE_CHECKING:
    from qola.sync.inventory import Component, Inventory

FORMATS = ("cyclonedx", "spdx")
# What qola's `sbom` extra holds (pyproject.toml), by the module each format imports.
REQUIREMENTS = {
    "cyclonedx": "cyclonedx-python-lib>=8.0",
    "spdx_tools": "spdx-tools>=0.8.2",
    "packageurl": "packageurl-python>=0.11.1",
}
_NEEDS = {"cyclonedx": ("cyclonedx", "packageurl"), "spdx": ("spdx_tools", "packageurl")}
# A GitHub or GitLab URL's own purl type; any other host is named by a generic purl.
_HOSTS = {"github.com": "github", "www.github.com": "github", "gitlab.com": "gitlab"}
_NIL = uuid.UUID(int=0)
# A UUID of no document: the namespace of the UUIDs qola derives from a document's content.
_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "qola:sbom")


class MissingPackagesError(UsageError):
    """A format's library is not installed (or cannot be imported) in qola's Python."""


@dataclass(frozen=True)
class Options:
    """What a document is made with beyond the inventory."""

    time: int | None  # the document's date (SOURCE_DATE_EPOCH, else the root commit's)
    version: str  # qola's


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


def purl(component: Component) -> str:
    """The package URL of component at its commit: pkg:github/OWNER/NAME@SHA for a
    github.com URL, pkg:gitlab/GROUP[/SUBGROUP...]/NAME@SHA for a gitlab.com one, else
    pkg:generic/NAME@SHA with vcs_url=git+URL@SHA (no vcs_url when the URL is not known)."""
    from packageurl import PackageURL

    url, commit = component.url, component.commit
    if url is not None:
        host, path = urls.place(url)
        kind = _HOSTS.get(host)
        parts = path.removesuffix(".git").split("/")
        if kind == "github" and len(parts) == 2 and all(parts):
            return str(PackageURL(kind, parts[0], parts[1], commit).to_string())
        if kind == "gitlab" and len(parts) >= 2 and all(parts):
            return str(PackageURL(kind, "/".join(parts[:-1]), parts[-1], commit).to_string())
    qualifiers = {"vcs_url": vcs_location(url, commit)} if url and commit else None
    return str(PackageURL("generic", None, component.name, commit, qualifiers).to_string())


def vcs_location(url: str, commit: str) -> str:
    """Where commit is, as SPDX spells a download location: git+URL@SHA."""
    return f"git+{urls.as_uri(url)}@{commit}"


def license_expression(files: tuple[tuple[str, str], ...] | None) -> str | None:
    """The SPDX expression the license files declare (docs/sbom.md, "Licenses"), as the
    SPDX license list spells it; None for NOASSERTION."""
    if not files:
        return None
    from license_expression import ExpressionError, get_spdx_licensing

    licensing = get_spdx_licensing()
    known = frozenset(symbol.key for symbol in licensing.known_symbols.values())
    found = licenses.declared(dict(files), known)
    if found is None:
        return None
    try:
        parsed = licensing.parse(found, validate=True, strict=True)
    except ExpressionError:
        return None
    if parsed is None or not all(s.key in known for s in licensing.license_symbols(parsed)):
        return None
    return str(parsed.render())


class Ids:
    """Identifiers unique within one document, each made of the text it names: the same
    components in the same order get the same identifiers."""

    def __init__(self, allowed: str, prefix: str) -> None:
        self._not_allowed = re.compile(f"[^{allowed}]")
        self._prefix = prefix
        self._given: dict[str, str] = {}
        self._taken: set[str] = set()

    def __call__(self, key: str) -> str:
        given = self._given.get(key)
        if given is not None:
            return given
        base = self._prefix + (self._not_allowed.sub("-", key) or "-")
        found, n = base, 1
        while found in self._taken:
            n += 1
            found = f"{base}-{n}"
        self._taken.add(found)
        self._given[key] = found
        return found


def finding_lines(component: Component) -> list[tuple[bool, str]]:
    """What verify said of component: (failure, "kind: message"), in its order."""
    return [(f.failure, f"{f.kind}: {f.message}") for f in component.findings]


def nested_unknown(component: Component, inventory: Inventory) -> str | None:
    """Why component's nested submodules are not known (None: they are)."""
    if component.children is not None:
        return None
    if inventory.manifest_only:
        return "not read: --manifest-only reads no dependency's folder"
    return "not read: the tree does not hold them as pinned (see the drift recorded)"
