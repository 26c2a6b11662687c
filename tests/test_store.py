"""What qola writes, and how: links planted at or above each written path lead nowhere."""

from __future__ import annotations

import errno
import os
import shutil
import threading
from pathlib import Path

import procs
import pytest
from repos import git, head, snapshot

from qola.gitrun.lock import lock_path, root_lock
from qola.repo import commitcache, gitfiles, store

VICTIM_TEXT = "the user's own file\n"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file outside every repository that a planted link points at."""
    path = tmp_path / "victim" / "precious.txt"
    path.parent.mkdir()
    path.write_text(VICTIM_TEXT)
    return path


def victim_untouched(victim: Path) -> bool:
    return victim.read_text() == VICTIM_TEXT and sorted(victim.parent.iterdir()) == [victim]


# --------------------------------------------------------------------------- the helper


def test_write_file_replaces_a_link_at_the_name_and_never_writes_its_target(tmp_path, victim):
    base = tmp_path / "gitdir"
    (base / "qola").mkdir(parents=True)
    (base / "qola" / "moving").symlink_to(victim)
    store.write_file(base / "qola" / "moving", b"record\n", base)
    assert victim_untouched(victim)
    assert not (base / "qola" / "moving").is_symlink()
    assert (base / "qola" / "moving").read_bytes() == b"record\n"
    assert sorted(p.name for p in (base / "qola").iterdir()) == ["moving"]  # no temp left


def test_write_file_stops_at_a_linked_folder_on_the_way(tmp_path, victim):
    base = tmp_path / "gitdir"
    base.mkdir()
    (base / "qola").symlink_to(victim.parent, target_is_directory=True)
    with pytest.raises(OSError) as raised:
        store.write_file(base / "qola" / "commits" / "x.json", b"{}", base)
    assert raised.value.errno == errno.ELOOP
    assert raised.value.filename == str(base / "qola")
    assert victim_untouched(victim)


def test_write_file_creates_missing_folders_and_refuses_paths_outside_its_base(tmp_path):
    base = tmp_path / "gitdir"
    base.mkdir()
    store.write_file(base / "a" / "b" / "c.json", b"1", base)
    assert (base / "a" / "b" / "c.json").read_bytes() == b"1"
    with pytest.raises(ValueError):
        store.write_file(tmp_path / "elsewhere.json", b"1", base)


def test_concurrent_writes_of_one_name_leave_one_whole_file(tmp_path):
    base = tmp_path / "gitdir"
    base.mkdir()
    payloads = [bytes([65 + i]) * 100_000 for i in range(8)]
    threads = [
        threading.Thread(target=store.write_file, args=(base / "q" / "f", data, base))
        for data in payloads
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (base / "q" / "f").read_bytes() in payloads
    assert os.listdir(base / "q") == ["f"]


def test_read_file_follows_no_link_and_never_waits_on_a_fifo(tmp_path, victim):
    base = tmp_path / "gitdir"
    base.mkdir()
    (base / "link").symlink_to(victim)
    os.mkfifo(base / "fifo")
    assert store.read_file(base / "link", base) is None
    assert store.read_file(base / "fifo", base) is None  # returns at once: no writer needed
    assert store.read_file(base / "absent", base) is None


@pytest.mark.parametrize("plant", ["symlink", "dangling symlink", "hard link", "fifo", "folder"])
def test_open_lock_refuses_anything_but_a_regular_file_of_its_own(tmp_path, victim, plant):
    lock = tmp_path / "qola.lock"
    if plant == "symlink":
        lock.symlink_to(victim)
    elif plant == "dangling symlink":
        lock.symlink_to(victim.parent / "created-by-qola")
    elif plant == "hard link":
        os.link(victim, lock)
    elif plant == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    with pytest.raises(OSError):
        store.open_lock(lock)
    assert victim_untouched(victim)


def test_backup_refs_are_unique_even_within_one_microsecond() -> None:
    names = {store.backup_ref("lib", "extern/nested", "interrupted") for _ in range(10_000)}
    assert len(names) == 10_000
    one = next(iter(names))
    assert one.startswith("refs/qola/backup/lib/extern/nested/") and one.endswith("-interrupted")
    assert git(Path.cwd(), "check-ref-format", one) == ""  # a name git accepts


# ------------------------------------------------------------------- every written path


def test_a_link_at_the_root_lock_is_refused_and_its_target_untouched(behind_pin, victim):
    lock = lock_path(behind_pin.root)
    lock.unlink(missing_ok=True)
    lock.symlink_to(victim)
    before = snapshot(behind_pin.root)
    proc = procs.run("checkout", "-m", str(behind_pin.manifest))
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.endswith(
        f"qola: {behind_pin.root}: cannot take the lock {lock}: it is a symbolic link; qola "
        f"writes only regular files of its own there\nhint: remove {lock} (qola creates it "
        "again)\n"
    )
    assert victim_untouched(victim)
    assert snapshot(behind_pin.root) == before


def test_a_hard_link_at_the_root_lock_is_refused_and_its_target_untouched(behind_pin, victim):
    lock = lock_path(behind_pin.root)
    lock.unlink(missing_ok=True)
    os.link(victim, lock)
    proc = procs.run("checkout", "-m", str(behind_pin.manifest))
    assert proc.returncode == 3
    assert "is a hard link (2 names for one file)" in proc.stderr
    assert victim_untouched(victim)


def test_the_lock_holder_never_writes_through_a_link_placed_while_it_waits(tmp_path, victim):
    """The record goes into the file descriptor qola opened, not into a path looked up again."""
    root = tmp_path / "plain"
    root.mkdir()
    with root_lock(root):
        path = store.lock_file(root, None)
        assert path.stat().st_nlink == 1
    assert victim_untouched(victim)


def _plant_link_folder(where: Path, victim: Path) -> None:
    """Replace the folder at where (made by an earlier run) with a link to the victim's."""
    import shutil

    shutil.rmtree(where, ignore_errors=True)
    where.parent.mkdir(parents=True, exist_ok=True)
    where.symlink_to(victim.parent, target_is_directory=True)


