"""`qola verify` output formats (text, json, junit, github), against golden files.

Each golden file in tests/golden/verify/ holds the four formats of one case, with the
values that differ per fixture build replaced by names: the upstream's SHAs by
`<lib_v2>` (full) or `<lib_v2:12>` (the 12-character form), the temporary folders by
`<tmp>` and `<upstream>`. Everything else is compared byte for byte. After an
intended change of format, regenerate them with UPDATE_GOLDENS=1 and review the
diff.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from repos import git, snapshot
from superprojects import legacy_superproject

GOLDEN = Path(__file__).parent / "golden" / "verify"
FORMATS = ("text", "json", "junit", "github")


@dataclass
class Case:
    """A tree to verify: its manifest, extra verify arguments and environment."""

    manifest: Path
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


def normalise(text: str, upstream, tmp_path: Path) -> str:
    """Name the per-build values: SHAs of the upstream's commits and temporary folders."""
    shas = {
        name: getattr(upstream, name)
        for name in ("lib_v1", "lib_v2", "lib_v3", "lib_tip", "nested_v1", "nested_v2")
    }
    for name, sha in shas.items():
        text = text.replace(sha, f"<{name}>")
    for length in (12, 10):
        for name, sha in shas.items():
            text = text.replace(sha[:length], f"<{name}:{length}>")
    text = text.replace(str(upstream.lib.parent), "<upstream>")
    text = re.sub(r' time="[0-9]+\.[0-9]{3}"', ' time="<seconds>"', text)  # JUnit's timings
    return text.replace(str(tmp_path), "<tmp>")


def _synced(p, u, tmp_path, run_qola) -> Case:
    return Case(p.manifest)


def _missing(p, u, tmp_path, run_qola) -> Case:
    shutil.rmtree(p.lib)
    return Case(p.manifest)


def _wrong_commit(p, u, tmp_path, run_qola) -> Case:
    p.set_pin(u.lib_v2, u.lib_tip)
    return Case(p.manifest)


def _submodule(p, u, tmp_path, run_qola) -> Case:
    git(p.nested, "checkout", "-q", u.nested_v1)
    return Case(p.manifest)


def _dirty(p, u, tmp_path, run_qola) -> Case:
    (p.lib / "lib.txt").write_text("edited\n")
    return Case(p.manifest)


def _patches(p, u, tmp_path, run_qola) -> Case:
    """A patch series the checkout does not carry (HEAD is the bare pin)."""
    with p.manifest.open("a") as out:
        out.write('patches = "patches/lib"\n')
    series = p.root / "patches" / "lib"
    series.mkdir(parents=True)
    (series / "0001-readme.patch").write_text(
        "--- a/README\n+++ b/README\n@@ -1 +1 @@\n-lib\n+lib, patched\n"
    )
    return Case(p.manifest)


def _gitlink(p, u, tmp_path, run_qola) -> Case:
    root = legacy_superproject(tmp_path / "super", u.lib, u.lib_v2)
    assert run_qola("checkout", "-q", "-m", str(root / "qola.toml")).exit_code == 0
    git(root, "update-index", "--cacheinfo", f"160000,{u.lib_tip},3rdparty/lib")
    return Case(root / "qola.toml")


def _overridden(p, u, tmp_path, run_qola) -> Case:
    return Case(p.manifest, env={"QOLA_SOURCE_DIR_LIB": str(tmp_path / "elsewhere")})


def _unreachable(p, u, tmp_path, run_qola) -> Case:
    # `side` branches off before lib v2: the pin is not in its history.
    p.manifest.write_text(p.manifest.read_text().replace('track = "main"', 'track = "side"'))
    return Case(p.manifest, ("--remote",))


def _abbreviated(p, u, tmp_path, run_qola) -> Case:
    root = legacy_superproject(tmp_path / "super", u.lib, u.lib_v2, written=u.lib_v2[:10])
    return Case(root / "qola.toml", ("--manifest-only",))


