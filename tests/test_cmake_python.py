"""Which Python qola_checkout() runs: the installation's that provided QoLAConfig.cmake.

A real virtual environment that is never activated holds qola as a wheel lays it
out (the package in site-packages, the CMake module as qola/cmake/, the `qola`
script); CMake finds the module with CMAKE_PREFIX_PATH=$(venv/bin/qola cmake-dir).
The first `python3` on PATH is a logging interpreter that cannot import qola, as
the system's Python of the field report could not: the configure must neither
use it nor start it. CMake 3.21 and the newest, Ninja and Makefiles.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import Upstream
from repos import head
from test_cmake import GENERATORS, REPO, _pypi_cmake, flat, manifest_text

FOUND_BY_PREFIX = """\
cmake_minimum_required(VERSION 3.21)
project(consumer LANGUAGES NONE)
find_package(QoLA CONFIG REQUIRED)
qola_checkout(MANIFEST qola.toml)
"""

INCLUDED = """\
cmake_minimum_required(VERSION 3.21)
project(consumer LANGUAGES NONE)
include("@MODULE@")
qola_checkout(MANIFEST qola.toml)
"""

# The modules qola imports that are not qola's own (pyproject.toml's dependencies).
DEPENDENCIES = ("click", "git", "gitdb", "smmap", "tomli_w", "tomli")


@dataclass(frozen=True)
class Installed:
    """A virtual environment with qola installed, never activated."""

    prefix: Path
    python: Path  # the interpreter the module must find: bin/python, which logs each start
    log: Path

    def starts(self) -> int:
        return len(self.log.read_text().splitlines()) if self.log.exists() else 0


def logging_interpreter(path: Path, log: Path, target: str) -> None:
    """An executable at path that notes each start in log, then runs target."""
    path.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{target}" "$@"\n')
    path.chmod(0o755)


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """qola installed in a virtual environment as its wheel lays it out; its dependencies
    are this interpreter's (a .pth file), so nothing is downloaded."""
    return make_installed(tmp_path_factory.mktemp("installed") / "venv")


def make_installed(prefix: Path, record: dict[str, object] | None = None) -> Installed:
    """The installed fixture's environment, at prefix; with pip's record of where qola came
    from (direct_url.json in its dist-info) when one is given."""
    venv.create(prefix, with_pip=False)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = prefix / "lib" / version / "site-packages"
    shutil.copytree(REPO / "qola", site / "qola", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "qola" / "cmake").mkdir()
    for module in (REPO / "cmake").glob("*.cmake"):
        shutil.copy2(module, site / "qola" / "cmake")
    folders = set()
    for name in DEPENDENCIES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            folders.add(str(Path(spec.origin).parent.parent))
    (site / "qola-dependencies.pth").write_text("\n".join(sorted(folders)) + "\n")
    if record is not None:
        info = site / "qola-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: qola\nVersion: 0.1\n")
        (info / "direct_url.json").write_text(json.dumps(record))
    real = prefix / "bin" / version  # the venv's own interpreter (a link to the base one)
    script = prefix / "bin" / "qola"
    script.write_text(f"#!{real}\nfrom qola.noop import main\nmain()\n")
    script.chmod(0o755)
    log = prefix.parent / "venv-python-starts.log"
    python = prefix / "bin" / "python"
    python.unlink()
    logging_interpreter(python, log, str(real))
    return Installed(prefix, python, log)