def stops_clearly(project, victim: Path, message: str, fetches: bool = False) -> None:
    """checkout exits 3 with message, the victim and the tree as they were (but for fetched
    objects, when the run fetches before it stops)."""
    before = snapshot(project.root)
    head_before = head(project.lib)
    proc = procs.run("checkout", "-m", str(project.manifest))
    assert proc.returncode == 3, proc.stderr
    assert message in proc.stderr
    assert victim_untouched(victim)
    assert head(project.lib) == head_before  # nothing was moved
    assert fetches or snapshot(project.root) == before


def test_a_linked_qola_folder_in_a_dependency_stops_the_move_clearly(behind_pin, victim):
    gitdir = gitfiles.git_dir(behind_pin.lib)
    assert gitdir is not None
    folder = store.moving_marker(gitdir).parent
    _plant_link_folder(folder, victim)
    stops_clearly(
        behind_pin,
        victim,
        f"qola: {behind_pin.lib}: cannot write {folder}: is a symbolic link or not a folder; "
        "qola writes only regular files of its own there; nothing was moved\n"
        f"hint: remove {folder} (qola makes its own)\n",
    )


def test_a_link_at_the_move_record_stops_the_next_run_and_removes_nothing(behind_pin, victim):
    gitdir = gitfiles.git_dir(behind_pin.lib)
    assert gitdir is not None
    marker = store.moving_marker(gitdir)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.symlink_to(victim)
    (gitdir / "index.lock").write_text("")  # what repair would remove after a real kill
    stops_clearly(
        behind_pin,
        victim,
        f"qola: {behind_pin.lib}: found {marker}, but it is not a regular file qola can read; "
        "qola will not guess what the run that left it was doing, so it removes nothing\n"
        f"hint: check the repository (git -C {behind_pin.lib} status), remove {marker}, and "
        "run again\n",
    )


def test_a_link_at_a_cache_file_is_replaced_not_followed(behind_pin, victim, upstream):
    gitdir = gitfiles.git_dir(behind_pin.lib)
    assert gitdir is not None
    planted = commitcache.record_file(gitdir, "commits", upstream.lib_tip)
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.symlink_to(victim)
    proc = procs.run("checkout", "-m", str(behind_pin.manifest))
    assert proc.returncode == 0, proc.stderr
    assert head(behind_pin.lib) == upstream.lib_tip
    assert victim_untouched(victim)
    assert not planted.is_symlink()  # it holds what the commit records now
    assert procs.run("verify", "-m", str(behind_pin.manifest)).returncode == 0


def test_a_linked_commit_cache_folder_is_only_slower(behind_pin, victim, upstream):
    gitdir = gitfiles.git_dir(behind_pin.lib)
    assert gitdir is not None
    _plant_link_folder(commitcache.record_file(gitdir, "commits", "x").parent, victim)
    proc = procs.run("checkout", "-m", str(behind_pin.manifest))
    assert proc.returncode == 0, proc.stderr
    assert head(behind_pin.lib) == upstream.lib_tip
    assert victim_untouched(victim)
    assert procs.run("verify", "-m", str(behind_pin.manifest)).returncode == 0