# The synced tree, and one tree per problem kind.
CASES: dict[str, tuple[Callable[..., Case], int]] = {
    "synced": (_synced, 0),
    "missing": (_missing, 1),
    "wrong-commit": (_wrong_commit, 1),
    "submodule": (_submodule, 1),
    "dirty": (_dirty, 1),
    "patches": (_patches, 1),
    "gitlink": (_gitlink, 1),
    "overridden": (_overridden, 0),
    "unreachable": (_unreachable, 1),
    "abbreviated": (_abbreviated, 1),
}


def run_formats(run_qola, case: Case) -> str:
    """The four formats of one verify, each under a header naming it and its exit code."""
    sections = []
    for fmt in FORMATS:
        res = run_qola(
            "verify", "--format", fmt, "-m", str(case.manifest), *case.args, env=case.env
        )
        sections.append(f"=== --format {fmt}: exit {res.exit_code} ===\n{res.stdout}")
    return "".join(sections)


@pytest.mark.parametrize("name", list(CASES))
def test_verify_formats_match_golden(name, pinned_clean, upstream, tmp_path, run_qola):
    make, code = CASES[name]
    if name == "overridden":
        shutil.copytree(pinned_clean.lib, tmp_path / "elsewhere", symlinks=True)
    case = make(pinned_clean, upstream, tmp_path, run_qola)
    before = snapshot(tmp_path)
    got = normalise(run_formats(run_qola, case), upstream, tmp_path)
    assert snapshot(tmp_path) == before  # every format, --remote included, is read-only
    assert got.count(f": exit {code} ===") == len(FORMATS), got
    golden = GOLDEN / f"{name}.txt"
    if os.environ.get("UPDATE_GOLDENS"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(got)
    assert got == golden.read_text()


@pytest.mark.parametrize("name", list(CASES))
def test_verify_junit_structure(name, pinned_clean, upstream, tmp_path, run_qola):
    """Parsed back: counts, one test case per dep, a failure typed with the problem kind."""
    make, code = CASES[name]
    if name == "overridden":
        shutil.copytree(pinned_clean.lib, tmp_path / "elsewhere", symlinks=True)
    case = make(pinned_clean, upstream, tmp_path, run_qola)
    res = run_qola(
        "verify", "--format", "junit", "-m", str(case.manifest), *case.args, env=case.env
    )
    assert res.exit_code == code
    suites = ET.fromstring(res.stdout)
    assert suites.tag == "testsuites"
    [suite] = suites.findall("testsuite")
    [testcase] = suite.findall("testcase")
    assert testcase.get("classname") == "qola.toml" and testcase.get("name") == "lib"
    failures = testcase.findall("failure")
    skipped = testcase.findall("skipped")
    for element in (suites, suite):
        assert element.get("tests") == "1"
        assert element.get("failures") == str(code)
        assert element.get("errors") == "0"
    assert suite.get("skipped") == str(len(skipped))  # junit-10.xsd: not on <testsuites>
    if code == 0:
        assert failures == []
        assert len(skipped) == (name == "overridden")
    else:
        [failure] = failures
        assert failure.get("type") == name
        assert failure.get("message")
        assert f"{name}: " in (failure.text or "")


def test_verify_json_lists_every_problem_kind(pinned_clean, upstream, tmp_path, run_qola):
    """JSON problems carry kind, message and failure; `unreachable` fails, `overridden` not."""
    case = _unreachable(pinned_clean, upstream, tmp_path, run_qola)
    (pinned_clean.lib / "lib.txt").write_text("edited\n")
    res = run_qola("verify", "--format", "json", "-m", str(case.manifest), *case.args)
    assert res.exit_code == 1
    [dep] = json.loads(res.stdout)["deps"]
    assert [(p["kind"], p["failure"]) for p in dep["problems"]] == [
        ("dirty", True),
        ("unreachable", True),
    ]
    assert dep["line"] == 5


def test_github_annotation_points_at_the_pin_in_deps_form(pinned_clean, run_qola):
    (pinned_clean.lib / "lib.txt").write_text("edited\n")
    res = run_qola("verify", "--format", "github", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 1
    lines = pinned_clean.manifest.read_text().splitlines()
    assert lines[5 - 1].startswith("commit = ")
    assert res.stdout.startswith(
        "::error file=qola.toml,line=5,title=qola verify%3A lib dirty::"
        "lib (3rdparty/lib): lib.txt: modified\n"
    )


def test_github_annotation_points_at_the_pin_in_legacy_form(tmp_path, upstream, run_qola):
    root = legacy_superproject(tmp_path / "super", upstream.lib, upstream.lib_v2)
    git(root, "update-index", "--cacheinfo", f"160000,{upstream.lib_tip},3rdparty/lib")
    res = run_qola("verify", "--manifest-only", "--format", "github", "-m", str(root / "qola.toml"))
    assert res.exit_code == 1
    lines = (root / "qola.toml").read_text().splitlines()
    assert lines[3 - 1].startswith("lib_commit = ")
    assert res.stdout.startswith("::error file=qola.toml,line=3,title=qola verify%3A lib gitlink::")


def test_github_file_is_relative_to_the_repository_top(pinned_clean, upstream, run_qola):
    """A manifest in a sub-folder is named from the top of the repository, as GitHub wants."""
    sub = pinned_clean.root / "build" / "qola.toml"
    sub.parent.mkdir()
    sub.write_text(pinned_clean.manifest.read_text())  # its root is still the repository's top
    (pinned_clean.lib / "lib.txt").write_text("edited\n")
    res = run_qola("verify", "--format", "github", "-m", str(sub))
    assert res.exit_code == 1
    assert res.stdout.startswith("::error file=build/qola.toml,line=5,")


def test_github_escapes_workflow_command_data(pinned_clean, run_qola):
    """A file name with %, CR and LF cannot end the annotation or start another command."""
    (pinned_clean.lib / "50%\r\n::error::x.txt").write_text("x")
    res = run_qola("verify", "--strict", "--format", "github", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 1
    [first] = res.stdout.splitlines()  # workflow commands only
    assert first == (
        "::error file=qola.toml,line=5,title=qola verify%3A lib dirty::"
        'lib (3rdparty/lib): "50%25\\r\\n::error::x.txt": untracked'
    )
    assert res.stderr == "qola: 1 of 1 dependency does not match the manifest\n"


def test_github_overridden_is_a_notice(pinned_clean, make_project, run_qola):
    project = make_project(name="other")
    res = run_qola(
        "verify",
        "--format",
        "github",
        "-m",
        str(project.manifest),
        env={"QOLA_SOURCE_DIR_LIB": str(pinned_clean.lib)},
    )
    assert res.exit_code == 0
    assert res.stdout.startswith(
        "::notice file=qola.toml,line=5,title=qola verify%3A lib overridden::"
    )


def test_junit_file_names_xml_cannot_hold_still_parse(pinned_clean, run_qola):
    """A file name with an escape character and CR LF is quoted as git quotes it."""
    (pinned_clean.lib / "red\x1b[31m\r\nx.txt").write_text("x")
    res = run_qola("verify", "--strict", "--format", "junit", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 1
    failure = ET.fromstring(res.stdout).find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == '"red\\033[31m\\r\\nx.txt": untracked'
    assert failure.text == 'dirty: "red\\033[31m\\r\\nx.txt": untracked\n'


def test_verify_unknown_format_exits_2_and_changes_nothing(pinned_clean, run_qola):
    before = snapshot(pinned_clean.root)
    res = run_qola("verify", "--format", "xml", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 2
    assert res.stdout == ""
    assert (
        "Error: Invalid value for '--format': 'xml' is not one of "
        "'text', 'json', 'junit', 'github'." in res.stderr
    )
    assert snapshot(pinned_clean.root) == before
