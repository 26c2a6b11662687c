"""`qola sbom`: bills of materials of the pins, on a project shaped like TransformerEngine
(aiter with the nested submodule composable_kernel, a patch on aiter), checked with each
format's own validator and reader, and against the format's official JSON schema."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from repos import commit_file, git, head, init_repo, snapshot
from superprojects import add_gitlink

from qola.cli import cli

CK = "3rdparty/composable_kernel"
HERE = Path(__file__).resolve().parent
SPDX_SCHEMA = HERE / "schemas" / "spdx-2.3.schema.json"
TOKEN = "ghp_s3cr3tT0ken"
PATCH = "0001-aiter-fix-the-build-on-gfx950.patch"

AITER_LICENSE = (
    "\n                                 Apache License\n"
    "                           Version 2.0, January 2004\n"
    "                        http://www.apache.org/licenses/\n\n"
    "   TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION\n"
)
CK_LICENSE = (
    "Copyright (c) 2018-2024, Advanced Micro Devices, Inc. All rights reserved.\n\n"
    "SPDX-License-Identifier: MIT\n\n"
    "Permission is hereby granted, free of charge, to any person obtaining a copy\n"
)
ROOT_LICENSE = "Copyright (c) 2024 The Project. Terms: see the agreement you signed.\n"


@dataclass(frozen=True)
class Upstreams:
    """ROCm/aiter (tag v0.1 at pin) recording ROCm/composable_kernel at ck_pin by its
    GitHub URL, and a git config that fetches github.com/ROCm from these folders."""

    base: Path
    aiter: Path
    ck: Path
    pin: str
    ck_pin: str
    gitconfig: Path
    patch: str  # a format-patch mail changing aiter.py
    ck_patch: str  # a plain diff, made in composable_kernel, changing include/x.hpp


@pytest.fixture(scope="session")
def upstreams(tmp_path_factory: pytest.TempPathFactory) -> Upstreams:
    base = tmp_path_factory.mktemp("github") / "ROCm"
    ck = init_repo(base / "composable_kernel.git")
    commit_file(ck, "LICENSE", CK_LICENSE)
    ck_pin = commit_file(ck, "include/x.hpp", "int x = 1;\n")
    aiter = init_repo(base / "aiter.git")
    commit_file(aiter, "LICENSE", AITER_LICENSE)
    commit_file(aiter, "aiter.py", "print('aiter')\n")
    add_gitlink(aiter, "composable_kernel", CK, "https://github.com/ROCm/composable_kernel.git",
                ck_pin)  # fmt: skip
    pin = head(aiter)
    git(aiter, "tag", "-a", "-m", "aiter 0.1", "v0.1", pin)
    commit_file(aiter, "later.txt", "after the pin\n")
    gitconfig = base.parent / "user.gitconfig"
    mirror = f'[url "file://{base}/"]\n\tinsteadOf = https://github.com/ROCm/\n'
    gitconfig.write_text(Path(os.environ["GIT_CONFIG_GLOBAL"]).read_text() + mirror)
    work = base.parent / "work"
    git(base.parent, "clone", "-q", str(aiter), str(work))
    git(work, "checkout", "-q", pin)
    (work / "aiter.py").write_text("print('aiter, fixed')\n")
    git(work, "commit", "-q", "-am", "aiter: fix the build on gfx950", "-m", "Not upstream yet.")
    patch = git(work, "format-patch", "-1", "--stdout") + "\n"
    ck_work = base.parent / "ck-work"
    git(base.parent, "clone", "-q", str(ck), str(ck_work))
    (ck_work / "include/x.hpp").write_text("int x = 2;\n")
    ck_patch = git(ck_work, "diff") + "\n"
    return Upstreams(base, aiter, ck, pin, ck_pin, gitconfig, patch, ck_patch)


@dataclass(frozen=True)
class Te:
    root: Path

    @property
    def manifest(self) -> Path:
        return self.root / "qola.toml"

    @property
    def aiter(self) -> Path:
        return self.root / "3rdparty" / "aiter"


def make_te(where: Path, up: Upstreams, patches: dict[str, str], checkout: bool = True) -> Te:
    """A root like TransformerEngine's: aiter a submodule of it, pinned at v0.1 with a
    patch series, its origin a GitHub URL with a token in it; checked out by qola."""
    root = init_repo(where)
    git(root, "remote", "add", "origin",
        f"https://x-access-token:{TOKEN}@github.com/ROCm/TransformerEngine.git")  # fmt: skip
    commit_file(root, "LICENSE", ROOT_LICENSE)
    add_gitlink(root, "aiter", "3rdparty/aiter", "https://github.com/ROCm/aiter.git", up.pin)
    (root / "qola.toml").write_text(
        '[deps.aiter]\npath = "3rdparty/aiter"\nurl = "https://github.com/ROCm/aiter.git"\n'
        f'commit = "{up.pin}"\ntag = "v0.1"\ntrack = "main"\npatches = "patches/aiter"\n'
    )
    for name, text in patches.items():
        (root / "patches/aiter" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "patches/aiter" / name).write_text(text)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "pin aiter")
    if checkout:
        res = CliRunner().invoke(cli, ["checkout", "-q", "-m", str(root / "qola.toml")],
                                 env={"GIT_CONFIG_GLOBAL": str(up.gitconfig)})  # fmt: skip
        assert res.exit_code == 0, res.output
    return Te(root)


@pytest.fixture(scope="session")
def _te_template(tmp_path_factory: pytest.TempPathFactory, upstreams: Upstreams) -> Path:
    where = tmp_path_factory.mktemp("te-template") / "TransformerEngine"
    return make_te(where, upstreams, {PATCH: upstreams.patch}).root


@pytest.fixture
def te(tmp_path: Path, _te_template: Path) -> Te:
    """The TE-shaped tree at its pins: aiter at v0.1 plus its patch, composable_kernel at
    the gitlink aiter records."""
    root = tmp_path / "TransformerEngine"
    shutil.copytree(_te_template, root, symlinks=True)
    return Te(root)


def sbom(run_qola, te: Te, *args: str, env: dict[str, str] | None = None):
    return run_qola("sbom", "-m", str(te.manifest), *args, env=env)


# -- the documents, checked by the formats' own tools


def cyclonedx_problems(text: str) -> list[str]:
    """What cyclonedx-python-lib's strict validator and the official CycloneDX 1.6 JSON
    schema (the one the library ships) find wrong with text."""
    import jsonschema
    import referencing
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.schema._res import BOM_JSON
    from cyclonedx.validation.json import JsonStrictValidator

    problems = []
    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    if error is not None:
        problems.append(f"validator: {error}")
    # The official schema (byte for byte the CycloneDX specification's, but for the
    # .SNAPSHOT the library gives the names of the two it refers to, which it ships too).
    schema = json.loads(Path(BOM_JSON[SchemaVersion.V1_6]).read_text())
    assert schema["$id"] == "http://cyclonedx.org/schema/bom-1.6.schema.json"
    shipped = Path(BOM_JSON[SchemaVersion.V1_6]).parent
    registry = referencing.Registry().with_resources(
        (f"http://cyclonedx.org/schema/{path.name}",
         referencing.Resource.from_contents(json.loads(path.read_text())))
        for path in sorted(shipped.glob("*.schema.json"))
    )  # fmt: skip
    validator = jsonschema.Draft7Validator(
        schema, registry=registry, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
    )
    problems += [f"schema: {e.json_path}: {e.message}"
                 for e in validator.iter_errors(json.loads(text))]  # fmt: skip
    return problems


def spdx_problems(text: str, tmp_path: Path) -> list[str]:
    """What spdx-tools' parser and full validation, and the official SPDX 2.3 JSON schema
    (tests/schemas), find wrong with text."""
    import jsonschema
    from spdx_tools.spdx.parser.parse_anything import parse_file
    from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document

    path = tmp_path / "document.spdx.json"
    path.write_text(text)
    problems = [f"validator: {m.validation_message}"
                for m in validate_full_spdx_document(parse_file(str(path)))]  # fmt: skip
    schema = json.loads(SPDX_SCHEMA.read_text())
    validator = jsonschema.Draft7Validator(
        schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
    )
    problems += [f"schema: {e.json_path}: {e.message}"
                 for e in validator.iter_errors(json.loads(text))]  # fmt: skip
    return problems


def components(bom: dict) -> dict[str, dict]:
    """Every component of a CycloneDX document, nested ones too, by bom-ref."""
    found = {}
    todo = [bom["metadata"]["component"], *bom.get("components", [])]
    while todo:
        component = todo.pop()
        found[component["bom-ref"]] = component
        todo.extend(component.get("components", []))
    return found


def properties(component: dict) -> list[tuple[str, str]]:
    return [(p["name"], p["value"]) for p in component.get("properties", [])]


def graph(bom: dict) -> dict[str, list[str]]:
    return {d["ref"]: d.get("dependsOn", []) for d in bom["dependencies"]}


def by_name(spdx: dict) -> dict[str, dict]:
    return {p["SPDXID"]: p for p in spdx["packages"]}


def relations(spdx: dict) -> set[tuple[str, str, str]]:
    return {(r["spdxElementId"], r["relationshipType"], r["relatedSpdxElement"])
            for r in spdx["relationships"]}  # fmt: skip


AITER = "component:3rdparty/aiter"
CK_REF = f"component:3rdparty/aiter/{CK}"


def test_cyclonedx_of_the_te_tree_is_valid_and_says_what_is_pinned(run_qola, te, upstreams):
    res = sbom(run_qola, te)

    assert res.exit_code == 0, res.stderr
    assert cyclonedx_problems(res.stdout) == []
    bom = json.loads(res.stdout)
    found = components(bom)
    assert set(found) == {"root", AITER, CK_REF}
    root, aiter, ck = found["root"], found[AITER], found[CK_REF]
    top = head(te.root)
    assert (root["name"], root["version"]) == ("TransformerEngine", top)
    assert root["purl"] == f"pkg:github/rocm/transformerengine@{top}"
    assert root["externalReferences"] == [
        {"type": "vcs", "url": "https://github.com/ROCm/TransformerEngine.git"}
    ]
    assert "licenses" not in root  # its LICENSE names no license identifiably
    assert (aiter["name"], aiter["version"]) == ("aiter", "v0.1")
    assert aiter["purl"] == f"pkg:github/rocm/aiter@{upstreams.pin}"
    assert aiter["licenses"] == [{"license": {"id": "Apache-2.0"}}]
    assert properties(aiter) == [
        ("qola:commit", upstreams.pin),
        ("qola:patched-commit", head(te.aiter)),
        ("qola:path", "3rdparty/aiter"),
    ]
    assert [c["bom-ref"] for c in aiter["components"]] == [CK_REF]
    assert (ck["name"], ck["version"]) == ("composable_kernel", upstreams.ck_pin)
    assert ck["purl"] == f"pkg:github/rocm/composable_kernel@{upstreams.ck_pin}"
    assert ck["licenses"] == [{"license": {"id": "MIT"}}]
    assert ck["externalReferences"] == [
        {"type": "vcs", "url": "https://github.com/ROCm/composable_kernel.git"}
    ]
    assert graph(bom) == {"root": [AITER], AITER: [CK_REF], CK_REF: []}
    pedigree = aiter["pedigree"]
    [ancestor] = pedigree["ancestors"]
    assert (ancestor["name"], ancestor["version"], ancestor["purl"]) == (
        "aiter", "v0.1", f"pkg:github/rocm/aiter@{upstreams.pin}"
    )
    assert pedigree["patches"] == [{
        "type": "unofficial",
        "diff": {"text": {"content": upstreams.patch, "contentType": "text/x-diff"},
                 "url": f"patches/aiter/{PATCH}"},
    }]  # fmt: skip
    assert pedigree["commits"] == [{
        "uid": head(te.aiter),
        "message": f"aiter: fix the build on gfx950\n\nNot upstream yet.\n\nQola-Patch: {PATCH}\n",
    }]  # fmt: skip
    assert "pedigree" not in ck
    assert properties(bom["metadata"]) == [("qola:read", "tree"), ("qola:verify", "ok")]
    assert bom["metadata"]["tools"]["components"][0]["name"] == "qola"
    assert "timestamp" not in bom["metadata"]  # optional in CycloneDX: none is written
    assert TOKEN not in res.stdout


def test_spdx_of_the_te_tree_is_valid_and_says_what_is_pinned(run_qola, te, upstreams, tmp_path):
    res = sbom(run_qola, te, "--format", "spdx")

    assert res.exit_code == 0, res.stderr
    assert spdx_problems(res.stdout, tmp_path) == []
    spdx = json.loads(res.stdout)
    assert spdx["spdxVersion"] == "SPDX-2.3"
    assert spdx["creationInfo"]["created"] == "2024-01-01T00:00:00Z"  # the root commit's date
    packages = by_name(spdx)
    root = packages["SPDXRef-Root"]
    aiter = packages["SPDXRef-Package-3rdparty-aiter"]
    upstream = packages["SPDXRef-Upstream-3rdparty-aiter"]
    ck = packages["SPDXRef-Package-3rdparty-aiter-3rdparty-composable-kernel"]
    assert len(packages) == 4
    top = head(te.root)
    assert root["downloadLocation"] == f"git+https://github.com/ROCm/TransformerEngine.git@{top}"
    assert root["licenseDeclared"] == "NOASSERTION"
    assert (aiter["name"], aiter["versionInfo"], aiter["licenseDeclared"]) == (
        "aiter", "v0.1", "Apache-2.0"
    )
    assert aiter["downloadLocation"] == f"git+https://github.com/ROCm/aiter.git@{upstreams.pin}"
    assert aiter["externalRefs"] == [{
        "referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
        "referenceLocator": f"pkg:github/rocm/aiter@{upstreams.pin}",
    }]  # fmt: skip
    assert upstream["externalRefs"] == aiter["externalRefs"]
    assert (ck["name"], ck["versionInfo"], ck["licenseDeclared"]) == (
        "composable_kernel", upstreams.ck_pin, "MIT"
    )
    [patch] = spdx["files"]
    data = (te.root / "patches/aiter" / PATCH).read_bytes()
    assert patch["fileName"] == f"./patches/aiter/{PATCH}"
    assert patch["checksums"] == [
        {"algorithm": "SHA1", "checksumValue": hashlib.sha1(data).hexdigest()},
        {"algorithm": "SHA256", "checksumValue": hashlib.sha256(data).hexdigest()},
    ]
    assert patch["comment"] == "Subject: aiter: fix the build on gfx950"
    assert relations(spdx) == {
        ("SPDXRef-DOCUMENT", "DESCRIBES", "SPDXRef-Root"),
        ("SPDXRef-Root", "DEPENDS_ON", aiter["SPDXID"]),
        (aiter["SPDXID"], "DEPENDS_ON", ck["SPDXID"]),
        (aiter["SPDXID"], "DESCENDANT_OF", upstream["SPDXID"]),
        (patch["SPDXID"], "PATCH_FOR", upstream["SPDXID"]),
        (patch["SPDXID"], "PATCH_APPLIED", aiter["SPDXID"]),
    }
    assert "annotations" not in aiter
    assert TOKEN not in res.stdout


def test_documents_round_trip_through_the_libraries_readers(run_qola, te, tmp_path):
    from cyclonedx.model.bom import Bom
    from cyclonedx.output.json import JsonV1Dot6
    from spdx_tools.spdx.parser.parse_anything import parse_file
    from spdx_tools.spdx.writer.json.json_writer import write_document_to_file

    cyclonedx = sbom(run_qola, te).stdout
    bom = Bom.from_json(json.loads(cyclonedx))  # type: ignore[attr-defined]
    assert bom.metadata.component.name == "TransformerEngine"
    again = json.loads(JsonV1Dot6(bom).output_as_string())
    del again["metadata"]["timestamp"]  # the reader's: it dates a BOM it reads without one
    assert again == json.loads(cyclonedx)

    spdx = tmp_path / "bom.spdx.json"
    assert sbom(run_qola, te, "--format", "spdx", "-o", str(spdx)).exit_code == 0
    document = parse_file(str(spdx))
    assert sorted(p.name for p in document.packages) == [
        "TransformerEngine", "aiter", "aiter", "composable_kernel"
    ]
    again = tmp_path / "again.spdx.json"
    write_document_to_file(document, str(again))
    written = again.read_text().replace('"PACKAGE_MANAGER"', '"PACKAGE-MANAGER"')
    assert json.loads(written) == json.loads(spdx.read_text())


def test_the_same_tree_gives_the_same_bytes_wherever_it_is(run_qola, te, tmp_path):
    elsewhere = Te(tmp_path / "elsewhere" / "te")
    shutil.copytree(te.root, elsewhere.root, symlinks=True)
    for fmt in ("cyclonedx", "spdx"):
        first = sbom(run_qola, te, "--format", fmt)
        out = tmp_path / f"bom.{fmt}.json"
        written = sbom(run_qola, te, "--format", fmt, "-o", str(out))

        assert (first.exit_code, written.exit_code) == (0, 0)
        assert sbom(run_qola, te, "--format", fmt).stdout == first.stdout
        assert sbom(run_qola, elsewhere, "--format", fmt).stdout == first.stdout
        assert out.read_text() == first.stdout
        assert written.stdout == ""
        assert written.stderr == f"qola: wrote {out} ({fmt}, 3 components)\n"


def test_source_date_epoch_dates_the_spdx_document_and_nothing_else(run_qola, te, tmp_path):
    plain = {fmt: sbom(run_qola, te, "--format", fmt).stdout for fmt in ("cyclonedx", "spdx")}
    dated = {fmt: sbom(run_qola, te, "--format", fmt, env={"SOURCE_DATE_EPOCH": "1700000000"})
             for fmt in ("cyclonedx", "spdx")}  # fmt: skip

    assert dated["cyclonedx"].stdout == plain["cyclonedx"]  # no date in it to set
    spdx = json.loads(dated["spdx"].stdout)
    assert spdx["creationInfo"]["created"] == "2023-11-14T22:13:20Z"
    assert spdx_problems(dated["spdx"].stdout, tmp_path) == []
    before = json.loads(plain["spdx"])
    assert spdx["documentNamespace"] != before["documentNamespace"]  # another document
    spdx["creationInfo"]["created"] = before["creationInfo"]["created"]
    spdx["documentNamespace"] = before["documentNamespace"]
    assert spdx == before


def test_a_source_date_epoch_that_is_no_number_is_refused_and_nothing_is_written(
    run_qola, te, tmp_path
):
    out = tmp_path / "bom.json"
    res = sbom(run_qola, te, "-o", str(out), env={"SOURCE_DATE_EPOCH": "soon"})

    assert res.exit_code == 2
    assert res.stderr == (
        "qola: SOURCE_DATE_EPOCH: 'soon' is not a whole number of seconds since 1970-01-01 UTC\n"
        "hint: fix or unset SOURCE_DATE_EPOCH (it dates the document)\n"
    )
    assert not out.exists()


@pytest.mark.parametrize("value", ["253402300800", "99999999999999999999"])
@pytest.mark.parametrize("fmt", ["cyclonedx", "spdx"])
def test_a_source_date_epoch_after_the_year_9999_is_refused(run_qola, te, tmp_path, fmt, value):
    out = tmp_path / "bom.json"
    res = sbom(run_qola, te, "--format", fmt, "-o", str(out), env={"SOURCE_DATE_EPOCH": value})

    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: SOURCE_DATE_EPOCH: {value} seconds since 1970-01-01 UTC is after 9999-12-31 "
        "23:59:59 UTC, the last time a document can be dated\n"
        "hint: fix or unset SOURCE_DATE_EPOCH (it dates the document)\n"
    )
    assert not out.exists()
    last = sbom(run_qola, te, "--format", fmt, env={"SOURCE_DATE_EPOCH": "253402300799"})
    assert last.exit_code == 0, last.stderr


@pytest.mark.parametrize("where", ["nodir/x.json", "file/x.json", "/proc/x.json"])
def test_an_output_file_that_cannot_be_written_is_named_with_why(run_qola, te, tmp_path, where):
    """Exit 3, the file named (not the temporary one qola writes first) with why and what to
    do; nothing left behind, no folder made."""
    if where.startswith("/proc") and not Path("/proc/self").is_dir():
        pytest.skip("needs /proc")
    (tmp_path / "file").write_text("a file, not a folder\n")
    target = tmp_path / where
    before = sorted(tmp_path.iterdir())

    res = sbom(run_qola, te, "-o", str(target))

    assert res.exit_code == 3
    assert res.stdout == ""
    folder = target.parent
    why = {
        "nodir/x.json": f"the folder {folder} does not exist",
        "file/x.json": f"the folder {folder} is not a folder",
        "/proc/x.json": "no file can be made in /proc (No such file or directory)",
    }[where]
    create = "" if where.startswith("/proc") else "create it, or "
    assert res.stderr == (
        f"qola: {target}: cannot write the bill of materials: {why}\n"
        f"hint: {create}name a FILE in a folder you can write to (-o - writes it to stdout)\n"
    )
    assert sorted(tmp_path.iterdir()) == before
    assert not folder.is_dir() or where.startswith("/proc")


def test_output_dash_is_stdout_and_dot_slash_dash_a_file(run_qola, te, tmp_path):
    plain = sbom(run_qola, te)
    res = run_qola("sbom", "-m", str(te.manifest), "-o", "-", cwd=tmp_path)

    assert res.exit_code == 0, res.stderr
    assert res.stdout == plain.stdout
    assert list(tmp_path.iterdir()) == [te.root]
    named = run_qola("sbom", "-m", str(te.manifest), "-o", "./-", cwd=tmp_path)
    assert named.exit_code == 0, named.stderr
    assert (tmp_path / "-").read_text() == plain.stdout


def test_manifest_only_from_a_clone_with_no_dependency_checked_out(
    run_qola, te, upstreams, tmp_path
):
    clone = Te(tmp_path / "clone")
    git(tmp_path, "clone", "-q", str(te.root), str(clone.root))
    git(clone.root, "remote", "set-url", "origin", "https://github.com/ROCm/TransformerEngine.git")
    assert not clone.aiter.exists()  # the submodule is not initialised
    before = snapshot(clone.root)

    cyclonedx = sbom(run_qola, clone, "--manifest-only")
    spdx = sbom(run_qola, clone, "--manifest-only", "--format", "spdx")

    assert (cyclonedx.exit_code, spdx.exit_code) == (0, 0), cyclonedx.stderr + spdx.stderr
    assert cyclonedx_problems(cyclonedx.stdout) == []
    assert spdx_problems(spdx.stdout, tmp_path) == []
    assert snapshot(clone.root) == before
    bom = json.loads(cyclonedx.stdout)
    found = components(bom)
    assert set(found) == {"root", AITER}
    aiter = found[AITER]
    assert (aiter["version"], aiter["purl"]) == ("v0.1", f"pkg:github/rocm/aiter@{upstreams.pin}")
    assert "licenses" not in aiter and "components" not in aiter
    assert ("qola:nested-submodules", "not read: --manifest-only reads no dependency's folder") in (
        properties(aiter)
    )
    # In the graph the root depends on aiter, and aiter has no entry of its own: CycloneDX's
    # way of saying its dependencies are not known (an empty entry would say it has none).
    assert graph(bom) == {"root": [AITER]}
    assert aiter["pedigree"]["patches"][0]["diff"]["text"]["content"] == upstreams.patch
    message = f"aiter: fix the build on gfx950\n\nNot upstream yet.\n\nQola-Patch: {PATCH}\n"
    assert aiter["pedigree"]["commits"] == [{"message": message}]  # no commit made here
    assert properties(bom["metadata"]) == [("qola:read", "manifest-only"), ("qola:verify", "ok")]
    document = json.loads(spdx.stdout)
    package = by_name(document)["SPDXRef-Package-3rdparty-aiter"]
    assert package["licenseDeclared"] == "NOASSERTION"
    assert {
        "spdxElementId": package["SPDXID"], "relationshipType": "DEPENDS_ON",
        "relatedSpdxElement": "NOASSERTION",
        "comment": "nested submodules not read: --manifest-only reads no dependency's folder",
    } in document["relationships"]  # fmt: skip
    # The tree itself has no aiter: the full command refuses it.
    assert sbom(run_qola, clone).exit_code == 1


def test_a_tree_verify_fails_is_refused_and_nothing_is_written(run_qola, te, tmp_path):
    (te.aiter / "aiter.py").write_text("print('mine')\n")
    out = tmp_path / "bom.json"
    before = snapshot(te.root)

    res = sbom(run_qola, te, "-o", str(out))

    assert res.exit_code == 1
    assert res.stdout == ""
    assert res.stderr == (
        f"qola: {te.manifest}: the tree does not match it (qola verify fails), so no bill of "
        "materials is written:\n"
        "  aiter: dirty: aiter.py: modified\n"
        "hint: bring the tree to its pins (qola checkout), or record the drift in the "
        "document: add --allow-drift\n"
    )
    assert snapshot(te.root) == before
    assert not out.exists()


def test_each_hint_of_a_refusal_makes_a_document(run_qola, te, upstreams, tmp_path):
    """The patch series is not applied: `qola checkout` puts the tree at its pins, after
    which the document is written; or --allow-drift writes it with the drift in it."""
    git(te.aiter, "checkout", "-q", "--detach", upstreams.pin)
    refused = sbom(run_qola, te)
    assert refused.exit_code == 1
    assert "  aiter: patches: the patch series is not applied (" in refused.stderr

    drifted = sbom(run_qola, te, "--allow-drift")
    assert drifted.exit_code == 0, drifted.stderr
    assert cyclonedx_problems(drifted.stdout) == []
    aiter = components(json.loads(drifted.stdout))[AITER]
    assert ("qola:drift", f"patches: the patch series is not applied ({PATCH})") in (
        properties(aiter)
    )
    assert "uid" not in aiter["pedigree"]["commits"][0]  # not made in this tree: not known
    assert "licenses" not in aiter  # the patched tree is not there to say

    assert run_qola("checkout", "-q", "-m", str(te.manifest),
                    env={"GIT_CONFIG_GLOBAL": str(upstreams.gitconfig)}).exit_code == 0  # fmt: skip
    assert sbom(run_qola, te).exit_code == 0


def test_allow_drift_records_each_difference_in_both_formats(run_qola, te, tmp_path):
    (te.aiter / "aiter.py").write_text("print('mine')\n")

    cyclonedx = sbom(run_qola, te, "--allow-drift")
    spdx = sbom(run_qola, te, "--allow-drift", "--format", "spdx")

    for res in (cyclonedx, spdx):
        assert res.exit_code == 0
        assert res.stderr == (
            "qola: warning: 1 difference from the manifest recorded as drift in the document "
            "(--allow-drift)\n"
        )
    assert cyclonedx_problems(cyclonedx.stdout) == []
    assert spdx_problems(spdx.stdout, tmp_path) == []
    bom = json.loads(cyclonedx.stdout)
    assert ("qola:drift", "dirty: aiter.py: modified") in properties(components(bom)[AITER])
    assert ("qola:verify", "drift") in properties(bom["metadata"])
    document = json.loads(spdx.stdout)
    [annotation] = by_name(document)["SPDXRef-Package-3rdparty-aiter"]["annotations"]
    assert annotation == {
        "annotationDate": "2024-01-01T00:00:00Z", "annotationType": "OTHER",
        "annotator": "Tool: qola-" + __import__("qola").__version__,
        "comment": "qola verify: the tree differs: dirty: aiter.py: modified",
    }  # fmt: skip
    assert "does not match the manifest (--allow-drift)" in document["creationInfo"]["comment"]


def test_a_patch_of_the_nested_submodule_is_its_pedigree(run_qola, upstreams, tmp_path):
    te = make_te(tmp_path / "te", upstreams, {
        PATCH: upstreams.patch, f"{CK}/0001-ck-x-is-2.patch": upstreams.ck_patch,
    })  # fmt: skip

    cyclonedx = sbom(run_qola, te)
    spdx = sbom(run_qola, te, "--format", "spdx")

    assert cyclonedx_problems(cyclonedx.stdout) == []
    assert spdx_problems(spdx.stdout, tmp_path) == []
    ck = components(json.loads(cyclonedx.stdout))[CK_REF]
    [ancestor] = ck["pedigree"]["ancestors"]
    assert ancestor["purl"] == f"pkg:github/rocm/composable_kernel@{upstreams.ck_pin}"
    assert ck["pedigree"]["patches"][0]["diff"]["text"]["content"] == upstreams.ck_patch
    assert ck["pedigree"]["commits"] == [{
        "uid": head(te.aiter / CK),
        "message": f"Apply 0001-ck-x-is-2.patch\n\nQola-Patch: {CK}/0001-ck-x-is-2.patch\n",
    }]  # fmt: skip
    assert ck["licenses"] == [{"license": {"id": "MIT"}}]  # read in the patched tree
    document = json.loads(spdx.stdout)
    ck_id = "SPDXRef-Package-3rdparty-aiter-3rdparty-composable-kernel"
    upstream_id = "SPDXRef-Upstream-3rdparty-aiter-3rdparty-composable-kernel"
    assert (ck_id, "DESCENDANT_OF", upstream_id) in relations(document)
    assert len(document["files"]) == 2


def test_credentials_are_stripped_and_each_host_gets_its_purl(run_qola, upstreams, tmp_path):
    """From the manifest alone (nothing of these is fetched): a GitHub, a GitLab (with a
    subgroup), another host, an scp-like URL and a local folder, with credentials."""
    sha = upstreams.pin
    root = init_repo(tmp_path / "project")
    git(root, "remote", "add", "origin", f"https://oauth2:{TOKEN}@gitlab.com/team/project.git")
    urls = {
        "gh": f"https://{TOKEN}@github.com/Org/Repo.git",
        "gl": f"https://user:{TOKEN}@gitlab.com/group/sub/lib.git",
        "other": f"ssh://git:{TOKEN}@git.example.org/x/y.git",
        "query": f"https://git.example.org/tools/z.git?private_token={TOKEN}",
        "scp": "git@git.example.org:team/w.git",
        "local": str(upstreams.aiter),
    }
    (root / "qola.toml").write_text("".join(
        f'[deps.{name}]\npath = "3rdparty/{name}"\nurl = "{url}"\ncommit = "{sha}"\n\n'
        for name, url in urls.items()
    ))  # fmt: skip
    git(root, "add", "qola.toml")
    git(root, "commit", "-q", "-m", "pins")
    project = Te(root)

    cyclonedx = sbom(run_qola, project, "--manifest-only")
    spdx = sbom(run_qola, project, "--manifest-only", "--format", "spdx")

    assert cyclonedx_problems(cyclonedx.stdout) == []
    assert spdx_problems(spdx.stdout, tmp_path) == []
    assert TOKEN not in cyclonedx.stdout + spdx.stdout
    found = components(json.loads(cyclonedx.stdout))
    purls = {ref.removeprefix("component:3rdparty/"): c["purl"] for ref, c in found.items()}
    # github and gitlab names lower-cased, as the purl specification has them; a generic
    # purl named after the dependency, its vcs_url's '+' and '@' percent-encoded.
    assert purls == {
        "root": f"pkg:gitlab/team/project@{head(root)}",
        "gh": f"pkg:github/org/repo@{sha}",
        "gl": f"pkg:gitlab/group/sub/lib@{sha}",
        "other": f"pkg:generic/other@{sha}?vcs_url=git%2Bssh://git%40git.example.org/x/y.git%40{sha}",
        "query": f"pkg:generic/query@{sha}?vcs_url=git%2Bhttps://git.example.org/tools/z.git%40{sha}",
        "scp": f"pkg:generic/scp@{sha}?vcs_url=git%2Bssh://git%40git.example.org/team/w.git%40{sha}",
        "local": f"pkg:generic/local@{sha}?vcs_url=git%2Bfile://{upstreams.aiter}%40{sha}",
    }
    locations = {p["name"]: p["downloadLocation"] for p in json.loads(spdx.stdout)["packages"]}
    assert locations == {
        "project": f"git+https://gitlab.com/team/project.git@{head(root)}",
        "gh": f"git+https://github.com/Org/Repo.git@{sha}",
        "gl": f"git+https://gitlab.com/group/sub/lib.git@{sha}",
        "other": f"git+ssh://git@git.example.org/x/y.git@{sha}",
        "query": f"git+https://git.example.org/tools/z.git@{sha}",
        "scp": f"git+ssh://git@git.example.org/team/w.git@{sha}",
        "local": "NOASSERTION",  # SPDX's download locations name a host
    }


@pytest.mark.parametrize(
    ("url", "purl"),
    [
        ("https://github.com/o/na%20me.git", "pkg:github/o/na%20me@SHA"),  # not %2520
        ("https://gitlab.com/g/s%C3%BCb/lib.git", "pkg:gitlab/g/s%C3%BCb/lib@SHA"),
        ("git@github.com:o/r.git", "pkg:github/o/r@SHA"),
        # %2F would split a name: a generic purl, the URL (as is) in its vcs_url
        ("https://github.com/o/a%2Fb.git",
         "pkg:generic/lib@SHA?vcs_url=git%2Bhttps://github.com/o/a%252Fb.git%40SHA"),
    ],
)
def test_a_url_path_is_decoded_once_into_its_purl(url: str, purl: str) -> None:
    from packageurl import PackageURL

    from qola.output.sbom_common import purl as purl_of
    from qola.sync.inventory import Component

    found = purl_of(Component("lib", "3rdparty/lib", url, "SHA", None, None))
    assert found == purl
    parsed = PackageURL.from_string(found)
    if parsed.type != "generic":
        assert parsed.name == url.removesuffix(".git").rpartition("/")[2].replace("%20", " ")


def test_sbom_without_its_extra_says_what_to_install(te, tmp_path):
    """In a virtual environment of its own that has qola's dependencies but not the sbom
    extra: exit 2 naming the packages and the pip command; with them there, it works."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip())  # fmt: skip
    for module in ("click", "git", "gitdb", "smmap", "tomli_w", "tomli"):
        spec = importlib.util.find_spec(module)
        if spec is not None and spec.origin is not None:
            (site / module).symlink_to(Path(spec.origin).parent)
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([python, "-m", "qola", "sbom", "-m", str(te.manifest), *args],
                              capture_output=True, text=True, check=False, env=env)  # fmt: skip

    for fmt, needs, pip in [
        ("cyclonedx", "cyclonedx-python-lib and packageurl-python",
         "'cyclonedx-python-lib>=8.0' 'packageurl-python>=0.11.1'"),
        ("spdx", "spdx-tools and packageurl-python",
         "'spdx-tools>=0.8.2' 'packageurl-python>=0.11.1'"),
    ]:  # fmt: skip
        res = run("--format", fmt)
        assert res.returncode == 2
        assert res.stdout == ""
        assert res.stderr == (
            f"qola: sbom: --format {fmt} needs {needs}, which this Python ({python}) does not "
            f"have\nhint: install them (qola's sbom extra): {python} -m pip install {pip}\n"
        )
    # What the hint installs, there: this Python's packages, the extra's among them.
    here = Path(importlib.util.find_spec("cyclonedx").origin).parents[1]  # type: ignore[union-attr, arg-type]
    (site / "with-the-extra.pth").write_text(f"{here}\n")
    res = run()
    assert res.returncode == 0, res.stderr
    assert cyclonedx_problems(res.stdout) == []


