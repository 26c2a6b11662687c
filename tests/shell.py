"""Run commands the way a CI job or a pre-commit hook would, with `qola` on PATH.

`qola` there is a small script that runs this checkout's qola with this interpreter
(the console script installed in the environment may belong to another checkout).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent  # the checkout whose qola is under test


def qola_env(folder: Path) -> dict[str, str]:
    """The environment with a `qola` command for this checkout first on PATH."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "qola"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m qola "$@"\n')
    script.chmod(0o755)
    python_path = os.pathsep.join(filter(None, [str(SOURCE), os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": python_path,
    }


def run_shell(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """One CI step: `bash -e -c COMMAND`, as GitHub Actions and GitLab CI run a step."""
    return subprocess.run(
        ["bash", "-e", "-c", command], cwd=cwd, env=env, capture_output=True, text=True
    )


def run_argv(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
