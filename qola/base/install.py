"""Where this qola came from, for the hints that say how to upgrade or reinstall it.

qola is not on PyPI (anyone may register the name: installing it by that name would
install whatever whoever registered it put there), so a hint names the checkout qola runs
from, or the git URL or folder pip recorded when it installed it (PEP 610's
direct_url.json), and otherwise a placeholder for qola's repository URL.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

PLACEHOLDER = "git+<qola's repository URL>"


def checkout() -> Path | None:
    """The qola source tree this package runs from (a clone, a vendored submodule, a
    FetchContent copy), or None for an installed package."""
    tree = Path(__file__).resolve().parents[2]  # qola/base/install.py -> the tree
    if (tree / "pyproject.toml").is_file() and (tree / "cmake" / "QoLA.cmake").is_file():
        return tree
    return None


def _record() -> tuple[Any, dict[str, Any]] | None:
    """The installed distribution this very package belongs to (another qola, an editable
    install say, may be first on the path), and pip's record of where it came from (PEP 610's
    direct_url.json, {} when there is none); None when this package is no installation's."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        found = distribution("qola")
        text = found.read_text("direct_url.json")
    except (ImportError, PackageNotFoundError, OSError):
        return None
    try:
        record = json.loads(text or "{}")
    except ValueError:
        record = {}
    if not isinstance(record, dict):
        record = {}
    here = Path(__file__).resolve().parents[1]  # qola/
    if Path(str(found.locate_file("qola/__init__.py"))).resolve() == here / "__init__.py":
        return found, record
    # An editable install: the package is the checkout pip recorded.
    url = record.get("url")
    editable = isinstance(record.get("dir_info"), dict) and record["dir_info"].get("editable")
    if editable and isinstance(url, str) and url.startswith("file://"):
        tree = Path(unquote(urlparse(url).path))
        if tree.is_dir() and tree.resolve() == here.parent:
            return found, record
    return None


def installed_from() -> str | None:
    """What pip installed this qola from: `git+URL` or a folder; None when unknown."""
    found = _record()
    if found is None:
        return None
    record = found[1]
    url = record.get("url")
    if not isinstance(url, str) or not url:
        return None
    if isinstance(record.get("vcs_info"), dict) and record["vcs_info"].get("vcs") == "git":
        return f"git+{url}"
    if url.startswith("file://"):
        return unquote(urlparse(url).path)
    return url


def share_cmake_dir() -> Path | None:
    """<prefix>/share/cmake/QoLA/, which pip installed with this qola (an editable install
    too): its files load this installation's module and run its interpreter, active or not.
    None for a checkout on PYTHONPATH, or an installation without that folder."""
    found = _record()
    if found is None:
        return None
    import csv  # lazy: this command only

    # The installer's RECORD (a source tree's qola.egg-info lists its own share/ folder).
    try:
        record = found[0].read_text("RECORD") or ""
    except OSError:
        return None
    for row in csv.reader(record.splitlines()):
        if row and row[0].endswith("/share/cmake/QoLA/QoLAConfig.cmake"):
            path = Path(os.path.normpath(str(found[0].locate_file(row[0]))))
            if path.is_file():
                return path.parent
    return None


def upgrade_hint() -> str:
    """What to do for a newer qola."""
    tree = checkout()
    if tree is not None:
        return f"upgrade qola: this one runs from {tree}; move that checkout to a newer qola"
    return f'upgrade qola: pip install --upgrade "{installed_from() or PLACEHOLDER}"'


def reinstall_hint() -> str:
    """What to do for an installation that lacks some of its files."""
    return f'reinstall qola: pip install --force-reinstall "{installed_from() or PLACEHOLDER}"'
