"""Reports as text for people and JSON for machines. Returns strings; never prints."""

from __future__ import annotations

import json
from typing import Any

from qola.observe import SubmoduleState
from qola.verify import DepReport, Report

JSON_SCHEMA = 1


def text(report: Report) -> str:
    """One line per dependency, then its problems indented."""
    lines = []
    for dep in report.deps:
        mark = "ok  " if dep.ok else "FAIL"
        head = dep.head[:12] if dep.head else "-"
        lines.append(f"{mark} {dep.dep.name} {dep.path} pinned {dep.dep.commit[:12]} head {head}")
        lines.extend(f"     {p.kind}: {p.message}" for p in dep.problems)
    failed = sum(not d.ok for d in report.deps)
    total = len(report.deps)
    lines.append(
        f"{total} dependencies match the manifest"
        if not failed
        else f"{failed} of {total} dependencies do not match the manifest"
    )
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
    return json.dumps(document, indent=2) + "\n"


def _dep_json(dep: DepReport) -> dict[str, Any]:
    return {
        "name": dep.dep.name,
        "path": dep.path,
        "pinned": dep.dep.commit,
        "head": dep.head,
        "ok": dep.ok,
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