def test_a_linked_series_folder_stops_the_move_clearly(behind_pin, victim, upstream, tmp_path):
    """A series' record is how its result is recognised later: not a cache to skip."""
    patches = behind_pin.root / "patches"
    patches.mkdir()
    (patches / "0001-add.patch").write_text(
        "--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1 @@\n+added\n"
    )
    behind_pin.manifest.write_text(behind_pin.manifest.read_text() + 'patches = "patches"\n')
    gitdir = gitfiles.git_dir(behind_pin.lib)
    assert gitdir is not None
    folder = commitcache.record_file(gitdir, "series", "x").parent
    _plant_link_folder(folder, victim)
    stops_clearly(
        behind_pin,
        victim,
        f"qola: {gitdir}: cannot record the result of the patch series in {folder}: is a "
        "symbolic link or not a folder; qola writes only regular files of its own there\n"
        f"hint: remove {folder}\n",
        fetches=True,
    )


def test_a_linked_noop_stamp_folder_is_only_slower(pinned_clean, victim):
    gitdir = gitfiles.git_dir(pinned_clean.root)
    assert gitdir is not None
    _plant_link_folder(store.noop_stamps(gitdir), victim)
    for _ in range(2):
        proc = procs.run("checkout", "-m", str(pinned_clean.manifest))
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.endswith("up to date\n")
    assert victim_untouched(victim)


def test_a_link_at_a_noop_stamp_is_replaced_not_followed(pinned_by_qola, victim):
    # A tree qola checked out: it remembers the pin's gitlinks, which a stamp needs.
    gitdir = gitfiles.git_dir(pinned_by_qola.root)
    assert gitdir is not None
    first = procs.run("checkout", "-m", str(pinned_by_qola.manifest))
    assert first.returncode == 0
    [stamp] = store.noop_stamps(gitdir).iterdir()
    stamp.unlink()
    stamp.symlink_to(victim)
    again = procs.run("checkout", "-m", str(pinned_by_qola.manifest))
    assert again.returncode == 0 and again.stdout == first.stdout
    assert victim_untouched(victim)
    assert not stamp.is_symlink()


def test_a_link_at_the_cmake_results_file_is_replaced_not_followed(pinned_clean, victim, tmp_path):
    results = tmp_path / "build" / "qola-results.cmake"
    results.parent.mkdir()
    results.symlink_to(victim)
    for argv in (["checkout"], ["verify"]):
        proc = procs.run(*argv, "-m", str(pinned_clean.manifest), "--cmake-out", str(results))
        assert proc.returncode == 0, proc.stderr
        assert victim_untouched(victim)
        assert not results.is_symlink()
        assert "QOLA_LIB_SHA" in results.read_text()
        results.unlink()
        results.symlink_to(victim)


def test_a_link_at_a_cache_mirrors_lock_is_refused_and_its_target_untouched(
    make_project, upstream, victim, tmp_path
):
    """A --cache folder may be shared between users: its locks are opened like the root's."""
    project = make_project()
    cache = tmp_path / "cache"
    cache.mkdir()
    lock = store.mirror_lock(store.mirror_path(cache, str(upstream.lib)))
    lock.symlink_to(victim)
    proc = procs.run("checkout", "--cache", str(cache), "-m", str(project.manifest))
    assert proc.returncode == 3, proc.stderr
    assert (
        f"qola: {lock}: cannot open the cache's lock: is a symbolic link; qola writes only "
        f"regular files of its own there\nhint: remove {lock} (qola creates it again)\n"
    ) in proc.stderr
    assert victim_untouched(victim)
    assert not (project.root / "3rdparty" / "lib").exists()


# --------------------------------------------------------------------------- git's writes


def valid_victim(victim: Path, like: Path) -> None:
    """Make the victim a copy of a file git would accept (and so write) at that name."""
    victim.write_bytes(like.read_bytes())


