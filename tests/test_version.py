"""qola has one version, `__version__` in qola/__init__.py: the package, the CLI and CMake's."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_cmake import _pypi_cmake

import qola

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent


def test_pyproject_takes_the_version_from_the_package() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())

    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "qola.__version__"}


def installed_layout(prefix: Path, init_text: str | None) -> Path:
    """An installed qola's files as CMake sees them: <prefix>/qola/cmake/*.cmake."""
    package = prefix / "qola"
    (package / "cmake").mkdir(parents=True)
    for module in (REPO / "cmake").glob("*.cmake"):
        shutil.copy(module, package / "cmake")
    if init_text is not None:
        (package / "__init__.py").write_text(init_text)
    return package / "cmake"


def configure(tmp_path: Path, prefix: Path, request: str) -> subprocess.CompletedProcess[str]:
    """Configure a project that asks for find_package(QoLA <request> CONFIG) in prefix."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21)\n"
        "project(versions LANGUAGES NONE)\n"
        # That prefix alone: not the qola of the tests' own environment, whose bin/ on PATH
        # leads find_package to its share/cmake/QoLA/, nor a system-wide one.
        f"find_package(QoLA {request} CONFIG NO_SYSTEM_ENVIRONMENT_PATH NO_CMAKE_SYSTEM_PATH)\n"
        'message(STATUS "QoLA found: ${QoLA_FOUND} version: ${QoLA_VERSION}")\n'
    )
    return subprocess.run(
        [
            str(_pypi_cmake("newest")),
            "-S",
            str(src),
            "-B",
            str(tmp_path / "build"),
            f"-DCMAKE_PREFIX_PATH={prefix}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def test_installed_module_reports_the_package_version(tmp_path: Path) -> None:
    prefix = tmp_path / "site-packages"
    installed_layout(prefix, (REPO / "qola" / "__init__.py").read_text())
    major_minor = ".".join(qola.__version__.split(".")[:2])

    proc = configure(tmp_path, prefix / "qola" / "cmake", major_minor)

    assert proc.returncode == 0, proc.stderr
    assert f"-- QoLA found: 1 version: {qola.__version__}\n" in proc.stdout


@pytest.mark.parametrize(
    ("request_", "found"), [("7.3", "1"), ("7.2", "1"), ("7.4", "0"), ("0.1", "0")]
)
def test_installed_module_reads_the_version_of_the_package_beside_it(
    tmp_path: Path, request_: str, found: str
) -> None:
    prefix = installed_layout(tmp_path / "site", '"""A later qola."""\n\n__version__ = "7.3.1"\n')

    proc = configure(tmp_path, prefix, request_)

    assert proc.returncode == 0, proc.stderr
    version = "7.3.1" if found == "1" else ""
    assert f"-- QoLA found: {found} version: {version}\n" in proc.stdout


def test_module_without_its_package_is_unsuitable_and_says_why(tmp_path: Path) -> None:
    prefix = installed_layout(tmp_path / "site", None)

    proc = configure(tmp_path, prefix, "")

    assert proc.returncode == 0, proc.stderr
    assert "-- QoLA found: 0 version: \n" in proc.stdout
    assert f"{prefix / 'QoLAConfig.cmake'}, version: unknown" in proc.stderr
