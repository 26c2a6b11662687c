"""A first checkout into a folder that holds the user's files but no repository: refused
(exit 4, local work), never written over, at the top and in a nested submodule alike."""

from __future__ import annotations

import shutil

import pytest
from repos import snapshot, without_noop_stamps


@pytest.mark.parametrize("force", [False, True])
def test_a_dependencys_folder_holding_files_is_refused_and_kept(make_project, run_qola, force):
    project = make_project()
    folder = project.root / "3rdparty" / "lib"
    folder.mkdir(parents=True)
    (folder / "README").write_text("my notes\n")
    before = without_noop_stamps(snapshot(project.root))
    res = run_qola("checkout", *(["--force"] if force else []), "-m", str(project.manifest))
    assert res.exit_code == 4, res.stderr
    assert f"qola: lib: {folder} exists and is not a git repository; nothing was changed" in (
        res.stderr
    )
    assert without_noop_stamps(snapshot(project.root)) == before


@pytest.mark.parametrize("force", [False, True])
def test_a_nested_folder_holding_files_is_refused_and_kept(pinned_by_qola, run_qola, force):
    """lib at its pin, its nested submodule's folder (and repository) gone, the user's
    files there instead: exit 4 (it was 3, as if git had failed)."""
    nested = pinned_by_qola.nested
    shutil.rmtree(nested)
    shutil.rmtree(pinned_by_qola.lib / ".git" / "modules")
    nested.mkdir()
    (nested / "nested.txt").write_text("my nested notes\n")
    res = run_qola("checkout", *(["--force"] if force else []), "-m",
                   str(pinned_by_qola.manifest))  # fmt: skip
    assert res.exit_code == 4, res.stderr
    assert f"{nested} exists and is not a git repository" in res.stderr
    assert (nested / "nested.txt").read_text() == "my nested notes\n"
    assert sorted(p.name for p in nested.iterdir()) == ["nested.txt"]