def test_the_hint_names_the_requirements_of_the_sbom_extra():
    """What the hint installs is pyproject.toml's sbom extra, which the test extra holds."""
    import re

    from qola.output.sbom import REQUIREMENTS

    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    extras = tomllib.loads((HERE.parent / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert sorted(REQUIREMENTS.values()) == sorted(extras["sbom"])
    assert set(extras["sbom"]) <= {re.sub(r"\[[^\]]*\]", "", r) for r in extras["test"]}


# -- the rules, one by one


APACHE_2 = "Apache License\n  Version 2.0, January 2004\n  http://www.apache.org/licenses/\n"
GPL_3 = "          GNU GENERAL PUBLIC LICENSE\n             Version 3, 29 June 2007\n"
MIT_BODY = "Copyright (c) 2024 Someone\n\nPermission is hereby granted, free of charge, to any\n"


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Copyright 2024 AMD\n\nSPDX-License-Identifier: MIT\n", "MIT"),
        ("/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */\n",
         "Apache-2.0 WITH LLVM-exception"),
        ("<!-- SPDX-License-Identifier: MIT OR Apache-2.0 -->\n", "MIT OR Apache-2.0"),
        ("SPDX-License-Identifier: MIT\nSPDX-License-Identifier: MIT\n", "MIT"),
        ("SPDX-License-Identifier: MIT\nbundled: SPDX-License-Identifier: BSD-3-Clause\n", None),
        ("MIT License\n\n" + MIT_BODY, "MIT"),
        ("The MIT License (MIT)\r\n\r\n" + MIT_BODY, "MIT"),
        ("\n\n" + APACHE_2, "Apache-2.0"),
        ("BSD 3-Clause License\n\nCopyright (c) 2024\n", "BSD-3-Clause"),
        ("Boost Software License - Version 1.0 - August 17th, 2003\n", "BSL-1.0"),
        ("Apache License\n\nTERMS AND CONDITIONS\n", None),  # which version: not said
        (GPL_3, None),  # GPL-3.0-only or -or-later: the license text does not say
        (MIT_BODY, None),  # an MIT text without its title: resembling is not declaring
        ("BSD-3-Clause\n\nCopyright (c) 2024\n", "BSD-3-Clause"),  # an SPDX id, alone
        ("BSD-3-Clause and more\n", None),
        ("", None),
        # More than the license in the file: no guess
        (APACHE_2 + "\n--- LLVM Exceptions to the Apache 2.0 License ----\n\nAs an exception, "
         "if, as a result of your compiling your source code, portions\n",
         "Apache-2.0 WITH LLVM-exception"),  # an exception SPDX names
        (APACHE_2 + "\n## Runtime Library Exception to the Apache 2.0 License: ##\n\n"
         "    As an exception, if you use this Software to compile your source code\n", None),
        (APACHE_2 + "\n   APPENDIX: How to apply the Apache License to your work.\n",
         "Apache-2.0"),  # the license's own appendix
        ("MIT License\n\nCopyright (c) 2024 X\n\nPermission is hereby granted ... for "
         "non-commercial use only ...\n", None),
        ("MIT License\n\n" + MIT_BODY + "\n" + GPL_3, None),
        ("MIT\n\nexcept files under third_party/, which are GPL-3.0-only\n", None),
        ("MIT\n\nexcept files under third_party/, which are BSD-3-Clause\n", None),
        ("BSD 3-Clause License\n\n1. ...\n2. ...\n3. ...\n4. All advertising materials must "
         "display ...\n", None),
        ("BSD 3-Clause License\n\n1. ...\n2. ...\n3. Neither the name ...\n", "BSD-3-Clause"),
        (APACHE_2 + "\n--- LLVM Exceptions to the Apache 2.0 License ----\n\nAs an exception, "
         "...\n\nSoftware from third parties included in the LLVM Project:\nThe LLVM Project "
         "contains third party software which is under different license terms.\n"
         "University of Illinois/NCSA\nOpen Source License\n", None),  # LLVM's, bannerless
    ],
)
def test_what_one_license_file_declares(text: str, found: str | None) -> None:
    from qola.base.licenses import in_text

    assert in_text(text, frozenset({"MIT", "BSD-3-Clause"})) == found


