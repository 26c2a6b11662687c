"""Machine-readable outputs: JSON of status, checkout and bump --dry-run against their
documented schemas, JUnit against the rules of Jenkins xunit's junit-10.xsd, and GitHub's
workflow commands with a job summary."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from repos import git, snapshot

SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schemas"


def valid(document: str, name: str) -> dict:
    """The parsed document, after checking it against docs/schemas/<name>.schema.json."""
    data = json.loads(document)
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(data)
    return data


def test_status_json_matches_its_schema_and_the_text(pinned_clean, run_qola):
    (pinned_clean.lib / "lib.txt").write_text("edited\n")
    res = run_qola("status", "--format", "json", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 1
    data = valid(res.stdout, "status")
    [dep] = data["deps"]
    assert (dep["name"], dep["state"], dep["dirty"], dep["ok"]) == ("lib", "ok", True, False)
    assert [p["kind"] for p in dep["problems"]] == ["dirty"]


def test_checkout_json_says_what_each_dependency_did(make_project, upstream, run_qola):
    project = make_project()
    res = run_qola("checkout", "--format", "json", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    [dep] = valid(res.stdout, "checkout")["deps"]
    assert (dep["result"], dep["did"][:2], dep["nested_updated"]) == ("changed", ["cloned",
                                                                                   "fetched"], 1)
    assert dep["seconds"] > 0  # (bytes_fetched: git says it for packs of 100 objects and more)
    again = run_qola("checkout", "--format", "json", "-m", str(project.manifest))
    [dep] = valid(again.stdout, "checkout")["deps"]
    assert (dep["result"], dep["did"], dep["bytes_fetched"]) == ("up-to-date", [], None)
    assert dep["tag"] is None  # no label beside the pin


def test_checkout_json_names_the_label_beside_the_pin(make_project, upstream, run_qola):
    project = make_project(extra='tag = "v2.0"\n')
    res = run_qola("checkout", "--format", "json", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    [dep] = valid(res.stdout, "checkout")["deps"]
    assert (dep["pinned"], dep["tag"], dep["result"]) == (upstream.lib_v2, "v2.0", "changed")


def test_checkout_json_reports_a_failure_with_its_exit_code(make_project, run_qola):
    project = make_project(pin="1" * 40)
    res = run_qola("checkout", "--format", "json", "-m", str(project.manifest))
    assert res.exit_code == 3
    data = valid(res.stdout, "checkout")
    [dep] = data["deps"]
    assert (data["ok"], data["exit_code"], dep["result"]) == (False, 3, "failed")
    assert dep["error"]["exit_code"] == 3 and dep["error"]["message"].startswith("qola: lib: ")


def test_checkout_json_overridden(pinned_clean, tmp_path, run_qola):
    elsewhere = tmp_path / "mine"
    elsewhere.mkdir()
    res = run_qola("checkout", "--format", "json", "-m", str(pinned_clean.manifest),
                   env={"QOLA_SOURCE_DIR_LIB": str(elsewhere)})  # fmt: skip
    [dep] = valid(res.stdout, "checkout")["deps"]
    assert (dep["result"], dep["path"]) == ("overridden", str(elsewhere))


def test_bump_dry_run_json_lists_the_commits_and_writes_nothing(pinned_clean, upstream, run_qola):
    before = snapshot(pinned_clean.root)
    res = run_qola("bump", "lib", "--dry-run", "--format", "json", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 0, res.stderr
    data = valid(res.stdout, "bump")
    assert (data["old"], data["new"], data["count"]) == (upstream.lib_v2, upstream.lib_tip, 1)
    assert (data["old_tag"], data["tag"]) == (None, None)  # the tip is no release
    [commit] = data["commits"]
    assert commit["sha"] == upstream.lib_tip and commit["subject"] == "lib v4"
    assert commit["author"] == "qola tests" and commit["date"].startswith("2024-01-01T00:00:00")
    assert snapshot(pinned_clean.root) == before


def bump_json(run_qola, project, *args: str) -> dict:
    res = run_qola("bump", "lib", *args, "--dry-run", "--format", "json", "-m",
                   str(project.manifest))  # fmt: skip
    assert res.exit_code == 0, res.stderr
    return valid(res.stdout, "bump")


def test_bump_dry_run_json_names_the_labels_it_would_write_and_remove(
    pinned_clean, upstream, run_qola
):
    text = pinned_clean.manifest.read_text()
    pinned_clean.manifest.write_text(text.replace('track = "main"', 'tag = "v2.0"\ntrack = "main"'))
    before = snapshot(pinned_clean.root)
    data = bump_json(run_qola, pinned_clean)  # to main's tip, which no tag names
    assert (data["old"], data["old_tag"], data["new"], data["tag"]) == (
        upstream.lib_v2, "v2.0", upstream.lib_tip, None
    )
    assert snapshot(pinned_clean.root) == before


def test_bump_dry_run_json_to_a_release_names_it(make_project, upstream, run_qola):
    data = bump_json(run_qola, make_project(pin=upstream.lib_v1), "--to", "v2.0")
    assert (data["old"], data["old_tag"], data["new"], data["tag"], data["changed"]) == (
        upstream.lib_v1, None, upstream.lib_v2, "v2.0", True
    )


def test_bump_dry_run_json_of_a_label_alone_is_not_a_changed_pin(pinned_clean, run_qola):
    """The commit stays; only the label beside it would be written."""
    data = bump_json(run_qola, pinned_clean, "--to", "v2.0")
    assert (data["changed"], data["count"], data["old_tag"], data["tag"]) == (
        False, 0, None, "v2.0"
    )


def test_bump_json_without_dry_run_exits_2_and_changes_nothing(pinned_clean, run_qola):
    before = snapshot(pinned_clean.root)
    res = run_qola("bump", "lib", "--format", "json", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 2
    assert "--format json describes a bump without making it: add --dry-run" in res.stderr
    assert snapshot(pinned_clean.root) == before


# -- JUnit: the checks Jenkins xunit's junit-10.xsd makes (attributes each element may
# carry, the required ones, which children where, and the SUREFIRE_TIME pattern).

_ALLOWED = {
    "testsuites": ({"name", "time", "tests", "failures", "errors"}, set()),
    "testsuite": ({"name", "tests", "failures", "errors", "group", "time", "skipped",
                   "timestamp", "hostname", "id", "package", "file", "log", "url"},
                  {"name", "tests", "failures", "errors"}),
    "testcase": ({"name", "time", "classname", "group"}, {"name"}),
    "failure": ({"type", "message"}, set()),
    "error": ({"type", "message"}, set()),
    "skipped": ({"type", "message"}, set()),
    "system-out": (set(), set()),
    "system-err": (set(), set()),
}  # fmt: skip
_CHILDREN = {
    "testsuites": {"testsuite"},
    "testsuite": {"testsuite", "properties", "testcase", "system-out", "system-err"},
    "testcase": {"skipped", "error", "failure", "system-out", "system-err"},
}
_SUREFIRE_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?")


def check_junit_10(element: ET.Element) -> None:
    """Raise AssertionError where junit-10.xsd would refuse the element or a descendant."""
    allowed, required = _ALLOWED[element.tag]
    assert set(element.attrib) <= allowed, (element.tag, set(element.attrib) - allowed)
    assert required <= set(element.attrib), (element.tag, required - set(element.attrib))
    if "time" in element.attrib and element.tag in ("testsuites", "testsuite"):
        assert _SUREFIRE_TIME.fullmatch(element.attrib["time"]), element.attrib["time"]
    for child in element:
        assert child.tag in _CHILDREN.get(element.tag, set()), (element.tag, child.tag)
        check_junit_10(child)


@pytest.mark.parametrize("broken", [False, True])
def test_junit_is_valid_against_junit_10_xsd(pinned_clean, tmp_path, run_qola, broken):
    if broken:
        (pinned_clean.lib / "lib.txt").write_text("edited\n")
    res = run_qola("verify", "--format", "junit", "-m", str(pinned_clean.manifest))
    assert res.exit_code == int(broken)
    root = ET.fromstring(res.stdout)
    assert root.tag == "testsuites"
    check_junit_10(root)
    for element in root.iter():
        if element.tag in ("testsuites", "testsuite", "testcase"):
            assert _SUREFIRE_TIME.fullmatch(element.get("time", "")), element.tag


def test_junit_10_checks_catch_what_the_schema_refuses():
    """The checker fails on the two things the issue named: skipped on <testsuites>, and a
    time the pattern refuses."""
    with pytest.raises(AssertionError):
        check_junit_10(ET.fromstring('<testsuites skipped="0"/>'))
    with pytest.raises(AssertionError):
        check_junit_10(ET.fromstring('<testsuites time="1 s"/>'))


def test_github_keeps_stdout_for_workflow_commands_and_writes_a_job_summary(
    pinned_clean, tmp_path, run_qola
):
    (pinned_clean.lib / "lib.txt").write_text("edited\n")
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    res = run_qola("verify", "--format", "github", "-m", str(pinned_clean.manifest),
                   env={"GITHUB_STEP_SUMMARY": str(summary)})  # fmt: skip
    assert res.exit_code == 1
    assert all(line.startswith("::") for line in res.stdout.splitlines())
    assert res.stderr == "qola: 1 of 1 dependency does not match the manifest\n"
    text = summary.read_text()
    assert text.startswith("earlier step\n### ❌ qola verify qola.toml\n")  # appended
    assert "| lib | 3rdparty/lib |" in text and "| dirty |" in text
    assert "- **lib** dirty: lib.txt: modified" in text


def test_github_without_summary_variable_writes_no_file(pinned_clean, tmp_path, run_qola):
    here = tmp_path / "here"
    here.mkdir()
    res = run_qola("verify", "--format", "github", "-m", str(pinned_clean.manifest), cwd=here)
    assert (res.exit_code, res.stdout) == (0, "")
    assert list(here.iterdir()) == []


def test_machine_formats_have_no_colour_even_when_forced(pinned_clean, run_qola):
    git(pinned_clean.root, "status")  # (a command git runs fine: the tree is real)
    for fmt in ("json", "junit", "github"):
        res = run_qola("verify", "--format", fmt, "-m", str(pinned_clean.manifest),
                       env={"FORCE_COLOR": "1"})  # fmt: skip
        assert "\x1b[" not in res.stdout + res.stderr, fmt


@pytest.mark.parametrize("command", ["verify", "diff", "outdated"])
def test_every_json_document_starts_with_schema_command_manifest_root_and_has_a_schema(
    pinned_clean, upstream, run_qola, command
):
    """As docs/cli.md promises for every document, verify's, diff's and outdated's too."""
    pinned_clean.set_pin(upstream.lib_v2, upstream.lib_v1)  # moved (diff), behind (outdated)
    res = run_qola(command, "--format", "json", "-m", str(pinned_clean.manifest))
    assert res.exit_code in (0, 1), res.stderr
    data = valid(res.stdout, command)
    assert list(data)[:4] == ["schema", "command", "manifest", "root"]
    assert data["command"] == command


def test_job_summary_neither_mentions_nor_links_from_a_file_name(pinned_clean, tmp_path, run_qola):
    (pinned_clean.lib / "@octocat fixes #1 see https:").mkdir()
    (pinned_clean.lib / "@octocat fixes #1 see https:" / "x.txt").write_text("x")
    summary = tmp_path / "summary.md"
    res = run_qola("verify", "--strict", "--format", "github", "-m", str(pinned_clean.manifest),
                   env={"GITHUB_STEP_SUMMARY": str(summary)})  # fmt: skip
    assert res.exit_code == 1
    text = summary.read_text()
    assert "@\u200boctocat fixes \\#\u200b1" in text
    assert "@octocat" not in text and "#1" not in text
