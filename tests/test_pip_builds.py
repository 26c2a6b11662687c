"""A project whose wheel pip builds, and whose CMake calls find_package(QoLA) and
qola_checkout(): built with `pip wheel .`, offline, by scikit-build-core and by
setuptools running CMake itself, both with pip's build isolation (qola named in
build-system.requires by a direct reference to a wheel, since it is not on PyPI) and
without it (qola installed in the virtual environment that runs pip).

pip builds qola's wheel from this checkout, then everything else comes from the
wheelhouse .ci/test fills (no index). The CMake is the newest from PyPI (.test-cmake/),
first on PATH, where scikit-build-core looks for it, and no PATH entry leads
find_package to another qola than the one pip installed.
"""

from __future__ import annotations

import os
import re
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import Upstream
from repos import head
from test_cmake import _pypi_cmake, manifest_text
from test_cmake_install import without_other_qolas
from venvs import WHEELHOUSE, clean_environment, dependency_links, make_venv, pip, source_copy

# What the wheelhouse must hold besides setuptools: what the isolated builds install
# (scikit-build-core, and qola's own dependencies, which pip installs with its wheel).
NEEDED = ("scikit_build_core", "click", "gitpython", "gitdb", "smmap", "tomli_w")

CMAKELISTS = """\
cmake_minimum_required(VERSION 3.21)
project(consumer LANGUAGES NONE)
find_package(QoLA 0.1 CONFIG REQUIRED)
qola_checkout(MANIFEST ${PROJECT_SOURCE_DIR}/qola.toml)
message(STATUS "lib is at ${QOLA_LIB_SHA}")
message(STATUS "QoLA_DIR is ${QoLA_DIR}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/pins.txt "lib ${QOLA_LIB_SHA}\\n")
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/pins.txt DESTINATION @DESTINATION@)
"""

SCIKIT_BUILD_CORE = """\
[build-system]
requires = [@REQUIRES@]
build-backend = "scikit_build_core.build"

[project]
name = "consumer"
version = "1.0"
"""

# setuptools running CMake from a command of its own, as such projects do: configure with
# the build's interpreter, build, install into the package's folder in the wheel.
SETUP_PY = """\
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class cmake_build_py(build_py):
    def run(self):
        super().run()
        source = Path(__file__).resolve().parent
        build = source / "build" / "cmake"
        target = Path(self.build_lib).resolve() / "consumer"
        subprocess.run(["cmake", "-S", str(source), "-B", str(build), "-G", "Ninja",
                        f"-DPython_EXECUTABLE={sys.executable}"], check=True)
        subprocess.run(["cmake", "--build", str(build)], check=True)
        subprocess.run(["cmake", "--install", str(build), "--prefix", str(target)],
                       check=True)


setup(cmdclass={"build_py": cmake_build_py})
"""

SETUPTOOLS = """\
[build-system]
requires = [@REQUIRES@]
build-backend = "setuptools.build_meta"

[project]
name = "consumer"
version = "1.0"

[tool.setuptools]
packages = ["consumer"]
"""


def full_wheelhouse() -> Path:
    names = {path.name.split("-")[0].lower() for path in WHEELHOUSE.glob("*.whl")}
    missing = [name for name in ("setuptools", *NEEDED) if name not in names]
    if missing:
        pytest.fail(
            f"{WHEELHOUSE} holds no wheel of {', '.join(missing)}: run the README's test "
            f"command, which fills it with pip download --dest {WHEELHOUSE}"
        )
    return WHEELHOUSE


@dataclass(frozen=True)
class Qola:
    wheel: Path  # qola's, built from this checkout
    python: Path  # a venv's, with that wheel and scikit-build-core installed
    bare: Path  # a venv's, with pip alone


@pytest.fixture(scope="module")
def qola(tmp_path_factory: pytest.TempPathFactory) -> Qola:
    full_wheelhouse()
    base = tmp_path_factory.mktemp("qola")
    source = source_copy(base / "source")
    python = make_venv(base / "venv", dependency_links(base / "packages"), with_pip=True)
    pip(python, "wheel", "--no-deps", "--wheel-dir", str(base / "dist"), str(source))
    [wheel] = (base / "dist").glob("qola-*.whl")
    pip(python, "install", "--no-deps", str(wheel))
    pip(python, "install", "scikit-build-core>=0.10", "setuptools>=77")
    return Qola(wheel, python, make_venv(base / "bare", None, with_pip=True))