@pytest.mark.parametrize(
    ("files", "found"),
    [
        ({"LICENSE": "MIT License\n", "COPYING.txt": "SPDX-License-Identifier: MIT\n"}, "MIT"),
        ({"LICENSE-MIT": "MIT License\n", "LICENSE-APACHE": APACHE_2}, None),  # which? both?
        ({"LICENSE": "MIT License\n", "COPYING": MIT_BODY}, None),  # one says nothing
        ({"License.md": "MIT License\n", "README": "SPDX-License-Identifier: GPL-2.0\n"}, "MIT"),
        ({"README": "SPDX-License-Identifier: MIT\n"}, None),  # no license file
        ({}, None),
    ],
)
def test_what_the_license_files_declare_together(files: dict[str, str], found: str | None) -> None:
    from qola.base.licenses import declared

    assert declared(files) == found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("SPDX-License-Identifier: mit\n", "MIT"),  # as the SPDX license list spells it
        ("SPDX-License-Identifier: GPL-2.0+\n", "GPL-2.0-or-later"),
        ("SPDX-License-Identifier: Foo-1.0\n", None),  # no SPDX license
        ("SPDX-License-Identifier: LicenseRef-mine\n", None),  # no text for it in a document
        ("SPDX-License-Identifier: MIT AND (\n", None),
        (APACHE_2 + "\n--- LLVM Exceptions to the Apache 2.0 License ----\n",
         "Apache-2.0 WITH LLVM-exception"),
        ("MIT\n\nexcept third_party/, which is Zlib-acknowledgement\n", None),
    ],
)
def test_a_declared_expression_is_taken_only_as_the_spdx_license_list_knows_it(
    text: str, found: str | None
) -> None:
    from qola.output.sbom_common import license_expression

    assert license_expression((("LICENSE", text),)) == found


