"""Run qola as a real process (for locks, signals and kills), importing this checkout's qola."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent  # the qola under test, not an installed one


def default_sigint() -> None:
    """Run in the child before exec: Ctrl-C acts as in a terminal, even when the tests were
    started in the background (where the shell makes children ignore SIGINT)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, **(extra or {})}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SOURCE), env.get("PYTHONPATH")]))
    return env


def run(*args: str, env: dict[str, str] | None = None, timeout: float = 120):
    """Run `python -m qola ARGS` to completion."""
    return subprocess.run(
        [sys.executable, "-m", "qola", *args],
        capture_output=True,
        text=True,
        check=False,
        env=environment(env),
        timeout=timeout,
    )


def start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start `python -m qola ARGS` in its own process group (so a kill reaches git too)."""
    return subprocess.Popen(
        [sys.executable, "-m", "qola", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(env),
        start_new_session=True,
        preexec_fn=default_sigint,
    )


def hold_lock(root: Path) -> subprocess.Popen[str]:
    """Another process holding the root's lock until it is killed; returns once it holds it."""
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from qola.gitrun.lock import root_lock\n"
        "with root_lock(Path(sys.argv[1])):\n"
        "    print('held', flush=True)\n"
        "    time.sleep(600)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(root)],
        stdout=subprocess.PIPE,
        text=True,
        env=environment(),
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def wait_for(condition: Callable[[], bool], timeout: float = 60, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def noop_declined(argv: list[str], cwd: Path) -> bool:
    """True when qola.noop stepped aside (returned) for argv in cwd, instead of answering."""
    from qola import noop

    old = Path.cwd()
    os.chdir(cwd)
    try:
        noop.answer(argv)
    except SystemExit:
        return False
    finally:
        os.chdir(old)
    return True
