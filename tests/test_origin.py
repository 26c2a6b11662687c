"""The hints that say how to upgrade or reinstall qola name where it came from, never a
PyPI name that is not qola's: the checkout it runs from, or what pip recorded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from shell import SOURCE


def installed_copy(site: Path, record: dict[str, object] | None) -> Path:
    """qola laid out in site as a wheel installs it, without its CMake module, with pip's
    record of where it came from (direct_url.json) when one is given."""
    shutil.copytree(SOURCE / "qola", site / "qola", ignore=shutil.ignore_patterns("__pycache__"))
    info = site / "qola-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: qola\nVersion: 0.1\n")
    (info / "RECORD").write_text("")
    if record is not None:
        (info / "direct_url.json").write_text(json.dumps(record))
    return site


def run_installed(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, "-m", "qola", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip


@pytest.mark.parametrize(
    ("record", "source"),
    [
        (
            {"url": "https://example.invalid/qola.git",
             "vcs_info": {"vcs": "git", "commit_id": "0" * 40}},
            "git+https://example.invalid/qola.git",
        ),
        ({"url": "file:///src/my%20qola", "dir_info": {}}, "/src/my qola"),
        (None, "git+<qola's repository URL>"),
    ],
    ids=["from a git URL", "from a folder", "unknown"],
)  # fmt: skip
def test_hints_of_an_installed_qola_name_what_pip_installed_it_from(
    tmp_path: Path, record: dict[str, object] | None, source: str
) -> None:
    site = installed_copy(tmp_path / "site", record)
    manifest = tmp_path / "qola.toml"
    manifest.write_text("[qola]\nschema = 2\n")

    newer = run_installed(site, "verify", "-m", str(manifest), cwd=tmp_path)
    missing = run_installed(site, "cmake-dir", cwd=tmp_path)

    assert newer.returncode == 2
    assert newer.stderr.endswith(f'hint: upgrade qola: pip install --upgrade "{source}"\n')
    assert missing.returncode == 2
    assert missing.stderr == (
        "qola: cmake-dir: QoLAConfig.cmake is not installed with this qola\n"
        f'hint: reinstall qola: pip install --force-reinstall "{source}"\n'
    )
