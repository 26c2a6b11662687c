"""A manifest points only inside its own repository, and never into a git dir: as written,
or through symbolic links. Each case is an attack that wrote outside the project before."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import Upstream
from repos import git, init_repo, snapshot

OFF_LIMITS = "hint: git's own folders are off limits\n"
ELSEWHERE = (
    "hint: a manifest may only point inside its own repository; to use another folder, "
    "pass --root (or QOLA_ROOT) on the command line\n"
)


def dep(upstream: Upstream, path: str, extra: str = "") -> str:
    return (
        f'[deps.lib]\npath = "{path}"\nurl = "{upstream.lib}"\ncommit = "{upstream.lib_v2}"\n'
        + extra
    )


def with_root(project: Path, upstream: Upstream, root: str, path: str) -> Path:
    """The project's manifest, with `[qola] root = root` and one dependency at path."""
    manifest = project / "qola.toml"
    manifest.write_text(f'[qola]\nroot = "{root}"\n\n' + dep(upstream, path))
    return manifest


def refused(run_qola, manifest: Path, watched: Path, *args: str) -> str:
    """checkout exits 2 with nothing written anywhere below watched; returns stderr."""
    before = snapshot(watched)
    res = run_qola("checkout", "-m", str(manifest), *args)
    assert res.exit_code == 2, res.stderr
    assert res.stdout == ""
    assert snapshot(watched) == before
    return str(res.stderr)


@pytest.fixture
def home_with_project(tmp_path: Path) -> tuple[Path, Path]:
    """A home folder (with no git config folder yet), and a project two levels below it."""
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    return home, init_repo(home / "src" / "project")


# `[qola] root` cases: (root, a symlink to plant first as (name, target), the dependency's
# path, the problem reported, the hint). {home} and {project} are filled in.
ROOT_CASES = {
    # The way to $HOME with path = .config/git: a clone there would run its fsmonitor.
    "climbs-out": ("../..", None, ".config/git",
                   "'../..' leaves {project}, the repository holding the manifest", ELSEWHERE),
    # root = .git with path = <a folder>: a clone inside the project's git dir.
    "dot-git": (".git", None, "attack", "'.git' has a .git component", OFF_LIMITS),
    "absolute": ("{home}", None, ".config/git", "'{home}' is absolute",
                 "hint: write a folder relative to the manifest's, {project}, inside {project}; "
                 "or pass --root\n"),
    "link-out": ("up", ("up", "{home}"), ".config/git",
                 "'up' leaves {project} through a symlink (to {home})", ELSEWHERE),
    "link-to-dot-git": ("g", ("g", ".git"), "attack",
                        "'g' leads into the git dir {project}/.git", OFF_LIMITS),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(ROOT_CASES))
def test_qola_root_outside_its_repository_or_in_a_git_dir_is_refused(
    case, home_with_project, upstream, run_qola
):
    home, project = home_with_project
    root, link, path, problem, hint = ROOT_CASES[case]
    fill = {"home": home, "project": project}
    if link is not None:
        (project / link[0]).symlink_to(link[1].format(**fill), target_is_directory=True)
    manifest = with_root(project, upstream, root.format(**fill), path)
    assert refused(run_qola, manifest, home) == (
        f"qola: {manifest}:2: qola.root: {problem.format(**fill)}\n{hint.format(**fill)}"
    )


def test_qola_root_may_climb_within_its_repository(home_with_project, upstream, run_qola):
    _home, project = home_with_project
    (project / "cmake").mkdir()
    manifest = with_root(project / "cmake", upstream, "..", "3rdparty/lib")
    res = run_qola("checkout", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert git(project / "3rdparty" / "lib", "rev-parse", "HEAD") == upstream.lib_v2


@pytest.mark.parametrize(
    "target", [".git", ".git/modules", "bare.git"], ids=["dot-git", "modules", "bare-repo"]
)
def test_dependency_path_through_a_symlink_into_a_git_dir_is_refused(
    target, home_with_project, upstream, run_qola
):
    """`ln -s .git g` and path = "g/hooks" installed hooks in the project (here g/attack:
    an empty place, where the old checks let a clone land)."""
    home, project = home_with_project
    if target == "bare.git":
        git(project, "init", "-q", "--bare", "bare.git")
    (project / ".git" / "modules").mkdir(exist_ok=True)
    (project / "g").symlink_to(target, target_is_directory=True)
    manifest = project / "qola.toml"
    manifest.write_text(dep(upstream, "g/attack"))
    gitdir = project / (target.split("/")[0])
    assert refused(run_qola, manifest, home) == (
        f"qola: {manifest}:2: deps.lib.path: 'g/attack' leads into the git dir {gitdir} through "
        f"a symlink\n{OFF_LIMITS}"
    )


def test_patch_folder_through_a_symlink_into_a_git_dir_is_refused(
    home_with_project, upstream, run_qola
):
    home, project = home_with_project
    (project / "p").symlink_to(".git", target_is_directory=True)
    manifest = project / "qola.toml"
    manifest.write_text(dep(upstream, "3rdparty/lib", 'patches = "p/hooks"\n'))
    assert refused(run_qola, manifest, home) == (
        f"qola: {manifest}:5: deps.lib.patches: 'p/hooks' leads into the git dir "
        f"{project / '.git'} through a symlink\n{OFF_LIMITS}"
    )


def test_root_option_into_a_git_dir_is_refused_but_may_point_elsewhere(
    home_with_project, upstream, run_qola, tmp_path
):
    home, project = home_with_project
    manifest = project / "qola.toml"
    manifest.write_text(dep(upstream, "attack"))
    assert refused(run_qola, manifest, home, "--root", str(project / ".git")) == (
        f"qola: {project / '.git'}: the root lies inside the git dir {project / '.git'}\n"
        "hint: give the top of the work tree (the folder holding .git), not git's own\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    res = run_qola("checkout", "-m", str(manifest), "--root", str(elsewhere))
    assert res.exit_code == 0, res.stderr  # the command line chose: its user's call
    assert os.path.isdir(elsewhere / "attack" / ".git")


def test_a_manifest_inside_a_bare_repository_is_refused(tmp_path, upstream, run_qola):
    """With no work tree around it, the manifest's own folder would be the root."""
    bare = tmp_path / "repo.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    manifest = bare / "info" / "qola.toml"
    manifest.write_text(dep(upstream, "attack"))
    assert refused(run_qola, manifest, bare) == (
        f"qola: {manifest}: its folder lies inside the git dir {bare}\n"
        "hint: keep the manifest in a work tree, or pass --root\n"
    )
