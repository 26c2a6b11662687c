"""Starting a git process that only reads, outside the Runner (a config listing), and
the variables no git of qola's inherits."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping

from qola.base.errors import UsageError

# Variables that bind git to one repository. Hooks and IDEs leak them into the
# processes they start (pre-commit learned this in its issue #300); inherited
# by qola they would point every command at the wrong repository.
LEAKED_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_SHALLOW_FILE",
    "GIT_NAMESPACE",
)


def execute_raw(
    command: list[str], env: Mapping[str, str], timeout: float, stdin: bytes | None = None
) -> tuple[int | None, bytes, str]:
    """Run a git command that only reads (a config listing): (status, stdout's bytes as git
    wrote them, stderr); status None when it did not finish within timeout and was killed."""
    try:
        done = subprocess.run(command, input=stdin if stdin is not None else b"",
                              capture_output=True, env=dict(env), timeout=timeout,
                              check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return None, b"", ""
    except FileNotFoundError:
        raise UsageError("git", "the git executable was not found",
                         "install git 2.32 or newer and put it on PATH") from None  # fmt: skip
    return done.returncode, done.stdout, _text(done.stderr)


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value or "")
