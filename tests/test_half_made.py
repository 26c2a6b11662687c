"""Repositories with no index (HEAD names a commit): finished with -f only when their files
are HEAD's, some missing; otherwise local work like any other (exit 4, listed; --force
saves it). The fast paths see the index go."""

from __future__ import annotations

import shutil
from pathlib import Path

import gitpause
import pytest
from procs import noop_declined as declined
from repos import commit_file, git, head, snapshot, without_noop_stamps
from stamp_checkers import cmake_holds
from test_cmake import _pypi_cmake
from test_kills import backups_holding, calls_of, nth_call

from qola.repo import store

MY_EDIT = "my edit, never committed\n"


@pytest.fixture(scope="module")
def wrapper(tmp_path_factory: pytest.TempPathFactory) -> gitpause.Wrapper:
    return gitpause.make(tmp_path_factory.mktemp("git-wrapper"))


def lose_index(tree: Path) -> None:
    """`rm .git/index` in a repository qola checked out (the usual cure for a corrupt one)."""
    gitdir = Path(git(tree, "rev-parse", "--absolute-git-dir"))
    (gitdir / "index").unlink()


def test_a_lost_index_is_seen_by_both_stamps_and_the_look_from_files(pinned_by_qola):
    results = pinned_by_qola.root / "build" / "results.cmake"
    assert not declined(["checkout", "--cmake-out", str(results)], pinned_by_qola.root)
    assert cmake_holds(_pypi_cmake("newest"), results)
    lose_index(pinned_by_qola.lib)
    assert declined(["checkout", "--cmake-out", str(results)], pinned_by_qola.root)
    assert not cmake_holds(_pypi_cmake("newest"), results)


