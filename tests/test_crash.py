"""Damage done for real: SIGKILL at several points of a large clone and of a move, then a rerun."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import procs
import pytest
from repos import git, head, large_project, ran, temp_clones

from qola.gitrun.lock import lock_path
from qola.repo import store


def _clone_started(root: Path) -> bool:
    return bool(temp_clones(root))


def _clone_fetching(root: Path) -> bool:
    return any(
        list((t / ".git" / "objects" / "pack").glob("tmp_pack_*")) for t in temp_clones(root)
    )


def _clone_checking_out(root: Path) -> bool:
    return any(len(list((t / "data").glob("*.bin"))) > 20 for t in temp_clones(root))


CLONE_POINTS = {
    "clone-started": _clone_started,
    "mid-fetch": _clone_fetching,
    "mid-checkout": _clone_checking_out,
}


def kill_when(proc, condition, what: str) -> None:
    """SIGKILL the run's whole process group (qola and its git) once condition holds."""
    try:
        procs.wait_for(lambda: condition() or proc.poll() is not None, what=what)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()


@pytest.mark.parametrize("point", sorted(CLONE_POINTS))
def test_sigkill_during_clone_then_rerun_succeeds(point, tmp_path, large_upstream):
    root = tmp_path / "project"
    manifest = large_project(root, large_upstream.path, large_upstream.big_a)
    proc = procs.start("checkout", "-m", str(manifest))
    kill_when(proc, lambda: CLONE_POINTS[point](root), point)
    assert proc.returncode == -signal.SIGKILL, f"the run ended before {point}"
    lib = root / "3rdparty" / "big"
    assert not lib.exists()  # a killed clone never looks like a checkout
    rerun = procs.run("checkout", "-m", str(manifest))
    assert rerun.returncode == 0, rerun.stderr
    assert head(lib) == large_upstream.big_a
    assert temp_clones(root) == []  # the abandoned one was removed
    check = procs.run("verify", "--strict", "-m", str(manifest))
    assert check.returncode == 0, check.stdout


def _move_fetching(lib: Path) -> bool:
    return bool(list((lib / ".git" / "objects" / "pack").glob("tmp_pack_*")))


def _move_checking_out(lib: Path) -> bool:
    # git removes the files the pin drops first, then writes, holding index.lock throughout.
    return (lib / ".git" / "index.lock").exists() and not (lib / "data" / "0000.bin").exists()


MOVE_POINTS = {"mid-fetch": _move_fetching, "mid-checkout": _move_checking_out}


@pytest.fixture(scope="module")
def _large_at_a(tmp_path_factory, large_upstream) -> Path:
    root = tmp_path_factory.mktemp("large-at-a") / "project"
    manifest = large_project(root, large_upstream.path, large_upstream.big_a)
    assert procs.run("checkout", "-m", str(manifest)).returncode == 0
    return root


