"""Each way of installing qola, made by pip, then a real configure: the wheel, an editable
install (`pip install -e`), with the virtual environment active or not, through
`qola cmake-dir`, find_package() alone, or a CMakePresets.json; and the interpreters that
cannot run qola (one without GitPython, one without click), each named with what it lacks.

pip builds qola offline from the wheelhouse .ci/test fills; each venv has qola's
dependencies as links to this interpreter's (tests/venvs.py). The first python3 on PATH is
a logging interpreter that cannot import qola: a configure that does not need it must not
start it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import Upstream
from repos import head, snapshot
from test_cmake import REPO, _pypi_cmake, flat, manifest_text
from test_cmake_python import log_lines, logging_interpreter
from test_requirements import words
from venvs import VERSION, clean_environment, dependency_links, make_venv, pip, source_copy

from qola.base.requirements import needed

FOUND = """\
cmake_minimum_required(VERSION 3.21)
project(consumer LANGUAGES NONE)
find_package(QoLA 0.1 CONFIG REQUIRED)
qola_checkout(MANIFEST qola.toml)
"""

INCLUDED = """\
cmake_minimum_required(VERSION 3.21)
project(consumer LANGUAGES NONE)
include("@MODULE@")
qola_checkout(MANIFEST qola.toml)
"""


@dataclass(frozen=True)
class Installed:
    """qola installed by pip into a virtual environment that is never activated."""

    prefix: Path
    source: Path  # the folder pip installed it from (an editable install's checkout)

    @property
    def python(self) -> Path:
        return self.prefix / "bin" / "python"

    @property
    def share(self) -> Path:
        return self.prefix / "share" / "cmake" / "QoLA"

    def cmake_dir(self) -> Path:
        proc = subprocess.run([str(self.prefix / "bin" / "qola"), "cmake-dir"],
                              capture_output=True, text=True, env=clean_environment(),
                              check=True, cwd="/")  # fmt: skip
        return Path(proc.stdout.strip())

    def activated(self, env: dict[str, str]) -> dict[str, str]:
        """env as `. venv/bin/activate` leaves it."""
        return env | {"VIRTUAL_ENV": str(self.prefix),
                      "PATH": f"{self.prefix / 'bin'}{os.pathsep}{env['PATH']}"}  # fmt: skip


def _install(base: Path, *, editable: bool) -> Installed:
    # A checkout whose path holds a space and a `%`: pip records it percent-encoded.
    source = source_copy(base / "qola 100%")
    packages = dependency_links(base / "packages")
    python = make_venv(base / "venv", packages, with_pip=True)
    if editable:
        pip(python, "install", "--no-deps", "-e", str(source))
    else:
        pip(python, "wheel", "--no-deps", "--wheel-dir", str(base / "dist"), str(source))
        [wheel] = (base / "dist").glob("qola-*.whl")
        pip(python, "install", "--no-deps", str(wheel))
    return Installed(base / "venv", source)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    return _install(tmp_path_factory.mktemp("wheel"), editable=False)


@pytest.fixture(scope="module")
def editable(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    return _install(tmp_path_factory.mktemp("editable"), editable=True)


@pytest.fixture(scope="module")
def without_gitpython(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with click and tomli-w, not GitPython: neither qola nor git can run."""
    base = tmp_path_factory.mktemp("without-gitpython")
    links = dependency_links(base / "packages", leave_out=("git", "gitdb", "smmap"))
    return make_venv(base / "venv", links)


