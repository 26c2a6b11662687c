"""Virtual environments for the tests, made offline: real ones, with or without qola's packages.

A venv gets qola's dependencies from the interpreter running the tests: a folder of links
to the packages, named in a .pth file, so nothing is downloaded and a venv can be given
all of them or all but some. pip builds qola (a wheel, an editable install) from the
wheelhouse the README's test command fills (.ci/test), with no index.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# Filled by .ci/test (pip download setuptools): what pip's isolated build of qola installs.
WHEELHOUSE = REPO / ".test-cmake" / "wheelhouse"
# What building qola reads from the source tree.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "qola", "cmake", "share",
           "backend")  # fmt: skip
# The modules of qola's dependencies and of theirs (GitPython's gitdb and smmap).
DEPENDENCIES = ("click", "git", "gitdb", "smmap", "tomli_w", "tomli")
VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"


def wheelhouse() -> Path:
    if not any(WHEELHOUSE.glob("setuptools-*.whl")):
        pytest.fail(
            f"{WHEELHOUSE} holds no setuptools wheel: run the README's test command, which "
            f"fills it with pip download --dest {WHEELHOUSE} 'setuptools>=77'"
        )
    return WHEELHOUSE


def clean_environment() -> dict[str, str]:
    """The tests' environment without what would pick or lend a Python: no active
    virtual environment, no PYTHONPATH to this checkout, no QOLA_PYTHON; and pip reads
    no configuration (no index, no constraints of the machine's)."""
    gone = ("PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "QOLA_PYTHON", "PYTHONHOME")
    env = {k: v for k, v in os.environ.items() if k not in gone and not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def source_copy(folder: Path) -> Path:
    """The files qola is built from, as they are now, in folder."""
    folder.mkdir(parents=True)
    for name in SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, folder / name)
    return folder


def dependency_links(folder: Path, leave_out: tuple[str, ...] = ()) -> Path:
    """A folder of links to the packages of DEPENDENCIES this interpreter has, but those
    left out."""
    folder.mkdir(parents=True)
    for name in DEPENDENCIES:
        if name in leave_out:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue  # tomli on 3.11 and later: not needed, maybe not there
        package = Path(spec.origin)
        target = package.parent if package.name == "__init__.py" else package
        (folder / target.name).symlink_to(target)
    return folder


def make_venv(prefix: Path, packages: Path | None, with_pip: bool = False) -> Path:
    """A virtual environment at prefix whose site-packages also reads packages (a folder of
    dependency_links); its interpreter."""
    venv.create(prefix, with_pip=with_pip)
    if packages is not None:
        site = prefix / "lib" / VERSION / "site-packages"
        (site / "qola-test-dependencies.pth").write_text(f"{packages}\n")
    return prefix / "bin" / "python"


def pip(python: Path, *args: str) -> None:
    """python -m pip ARGS, offline: the wheelhouse alone."""
    command = [str(python), "-m", "pip", *args, "--no-index", "--find-links", str(wheelhouse())]
    proc = subprocess.run(command, capture_output=True, text=True, env=clean_environment(),
                          check=False)  # fmt: skip
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(command)} failed:\n{proc.stdout}\n{proc.stderr}")
