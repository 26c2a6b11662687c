"""Shim folders left by killed runs (SIGKILL cannot be caught) are swept by the next run;
those of runs still going, or of other users, are not."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import procs
import pytest

from qola.gitrun.shim import _process_start, sweep_abandoned


@pytest.fixture
def private_tmp(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


def shims(folder: Path) -> list[Path]:
    return sorted(folder.glob("qola-shim-*"))


def waiting_checkout(manifest: Path) -> subprocess.Popen[str]:
    """A checkout blocked on the root's lock, its shim made: returns once it says it waits."""
    proc = procs.start("checkout", "-m", str(manifest))
    assert proc.stderr is not None
    assert proc.stderr.readline().startswith("qola: waiting for the lock on ")
    return proc


def test_a_killed_runs_shim_is_swept_by_the_next_run_and_a_live_ones_is_not(
    behind_pin, private_tmp
):
    holder = procs.hold_lock(behind_pin.root)
    try:
        killed = waiting_checkout(behind_pin.manifest)
        os.killpg(killed.pid, signal.SIGKILL)
        killed.communicate()
        [left] = shims(private_tmp)
        assert left.name.startswith(f"qola-shim-{killed.pid}-")
        # The next run sweeps the dead run's folder as it makes its own.
        alive = waiting_checkout(behind_pin.manifest)
        [alive_shim] = shims(private_tmp)
        assert alive_shim.name.startswith(f"qola-shim-{alive.pid}-")
        # And a run after that (it needs no lock) leaves the live run's folder alone.
        proc = procs.run("verify", "-m", str(behind_pin.manifest))
        assert proc.returncode == 1, proc.stderr  # lib is behind its pin
        assert shims(private_tmp) == [alive_shim]
    finally:
        holder.kill()
        holder.wait()
    assert alive.wait(timeout=120) == 0
    alive.communicate()
    assert shims(private_tmp) == []


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_sweep_removes_only_this_users_folders_whose_owner_is_gone(tmp_path):
    me, started = os.getpid(), _process_start(os.getpid())
    assert started is not None
    dead = _dead_pid()
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("x")
    base = tmp_path / "tmp"
    base.mkdir()
    names = {
        "dead": f"qola-shim-{dead}-123-abc",
        "reused": f"qola-shim-{me}-{int(started) + 1}-abc",  # this pid, another process
        "mine": f"qola-shim-{me}-{started}-abc",
        "unknown-start": f"qola-shim-{me}-x-abc",
        "old-style": "qola-shim-k3j4h5",
        "foreign": f"qola-shim-{dead}-124-abc",
    }
    for name in names.values():
        (base / name).mkdir()
        (base / name / "gitconfig").write_text("")
    os.chown(base / names["foreign"], 12345, 12345)
    link = base / f"qola-shim-{dead}-125-abc"
    link.symlink_to(victim, target_is_directory=True)

    removed = sweep_abandoned(base)

    assert sorted(p.name for p in removed) == sorted([names["dead"], names["reused"]])
    left = sorted(p.name for p in base.iterdir())
    assert left == sorted([names["mine"], names["unknown-start"], names["old-style"],
                           names["foreign"], link.name])  # fmt: skip
    assert (victim / "keep").read_text() == "x"
