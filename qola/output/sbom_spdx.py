"""The SPDX 2.3 JSON document of an inventory, built, checked and written with spdx-tools.

What goes where, and why: docs/sbom.md, "SPDX"."""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from license_expression import get_spdx_licensing
from spdx_tools.spdx.model import (
    Actor,
    ActorType,
    Annotation,
    AnnotationType,
    Checksum,
    ChecksumAlgorithm,
    CreationInfo,
    Document,
    ExternalPackageRef,
    ExternalPackageRefCategory,
    File,
    FileType,
    Package,
    PackagePurpose,
    Relationship,
    RelationshipType,
    SpdxNoAssertion,
)
from spdx_tools.spdx.validation.uri_validators import validate_download_location
from spdx_tools.spdx.writer.json.json_writer import write_document_to_stream

from qola.base.errors import UsageError
from qola.output import sbom_common as sbom

if TYPE_CHECKING:
    import uuid

    from qola.sync import inventory as facts

_ID_CHARACTERS = "A-Za-z0-9.-"


class _Builder:
    """The packages, files, relationships and annotations of one document."""

    def __init__(self, inventory: facts.Inventory, created: datetime, tool: Actor) -> None:
        self.inventory = inventory
        self.created = created
        self.tool = tool
        self.ids = sbom.Ids(_ID_CHARACTERS, "SPDXRef-")
        self.packages: list[Package] = []
        self.files: dict[str, File] = {}
        self.relationships: list[Relationship] = []
        self.annotations: list[Annotation] = []

    def add(self, fact: facts.Component, parent: str | None) -> str:
        """fact's package (and its upstream's, and its patches), its nested submodules'
        below it; returns its SPDX id."""
        key = f"Package-{fact.path}" if fact.path else "Root"
        spdx_id = self.ids(key)
        patched = bool(fact.patches)
        files = fact.patched_license_files if fact.patched else fact.license_files
        self.packages.append(
            self._package(spdx_id, fact, None if patched and not fact.patched else files)
        )
        if parent is not None:
            self.relate(parent, RelationshipType.DEPENDS_ON, spdx_id)
        if patched:
            upstream = self.ids(f"Upstream-{fact.path}")
            self.packages.append(self._package(upstream, fact, fact.license_files, upstream=True))
            # The patched package postdates the upstream one, in its lineage: SPDX 2.3's
            # DESCENDANT_OF (not VARIANT_OF, which says it is unclear which came first).
            self.relate(spdx_id, RelationshipType.DESCENDANT_OF, upstream)
            for record in fact.patches:
                file_id = self._patch_file(record)
                self.relate(file_id, RelationshipType.PATCH_FOR, upstream)
                self.relate(file_id, RelationshipType.PATCH_APPLIED, spdx_id)
        unknown = sbom.nested_unknown(fact, self.inventory)
        if unknown:
            # NOASSERTION as the related element: whether it has any is not known.
            self.relate(spdx_id, RelationshipType.DEPENDS_ON, SpdxNoAssertion(),
                        f"nested submodules {unknown}")  # fmt: skip
        for failure, line in sbom.finding_lines(fact):
            said = "qola verify: the tree differs" if failure else "qola verify notes"
            self.annotate(spdx_id, f"{said}: {line}")
        if fact.verified_by:
            on = f"the pin's {fact.verified_on}" if fact.verified_on else "the pin"
            self.annotate(spdx_id, f"qola verified a signature on {on} with {fact.verified_by}")
        for child in fact.children or ():
            self.add(child, spdx_id)
        return spdx_id

    def _package(
        self, spdx_id: str, fact: facts.Component,
        files: tuple[tuple[str, str], ...] | None, upstream: bool = False,
    ) -> Package:  # fmt: skip
        location = SpdxNoAssertion()
        if fact.url is not None and fact.commit is not None:
            spelled = sbom.vcs_location(fact.url, fact.commit)
            if not validate_download_location(spelled):
                location = spelled
        expression = sbom.license_expression(files)
        declared = get_spdx_licensing().parse(expression) if expression else SpdxNoAssertion()
        return Package(
            spdx_id,
            fact.name,
            location,
            version=fact.version,
            files_analyzed=False,
            source_info=_source(fact, upstream),
            license_concluded=SpdxNoAssertion(),
            license_declared=declared,
            copyright_text=SpdxNoAssertion(),
            external_references=[
                ExternalPackageRef(ExternalPackageRefCategory.PACKAGE_MANAGER, "purl",
                                   sbom.purl(fact)),
            ],
            primary_package_purpose=PackagePurpose.SOURCE,
        )

    def _patch_file(self, record: facts.PatchRecord) -> str:
        found = self.files.get(record.file)
        if found is None:
            found = File(
                f"./{record.file}",
                self.ids(f"File-{record.file}"),
                [
                    Checksum(ChecksumAlgorithm.SHA1, record.sha1),
                    Checksum(ChecksumAlgorithm.SHA256, record.sha256),
                ],
                file_types=[FileType.SOURCE],
                license_concluded=SpdxNoAssertion(),
                copyright_text=SpdxNoAssertion(),
                comment=f"Subject: {record.subject}",
            )
            self.files[record.file] = found
        return str(found.spdx_id)

    def relate(self, a: str, kind: RelationshipType, b: str | SpdxNoAssertion,
               comment: str | None = None) -> None:  # fmt: skip
        self.relationships.append(Relationship(a, kind, b, comment))

    def annotate(self, spdx_id: str, text: str) -> None:
        self.annotations.append(
            Annotation(spdx_id, AnnotationType.OTHER, self.tool, self.created, text)
        )