# (planted name below the dependency's git dir, a file git reads there first or None)
PLANTED = {
    "index": "index",  # checkout: lockfile.c follows the link, the target is replaced
    "logs-HEAD": "logs/HEAD",  # checkout: the reflog is appended to through the link
    "FETCH_HEAD": None,  # fetch: truncated and written through the link
    "shallow": "shallow",  # fetch --depth 1: replaced through the link
}


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_a_link_where_git_writes_in_a_dependency_stops_the_move_clearly(
    case, behind_pin, victim, upstream
):
    gitdir = gitfiles.git_dir(behind_pin.lib)
    assert gitdir is not None
    name = "FETCH_HEAD" if case == "FETCH_HEAD" else PLANTED[case]
    assert name is not None
    planted = gitdir / name
    if planted.exists():
        valid_victim(victim, planted)
        planted.unlink()
    planted.symlink_to(victim)
    content = victim.read_bytes()
    before = snapshot(behind_pin.root)
    proc = procs.run("checkout", "-m", str(behind_pin.manifest))
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr == (
        f"qola: lib: move 3rdparty/lib from {head(behind_pin.lib)[:12]} to "
        f"{upstream.lib_tip[:12]}\n"
        f"qola: lib: fetching {upstream.lib_tip[:12]} (depth 1)\n"
        f"qola: {behind_pin.lib}: {planted} is a symbolic link (to {victim}); git would write "
        "where it leads (`git fetch`), and qola runs no git that writes in this repository "
        "as it is\n"
        "hint: if you did not put it there, remove it (git makes its own) and run again\n"
        "qola: 1 of 1 dependency failed: lib\n"
    )
    assert victim.read_bytes() == content and sorted(victim.parent.iterdir()) == [victim]
    assert snapshot(behind_pin.root) == before


def test_a_linked_refs_folder_gets_no_pin_or_backup_ref_through_it(
    pinned_by_qola, upstream, victim
):
    """refs/qola a link: --force would have created refs/qola/pins/<sha> and a backup ref
    wherever it leads (git update-ref makes the folders on the way)."""
    project = pinned_by_qola
    gitdir = gitfiles.git_dir(project.lib)
    assert gitdir is not None
    _plant_link_folder(gitdir / "refs" / "qola", victim)
    (project.lib / "README").write_text("an edit --force saves first\n")
    project.set_pin(upstream.lib_v2, upstream.lib_v1)
    before = snapshot(project.root)
    proc = procs.run("checkout", "--force", "-m", str(project.manifest))
    assert proc.returncode == 3, proc.stderr
    assert f": {gitdir / 'refs' / 'qola'} is a symbolic link (to {victim.parent}); " in (
        proc.stderr
    )
    assert victim_untouched(victim)
    assert snapshot(project.root) == before


def test_a_linked_config_of_a_reused_submodule_git_dir_is_never_written(
    tmp_path, upstream, victim
):
    """The root's submodule, its folder emptied: the next checkout reuses its git dir and
    sets core.worktree with `git config --file`, which would rewrite the link's target."""
    from superprojects import legacy_superproject

    root = legacy_superproject(tmp_path / "root", upstream.lib, upstream.lib_v2)
    manifest = root / "qola.toml"
    assert procs.run("checkout", "-m", str(manifest)).returncode == 0
    gitdir = root / ".git" / "modules" / "3rdparty" / "lib"
    valid_victim(victim, gitdir / "config")
    git(root, "config", "--file", str(victim), "--unset", "core.worktree")
    content = victim.read_bytes()
    (gitdir / "config").unlink()
    (gitdir / "config").symlink_to(victim)
    shutil.rmtree(root / "3rdparty" / "lib")
    (root / "3rdparty" / "lib").mkdir()
    proc = procs.run("checkout", "-m", str(manifest))
    assert proc.returncode == 3, proc.stderr
    assert f"qola: lib: {gitdir / 'config'} is a symbolic link (to {victim}); git would " in (
        proc.stderr
    )
    assert victim.read_bytes() == content


@pytest.mark.parametrize(
    "name",
    ["config", "index", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "packed-refs", "shallow", "logs/HEAD",
     "refs", "logs/refs", "objects/pack", "objects/info", "objects/ab", "refs/qola",
     "logs/refs/qola", "refs/qola/pins/x",
     # fetch from a named remote updates its remote-tracking ref and appends to its reflog
     "refs/remotes/origin", "logs/refs/remotes/origin/main", "refs/tags"],
)  # fmt: skip
def test_git_write_problem_names_every_link_where_git_writes(name, tmp_path, victim):
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    gitdir = repo / ".git"
    assert store.git_write_problem(gitdir, ("refs/qola/pins/x",)) is None
    planted = gitdir / name
    planted.parent.mkdir(parents=True, exist_ok=True)
    if planted.is_dir():
        shutil.rmtree(planted)
    planted.unlink(missing_ok=True)
    planted.symlink_to(victim)
    refs = ("refs/qola/pins/x",) if name == "refs/qola/pins/x" else ()
    assert store.git_write_problem(gitdir, refs) == (
        f"{planted} is a symbolic link (to {victim})"
    )