def test_checkout_without_index_refuses_to_move_over_an_edit_and_changes_nothing(
    pinned_by_qola, upstream, run_qola
):
    lib = pinned_by_qola.lib
    (lib / "README").write_text(MY_EDIT)
    lose_index(lib)
    pinned_by_qola.set_pin(upstream.lib_v2, upstream.lib_v1)
    before = without_noop_stamps(snapshot(pinned_by_qola.root))
    res = run_qola("checkout", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 4, res.stderr
    assert (
        f"qola: lib: moving 3rdparty/lib to {upstream.lib_v1[:12]} would lose local work:\n"
        "  uncommitted: 3rdparty/lib/README (modified)\n"
        "nothing was changed; to keep that work, save it first:\n"
        f"  git -C {lib} reset -q  # 3rdparty/lib has no index: one from HEAD, the files left "
        "as they are\n"
        f"  git -C {lib} stash push -m 'before qola'  # the changes in 3rdparty/lib\n"
    ) in res.stderr
    assert without_noop_stamps(snapshot(pinned_by_qola.root)) == before
    assert (lib / "README").read_text() == MY_EDIT


def test_checkout_without_index_refuses_to_move_over_an_untracked_file(
    pinned_by_qola, upstream, run_qola
):
    lib = pinned_by_qola.lib
    (lib / "notes.txt").write_text("my notes\n")
    lose_index(lib)
    before = without_noop_stamps(snapshot(pinned_by_qola.root))
    res = run_qola("checkout", "-m", str(pinned_by_qola.manifest))  # at its pin: finishing it
    assert res.exit_code == 4, res.stderr
    assert "  uncommitted: 3rdparty/lib/notes.txt (untracked)\n" in res.stderr
    assert without_noop_stamps(snapshot(pinned_by_qola.root)) == before


def test_checkout_without_index_refuses_to_move_off_a_commit_of_its_own(
    pinned_by_qola, upstream, run_qola
):
    lib = pinned_by_qola.lib
    sha = commit_file(lib, "mine.txt", "mine\n", "my fix")
    lose_index(lib)
    before = without_noop_stamps(snapshot(pinned_by_qola.root))
    res = run_qola("checkout", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 4, res.stderr
    assert f"  commit on no branch: 3rdparty/lib: {sha[:7]} my fix\n" in res.stderr
    assert without_noop_stamps(snapshot(pinned_by_qola.root)) == before


def test_checkout_force_without_index_saves_the_edit_then_moves(
    pinned_by_qola, upstream, run_qola
):
    lib = pinned_by_qola.lib
    (lib / "README").write_text(MY_EDIT)
    lose_index(lib)
    pinned_by_qola.set_pin(upstream.lib_v2, upstream.lib_v1)
    res = run_qola("checkout", "--force", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(lib) == upstream.lib_v1
    assert backups_holding(lib, store.backup_prefix("lib"), "README", MY_EDIT)
    assert run_qola("verify", "-m", str(pinned_by_qola.manifest)).exit_code == 0


def test_checkout_force_without_index_leaves_an_untracked_file_where_it_is(
    pinned_by_qola, upstream, run_qola
):
    """--force gives the tree an index from HEAD and moves without -f: the user's new file,
    at a path neither commit has, is neither overwritten nor removed."""
    lib = pinned_by_qola.lib
    (lib / "notes.txt").write_text("my notes\n")
    lose_index(lib)
    pinned_by_qola.set_pin(upstream.lib_v2, upstream.lib_v1)
    res = run_qola("checkout", "--force", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(lib) == upstream.lib_v1
    assert (lib / "notes.txt").read_text() == "my notes\n"
    assert git(lib, "status", "--porcelain") == "?? notes.txt"


def test_checkout_without_index_and_files_missing_only_is_finished(
    pinned_by_qola, upstream, run_qola
):
    lib = pinned_by_qola.lib
    lose_index(lib)
    (lib / "lib.txt").unlink()  # as a checkout killed half-way leaves it
    res = run_qola("checkout", "-v", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 0, res.stderr
    assert "qola: lib: finish the first checkout of 3rdparty/lib at " in res.stderr
    assert "3rdparty/lib never finished its first checkout: finishing it" in res.stderr
    assert (lib / "lib.txt").read_text() == "lib v2\n"
    assert git(lib, "status", "--porcelain") == ""
    assert git(lib, "for-each-ref", store.backup_prefix("lib")) == ""
    assert run_qola("verify", "-m", str(pinned_by_qola.manifest)).exit_code == 0


def test_checkout_nested_without_index_refuses_to_move_over_an_edit(
    pinned_by_qola, upstream, run_qola
):
    nested = pinned_by_qola.nested
    (nested / "nested.txt").write_text(MY_EDIT)
    lose_index(nested)
    pinned_by_qola.set_pin(upstream.lib_v2, upstream.lib_v1)
    before = without_noop_stamps(snapshot(pinned_by_qola.root))
    res = run_qola("checkout", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 4, res.stderr
    assert "  uncommitted: 3rdparty/lib/extern/nested/nested.txt (modified)\n" in res.stderr
    assert f"  git -C {nested} reset -q  # 3rdparty/lib/extern/nested has no index" in res.stderr
    assert without_noop_stamps(snapshot(pinned_by_qola.root)) == before


def test_checkout_never_forces_over_files_in_a_nested_repository_with_no_commit(
    pinned_by_qola, upstream, run_qola
):
    """The nested folder's repository has no commit yet (HEAD unborn, no index) and holds
    a file of someone's: git's plain checkout refuses to overwrite it, qola never forces."""
    nested = pinned_by_qola.nested
    git(nested, "symbolic-ref", "HEAD", "refs/heads/unborn")
    lose_index(nested)
    for child in nested.iterdir():
        if child.name != ".git":
            child.unlink()
    (nested / "nested.txt").write_text("mine, in a repository with no commit\n")
    res = run_qola("checkout", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 3, res.stderr
    assert "untracked working tree files would be overwritten" in res.stderr
    assert (nested / "nested.txt").read_text() == "mine, in a repository with no commit\n"


def test_a_nested_repository_killed_while_a_clone_populates_it_is_finished(
    wrapper, make_project, upstream, tmp_path, run_qola
):
    """A kill between HEAD and the index of qola's own population of a nested submodule
    during a first clone (no record of a move: the clone's own folder is new), its commit
    borrowed from a --cache mirror (no `shallow` file, no ref but qola's). The next run
    finishes it: nothing in it is taken for the user's. (--offline: nothing is fetched
    beside the checkout, so the git calls come in the same order every time.)"""
    template = make_project().root
    caches = [tmp_path / "cache-for-counting", tmp_path / "cache"]
    for cache in caches:  # each warmed by a checkout of its own
        warm = tmp_path / f"warm-{cache.name}" / "project"
        shutil.copytree(template, warm, symlinks=True)
        warmed = run_qola("checkout", "--cache", str(cache), "-m", str(warm / "qola.toml"))
        assert warmed.exit_code == 0, warmed.stderr
        # Whole histories, as the mirrors of an older qola hold them: a repository that
        # borrows from one gets no `shallow` file (one cut at depth 1 would share its own).
        for url in (str(upstream.lib), str(upstream.nested)):
            git(store.mirror_path(cache, url), "fetch", "-q", "--unshallow", url)
    calls = calls_of(wrapper, template, tmp_path / "counting" / "project", "checkout",
                     "--offline", "--cache", str(caches[0]))  # fmt: skip
    at = nth_call(calls, "checkout -f -q --detach", 1)
    root = tmp_path / "killed" / "project"
    shutil.copytree(template, root, symlinks=True)
    manifest = str(root / "qola.toml")
    killed, paused = gitpause.run_until(wrapper, at, "checkout", "--offline", "--cache",
                                        str(caches[1]), "-m", manifest)  # fmt: skip
    assert killed and "checkout -f -q --detach" in paused
    nested = root / "3rdparty" / "lib" / "extern" / "nested"
    nested_gitdir = Path(git(nested, "rev-parse", "--absolute-git-dir"))
    assert not (nested_gitdir / "index").exists() and not (nested_gitdir / "shallow").exists()
    res = run_qola("checkout", "--offline", "--cache", str(caches[1]), "-m", manifest)
    assert res.exit_code == 0, res.stderr
    assert head(nested) == upstream.nested_v2
    assert git(nested, "status", "--porcelain") == ""


def test_verify_without_index_names_the_missing_index_and_only_what_differs_from_head(
    pinned_by_qola, run_qola
):
    """git status without an index calls every file a staged deletion: verify says what
    is wrong (the index) and which files really differ from HEAD."""
    lib = pinned_by_qola.lib
    (lib / "README").write_text(MY_EDIT)
    lose_index(lib)
    before = snapshot(pinned_by_qola.root)
    res = run_qola("verify", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 1, res.stderr
    assert res.stdout.splitlines()[1:3] == [
        "     dirty: no index (its first checkout never finished, or .git/index was removed)",
        "     dirty: README: modified",
    ]
    assert ".gitmodules" not in res.stdout
    assert snapshot(pinned_by_qola.root) == before
