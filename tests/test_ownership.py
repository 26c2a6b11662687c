"""The commands in a tree that belongs to another user ("dubious ownership"), for real."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import procs
import pytest
from repos import git, head, init_repo, snapshot

FOREIGN_UID = 12345

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root: chown-ing a tree to another uid is the test"
)


def chown_tree(path: Path) -> None:
    subprocess.run(["chown", "-R", f"{FOREIGN_UID}:{FOREIGN_UID}", str(path)], check=True)


@pytest.fixture
def private_tmp(tmp_path, monkeypatch) -> Path:
    """TMPDIR for the qola processes: where the shim's folder is made, and must vanish from."""
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.delenv("SUDO_UID", raising=False)  # as root git would trust $SUDO_UID's repos
    return folder


def qola(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    return subprocess.run(
        [sys.executable, "-m", "qola", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


@pytest.fixture
def foreign_owned(pinned_clean):
    """A synced superproject, dependency and nested submodule owned by another uid."""
    chown_tree(pinned_clean.root)
    return pinned_clean


@pytest.fixture
def foreign_behind_pin(behind_pin):
    """Owned by another uid, and the manifest pins a commit that still has to be fetched."""
    chown_tree(behind_pin.root)
    return behind_pin


def test_plain_git_refuses_the_foreign_tree(foreign_owned):
    proc = subprocess.run(
        ["git", "-C", str(foreign_owned.lib), "status"], capture_output=True, text=True
    )
    assert proc.returncode != 0 and "detected dubious ownership" in proc.stderr


@pytest.mark.parametrize("command", ["verify", "status"])
def test_off_mode_fails_clearly_and_changes_nothing(command, foreign_owned, private_tmp):
    before = snapshot(foreign_owned.root)
    proc = qola(command, "--safe-directory", "off", "-m", str(foreign_owned.manifest))
    assert proc.returncode == 3
    assert "detected dubious ownership" in proc.stderr
    assert (
        "hint: the repository belongs to another user; run qola with --safe-directory "
        "scoped (the default) or all" in proc.stderr
    )
    assert snapshot(foreign_owned.root) == before
    assert list(private_tmp.iterdir()) == []


def test_off_mode_checkout_fails_and_moves_nothing(foreign_behind_pin, upstream, private_tmp):
    proc = qola("checkout", "--safe-directory", "off", "-m", str(foreign_behind_pin.manifest))
    assert proc.returncode == 3
    assert "detected dubious ownership" in proc.stderr
    assert _head_as_owner(foreign_behind_pin.lib) == upstream.lib_v2


@pytest.mark.parametrize("mode", ["scoped", "all"])
def test_checkout_moves_foreign_tree_with_nested_submodule(
    mode, foreign_behind_pin, upstream, private_tmp
):
    proc = qola("checkout", "--safe-directory", mode, "-m", str(foreign_behind_pin.manifest))
    assert proc.returncode == 0, proc.stderr
    assert _head_as_owner(foreign_behind_pin.lib) == upstream.lib_tip
    assert _head_as_owner(foreign_behind_pin.nested) == upstream.nested_v2
    assert list(private_tmp.iterdir()) == []


@pytest.mark.parametrize("mode", ["scoped", "all"])
@pytest.mark.parametrize("command", ["verify", "status"])
def test_read_commands_work_on_foreign_tree(command, mode, foreign_owned, private_tmp):
    proc = qola(command, "--safe-directory", mode, "-m", str(foreign_owned.manifest))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(private_tmp.iterdir()) == []


def test_mode_from_environment(foreign_owned, private_tmp):
    proc = qola("verify", "-m", str(foreign_owned.manifest), env={"QOLA_SAFE_DIRECTORY": "off"})
    assert proc.returncode == 3


def test_verify_catches_dirt_in_foreign_nested_submodule(foreign_owned, private_tmp):
    (foreign_owned.nested / "nested.txt").write_text("edited\n")
    proc = qola("verify", "-m", str(foreign_owned.manifest))
    assert proc.returncode == 1
    assert "dirty: extern/nested: modified content" in proc.stdout


@pytest.mark.parametrize("mode", ["scoped", "all"])
def test_exec_runs_git_in_nested_submodule_and_passes_exit_code(mode, foreign_owned, private_tmp):
    proc = qola(
        "exec", "--safe-directory", mode, "-m", str(foreign_owned.manifest), "--",
        "git", "-C", str(foreign_owned.nested), "rev-parse", "HEAD",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == _head_as_owner(foreign_owned.nested)
    proc = qola("exec", "-m", str(foreign_owned.manifest), "--", "sh", "-c", "exit 7")
    assert proc.returncode == 7
    assert list(private_tmp.iterdir()) == []


def test_exec_off_mode_leaves_git_refusing(foreign_owned, private_tmp):
    proc = qola(
        "exec", "--safe-directory", "off", "-m", str(foreign_owned.manifest), "--",
        "git", "-C", str(foreign_owned.lib), "status",
    )  # fmt: skip
    assert proc.returncode != 0
    assert "detected dubious ownership" in proc.stderr


def test_exec_unknown_command_exits_2(pinned_clean, private_tmp):
    proc = qola("exec", "-m", str(pinned_clean.manifest), "--", "no-such-command-qola")
    assert proc.returncode == 2
    assert proc.stderr.startswith("qola: no-such-command-qola: cannot run it:")
    assert list(private_tmp.iterdir()) == []


def test_scoped_never_trusts_hostile_repository_above_the_tree(tmp_path, upstream, private_tmp):
    """A foreign repo around the project with an fsmonitor command: never trusted, never run."""
    hostile = init_repo(tmp_path / "hostile")
    marker = tmp_path / "fsmonitor-ran"
    git(hostile, "config", "core.fsmonitor", f"touch {marker}")
    project = hostile / "inner"
    project.mkdir()
    (project / "qola.toml").write_text(
        f'[qola]\nroot = "."\n[deps.lib]\npath = "lib"\nurl = "{upstream.lib}"\n'
        f'commit = "{upstream.lib_v2}"\n'
    )
    chown_tree(hostile)
    proc = qola("checkout", "-m", str(project / "qola.toml"))
    assert proc.returncode == 0, proc.stderr
    proc = qola("verify", "-m", str(project / "qola.toml"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = qola("exec", "-m", str(project / "qola.toml"), "--", "git", "-C", str(hostile), "status")
    assert proc.returncode != 0 and "detected dubious ownership" in proc.stderr
    assert not marker.exists()


def test_user_config_keeps_working_and_is_not_written(tmp_path, upstream, private_tmp, monkeypatch):
    """url.insteadOf and credential.helper from ~/.gitconfig still apply under the shim."""
    home = tmp_path / "home"
    home.mkdir()
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        '[protocol "file"]\n\tallow = always\n'
        f'[url "{upstream.lib}"]\n\tinsteadOf = https://mirror.invalid/lib.git\n'
        "[credential]\n\thelper = store --file=/nonexistent/qola-test\n"
    )
    original = gitconfig.read_bytes()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL")
    root = init_repo(tmp_path / "project")
    (root / "qola.toml").write_text(
        f'[deps.lib]\npath = "lib"\nurl = "https://mirror.invalid/lib.git"\n'
        f'commit = "{upstream.lib_v2}"\n'
    )
    chown_tree(root)
    proc = qola("checkout", "-m", str(root / "qola.toml"))
    assert proc.returncode == 0, proc.stderr  # reached only through the insteadOf rewrite
    assert _head_as_owner(root / "lib") == upstream.lib_v2
    proc = qola("exec", "-m", str(root / "qola.toml"), "--", "git", "config", "credential.helper")
    assert proc.stdout == "store --file=/nonexistent/qola-test\n"
    assert gitconfig.read_bytes() == original
    assert sorted(p.name for p in home.iterdir()) == [".gitconfig"]
    assert list(private_tmp.iterdir()) == []


def test_option_shaped_dep_path_is_only_a_path(tmp_path, upstream, private_tmp, run_qola):
    root = init_repo(tmp_path / "project")
    marker = tmp_path / "pwned"
    (root / "qola.toml").write_text(
        f'[deps.lib]\npath = "--upload-pack=touch {marker}"\nurl = "{upstream.lib}"\n'
        f'commit = "{upstream.lib_v2}"\n'
    )
    res = run_qola("checkout", "-m", str(root / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    assert head(root / f"--upload-pack=touch {marker}") == upstream.lib_v2
    assert not marker.exists()


def start_hanging_checkout(make_project, private_tmp):
    """A checkout whose fetch hangs (an ssh that never answers), once the fetch has started."""
    project = make_project()
    text = project.manifest.read_text()
    url = text.split('url = "')[1].split('"')[0]
    project.manifest.write_text(text.replace(url, "ssh://git.invalid/lib.git"))
    started = private_tmp.parent / "ssh-started"
    proc = subprocess.Popen(
        [sys.executable, "-m", "qola", "checkout", "-m", str(project.manifest)],
        env={**os.environ, "GIT_SSH_COMMAND": f"touch {started}; sleep 60 #"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=procs.default_sigint,
    )
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert started.exists(), "the fetch never started"
    assert any(private_tmp.iterdir())  # the shim exists while qola runs
    return project, proc


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_mid_fetch_exits_and_leaves_nothing(signum, code, make_project, private_tmp):
    project, proc = start_hanging_checkout(make_project, private_tmp)
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    if signum == signal.SIGINT:
        assert "qola: interrupted" in stderr
    assert list(private_tmp.iterdir()) == []  # the shim is gone
    assert not (project.root / "3rdparty" / "lib").exists()
    assert not list((project.root / "3rdparty").glob(".*qola-clone*"))  # and the half-clone


def _head_as_owner(repo: Path) -> str:
    return git(repo, "-c", f"safe.directory={repo}", "rev-parse", "HEAD")
