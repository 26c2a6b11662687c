"""A manifest points only inside its own repository, and never into a git dir: as written,
or through symbolic links. Each case is an attack that wrote outside the project before."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import procs
import pytest
from conftest import Upstream
from repos import git, init_repo, snapshot
from superprojects import legacy_superproject

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


def repository_outside(tmp_path: Path, source: Path, at: str) -> Path:
    """A repository of the user's elsewhere on the machine (a clone of source, at `at`)."""
    outside = tmp_path / "outside" / source.name
    git(tmp_path, "clone", "-q", str(source), str(outside))
    git(outside, "reset", "-q", "--hard", at)
    return outside


def point_at(worktree: Path, gitdir: Path) -> None:
    """Make worktree's `.git` a file naming gitdir, as a planted tree would."""
    dotgit = worktree / ".git"
    if dotgit.is_dir():
        shutil.rmtree(dotgit)
    dotgit.write_text(f"gitdir: {gitdir}\n")


def test_a_dependency_whose_git_file_leads_out_of_the_project_is_refused_and_reported(
    pinned_by_qola, upstream, run_qola, tmp_path
):
    """qola would fetch into that other repository, move its HEAD, rewrite its index and
    write refs there; it refuses before any of it, and verify says `unsafe`."""
    project = pinned_by_qola
    outside = repository_outside(tmp_path, upstream.lib, upstream.lib_v2)
    point_at(project.lib, outside / ".git")
    before = snapshot(tmp_path)
    res = run_qola("verify", "--format", "json", "-m", str(project.manifest))
    assert res.exit_code == 1, res.stdout + res.stderr
    [dep] = json.loads(res.stdout)["deps"]
    assert [(p["kind"], p["message"]) for p in dep["problems"]] == [
        ("missing", "3rdparty/lib is not a repository qola takes: its git dir lies outside the "
         "project, so its commit is not read"),
        ("unsafe", f"3rdparty/lib: .git leads to {outside / '.git'}, outside the project "
         f"({project.root} and its git dir); qola reads and writes no repository there"),
    ]  # fmt: skip
    for pin in (upstream.lib_v2, upstream.lib_v1):  # at its pin (no false green), and a move
        project.set_pin(upstream.lib_v2, pin)
        res = run_qola("checkout", "-m", str(project.manifest))
        assert res.exit_code == 4, res.stderr
        assert res.stderr == (
            f"qola: lib: {project.lib} exists and is not a repository git accepts (.git leads "
            f"to {outside / '.git'}, outside the project ({project.root} and its git dir); "
            "qola reads and writes no repository there); nothing was changed\n"
            "hint: to use that repository as it is, point QOLA_SOURCE_DIR_LIB at "
            f"{project.lib}; else remove {project.lib / '.git'} and run qola again\n"
            "qola: 1 of 1 dependency failed: lib\n"
        )
        project.set_pin(pin, upstream.lib_v2)
    assert snapshot(tmp_path) == before
    # The hint's way out: the folder named on the command line is used as it is.
    override = {"QOLA_SOURCE_DIR_LIB": str(project.lib)}
    res = run_qola("checkout", "-m", str(project.manifest), env=override)
    assert res.exit_code == 0, res.stderr
    assert res.stdout == f"lib 3rdparty/lib {upstream.lib_v2[:12]} overridden by {project.lib}\n"


def test_a_nested_submodule_whose_git_file_leads_out_of_the_project_is_refused(
    pinned_by_qola, upstream, run_qola, tmp_path
):
    project = pinned_by_qola
    outside = repository_outside(tmp_path, upstream.nested, upstream.nested_v2)
    point_at(project.nested, outside / ".git")
    project.set_pin(upstream.lib_v2, upstream.lib_v1)
    before = snapshot(tmp_path)
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 4, res.stderr
    refusal = "3rdparty/lib/extern/nested is not a repository git accepts (.git leads to "
    assert refusal in res.stderr
    assert snapshot(tmp_path) == before
    project.set_pin(upstream.lib_v1, upstream.lib_v2)
    res = run_qola("verify", "--format", "json", "-m", str(project.manifest))
    assert res.exit_code == 1
    [dep] = json.loads(res.stdout)["deps"]
    found = [(p["kind"], p.get("path")) for p in dep["problems"]]
    assert found == [("submodule", "extern/nested"), ("unsafe", "extern/nested")]