@pytest.mark.parametrize(
    ("url", "stripped", "uri"),
    [
        (f"https://{TOKEN}@github.com/ROCm/aiter.git", "https://github.com/ROCm/aiter.git", None),
        (f"https://oauth2:{TOKEN}@gitlab.com/g/r.git", "https://gitlab.com/g/r.git", None),
        (f"http://h.example.org/r.git?private_token={TOKEN}", "http://h.example.org/r.git", None),
        (f"git://u:{TOKEN}@h.example.org/r", "git://h.example.org/r", None),
        (f"ssh://git:{TOKEN}@h.example.org:2222/r.git", "ssh://git@h.example.org:2222/r.git", None),
        ("ssh://git@h.example.org/r.git", "ssh://git@h.example.org/r.git", None),
        ("git@github.com:ROCm/aiter.git", "git@github.com:ROCm/aiter.git",
         "ssh://git@github.com/ROCm/aiter.git"),
        (f"me:{TOKEN}@h.example.org:r.git", "me@h.example.org:r.git",
         "ssh://me@h.example.org/r.git"),
        ("/srv/git/my lib", "/srv/git/my lib", "file:///srv/git/my%20lib"),
        ("file:///srv/git/lib", "file:///srv/git/lib", None),
    ],
)
def test_what_a_url_keeps_in_a_document(url: str, stripped: str, uri: str | None) -> None:
    from qola.base.urls import as_uri, without_credentials

    assert without_credentials(url) == stripped
    assert as_uri(url) == (uri or stripped)


