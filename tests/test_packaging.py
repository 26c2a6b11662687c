"""What an install holds: every package folder of qola/ is a package the build lists."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

TOP = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_listed_for_the_build():
    """An unlisted sub-package works in the editable install the suite uses and is missing
    (or shipped as mere data) from a wheel."""
    listed = set(tomllib.loads((TOP / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"
    ])
    folders = {
        ".".join(init.parent.relative_to(TOP).parts)
        for init in (TOP / "qola").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert folders - listed == set()
    assert "qola.cmake" in listed  # the CMake module, from cmake/
