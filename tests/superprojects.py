"""Superprojects in the TransformerEngine layout, built with the git CLI."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from repos import commit_file, git, init_repo


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


def two_submodules(
    root: Path, lib_url: Path | str, other_url: Path | str, lib_pin: str, other_pin: str
) -> Path:
    """A root whose submodules lib (3rdparty/lib) and other (3rdparty/other) are pinned by
    a committed manifest (its last commit is "pins"), both following main, both checked
    out by qola."""
    import procs

    init_repo(root)
    add_gitlink(root, "lib", "3rdparty/lib", str(lib_url), lib_pin)
    add_gitlink(root, "other", "3rdparty/other", str(other_url), other_pin)
    (root / "qola.toml").write_text(
        "# the project's pins\n"
        f'[deps.lib]\npath = "3rdparty/lib"\ncommit = "{lib_pin}"\ntrack = "main"\n\n'
        f'[deps.other]\npath = "3rdparty/other"\ncommit = "{other_pin}"  # mine\n'
        'track = "main"\n'
    )
    git(root, "add", "qola.toml")
    git(root, "commit", "-q", "-m", "pins")
    assert procs.run("checkout", "-q", "-m", str(root / "qola.toml")).returncode == 0
    return root


@dataclass(frozen=True)
class Deep:
    """Upstreams three levels deep: `top` records `mid` (at extern/mid) and `other` (at
    extern/other); `mid` records `deep` at extern/deep by the relative URL ../deep."""

    base: Path  # the folder holding the four repositories (and `origin`, the superproject)
    top: Path
    mid: Path
    deep: Path
    other: Path
    top_v1: str
    top_v2: str  # top_v1 plus a file; the same gitlinks
    mid_v1: str
    deep_v1: str
    other_v1: str
    origin: Path  # a superproject with top as its submodule 3rdparty/top at top_v1


def build_deep(base: Path) -> Deep:
    """Each repository has history beyond its pinned commit (a depth-1 fetch is visible)."""
    deep = init_repo(base / "deep")
    commit_file(deep, "deep.txt", "deep 0\n")
    deep_v1 = commit_file(deep, "deep.txt", "deep 1\n")
    commit_file(deep, "deep.txt", "deep 2, after the pin\n")

    mid = init_repo(base / "mid")
    commit_file(mid, "mid.txt", "mid 0\n")
    add_gitlink(mid, "deep", "extern/deep", "../deep", deep_v1)
    mid_v1 = commit_file(mid, "mid.txt", "mid 1\n")

    other = init_repo(base / "other")
    commit_file(other, "other.txt", "other 0\n")
    other_v1 = commit_file(other, "other.txt", "other 1\n")
    commit_file(other, "other.txt", "other 2, after the pin\n")

    top = init_repo(base / "top")
    commit_file(top, "top.txt", "top 0\n")
    add_gitlink(top, "mid", "extern/mid", str(mid), mid_v1)
    add_gitlink(top, "other", "extern/other", str(other), other_v1)
    top_v1 = commit_file(top, "top.txt", "top 1\n")
    top_v2 = commit_file(top, "more.txt", "top 2\n")

    origin = init_repo(base / "origin")
    add_gitlink(origin, "3rdparty/top", "3rdparty/top", str(top), top_v1)
    (origin / "qola.toml").write_text(f'[deps.top]\ncommit = "{top_v1}"\n')
    git(origin, "add", "qola.toml")
    git(origin, "commit", "-q", "-m", "pin top")
    return Deep(base, top, mid, deep, other, top_v1, top_v2, mid_v1, deep_v1, other_v1, origin)


def add_gitlink(repo: Path, name: str, path: str, url: str, sha: str) -> None:
    """Record a submodule (its .gitmodules entry and gitlink) and commit, checking nothing out."""
    git(repo, "config", "-f", ".gitmodules", f"submodule.{name}.path", path)
    git(repo, "config", "-f", ".gitmodules", f"submodule.{name}.url", url)
    git(repo, "add", ".gitmodules")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sha},{path}")
    git(repo, "commit", "-q", "-m", f"add {name}")


def fresh_clone(deep: Deep, where: Path) -> Path:
    """A clone of the superproject as a developer has it before any submodule command:
    3rdparty/top an empty folder, nothing initialised."""
    git(where.parent, "clone", "-q", str(deep.origin), str(where))
    return where
