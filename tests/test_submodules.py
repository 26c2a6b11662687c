"""Dependencies that are submodules of the root, and nested submodules: the layout git's own
`submodule update --init --recursive` makes, each gitlink fetched by SHA at depth 1, and
failures that cost one retry (a nested submodule of a nested submodule included)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from repos import commit_file, git, head, ran, snapshot
from superprojects import Deep, fresh_clone

NESTED = ("extern/mid", "extern/mid/extern/deep", "extern/other")


def status_lines(root: Path) -> list[str]:
    """`git submodule status --recursive`, each line as git prints it (prefix kept)."""
    import subprocess

    out = subprocess.run(["git", "submodule", "status", "--recursive"], cwd=root,
                         capture_output=True, text=True, check=True)  # fmt: skip
    return out.stdout.splitlines()


def without_memory(state: dict[str, str]) -> dict[str, str]:
    """A snapshot less what qola remembers of a commit's gitlinks (git dir `qola/` folders)."""
    return {k: v for k, v in state.items() if "/qola/" not in k and not k.endswith("/qola/")}


def assert_git_agrees(root: Path, deep: Deep) -> None:
    """Every line of git's status without -, + or U, and git's update moves nothing."""
    lines = status_lines(root)
    expected = {
        "3rdparty/top": deep.top_v1,
        "3rdparty/top/extern/mid": deep.mid_v1,
        "3rdparty/top/extern/mid/extern/deep": deep.deep_v1,
        "3rdparty/top/extern/other": deep.other_v1,
    }
    assert {line.split()[1]: line.split()[0] for line in lines} == expected, lines
    assert all(line.startswith(" ") for line in lines), lines
    before = snapshot(root)
    git(root, "submodule", "update", "--init", "--recursive")
    assert snapshot(root) == before


@pytest.fixture
def te_fresh(deep: Deep, tmp_path: Path) -> Path:
    """A clone of the TE-shaped superproject, its submodule not initialised."""
    return fresh_clone(deep, tmp_path / "te")


def test_submodule_of_the_root_ends_as_git_submodule_update_leaves_it(
    te_fresh: Path, deep: Deep, run_qola
):
    res = run_qola("checkout", "-v", cwd=te_fresh)
    assert res.exit_code == 0, res.stderr
    top = te_fresh / "3rdparty" / "top"
    assert (top / ".git").read_text() == "gitdir: ../../.git/modules/3rdparty/top\n"
    modules = te_fresh / ".git" / "modules" / "3rdparty" / "top"
    assert git(modules, "config", "core.worktree") == "../../../../3rdparty/top"
    assert git(te_fresh, "config", "submodule.3rdparty/top.url") == str(deep.top)
    assert git(te_fresh, "config", "submodule.3rdparty/top.active") == "true"
    # Nested repositories in their parents' git dirs, as git puts them.
    # (by submodule name: mid, deep and other, not by path)
    assert (top / "extern/mid/extern/deep/.git").read_text() == (
        "gitdir: ../../../../../../.git/modules/3rdparty/top/modules/mid/modules/deep\n"
    )
    assert (modules / "modules" / "other" / "HEAD").is_file()
    # Every repository one commit deep: fetched by SHA, not cloned.
    for tree in [top, *(top / path for path in NESTED)]:
        assert git(tree, "rev-list", "--count", "HEAD") == "1", tree
    assert not any(c.startswith("submodule") or c.startswith("clone") for c in ran(res.stderr))
    assert_git_agrees(te_fresh, deep)
    assert run_qola("verify", cwd=te_fresh).exit_code == 0
    assert run_qola("checkout", cwd=te_fresh).stdout.endswith(" up to date\n")


def test_checkout_reuses_the_repositories_git_keeps_under_modules(
    te_fresh: Path, deep: Deep, run_qola
):
    """After `git submodule deinit` the repositories stay in .git/modules: qola checks
    them out again without fetching (here: offline) and without a second clone."""
    git(te_fresh, "submodule", "update", "-q", "--init", "--recursive")
    git(te_fresh, "submodule", "deinit", "-q", "-f", "3rdparty/top")
    modules = te_fresh / ".git" / "modules" / "3rdparty" / "top"
    packs_before = sorted(p.name for p in modules.rglob("*.pack"))
    res = run_qola("checkout", "-v", "--offline", cwd=te_fresh)
    assert res.exit_code == 0, res.stderr
    assert f"reusing the repository in {modules}" in res.stderr
    assert sorted(p.name for p in modules.rglob("*.pack")) == packs_before
    assert not any(c.startswith(("fetch", "init")) for c in ran(res.stderr)), ran(res.stderr)
    assert_git_agrees(te_fresh, deep)


