"""`qola verify`: a read-only check of the tree against the manifest."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from qola.base import console, safetext
from qola.commands.session import Common, session, write_cmake
from qola.manifest.gitmodules import repository_top
from qola.output import render as formats
from qola.sync import verify_index
from qola.sync.verify import verify as run_verify

if TYPE_CHECKING:
    from qola.sync.verify import Report

FORMATS = ("text", "json", "junit", "github")


class VerifyOptions(NamedTuple):  # not a dataclass: dataclasses cost imports
    """How `verify` checks and reports: its options, from click."""

    fmt: str  # --format
    strict: bool
    remote: bool
    manifest_only: bool
    staged: bool  # with manifest_only: read the manifest and gitlinks from the index
    cmake_out: Path | None


def verify(common: Common, opts: VerifyOptions) -> int:
    """Verify, print the report in opts.fmt, and return 0 (match) or 1 (mismatch).

    With manifest_only and staged (or when pre-commit runs it), the manifest and the
    gitlinks are read from the index: what the next commit records.
    """

    fmt, manifest_only = opts.fmt, opts.manifest_only
    started = time.monotonic()
    index = verify_index.staged_mode(opts.staged, os.environ) if manifest_only else None
    with session(common, resolve_pins=not manifest_only, staged=index, offline=True) as sess:
        if manifest_only:
            report = verify_index.check(sess.manifest, sess.deps, sess.runner, index)
        else:
            report = run_verify(sess.manifest, sess.deps, sess.runner, opts.strict)
        if opts.remote:
            from qola.history import verify_remote as upstream  # lazy: --remote only

            report = upstream.add_problems(report, sess.runner)
        # github: workflow commands of qola's own, whose data _annotation escapes.
        console.result(render(fmt, report, time.monotonic() - started), end="",
                       commands=fmt == "github")
        if fmt == "github":
            # stdout holds workflow commands only; the verdict is for the log, and the job
            # summary for the run's page.
            console.message(f"qola: {formats.summary(report)}")
            summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
            if summary_file:
                name = _repository_path(report.manifest.path)
                with open(summary_file, "a", encoding="utf-8") as out:
                    out.write(safetext.without_credentials(formats.job_summary(report, name)))
        if opts.cmake_out is not None:
            write_cmake(opts.cmake_out, sess)
        return 0 if report.ok else 1


def render(fmt: str, report: Report, seconds: float = 0.0) -> str:
    """The report in one of FORMATS."""

    if fmt == "json":
        return formats.as_json(report)
    if fmt == "junit":
        return formats.junit(report, _repository_path(report.manifest.path), seconds)
    if fmt == "github":
        return formats.github(report, _repository_path(report.manifest.path))
    return formats.text(report, console.paint)


def _repository_path(path: Path) -> str:
    """The manifest's path from the top of its git repository, as GitHub names files."""

    return Path(os.path.relpath(path, repository_top(path.parent))).as_posix()
