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


def test_a_commit_the_server_holds_but_no_ref_keeps_is_still_local_work(pr, tmp_path, run_qola):
    """Pushed to a branch, the branch deleted: the server still sends the commit by SHA
    (until its gc), but nothing there keeps it, so here it is the only copy that lasts."""
    root, _, _ = pr
    dep = root / "3rdparty" / "lib"
    git(dep, "checkout", "-q", "--detach")
    mine = commit_file(dep, "mine.txt", "precious\n", "my precious work")
    upstream = tmp_path / "lib"
    git(dep, "push", "-q", str(upstream), "HEAD:refs/heads/tmp")
    git(upstream, "branch", "-q", "-D", "tmp")
    assert git(upstream, "cat-file", "-t", mine) == "commit"
    before = snapshot(root)
    for force in ((), ("--force",)):
        res = run_qola("checkout", *force, cwd=root)
        if not force:
            assert res.exit_code == 4
            assert f"commit on no branch: 3rdparty/lib: {mine[:7]} my precious work" in res.stderr
            assert snapshot(root) == before
    assert res.exit_code == 0, res.stderr  # --force: moved, the commit kept under a backup ref
    assert mine in git(dep, "for-each-ref", "--format=%(objectname)", "refs/qola/backup/")


def test_a_remote_that_cannot_be_asked_leaves_the_commits_local_work(pr, tmp_path, run_qola):
    root, _, tip = pr
    try_the_pr(root, tip)
    (tmp_path / "lib").rename(tmp_path / "lib-gone")
    before = snapshot(root)
    res = run_qola("checkout", cwd=root)
    assert res.exit_code == 4
    said = f"{tmp_path / 'lib'} could not be asked whether it has them: they count as local work"
    assert said in res.stderr
    assert snapshot(root) == before


def test_a_dependency_whose_url_is_its_own_folder_is_not_asked(deep: Deep, tmp_path, run_qola):
    """`git submodule add ./3rdparty/lib` of a repository already there: the URL the root
    records is the dependency itself, which has every commit of its own."""
    root = init_repo(tmp_path / "te")
    git(root, "clone", "-q", str(deep.top), "3rdparty/lib")
    git(root, "submodule", "add", "-q", "./3rdparty/lib", "3rdparty/lib")
    pin = head(root / "3rdparty" / "lib")
    (root / "qola.toml").write_text(f'[qola]\nnamespace = "te"\nlib_commit = "{pin}"\n')
    git(root, "add", "qola.toml")
    git(root, "commit", "-q", "-m", "pin")
    assert run_qola("checkout", cwd=root).exit_code == 0
    dep = root / "3rdparty" / "lib"
    git(dep, "checkout", "-q", "--detach")
    mine = commit_file(dep, "w.txt", "w\n", "my only copy")
    res = run_qola("checkout", cwd=root)
    assert res.exit_code == 4, res.stderr
    assert f"{mine[:7]} my only copy" in res.stderr
    assert head(dep) == mine
