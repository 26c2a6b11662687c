"""What both bill-of-materials formats say alike: package URLs, licenses, identifiers,
the words for what verify found (qola/output/sbom.py makes the documents)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote

from qola.base import licenses, urls

if TYPE_CHECKING:
    from qola.sync.inventory import Component, Inventory

# A GitHub or GitLab URL's own purl type; any other host is named by a generic purl.
_HOSTS = {"github.com": "github", "www.github.com": "github", "gitlab.com": "gitlab"}


@dataclass(frozen=True)
class Options:
    """What a document is made with beyond the inventory."""

    time: int | None  # the document's date (SOURCE_DATE_EPOCH, else the root commit's)
    version: str  # qola's


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
        if urls.SCHEME.match(url):  # percent-encoded as a URL; packageurl encodes them anew
            parts = [unquote(part) for part in parts]
        if any("/" in part for part in parts):  # a %2F: no owner/name shape to trust
            parts = []
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