def test_a_tree_git_submodule_update_made_is_adopted_as_is(te_fresh: Path, deep: Deep, run_qola):
    """Nothing moves; the one line qola adds to the root's config is the one that keeps a
    pull in the root from fetching for the dependency, and it says so once."""
    git(te_fresh, "submodule", "update", "-q", "--init", "--recursive")
    before = without_memory(snapshot(te_fresh))
    res = run_qola("checkout", cwd=te_fresh)
    assert res.exit_code == 0, res.stderr
    assert res.stdout == f"top 3rdparty/top {deep.top_v1[:12]} up to date\n"
    assert "submodule.3rdparty/top.fetchRecurseSubmodules=false" in res.stderr, res.stderr
    after = without_memory(snapshot(te_fresh))
    assert {k for k in after if after[k] != before.get(k)} == {".git/config"}
    assert git(te_fresh, "config", "--local", "submodule.3rdparty/top.fetchRecurseSubmodules") == (
        "false"
    )
    assert_git_agrees(te_fresh, deep)
    again = run_qola("checkout", cwd=te_fresh)
    assert (again.exit_code, again.stderr) == (0, "")
    assert without_memory(snapshot(te_fresh)) == after


def test_a_dependency_the_roots_config_does_not_initialise_is_initialised(
    te_fresh: Path, deep: Deep, run_qola
):
    """A checkout an older qola made (its own .git folder, nothing in the root's config):
    at its pin, but git's status says `-` until qola writes what `git submodule init` would."""
    top = te_fresh / "3rdparty" / "top"
    top.rmdir()
    git(te_fresh, "clone", "-q", "--recurse-submodules", str(deep.top), str(top))
    git(top, "checkout", "-q", "--detach", deep.top_v1)
    git(top, "submodule", "update", "-q", "--init", "--recursive")
    assert status_lines(te_fresh)[0].startswith("-")
    res = run_qola("checkout", cwd=te_fresh)
    assert res.exit_code == 0, res.stderr
    assert git(te_fresh, "config", "submodule.3rdparty/top.url") == str(deep.top)
    assert all(line.startswith(" ") for line in status_lines(te_fresh))
    assert run_qola("checkout", cwd=te_fresh).stdout.endswith(" up to date\n")


def test_failed_nested_fetch_keeps_what_was_fetched_and_costs_one_retry(
    te_fresh: Path, deep: Deep, run_qola, tmp_path: Path
):
    away = tmp_path / "other-away"
    shutil.move(str(deep.other), away)
    try:
        failed = run_qola("checkout", cwd=te_fresh)
    finally:
        shutil.move(str(away), deep.other)
    assert failed.exit_code == 3
    assert (
        "qola: top: 3rdparty/top is at its pin, but not every nested submodule could be "
        "checked out:\n"
        f"  extern/other ({deep.other}) at {deep.other_v1}: `git fetch -q --no-tags "
        f"--no-recurse-submodules --depth 1 --end-of-options {deep.other} {deep.other_v1}` "
        "failed with exit code 128:\n"
    ) in failed.stderr
    assert "hint: what was fetched is kept: the next run fetches only what is missing\n" in (
        failed.stderr
    )
    top = te_fresh / "3rdparty" / "top"
    assert head(top) == deep.top_v1
    assert head(top / "extern/mid") == deep.mid_v1
    assert head(top / "extern/mid/extern/deep") == deep.deep_v1
    # git too sees the one that failed as not checked out, and nothing else amiss.
    prefixes = {line.split()[1]: line[0] for line in status_lines(te_fresh)}
    assert prefixes == {
        "3rdparty/top": " ",
        "3rdparty/top/extern/mid": " ",
        "3rdparty/top/extern/mid/extern/deep": " ",
        "3rdparty/top/extern/other": "-",
    }
    # The retry fetches the one that failed, and nothing else.
    retry = run_qola("checkout", "-v", cwd=te_fresh)
    assert retry.exit_code == 0, retry.stderr
    fetches = [c for c in ran(retry.stderr) if c.startswith("fetch")]
    assert fetches == [
        f"fetch --no-tags --no-recurse-submodules --depth 1 --end-of-options {deep.other} "
        f"{deep.other_v1}"
    ]
    assert_git_agrees(te_fresh, deep)


