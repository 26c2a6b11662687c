"""An override never makes a fast path more optimistic than verify.

QOLA_SOURCE_DIR_<NAME> makes a dependency use a folder as it is. The dependency's own
folder stays in the project all the same, and git in the root reaches it (a submodule of
the root: its gitlink, its git dir under `.git/modules/`); verify runs git there, and
qola runs none in a repository it refuses. So where that folder (or that git dir) holds
a repository qola refuses, neither the no-op nor a stamp answers "overridden"; the full
command does, with a warning that says why, and the stamp it writes vouches for nothing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from procs import noop_declined as declined
from superprojects import legacy_superproject


@pytest.fixture
def submodule_root(tmp_path: Path, upstream, run_qola) -> Path:
    """lib a submodule of the root, checked out by qola (its git dir in .git/modules)."""
    root = legacy_superproject(tmp_path / "te", upstream.lib, upstream.lib_v2)
    res = run_qola("checkout", "-q", "-m", str(root / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    return root


def move_git_dir_out(root: Path, where: Path) -> Path:
    """lib's git dir moved out of the project, a link to it left in .git/modules."""
    modules = root / ".git" / "modules" / "3rdparty" / "lib"
    shutil.move(modules, where)
    modules.symlink_to(where)
    return modules


@pytest.mark.parametrize("override", ["3rdparty/lib", "copy"])
def test_an_override_is_not_answered_while_the_dependencys_own_git_dir_leads_out(
    override, submodule_root, tmp_path, run_qola, monkeypatch
):
    """The issue's case (the override naming lib's own folder, relative), and an override
    naming a copy elsewhere: both said "overridden" from the no-op and the CMake stamp
    while verify exited 3."""
    root = submodule_root
    folder = root / "3rdparty" / "lib"
    if override == "copy":
        shutil.copytree(folder, tmp_path / "copy", symlinks=True)
        override = str(tmp_path / "copy")
    monkeypatch.setenv("QOLA_SOURCE_DIR_LIB", override)
    out = tmp_path / "results.cmake"
    argv = ["checkout", "-m", str(root / "qola.toml"), "--cmake-out", str(out)]
    assert not declined(argv, root)  # answered while all is well: a stamp is written
    move_git_dir_out(root, tmp_path / "lib-git")
    assert declined(argv, root)  # the stamp no longer holds, and no fresh answer is given
    monkeypatch.chdir(root)
    res = run_qola(*argv)
    assert res.exit_code == 0, res.stderr
    shown = os.path.abspath(override)
    assert res.stdout.endswith(f"overridden by {shown}\n")
    assert res.stderr.startswith(
        f"qola: warning: lib: {shown} is used as it is, but 3rdparty/lib is not a repository "
        f"git accepts (.git leads to {tmp_path / 'lib-git'}, outside the project"
    )
    assert "no fast path answers for this tree" in res.stderr
    assert 'set(_QOLA_STAMP "")' in out.read_text()  # the results file vouches for nothing
    assert declined(argv, root)


def test_an_override_is_answered_when_the_dependencys_own_folder_is_fine_or_gone(
    submodule_root, tmp_path, monkeypatch
):
    root = submodule_root
    monkeypatch.setenv("QOLA_SOURCE_DIR_LIB", str(tmp_path / "elsewhere"))
    (tmp_path / "elsewhere").mkdir()
    argv = ["checkout", "-m", str(root / "qola.toml")]
    assert not declined(argv, root)
    shutil.rmtree(root / "3rdparty" / "lib")
    assert not declined(argv, root)
