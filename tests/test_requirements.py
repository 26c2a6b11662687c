"""A Python that lacks a package qola needs: exit 5, naming the interpreter, the package and
the line that installs it, before anything is read or changed (qola/base/requirements.py).

Real interpreters: virtual environments that have some of qola's dependencies (links to
this interpreter's), run with this checkout on PYTHONPATH, as CMake runs a qola checkout.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from repos import snapshot
from venvs import REPO, clean_environment, dependency_links, make_venv

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

from qola.base import requirements


def words(names: list[str]) -> str:
    """As the messages list names: `a`, `a and b`, `a, b and c`."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def test_the_requirements_are_pyproject_tomls_dependencies() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    listed = []
    for _, requirement, until in requirements.REQUIREMENTS:
        if until is not None:
            requirement += f"; python_version < '{until[0]}.{until[1]}'"
        listed.append(requirement)
    assert sorted(listed) == sorted(pyproject["project"]["dependencies"])


@pytest.fixture(scope="module")
def without_gitpython(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with click and tomli-w (tomli before 3.11), not GitPython."""
    base = tmp_path_factory.mktemp("without-gitpython")
    links = dependency_links(base / "packages", leave_out=("git", "gitdb", "smmap"))
    return make_venv(base / "venv", links)


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with none of qola's packages."""
    return make_venv(tmp_path_factory.mktemp("bare") / "venv", None)


@pytest.mark.parametrize("entry", ["qola", "qola.cli"])
def test_a_python_without_gitpython_exits_5_naming_it_before_anything_moves(
    entry: str, without_gitpython: Path, behind_pin
) -> None:
    """`python -m qola.cli checkout` (what CMake runs) and `python -m qola` alike; a checkout
    that has work to do, which it would start before GitPython was first imported."""
    before = snapshot(behind_pin.root)
    env = clean_environment() | {"PYTHONPATH": str(REPO)}

    proc = subprocess.run(
        [str(without_gitpython), "-m", entry, "checkout", "-m", str(behind_pin.manifest)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip

    assert proc.returncode == 5, proc.stderr
    assert proc.stdout == ""
    needs = words([r.partition(">")[0] for _, r in requirements.needed()])
    assert proc.stderr == (
        f"qola: {without_gitpython}: cannot run qola: GitPython is not installed for this "
        f"Python\nhint: install it: {without_gitpython} -m pip install 'GitPython>=3.1.30'; "
        f"or install this qola checkout, which brings them all: {without_gitpython} -m pip "
        f"install {REPO}; or run qola with a Python that has {needs}\n"
    )
    assert snapshot(behind_pin.root) == before


def test_a_python_without_any_of_them_names_each_and_installs_them_in_one_line(
    bare: Path, behind_pin
) -> None:
    before = snapshot(behind_pin.root)
    env = clean_environment() | {"PYTHONPATH": str(REPO)}

    proc = subprocess.run([str(bare), "-m", "qola.cli", "status", "-m", str(behind_pin.manifest)],
                          capture_output=True, text=True, env=env, check=False)  # fmt: skip

    assert proc.returncode == 5, proc.stderr
    needed = [requirement for _, requirement in requirements.needed()]
    names = words([r.partition(">")[0] for r in needed])
    assert proc.stderr.startswith(
        f"qola: {bare}: cannot run qola: {names} are not installed for this Python\n"
        f"hint: install them: {bare} -m pip install " + " ".join(f"'{r}'" for r in needed) + ";"
    )
    assert snapshot(behind_pin.root) == before


def test_a_folder_named_like_a_package_is_not_the_package(tmp_path: Path, bare: Path) -> None:
    """A `git` folder without __init__.py (imported as an empty namespace) is no GitPython."""
    (tmp_path / "git").mkdir()
    code = "from qola.base.requirements import missing; print(missing())"
    env = clean_environment() | {"PYTHONPATH": f"{REPO}:{tmp_path}"}
    proc = subprocess.run([str(bare), "-c", code], capture_output=True, text=True, check=True,
                          env=env)  # fmt: skip
    assert "'GitPython>=3.1.30'" in proc.stdout
