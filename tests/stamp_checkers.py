"""Both stamp checkers on the same entries: qola/repo/trail.py's holds() and QoLA.cmake's own
_qola_stamp_holds(), run by real CMake (`cmake -P`) on a results file qola rendered."""

from __future__ import annotations

import subprocess
from pathlib import Path

from qola.manifest import Manifest
from qola.output.cmake_results import render
from qola.repo import trail

REPO = Path(__file__).resolve().parent.parent
MODULE = REPO / "cmake" / "QoLA.cmake"

_SCRIPT = """\
include("{module}")
set(results "{results}")
_qola_read_results()
_qola_stamp_holds(holds)
message(STATUS "holds=${{holds}} format=${{_QOLA_FORMAT}}")
"""


def results_file(folder: Path, entries: list[tuple[str, str]]) -> Path:
    """A CMake results file whose stamp is entries, rendered as a checkout writes it."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest = Manifest(folder / "qola.toml", folder, ())
    results = folder / "results.cmake"
    results.write_text(render([], manifest, trail.Proof(entries)))
    return results


def cmake_holds(cmake: Path, results: Path) -> bool:
    """What QoLA.cmake's checker says of the stamp in a results file."""
    script = results.with_name("check.cmake")
    script.write_text(_SCRIPT.format(module=MODULE.as_posix(), results=results.as_posix()))
    proc = subprocess.run(
        [str(cmake), "-P", str(script)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"format={trail.FORMAT}" in proc.stdout, proc.stdout
    return "holds=TRUE" in proc.stdout