def test_an_override_is_used_whatever_its_git_file_names(pinned_by_qola, run_qola, tmp_path):
    """QOLA_SOURCE_DIR_<NAME> is the user's own choice on the command line: its folder and
    its repository may be anywhere."""
    project = pinned_by_qola
    elsewhere = tmp_path / "elsewhere"
    (project.lib / ".git").rename(tmp_path / "lib.git")
    shutil.copytree(project.lib, elsewhere)
    point_at(elsewhere, tmp_path / "lib.git")
    override = {"QOLA_SOURCE_DIR_LIB": str(elsewhere)}
    res = run_qola("verify", "-m", str(project.manifest), env=override)
    assert res.exit_code == 0, res.stdout + res.stderr
    assert "overridden" in res.stdout


def test_a_root_that_is_a_linked_worktree_keeps_its_submodules_git_dirs_in_the_main_one(
    tmp_path, upstream, run_qola
):
    """git keeps a linked worktree's submodules under <main git dir>/worktrees/<name>/: a
    git dir of the root's all the same."""
    main = tmp_path / "main"
    legacy_superproject(main, upstream.lib, upstream.lib_v2)
    git(main, "worktree", "add", "-q", "--detach", str(tmp_path / "wt"))
    root = tmp_path / "wt"
    for _ in range(2):  # cloned, then up to date
        res = run_qola("checkout", "-m", str(root / "qola.toml"))
        assert res.exit_code == 0, res.stderr
    modules = main / ".git" / "worktrees" / "wt" / "modules"
    gitfile = (root / "3rdparty" / "lib" / ".git").read_text()
    assert gitfile.startswith(f"gitdir: {os.path.relpath(modules, root / '3rdparty' / 'lib')}")
    assert run_qola("verify", "-m", str(root / "qola.toml")).exit_code == 0


def test_a_nested_submodule_a_new_pin_adds_where_a_git_file_leads_out_is_not_brought_in(
    make_project, upstream, run_qola, tmp_path
):
    """The old pin records no submodule at extern/nested (nothing to refuse before the
    move); the new one does, and the folder is there already, leading elsewhere."""
    readme_only = git(upstream.lib, "rev-parse", f"{upstream.lib_v1}~1")
    project = make_project(pin=readme_only)
    assert run_qola("checkout", "-m", str(project.manifest)).exit_code == 0
    outside = repository_outside(tmp_path, upstream.nested, upstream.nested_v1)
    project.nested.mkdir(parents=True)
    point_at(project.nested, outside / ".git")
    before = snapshot(outside)
    project.set_pin(readme_only, upstream.lib_v1)
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 3, res.stderr
    assert (
        f"  extern/nested ({upstream.nested}) at {upstream.nested_v1}: it is not a repository "
        f"git accepts (.git leads to {outside / '.git'}, outside the project"
    ) in res.stderr
    assert snapshot(outside) == before



@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: chown to another uid")
def test_exec_and_foreach_let_no_git_into_a_repository_outside_the_project(
    pinned_by_qola, upstream, tmp_path
):
    """The shim trusts the folders of the project for a build step's git; one whose .git
    leads out of the project would let that git into a repository elsewhere (here another
    user's), which qola itself refuses to touch."""
    project = pinned_by_qola
    outside = repository_outside(tmp_path, upstream.nested, upstream.nested_v2)
    point_at(project.nested, outside / ".git")
    subprocess.run(["chown", "-R", "12345:12345", str(tmp_path)], check=True)
    before = snapshot(tmp_path)
    for command in ("exec", "foreach"):
        proc = procs.run(command, "-m", str(project.manifest), "--",
                         "git", "-C", str(project.nested), "rev-parse", "HEAD")  # fmt: skip
        assert proc.returncode == 128, proc.stdout + proc.stderr
        assert proc.stderr.startswith(
            f"qola: warning: lib: {project.nested} is not trusted for CMD's git: .git leads to "
            f"{outside / '.git'}, outside the project"
        )
        assert "detected dubious ownership" in proc.stderr
    assert snapshot(tmp_path) == before
    # The dependency itself the same; foreach skips it (as it skips one git does not take).
    outside = repository_outside(tmp_path, upstream.lib, upstream.lib_v2)
    point_at(project.lib, outside / ".git")
    subprocess.run(["chown", "-R", "12345:12345", str(tmp_path)], check=True)
    before = snapshot(tmp_path)
    proc = procs.run("exec", "-m", str(project.manifest), "--",
                     "git", "-C", str(project.lib), "rev-parse", "HEAD")  # fmt: skip
    assert proc.returncode == 128, proc.stdout + proc.stderr
    assert proc.stderr.startswith(
        f"qola: warning: lib: {project.lib} is not trusted for CMD's git: .git leads to "
        f"{outside / '.git'}, outside the project"
    )
    proc = procs.run("foreach", "-m", str(project.manifest), "--", "git", "rev-parse", "HEAD")
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
    assert proc.stderr.startswith(
        f"qola: warning: lib: {project.lib} is skipped: .git leads to {outside / '.git'}, "
    )
    assert snapshot(tmp_path) == before
