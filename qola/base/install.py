"""Where this qola came from, for the hints that say how to upgrade or reinstall it.

qola is not on PyPI (anyone may register the name: installing it by that name would
install whatever whoever registered it put there), so a hint names the checkout qola runs
from, or the git URL or folder pip recorded when it installed it (PEP 610's
direct_url.json), and otherwise a placeholder for qola's repository URL.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlparse

PLACEHOLDER = "git+<qola's repository URL>"


def checkout() -> Path | None:
    """The qola source tree this package runs from (a clone, a vendored submodule, a
    FetchContent copy), or None for an installed package."""
    tree = Path(__file__).resolve().parents[2]  # qola/base/install.py -> the tree
    if (tree / "pyproject.toml").is_file() and (tree / "cmake" / "QoLA.cmake").is_file():
        return tree
    return None


def installed_from() -> str | None:
    """What pip installed this qola from: `git+URL` or a folder; None when unknown."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        found = distribution("qola")
        # Only the record of the installation this very package belongs to (another
        # qola, an editable install say, may be first on the path).
        here = Path(__file__).resolve().parents[1] / "__init__.py"
        if Path(str(found.locate_file("qola/__init__.py"))).resolve() != here:
            return None
        text = found.read_text("direct_url.json")
    except (ImportError, PackageNotFoundError, OSError):
        return None
    try:
        record = json.loads(text or "")
    except ValueError:
        return None
    url = record.get("url") if isinstance(record, dict) else None
    if not isinstance(url, str) or not url:
        return None
    if isinstance(record.get("vcs_info"), dict) and record["vcs_info"].get("vcs") == "git":
        return f"git+{url}"
    if url.startswith("file://"):
        return unquote(urlparse(url).path)
    return url


def upgrade_hint() -> str:
    """What to do for a newer qola."""
    tree = checkout()
    if tree is not None:
        return f"upgrade qola: this one runs from {tree}; move that checkout to a newer qola"
    return f'upgrade qola: pip install --upgrade "{installed_from() or PLACEHOLDER}"'


def reinstall_hint() -> str:
    """What to do for an installation that lacks some of its files."""
    return f'reinstall qola: pip install --force-reinstall "{installed_from() or PLACEHOLDER}"'
