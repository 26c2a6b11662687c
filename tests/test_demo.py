"""`qola demo [DIR]` end to end, offline, with the folder spelled as a person types it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("spelling", ["./demo", "absolute"])
def test_demo_in_relative_or_absolute_folder_runs_every_step(tmp_path: Path, spelling: str):
    folder = str(tmp_path / "demo") if spelling == "absolute" else spelling
    proc = subprocess.run(
        [sys.executable, "-m", "qola", "demo", folder],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )

    assert proc.returncode == 0, proc.stdout + proc.stderr
    for step in ("$ qola checkout", "$ qola verify", "$ qola status", "$ qola bump lib --commit"):
        assert step in proc.stdout
    # Every path the demo prints for a person to repeat is absolute, whatever was typed.
    assert f"# qola demo in {tmp_path / 'demo'}\n" in proc.stdout
    assert f"# done; everything is in {tmp_path / 'demo'}\n" in proc.stdout
    assert (tmp_path / "demo" / "project" / "3rdparty" / "lib" / "lib.txt").read_text() == "lib 2\n"


def test_demo_on_a_machine_with_no_git_config_at_all_runs_every_step(tmp_path: Path):
    """A fresh machine: no system or global config, so nothing allows local submodule
    URLs but the demo's own command-scope setting, which qola's transport pins keep."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_CONFIG")}
    env.update({"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"})

    proc = subprocess.run(
        [sys.executable, "-m", "qola", "demo", "./demo"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "transport 'file' not allowed" not in proc.stderr
    nested = tmp_path / "demo" / "project" / "3rdparty" / "lib" / "extern" / "nested"
    assert (nested / ".git").exists()


def test_demo_on_a_machine_without_a_git_identity_runs_every_step(tmp_path: Path):
    """A fresh container or CI runner: no user.name/user.email, no GIT_AUTHOR_* or EMAIL,
    and git told to guess none (user.useConfigOnly). The demo's own commit (bump --commit)
    still gets an identity: the demo project's."""
    config = tmp_path / "no-identity.gitconfig"
    config.write_text(
        '[protocol "file"]\n\tallow = always\n[user]\n\tuseConfigOnly = true\n'
        "[advice]\n\tdetachedHead = false\n"
    )
    gone = ("GIT_AUTHOR_", "GIT_COMMITTER_", "EMAIL")
    env = {k: v for k, v in os.environ.items() if not k.startswith(gone)}
    env["GIT_CONFIG_GLOBAL"] = str(config)
    refused = subprocess.run(["git", "var", "GIT_AUTHOR_IDENT"], env=env, cwd=tmp_path,
                             capture_output=True, text=True, check=False)  # fmt: skip
    assert refused.returncode != 0  # the machine really has no identity

    proc = subprocess.run(
        [sys.executable, "-m", "qola", "demo", "./demo"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "$ qola bump lib --commit" in proc.stdout
    project = tmp_path / "demo" / "project"
    log = subprocess.run(["git", "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s"], env=env,
                         cwd=project, capture_output=True, text=True, check=True)  # fmt: skip
    assert log.stdout.startswith(
        "qola demo <demo@qola.invalid>|qola demo <demo@qola.invalid>|Bump lib from "
    )