def test_a_root_in_no_repository_needs_source_date_epoch_for_spdx(run_qola, tmp_path):
    """Nothing dates the SPDX document then (CycloneDX needs no date): exit 2 and what to
    set; with it set, the document is written."""
    root = tmp_path / "plain"
    root.mkdir()
    (root / "qola.toml").write_text(
        f'[deps.lib]\npath = "3rdparty/lib"\nurl = "https://github.com/a/lib.git"\n'
        f'commit = "{"a" * 40}"\n'
    )
    project = Te(root)

    refused = sbom(run_qola, project, "--manifest-only", "--format", "spdx")
    dated = sbom(run_qola, project, "--manifest-only", "--format", "spdx",
                 env={"SOURCE_DATE_EPOCH": "0"})  # fmt: skip
    cyclonedx = sbom(run_qola, project, "--manifest-only")

    assert refused.exit_code == 2
    assert refused.stderr == (
        "qola: sbom: an SPDX document must say when it was made, and the root has no commit to "
        "date it by (it is in no git repository, or its branch has no commit yet)\n"
        "hint: set SOURCE_DATE_EPOCH (seconds since 1970) to the date it should carry\n"
    )
    assert dated.exit_code == 0
    assert json.loads(dated.stdout)["creationInfo"]["created"] == "1970-01-01T00:00:00Z"
    assert spdx_problems(dated.stdout, tmp_path) == []
    assert cyclonedx.exit_code == 0
    assert cyclonedx_problems(cyclonedx.stdout) == []
    root_component = json.loads(cyclonedx.stdout)["metadata"]["component"]
    assert (root_component["name"], root_component["purl"]) == ("plain", "pkg:generic/plain")