def make_half_made(tree: Path, gitdir: Path, url: Path) -> None:
    """What `git submodule update` leaves when its checkout after `clone --no-checkout`
    fails: HEAD at the remote's tip, no index, an empty work tree (git status: every file
    a staged deletion)."""
    shutil.rmtree(gitdir)
    shutil.rmtree(tree)
    git(tree.parent, "clone", "-q", "--no-checkout", "--separate-git-dir", str(gitdir),
        str(url), str(tree))  # fmt: skip


def test_half_made_nested_clone_git_left_is_repaired_not_called_local_work(
    te_fresh: Path, deep: Deep, run_qola
):
    assert run_qola("checkout", cwd=te_fresh).exit_code == 0
    top = te_fresh / "3rdparty" / "top"
    modules = te_fresh / ".git" / "modules" / "3rdparty" / "top" / "modules"
    make_half_made(top / "extern/other", modules / "other", deep.other)
    assert "extern/other" in git(top, "status", "--porcelain")
    manifest = te_fresh / "qola.toml"
    manifest.write_text(manifest.read_text().replace(deep.top_v1, deep.top_v2))
    git(te_fresh, "update-index", "--cacheinfo", f"160000,{deep.top_v2},3rdparty/top")
    res = run_qola("checkout", "-v", cwd=te_fresh)
    assert res.exit_code == 0, res.stderr
    assert head(top) == deep.top_v2
    assert head(top / "extern/other") == deep.other_v1
    assert git(top, "status", "--porcelain") == ""
    assert run_qola("verify", cwd=te_fresh).exit_code == 0


def test_half_made_dependency_git_left_is_finished_not_refused(
    te_fresh: Path, deep: Deep, run_qola
):
    """TE's own case one level up: git's clone of the submodule of the root was left
    without a checkout; qola finishes it (and is never a no-op over an empty tree)."""
    top = te_fresh / "3rdparty" / "top"
    modules = te_fresh / ".git" / "modules" / "3rdparty" / "top"
    modules.parent.mkdir(parents=True)
    top.rmdir()
    git(te_fresh, "clone", "-q", "--no-checkout", "--separate-git-dir", str(modules),
        str(deep.top), str(top))  # fmt: skip
    git(top, "update-ref", "--no-deref", "HEAD", deep.top_v1)  # HEAD even at the pin
    res = run_qola("checkout", "-v", cwd=te_fresh)
    assert res.exit_code == 0, res.stderr
    assert "3rdparty/top never finished its first checkout: finishing it" in res.stderr
    assert (top / "top.txt").read_text() == "top 1\n"
    assert_git_agrees(te_fresh, deep)


def test_second_checkout_with_a_warm_cache_fetches_nothing_nested_included(
    deep: Deep, tmp_path: Path, run_qola
):
    cache = tmp_path / "cache"
    first = fresh_clone(deep, tmp_path / "one")
    assert run_qola("checkout", "--cache", str(cache), cwd=first).exit_code == 0
    mirrors = sorted(p.name.rsplit("-", 1)[0] for p in cache.glob("*.git"))
    assert mirrors == ["deep", "mid", "other", "top"]
    second = fresh_clone(deep, tmp_path / "two")
    # Every upstream gone: the second checkout has only the cache.
    away = tmp_path / "away"
    away.mkdir()
    for repo in (deep.top, deep.mid, deep.deep, deep.other):
        shutil.move(str(repo), away / repo.name)
    try:
        res = run_qola("checkout", "--cache", str(cache), cwd=second)
    finally:
        for repo in (deep.top, deep.mid, deep.deep, deep.other):
            shutil.move(str(away / repo.name), repo)
    assert res.exit_code == 0, res.stderr
    top = second / "3rdparty" / "top"
    for tree in [top, *(top / path for path in NESTED)]:
        counts = dict(line.split(": ") for line in git(tree, "count-objects", "-v").splitlines())
        assert counts["count"] == "0" and counts["packs"] == "0", tree
    assert_git_agrees(second, deep)


