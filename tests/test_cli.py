"""The command line's entry points, help, exit codes and error template."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
from repos import snapshot

from qola import __version__


@pytest.mark.parametrize(
    "command",
    [[sys.executable, "-m", "qola"], [sys.executable, "-m", "qola.cli"], ["qola"]],
    ids=["python -m qola", "python -m qola.cli", "qola script"],
)
def test_entry_points_show_help_with_exit_codes(command):
    if command == ["qola"] and shutil.which("qola") is None:
        pytest.fail("the qola console script is not installed")
    proc = subprocess.run([*command, "--help"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0
    for line in ("checkout", "verify", "status", "demo", "4    refused: local work would be lost"):
        assert line in proc.stdout


def help_exit_codes(text: str) -> dict[int, str]:
    """Each code of the `Exit codes:` block of a --help, with its meaning (lines joined)."""
    block = text.split("Exit codes:", 1)[1]
    codes: dict[int, str] = {}
    last = None
    for line in block.splitlines()[1:]:
        found = re.match(r"\s+(\d+)\s+(.*)", line)
        if found:
            last = int(found[1])
            codes[last] = found[2]
        elif line.strip() and last is not None:
            codes[last] += " " + line.strip()
        elif not line.strip() and codes:
            break
    return codes


def test_help_lists_every_exit_code_qola_exits_with(run_qola):
    """143 and 129 too (a CI timeout's SIGTERM, a closed terminal's SIGHUP:
    tests/test_crash.py), exit 4's second cause: a folder in the way that is not a
    repository git accepts (tests/test_broken_repositories.py), and exit 5, a Python that
    lacks a package qola needs (tests/test_requirements.py)."""
    codes = help_exit_codes(run_qola("--help").stdout)
    assert sorted(codes) == [0, 1, 2, 3, 4, 5, 129, 130, 143]
    assert codes[4] == (
        "refused: local work would be lost, or a folder is not a repository git accepts; "
        "nothing was changed"
    )
    assert codes[129] == "hung up (SIGHUP)"
    assert codes[143] == "terminated (SIGTERM)"


def test_version():
    proc = subprocess.run(
        [sys.executable, "-m", "qola", "--version"], capture_output=True, text=True, check=False
    )
    assert proc.stdout == f"qola, version {__version__}\n"


@pytest.mark.parametrize("command", ["checkout", "verify", "status"])
def test_every_command_documents_exit_codes(command, run_qola):
    res = run_qola(command, "--help")
    assert res.exit_code == 0
    assert "130  interrupted" in res.stdout
    assert "--manifest" in res.stdout and "--safe-directory" in res.stdout


def test_options_after_subcommand_as_cmake_calls_it(pinned_clean):
    """The seed invocation: python -m qola.cli checkout --manifest M."""
    proc = subprocess.run(
        [sys.executable, "-m", "qola.cli", "checkout", "--manifest", str(pinned_clean.manifest)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_unknown_option_exits_2_and_changes_nothing(pinned_clean, run_qola):
    before = snapshot(pinned_clean.root)
    res = run_qola("checkout", "--no-such-option", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 2
    # click's own words: "No such option: --x" before click 8.4, "No such option '--x'." since.
    assert res.stderr.endswith(
        ("Error: No such option: --no-such-option\n", "Error: No such option '--no-such-option'.\n")
    )
    assert snapshot(pinned_clean.root) == before


def test_bad_safe_directory_value_exits_2(pinned_clean, run_qola):
    res = run_qola("verify", "--safe-directory", "everything", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 2
    assert "'everything' is not one of 'scoped', 'all', 'off'" in res.stderr


def test_unknown_dependency_name_exits_2_with_hint(pinned_clean, run_qola):
    before = snapshot(pinned_clean.root)
    res = run_qola("checkout", "-m", str(pinned_clean.manifest), "lbi")
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: {pinned_clean.manifest}: no dependency named 'lbi'\nhint: did you mean 'lib'?\n"
    )
    assert snapshot(pinned_clean.root) == before


def test_manifest_from_environment_and_default_name(pinned_clean, run_qola):
    res = run_qola("verify", env={"QOLA_MANIFEST": str(pinned_clean.manifest)})
    assert res.exit_code == 0
    res = run_qola("verify", cwd=pinned_clean.root)
    assert res.exit_code == 0


def test_leaked_git_dir_is_ignored(pinned_clean, tmp_path):
    """A GIT_DIR leaked by a hook must not point qola's git at another repository."""
    env = {"GIT_DIR": str(tmp_path), "GIT_WORK_TREE": str(tmp_path), "GIT_INDEX_FILE": "/x"}
    import os

    proc = subprocess.run(
        [sys.executable, "-m", "qola", "verify", "-m", str(pinned_clean.manifest)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_demo_refuses_non_empty_folder(tmp_path, run_qola):
    (tmp_path / "keep.txt").write_text("mine")
    res = run_qola("demo", str(tmp_path))
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: {tmp_path}: the demo folder is not empty\nhint: give a new or empty folder\n"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_a_python_without_gitpython_is_named_not_git(behind_pin):
    """The configure's QOLA_PYTHON (or a PYTHONPATH checkout) is a Python qola was never
    installed in: the error names that Python and GitPython, not a missing git, and exits
    5, not 2 (a manifest or command line that is fine)."""
    before = snapshot(behind_pin.root)
    code = (
        "import sys, runpy\n"
        "sys.modules['git'] = None  # as in an interpreter GitPython was never installed in\n"
        "sys.argv = ['qola', 'checkout', '-m', sys.argv[1]]\n"
        "runpy.run_module('qola', run_name='__main__')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(behind_pin.manifest)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert proc.returncode == 5, proc.stderr
    said = (f"qola: {sys.executable}: cannot run qola: GitPython is not installed for this "
            "Python\n")  # fmt: skip
    assert proc.stderr.startswith(said)
    assert f"hint: install it: {sys.executable} -m pip install 'GitPython>=3.1.30'" in proc.stderr
    assert "install git 2.32" not in proc.stderr
    assert snapshot(behind_pin.root) == before