def test_git_write_problem_names_a_hard_link_or_a_fifo_where_git_writes_a_file(tmp_path, victim):
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    reflog = repo / ".git" / "logs" / "refs" / "remotes" / "origin" / "main"
    reflog.parent.mkdir(parents=True)
    os.link(victim, reflog)  # appended to in place
    assert store.git_write_problem(repo / ".git") == (
        f"{reflog} is a hard link (2 names for one file)"
    )
    reflog.unlink()
    os.link(victim, repo / ".git" / "FETCH_HEAD")
    assert store.git_write_problem(repo / ".git") == (
        f"{repo / '.git' / 'FETCH_HEAD'} is a hard link (2 names for one file)"
    )
    (repo / ".git" / "FETCH_HEAD").unlink()
    os.mkfifo(repo / ".git" / "FETCH_HEAD")
    assert store.git_write_problem(repo / ".git") == (
        f"{repo / '.git' / 'FETCH_HEAD'} is not a regular file"
    )


def test_stale_locks_are_removed_only_in_the_repository_not_where_a_linked_refs_leads(
    tmp_path, victim
):
    from qola.sync import submodules

    gitdir = tmp_path / "sub.git"
    git(tmp_path, "init", "-q", "--bare", str(gitdir))
    (gitdir / "shallow.lock").write_text("")
    (gitdir / "refs" / "heads" / "x.lock").write_text("")
    lock_elsewhere = victim.parent / "theirs.lock"
    lock_elsewhere.write_text("")
    shutil.rmtree(gitdir / "refs" / "tags")
    (gitdir / "refs" / "tags").symlink_to(victim.parent, target_is_directory=True)
    assert sorted(submodules.remove_stale_locks(gitdir)) == [
        gitdir / "refs" / "heads" / "x.lock", gitdir / "shallow.lock"
    ]
    shutil.rmtree(gitdir / "refs")
    (gitdir / "refs").symlink_to(victim.parent, target_is_directory=True)
    assert submodules.remove_stale_locks(gitdir) == []
    assert lock_elsewhere.exists()


def test_a_dependencys_own_housekeeping_settings_never_run_gc_through_a_planted_link(
    behind_pin, victim
):
    """git fetch runs `gc --auto` when the repository's config says it is due; gc writes
    gc.pid through a lock file that follows a link at the name (the target is replaced).
    qola's git does no automatic housekeeping, whatever the repository's config says."""
    lib = behind_pin.lib
    git(lib, "repack", "-q")  # one pack; the fetch keeps its own (unpackLimit 1): two
    for key, value in {"gc.autoPackLimit": "1", "gc.autoDetach": "false",
                       "fetch.unpackLimit": "1", "transfer.unpackLimit": "1"}.items():  # fmt: skip
        git(lib, "config", key, value)
    gitdir = gitfiles.git_dir(lib)
    assert gitdir is not None
    (gitdir / "gc.pid").symlink_to(victim)
    proc = procs.run("checkout", "-m", str(behind_pin.manifest))
    assert proc.returncode == 0, proc.stderr
    assert "Auto packing" not in proc.stderr
    assert victim_untouched(victim)
    assert len(list((gitdir / "objects" / "pack").glob("*.pack"))) == 2  # no gc ran


def test_a_link_among_what_fetch_writes_beside_the_objects_stops_the_run(behind_pin, victim):
    """objects/info/commit-graphs a link out of the project, and the dependency's own config
    asking fetch for a commit-graph: git would write the chain where the link leads."""
    lib = behind_pin.lib
    git(lib, "config", "fetch.writeCommitGraph", "true")
    gitdir = gitfiles.git_dir(lib)
    assert gitdir is not None
    link = gitdir / "objects" / "info" / "commit-graphs"
    link.symlink_to(victim.parent, target_is_directory=True)
    before = snapshot(behind_pin.root)
    proc = procs.run("checkout", "-m", str(behind_pin.manifest))
    assert proc.returncode == 3, proc.stderr
    assert f"{link} is a symbolic link (to {victim.parent})" in proc.stderr
    assert victim_untouched(victim)
    assert snapshot(behind_pin.root) == before

