"""`qola develop NAME`: build against your own commits in a dependency, in this checkout
alone. On a TransformerEngine-shaped root: a legacy `[qola] lib_commit` manifest, lib a
submodule with nested submodules of its own, real CMake."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import procs
import pytest
from repos import commit_file, git, head, snapshot, without_noop_stamps
from superprojects import Deep, legacy_superproject
from test_cmake import GENERATORS, MODULE, REPO, Consumer, _pypi_cmake, flat

NESTED = ("extern/mid", "extern/mid/extern/deep", "extern/other")


@pytest.fixture
def te(deep: Deep, tmp_path: Path, run_qola) -> Path:
    """The root, its dependency checked out at the pin, nested submodules and all."""
    root = legacy_superproject(tmp_path / "te", deep.top, deep.top_v1)
    assert run_qola("checkout", cwd=root).exit_code == 0
    return root


def lib(root: Path) -> Path:
    return root / "3rdparty" / "lib"


def my_fix(root: Path) -> str:
    """A commit of the developer's own in the dependency, on no branch (as after a detached
    checkout qola made): the work a checkout would lose."""
    return commit_file(lib(root), "fix.txt", "my fix\n", "my fix")


def te_pin(root: Path) -> str:
    return git(root, "rev-parse", "HEAD:3rdparty/lib")


def mark(root: Path) -> Path:
    return root / ".git" / "qola" / "developing" / "lib"


def test_a_commit_in_the_dependency_is_refused_with_develop_and_freeze_named(
    te: Path, run_qola
):
    fix = my_fix(te)
    before = snapshot(te)
    res = run_qola("checkout", cwd=te)
    assert res.exit_code == 4
    assert "would lose local work" in res.stderr
    assert " develop lib` leaves 3rdparty/lib as it is until `qola develop --end lib`" in (
        res.stderr
    )
    assert " freeze lib` pins the commit checked out" in res.stderr
    assert snapshot(te) == before
    assert head(lib(te)) == fix


def test_developing_leaves_the_dependency_and_says_so_on_every_run(
    te: Path, deep: Deep, run_qola
):
    fix = my_fix(te)
    res = run_qola("develop", "lib", cwd=te)
    assert res.exit_code == 0, res.stderr
    said = f"developing at {fix[:7]}, 1 commit ahead of the pin"
    line = f"lib 3rdparty/lib {deep.top_v1[:12]} {said}\n"
    assert res.stdout == line
    assert mark(te).is_file()
    assert git(te, "status", "--porcelain", "--ignore-submodules") == ""  # never committed
    before = without_noop_stamps(snapshot(te))
    for _ in range(2):  # every time, the stamped no-op included
        proc = procs.run("checkout", "-m", str(te / "qola.toml"))
        assert (proc.returncode, proc.stdout) == (0, line), proc.stderr
    assert without_noop_stamps(snapshot(te)) == before
    assert head(lib(te)) == fix
    # verify is never green on it, in every format; status shows it.
    res = run_qola("verify", cwd=te)
    assert res.exit_code == 1
    assert f"developing: being developed at {fix[:7]}, 1 commit ahead of the pin; " in res.stdout
    res = run_qola("verify", "--format", "json", cwd=te)
    [dep] = json.loads(res.stdout)["deps"]
    assert [p["kind"] for p in dep["problems"]] == ["developing"]
    assert (res.exit_code, dep["ok"]) == (1, False)
    res = run_qola("status", cwd=te)
    assert res.exit_code == 1
    assert res.stdout.splitlines()[1].split()[4] == "developing"
    assert run_qola("develop", cwd=te).stdout == line
    res = run_qola("checkout", "--format", "json", cwd=te)
    assert [d["result"] for d in json.loads(res.stdout)["deps"]] == ["developing"]


def test_marking_a_tree_at_its_pin_is_seen_by_the_stamped_noop(te: Path, deep: Deep):
    manifest = str(te / "qola.toml")
    for _ in range(2):  # the second answers from the stamp
        assert procs.run("checkout", "-m", manifest).stdout.endswith(" up to date\n")
    assert procs.run("develop", "lib", "-m", manifest).returncode == 0
    proc = procs.run("checkout", "-m", manifest)
    assert proc.stdout == (
        f"lib 3rdparty/lib {deep.top_v1[:12]} developing at {deep.top_v1[:7]}, at the pin\n"
    )
    assert procs.run("develop", "--end", "lib", "-m", manifest).returncode == 0
    assert procs.run("checkout", "-m", manifest).stdout.endswith(" up to date\n")


def test_ending_brings_the_pin_back_refusing_to_lose_work(te: Path, deep: Deep, run_qola):
    fix = my_fix(te)
    assert run_qola("develop", "lib", cwd=te).exit_code == 0
    res = run_qola("develop", "--end", "lib", cwd=te)
    assert res.exit_code == 0
    assert res.stdout == (
        f"lib: no longer developing; the next checkout brings 3rdparty/lib back to the pin "
        f"{deep.top_v1[:12]} (refusing if that would lose work)\n"
    )
    assert not mark(te).exists()
    assert run_qola("checkout", cwd=te).exit_code == 4  # the fix is on no branch
    git(lib(te), "branch", "my-fix", fix)
    res = run_qola("checkout", cwd=te)
    assert res.exit_code == 0, res.stderr
    assert head(lib(te)) == deep.top_v1
    for path in NESTED:
        assert (lib(te) / path / ".git").exists()


def test_freeze_pins_what_is_there_and_ends_it(te: Path, run_qola):
    fix = my_fix(te)
    assert run_qola("develop", "lib", cwd=te).exit_code == 0
    res = run_qola("freeze", "lib", cwd=te)
    assert res.exit_code == 0, res.stderr
    assert "lib: no longer developing (pinned at what is checked out)" in res.stdout
    assert f'lib_commit = "{fix}"' in (te / "qola.toml").read_text()
    assert git(te, "ls-files", "-s", "3rdparty/lib").split()[1] == fix  # the gitlink agrees
    assert not mark(te).exists()
    assert run_qola("checkout", cwd=te).stdout.endswith(" up to date\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("develop", "nope"), "nope"),
        (("develop", "--end"), "--end needs the names of the dependencies to end"),
    ],
)
def test_a_name_develop_cannot_take_changes_nothing(te: Path, run_qola, args, message):
    before = snapshot(te)
    res = run_qola(*args, cwd=te)
    assert res.exit_code == 2
    assert message in res.stderr
    assert snapshot(te) == before


def test_a_dependency_not_checked_out_cannot_be_developed(deep: Deep, tmp_path: Path, run_qola):
    origin = legacy_superproject(tmp_path / "origin", deep.top, deep.top_v1)
    root = tmp_path / "te"
    git(tmp_path, "clone", "-q", str(origin), str(root))  # 3rdparty/lib: an empty folder
    before = snapshot(root)
    res = run_qola("develop", "lib", cwd=root)
    assert res.exit_code == 2
    assert "lib: 3rdparty/lib is not checked out: there is nothing to develop yet" in res.stderr
    assert "run qola checkout first, then qola develop lib" in res.stderr
    assert snapshot(root) == before


def test_an_overridden_dependency_cannot_be_developed(te: Path, tmp_path: Path, run_qola):
    before = snapshot(te)
    res = run_qola("develop", "lib", cwd=te, env={"QOLA_SOURCE_DIR_LIB": str(lib(te))})
    assert res.exit_code == 2
    assert "it is overridden" in res.stderr
    assert snapshot(te) == before


CMAKELISTS = """\
cmake_minimum_required(VERSION 3.21)
project(te LANGUAGES NONE)
include("@MODULE@")
qola_checkout(MANIFEST qola.toml)
file(WRITE "${CMAKE_BINARY_DIR}/lib-src.txt" "${QOLA_LIB_SOURCE_DIR}")
add_custom_target(te ALL COMMAND "${CMAKE_COMMAND}" -E cat "${QOLA_LIB_SOURCE_DIR}/fix.txt")
"""


@pytest.mark.parametrize("generator", GENERATORS, ids=["ninja", "make"])
def test_configure_builds_against_the_developers_commit(
    te: Path, tmp_path: Path, generator: str
):
    (te / "CMakeLists.txt").write_text(CMAKELISTS.replace("@MODULE@", MODULE.as_posix()))
    log = tmp_path / "python-starts.log"
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    consumer = Consumer(te, tmp_path / "build", _pypi_cmake("newest"), generator, log,
                        {"PYTHONPATH": str(REPO), "QOLA_PYTHON": str(wrapper)})  # fmt: skip
    fix = my_fix(te)
    failed = consumer.configure(check=False)
    assert failed.returncode != 0
    assert "qola develop lib` leaves 3rdparty/lib" in flat(failed.stdout + failed.stderr)
    assert procs.run("develop", "lib", "-m", str(te / "qola.toml")).returncode == 0
    said = f"developing at {fix[:7]}, 1 commit ahead of the pin"
    for _ in range(2):  # every configure says it: no stamp stands in for the line
        starts = consumer.python_starts()
        proc = consumer.configure()
        assert f"-- qola: lib 3rdparty/lib {te_pin(te)[:12]} {said}\n" in proc.stdout
        assert "at its pin" not in proc.stdout  # it is not
        assert consumer.python_starts() > starts
    built = consumer.build_()
    assert "my fix" in built.stdout
    assert head(lib(te)) == fix
    assert os.environ.get("QOLA_SOURCE_DIR_LIB") is None
    # Ending it re-runs the next build's configure, which refuses to lose the fix.
    assert procs.run("develop", "--end", "lib", "-m", str(te / "qola.toml")).returncode == 0
    ended = consumer.build_(check=False)
    assert ended.returncode != 0
    assert "would lose local work" in flat(ended.stdout + ended.stderr)
    assert head(lib(te)) == fix


def test_a_bump_of_a_dependency_being_developed_is_refused(te: Path, deep: Deep, run_qola):
    my_fix(te)
    assert run_qola("develop", "lib", cwd=te).exit_code == 0
    before = snapshot(te)
    res = run_qola("bump", "lib", "--to", deep.top_v2, cwd=te)
    assert res.exit_code == 2
    assert "qola: lib: it is being developed in this checkout (qola develop)" in res.stderr
    assert "end it first (qola develop --end lib), or pin what is there (qola freeze lib)" in (
        res.stderr
    )
    assert snapshot(te) == before


def test_develop_end_of_a_name_the_manifest_lost_removes_its_mark(te: Path, run_qola):
    stale = mark(te).parent / "gone"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_bytes(b"")
    assert "gone (not in the manifest)" in run_qola("develop", cwd=te).stdout
    res = run_qola("develop", "--end", "gone", cwd=te)
    assert res.exit_code == 0, res.stderr
    assert not stale.exists()
