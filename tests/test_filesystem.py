"""File systems that refuse: a read-only dependency folder and a full TMPDIR, mounted for real."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import procs
import pytest
from repos import head, snapshot


def _can_mount() -> bool:
    if os.geteuid() != 0:
        return False
    probe = Path(os.environ.get("TMPDIR", "/tmp"), f"qola-mount-probe-{os.getpid()}")
    probe.mkdir(exist_ok=True)
    try:
        ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(probe)],
                            capture_output=True).returncode == 0  # fmt: skip
        if ok:
            subprocess.run(["umount", str(probe)], check=True)
        return ok
    finally:
        probe.rmdir()


pytestmark = pytest.mark.skipif(
    not _can_mount(),
    reason="needs root and mount(2): the tests mount small and read-only file systems",
)


def mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """folder, bind-mounted read-only on itself (root ignores permission bits, not this)."""
    mount("--bind", str(folder), str(folder))
    try:
        mount("-o", "remount,ro,bind", str(folder))
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@contextmanager
def full_tmpfs(folder: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs at folder, filled to the last byte."""
    folder.mkdir()
    mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder))
    try:
        fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            with pytest.raises(OSError):
                while True:
                    os.write(fd, b"x" * 512)
        finally:
            os.close(fd)
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_read_only_parent_folder_fails_clone_with_exit_3_then_rerun_succeeds(
    make_project, upstream
):
    project = make_project()
    parent = project.root / "3rdparty"
    parent.mkdir()
    with read_only(parent):
        proc = procs.run("checkout", "-m", str(project.manifest))
        assert proc.returncode == 3, proc.stderr
        assert f"qola: lib: cannot write {parent}/" in proc.stderr
        assert "Read-only file system" in proc.stderr
        assert list(parent.iterdir()) == []
    rerun = procs.run("checkout", "-m", str(project.manifest))
    assert rerun.returncode == 0, rerun.stderr
    assert head(project.lib) == upstream.lib_v2


def test_read_only_dependency_fails_move_with_exit_3_and_changes_nothing(behind_pin, upstream):
    before = snapshot(behind_pin.root)
    with read_only(behind_pin.lib):
        proc = procs.run("checkout", "-m", str(behind_pin.manifest))
        assert proc.returncode == 3, proc.stderr
        assert "Read-only file system" in proc.stderr
        assert "qola: 1 of 1 dependency failed: lib" in proc.stderr
    assert snapshot(behind_pin.root) == before
    assert head(behind_pin.lib) == upstream.lib_v2
    rerun = procs.run("checkout", "-m", str(behind_pin.manifest))
    assert rerun.returncode == 0, rerun.stderr
    assert head(behind_pin.lib) == upstream.lib_tip
    assert procs.run("verify", "-m", str(behind_pin.manifest)).returncode == 0


def test_full_tmpdir_changes_nothing_there_and_checkout_succeeds(behind_pin, upstream, tmp_path):
    """Python's tempfile skips a TMPDIR it cannot write to, so the shim goes elsewhere."""
    with full_tmpfs(tmp_path / "tmp") as tmp:
        proc = procs.run("checkout", "-m", str(behind_pin.manifest), env={"TMPDIR": str(tmp)})
        assert proc.returncode == 0, proc.stderr
        assert sorted(p.name for p in tmp.iterdir()) == ["filler"]  # nothing left behind
        assert (tmp / "filler").stat().st_size == 64 * 1024
        assert head(behind_pin.lib) == upstream.lib_tip
        check = procs.run("verify", "-m", str(behind_pin.manifest), env={"TMPDIR": str(tmp)})
        assert check.returncode == 0, check.stdout + check.stderr