def _stage(root: Path, sha: str, deep: Deep) -> None:
    git(root, "add", "3rdparty/top")


def _commit(root: Path, sha: str, deep: Deep) -> None:
    git(root, "add", "3rdparty/top")
    git(root, "commit", "-q", "-m", "use my fix")


def _pin_in_a_commit_then_back(root: Path, sha: str, deep: Deep) -> None:
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace(deep.top_v1, sha))
    git(root, "commit", "-q", "-am", "pin my fix")
    manifest.write_text(manifest.read_text().replace(sha, deep.top_v1))


@pytest.mark.parametrize(
    "record", [_stage, _commit, _pin_in_a_commit_then_back],
    ids=["gitlink-staged", "gitlink-committed", "pinned-in-head"],
)  # fmt: skip
def test_local_commit_the_root_records_is_still_local_work(te_fresh, deep, run_qola, record):
    """A fix committed in the dependency and recorded by the root (the usual way to work on
    a submodule) exists only in this repository: moving away from it refuses."""
    assert run_qola("checkout", cwd=te_fresh).exit_code == 0
    top = te_fresh / "3rdparty" / "top"
    sha = commit_file(top, "fix.txt", "my fix\n", "my fix, not pushed")
    record(te_fresh, sha, deep)
    before = snapshot(te_fresh)
    res = run_qola("checkout", cwd=te_fresh)
    assert res.exit_code == 4, res.stderr
    assert f"  commit on no branch: 3rdparty/top: {sha[:7]} my fix, not pushed\n" in res.stderr
    assert f"  git -C {top} branch keep-{sha[:7]} {sha}  # the commits in 3rdparty/top\n" in (
        res.stderr
    )
    assert snapshot(te_fresh) == before
    assert head(top) == sha


def test_local_commit_in_a_nested_submodule_of_a_nested_submodule_refuses(
    te_fresh: Path, deep: Deep, run_qola
):
    assert run_qola("checkout", cwd=te_fresh).exit_code == 0
    nested = te_fresh / "3rdparty" / "top" / "extern" / "mid" / "extern" / "deep"
    sha = commit_file(nested, "mine.txt", "mine\n", "my work, deep down")
    manifest = te_fresh / "qola.toml"
    manifest.write_text(manifest.read_text().replace(deep.top_v1, deep.top_v2))
    before = snapshot(te_fresh)
    res = run_qola("checkout", cwd=te_fresh)
    assert res.exit_code == 4
    label = "3rdparty/top/extern/mid/extern/deep"
    assert f"  commit on no branch: {label}: {sha[:7]} my work, deep down\n" in res.stderr
    assert f"  git -C {nested} branch keep-{sha[:7]} {sha}  # the commits in {label}\n" in (
        res.stderr
    )
    assert snapshot(te_fresh) == before


def test_lock_files_a_killed_git_left_in_a_reused_repository_are_removed(
    te_fresh: Path, deep: Deep, run_qola
):
    """The folder is empty, the repository in .git/modules holds the locks of a git that
    was killed there (mid-fetch: shallow.lock, mid-checkout: index.lock)."""
    git(te_fresh, "submodule", "update", "-q", "--init", "--recursive")
    git(te_fresh, "submodule", "deinit", "-q", "-f", "3rdparty/top")
    modules = te_fresh / ".git" / "modules" / "3rdparty" / "top"
    for name in ("index.lock", "shallow.lock"):
        (modules / name).write_text("")
    res = run_qola("checkout", "-v", cwd=te_fresh)
    assert res.exit_code == 0, res.stderr
    assert f"removed {modules / 'index.lock'}, left by a git that was stopped" in res.stderr
    assert not list(modules.glob("*.lock"))
    assert_git_agrees(te_fresh, deep)


