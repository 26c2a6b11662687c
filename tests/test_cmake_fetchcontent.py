"""The FetchContent route: FetchContent_MakeAvailable(qola) provides qola_checkout(), and
qola runs from the fetched source tree (real CMake, a local GIT_REPOSITORY, no network).

The fetched qola is this checkout as it is now, committed to a throwaway repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from conftest import Upstream
from repos import git, head, snapshot
from test_cmake import GENERATORS, REPO, _pypi_cmake, flat, manifest_text
from test_requirements import words

from qola.base.requirements import needed

PROJECT = """\
cmake_minimum_required(VERSION 3.21)
project(consumer LANGUAGES NONE)
include(FetchContent)
FetchContent_Declare(qola GIT_REPOSITORY "@REPOSITORY@" GIT_TAG @COMMIT@)
FetchContent_MakeAvailable(qola)
qola_checkout(MANIFEST qola.toml)
file(WRITE "${CMAKE_BINARY_DIR}/exported.txt" "${QOLA_LIB_SHA} ${QOLA_LIB_SOURCE_DIR}\\n")
"""


# What a fetched qola needs: its top-level CMakeLists.txt, the CMake module, the
# package, and pyproject.toml (by which the module knows a source tree).
FETCHED = ("CMakeLists.txt", "pyproject.toml", "LICENSE", "cmake", "qola")


@pytest.fixture(scope="session")
def qola_repository(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git repository holding this checkout's files as they are now (a git checkout
    or an unpacked sdist alike); its commit."""
    repo = tmp_path_factory.mktemp("qola-repository") / "qola"
    repo.mkdir()
    for name in FETCHED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, repo / name)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "qola")
    return repo, git(repo, "rev-parse", "HEAD")


def make_project(tmp_path: Path, upstream: Upstream, repository: tuple[Path, str]) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    url, commit = repository
    text = PROJECT.replace("@REPOSITORY@", url.as_posix()).replace("@COMMIT@", commit)
    (src / "CMakeLists.txt").write_text(text)
    (src / "qola.toml").write_text(manifest_text(upstream.lib, upstream.lib_v1))
    return src


def configure(cmake: Path, src: Path, generator: str, python: Path, *args: str):
    # Nothing lends this checkout's package: the interpreter has qola's dependencies,
    # the fetched tree has qola.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "QOLA_PYTHON")}
    return subprocess.run(
        [str(cmake), "-S", str(src), "-B", str(src.parent / "build"), "-G", generator,
         f"-DQOLA_PYTHON={python}", *args],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("version", ["3.21", "newest"])
@pytest.mark.parametrize("generator", GENERATORS, ids=["ninja", "make"])
def test_fetchcontent_makes_qola_checkout_available_and_runs_the_fetched_qola(
    version: str,
    generator: str,
    tmp_path: Path,
    upstream: Upstream,
    qola_repository: tuple[Path, str],
) -> None:
    src = make_project(tmp_path, upstream, qola_repository)

    proc = configure(_pypi_cmake(version), src, generator, Path(sys.executable))

    assert proc.returncode == 0, proc.stdout + proc.stderr
    lib = src / "3rdparty" / "lib"
    assert head(lib) == upstream.lib_v1
    build = tmp_path / "build"
    assert (build / "exported.txt").read_text() == f"{upstream.lib_v1} {lib.as_posix()}\n"
    fetched = build / "_deps" / "qola-src"
    # The package that ran is the fetched one (its version file heads the stamp).
    [results] = (build / "qola").glob("qola-*.cmake")
    assert f"{fetched.as_posix()}/qola/__init__.py" in results.read_text()

    again = configure(_pypi_cmake(version), src, generator, Path(sys.executable))
    assert "unchanged since the last configure" in again.stdout


def test_fetchcontent_with_an_interpreter_lacking_qolas_dependencies_says_what_to_run(
    tmp_path: Path, upstream: Upstream, qola_repository: tuple[Path, str]
) -> None:
    bare = tmp_path / "bare"
    venv.create(bare, with_pip=False)
    python = bare / "bin" / "python"
    src = make_project(tmp_path, upstream, qola_repository)

    before = snapshot(src)

    proc = configure(_pypi_cmake("newest"), src, "Ninja", python)

    assert proc.returncode != 0
    fetched = tmp_path / "build" / "_deps" / "qola-src"
    message = flat(proc.stderr)
    needs = [requirement for _, requirement in needed()]
    names = words([requirement.partition(">")[0] for requirement in needs])
    assert (
        f"qola: {python} cannot run qola from {fetched}: {names} are not installed for it "
        f"(qola needs {names})."
    ) in message
    lines = [line.strip() for line in proc.stderr.splitlines()]
    assert f'"{python}" -m pip install ' + " ".join(f'"{r}"' for r in needs) in lines
    venv_python = tmp_path / "build" / "qola-venv" / "bin" / "python"
    assert f'"{python}" -m venv "{venv_python.parent.parent}"' in lines
    assert f'"{venv_python}" -m pip install "{fetched}"' in lines
    assert f'cmake -DQOLA_PYTHON="{venv_python}" "{tmp_path / "build"}"' in lines
    assert "install git" not in message and "exit 2" not in message
    assert snapshot(src) == before
