"""File systems that refuse: a read-only dependency folder and a full TMPDIR, mounted for real."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import procs
import pytest
from repos import git, head, snapshot
from superprojects import Deep, fresh_clone


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


@pytest.fixture
def at_pins_not_initialised(deep: Deep, tmp_path: Path) -> Path:
    """The TE-shaped root with its submodule at the pin, nested ones too, but nothing of it
    in the root's config (a hand clone's layout, or an older qola's)."""
    root = fresh_clone(deep, tmp_path / "te")
    git(root, "submodule", "update", "-q", "--init", "--recursive")
    git(root, "config", "--remove-section", "submodule.3rdparty/top")
    return root


def test_read_only_tree_at_its_pins_not_initialised_warns_and_exits_0(
    at_pins_not_initialised: Path, deep: Deep
):
    """Every configure of a read-only mount of the sources: the files are what the manifest
    pins; the initialisation git's status lacks cannot be written, and is only warned of."""
    root = at_pins_not_initialised
    before = snapshot(root)
    with read_only(root):
        proc = procs.run("checkout", "-m", str(root / "qola.toml"))
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == f"top 3rdparty/top {deep.top_v1[:12]} up to date\n"
        assert proc.stderr == (
            "qola: warning: top: 3rdparty/top is at its pin, but the root's config does not "
            f"initialise it (git submodule status shows -), and {root}/.git/config is on a "
            "read-only file system: left as it is; where the tree is writable, "
            "`git submodule init -- 3rdparty/top` or qola checkout initialises it\n"
        )
    assert snapshot(root) == before
    rerun = procs.run("checkout", "-m", str(root / "qola.toml"))  # writable again
    assert rerun.returncode == 0, rerun.stderr
    assert git(root, "config", "submodule.3rdparty/top.active") == "true"


def test_read_only_tree_behind_its_pin_says_why_it_cannot_check_out(
    at_pins_not_initialised: Path, deep: Deep
):
    root = at_pins_not_initialised
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace(deep.top_v1, deep.top_v2))
    before = snapshot(root)
    with read_only(root):
        proc = procs.run("checkout", "-m", str(manifest))
        assert proc.returncode == 3, proc.stderr
        assert proc.stderr == (
            f"qola: {root}: cannot take the lock {root}/.git/qola.lock: the file system is "
            "read-only, and top needs a checkout; nothing was changed\n"
            "hint: run qola checkout where the tree is writable, then use it read-only\n"
        )
    assert snapshot(root) == before


@pytest.mark.parametrize("where", ["lib", "nested"])
def test_read_only_tree_at_its_pins_and_patches_without_their_record_warns_and_exits_0(
    where, make_project, upstream
):
    """The series' result was never recorded in this tree (made by another tool, or its
    .git/qola removed): verify works it out again without writing and passes, and so does
    checkout now, with a warning, where it said "needs a checkout" (exit 3)."""
    series = {"lib": ("0001-readme.patch", "README", "lib"),
              "nested": ("extern/nested/0001-nested.patch", "nested.txt", "nested v2")}  # fmt: skip
    name, path, line = series[where]
    project = make_project(extra='patches = "patches"\n')
    patch = project.root / "patches" / name
    patch.parent.mkdir(parents=True)
    patch.write_text(f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-{line}\n+{line}, patched\n")
    assert procs.run("checkout", "-m", str(project.manifest)).returncode == 0
    repo = project.lib if where == "lib" else project.lib / "extern" / "nested"
    gitdir = Path(git(repo, "rev-parse", "--absolute-git-dir"))
    for record in (gitdir / "qola" / "series").iterdir():
        record.unlink()
    before = snapshot(project.root)
    with read_only(project.root):
        check = procs.run("verify", "-m", str(project.manifest))
        assert check.returncode == 0, check.stdout
        proc = procs.run("checkout", "-m", str(project.manifest))
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == f"lib 3rdparty/lib {upstream.lib_v2[:12]} up to date\n"
        assert proc.stderr == (
            "qola: warning: lib: 3rdparty/lib is at its pin and its patch series (worked out "
            "again: qola's record of the series' result is missing), and "
            f"{project.root}/.git is on a read-only file system: left as it is; where the tree "
            "is writable, qola checkout records it\n"
        )
    assert snapshot(project.root) == before
    assert procs.run("checkout", "-m", str(project.manifest)).returncode == 0  # writable
    assert any((gitdir / "qola" / "series").iterdir())  # recorded now
