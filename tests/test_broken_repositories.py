"""Repositories git no longer accepts, and nested submodules behind a symlink: no fast path
says "up to date", verify names the problem (exit 1), checkout refuses (exit 4) and
changes nothing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from procs import noop_declined as declined
from repos import git, snapshot, without_noop_stamps
from stamp_checkers import cmake_holds
from test_cmake import _pypi_cmake

from qola.repo import gitfiles


def stamped(project) -> Path:
    """Let the no-op answer once: its stamp and a CMake results file with the CMake stamp."""
    results = project.root / "build" / "results.cmake"
    assert not declined(["checkout", "--cmake-out", str(results)], project.root)
    assert cmake_holds(_pypi_cmake("newest"), results)
    return results


def _refs_gone(p):
    git(p.lib, "pack-refs", "--all")
    shutil.rmtree(p.lib / ".git" / "refs")


def _objects_gone(p):
    (p.lib / ".git" / "objects").rename(p.root / "objects-elsewhere")


def _objects_emptied(p):
    """Every object deleted, the folders left: git still takes it for a repository."""
    for folder in (p.lib / ".git" / "objects").iterdir():
        if folder.name not in ("info", "pack"):
            shutil.rmtree(folder)
    for pack in (p.lib / ".git" / "objects" / "pack").iterdir():
        pack.unlink()


def _bare(p):
    git(p.lib, "config", "core.bare", "true")


def _format_2(p):
    git(p.lib, "config", "core.repositoryformatversion", "2")


def _unknown_extension(p):
    git(p.lib, "config", "core.repositoryformatversion", "1")
    git(p.lib, "config", "extensions.qolaNoSuchThing", "true")


def _bad_config_line(p):
    with (p.lib / ".git" / "config").open("a") as config:
        config.write("this is not config\n")


def _worktree_elsewhere(p):
    git(p.lib, "config", "core.worktree", str(p.root))


def _commondir_nowhere(p):
    """A `commondir` (a linked worktree's pointer to its repository) naming no folder."""
    (p.lib / ".git" / "commondir").write_text("../nowhere\n")


BROKEN = [
    (_refs_gone, ".git/refs is missing"),
    (_objects_gone, ".git/objects is missing"),
    (_objects_emptied, "HEAD ({sha}) is not a commit it has"),
    (_bare, "core.bare is true: git sees no work tree"),
    (_format_2, "its format version is 2; git reads versions 0 and 1"),
    (_unknown_extension, "unknown repository extension: qolanosuchthing"),
    (_bad_config_line, ".git/config: bad config line {line}"),
    (_worktree_elsewhere, "core.worktree is {root}, not this folder"),
    (_commondir_nowhere, "nowhere/objects is missing"),
]
IDS = ["refs-gone", "objects-gone", "objects-emptied", "bare", "format-2", "unknown-extension",
       "bad-config-line", "worktree-elsewhere", "commondir-nowhere"]  # fmt: skip


@pytest.mark.parametrize(("breakage", "why"), BROKEN, ids=IDS)
def test_a_dependency_git_refuses_is_never_up_to_date_and_verify_names_it(
    pinned_by_qola, run_qola, breakage, why
):
    sha = git(pinned_by_qola.lib, "rev-parse", "HEAD")
    results = stamped(pinned_by_qola)
    breakage(pinned_by_qola)
    lines = len((pinned_by_qola.lib / ".git" / "config").read_text().splitlines())
    why = why.format(sha=sha[:12], line=lines, root=pinned_by_qola.root)
    before = without_noop_stamps(snapshot(pinned_by_qola.root))

    assert declined(["checkout", "--cmake-out", str(results)], pinned_by_qola.root)  # stamp
    assert not cmake_holds(_pypi_cmake("newest"), results)
    shutil.rmtree(pinned_by_qola.root / ".git" / "qola" / "noop")
    assert declined(["checkout"], pinned_by_qola.root)  # without a stamp
    verified = run_qola("verify", "-m", str(pinned_by_qola.manifest))
    checkout = run_qola("checkout", "-m", str(pinned_by_qola.manifest))

    assert verified.exit_code == 1
    assert f"     missing: 3rdparty/lib is not a repository git accepts: {why}\n" in (
        verified.stdout
    )
    assert checkout.exit_code == 4
    assert checkout.stderr.startswith(
        f"qola: lib: {pinned_by_qola.lib} exists and is not a repository git accepts ({why}); "
        "nothing was changed\n"
        "hint: move its contents away (or delete the folder) and run qola again\n"
    )
    assert gitfiles.refusal(pinned_by_qola.lib) == why
    assert without_noop_stamps(snapshot(pinned_by_qola.root)) == before


def _nested_worktree_nowhere(p):
    git(p.nested, "config", "core.worktree", "../../../../nowhere")


def _nested_refs_gone(p):
    git(p.nested, "pack-refs", "--all")
    shutil.rmtree(p.lib / ".git" / "modules" / "extern" / "nested" / "refs")


def _nested_commondir_nowhere(p):
    modules = p.lib / ".git" / "modules" / "extern" / "nested"
    (modules / "commondir").write_text("../nowhere\n")


def _folder_linked_to_a_copy(p, upstream):
    """The issue's repro: a folder inside the dependency replaced by a symlink to a copy
    whose nested submodule is at another commit."""
    copy = p.root / "3rdparty" / "copy"
    shutil.copytree(p.lib, copy, symlinks=True)
    # (qola fetched the nested submodule one commit deep: the other commit by SHA)
    git(copy / "extern" / "nested", "fetch", "-q", "origin", upstream.nested_v1)
    git(copy / "extern" / "nested", "checkout", "-q", "--detach", upstream.nested_v1)
    shutil.rmtree(p.lib / "extern")
    (p.lib / "extern").symlink_to("../copy/extern")


NESTED = [
    (lambda p, u: _nested_worktree_nowhere(p),
     "core.worktree is ../../../../nowhere, which does not exist"),
    (lambda p, u: _nested_refs_gone(p), "{modules}/refs is missing"),
    (lambda p, u: _nested_commondir_nowhere(p), "{extern}/nowhere/objects is missing"),
    (_folder_linked_to_a_copy, "extern is a symlink, which git does not follow"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("breakage", "why"),
    NESTED,
    ids=["worktree-nowhere", "refs-gone", "commondir-nowhere", "folder-linked-to-a-copy"],
)
def test_a_nested_submodule_git_refuses_is_never_up_to_date_and_verify_names_it(
    pinned_by_qola, upstream, run_qola, breakage, why
):
    results = stamped(pinned_by_qola)
    breakage(pinned_by_qola, upstream)
    extern = pinned_by_qola.lib / ".git" / "modules" / "extern"
    why = why.format(modules=extern / "nested", extern=extern)
    before = without_noop_stamps(snapshot(pinned_by_qola.root))

    assert declined(["checkout", "--cmake-out", str(results)], pinned_by_qola.root)
    assert not cmake_holds(_pypi_cmake("newest"), results)
    shutil.rmtree(pinned_by_qola.root / ".git" / "qola" / "noop")
    assert declined(["checkout"], pinned_by_qola.root)
    verified = run_qola("verify", "-m", str(pinned_by_qola.manifest))
    checkout = run_qola("checkout", "-m", str(pinned_by_qola.manifest))

    assert verified.exit_code == 1
    assert verified.stdout.splitlines()[1:] == [
        f"     submodule: extern/nested is not a repository git accepts: {why}",
        "1 of 1 dependency does not match the manifest",
    ]
    assert checkout.exit_code == 4
    assert checkout.stderr.startswith(
        f"qola: lib: 3rdparty/lib/extern/nested is not a repository git accepts ({why}); "
        "nothing was changed\n"
        "hint: put the submodule's folder back as git left it (or move it away) and run "
        "qola again\n"
    )
    assert without_noop_stamps(snapshot(pinned_by_qola.root)) == before


def test_git_itself_sees_the_copy_behind_the_symlink(pinned_by_qola, upstream):
    """What the stamps used to miss: git follows the link to the copy's nested submodule."""
    _folder_linked_to_a_copy(pinned_by_qola, upstream)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=pinned_by_qola.nested, capture_output=True, text=True
    )
    assert head.stdout.strip() == upstream.nested_v1
    status = subprocess.run(
        ["git", "submodule", "status", "--recursive"], cwd=pinned_by_qola.lib,
        capture_output=True, text=True,
    )  # fmt: skip
    assert status.returncode != 0
    assert "expected 'extern' in submodule path 'extern/nested' not to be a symbolic link" in (
        status.stderr
    )


def test_verify_reports_a_nested_submodule_git_cannot_look_into_when_submodules_are_off(
    pinned_by_qola, run_qola
):
    pinned_by_qola.manifest.write_text(pinned_by_qola.manifest.read_text() + "submodules = false\n")
    _nested_worktree_nowhere(pinned_by_qola)
    before = snapshot(pinned_by_qola.root)

    verified = run_qola("verify", "-m", str(pinned_by_qola.manifest))

    assert verified.exit_code == 1
    assert verified.stdout.splitlines()[1:] == [
        "     dirty: git status cannot look into a nested submodule: fatal: 'git status "
        "--porcelain=2' failed in submodule extern/nested",
        "1 of 1 dependency does not match the manifest",
    ]
    assert snapshot(pinned_by_qola.root) == before