def test_the_release_recipe_writes_both_documents(te, upstreams, tmp_path):
    """docs/sbom.md's job, run as written in a clone of the project (submodules left
    alone): but for the two pip lines (the network; the qola under test is on PATH, with
    the libraries) and the upload."""
    import re

    import yaml
    from shell import qola_env, run_shell
    from test_ci_recipes import INSTALL

    from qola.output.sbom import REQUIREMENTS

    text = (HERE.parent / "docs" / "sbom.md").read_text()
    found = re.search(r"<!-- tested-recipe: github-actions-sbom -->\n```yaml\n(.*?)```", text, re.S)
    assert found
    [job] = yaml.safe_load(found[1])["jobs"].values()
    extra = "pip install " + " ".join(f"'{r}'" for r in REQUIREMENTS.values())
    workspace = tmp_path / "workspace"
    env = {**qola_env(tmp_path / "tools"), "GIT_CONFIG_GLOBAL": str(upstreams.gitconfig)}
    ran = []
    for step in job["steps"]:
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout@"):
            assert step["with"]["submodules"] is False
            git(tmp_path, "clone", "-q", "--no-recurse-submodules", str(te.root), str(workspace))
        elif uses.startswith("actions/upload-artifact@"):
            assert step["with"]["path"] == "sbom.*.json"
        elif uses.startswith("actions/setup-python@") or step["run"] == INSTALL:
            continue  # the tests' interpreter, and the qola under test on PATH
        elif step["run"].startswith("pip install "):
            assert step["run"] == extra  # exactly the sbom extra
        else:
            proc = run_shell(step["run"], workspace, env)
            assert proc.returncode == 0, (step["run"], proc.stderr)
            ran.append(step["run"])
    assert ran == ["qola checkout", "qola sbom --format cyclonedx -o sbom.cdx.json",
                   "qola sbom --format spdx -o sbom.spdx.json"]  # fmt: skip
    assert cyclonedx_problems((workspace / "sbom.cdx.json").read_text()) == []
    assert spdx_problems((workspace / "sbom.spdx.json").read_text(), tmp_path) == []
    assert CK_REF in components(json.loads((workspace / "sbom.cdx.json").read_text()))


