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

from qola.base.errors import GitError
from qola.gitrun.git import Output, command_error


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


def test_init_on_a_full_disk_writes_no_short_manifest_and_the_rerun_writes_it(
    small_disk, upstream
):
    """The manifest is written whole or not at all: a short one left behind would make
    every later `qola init` refuse to overwrite it."""
    from repos import init_repo
    from superprojects import add_gitlink

    root = init_repo(small_disk / "project")
    add_gitlink(root, "lib", "3rdparty/lib", str(upstream.lib), upstream.lib_v2)
    filler = small_disk / "filler"
    with open(filler, "wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    manifest = root / "qola.toml"
    proc = procs.run("init", "-m", str(manifest))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (
        f"qola: {manifest}: cannot write the manifest: No space left on device; nothing was "
        "written\nhint: free some space or make the folder writable, then run again\n"
    )
    assert sorted(os.listdir(root)) == [".git", ".gitmodules"]
    filler.unlink()
    again = procs.run("init", "-m", str(manifest))
    assert again.returncode == 0, again.stderr
    assert f'commit = "{upstream.lib_v2}"' in manifest.read_text()
