"""`checkout --jobs N` and `--cache DIR`, with real clones."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import Upstream
from repos import commit_file, git, head, init_repo, snapshot

from qola.repo import store


def multi_project(root: Path, deps: dict[str, tuple[str, str]]) -> Path:
    """A superproject pinning each name to (url, commit) at 3rdparty/<name>."""
    init_repo(root)
    text = "".join(
        f'[deps.{name}]\npath = "3rdparty/{name}"\nurl = "{url}"\ncommit = "{sha}"\n\n'
        for name, (url, sha) in deps.items()
    )
    (root / "qola.toml").write_text(text)
    return root / "qola.toml"


def test_jobs_clone_in_parallel_and_report_failures_in_manifest_order(
    tmp_path, upstream: Upstream, run_qola
):
    lib = str(upstream.lib)
    manifest = multi_project(
        tmp_path / "project",
        {
            "a": (lib, upstream.lib_v1),
            "gone": (str(tmp_path / "no-such-repo"), upstream.lib_v2),
            "b": (lib, upstream.lib_v2),
            "c": (lib, upstream.lib_tip),
        },
    )
    res = run_qola("checkout", "--jobs", "3", "-m", str(manifest))
    assert res.exit_code == 3
    root = manifest.parent
    assert head(root / "3rdparty/a") == upstream.lib_v1
    assert head(root / "3rdparty/b") == upstream.lib_v2
    assert head(root / "3rdparty/c") == upstream.lib_tip
    assert not (root / "3rdparty/gone").exists()
    assert not list((root / "3rdparty").glob(".*qola-clone*"))
    assert "qola: gone: `git fetch" in res.stderr
    assert res.stderr.endswith("qola: 1 of 4 dependencies failed: gone\n")
    assert [line.split()[0] for line in res.stdout.splitlines()] == ["a", "b", "c"]


def test_jobs_must_be_a_positive_number(pinned_clean, run_qola):
    before = snapshot(pinned_clean.root)
    res = run_qola("checkout", "--jobs", "0", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 2
    assert "Invalid value for '-j' / '--jobs': 0 is not in the range x>=1." in res.stderr
    assert snapshot(pinned_clean.root) == before


def test_second_checkout_with_cache_borrows_and_fetches_nothing(
    tmp_path, upstream: Upstream, run_qola
):
    source = tmp_path / "upstream-lib"
    shutil.copytree(upstream.lib, source)
    cache = tmp_path / "cache"
    first = multi_project(tmp_path / "one", {"lib": (str(source), upstream.lib_v2)})
    res = run_qola("checkout", "--cache", str(cache), "-m", str(first))
    assert res.exit_code == 0, res.stderr
    (mirror,) = cache.glob("upstream-lib-*.git")
    pin_ref = store.pin_ref(upstream.lib_v2)
    assert git(mirror, "rev-parse", pin_ref) == upstream.lib_v2

    # The upstream is gone: a second folder still checks out, from the cache alone.
    shutil.rmtree(source)
    second = multi_project(tmp_path / "two", {"lib": (str(source), upstream.lib_v2)})
    res = run_qola("checkout", "-m", str(second), env={"QOLA_CACHE_DIR": str(cache)})
    assert res.exit_code == 0, res.stderr
    lib = second.parent / "3rdparty" / "lib"
    assert head(lib) == upstream.lib_v2
    assert (lib / ".git/objects/info/alternates").read_text() == f"{mirror / 'objects'}\n"
    counts = dict(
        line.split(": ") for line in git(lib, "count-objects", "-v").splitlines()
    )
    assert counts["count"] == "0" and counts["packs"] == "0"
    assert run_qola("verify", "-m", str(second)).exit_code == 0


def test_offline_clone_from_cache_and_missing_pin_offline_is_exit_3(
    tmp_path, upstream: Upstream, run_qola
):
    cache = tmp_path / "cache"
    first = multi_project(tmp_path / "one", {"lib": (str(upstream.lib), upstream.lib_v1)})
    assert run_qola("checkout", "--cache", str(cache), "-m", str(first)).exit_code == 0
    second = multi_project(tmp_path / "two", {"lib": (str(upstream.lib), upstream.lib_v1)})
    res = run_qola("checkout", "--offline", "--cache", str(cache), "-m", str(second))
    assert res.exit_code == 0, res.stderr

    # A pin the mirror lacks: offline says so and changes nothing.
    missing = "0123456789abcdef0123456789abcdef01234567"
    third = multi_project(tmp_path / "three", {"lib": (str(upstream.lib), missing)})
    before = snapshot(tmp_path)
    res = run_qola("checkout", "--offline", "--cache", str(cache), "-m", str(third))
    assert res.exit_code == 3
    assert f"qola: lib: commit {missing} is not in the cache (" in res.stderr
    assert "--offline forbids fetching it\nhint: run once without --offline\n" in res.stderr
    assert snapshot(tmp_path) == before


def test_existing_borrowing_dep_fetches_a_new_pin_into_the_cache(
    tmp_path, upstream: Upstream, run_qola
):
    source = tmp_path / "upstream-lib"
    shutil.copytree(upstream.lib, source)
    cache = tmp_path / "cache"
    manifest = multi_project(tmp_path / "one", {"lib": (str(source), upstream.lib_v1)})
    assert run_qola("checkout", "--cache", str(cache), "-m", str(manifest)).exit_code == 0
    newer = commit_file(source, "later.txt", "made after the mirror\n")
    manifest.write_text(manifest.read_text().replace(upstream.lib_v1, newer))
    res = run_qola("checkout", "-v", "--cache", str(cache), "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert f"lib: {newer[:12]} fetched into the cache" in res.stderr
    lib = manifest.parent / "3rdparty/lib"
    assert head(lib) == newer
    assert git(lib, "count-objects").startswith("0 objects")


def test_cache_folder_that_cannot_be_created_exits_3_and_changes_nothing(
    tmp_path, upstream: Upstream, run_qola
):
    manifest = multi_project(tmp_path / "project", {"a": (str(upstream.lib), upstream.lib_v2)})
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache's parent should be\n")
    before = snapshot(tmp_path)
    res = run_qola("checkout", "--cache", str(blocker / "cache"), "-m", str(manifest))
    assert res.exit_code == 3
    assert f"qola: a: cannot create the cache folder {blocker / 'cache'}:" in res.stderr
    assert "Not a directory" in res.stderr
    assert snapshot(tmp_path) == before  # no clone, no 3rdparty/, the file untouched


def test_failed_first_clone_leaves_no_empty_parent_folder(tmp_path, upstream: Upstream, run_qola):
    root = tmp_path / "project"
    init_repo(root)
    manifest = root / "qola.toml"
    manifest.write_text(
        f'[deps.gone]\npath = "3rdparty/deep/gone"\nurl = "{tmp_path / "no-such-repo"}"\n'
        f'commit = "{upstream.lib_v2}"\n'
    )
    before = snapshot(tmp_path)
    res = run_qola("checkout", "-m", str(manifest))
    assert res.exit_code == 3
    assert "qola: gone: `git fetch" in res.stderr
    assert snapshot(tmp_path) == before
    assert not (root / "3rdparty").exists()


def test_a_first_fill_of_the_cache_fetches_the_pin_one_commit_deep_nested_included(
    tmp_path, upstream: Upstream, run_qola
):
    """Not the upstream's branches, tags and history: what a checkout without the cache
    fetches, no more. The clone borrowing from the mirror sees its history cut there too."""
    cache = tmp_path / "cache"
    manifest = multi_project(tmp_path / "one", {"lib": (str(upstream.lib), upstream.lib_v1)})
    res = run_qola("checkout", "--cache", str(cache), "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    mirror = store.mirror_path(cache, str(upstream.lib))
    nested_mirror = store.mirror_path(cache, str(upstream.nested))
    for repo, pin in ((mirror, upstream.lib_v1), (nested_mirror, upstream.nested_v1)):
        assert git(repo, "for-each-ref", "--format=%(refname)") == store.pin_ref(pin)
        assert git(repo, "rev-list", "--all") == pin
        assert (repo / "shallow").read_text() == f"{pin}\n"
    lib = manifest.parent / "3rdparty" / "lib"
    nested = lib / "extern" / "nested"
    for repo, pin in ((lib, upstream.lib_v1), (nested, upstream.nested_v1)):
        assert git(repo, "rev-list", "HEAD") == pin  # a walk stops at the cut: no lost parent
        assert git(repo, "fsck", "--connectivity-only", "--no-dangling") == ""
    assert run_qola("verify", "-m", str(manifest)).exit_code == 0


def test_a_pin_another_checkout_put_in_the_cache_is_checked_out_with_its_history_cut(
    tmp_path, upstream: Upstream, run_qola
):
    """One folder at v1, another fills the cache with v2 (a commit whose parents the
    mirror lacks); the first then moves to v2 from the mirror, fetching nothing, and git
    walks its history without missing a parent."""
    cache = tmp_path / "cache"
    one = multi_project(tmp_path / "one", {"lib": (str(upstream.lib), upstream.lib_v1)})
    assert run_qola("checkout", "--cache", str(cache), "-m", str(one)).exit_code == 0
    two = multi_project(tmp_path / "two", {"lib": (str(upstream.lib), upstream.lib_v2)})
    assert run_qola("checkout", "--cache", str(cache), "-m", str(two)).exit_code == 0
    mirror = store.mirror_path(cache, str(upstream.lib))
    assert sorted(git(mirror, "rev-list", "--all").split()) == sorted(
        [upstream.lib_v1, upstream.lib_v2]
    )
    one.write_text(one.read_text().replace(upstream.lib_v1, upstream.lib_v2))
    res = run_qola("checkout", "-v", "--cache", str(cache), "-m", str(one))
    assert res.exit_code == 0, res.stderr
    assert f"lib: {upstream.lib_v2[:12]} is present locally: no fetch" in res.stderr
    lib = one.parent / "3rdparty" / "lib"
    assert head(lib) == upstream.lib_v2
    assert git(lib, "rev-list", "HEAD") == upstream.lib_v2
    assert git(lib, "fsck", "--connectivity-only", "--no-dangling") == ""
    assert git(lib, "count-objects").startswith("0 objects")
    # And on to a pin neither has: fetched into the cache, one commit deep.
    one.write_text(one.read_text().replace(upstream.lib_v2, upstream.lib_tip))
    res = run_qola("checkout", "-v", "--cache", str(cache), "-m", str(one))
    assert res.exit_code == 0, res.stderr
    assert f"lib: {upstream.lib_tip[:12]} fetched into the cache" in res.stderr
    assert git(lib, "rev-list", "HEAD") == upstream.lib_tip
    assert run_qola("verify", "-m", str(one)).exit_code == 0
    assert run_qola("verify", "-m", str(two)).exit_code == 0