@pytest.mark.parametrize("point", sorted(MOVE_POINTS))
def test_sigkill_during_a_move_then_rerun_succeeds_and_keeps_work(
    point, tmp_path, _large_at_a, large_upstream
):
    """The pin moves from big A to big B (every file rewritten); the run dies half-way."""
    import shutil

    root = tmp_path / "project"
    shutil.copytree(_large_at_a, root, symlinks=True)
    manifest = root / "qola.toml"
    lib = root / "3rdparty" / "big"
    (lib / "notes.txt").write_text("mine\n")  # someone's untracked file: must survive
    git(lib, "branch", "keep")  # and a branch of theirs
    manifest.write_text(manifest.read_text().replace(large_upstream.big_a, large_upstream.big_b))
    proc = procs.start("checkout", "-m", str(manifest))
    kill_when(proc, lambda: MOVE_POINTS[point](lib), point)
    assert proc.returncode == -signal.SIGKILL, f"the run ended before {point}"
    assert head(lib) == large_upstream.big_a  # killed half-way: HEAD has not moved yet
    rerun = procs.run("checkout", "-m", str(manifest))
    assert rerun.returncode == 0, rerun.stderr
    if point == "mid-checkout":
        assert "an earlier run did not finish moving 3rdparty/big; finishing its work" in (
            rerun.stderr
        )
        # What the dying checkout left differing from the index was saved, not dropped.
        prefix = store.backup_prefix("big")
        [saved] = git(lib, "for-each-ref", "--format=%(refname)", prefix).split()
        assert saved.endswith("-interrupted")
    assert head(lib) == large_upstream.big_b
    check = procs.run("verify", "-m", str(manifest))
    assert check.returncode == 0, check.stdout
    assert (lib / "notes.txt").read_text() == "mine\n"
    assert git(lib, "rev-parse", "keep") == large_upstream.big_a


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]
)
def test_signal_mid_checkout_cleans_up_then_rerun_finishes(
    signum, code, tmp_path, _large_at_a, large_upstream, monkeypatch
):
    """Ctrl-C (or a CI timeout's SIGTERM, a closed terminal's SIGHUP) reaches qola and git
    mid-move: exit 130/143/129 with the shim and the lock record gone; the next run
    finishes the move."""
    import shutil

    private_tmp = tmp_path / "tmpdir"
    private_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(private_tmp))
    root = tmp_path / "project"
    shutil.copytree(_large_at_a, root, symlinks=True)
    manifest = root / "qola.toml"
    lib = root / "3rdparty" / "big"
    (lib / "notes.txt").write_text("mine\n")
    manifest.write_text(manifest.read_text().replace(large_upstream.big_a, large_upstream.big_b))
    proc = procs.start("checkout", "-m", str(manifest))
    try:
        procs.wait_for(lambda: _move_checking_out(lib) or proc.poll() is not None, what="checkout")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signum)  # the whole group, as a terminal or a CI runner does
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    if signum == signal.SIGINT:
        assert stderr.endswith("qola: interrupted\n")
    assert list(private_tmp.iterdir()) == []  # the shim is gone
    assert lock_path(root).read_bytes() == b""  # the lock record too
    assert head(lib) == large_upstream.big_a  # stopped half-way
    rerun = procs.run("checkout", "-m", str(manifest))
    assert rerun.returncode == 0, rerun.stderr
    assert "an earlier run did not finish moving 3rdparty/big" in rerun.stderr
    assert head(lib) == large_upstream.big_b
    assert procs.run("verify", "-m", str(manifest)).returncode == 0
    assert (lib / "notes.txt").read_text() == "mine\n"


def _submodule_project(root: Path, url: Path, pin: str) -> Path:
    """A root whose submodule `big` (at 3rdparty/big) is the large upstream at pin."""
    from repos import init_repo
    from superprojects import add_gitlink

    init_repo(root)
    add_gitlink(root, "big", "3rdparty/big", str(url), pin)
    (root / "qola.toml").write_text(f'[deps.big]\ncommit = "{pin}"\n')
    return root / "qola.toml"


def _modules_fetching(root: Path) -> bool:
    return bool(list((root / ".git/modules/big/objects/pack").glob("tmp_pack_*")))


SUBMODULE_POINTS = {"mid-fetch": _modules_fetching, "mid-checkout": _clone_checking_out}


@pytest.mark.parametrize("point", sorted(SUBMODULE_POINTS))
def test_sigkill_during_a_submodule_clone_then_rerun_keeps_what_was_fetched(
    point, tmp_path, large_upstream
):
    """A submodule of the root keeps its repository in .git/modules from the start: a
    killed first clone leaves no half-repository at its path, and the rerun reuses
    what the killed one fetched (all of it, once the fetch had finished)."""
    root = tmp_path / "project"
    manifest = _submodule_project(root, large_upstream.path, large_upstream.big_a)
    proc = procs.start("checkout", "-m", str(manifest))
    kill_when(proc, lambda: SUBMODULE_POINTS[point](root), point)
    assert proc.returncode == -signal.SIGKILL, f"the run ended before {point}"
    big = root / "3rdparty" / "big"
    assert not (big / ".git").exists()  # a killed clone never looks like a checkout
    rerun = procs.run("checkout", "-v", "-m", str(manifest))
    assert rerun.returncode == 0, rerun.stderr
    assert f"reusing the repository in {root / '.git/modules/big'}" in rerun.stderr
    fetches = [command for command in ran(rerun.stderr) if command.startswith("fetch")]
    assert len(fetches) == (1 if point == "mid-fetch" else 0), fetches
    assert head(big) == large_upstream.big_a
    assert temp_clones(root) == []
    status = git(root, "submodule", "status")
    assert status.split()[:2] == [large_upstream.big_a, "3rdparty/big"], status
    check = procs.run("verify", "--strict", "-m", str(manifest))
    assert check.returncode == 0, check.stdout
