"""The per-root lock, for real: runs take turns, a stuck holder is named, reads never wait."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import procs
from repos import git, head, snapshot

from qola.gitrun.lock import lock_path, read_holder


def test_three_concurrent_checkouts_serialise_and_one_clones(make_project, upstream):
    """Three configures at once on one tree: one clones, the others wait and find it done."""
    project = make_project()
    holder = procs.hold_lock(project.root)  # so that all three are surely waiting at once
    runs = [procs.start("checkout", "-m", str(project.manifest)) for _ in range(3)]
    try:
        # Each says it waits (stderr), then blocks; none can have changed anything yet.
        for proc in runs:
            assert proc.stderr is not None
            line = proc.stderr.readline()
            assert line.startswith(f"qola: waiting for the lock on {project.root} (held by pid "), (
                line
            )
        assert not (project.root / "3rdparty").exists()
    finally:
        holder.kill()
        holder.wait()
    outputs = [proc.communicate(timeout=120) for proc in runs]
    assert [proc.returncode for proc in runs] == [0, 0, 0], outputs
    actions = sorted(out.split(" ", 3)[3] for out, _ in outputs)
    assert actions == [f"cloned {upstream.lib}\n", "up to date\n", "up to date\n"]
    assert head(project.lib) == upstream.lib_v2
    assert procs.run("verify", "--strict", "-m", str(project.manifest)).returncode == 0
    assert not list((project.root / "3rdparty").glob(".*qola-clone*"))
    assert lock_path(project.root).read_bytes() == b""  # the last holder cleared its record


def test_the_lock_file_keeps_its_name_across_versions(make_project, tmp_path):
    """Every qola takes the same file (`<git dir>/qola.lock`, else `<root>/qola.lock`): two
    versions running on one root (a build's and a user's) must exclude each other."""
    project = make_project()
    assert lock_path(project.root) == project.root / ".git" / "qola.lock"
    plain = tmp_path / "no-repository"
    plain.mkdir()
    assert lock_path(plain) == plain / "qola.lock"


def test_a_dependency_at_its_pin_needs_no_lock_even_when_its_config_needs_git_to_read(
    pinned_by_qola,
):
    """A config the no-op (which runs no git) cannot read exactly, but git can (a control
    byte in a value): the no-op steps aside and the full command looks again with git. What
    the no-op saw without git must not stand in for that look: the dependency is at its pin,
    so no lock is taken, and another run holding it does not hold this one up."""
    root = pinned_by_qola.root
    config = Path(git(root / "3rdparty" / "lib", "rev-parse", "--path-format=absolute",
                      "--git-common-dir")) / "config"  # fmt: skip
    with config.open("ab") as out:
        out.write(b"[user]\n\tname = a\x01b\n")
    assert git(root / "3rdparty" / "lib", "config", "user.name") == "a\x01b"  # git reads it
    holder = procs.hold_lock(root)
    try:
        proc = procs.run("checkout", "--lock-timeout", "0.5", "-m", str(pinned_by_qola.manifest))
    finally:
        holder.kill()
        holder.wait()
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.endswith("up to date\n")


def test_lock_timeout_exits_3_naming_the_holder_and_changes_nothing(behind_pin, upstream):
    holder = procs.hold_lock(behind_pin.root)
    try:
        before = snapshot(behind_pin.root)
        started = time.monotonic()
        proc = procs.run("checkout", "--lock-timeout", "0.5", "-m", str(behind_pin.manifest))
        waited = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert proc.returncode == 3, proc.stderr
    path = lock_path(behind_pin.root)
    waiting, error, hint = proc.stderr.splitlines()
    assert waiting.startswith(f"qola: waiting for the lock on {behind_pin.root} (held by pid ")
    assert error.startswith(
        f"qola: {behind_pin.root}: could not take the lock {path} within 0.5 s: it is held by "
        f"pid {holder.pid} on "
    )
    assert error.endswith(f": qola {behind_pin.root}")  # the holder's command line
    assert (
        hint == "hint: wait for that run to finish, or raise --lock-timeout (env QOLA_LOCK_TIMEOUT)"
    )
    assert waited < 30
    assert snapshot(behind_pin.root) == before
    assert head(behind_pin.lib) == upstream.lib_v2


def test_lock_timeout_from_environment_and_zero_means_no_wait(behind_pin):
    holder = procs.hold_lock(behind_pin.root)
    try:
        proc = procs.run("checkout", "-m", str(behind_pin.manifest), env={"QOLA_LOCK_TIMEOUT": "0"})
    finally:
        holder.kill()
        holder.wait()
    assert proc.returncode == 3
    assert "within 0 s: it is held by pid" in proc.stderr


def test_bad_lock_timeout_is_a_usage_error(pinned_clean, run_qola):
    res = run_qola("checkout", "--lock-timeout", "soon", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 2
    assert "'soon' is not a valid float" in res.stderr


def test_read_only_commands_never_wait_for_the_lock(pinned_by_qola):
    """A tree qola checked out: its no-op answers from files (a tree git made is read
    with git once, under the lock, and then remembered)."""
    pinned_clean = pinned_by_qola
    (pinned_clean.lib / "lib.txt").write_text("edited\n")
    holder = procs.hold_lock(pinned_clean.root)
    try:
        verify = procs.run(
            "verify", "--format", "json", "-m", str(pinned_clean.manifest), timeout=60
        )
        status = procs.run("status", "-m", str(pinned_clean.manifest), timeout=60)
        # The no-op checkout of a synced dependency needs no lock either.
        git(pinned_clean.lib, "checkout", "-q", "lib.txt")
        noop = procs.run("checkout", "--lock-timeout", "0", "-m", str(pinned_clean.manifest))
    finally:
        holder.kill()
        holder.wait()
    assert (
        verify.returncode == 1
        and json.loads(verify.stdout)["deps"][0]["problems"][0]["kind"] == "dirty"
    )
    assert status.returncode == 1
    assert noop.returncode == 0, noop.stderr


def test_lock_of_a_killed_holder_is_free_and_its_record_is_readable(behind_pin, upstream):
    """SIGKILL cannot clean up, but the kernel drops the flock: the next run goes ahead."""
    holder = procs.hold_lock(behind_pin.root)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    record = read_holder(lock_path(behind_pin.root))
    assert record is not None and record.pid == holder.pid and record.is_alive_here is False
    proc = procs.run("checkout", "--lock-timeout", "0", "-m", str(behind_pin.manifest))
    assert proc.returncode == 0, proc.stderr
    assert head(behind_pin.lib) == upstream.lib_tip


def test_a_lock_file_qola_may_not_open_exits_3_with_a_hint_and_changes_nothing(
    behind_pin, run_qola
):
    """A lock another user made (a configure run as root, then the tree's owner bumps) is
    refused by the kernel: the same branch as here, where the file is made immutable
    (`chattr +i`: even root may not open it for writing)."""
    import subprocess

    lock = lock_path(behind_pin.root)
    lock.touch()
    os.chown(lock, 12345, 12345)  # made by someone else
    subprocess.run(["chattr", "+i", str(lock)], check=True)
    try:
        before = snapshot(behind_pin.root)
        res = run_qola("checkout", "-m", str(behind_pin.manifest))
        after = snapshot(behind_pin.root)
    finally:
        subprocess.run(["chattr", "-i", str(lock)], check=True)
    assert res.exit_code == 3
    assert res.stderr == (
        f"qola: {behind_pin.root}: cannot take the lock {lock}: Operation not permitted "
        f"(it belongs to uid 12345, not {os.geteuid()}); nothing was changed\n"
        f"hint: once no qola run is using it, remove {lock} (qola makes it again); or run "
        "qola as the user the tree belongs to\n"
    )
    assert after == before