def test_a_link_at_the_roots_modules_folder_is_refused_and_nothing_written_through_it(
    te_fresh: Path, tmp_path: Path, run_qola
):
    """`.git/modules` pointing out of the project (planted in a tree another user owns):
    qola would make the submodule's repository there; it refuses and writes nothing."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (te_fresh / ".git" / "modules").symlink_to(elsewhere)
    before = snapshot(te_fresh)
    res = run_qola("checkout", cwd=te_fresh)
    assert res.exit_code == 3, res.stderr
    assert "the repository of submodule '3rdparty/top' would be at" in res.stderr
    assert "a symbolic link on the way?); nothing was written" in res.stderr
    assert list(elsewhere.iterdir()) == []
    assert snapshot(te_fresh) == before


@pytest.mark.parametrize("deleted", ["3rdparty/top", "3rdparty/top/extern/mid"])
def test_a_deleted_folder_comes_back_from_the_git_dir_that_holds_it_offline(
    te_fresh: Path, deep: Deep, run_qola, deleted
):
    """`rm -rf` of a dependency or of a nested submodule: its repository is still under
    the parent's modules/ (core.worktree naming the folder, which git cannot enter). The
    next checkout restores it from there, --offline, so fetching nothing."""
    assert run_qola("checkout", cwd=te_fresh).exit_code == 0
    before = without_memory(snapshot(te_fresh))
    shutil.rmtree(te_fresh / deleted)
    res = run_qola("checkout", "--offline", cwd=te_fresh)
    assert res.exit_code == 0, res.stderr
    assert "cannot chdir" not in res.stderr
    assert_git_agrees(te_fresh, deep)
    after = without_memory(snapshot(te_fresh))
    # The same files as before (git's index stat data aside), nothing fetched.
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert {k for k in changed if not k.endswith("/index") and "/logs/" not in k} <= {
        k for k in changed if k.endswith("/ORIG_HEAD") or k.endswith("/FETCH_HEAD")
    }, sorted(changed)
    assert run_qola("verify", cwd=te_fresh).exit_code == 0


def test_an_offline_first_checkout_that_cannot_be_done_leaves_no_folder_behind(
    te_fresh: Path, run_qola
):
    shutil.rmtree(te_fresh / "3rdparty")
    before = snapshot(te_fresh)
    res = run_qola("checkout", "--offline", cwd=te_fresh)
    assert res.exit_code == 3
    assert "is not checked out and --offline forbids fetching" in res.stderr
    assert snapshot(te_fresh) == before


def test_a_root_commit_that_changes_no_pin_keeps_the_noop_stamp(te_fresh: Path, run_qola):
    """The root's branch and HEAD's commit are no part of what the stamp vouches for (its
    config is, to know the submodule is initialised): commits in the root are answered from
    the stamp, as before them."""
    from test_noop import as_cmake_runs_it, split_probe

    assert run_qola("checkout", cwd=te_fresh).exit_code == 0
    full = run_qola("checkout", cwd=te_fresh).stdout
    assert as_cmake_runs_it("checkout", cwd=te_fresh).stdout == full
    for n in range(3):
        (te_fresh / "README").write_text(f"edit {n}\n")
        git(te_fresh, "add", "README")
        git(te_fresh, "commit", "-q", "-m", f"edit {n}")
        answer = as_cmake_runs_it("checkout", cwd=te_fresh)
        assert (answer.stdout, split_probe(answer.stderr)[1]) == (full, "")  # from the stamp


def test_a_failed_restore_of_a_deleted_dependency_leaves_no_folder_behind(
    te_fresh: Path, deep: Deep, run_qola, tmp_path: Path
):
    """The folder made first for git's sake goes again when the restore fails: here the new
    pin is in neither modules/ nor the (empty) cache, and --offline forbids fetching it."""
    assert run_qola("checkout", cwd=te_fresh).exit_code == 0
    manifest = te_fresh / "qola.toml"
    if manifest.exists():
        manifest.write_text(manifest.read_text().replace(deep.top_v1, deep.top_v2))
    else:  # the legacy form keeps the pin in the gitlink
        git(te_fresh, "update-index", "--cacheinfo", f"160000,{deep.top_v2},3rdparty/top")
    shutil.rmtree(te_fresh / "3rdparty")
    cache = tmp_path / "cache"
    cache.mkdir()
    before = snapshot(te_fresh)
    res = run_qola("checkout", "--offline", "--cache", str(cache), cwd=te_fresh)
    assert res.exit_code == 3, res.stderr
    assert snapshot(te_fresh) == before
