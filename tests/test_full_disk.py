"""A disk that fills up during a clone, for real (a small tmpfs): a short message, not
one line per file, that names the cause and what to do."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import procs
import pytest
from repos import large_project, temp_clones

from qola.errors import GitError
from qola.git import Output, command_error


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 12 MiB tmpfs: room for the pack of big A (10 MiB), not for its work tree too."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", str(disk)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_full_disk_during_a_clone_is_summarised_with_its_cause(small_disk, large_upstream):
    root = small_disk / "project"
    manifest = large_project(root, large_upstream.path, large_upstream.big_a)
    proc = procs.run("checkout", "-m", str(manifest))
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) < 25, proc.stderr  # git itself printed one line per file left unwritten
    assert any(line.startswith("    ... (") and line.endswith(" more lines) ...") for line in lines)
    assert "the cause: No space left on device" in lines
    assert (
        "hint: free some space on the disk that holds the dependency (and its git dir), then "
        "run again: what was half-written is redone" in lines
    )
    assert temp_clones(root) == [] and not (root / "3rdparty").exists()  # nothing half-made
    assert os.statvfs(small_disk).f_bfree > 0


def test_short_git_output_is_shown_whole_and_long_output_keeps_its_ends() -> None:
    short = command_error("lib", ["fetch"], Output(1, "", "fatal: one\nfatal: two\n"))
    assert short.problem == "`git fetch` failed with exit code 1:\n    fatal: one\n    fatal: two"
    assert short.hint is None
    line = "error: unable to create file f{}: No space left on device\n"
    many = "".join(line.format(i) for i in range(3000))
    error: GitError = command_error("lib", ["checkout"], Output(128, "", many + "fatal: done\n"))
    shown = error.problem.splitlines()
    assert shown[0] == "`git checkout` failed with exit code 128:"
    assert shown[1] == "    error: unable to create file f0: No space left on device"
    assert shown[9] == "    ... (2,990 more lines) ..."
    assert shown[-2:] == ["    fatal: done", "the cause: No space left on device"]
    assert len(shown) == 14
