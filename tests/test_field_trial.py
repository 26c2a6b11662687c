"""A TransformerEngine build engineer's day, replayed on a tree shaped like TE's: the legacy
`[qola] lib_commit` manifest below the top, lib a submodule with a nested submodule of its
own (AITER and composable_kernel), a clone of the root from its upstream, real CMake with
Ninja. Each step is what the field trial did; each assertion is what it should have found."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from repos import commit_file, git, head, init_repo
from superprojects import add_gitlink
from test_cmake import MODULE, REPO, Consumer, _pypi_cmake

MANIFEST = "transformer_engine/common/ck_fused_attn/qola_manifest.toml"
CMAKELISTS = f"""\
cmake_minimum_required(VERSION 3.21)
project(te LANGUAGES NONE)
include("{MODULE.as_posix()}")
qola_checkout(MANIFEST {MANIFEST})
file(APPEND "${{CMAKE_BINARY_DIR}}/configure-log.txt" "configured\\n")
add_custom_target(te ALL
  COMMAND "${{CMAKE_COMMAND}}" -E cat "${{QOLA_LIB_SOURCE_DIR}}/3rdparty/ck/ck.txt"
  COMMAND "${{CMAKE_COMMAND}}" -E cat "${{QOLA_LIB_SOURCE_DIR}}/lib.txt")
"""


def manifest_text(pin: str) -> str:
    return f'[qola]\nnamespace = "te"\nlib_commit = "{pin}"  # AITER\n'


class Trial:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.ck = init_repo(base / "ck")
        commit_file(self.ck, "ck.txt", "ck 1\n")
        self.lib = init_repo(base / "lib")
        commit_file(self.lib, "lib.txt", "lib 1\n")
        add_gitlink(self.lib, "3rdparty/ck", "3rdparty/ck", str(self.ck), head(self.ck))
        for n in range(3):  # branches of the upstream's that no pin needs
            git(self.lib, "branch", f"feature-{n}")
        self.pin = head(self.lib)
        self.origin = init_repo(base / "origin")
        add_gitlink(self.origin, "3rdparty/lib", "3rdparty/lib", str(self.lib), self.pin)
        (self.origin / MANIFEST).parent.mkdir(parents=True)
        (self.origin / MANIFEST).write_text(manifest_text(self.pin))
        (self.origin / "CMakeLists.txt").write_text(CMAKELISTS)
        (self.origin / "README.rst").write_text("TE\n")
        git(self.origin, "add", MANIFEST, "CMakeLists.txt", "README.rst")
        git(self.origin, "commit", "-q", "-m", "TE")
        self.root = base / "te"
        git(base, "clone", "-q", str(self.origin), str(self.root))
        log = base / "python-starts.log"
        wrapper = base / "python"
        wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{sys.executable}" "$@"\n')
        wrapper.chmod(0o755)
        self.build = Consumer(self.root, base / "build", _pypi_cmake("newest"), "Ninja", log,
                              {"PYTHONPATH": str(REPO), "QOLA_PYTHON": str(wrapper)})  # fmt: skip

    @property
    def aiter(self) -> Path:
        return self.root / "3rdparty" / "lib"

    def configures(self) -> int:
        log = self.base / "build" / "configure-log.txt"
        return len(log.read_text().splitlines()) if log.exists() else 0

    def ninja(self, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.build.build_(check=check)


@pytest.fixture
def trial(tmp_path: Path) -> Trial:
    t = Trial(tmp_path)
    t.build.configure()
    t.ninja()
    return t


def test_ten_root_commits_re_run_no_configure(trial: Trial):
    before, starts = trial.configures(), trial.build.python_starts()
    for n in range(10):
        (trial.root / "README.rst").write_text(f"TE {n}\n")
        git(trial.root, "commit", "-q", "-am", f"docs {n}")
        git(trial.root, "status", "--porcelain")
        assert "Re-running CMake" not in trial.ninja().stdout
    assert (trial.configures(), trial.build.python_starts()) == (before, starts)


def test_a_deleted_nested_folder_is_back_at_the_next_build_offline(trial: Trial):
    trial.build.configure("-DQOLA_OFFLINE=ON")
    for gone in (trial.aiter / "3rdparty" / "ck", trial.aiter):
        subprocess.run(["rm", "-rf", str(gone)], check=True)
        trial.build.configure("-DQOLA_OFFLINE=ON")  # as ninja's re-run would, offline
        built = trial.ninja()
        assert "ck 1" in built.stdout and "lib 1" in built.stdout


def test_a_pull_bringing_a_bump_fetches_nothing_for_aiter_and_the_build_moves_it(trial: Trial):
    # What keeps git's on-demand recursion (every branch of AITER, then into CK) out of it.
    assert git(trial.root, "config", "submodule.3rdparty/lib.fetchRecurseSubmodules") == "false"
    lib_refs = git(trial.aiter, "for-each-ref")
    v2 = commit_file(trial.lib, "lib.txt", "lib 2\n")
    git(trial.origin, "update-index", "--cacheinfo", f"160000,{v2},3rdparty/lib")
    (trial.origin / MANIFEST).write_text(manifest_text(v2))
    git(trial.origin, "commit", "-q", "-am", "Bump AITER")
    git(trial.root, "pull", "-q")
    assert git(trial.aiter, "for-each-ref") == lib_refs  # git fetched nothing there
    built = trial.ninja()
    assert "Re-running CMake" in built.stdout and "lib 2" in built.stdout
    assert head(trial.aiter) == v2
    assert "feature-0" not in git(trial.aiter, "for-each-ref")


def test_a_fix_of_ones_own_in_aiter_is_built_with_qola_develop(trial: Trial):
    fix = commit_file(trial.aiter, "lib.txt", "my fix\n", "my fix")
    refused = trial.ninja(check=False)
    assert refused.returncode != 0
    said = " ".join((refused.stdout + refused.stderr).split())
    assert "qola develop lib` leaves 3rdparty/lib as it is" in said  # pastable there
    assert head(trial.aiter) == fix
    develop = subprocess.run(
        [sys.executable, "-m", "qola", "develop", "lib", "-m", str(trial.root / MANIFEST)],
        capture_output=True, text=True, check=False, env={**os.environ, **trial.build.env},
    )  # fmt: skip
    assert develop.returncode == 0, develop.stderr
    built = trial.ninja()
    assert "my fix" in built.stdout
    assert f"developing at {fix[:7]}, 1 commit ahead of the pin" in built.stdout
    assert head(trial.aiter) == fix


def test_testing_an_upstream_pr_and_going_back(trial: Trial):
    git(trial.lib, "checkout", "-q", "--detach")
    for n in range(12):
        commit_file(trial.lib, "pr.txt", f"pr {n}\n", f"pr {n}")
    pr = head(trial.lib)
    git(trial.lib, "update-ref", "refs/pull/7/head", pr)
    git(trial.lib, "checkout", "-q", "main")
    git(trial.aiter, "fetch", "-q", "origin", pr)
    git(trial.aiter, "checkout", "-q", pr)
    trial.build.configure()  # the PR's commits are the remote's: back to the pin
    assert head(trial.aiter) == trial.pin
    assert "lib 1" in trial.ninja().stdout
