"""`safe.bareRepository = explicit` in the user's config (git 2.38's hardening against
embedded bare repositories) makes git refuse to find a bare repository by itself: qola
names every git dir it runs git in (nested submodules' under modules/, --cache mirrors,
the scratch repository of bump and diff) with --git-dir."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from repos import git, head


@pytest.fixture
def explicit_bare_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's global config: the isolated one, and safe.bareRepository = explicit."""
    path = tmp_path / "user.gitconfig"
    path.write_text(
        f"[include]\n\tpath = {os.environ['GIT_CONFIG_GLOBAL']}\n"
        "[safe]\n\tbareRepository = explicit\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(path))
    return path


def test_git_itself_refuses_a_bare_repository_it_finds(explicit_bare_only, upstream, tmp_path):
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    assert "safe.bareRepository" in git_error(bare, "rev-parse", "--git-dir")


def git_error(cwd: Path, *args: str) -> str:
    import subprocess

    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert proc.returncode != 0
    return proc.stderr


def test_checkout_with_nested_submodules_and_cache_works(
    explicit_bare_only, make_project, upstream, run_qola, tmp_path
):
    for name, extra in (("plain", ()), ("cached", ("--cache", str(tmp_path / "cache")))):
        project = make_project(name=name)
        res = run_qola("checkout", "-m", str(project.manifest), *extra)
        assert res.exit_code == 0, res.stderr
        assert head(project.lib) == upstream.lib_v2
        assert head(project.nested) == upstream.nested_v2
        res = run_qola("verify", "-m", str(project.manifest))
        assert res.exit_code == 0, res.stdout + res.stderr


def test_bump_reads_the_history_in_its_scratch_repository(
    explicit_bare_only, pinned_by_qola, upstream, run_qola
):
    res = run_qola("bump", "lib", "--to", "main", "--dry-run", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 0, res.stderr
    assert f"lib {upstream.lib_v2[:7]}..{upstream.lib_tip[:7]} (1 commit)" in res.stdout
