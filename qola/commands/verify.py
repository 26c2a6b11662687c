"""`qola verify`: a read-only check of the tree against the manifest."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from qola import console
from qola.session import Common, session, write_cmake

if TYPE_CHECKING:
    from qola.verify import Report

FORMATS = ("text", "json", "junit", "github")


def verify(
    common: Common,
    fmt: str,
    strict: bool,
    remote: bool,
    manifest_only: bool,
    staged: bool,
    cmake_out: Path | None,
) -> int:
    """Verify, print the report in fmt, and return 0 (match) or 1 (mismatch).

    With manifest_only and staged (or when pre-commit runs it), the manifest and the
    gitlinks are read from the index: what the next commit records.
    """
    from qola import pincheck
    from qola.verify import verify as run_verify

    index = pincheck.staged_mode(staged, os.environ) if manifest_only else None
    with session(common, resolve_pins=not manifest_only, staged=index) as sess:
        if manifest_only:
            report = pincheck.check(sess.manifest, sess.deps, sess.runner, index)
        else:
            report = run_verify(sess.manifest, sess.deps, sess.runner, strict)
        if remote:
            from qola import remote as upstream

            report = upstream.add_problems(report, sess.runner)
        console.result(render(fmt, report), end="")
        if cmake_out is not None:
            write_cmake(cmake_out, sess)
        return 0 if report.ok else 1


def render(fmt: str, report: Report) -> str:
    """The report in one of FORMATS."""
    from qola import render as formats

    if fmt == "json":
        return formats.as_json(report)
    if fmt == "junit":
        return formats.junit(report, _repository_path(report.manifest.path))
    if fmt == "github":
        return formats.github(report, _repository_path(report.manifest.path))
    return formats.text(report)


def _repository_path(path: Path) -> str:
    """The manifest's path from the top of its git repository, as GitHub names files."""
    from qola.manifest import repository_top

    return Path(os.path.relpath(path, repository_top(path.parent))).as_posix()
