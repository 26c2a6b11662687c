"""Testing an upstream pull request in a dependency: the commits fetched by SHA are the
remote's, not local work. A TransformerEngine-shaped root: a legacy `[qola] lib_commit`
manifest, lib a submodule with a nested submodule of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from repos import commit_file, git, head, init_repo, snapshot
from superprojects import Deep, add_gitlink, legacy_superproject

PR_COMMITS = 8


@pytest.fixture
def pr(deep: Deep, tmp_path: Path, run_qola) -> tuple[Path, str, str]:
    """(root checked out at the pin, the pin, the pull request's head): the pull request
    lives upstream under refs/pull/1/head only, as on GitHub."""
    lib = init_repo(tmp_path / "lib")
    commit_file(lib, "lib.txt", "lib 0\n")
    add_gitlink(lib, "ck", "3rdparty/ck", str(deep.deep), deep.deep_v1)
    pin = commit_file(lib, "lib.txt", "lib 1\n")
    git(lib, "checkout", "-q", "--detach")
    for n in range(PR_COMMITS):
        commit_file(lib, "pr.txt", f"pr {n}\n", f"pr step {n}")
    tip = head(lib)
    git(lib, "update-ref", "refs/pull/1/head", tip)
    git(lib, "checkout", "-q", "main")
    root = legacy_superproject(tmp_path / "te", lib, pin)
    assert run_qola("checkout", cwd=root).exit_code == 0
    return root, pin, tip


def try_the_pr(root: Path, tip: str) -> Path:
    dep = root / "3rdparty" / "lib"
    git(dep, "fetch", "-q", "origin", tip)
    git(dep, "checkout", "-q", tip)
    return dep


def test_commits_fetched_by_sha_from_the_remote_are_not_local_work(pr, run_qola):
    root, pin, tip = pr
    dep = try_the_pr(root, tip)
    res = run_qola("checkout", cwd=root)
    assert res.exit_code == 0, res.stderr
    assert head(dep) == pin
    assert (
        f"3rdparty/lib was at {tip[:12]} with {PR_COMMITS} commits on no branch here, all of "
        "which"
    ) in res.stderr
    assert f"checkout {tip[:12]}` goes back" in res.stderr
    assert git(dep, "cat-file", "-t", tip) == "commit"  # and git goes back without a fetch
    assert (dep / "3rdparty" / "ck" / ".git").exists()


def test_a_commit_of_ones_own_on_top_of_the_pr_is_still_refused(pr, run_qola):
    root, _, tip = pr
    dep = try_the_pr(root, tip)
    mine = commit_file(dep, "mine.txt", "mine\n", "my change on top")
    before = snapshot(root)
    res = run_qola("checkout", cwd=root)
    assert res.exit_code == 4
    assert f"commit on no branch: 3rdparty/lib: {mine[:7]} my change on top" in res.stderr
    assert f"and {PR_COMMITS + 1 - 5} more commits on no branch in 3rdparty/lib" in res.stderr
    assert snapshot(root) == before


def test_offline_the_remote_cannot_be_asked_and_the_move_is_refused(pr, run_qola):
    root, _, tip = pr
    try_the_pr(root, tip)
    before = snapshot(root)
    res = run_qola("checkout", "--offline", cwd=root)
    assert res.exit_code == 4
    assert "would lose local work" in res.stderr
    assert snapshot(root) == before