@pytest.fixture(scope="session")
def no_qola_python(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A folder for the front of PATH whose python3 (and python, python3.X) logs each start
    and cannot import qola; and its log."""
    base = tmp_path_factory.mktemp("no-qola")
    venv.create(base / "bare", with_pip=False)
    folder = base / "bin"
    folder.mkdir()
    log = base / "starts.log"
    names = ["python", "python3", *(f"python3.{minor}" for minor in range(8, 15))]
    for name in names:
        logging_interpreter(folder / name, log, str(base / "bare" / "bin" / "python"))
    return folder, log


@pytest.fixture(scope="session")
def cmake_newest() -> Path:
    return _pypi_cmake("newest")


def cmake_dir_of(installed: Installed) -> Path:
    proc = subprocess.run(
        [str(installed.prefix / "bin" / "qola"), "cmake-dir"],
        capture_output=True,
        text=True,
        check=True,
        env=clean_environment(),
    )
    return Path(proc.stdout.strip())


def clean_environment() -> dict[str, str]:
    """The tests' environment without what would pick or lend a Python: no active
    virtual environment, no PYTHONPATH to this checkout, no QOLA_PYTHON."""
    gone = ("PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "QOLA_PYTHON", "PYTHONHOME")
    return {k: v for k, v in os.environ.items() if k not in gone}


@dataclass
class Project:
    src: Path
    build: Path
    cmake: Path
    generator: str
    env: dict[str, str]

    @property
    def lib(self) -> Path:
        return self.src / "3rdparty" / "lib"

    def configure(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.cmake), "-S", str(self.src), "-B", str(self.build)]
        command += ["-G", self.generator, *args]
        proc = subprocess.run(command, capture_output=True, text=True, env=self.env, check=False)
        if check and proc.returncode != 0:
            raise AssertionError(f"configure failed:\n{proc.stdout}\n{proc.stderr}")
        return proc


def make_project(
    tmp_path: Path,
    upstream: Upstream,
    cmake: Path,
    generator: str,
    text: str,
    path_front: Path,
) -> Project:
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(
        text.replace("@MODULE@", (REPO / "cmake" / "QoLA.cmake").as_posix())
    )
    (src / "qola.toml").write_text(manifest_text(upstream.lib, upstream.lib_v1))
    env = clean_environment()
    env["PATH"] = f"{path_front}{os.pathsep}{env.get('PATH', '')}"
    return Project(src, tmp_path / "build", cmake, generator, env)


@pytest.mark.parametrize("version", ["3.21", "newest"])
@pytest.mark.parametrize("generator", GENERATORS, ids=["ninja", "make"])
def test_module_found_in_an_inactive_venv_runs_that_venvs_python_and_caches_it(
    version: str,
    generator: str,
    tmp_path: Path,
    upstream: Upstream,
    cmake_newest: Path,
    installed: Installed,
    no_qola_python: tuple[Path, Path],
) -> None:
    path_front, path_log = no_qola_python
    project = make_project(
        tmp_path, upstream, _pypi_cmake(version), generator, FOUND_BY_PREFIX, path_front
    )
    before, path_before = installed.starts(), log_lines(path_log)

    first = project.configure(f"-DCMAKE_PREFIX_PATH={cmake_dir_of(installed)}")

    assert head(project.lib) == upstream.lib_v1
    assert installed.starts() > before
    module_dir = installed.prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    assert (
        f"-- qola: Python {installed.python} (the interpreter of the installation that "
        f"provided {module_dir}/site-packages/qola/cmake; -DQOLA_PYTHON=... chooses another)"
    ) in first.stdout
    starts = installed.starts()

    again = project.configure()

    assert installed.starts() == starts  # the stamp held: no interpreter started at all
    assert log_lines(path_log) == path_before  # and the one on PATH was never asked
    assert "-- qola: Python" not in again.stdout  # found once, kept in the cache
    cache = (project.build / "CMakeCache.txt").read_text()
    assert f"_QOLA_PYTHON_FOUND:INTERNAL={installed.python}\n" in cache


def log_lines(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_wrong_interpreter_error_names_the_one_that_has_qola(
    tmp_path: Path,
    upstream: Upstream,
    cmake_newest: Path,
    installed: Installed,
    no_qola_python: tuple[Path, Path],
) -> None:
    path_front, _ = no_qola_python
    bare_python = path_front.parent / "bare" / "bin" / "python"
    project = make_project(tmp_path, upstream, cmake_newest, "Ninja", FOUND_BY_PREFIX, path_front)

    proc = project.configure(
        f"-DCMAKE_PREFIX_PATH={cmake_dir_of(installed)}",
        f"-DQOLA_PYTHON={bare_python}",
        check=False,
    )

    assert proc.returncode != 0
    message = flat(proc.stderr)
    assert f"qola: {bare_python}: cannot import qola:" in message
    assert f"qola is installed for {installed.python}, whose installation provided " in message
    lines = [line.strip() for line in proc.stderr.splitlines()]
    assert f'cmake -DQOLA_PYTHON="{installed.python}" "{project.build}"' in lines
    assert "Or install qola for that interpreter, from a checkout of qola or its git URL (qola " \
        "is not on PyPI):" in message
    assert f'"{bare_python}" -m pip install /path/to/qola' in lines
    assert f'"{bare_python}" -m pip install "git+<qola\'s repository URL>"' in lines
    assert not project.lib.exists()


def test_wrong_interpreter_error_installs_qola_from_where_pip_got_it(
    tmp_path: Path,
    upstream: Upstream,
    cmake_newest: Path,
    no_qola_python: tuple[Path, Path],
) -> None:
    """pip recorded the git URL qola was installed from (direct_url.json): the hint says
    to install it from there, never by a PyPI name that is not qola's."""
    record = {"url": "https://example.invalid/qola.git",
              "vcs_info": {"vcs": "git", "commit_id": "0" * 40}}  # fmt: skip
    from_git = make_installed(tmp_path / "venv", record)
    path_front, _ = no_qola_python
    bare_python = path_front.parent / "bare" / "bin" / "python"
    project = make_project(tmp_path, upstream, cmake_newest, "Ninja", FOUND_BY_PREFIX, path_front)

    proc = project.configure(
        f"-DCMAKE_PREFIX_PATH={cmake_dir_of(from_git)}",
        f"-DQOLA_PYTHON={bare_python}",
        check=False,
    )

    assert proc.returncode != 0
    assert "Or install qola for that interpreter from where this one came from:" in flat(
        proc.stderr
    )
    lines = [line.strip() for line in proc.stderr.splitlines()]
    assert f'"{bare_python}" -m pip install "git+https://example.invalid/qola.git"' in lines
    assert not project.lib.exists()


def test_active_venv_is_the_interpreter_when_the_module_is_a_source_tree(
    tmp_path: Path,
    upstream: Upstream,
    cmake_newest: Path,
    installed: Installed,
    no_qola_python: tuple[Path, Path],
) -> None:
    path_front, path_log = no_qola_python
    project = make_project(tmp_path, upstream, cmake_newest, "Ninja", INCLUDED, path_front)
    project.env["VIRTUAL_ENV"] = str(installed.prefix)
    before, path_before = installed.starts(), log_lines(path_log)

    proc = project.configure()

    assert head(project.lib) == upstream.lib_v1
    assert installed.starts() > before
    assert log_lines(path_log) == path_before
    assert (
        f"-- qola: Python {installed.python} (the active virtual environment, VIRTUAL_ENV; "
        in proc.stdout
    )


def test_python_executable_wins_over_the_active_venv_and_qola_python_over_both(
    tmp_path: Path,
    upstream: Upstream,
    cmake_newest: Path,
    installed: Installed,
    no_qola_python: tuple[Path, Path],
) -> None:
    path_front, path_log = no_qola_python
    project = make_project(tmp_path, upstream, cmake_newest, "Ninja", INCLUDED, path_front)
    project.env["VIRTUAL_ENV"] = str(path_front.parent / "bare")  # cannot import qola's needs
    before = installed.starts()

    proc = project.configure(f"-DPython_EXECUTABLE={installed.python}")

    assert installed.starts() > before
    assert f"-- qola: Python {installed.python} (Python_EXECUTABLE; " in proc.stdout
    path_before = log_lines(path_log)
    project.configure(f"-DQOLA_PYTHON={path_front / 'python3'}", check=False)
    assert log_lines(path_log) > path_before  # the setting is used as it is