def test_drift_in_a_nested_submodule_is_recorded_on_it(run_qola, te, upstreams, tmp_path):
    moved = commit_file(te.aiter / CK, "include/x.hpp", "int x = 9;\n")

    cyclonedx = sbom(run_qola, te, "--allow-drift")
    spdx = sbom(run_qola, te, "--allow-drift", "--format", "spdx")

    assert cyclonedx_problems(cyclonedx.stdout) == []
    assert spdx_problems(spdx.stdout, tmp_path) == []
    found = components(json.loads(cyclonedx.stdout))
    said = (f"submodule: {CK} is at {moved[:12]}, the pinned commit records "
            f"{upstreams.ck_pin[:12]}")  # fmt: skip
    assert ("qola:drift", said) in properties(found[CK_REF])
    assert not [p for p in properties(found[AITER]) if p[0] == "qola:drift"]
    assert found[CK_REF]["version"] == upstreams.ck_pin  # the pin, not what is there
    packages = by_name(json.loads(spdx.stdout))
    [annotation] = packages["SPDXRef-Package-3rdparty-aiter-3rdparty-composable-kernel"][
        "annotations"
    ]
    assert annotation["comment"] == f"qola verify: the tree differs: {said}"


def test_a_dependency_not_checked_out_is_drift_with_its_nested_submodules_not_known(
    run_qola, te, tmp_path
):
    clone = Te(tmp_path / "clone")
    git(tmp_path, "clone", "-q", str(te.root), str(clone.root))

    res = sbom(run_qola, clone, "--allow-drift")

    assert res.exit_code == 0, res.stderr
    assert cyclonedx_problems(res.stdout) == []
    bom = json.loads(res.stdout)
    aiter = components(bom)[AITER]
    assert ("qola:drift", "missing: 3rdparty/aiter does not exist") in properties(aiter)
    assert ("qola:nested-submodules",
            "not read: the tree does not hold them as pinned (see the drift recorded)") in (
        properties(aiter)
    )  # fmt: skip
    assert AITER not in graph(bom)  # not known, as with --manifest-only


def test_drift_records_no_credentials_and_no_place_of_the_tree(run_qola, te, tmp_path):
    """verify's `tag` problem names the dependency's URL as the manifest has it, and the
    clone's absolute path: the document has neither the token nor where the tree is."""
    secret = f"https://x-access-token:{TOKEN}@github.com/ROCm/aiter.git"
    te.manifest.write_text(
        te.manifest.read_text().replace("https://github.com/ROCm/aiter.git", secret)
    )
    git(te.root, "commit", "-qam", "token in the url")
    git(te.aiter, "tag", "-f", "v0.1", "HEAD")  # the clone's label names another commit
    elsewhere = Te(tmp_path / "elsewhere" / "te")
    shutil.copytree(te.root, elsewhere.root, symlinks=True)
    for fmt in ("cyclonedx", "spdx"):
        res = sbom(run_qola, te, "--format", fmt, "--allow-drift")

        assert res.exit_code == 0, res.stderr
        assert TOKEN not in res.stdout and "x-access-token" not in res.stdout
        assert str(te.root) not in res.stdout
        assert "git -C 3rdparty/aiter fetch -q --force --no-tags " \
            "https://github.com/ROCm/aiter.git refs/tags/v0.1:refs/tags/v0.1" in res.stdout
        assert sbom(run_qola, elsewhere, "--format", fmt, "--allow-drift").stdout == res.stdout


