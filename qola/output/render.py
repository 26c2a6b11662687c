"""Results as text for people, JSON and JUnit for machines, and GitHub annotations.

Pure functions of what a command found: they return strings and never print or
read the disk. Colour comes in through a `paint` argument (console.paint on a
terminal); the machine formats never take one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from qola.base import safetext
from qola.base.plural import count
from qola.output import cmake_env
from qola.sync.observe import SubmoduleState
from qola.sync.verify import DIRTY, GITLINK, OVERRIDDEN, DepReport, Problem, Report

if TYPE_CHECKING:
    from qola.history.bump import Move
    from qola.manifest import Dep, Manifest
    from qola.sync.engine import Result

Paint = Callable[[str, str], str]
JSON_SCHEMA = 1
# Characters XML 1.0 cannot carry at all, even escaped (a file name may hold them).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _plain(text: str, style: str) -> str:
    return text


def text(report: Report, paint: Paint = _plain) -> str:
    """One line per dependency, then its problems indented."""
    lines = [f"checked: {report.checked}"] if report.checked else []
    for dep in report.deps:
        mark = paint("ok  ", "green") if dep.ok else paint("FAIL", "red")
        head = dep.head[:12] if dep.head else "-"
        label = f" (tag {dep.dep.tag})" if dep.dep.tag else ""
        lines.append(f"{mark} {dep.dep.name} {dep.path} pinned {dep.dep.commit[:12]}{label} "
                     f"head {head}")  # fmt: skip
        lines.extend(
            f"     {paint(p.kind, 'red' if p.is_failure else 'yellow')}: {p.message}"
            for p in dep.problems
        )
    lines.append(paint(summary(report), "green" if report.ok else "red"))
    return "\n".join(lines) + "\n"


def as_json(report: Report) -> str:
    """The versioned JSON document of `verify --format json` (schema 1, docs/ci.md)."""
    document = {
        "schema": JSON_SCHEMA,
        "command": "verify",
        "manifest": str(report.manifest.path),
        "root": str(report.manifest.root),
        "ok": report.ok,
        "deps": [_dep_json(d) for d in report.deps],
    }
    if report.checked:
        document["checked"] = report.checked
    return safetext.json_document(document) + "\n"


def _dep_json(dep: DepReport) -> dict[str, Any]:
    return {
        "name": dep.dep.name,
        "path": dep.path,
        "pinned": dep.dep.commit,
        "tag": dep.dep.tag,
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
        "ok": sub.at_target and sub.initialised,
        "submodules": [_submodule_json(c) for c in sub.children],
    }


def junit(report: Report, manifest_name: str, seconds: float = 0.0) -> str:
    """JUnit XML: one test case per dependency; a failing one carries all its problems.

    Valid against Jenkins xunit's junit-10.xsd: <testsuites> has name, tests,
    failures, errors and time (no skipped); <testsuite> adds skipped; each <testcase>
    has its time. One <failure> per test case (GitLab and Jenkins keep only one): its
    type is the first problem's kind, its message that problem's message, and its text
    lists every problem as `kind: message`. An overridden dependency was not checked:
    <skipped>. seconds: how long the whole check took.
    """
    failures = sum(not d.ok for d in report.deps)
    skipped = sum(d.ok and _is_overridden(d) for d in report.deps)
    counts = {"tests": str(len(report.deps)), "failures": str(failures), "errors": "0"}
    took = {"time": _seconds(seconds)}
    import xml.etree.ElementTree as ET  # only for --format junit

    suites = ET.Element("testsuites", {"name": "qola verify", **counts, **took})
    suite = ET.SubElement(
        suites,
        "testsuite",
        {"name": _xml(f"qola verify {manifest_name}"), **counts, "skipped": str(skipped), **took},
    )
    for dep in report.deps:
        case = ET.SubElement(
            suite,
            "testcase",
            {"classname": _xml(manifest_name), "name": dep.dep.name,
             "time": _seconds(dep.seconds)},
        )  # fmt: skip
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
        label = f" tag {dep.dep.tag}" if dep.dep.tag else ""
        out.text = _xml(f"{dep.dep.name} {dep.path} pinned {dep.dep.commit}{label} head {head}\n")
    ET.indent(suites)
    body = ET.tostring(suites, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _seconds(value: float) -> str:
    """A time as junit-10.xsd's SUREFIRE_TIME takes it: digits, a dot, digits."""
    return f"{max(value, 0.0):.3f}"


def _xml(text: str) -> str:
    """text with the characters XML cannot hold shown as \\xNN (ElementTree escapes the rest),
    and no URL's credentials."""
    text = safetext.without_credentials(text)
    return _NOT_XML.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


def _is_overridden(dep: DepReport) -> bool:
    return any(p.kind == OVERRIDDEN for p in dep.problems)


def github(report: Report, manifest_name: str) -> str:
    """GitHub Actions workflow commands: an annotation per problem on the pin's line.

    manifest_name is the manifest's path relative to the repository's top, which is
    what GitHub needs to place an annotation in a pull request's diff. Only workflow
    commands: the summary line is the caller's to print elsewhere (stderr).
    """
    lines = []
    for dep in report.deps:
        for problem in dep.problems:
            lines.append(_annotation(dep, problem, manifest_name))
    return "".join(line + "\n" for line in lines)