def make_consumer(folder: Path, upstream: Upstream, backend: str, requires: list[str]) -> Path:
    folder.mkdir()
    quoted = ", ".join(f'"{requirement}"' for requirement in requires)
    if backend == "scikit-build-core":
        (folder / "pyproject.toml").write_text(SCIKIT_BUILD_CORE.replace("@REQUIRES@", quoted))
        destination = "consumer"
    else:
        (folder / "pyproject.toml").write_text(SETUPTOOLS.replace("@REQUIRES@", quoted))
        (folder / "setup.py").write_text(SETUP_PY)
        (folder / "consumer").mkdir()
        (folder / "consumer" / "__init__.py").write_text("")
        destination = "."
    (folder / "CMakeLists.txt").write_text(CMAKELISTS.replace("@DESTINATION@", destination))
    (folder / "qola.toml").write_text(manifest_text(upstream.lib, upstream.lib_v1))
    return folder


def pip_wheel(python: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`pip wheel -v .` in project, offline: the wheelhouse alone, the newest CMake first on
    PATH, python's virtual environment active."""
    env = without_other_qolas(clean_environment())
    cmake = _pypi_cmake("newest").parent
    env["PATH"] = os.pathsep.join([str(python.parent), str(cmake), env["PATH"]])
    env["VIRTUAL_ENV"] = str(python.parent.parent)
    command = [str(python), "-m", "pip", "wheel", "-v", "--no-deps", "--no-cache-dir",
               "--no-index", "--find-links", str(full_wheelhouse()),
               "--wheel-dir", str(project / "dist"), *args, "."]  # fmt: skip
    proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=project,
                          check=False)  # fmt: skip
    assert proc.returncode == 0, f"{' '.join(command)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def assert_built_at_the_pin(project: Path, proc: subprocess.CompletedProcess[str],
                            pin: str, module: str) -> None:  # fmt: skip
    """The wheel is there and records the pin; CMake said it, and found the module in
    a folder that matches the pattern module; the checkout is at the pin."""
    [wheel] = (project / "dist").glob("consumer-1.0-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read("consumer/pins.txt").decode() == f"lib {pin}\n"
    output = proc.stdout + proc.stderr
    assert re.search(rf"-- lib is at {pin}\n", output), output
    assert re.search(rf"-- QoLA_DIR is {module}\n", output), output
    assert head(project / "3rdparty" / "lib") == pin


BACKENDS = ["scikit-build-core", "setuptools"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_pip_wheel_with_build_isolation_and_qola_by_direct_reference(
    tmp_path: Path, upstream: Upstream, qola: Qola, backend: str
) -> None:
    """build-system.requires names qola by a direct reference to its wheel (`qola @
    file:///…`): pip's isolated build environment installs it and its dependencies from
    the wheelhouse, and find_package(QoLA) finds it there."""
    base = "scikit-build-core>=0.10" if backend == "scikit-build-core" else "setuptools>=77"
    project = make_consumer(tmp_path / "consumer", upstream, backend,
                            [base, f"qola @ {qola.wheel.as_uri()}"])  # fmt: skip
    proc = pip_wheel(qola.bare, project)
    # The wheel's, as pip installed it in the build environment it made: its
    # site-packages' qola/cmake (scikit-build-core puts site-packages in CMAKE_PREFIX_PATH)
    # or its share/cmake/QoLA (its bin is first on PATH).
    installed = r"/\S*/pip-build-env-[^/\s]+/overlay/\S*(qola/cmake|share/cmake/QoLA)"
    assert_built_at_the_pin(project, proc, upstream.lib_v1, installed)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pip_wheel_without_build_isolation_uses_the_venvs_qola(
    tmp_path: Path, upstream: Upstream, qola: Qola, backend: str
) -> None:
    """--no-build-isolation: the build runs in the venv that runs pip, where qola (and
    the backend) are installed. The pyproject.toml is the one of the isolated build."""
    base = "scikit-build-core>=0.10" if backend == "scikit-build-core" else "setuptools>=77"
    project = make_consumer(tmp_path / "consumer", upstream, backend,
                            [base, f"qola @ {qola.wheel.as_uri()}"])  # fmt: skip
    proc = pip_wheel(qola.python, project, "--no-build-isolation")
    venv = re.escape(str(qola.python.parent.parent))
    installed = rf"{venv}/(lib/python[\d.]+/site-packages/qola/cmake|share/cmake/QoLA)"
    assert_built_at_the_pin(project, proc, upstream.lib_v1, installed)