def _source(fact: facts.Component, upstream: bool) -> str:
    """Where the package comes from, in words: its commit, tag, URL and place."""
    words = [f"commit {fact.commit}" if fact.commit else "commit not known"]
    if fact.tag:
        words.append(f"tag {fact.tag}")
    words.append(f"from {fact.url}" if fact.url else "from a URL not known")
    if fact.path:
        words.append(f"checked out at {fact.path}")
    if fact.patches and not upstream:
        count = len(fact.patches)
        words.append(f"with {count} {'patch' if count == 1 else 'patches'} on top"
                     + (f", making commit {fact.patched}" if fact.patched else ""))  # fmt: skip
    return ("upstream of the patched package: " if upstream else "") + ", ".join(words)


def document(inventory: facts.Inventory, options: sbom.Options, serial: uuid.UUID) -> str:
    """The SPDX document: the root package described, each dependency and nested
    submodule a package it DEPENDS_ON as the nesting is, patches as files."""
    if options.time is None:
        raise UsageError(
            "sbom",
            "an SPDX document must say when it was made, and the root has no commit to date "
            "it by (it is in no git repository, or its branch has no commit yet)",
            "set SOURCE_DATE_EPOCH (seconds since 1970) to the date it should carry",
        )
    created = datetime.fromtimestamp(options.time, timezone.utc).replace(tzinfo=None)
    tool = Actor(ActorType.TOOL, f"qola-{options.version}")
    built = _Builder(inventory, created, tool)
    name = inventory.root.name
    read = ("the manifest and the root's gitlinks alone (--manifest-only): no dependency's "
            "folder was read" if inventory.manifest_only else "the tree")  # fmt: skip
    checked = "qola verify --manifest-only" if inventory.manifest_only else "qola verify"
    verdict = (f"{checked} found it matches the manifest" if inventory.ok else
               f"{checked} found it does not match the manifest (--allow-drift): each "
               "difference is an annotation of its package")  # fmt: skip
    info = CreationInfo(
        "SPDX-2.3", "SPDXRef-DOCUMENT", name,
        f"https://spdx.org/spdxdocs/{sbom.Ids(_ID_CHARACTERS, '')(name)}-{serial}",
        [tool], created, creator_comment=f"Made by qola sbom from {read}; {verdict}.",
    )  # fmt: skip
    root = built.add(inventory.root, None)
    for dep in inventory.deps:
        built.add(dep, root)
    relationships = [Relationship("SPDXRef-DOCUMENT", RelationshipType.DESCRIBES, root),
                     *built.relationships]  # fmt: skip
    spdx = Document(info, built.packages, list(built.files.values()), [], built.annotations,
                    relationships)  # fmt: skip
    out = io.StringIO()
    try:
        write_document_to_stream(spdx, out, validate=True)
    except ValueError as error:  # the library's check failed: qola made something wrong
        raise UsageError(
            "sbom", f"the SPDX document qola made is not valid: {error}",
            "this is a bug in qola: please report it with this message",
        ) from None
    return _spelled_as_the_specification(out.getvalue())


def _spelled_as_the_specification(text: str) -> str:
    """spdx-tools writes an external reference's category as its enum's name
    (PACKAGE_MANAGER, PERSISTENT_ID); SPDX 2.3 (7.21) and its JSON schema spell them with
    a hyphen, which every SPDX reader takes, spdx-tools' own included (tools-python#813,
    spdx-spec#798)."""
    document = json.loads(text)
    for package in document.get("packages", []):
        for reference in package.get("externalRefs", []):
            reference["referenceCategory"] = reference["referenceCategory"].replace("_", "-")
    return json.dumps(document, indent=4)
