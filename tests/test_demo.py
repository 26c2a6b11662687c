"""`qola demo [DIR]` end to end, offline, with the folder spelled as a person types it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("spelling", ["./demo", "absolute"])
def test_demo_in_relative_or_absolute_folder_runs_every_step(tmp_path: Path, spelling: str):
    folder = str(tmp_path / "demo") if spelling == "absolute" else spelling
    proc = subprocess.run(
        [sys.executable, "-m", "qola", "demo", folder],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )

    assert proc.returncode == 0, proc.stdout + proc.stderr
    for step in ("$ qola checkout", "$ qola verify", "$ qola status", "$ qola bump lib --commit"):
        assert step in proc.stdout
    # Every path the demo prints for a person to repeat is absolute, whatever was typed.
    assert f"# qola demo in {tmp_path / 'demo'}\n" in proc.stdout
    assert f"# done; everything is in {tmp_path / 'demo'}\n" in proc.stdout
    assert (tmp_path / "demo" / "project" / "3rdparty" / "lib" / "lib.txt").read_text() == "lib 2\n"
