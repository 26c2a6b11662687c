"""`qola checkout`: clone, fetch, move, protect local work, and the no-op."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from repos import PROTOCOL_V0, commit_file, git, head, ran, snapshot, without_noop_stamps

from qola.repo import store


def test_checkout_clones_missing_dep_with_nested_submodules(make_project, upstream, run_qola):
    project = make_project()
    res = run_qola("checkout", "-v", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(project.lib) == upstream.lib_v2
    assert head(project.nested) == upstream.nested_v2
    assert (
        res.stdout == f"lib 3rdparty/lib {upstream.lib_v2[:12]} cloned {upstream.lib}\n"
    )
    # Only the pinned commit was fetched, by SHA, one commit deep.
    assert "fetched" in res.stderr and "by SHA (depth 1)" in res.stderr
    assert git(project.lib, "rev-list", "--count", "HEAD") == "1"
    assert not list(project.lib.parent.glob(".*qola-clone*"))


# The first fetch of a pin: by SHA, one commit deep, without git's own submodule fetching.
FETCH = "git fetch -q --no-tags --no-recurse-submodules --depth 1 --end-of-options"
# As it runs: its progress read (--progress, which ran() leaves out), without -q, which
# would keep git from reporting the bytes received.
RUN_FETCH = FETCH.replace("fetch -q ", "fetch ")


def test_checkout_fresh_clone_fetches_nested_by_sha_at_depth_1_in_gits_layout(
    make_project, upstream, run_qola
):
    """No `git submodule update` (a full clone of the nested history): the gitlink is
    fetched by SHA, one commit deep, into the layout git's own update makes."""
    project = make_project()
    res = run_qola("checkout", "-v", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(project.nested) == upstream.nested_v2
    commands = ran(res.stderr)
    assert not any(c.startswith("submodule") for c in commands)
    assert (
        f"{RUN_FETCH} {upstream.nested} {upstream.nested_v2}".removeprefix("git ") in commands
    )
    assert f"lib: extern/nested: fetched {upstream.nested_v2[:12]} by SHA (depth 1)" in res.stderr
    assert git(project.nested, "rev-list", "--count", "HEAD") == "1"
    # As `git submodule update --init` leaves it: initialised in lib's config, the
    # repository in lib's .git/modules/<name>, a .git file, core.worktree pointing back.
    assert (project.nested / ".git").read_text() == "gitdir: ../../.git/modules/extern/nested\n"
    modules = project.lib / ".git" / "modules" / "extern" / "nested"
    assert git(modules, "config", "core.worktree") == "../../../../extern/nested"
    assert git(project.lib, "config", "submodule.extern/nested.url") == str(upstream.nested)
    assert git(project.lib, "config", "submodule.extern/nested.active") == "true"
    # No -, + or U before the SHA (git() strips the line's leading blank).
    status = git(project.lib, "submodule", "status", "--recursive")
    assert status.split()[:2] == [upstream.nested_v2, "extern/nested"], status
    before = snapshot(project.root)
    git(project.lib, "submodule", "update", "--init", "--recursive")
    assert snapshot(project.root) == before  # git finds nothing to do


def test_checkout_fresh_clone_of_pin_without_submodules_runs_no_submodule_command(
    make_project, upstream, run_qola
):
    """lib at v1's parent, before nested was added: submodules = true, but none to update."""
    before_nested = git(upstream.lib, "rev-parse", f"{upstream.lib_v1}~1")
    project = make_project(pin=before_nested)
    res = run_qola("checkout", "-v", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(project.lib) == before_nested
    assert not (project.lib / ".gitmodules").exists()
    assert not any(c.startswith("submodule") for c in ran(res.stderr))


def test_checkout_noop_runs_no_git_and_changes_nothing(pinned_by_qola, tmp_path):
    pinned_clean = pinned_by_qola
    """With git removed from PATH, a pinned tree still checks out: the no-op reads files only."""
    before = snapshot(pinned_clean.root)
    bindir = tmp_path / "bin-without-git"
    bindir.mkdir()
    env = {**os.environ, "PATH": str(bindir)}
    proc = subprocess.run(
        [sys.executable, "-m", "qola.cli", "checkout", "--manifest", str(pinned_clean.manifest)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("up to date\n")
    assert proc.stderr == ""
    # Nothing changed but the no-op's own stamp in the root's git dir (qola/noop.py).
    after = snapshot(pinned_clean.root)
    assert any(k.startswith(store.noop_stamps(Path(".git")).as_posix()) for k in after)
    assert without_noop_stamps(after) == before


def test_checkout_behind_pin_fetches_pin_and_moves_nested(behind_pin, upstream, run_qola):
    assert git(behind_pin.lib, "cat-file", "-t", upstream.lib_tip, check=False) == ""
    res = run_qola("checkout", "-v", "-m", str(behind_pin.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(behind_pin.lib) == upstream.lib_tip
    assert head(behind_pin.nested) == upstream.nested_v2
    assert f"fetched {upstream.lib_tip[:12]} by SHA" in res.stderr


def test_checkout_pin_present_locally_does_not_fetch(
    pinned_by_qola, upstream, run_qola, tmp_path
):
    pinned_by_qola.set_pin(upstream.lib_v2, upstream.lib_v1)
    git(pinned_by_qola.lib, "fetch", "-q", "--unshallow", str(upstream.lib))
    # Take the upstream away: a fetch now would fail.
    moved = tmp_path / "elsewhere"
    shutil.move(str(upstream.lib), moved)
    try:
        res = run_qola("checkout", "-v", "-m", str(pinned_by_qola.manifest))
    finally:
        shutil.move(str(moved), upstream.lib)
    assert res.exit_code == 0, res.stderr
    assert head(pinned_by_qola.lib) == upstream.lib_v1
    assert head(pinned_by_qola.nested) == upstream.nested_v1
    assert "present locally: no fetch" in res.stderr


def test_checkout_server_refusing_sha_falls_back_to_branches(
    make_project, upstream, run_qola, monkeypatch
):
    # Protocol v0 without allowAnySHA1InWant refuses a SHA that is no branch tip.
    for key, value in PROTOCOL_V0.items():
        monkeypatch.setenv(key, value)
    project = make_project(pin=upstream.lib_v1)
    res = run_qola("checkout", "-v", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(project.lib) == upstream.lib_v1
    assert "refused to send" in res.stderr


def test_checkout_dirty_dep_refuses_and_changes_nothing(behind_pin, run_qola):
    (behind_pin.lib / "lib.txt").write_text("my local edit\n")
    before = snapshot(behind_pin.root)
    res = run_qola("checkout", "-m", str(behind_pin.manifest))
    assert res.exit_code == 4
    assert "qola: lib: moving 3rdparty/lib to" in res.stderr
    assert "  uncommitted: 3rdparty/lib/lib.txt (modified)\n" in res.stderr
    assert (
        "nothing was changed; to keep that work, save it first:\n"
        f"  git -C {behind_pin.lib} stash push -m 'before qola'  # the changes in 3rdparty/lib\n"
        "hint: then run qola again; or run it with --force to save all of it under "
        "refs/qola/backup/lib/ and go on\n"
    ) in res.stderr
    assert snapshot(behind_pin.root) == before


def test_checkout_dirty_nested_submodule_refuses(behind_pin, run_qola):
    (behind_pin.nested / "nested.txt").write_text("edit in nested\n")
    before = snapshot(behind_pin.root)
    res = run_qola("checkout", "-m", str(behind_pin.manifest))
    assert res.exit_code == 4
    assert "3rdparty/lib/extern/nested (modified content in submodule)" in res.stderr
    assert snapshot(behind_pin.root) == before


def test_checkout_unsaved_commit_refuses_and_changes_nothing(behind_pin, run_qola):
    sha = commit_file(behind_pin.lib, "mine.txt", "work\n", "my unsaved work")
    before = snapshot(behind_pin.root)
    res = run_qola("checkout", "-m", str(behind_pin.manifest))
    assert res.exit_code == 4
    assert f"  commit on no branch: 3rdparty/lib: {sha[:7]} my unsaved work" in res.stderr
    assert snapshot(behind_pin.root) == before


def test_checkout_upstream_commit_qola_checked_out_before_is_not_local_work(
    pinned_by_qola, upstream, run_qola
):
    """qola checked out the side branch's commit once; someone went back to it by hand.
    It is on no branch here (fetched by SHA, history complete), but it is not their work.
    (The tree is qola's: the pin it starts from is remembered too, as no history of the
    root's would excuse it.)"""
    git(pinned_by_qola.lib, "fetch", "-q", "--unshallow", str(upstream.lib))
    pinned_by_qola.set_pin(upstream.lib_v2, upstream.lib_v3)
    assert run_qola("checkout", "-m", str(pinned_by_qola.manifest)).exit_code == 0
    pinned_by_qola.set_pin(upstream.lib_v3, upstream.lib_v2)
    assert run_qola("checkout", "-m", str(pinned_by_qola.manifest)).exit_code == 0
    git(pinned_by_qola.lib, "checkout", "-q", "--detach", upstream.lib_v3)
    res = run_qola("checkout", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(pinned_by_qola.lib) == upstream.lib_v2
    remembered = git(pinned_by_qola.lib, "for-each-ref", "--format=%(refname)", "refs/qola/pins/")
    assert f"refs/qola/pins/{upstream.lib_v3}" in remembered.splitlines()


def test_checkout_force_saves_dirty_work_and_restores(behind_pin, upstream, run_qola):
    (behind_pin.lib / "lib.txt").write_text("my local edit\n")
    res = run_qola("checkout", "--force", "-m", str(behind_pin.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(behind_pin.lib) == upstream.lib_tip
    assert (behind_pin.lib / "lib.txt").read_text() == "lib v4\n"
    refs = git(behind_pin.lib, "for-each-ref", "--format=%(refname)", store.BACKUP_PREFIX)
    assert refs.startswith(store.backup_prefix("lib"))
    assert f"restore with: git -C {behind_pin.lib} stash apply {refs}" in res.stderr
    # The saved work really comes back.
    git(behind_pin.lib, "checkout", "-q", "--detach", upstream.lib_v2)
    git(behind_pin.lib, "stash", "apply", "-q", refs)
    assert (behind_pin.lib / "lib.txt").read_text() == "my local edit\n"


def test_checkout_force_saves_unsaved_commits(behind_pin, upstream, run_qola):
    sha = commit_file(behind_pin.lib, "mine.txt", "work\n", "my unsaved work")
    res = run_qola("checkout", "--force", "-m", str(behind_pin.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(behind_pin.lib) == upstream.lib_tip
    refs = git(
        behind_pin.lib, "for-each-ref", "--format=%(refname) %(objectname)", store.BACKUP_PREFIX
    )
    assert refs.endswith(" " + sha)
    assert "saved the commits of 3rdparty/lib" in res.stderr


def test_checkout_dirty_at_pin_is_left_alone(pinned_clean, run_qola):
    (pinned_clean.lib / "lib.txt").write_text("my local edit\n")
    res = run_qola("checkout", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 0
    assert (pinned_clean.lib / "lib.txt").read_text() == "my local edit\n"


def test_checkout_offline_missing_commit_fails_and_changes_nothing(behind_pin, upstream, run_qola):
    before = snapshot(behind_pin.root)
    res = run_qola("checkout", "--offline", "-m", str(behind_pin.manifest))
    assert res.exit_code == 3
    assert (
        f"qola: lib: commit {upstream.lib_tip} is not present locally and --offline forbids "
        "fetching it\nhint: run once without --offline\n"
    ) in res.stderr
    assert snapshot(behind_pin.root) == before


def test_checkout_offline_env_var_is_honoured(behind_pin, run_qola):
    res = run_qola("checkout", "-m", str(behind_pin.manifest), env={"QOLA_OFFLINE": "1"})
    assert res.exit_code == 3
    assert "--offline forbids" in res.stderr


def test_checkout_offline_missing_dep_fails_without_creating_it(make_project, run_qola):
    project = make_project()
    res = run_qola("checkout", "--offline", "-m", str(project.manifest))
    assert res.exit_code == 3
    assert "qola: lib: 3rdparty/lib is not checked out and --offline forbids fetching" in res.stderr
    assert not (project.root / "3rdparty").exists()


def test_checkout_unknown_commit_fails_and_leaves_nothing(make_project, upstream, run_qola):
    """A pin the server does not have (protocol v2, which sends any commit it has by SHA):
    the first error is the answer, and nothing else is fetched to look for it."""
    missing = "0123456789abcdef0123456789abcdef01234567"
    project = make_project(pin=missing)
    before = snapshot(project.root)
    res = run_qola("checkout", "-v", "-m", str(project.manifest))
    assert res.exit_code == 3
    assert (
        f"qola: lib: commit {missing} is not in {upstream.lib}: the server (protocol v2, which "
        "sends any commit it has by SHA) does not have it; nothing else was fetched:\n"
        f"  `{FETCH} {upstream.lib} {missing}` failed with exit code 128:\n"
    ) in res.stderr
    # (A local upload-pack and the fetch both say it, in either order.)
    assert f"      fatal: remote error: upload-pack: not our ref {missing}\n" in res.stderr
    assert "hint: check the pin, or move it: qola bump lib --to REF\n" in res.stderr
    assert [c for c in ran(res.stderr) if c.startswith("fetch")] == [
        f"{RUN_FETCH} {upstream.lib} {missing}".removeprefix("git ")
    ]
    assert not (project.root / "3rdparty").exists()  # not even the empty parent folder
    assert snapshot(project.root) == before


def test_checkout_unreachable_url_names_command_and_git_error(
    make_project, upstream, run_qola, tmp_path
):
    """The first error is the one shown, and no fallback fetch is tried after it."""
    project = make_project()
    text = project.manifest.read_text()
    project.manifest.write_text(text.replace(str(upstream.lib), f"{tmp_path}/no-such-repo"))
    res = run_qola("checkout", "-v", "-m", str(project.manifest))
    assert res.exit_code == 3
    assert (
        f"qola: lib: `{FETCH} {tmp_path}/no-such-repo {upstream.lib_v2}` failed with exit code "
        "128:\n"
        f"    fatal: '{tmp_path}/no-such-repo' does not appear to be a git repository\n"
    ) in res.stderr
    assert len([c for c in ran(res.stderr) if c.startswith("fetch")]) == 1


def test_checkout_collects_failures_and_still_runs_the_others(make_project, upstream, run_qola):
    extra = (
        "\n[deps.broken]\n"
        'path = "3rdparty/broken"\n'
        f'url = "{upstream.lib}"\n'
        'commit = "0123456789abcdef0123456789abcdef01234567"\n'
    )
    project = make_project(extra=extra)
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 3
    assert head(project.lib) == upstream.lib_v2
    assert "qola: 1 of 2 dependencies failed: broken" in res.stderr


def test_checkout_path_exists_not_repo_refuses_and_changes_nothing(make_project, run_qola):
    project = make_project()
    project.lib.mkdir(parents=True)
    (project.lib / "notes.txt").write_text("someone's files\n")
    before = snapshot(project.root)
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 4
    assert f"qola: lib: {project.lib} exists and is not a git repository" in res.stderr
    assert snapshot(project.root) == before


def test_checkout_redoes_clone_left_by_interrupted_run(make_project, upstream, run_qola):
    project = make_project()
    leftover = project.root / "3rdparty" / ".lib.qola-clone"
    leftover.mkdir(parents=True)
    (leftover / "half-written").write_text("x")
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(project.lib) == upstream.lib_v2
    assert not leftover.exists()


def test_checkout_moved_nested_submodule_is_restored(pinned_clean, upstream, run_qola):
    git(pinned_clean.nested, "checkout", "-q", upstream.nested_v1)
    res = run_qola("checkout", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(pinned_clean.nested) == upstream.nested_v2
    assert res.stdout.endswith(" updated 1 nested submodule\n")


def test_checkout_nested_local_commit_refuses(pinned_clean, run_qola):
    sha = commit_file(pinned_clean.nested, "mine.txt", "x\n", "nested work")
    before = snapshot(pinned_clean.root)
    res = run_qola("checkout", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 4
    assert f"commit on no branch: 3rdparty/lib/extern/nested: {sha[:7]} nested work" in res.stderr
    assert snapshot(pinned_clean.root) == before


def test_checkout_deinitialised_nested_submodule_is_initialised(pinned_clean, upstream, run_qola):
    git(pinned_clean.lib, "submodule", "deinit", "-q", "--force", "extern/nested")
    res = run_qola("checkout", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(pinned_clean.nested) == upstream.nested_v2


def test_checkout_nested_not_initialised_in_its_parents_config_is_initialised(
    pinned_by_qola, upstream, run_qola
):
    """At its gitlink, files there, but the parent's config lacks it: git's `submodule
    status` shows -; no fast path may say "up to date", and checkout initialises it."""
    from procs import noop_declined

    results = pinned_by_qola.root / "build" / "results.cmake"
    assert not noop_declined(["checkout", "--cmake-out", str(results)], pinned_by_qola.root)
    git(pinned_by_qola.lib, "config", "--remove-section", "submodule.extern/nested")
    assert noop_declined(["checkout", "--cmake-out", str(results)], pinned_by_qola.root)
    shutil.rmtree(store.noop_stamps(pinned_by_qola.root / ".git"))
    assert noop_declined(["checkout"], pinned_by_qola.root)
    res = run_qola("checkout", "-v", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 0, res.stderr
    assert "qola: lib: update nested submodules (extern/nested is not initialised)\n" in res.stderr
    assert res.stdout.endswith(" updated 1 nested submodule\n")
    status = git(pinned_by_qola.lib, "submodule", "status")  # stripped: a - or + would stay
    assert status.startswith(f"{upstream.nested_v2} extern/nested "), status
    assert git(pinned_by_qola.lib, "config", "submodule.extern/nested.active") == "true"
    assert run_qola("verify", "-m", str(pinned_by_qola.manifest)).exit_code == 0


def test_checkout_submodules_false_leaves_nested_alone(make_project, run_qola):
    project = make_project(extra="submodules = false\n")
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    assert list(project.nested.iterdir()) == []


def test_checkout_branch_at_pin_is_a_noop(pinned_clean, upstream, run_qola):
    git(pinned_clean.lib, "switch", "-q", "-c", "work")
    res = run_qola("checkout", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 0
    assert git(pinned_clean.lib, "symbolic-ref", "HEAD") == "refs/heads/work"
    assert head(pinned_clean.lib) == upstream.lib_v2


def test_checkout_override_uses_folder_as_is(make_project, pinned_clean, run_qola):
    project = make_project(name="other")
    res = run_qola(
        "checkout",
        "-m",
        str(project.manifest),
        env={"QOLA_SOURCE_DIR_LIB": str(pinned_clean.lib)},
    )
    assert res.exit_code == 0
    assert f"overridden by {pinned_clean.lib}" in res.stdout
    assert not (project.root / "3rdparty").exists()


def test_checkout_selected_names_only(make_project, upstream, run_qola):
    extra = (
        f'\n[deps.other]\npath = "3rdparty/other"\nurl = "{upstream.nested}"\n'
        f'commit = "{upstream.nested_v1}"\n'
    )
    project = make_project(extra=extra)
    res = run_qola("checkout", "-m", str(project.manifest), "other")
    assert res.exit_code == 0, res.stderr
    assert head(project.root / "3rdparty/other") == upstream.nested_v1
    assert not project.lib.exists()


def test_checkout_hooks_in_dependency_never_run(behind_pin, run_qola, tmp_path):
    marker = tmp_path / "hook-ran"
    hooks = Path(git(behind_pin.lib, "rev-parse", "--git-path", "hooks"))
    hook = (behind_pin.lib / hooks) if not hooks.is_absolute() else hooks
    hook.mkdir(parents=True, exist_ok=True)
    (hook / "post-checkout").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (hook / "post-checkout").chmod(0o755)
    res = run_qola("checkout", "-m", str(behind_pin.manifest))
    assert res.exit_code == 0, res.stderr
    assert not marker.exists()


def test_checkout_of_root_submodule_initialised_by_git(tmp_path, upstream, run_qola):
    """A dep that `git submodule update --init` set up (gitdir in the root's .git/modules)."""
    root = tmp_path / "super"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "submodule", "add", "-q", str(upstream.lib), "3rdparty/lib")
    git(root, "-C", "3rdparty/lib", "checkout", "-q", upstream.lib_v2)
    git(root, "add", "3rdparty/lib")
    git(root, "submodule", "update", "-q", "--init", "--recursive")
    git(root, "commit", "-q", "-am", "add lib")
    (root / "qola.toml").write_text(f'[qola]\nlib_commit = "{upstream.lib_v2[:10]}"\n')
    res = run_qola("checkout", "-m", str(root / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    assert "abbreviated SHA" in res.stderr
    assert res.stdout == f"lib 3rdparty/lib {upstream.lib_v2[:12]} up to date\n"


def test_checkout_force_never_overwrites_untracked_files(pinned_clean, upstream, run_qola):
    """lib.txt is untracked at v1 and tracked at v2: git refuses, even with --force."""
    pinned_clean.set_pin(upstream.lib_v2, upstream.lib_v1)
    assert run_qola("checkout", "-m", str(pinned_clean.manifest)).exit_code == 0
    (pinned_clean.lib / "lib.txt").write_text("my notes, untracked\n")
    pinned_clean.set_pin(upstream.lib_v1, upstream.lib_v2)
    res = run_qola("checkout", "--force", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 3
    assert "untracked working tree files would be overwritten" in res.stderr
    assert (pinned_clean.lib / "lib.txt").read_text() == "my notes, untracked\n"
    assert head(pinned_clean.lib) == upstream.lib_v1
    # The failed run did not make qola's own old pin look like someone's unsaved work.
    res = run_qola("checkout", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 3, res.stderr


def test_checkout_file_at_dep_path_refuses_and_changes_nothing(make_project, run_qola):
    project = make_project()
    project.lib.parent.mkdir(parents=True)
    project.lib.write_text("a file, not a folder\n")
    before = snapshot(project.root)
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 4
    assert f"qola: lib: {project.lib} exists and is not a git repository" in res.stderr
    assert snapshot(project.root) == before


def test_checkout_without_git_on_path_says_so(behind_pin, tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "qola", "checkout", "-m", str(behind_pin.manifest)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "qola: git: cannot run git:" in proc.stderr
    assert "hint: install git 2.32 or newer and put it on PATH" in proc.stderr


def test_checkout_noop_with_non_utf8_packed_branch(pinned_clean, run_qola):
    git(
        pinned_clean.lib, "branch", "caf\udce9".encode("utf-8", "surrogateescape").decode("latin-1")
    )
    git(pinned_clean.lib, "pack-refs", "--all")
    res = run_qola("checkout", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 0, res.stderr


def test_concurrent_checkouts_take_turns(make_project, upstream):
    """Three configures of one fresh tree at once: one clones, the others find it done."""
    project = make_project()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "qola", "checkout", "-m", str(project.manifest)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    results = [(*p.communicate(timeout=300), p.returncode) for p in procs]
    assert [r[2] for r in results] == [0, 0, 0], results
    assert head(project.lib) == upstream.lib_v2
    assert head(project.root) == git(project.root, "rev-parse", "main")
    assert git(project.root, "status", "--porcelain") == ""
    assert not list(project.lib.parent.glob(".*qola-clone*"))


def test_checkout_moving_a_dependency_names_the_commit_once(behind_pin, upstream, run_qola):
    res = run_qola("checkout", "-m", str(behind_pin.manifest))
    assert res.exit_code == 0, res.stderr
    assert res.stdout == f"lib 3rdparty/lib {upstream.lib_tip[:12]} checked out\n"


def test_a_commit_of_ones_own_named_in_fetch_head_is_still_local_work(
    behind_pin, upstream, run_qola
):
    """FETCH_HEAD names what a fetch was asked for, whoever has it: `git fetch origin <sha>`
    of a commit made here succeeds without fetching (and `git fetch . HEAD` names it too).
    It proves nothing about the remote, so the commit stays protected (review)."""
    lib = behind_pin.lib
    mine = commit_file(lib, "mine.txt", "work\n", "my unsaved work")
    git(lib, "fetch", "-q", "origin", mine)
    git(lib, "fetch", "-q", ".", "HEAD")
    assert git(lib, "rev-parse", "FETCH_HEAD") == mine  # FETCH_HEAD names the local commit
    before = snapshot(behind_pin.root)
    res = run_qola("checkout", "-m", str(behind_pin.manifest))
    assert res.exit_code == 4
    assert f"  commit on no branch: 3rdparty/lib: {mine[:7]} my unsaved work\n" in res.stderr
    assert snapshot(behind_pin.root) == before


def test_a_long_list_of_unsaved_commits_is_cut_and_counted(behind_pin, run_qola):
    shas = [commit_file(behind_pin.lib, "mine.txt", f"work {n}\n", f"my work {n}")
            for n in range(8)]  # fmt: skip
    before = snapshot(behind_pin.root)
    res = run_qola("checkout", "-m", str(behind_pin.manifest))
    assert res.exit_code == 4
    listed = [line for line in res.stderr.splitlines() if "on no branch" in line]
    assert listed == [
        *(f"  commit on no branch: 3rdparty/lib: {sha[:7]} my work {n}"
          for n, sha in list(enumerate(shas))[::-1][:5]),
        "  and 3 more commits on no branch in 3rdparty/lib",
    ]  # fmt: skip
    # One branch keeps them all.
    assert f"  git -C {behind_pin.lib} branch keep-{shas[-1][:7]} {shas[-1]}" in res.stderr
    assert snapshot(behind_pin.root) == before