def test_what_a_message_keeps_in_a_document(te):
    from qola.manifest import load
    from qola.sync.inventory import Words

    said = Words(load(te.manifest))
    assert said(f"git -C {te.root}/3rdparty/aiter fetch https://{TOKEN}@h.example.org/r.git "
                f"(https://h.example.org/r?private_token={TOKEN}), me:{TOKEN}@h:r.git; "
                f"in {te.root}: {te.root}2/x file://{te.root}/y") == (
        "git -C 3rdparty/aiter fetch https://h.example.org/r.git (https://h.example.org/r), "
        f"me@h:r.git; in .: {te.root}2/x file://{te.root}/y"
    )  # fmt: skip


@pytest.mark.skipif(shutil.which("gpg") is None, reason="needs gpg")
def test_drift_of_a_keyring_gpg_refuses_gives_the_same_bytes_each_run(run_qola, te):
    """gpg's words name the keybox it makes in a temporary folder of its own each run."""
    (te.root / "keys").mkdir()
    (te.root / "keys/junk.asc").write_text("not a key\n")
    te.manifest.write_text(te.manifest.read_text() + 'keyring = "keys/junk.asc"\n')
    git(te.root, "add", ".")
    git(te.root, "commit", "-qm", "a keyring that holds no key")
    for fmt in ("cyclonedx", "spdx"):
        first = sbom(run_qola, te, "--format", fmt, "--allow-drift")

        assert first.exit_code == 0, first.stderr
        assert "signature: keys/junk.asc: gpg imports no public key from it" in first.stdout
        assert "qola-keys-" not in first.stdout
        assert sbom(run_qola, te, "--format", fmt, "--allow-drift").stdout == first.stdout


def test_drift_of_a_missing_patched_dependency_keeps_its_patches(run_qola, te, tmp_path):
    """Recorded as the manifest pins it, as --manifest-only records it: with its patches."""
    shutil.rmtree(te.aiter)
    manifest_only = {fmt: sbom(run_qola, te, "--format", fmt, "--manifest-only")
                     for fmt in ("cyclonedx", "spdx")}  # fmt: skip
    cyclonedx = sbom(run_qola, te, "--allow-drift")
    spdx = sbom(run_qola, te, "--allow-drift", "--format", "spdx")

    assert (cyclonedx.exit_code, spdx.exit_code) == (0, 0), cyclonedx.stderr + spdx.stderr
    assert cyclonedx_problems(cyclonedx.stdout) == []
    assert spdx_problems(spdx.stdout, tmp_path) == []
    aiter = components(json.loads(cyclonedx.stdout))[AITER]
    assert aiter["pedigree"] == (
        components(json.loads(manifest_only["cyclonedx"].stdout))[AITER]["pedigree"]
    )
    document = json.loads(spdx.stdout)
    [patch] = document["files"]
    assert patch["fileName"] == f"./patches/aiter/{PATCH}"
    package, upstream = "SPDXRef-Package-3rdparty-aiter", "SPDXRef-Upstream-3rdparty-aiter"
    assert {(package, "DESCENDANT_OF", upstream), (patch["SPDXID"], "PATCH_FOR", upstream),
            (patch["SPDXID"], "PATCH_APPLIED", package)} <= relations(document)  # fmt: skip
    assert json.loads(manifest_only["spdx"].stdout)["files"] == document["files"]


def test_a_patch_that_is_not_utf8_is_written_base64(run_qola, upstreams, tmp_path):
    te = make_te(tmp_path / "te", upstreams, {PATCH: upstreams.patch}, checkout=False)
    latin1 = b"Subject: [PATCH] caf\xe9\n\ndiff --git a/aiter.py b/aiter.py\n"
    (te.root / "patches/aiter/0002-cafe.patch").write_bytes(latin1)
    git(te.root, "add", ".")
    git(te.root, "commit", "-q", "-m", "a latin-1 patch")

    cyclonedx = sbom(run_qola, te, "--manifest-only")
    spdx = sbom(run_qola, te, "--manifest-only", "--format", "spdx")

    assert cyclonedx_problems(cyclonedx.stdout) == []
    assert spdx_problems(spdx.stdout, tmp_path) == []
    patches = components(json.loads(cyclonedx.stdout))[AITER]["pedigree"]["patches"]
    text = {p["diff"]["url"]: p["diff"]["text"] for p in patches}
    import base64

    assert text["patches/aiter/0002-cafe.patch"] == {
        "content": base64.b64encode(latin1).decode(), "contentType": "text/x-diff",
        "encoding": "base64",
    }  # fmt: skip


def test_an_abbreviated_legacy_pin_is_refused_from_the_manifest(run_qola, te, upstreams):
    """TransformerEngine's own form, `[qola] aiter_commit`, with a short SHA: what
    `verify --manifest-only` fails, sbom --manifest-only refuses, or records."""
    te.manifest.write_text(f'[qola]\naiter_commit = "{upstreams.pin[:10]}"\n'
                           'patches_dir = "patches/aiter"\n')  # fmt: skip

    refused = sbom(run_qola, te, "--manifest-only")
    recorded = sbom(run_qola, te, "--manifest-only", "--allow-drift")

    assert refused.exit_code == 1
    assert (f"  aiter: abbreviated: the pin '{upstreams.pin[:10]}' is abbreviated; write the full "
            "40-hex SHA in its place\n") in refused.stderr  # fmt: skip
    assert recorded.exit_code == 0
    assert cyclonedx_problems(recorded.stdout) == []
    aiter = components(json.loads(recorded.stdout))[AITER]
    assert aiter["version"] == upstreams.pin[:10]
    # Without --manifest-only the pin is expanded from the checkout, and the tree passes.
    full = sbom(run_qola, te)
    assert full.exit_code == 0, full.stderr
    assert components(json.loads(full.stdout))[AITER]["version"] == upstreams.pin


def test_submodules_nested_two_deep_with_a_relative_url(run_qola, deep, tmp_path):
    """top records mid and other; mid records deep by ../deep: each a component inside
    its parent, the graph as deep, deep's URL resolved against mid's."""
    from superprojects import fresh_clone

    root = fresh_clone(deep, tmp_path / "root")
    assert run_qola("checkout", "-q", "-m", str(root / "qola.toml")).exit_code == 0
    project = Te(root)

    cyclonedx = sbom(run_qola, project)
    spdx = sbom(run_qola, project, "--format", "spdx")

    assert cyclonedx_problems(cyclonedx.stdout) == []
    assert spdx_problems(spdx.stdout, tmp_path) == []
    bom = json.loads(cyclonedx.stdout)
    top, mid, other = ("component:3rdparty/top", "component:3rdparty/top/extern/mid",
                       "component:3rdparty/top/extern/other")  # fmt: skip
    low = "component:3rdparty/top/extern/mid/extern/deep"
    assert graph(bom) == {"root": [top], top: [mid, other], mid: [low], low: [], other: []}
    found = components(bom)
    assert [c["bom-ref"] for c in found[mid]["components"]] == [low]
    assert found[low]["version"] == deep.deep_v1
    assert found[low]["externalReferences"] == [{"type": "vcs", "url": f"file://{deep.deep}"}]
    assert found[low]["name"] == "deep"
    document = json.loads(spdx.stdout)
    ids = {p["name"]: p["SPDXID"] for p in document["packages"]}
    assert (ids["mid"], "DEPENDS_ON", ids["deep"]) in relations(document)
    assert (ids["top"], "DEPENDS_ON", ids["other"]) in relations(document)
