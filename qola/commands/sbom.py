"""`qola sbom`: a bill of materials of the pins, in CycloneDX or SPDX, for a tree `verify`
passes (or, with --allow-drift, one that it does not, the drift recorded)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from qola import __version__
from qola.base import console, safetext
from qola.base.errors import EXIT_GIT, MismatchError, QolaError, UsageError
from qola.commands.session import Common, session
from qola.output import sbom as documents
from qola.repo import store
from qola.sync import inventory, verify_index
from qola.sync.verify import Report
from qola.sync.verify import verify as run_verify

# 9999-12-31T23:59:59Z: the last time Python's datetime (and SPDX's date format) holds.
_LAST_SECOND = 253402300799


class SbomOptions(NamedTuple):
    """What `sbom` makes and from what: its options, from click."""

    fmt: str  # --format: cyclonedx or spdx
    out: Path | None  # -o FILE; None: stdout
    manifest_only: bool
    allow_drift: bool


def sbom(common: Common, opts: SbomOptions) -> int:
    """Write the document (to opts.out, else stdout); 1 when verify fails on the tree and
    drift is not allowed (nothing written), else 0."""
    when = _source_date_epoch(os.environ.get("SOURCE_DATE_EPOCH"))
    build = documents.builder(opts.fmt)  # before anything is read: the libraries are there
    with session(common, resolve_pins=not opts.manifest_only, offline=True) as sess:
        if opts.manifest_only:
            report = verify_index.check(sess.manifest, sess.deps, sess.runner)
        else:
            report = run_verify(sess.manifest, sess.deps, sess.runner)
        if not report.ok and not opts.allow_drift:
            raise MismatchError(str(sess.manifest.path), _refusal(report, opts),
                                "bring the tree to its pins (qola checkout), or record the "
                                "drift in the document: add --allow-drift")  # fmt: skip
        read = inventory.from_manifest if opts.manifest_only else inventory.from_tree
        found = read(sess.manifest, report, sess.runner)
        options = documents.Options(when if when is not None else found.time, __version__)
        text = documents.render(found, build, options)
    if opts.out is None:
        console.result(text, end="")
    else:
        _write(opts.out, text)
        console.note(f"wrote {safetext.path(str(opts.out))} ({opts.fmt}, "
                     f"{len(found.components)} components)")  # fmt: skip
    if not found.ok:
        console.warning(f"{_failures(report)} recorded as drift in the document (--allow-drift)")
    return 0


class OutputError(QolaError):
    """-o FILE could not be written; nothing was left behind."""

    exit_code = EXIT_GIT


def _write(out: Path, text: str) -> None:
    """text into the file out, atomically; OutputError saying why not."""
    path = Path(os.path.abspath(out))
    folder = path.parent
    try:
        store.write_file(path, text.encode("ascii"), folder)
    except OSError as error:
        if not folder.is_dir():
            what = "does not exist" if not folder.exists() else "is not a folder"
            why, hint = f"the folder {safetext.path(str(folder))} {what}", "create it, or "
        else:
            why = (f"no file can be made in {safetext.path(str(folder))} "
                   f"({error.strerror or error})")  # fmt: skip
            hint = ""
        raise OutputError(
            safetext.path(str(out)), f"cannot write the bill of materials: {why}",
            f"{hint}name a FILE in a folder you can write to (-o - writes it to stdout)",
        ) from None


def _refusal(report: Report, opts: SbomOptions) -> str:
    """Why no document is written: each failure verify found, one per line."""
    lines = [
        f"  {dep.dep.name}: {problem.kind}: {problem.message}"
        for dep in report.deps
        for problem in dep.problems
        if problem.is_failure
    ]
    checked = "qola verify --manifest-only" if opts.manifest_only else "qola verify"
    return (f"the tree does not match it ({checked} fails), so no bill of materials is "
            "written:\n" + "\n".join(lines))  # fmt: skip


def _failures(report: Report) -> str:
    count = sum(1 for dep in report.deps for p in dep.problems if p.is_failure)
    return f"{count} {'difference' if count == 1 else 'differences'} from the manifest"


def _source_date_epoch(value: str | None) -> int | None:
    """SOURCE_DATE_EPOCH as the reproducible-builds convention has it: whole seconds."""
    if value is None or value == "":
        return None
    if not value.isascii() or not value.isdigit():
        raise UsageError(
            "SOURCE_DATE_EPOCH",
            f"{value!r} is not a whole number of seconds since 1970-01-01 UTC",
            "fix or unset SOURCE_DATE_EPOCH (it dates the document)",
        )
    seconds = int(value)
    if seconds > _LAST_SECOND:
        raise UsageError(
            "SOURCE_DATE_EPOCH",
            f"{value} seconds since 1970-01-01 UTC is after 9999-12-31 23:59:59 UTC, the last "
            "time a document can be dated",
            "fix or unset SOURCE_DATE_EPOCH (it dates the document)",
        )
    return seconds
