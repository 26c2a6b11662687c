"""Reports as text for people, JSON and JUnit for machines, and GitHub annotations.

Pure functions of a Report: they return strings and never print or read the disk.
"""

from __future__ import annotations

import json
import re
from typing import Any

from qola.observe import SubmoduleState
from qola.verify import OVERRIDDEN, DepReport, Problem, Report

JSON_SCHEMA = 1
# Characters XML 1.0 cannot carry at all, even escaped (a file name may hold them).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def text(report: Report) -> str:
    """One line per dependency, then its problems indented."""
    lines = [f"checked: {report.checked}"] if report.checked else []
    for dep in report.deps:
        mark = "ok  " if dep.ok else "FAIL"
        head = dep.head[:12] if dep.head else "-"
        lines.append(f"{mark} {dep.dep.name} {dep.path} pinned {dep.dep.commit[:12]} head {head}")
        lines.extend(f"     {p.kind}: {p.message}" for p in dep.problems)
    lines.append(_summary(report))
    return "\n".join(lines) + "\n"


def as_json(report: Report) -> str:
    """The versioned JSON document of DESIGN §6."""
    document = {
        "schema": JSON_SCHEMA,
        "ok": report.ok,
        "manifest": str(report.manifest.path),
        "root": str(report.manifest.root),
        "deps": [_dep_json(d) for d in report.deps],
    }
    if report.checked:
        document["checked"] = report.checked
    return json.dumps(document, indent=2) + "\n"


def _dep_json(dep: DepReport) -> dict[str, Any]:
    return {
        "name": dep.dep.name,
        "path": dep.path,
        "pinned": dep.dep.commit,
        "head": dep.head,
        "ok": dep.ok,
        "line": dep.dep.line,
        "problems": [
            {"kind": p.kind, "message": p.message, "failure": p.is_failure}
            | ({"path": p.path} if p.path else {})
            for p in dep.problems
        ],
        "submodules": [_submodule_json(s) for s in dep.submodules],
    }


def _submodule_json(sub: SubmoduleState) -> dict[str, Any]:
    return {
        "path": sub.path,
        "expected": sub.expected,
        "head": sub.head,
        "ok": sub.at_target,
        "submodules": [_submodule_json(c) for c in sub.children],
    }


def junit(report: Report, manifest_name: str) -> str:
    """JUnit XML: one test case per dependency; a failing one carries all its problems.

    One <failure> per test case (GitLab and Jenkins keep only one): its type is the
    first problem's kind, its message that problem's message, and its text lists every
    problem as `kind: message`. An overridden dependency was not checked: <skipped>.
    """
    failures = sum(not d.ok for d in report.deps)
    skipped = sum(d.ok and _is_overridden(d) for d in report.deps)
    counts = {
        "tests": str(len(report.deps)),
        "failures": str(failures),
        "errors": "0",
        "skipped": str(skipped),
    }
    import xml.etree.ElementTree as ET  # only for --format junit

    suites = ET.Element("testsuites", {"name": "qola verify", **counts})
    suite = ET.SubElement(
        suites, "testsuite", {"name": _xml(f"qola verify {manifest_name}"), **counts}
    )
    for dep in report.deps:
        case = ET.SubElement(
            suite, "testcase", {"classname": _xml(manifest_name), "name": dep.dep.name}
        )
        failing = [p for p in dep.problems if p.is_failure]
        if failing:
            first = failing[0]
            more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
            failure = ET.SubElement(
                case, "failure", {"type": first.kind, "message": _xml(first.message + more)}
            )
            failure.text = _xml("".join(f"{p.kind}: {p.message}\n" for p in dep.problems))
        elif _is_overridden(dep):
            notice = next(p for p in dep.problems if p.kind == OVERRIDDEN)
            ET.SubElement(case, "skipped", {"message": _xml(f"{notice.kind}: {notice.message}")})
        out = ET.SubElement(case, "system-out")
        head = dep.head or "-"
        out.text = _xml(f"{dep.dep.name} {dep.path} pinned {dep.dep.commit} head {head}\n")
    ET.indent(suites)
    body = ET.tostring(suites, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _xml(text: str) -> str:
    """text with the characters XML cannot hold shown as \\xNN (ElementTree escapes the rest)."""
    return _NOT_XML.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


def _is_overridden(dep: DepReport) -> bool:
    return any(p.kind == OVERRIDDEN for p in dep.problems)


def github(report: Report, manifest_name: str) -> str:
    """GitHub Actions workflow commands: an annotation per problem on the pin's line.

    manifest_name is the manifest's path relative to the repository's top, which is
    what GitHub needs to place an annotation in a pull request's diff.
    """
    lines = []
    for dep in report.deps:
        for problem in dep.problems:
            lines.append(_annotation(dep, problem, manifest_name))
    lines.append("qola: " + _summary(report))
    return "\n".join(lines) + "\n"


def _annotation(dep: DepReport, problem: Problem, manifest_name: str) -> str:
    command = "error" if problem.is_failure else "notice"
    props = {"file": manifest_name}
    if dep.dep.line is not None:
        props["line"] = str(dep.dep.line)
    props["title"] = f"qola verify: {dep.dep.name} {problem.kind}"
    shown = ",".join(f"{key}={_escape_property(value)}" for key, value in props.items())
    message = f"{dep.dep.name} ({dep.dep.path}): {problem.message}"
    return f"::{command} {shown}::{_escape_data(message)}"


def _escape_data(value: str) -> str:
    # GitHub's workflow-command rules: % first, so the others are not escaped twice.
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _summary(report: Report) -> str:
    failed = sum(not d.ok for d in report.deps)
    total = len(report.deps)
    if not failed:
        return f"{total} dependencies match the manifest"
    return f"{failed} of {total} dependencies do not match the manifest"
