"""Superprojects in the TransformerEngine layout, built with the git CLI."""

from __future__ import annotations

from pathlib import Path

from repos import git, init_repo


def legacy_superproject(path: Path, lib_url: Path | str, pin: str, written: str = "") -> Path:
    """A root with lib as a submodule at 3rdparty/lib (its gitlink at pin) and a legacy
    `[qola] lib_commit` manifest pinning `written` (default: pin), committed.

    The pin is on line 3 of qola.toml. Nothing is checked out in the submodule's folder
    beyond what `git submodule add` leaves (the submodule's own default branch).
    """
    root = init_repo(path)
    git(root, "submodule", "add", "-q", str(lib_url), "3rdparty/lib")
    git(root, "update-index", "--cacheinfo", f"160000,{pin},3rdparty/lib")
    (root / "qola.toml").write_text(
        f'[qola]\nnamespace = "te"\nlib_commit = "{written or pin}"  # lib v2\n'
    )
    git(root, "add", "qola.toml")
    git(root, "commit", "-q", "-m", "pin lib")
    return root