@pytest.fixture(scope="module")
def system_python(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A folder for the front of PATH whose python3 (and python, python3.X) is the base
    interpreter, no virtual environment's, started without its site-packages: a system
    Python without click or any of qola's packages. Each start is logged."""
    base = tmp_path_factory.mktemp("system")
    folder = base / "bin"
    folder.mkdir()
    log = base / "starts.log"
    real = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    for name in ["python", "python3"]:  # the names find_package(Python3) takes last
        path = folder / name
        path.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" -S "$@"\n')
        path.chmod(0o755)
    return folder, log


@pytest.fixture(scope="module")
def no_qola_on_path(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A folder for the front of PATH whose pythons log each start and cannot import qola."""
    base = tmp_path_factory.mktemp("no-qola")
    bare = make_venv(base / "bare", None)
    folder = base / "bin"
    folder.mkdir()
    log = base / "starts.log"
    for name in ["python", "python3", *(f"python3.{minor}" for minor in range(8, 15))]:
        logging_interpreter(folder / name, log, str(bare))
    return folder, log


@dataclass
class Project:
    src: Path
    build: Path
    cmake: Path
    env: dict[str, str]

    @property
    def lib(self) -> Path:
        return self.src / "3rdparty" / "lib"

    def configure(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.cmake), "-S", str(self.src), "-B", str(self.build), "-G", "Ninja"]
        return self.run([*command, *args], check)

    def run(self, command: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(command, capture_output=True, text=True, env=self.env,
                              cwd=self.src, check=False)  # fmt: skip
        if check and proc.returncode != 0:
            raise AssertionError(f"configure failed:\n{proc.stdout}\n{proc.stderr}")
        return proc


def make_project(tmp_path: Path, upstream: Upstream, text: str, path_front: Path,
                 version: str = "newest") -> Project:  # fmt: skip
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(
        text.replace("@MODULE@", (REPO / "cmake" / "QoLA.cmake").as_posix())
    )
    (src / "qola.toml").write_text(manifest_text(upstream.lib, upstream.lib_v1))
    env = clean_environment()
    env["PATH"] = f"{path_front}{os.pathsep}{env.get('PATH', '')}"
    return Project(src, tmp_path / "build", _pypi_cmake(version), env)


def without_other_qolas(env: dict[str, str]) -> dict[str, str]:
    """env with no PATH entry that leads find_package to a qola (the tests' own venv may
    be one): what the test installed is all there is."""
    path = [entry for entry in env["PATH"].split(os.pathsep)
            if not (Path(entry).parent / "share" / "cmake" / "QoLA").exists()]  # fmt: skip
    return env | {"PATH": os.pathsep.join(path)}


def python_line(installed: Installed) -> str:
    return (f"-- qola: Python {installed.python} (the interpreter of the installation that "
            f"provided {installed.share}; -DQOLA_PYTHON=... chooses another)")  # fmt: skip


# --- an editable install ------------------------------------------------------


def test_the_files_that_load_a_module_file_of_their_own_name_are_one_text() -> None:
    """share/cmake/QoLA/QoLA.cmake and QoLAProvider.cmake each include the installation's
    file of their own name: one text, so that neither drifts."""
    share = REPO / "share" / "cmake" / "QoLA"
    assert (share / "QoLA.cmake").read_text() == (share / "QoLAProvider.cmake").read_text()



def test_an_editable_install_gets_share_cmake_qola_as_a_wheel_does(
    editable: Installed, wheel: Installed
) -> None:
    """pip installs <prefix>/share/cmake/QoLA/ for both (setuptools leaves it out of an
    editable wheel; qola's backend adds it), listed in RECORD so that uninstall removes it;
    `qola cmake-dir` names it."""
    for installed in (editable, wheel):
        names = sorted(p.name for p in installed.share.iterdir())
        assert names == sorted(p.name for p in (REPO / "share" / "cmake" / "QoLA").iterdir())
        [record] = (installed.prefix / "lib" / VERSION / "site-packages").glob(
            "qola-*.dist-info/RECORD"
        )
        listed = record.read_text()
        assert all(f"../../../share/cmake/QoLA/{name}," in listed for name in names)
        assert installed.cmake_dir() == installed.share


@pytest.mark.parametrize("version", ["3.21", "newest"])
def test_an_editable_install_runs_its_own_python_with_the_venv_inactive(
    version: str, tmp_path: Path, upstream: Upstream, editable: Installed,
    no_qola_on_path: tuple[Path, Path],
) -> None:  # fmt: skip
    """`cmake -DCMAKE_PREFIX_PATH="$(venv/bin/qola cmake-dir)"`: the checkout's module and the
    venv's interpreter, not the first python3 on PATH (which lacks GitPython)."""
    path_front, log = no_qola_on_path
    project = make_project(tmp_path, upstream, FOUND, path_front, version)
    starts = log_lines(log)

    first = project.configure(f"-DCMAKE_PREFIX_PATH={editable.cmake_dir()}")

    assert head(project.lib) == upstream.lib_v1
    assert python_line(editable) in first.stdout
    cache = (project.build / "CMakeCache.txt").read_text()
    assert f"QoLA_DIR:PATH={editable.share}\n" in cache
    # The module is the checkout's, not a copy: an edit of it takes effect at once.
    [results] = (project.build / "qola").glob("qola-*.cmake")
    assert f"{editable.source.as_posix()}/qola/__init__.py" in results.read_text()
    again = project.configure()
    assert "unchanged since the last configure" in again.stdout
    assert "-- qola: Python" not in again.stdout
    assert log_lines(log) == starts


def test_an_editable_install_whose_checkout_moved_says_so_where_find_package_looks(
    tmp_path: Path, upstream: Upstream, no_qola_on_path: tuple[Path, Path]
) -> None:
    installed = _install(tmp_path / "install", editable=True)
    installed.source.rename(tmp_path / "elsewhere")
    path_front, _ = no_qola_on_path
    project = make_project(tmp_path, upstream, FOUND, path_front)
    project.env = installed.activated(without_other_qolas(project.env))
    before = snapshot(project.src)

    proc = project.configure(check=False)

    assert proc.returncode == 1
    message = flat(proc.stderr)
    assert f"{installed.share}/QoLAConfig.cmake, version: unknown (" in message
    assert "is an editable install of file://" in message
    assert ("which holds no cmake/QoLA.cmake (a checkout moved or deleted?): install qola "
            "again)") in message  # fmt: skip
    assert snapshot(project.src) == before


# --- find_package() with no CMAKE_PREFIX_PATH -----------------------------------


@pytest.mark.parametrize("kind", ["wheel", "editable"])
def test_find_package_finds_qola_in_the_active_venv_with_no_prefix_path(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path, upstream: Upstream,
    no_qola_on_path: tuple[Path, Path],
) -> None:  # fmt: skip
    installed: Installed = request.getfixturevalue(kind)
    path_front, log = no_qola_on_path
    project = make_project(tmp_path, upstream, FOUND, path_front)
    project.env = installed.activated(project.env)
    starts = log_lines(log)

    proc = project.configure()

    assert head(project.lib) == upstream.lib_v1
    assert python_line(installed) in proc.stdout
    assert log_lines(log) == starts


def test_without_the_venv_find_package_fails_and_qola_dir_of_qola_cmake_dir_finds_it(
    tmp_path: Path, upstream: Upstream, wheel: Installed, no_qola_on_path: tuple[Path, Path]
) -> None:
    """CMake's own error names QoLA_DIR; docs/cmake.md says to set it (or CMAKE_PREFIX_PATH)
    to what `qola cmake-dir` prints."""
    path_front, _ = no_qola_on_path
    project = make_project(tmp_path, upstream, FOUND, path_front)
    project.env = without_other_qolas(project.env)

    failed = project.configure(check=False)

    assert failed.returncode != 0
    assert 'Could not find a package configuration file provided by "QoLA"' in flat(
        failed.stderr
    )
    assert not project.lib.exists()
    proc = project.configure(f"-DQoLA_DIR={wheel.cmake_dir()}")
    assert head(project.lib) == upstream.lib_v1
    assert python_line(wheel) in proc.stdout


def test_a_project_can_say_in_its_own_words_how_to_find_qola(
    tmp_path: Path, upstream: Upstream, no_qola_on_path: tuple[Path, Path]
) -> None:
    """docs/cmake.md's find_package(QoLA) without REQUIRED, and the project's message."""
    path_front, _ = no_qola_on_path
    text = (REPO / "docs" / "cmake.md").read_text()
    snippet = text.split("in its own words:\n\n```cmake\n", 1)[1].split("```", 1)[0]
    project = make_project(tmp_path, upstream, FOUND.replace(
        "find_package(QoLA 0.1 CONFIG REQUIRED)\n", snippet), path_front)  # fmt: skip
    project.env = without_other_qolas(project.env)

    proc = project.configure(check=False)

    assert proc.returncode == 1
    assert ('qola not found: activate the virtual environment qola is installed in, or '
            'configure with -DQoLA_DIR="$(qola cmake-dir)"') in flat(proc.stderr)  # fmt: skip
    assert not project.lib.exists()


def test_the_module_included_from_qola_cmake_dir_runs_the_installations_python(
    tmp_path: Path, upstream: Upstream, wheel: Installed, no_qola_on_path: tuple[Path, Path]
) -> None:
    """include("$(qola cmake-dir)/QoLA.cmake"), the environment not active."""
    path_front, log = no_qola_on_path
    text = INCLUDED.replace("@MODULE@", (wheel.cmake_dir() / "QoLA.cmake").as_posix())
    project = make_project(tmp_path, upstream, text, path_front)
    starts = log_lines(log)

    proc = project.configure()

    assert head(project.lib) == upstream.lib_v1
    assert python_line(wheel) in proc.stdout
    assert log_lines(log) == starts


# --- CMakePresets.json -----------------------------------------------------------

PRESETS = {
    "version": 3,
    "configurePresets": [
        {
            "name": "default",
            "generator": "Ninja",
            "binaryDir": "${sourceDir}/build",
            "cacheVariables": {"CMAKE_PREFIX_PATH": "${sourceDir}/.venv"},
        },
        {
            "name": "active-venv",
            "inherits": "default",
            "cacheVariables": {"CMAKE_PREFIX_PATH": "$penv{VIRTUAL_ENV}"},
        },
    ],
}


@pytest.mark.parametrize("version", ["3.21", "newest"])
def test_a_preset_of_the_projects_venv_needs_no_site_packages_path(
    version: str, tmp_path: Path, upstream: Upstream, wheel: Installed,
    no_qola_on_path: tuple[Path, Path],
) -> None:  # fmt: skip
    """The CMakePresets.json of docs/cmake.md: the project's own .venv, not active."""
    path_front, _ = no_qola_on_path
    project = make_project(tmp_path, upstream, FOUND, path_front, version)
    (project.src / ".venv").symlink_to(wheel.prefix)
    (project.src / "CMakePresets.json").write_text(json.dumps(PRESETS, indent=2))

    proc = project.run([str(project.cmake), "--preset", "default"])

    assert head(project.lib) == upstream.lib_v1
    venv = project.src / ".venv"
    assert f"-- qola: Python {venv}/bin/python (the interpreter of the installation that " \
        f"provided {venv}/share/cmake/QoLA;" in proc.stdout  # fmt: skip


def test_a_preset_of_whichever_venv_is_active(
    tmp_path: Path, upstream: Upstream, editable: Installed, no_qola_on_path: tuple[Path, Path]
) -> None:
    """$penv{VIRTUAL_ENV}: the venv named by the environment, even when PATH does not lead
    to it (an IDE that starts CMake with the environment but its own PATH)."""
    path_front, _ = no_qola_on_path
    project = make_project(tmp_path, upstream, FOUND, path_front)
    (project.src / "CMakePresets.json").write_text(json.dumps(PRESETS, indent=2))
    project.env["VIRTUAL_ENV"] = str(editable.prefix)

    proc = project.run([str(project.cmake), "--preset", "active-venv"])

    assert head(project.lib) == upstream.lib_v1
    assert python_line(editable) in proc.stdout


# --- interpreters that cannot run qola ---------------------------------------------


def _names(requirements: list[str]) -> str:
    return words([r.partition(">")[0] for r in requirements])


def test_a_qola_python_without_gitpython_is_named_with_what_it_lacks(
    tmp_path: Path, upstream: Upstream, without_gitpython: Path,
    no_qola_on_path: tuple[Path, Path],
) -> None:  # fmt: skip
    """Not "install git 2.32", not "exit 2: the manifest is invalid": the interpreter, the
    package, the line that installs it. Before anything moves."""
    path_front, _ = no_qola_on_path
    project = make_project(tmp_path, upstream, INCLUDED, path_front)
    before = snapshot(project.src)

    proc = project.configure(f"-DQOLA_PYTHON={without_gitpython}", check=False)

    assert proc.returncode == 1
    message = flat(proc.stderr)
    everything = _names([r for _, r in needed()])
    assert (
        f"qola: {without_gitpython} cannot run qola from {REPO}: GitPython is not installed "
        f"for it (qola needs {everything})."
    ) in message
    lines = [line.strip() for line in proc.stderr.splitlines()]
    assert f'"{without_gitpython}" -m pip install "GitPython>=3.1.30"' in lines
    assert "or set QOLA_PYTHON to an interpreter that has it." in message
    assert "install git" not in message and "exit 2" not in message and "git:" not in message
    assert snapshot(project.src) == before


def test_a_system_python_without_click_is_named_with_what_it_lacks(
    tmp_path: Path, upstream: Upstream, system_python: tuple[Path, Path]
) -> None:
    """A qola checkout's module, no QOLA_PYTHON, no venv: find_package(Python3) finds the
    system's python3, which has none of qola's packages."""
    path_front, log = system_python
    project = make_project(tmp_path, upstream, INCLUDED, path_front)
    before = snapshot(project.src)

    proc = project.configure(check=False)

    assert proc.returncode == 1
    assert log_lines(log) > 0  # it was asked
    python = path_front / "python3"
    all_of_them = [r for _, r in needed()]
    message = flat(proc.stderr)
    assert (
        f"qola: {python} cannot run qola from {REPO}: {_names(all_of_them)} are not installed "
        f"for it (qola needs {_names(all_of_them)})."
    ) in message
    lines = [line.strip() for line in proc.stderr.splitlines()]
    assert f'"{python}" -m pip install ' + " ".join(f'"{r}"' for r in all_of_them) in lines
    venv_python = project.build / "qola-venv" / "bin" / "python"
    assert f'"{python}" -m venv "{venv_python.parent.parent}"' in lines
    assert f'"{venv_python}" -m pip install "{REPO}"' in lines
    assert f'cmake -DQOLA_PYTHON="{venv_python}" "{project.build}"' in lines
    assert snapshot(project.src) == before


def test_each_interpreter_looked_at_is_listed_when_none_can_run_qola(
    tmp_path: Path, upstream: Upstream, without_gitpython: Path,
    system_python: tuple[Path, Path],
) -> None:  # fmt: skip
    """Python_EXECUTABLE lacks GitPython, the system's python3 lacks everything: the first
    is the one the advice is for, and both are listed."""
    path_front, _ = system_python
    project = make_project(tmp_path, upstream, INCLUDED, path_front)
    before = snapshot(project.src)

    proc = project.configure(f"-DPython_EXECUTABLE={without_gitpython}", check=False)

    assert proc.returncode == 1
    message = flat(proc.stderr)
    assert (f"qola: {without_gitpython} cannot run qola from {REPO}: GitPython is not "
            "installed") in message  # fmt: skip
    lines = [line.strip() for line in proc.stderr.splitlines()]
    assert "The interpreters looked at, in order:" in lines
    assert (f"{without_gitpython} (Python_EXECUTABLE): GitPython is not installed for "
            "it") in lines  # fmt: skip
    assert f'"{without_gitpython}" -m pip install "GitPython>=3.1.30"' in lines
    python = path_front / "python3"
    all_of_them = _names([r for _, r in needed()])
    assert f"{python} (find_package(Python3)): {all_of_them} are not installed for it" in lines
    assert snapshot(project.src) == before


def test_an_interpreter_that_cannot_run_qola_is_passed_over_for_one_that_can(
    tmp_path: Path, upstream: Upstream, without_gitpython: Path, editable: Installed,
    no_qola_on_path: tuple[Path, Path],
) -> None:  # fmt: skip
    """Python_EXECUTABLE lacks GitPython; the active venv has everything: qola runs with the
    venv's, and the configure says which it passed over and why."""
    path_front, _ = no_qola_on_path
    project = make_project(tmp_path, upstream, INCLUDED, path_front)
    project.env["VIRTUAL_ENV"] = str(editable.prefix)

    proc = project.configure(f"-DPython_EXECUTABLE={without_gitpython}")

    assert head(project.lib) == upstream.lib_v1
    assert (
        f"-- qola: Python {editable.python} (the active virtual environment, VIRTUAL_ENV; not "
        f"{without_gitpython} (Python_EXECUTABLE): GitPython is not installed for it; "
        "-DQOLA_PYTHON=... chooses another)"
    ) in flat(proc.stdout)


def test_an_installation_without_gitpython_is_named_with_what_it_lacks(
    tmp_path: Path, upstream: Upstream, wheel: Installed, no_qola_on_path: tuple[Path, Path]
) -> None:
    """qola's wheel installed with --no-deps, GitPython never installed: the installation's
    own interpreter is the one named, with the package and the line; before anything moves."""
    links = dependency_links(tmp_path / "packages", leave_out=("git", "gitdb", "smmap"))
    python = make_venv(tmp_path / "venv", links, with_pip=True)
    [built] = (wheel.prefix.parent / "dist").glob("qola-*.whl")
    pip(python, "install", "--no-deps", str(built))
    installed = Installed(tmp_path / "venv", wheel.source)
    path_front, _ = no_qola_on_path
    project = make_project(tmp_path, upstream, FOUND, path_front)
    before = snapshot(project.src)

    # The prefix (`qola cmake-dir` would stop as the configure does, exit 5).
    proc = project.configure(f"-DCMAKE_PREFIX_PATH={installed.prefix}", check=False)

    assert proc.returncode == 1
    message = flat(proc.stderr)
    assert (f"qola: {installed.python} cannot run qola: GitPython is not installed for it "
            f"(qola needs {_names([r for _, r in needed()])}).") in message  # fmt: skip
    lines = [line.strip() for line in proc.stderr.splitlines()]
    assert f'"{installed.python}" -m pip install "GitPython>=3.1.30"' in lines
    assert "qola-venv" not in message  # qola is installed: only the package is missing
    assert snapshot(project.src) == before


def test_a_python_older_than_qola_supports_is_named_as_such(
    tmp_path: Path, upstream: Upstream, no_qola_on_path: tuple[Path, Path]
) -> None:
    """An interpreter that answers the question as a Python 3.9 does (the first lines it
    prints, and exit 5)."""
    old = tmp_path / "python3.9"
    old.write_text('#!/bin/sh\necho "version 3.9"\necho "managed 0"\nexit 5\n')
    old.chmod(0o755)
    path_front, _ = no_qola_on_path
    project = make_project(tmp_path, upstream, INCLUDED, path_front)
    before = snapshot(project.src)

    proc = project.configure(f"-DQOLA_PYTHON={old}", check=False)

    assert proc.returncode == 1
    assert f"qola: {old} is Python 3.9, and qola needs Python 3.10 or newer." in flat(proc.stderr)
    assert snapshot(project.src) == before
