"""The commands a refusal's hint prints work as printed: pasted into a shell, they remove
the key qola refused, even one with a space in its subsection, and the run then goes on.

The dependency belongs to another uid and qola runs as root (the default scoped shim)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import procs
import pytest
from repos import git, snapshot

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: chown to another uid")


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.delenv("SUDO_UID", raising=False)
    return folder


@pytest.mark.parametrize("key, value", [
    ("url.file://{tmp}/mirror 2/.insteadOf", "{lib}"),  # fetchtarget: a rewrite
    ("http.https://a b.invalid/.sslCAInfo", "{tmp}/their ca.pem"),  # fetchtarget: a CA file
    ("remote.their remote.uploadpack", "touch {tmp}/pwn; git-upload-pack"),  # overrides
])  # fmt: skip
def test_a_refusals_hint_removes_the_key_as_printed(behind_pin, upstream, tmp_path, private_tmp,
                                                    key, value):  # fmt: skip
    project = behind_pin
    key = key.format(tmp=tmp_path)
    git(project.lib, "config", "--add", key, value.format(tmp=tmp_path, lib=upstream.lib))
    git(project.lib, "config", "--add", key, "twice")  # set twice: --unset would fail
    subprocess.run(["chown", "-R", "12345:12345", str(project.root)], check=True)
    before = snapshot(project.root)
    proc = procs.run("checkout", "-m", str(project.manifest))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    section, rest = key.split(".", 1)
    sub, name = rest.rsplit(".", 1)
    assert f"sets {section}.{sub}.{name.lower()} = " in proc.stderr
    assert snapshot(project.root) == before
    [command] = re.findall(r"^hint: .*?remove it \((git config .*?)\)(?:,| and run again)",
                           proc.stderr, re.MULTILINE)  # fmt: skip
    pasted = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    assert pasted.returncode == 0, (command, pasted.stderr)
    config = str(project.lib / ".git" / "config")
    assert git(tmp_path, "config", "--file", config, "--get-all", key, check=False) == ""
    proc = procs.run("checkout", "-m", str(project.manifest))
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "pwn").exists()