def job_summary(report: Report, manifest_name: str) -> str:
    """A Markdown job summary for $GITHUB_STEP_SUMMARY: the verdict and a table."""
    mark = "✅" if report.ok else "❌"
    lines = [
        f"### {mark} qola verify {_markdown(manifest_name)}",
        "",
        summary(report),
        "",
        "| dependency | path | pinned | HEAD | result |",
        "|---|---|---|---|---|",
    ]
    for dep in report.deps:
        kinds = ", ".join(p.kind for p in dep.problems) or "ok"
        head = f"`{dep.head[:12]}`" if dep.head else "-"
        lines.append(
            f"| {_markdown(dep.dep.name)} | {_markdown(dep.path)} | `{dep.dep.commit[:12]}` "
            f"| {head} | {'ok' if dep.ok and kinds == 'ok' else _markdown(kinds)} |"
        )
    problems = [(d, p) for d in report.deps for p in d.problems]
    if problems:
        lines += ["", "<details><summary>problems</summary>", ""]
        lines += [f"- **{_markdown(d.dep.name)}** {p.kind}: {_markdown(p.message)}"
                  for d, p in problems]  # fmt: skip
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n\n"


def _markdown(text: str) -> str:
    """text safe in a Markdown table cell: no markup, line break, mention or link."""
    from qola.base import markdown  # lazy: the markdown and GitHub formats only

    return markdown.text(text)


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


def summary(report: Report) -> str:
    """`2 dependencies match the manifest`, `1 of 2 dependencies does not match ...`."""
    failed = sum(not d.ok for d in report.deps)
    total = len(report.deps)
    if not failed:
        verb = "matches" if total == 1 else "match"
        return f"{count(total, 'dependency', 'dependencies')} {verb} the manifest"
    verb = "does not match" if failed == 1 else "do not match"
    return f"{failed} of {count(total, 'dependency', 'dependencies')} {verb} the manifest"


# -- the JSON documents of status, checkout and bump --dry-run (schema 1 each; the JSON
# Schemas in docs/schemas/ describe them, and the tests validate against those).


def _document(command: str, manifest: Manifest, body: dict[str, Any]) -> str:
    document = {"schema": JSON_SCHEMA, "command": command, "manifest": str(manifest.path),
                "root": str(manifest.root), **body}  # fmt: skip
    return safetext.json_document(document) + "\n"


def status_json(report: Report) -> str:
    """`qola status --format json`: each dependency's pin, HEAD, state, gitlink and dirt."""

    deps = []
    for dep in report.deps:
        kinds = [p.kind for p in dep.problems]
        deps.append({
            "name": dep.dep.name,
            "path": dep.path,
            "pinned": dep.dep.commit,
            "tag": dep.dep.tag,
            "head": dep.head,
            "state": state_of(dep),
            "gitlink_differs": GITLINK in kinds,
            "dirty": DIRTY in kinds,
            "ok": dep.ok,
            "problems": [{"kind": p.kind, "message": p.message, "failure": p.is_failure}
                         for p in dep.problems],
        })  # fmt: skip
    return _document("status", report.manifest, {"ok": report.ok, "deps": deps})


def state_of(dep: DepReport) -> str:
    """The one word status shows: ok, or the first problem that is not dirt or the gitlink."""

    return next((p.kind for p in dep.problems if p.kind not in (DIRTY, GITLINK)), "ok")


def checkout_json(manifest: Manifest, deps: Sequence[Dep], result: Result) -> str:
    """`qola checkout --format json`: what checkout did to each dependency, and how long."""
    entries = []
    for dep in deps:
        outcome = result.outcomes.get(dep.name)
        state = result.states.get(dep.name)
        error = result.failures.get(dep.name)
        if error is not None:
            what = "failed"
        elif state is not None and state.overridden:
            what = "overridden"
        elif state is not None and state.developing:
            what = "developing"
        elif outcome is not None and outcome.did:
            what = "changed"
        else:
            what = "up-to-date"
        seconds = result.seconds.get(dep.name)
        received = result.received.get(dep.name)
        entries.append({
            "name": dep.name,
            "path": str(state.worktree) if state is not None and state.overridden else dep.path,
            "pinned": dep.commit,
            "tag": dep.tag,
            "result": what,
            "did": list(outcome.did) if outcome is not None else [],
            "nested_updated": outcome.nested if outcome is not None else 0,
            "seconds": round(seconds, 3) if seconds is not None else 0.0,
            "bytes_fetched": received if received else None,
            "error": None if error is None else {"exit_code": error.exit_code,
                                                 "message": cmake_env.render(error)},
        })  # fmt: skip
    ok = not result.failures
    body = {"ok": ok, "exit_code": result.exit_code, "deps": entries}
    return _document("checkout", manifest, body)


def bump_json(manifest: Manifest, move: Move, dry_run: bool) -> str:
    """`qola bump --dry-run --format json`: the pin's move and the commits it brings."""
    body = {
        "dry_run": dry_run,
        "name": move.dep.name,
        "ref": move.ref,
        "old": move.old,  # a repaired pin (it was a ref name): git's null SHA, no commit
        "new": move.new,
        "old_tag": move.old_tag,  # the labels beside them (None: none)
        "tag": move.tag,
        "changed": move.old != move.new,
        # An integer as ever (schema 1 changes no field's type); count_known says whether
        # it is git's count or only what a shallow local history holds.
        "count": len(move.commits) if move.count is None else move.count,
        "count_known": move.count is not None,
        "back": move.back,  # the old pin's commits the new one lacks (a move back)
        "submodules": [{"path": n.path, "old": n.old, "new": n.new, "count": n.count,
                        "back": None if n.count is None else n.back} for n in move.nested],
        "commits": [
            {"sha": c.sha, "subject": c.subject, "author": c.author, "email": c.email,
             "date": c.date}
            for c in move.commits
        ],
    }  # fmt: skip
    return _document("bump", manifest, body)
