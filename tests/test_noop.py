"""The no-op answered before click loads (qola/noop.py): the same answer, or none at all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from repos import git, snapshot

from qola import noop

# Runs `python -m qola.cli ARGS` exactly as CMake does, and reports at exit which of the
# heavy modules the process loaded: the no-op must have loaded neither.
PROBE = """
import atexit, runpy, sys
def report():
    loaded = [m for m in ("click", "git", "qola.apply", "qola.shim") if m in sys.modules]
    sys.stderr.write("loaded: " + ",".join(loaded) + "\\n")
atexit.register(report)
sys.argv = ["qola.cli", *sys.argv[1:]]
runpy.run_module("qola.cli", run_name="__main__", alter_sys=True)
"""


def as_cmake_runs_it(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def split_probe(stderr: str) -> tuple[str, str]:
    """(qola's own stderr, the probe's list of loaded modules)."""
    body, _, loaded = stderr.rpartition("loaded: ")
    return body, loaded.strip()


@pytest.mark.parametrize(
    "args",
    [
        ["checkout"],
        ["checkout", "-q"],
        ["checkout", "-v", "--offline", "--force", "--jobs", "3", "lib"],
        ["checkout", "--safe-directory=ALL", "--lock-timeout", "0", "--fetch-timeout=inf"],
        ["checkout", "-m", "qola.toml", "--root", "."],
    ],
    ids=["plain", "quiet", "flags-and-name", "equals-forms", "manifest-and-root"],
)
def test_noop_answers_like_the_full_command_without_click(pinned_clean, run_qola, args):
    before = snapshot(pinned_clean.root)
    fast = as_cmake_runs_it(*args, cwd=pinned_clean.root)
    stderr, loaded = split_probe(fast.stderr)
    full = run_qola(*args, cwd=pinned_clean.root)
    assert (fast.returncode, fast.stdout, stderr) == (full.exit_code, full.stdout, full.stderr)
    assert fast.stdout.endswith("up to date\n")
    assert loaded == ""  # neither click, GitPython, the apply engine nor the shim
    assert snapshot(pinned_clean.root) == before


def test_noop_writes_the_same_cmake_file(pinned_clean, run_qola, tmp_path):
    fast_out, full_out = tmp_path / "fast.cmake", tmp_path / "full.cmake"
    fast = as_cmake_runs_it("checkout", "--cmake-out", str(fast_out), cwd=pinned_clean.root)
    full = run_qola("checkout", "--cmake-out", str(full_out), cwd=pinned_clean.root)
    assert fast.returncode == full.exit_code == 0
    assert split_probe(fast.stderr)[1] == ""
    assert fast_out.read_text() == full_out.read_text()
    assert "QOLA_LIB_SHA" in fast_out.read_text()


def test_noop_reports_an_override_like_the_full_command(pinned_clean, run_qola, tmp_path):
    elsewhere = tmp_path / "my-lib"
    elsewhere.mkdir()
    env = {**os.environ, "QOLA_SOURCE_DIR_LIB": str(elsewhere)}
    fast = subprocess.run(
        [sys.executable, "-c", PROBE, "checkout"],
        cwd=pinned_clean.root, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    full = run_qola("checkout", cwd=pinned_clean.root, env={"QOLA_SOURCE_DIR_LIB": str(elsewhere)})
    assert (fast.returncode, fast.stdout) == (full.exit_code, full.stdout)
    assert f"overridden by {elsewhere}" in fast.stdout
    assert split_probe(fast.stderr)[1] == ""


def declined(argv: list[str], cwd: Path) -> bool:
    """True when noop.answer stepped aside (returned) instead of answering (exiting)."""
    old = Path.cwd()
    os.chdir(cwd)
    try:
        noop.answer(argv)
    except SystemExit:
        return False
    finally:
        os.chdir(old)
    return True


@pytest.mark.parametrize(
    "argv",
    [
        ["verify"],
        ["checkout", "--help"],
        ["checkout", "--no-such-option"],
        ["checkout", "-qv"],
        ["checkout", "-j0"],
        ["checkout", "--jobs", "0"],
        ["checkout", "--jobs", "two"],
        ["checkout", "--safe-directory", "everything"],
        ["checkout", "--lock-timeout", "-1"],
        ["checkout", "--fetch-timeout", "0"],
        ["checkout", "--fetch-timeout", "nan"],
        ["checkout", "--manifest"],
        ["checkout", "--manifest", "."],
        ["checkout", "--root", "qola.toml"],
        ["checkout", "--cmake-out", "."],
        ["checkout", "--offline=1"],
        ["checkout", "--", "lib"],
        ["checkout", "nosuchdep"],
        ["checkout", "-m", "missing.toml"],
    ],
)
def test_noop_steps_aside_for_what_only_the_full_command_may_answer(pinned_clean, argv):
    before = snapshot(pinned_clean.root)
    assert declined(argv, pinned_clean.root)
    assert snapshot(pinned_clean.root) == before


@pytest.mark.parametrize(
    ("variable", "value"),
    [("QOLA_JOBS", "0"), ("QOLA_OFFLINE", "maybe"), ("QOLA_SAFE_DIRECTORY", "x")],
)
def test_noop_steps_aside_for_environment_values_click_would_refuse(
    pinned_clean, monkeypatch, variable, value
):
    monkeypatch.setenv(variable, value)
    assert declined(["checkout"], pinned_clean.root)


def test_noop_steps_aside_when_a_dependency_needs_work(behind_pin):
    before = snapshot(behind_pin.root)
    assert declined(["checkout"], behind_pin.root)
    assert snapshot(behind_pin.root) == before


def test_noop_steps_aside_when_a_nested_submodule_moved(pinned_clean, upstream):
    git(pinned_clean.nested, "checkout", "-q", "--detach", upstream.nested_v1)
    assert declined(["checkout"], pinned_clean.root)


def test_noop_steps_aside_for_an_abbreviated_legacy_pin(pinned_clean):
    text = pinned_clean.manifest.read_text()
    sha = git(pinned_clean.lib, "rev-parse", "HEAD")
    pinned_clean.manifest.write_text(text.replace(sha, sha[:10]))
    assert declined(["checkout"], pinned_clean.root)


def test_console_script_and_module_answer_the_noop(pinned_clean):
    for command in ([sys.executable, "-m", "qola", "checkout"],):
        proc = subprocess.run(
            command, cwd=pinned_clean.root, capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.endswith("up to date\n")
