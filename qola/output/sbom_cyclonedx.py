"""The CycloneDX 1.6 JSON document of an inventory, built with cyclonedx-python-lib.

What goes where, and why: docs/sbom.md, "CycloneDX"."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING

from cyclonedx.model import (
    AttachedText,
    Encoding,
    ExternalReference,
    ExternalReferenceType,
    Property,
    XsUri,
)
from cyclonedx.model.bom import Bom
from cyclonedx.model.component import (
    Commit,
    Component,
    ComponentType,
    Diff,
    Patch,
    PatchClassification,
    Pedigree,
)
from cyclonedx.model.dependency import Dependency
from cyclonedx.model.license import DisjunctiveLicense, LicenseExpression
from cyclonedx.output.json import JsonV1Dot6
from cyclonedx.spdx import is_supported_id
from packageurl import PackageURL

from qola.base import urls
from qola.output import sbom_common as sbom

if TYPE_CHECKING:
    import uuid

    from qola.sync import inventory as facts


def document(inventory: facts.Inventory, options: sbom.Options, serial: uuid.UUID) -> str:
    """The BOM: the root as metadata.component, each dependency a component with its
    nested submodules inside it, the dependency graph as the nesting is."""
    bom = Bom(serial_number=serial)
    # Optional in CycloneDX, and a date would make runs differ: none (the library's
    # setter is annotated for a datetime, and writes none for None).
    bom.metadata.timestamp = None  # type: ignore[assignment]
    bom.metadata.tools.components.add(
        Component(type=ComponentType.APPLICATION, name="qola", version=options.version)
    )
    root = _component(inventory.root, inventory)
    bom.metadata.component = root
    bom.metadata.properties.update(_document_properties(inventory))
    built = [_component(dep, inventory) for dep in inventory.deps]
    bom.components.update(built)
    graph = [Dependency(root.bom_ref, [Dependency(c.bom_ref) for c in built])]
    for fact, made in zip(inventory.deps, built, strict=True):
        graph.extend(_graph(fact, made))
    bom.dependencies.update(graph)
    written = json.loads(JsonV1Dot6(bom).output_as_string())
    # The library gives every top-level component an entry in the graph (Bom.validate),
    # and an empty one says it has no dependencies; one whose nested submodules were not
    # read has none, which says they are not known (CycloneDX 1.6, "dependencies").
    unknown = {_ref(dep) for dep in inventory.deps if dep.children is None}
    written["dependencies"] = [
        entry for entry in written.get("dependencies", [])
        if entry["ref"] not in unknown or entry.get("dependsOn")
    ]  # fmt: skip
    return json.dumps(written, indent=2)


def _graph(fact: facts.Component, made: Component) -> list[Dependency]:
    """Each component's entry, listing the nested submodules it holds; none for one whose
    nested submodules are not known (CycloneDX: not in the graph, so unknown)."""
    if fact.children is None:
        return []
    inner = list(made.components)
    found = [Dependency(made.bom_ref, [Dependency(c.bom_ref) for c in inner])]
    by_ref = {str(c.bom_ref): c for c in inner}
    for child in fact.children:
        found.extend(_graph(child, by_ref[_ref(child)]))
    return found


def _ref(fact: facts.Component) -> str:
    return f"component:{fact.path}" if fact.path else "root"


def _component(fact: facts.Component, inventory: facts.Inventory) -> Component:
    license_files = fact.patched_license_files if fact.patched else fact.license_files
    if fact.patches and not fact.patched:
        license_files = None  # the patched tree was not read: its license is not known
    component = Component(
        name=fact.name,
        version=fact.version,
        bom_ref=_ref(fact),
        purl=PackageURL.from_string(sbom.purl(fact)),
        licenses=_licenses(license_files),
        external_references=_vcs(fact),
        properties=_properties(fact, inventory),
        components=[_component(child, inventory) for child in fact.children or ()],
    )
    if fact.patches:
        component.pedigree = _pedigree(fact)
    return component


def _pedigree(fact: facts.Component) -> Pedigree:
    """The upstream commit as the ancestor; each patch with its diff, and as a commit (the
    one qola makes of it, where the tree shows it) whose message starts with its subject."""
    ancestor = Component(
        name=fact.name,
        version=fact.version,
        bom_ref=f"upstream:{fact.path}",
        purl=PackageURL.from_string(sbom.purl(fact)),
        licenses=_licenses(fact.license_files),
        external_references=_vcs(fact),
        properties=[Property(name="qola:commit", value=fact.commit)] if fact.commit else [],
    )
    return Pedigree(
        ancestors=[ancestor],
        patches=[
            Patch(type=PatchClassification.UNOFFICIAL,
                  diff=Diff(text=_attached(record.data), url=XsUri(record.file)))
            for record in fact.patches
        ],
        commits=[Commit(uid=record.commit, message=record.message) for record in fact.patches],
    )  # fmt: skip


def _attached(data: bytes) -> AttachedText:
    """A diff as text; one that is not UTF-8, base64-encoded."""
    try:
        return AttachedText(content=data.decode("utf-8"), content_type="text/x-diff")
    except UnicodeDecodeError:
        return AttachedText(content=base64.b64encode(data).decode("ascii"),
                            content_type="text/x-diff", encoding=Encoding.BASE_64)  # fmt: skip


def _licenses(files: tuple[tuple[str, str], ...] | None) -> list[LicenseExpression] | list[
    DisjunctiveLicense
]:
    """The declared license; none (no assertion) when the license files declare none."""
    expression = sbom.license_expression(files)
    if expression is None:
        return []
    if " " not in expression and is_supported_id(expression):
        return [DisjunctiveLicense(id=expression)]
    return [LicenseExpression(expression)]


def _vcs(fact: facts.Component) -> list[ExternalReference]:
    if fact.url is None:
        return []
    return [ExternalReference(type=ExternalReferenceType.VCS, url=XsUri(urls.as_uri(fact.url)))]


def _properties(fact: facts.Component, inventory: facts.Inventory) -> list[Property]:
    found = []
    if fact.commit:
        found.append(Property(name="qola:commit", value=fact.commit))
    if fact.path:
        found.append(Property(name="qola:path", value=fact.path))
    if fact.patched:
        found.append(Property(name="qola:patched-commit", value=fact.patched))
    unknown = sbom.nested_unknown(fact, inventory)
    if unknown:
        found.append(Property(name="qola:nested-submodules", value=unknown))
    for failure, line in sbom.finding_lines(fact):
        found.append(Property(name="qola:drift" if failure else "qola:note", value=line))
    if fact.verified_by:
        found.append(Property(name="qola:verified-by", value=fact.verified_by))
        if fact.verified_on:  # the label's annotated tag, or the commit itself
            found.append(Property(name="qola:verified-on", value=fact.verified_on))
    return found


def _document_properties(inventory: facts.Inventory) -> list[Property]:
    read = "manifest-only" if inventory.manifest_only else "tree"
    return [
        Property(name="qola:read", value=read),
        Property(name="qola:verify", value="ok" if inventory.ok else "drift"),
    ]
