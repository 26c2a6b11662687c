"""A `git` on PATH that counts the calls of one qola run and stops it before the Nth.

The wrapper is a small shell script in front of the real git. Each call adds one to
a counter file; the Nth call writes a `paused` file (with its arguments) and sleeps
instead of running git. A test then SIGKILLs the run's process group at exactly
that point, between two git commands, the same point on every machine.

With QOLA_TEST_GIT_WATCH naming a folder, each call also logs a digest of every name,
size, mode and modification time below it, taken before git runs: two calls with the
same digest are two kill points that leave the same tree (`distinct_points`). Left out
of the digest: what no run reads as a step of another's work — the lock file (its
holder record; the kernel drops the lock itself), qola's records of what a commit holds
(`qola/commits/`, written whole and never stale) and the no-op's stamps.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import procs


@dataclass(frozen=True)
class Wrapper:
    folder: Path  # holds the `git` script; put first on PATH

    @property
    def counter(self) -> Path:
        return self.folder / "count"

    @property
    def paused(self) -> Path:
        return self.folder / "paused"

    @property
    def log(self) -> Path:
        return self.folder / "log"

    @property
    def states(self) -> Path:
        return self.folder / "states"

    def env(
        self, pause_at: int = 0, watch: Path | None = None, pause_on: str = ""
    ) -> dict[str, str]:
        return {
            "PATH": f"{self.folder}{os.pathsep}{os.environ['PATH']}",
            "QOLA_TEST_GIT_PAUSE_AT": str(pause_at),
            "QOLA_TEST_GIT_WATCH": str(watch or ""),
            "QOLA_TEST_GIT_PAUSE_ON": pause_on,
        }

    def calls(self) -> list[str]:
        """The arguments of each call so far, in order."""
        return self.log.read_text().splitlines() if self.log.exists() else []

    def reset(self) -> None:
        for path in (self.counter, self.paused, self.log, self.states):
            path.unlink(missing_ok=True)


def make(folder: Path) -> Wrapper:
    """Write the wrapper script into folder (created)."""
    real = shutil.which("git")
    assert real is not None
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "git"
    script.write_text(
        "#!/bin/sh\n"
        f'dir="{folder}"\n'
        'n=$(( $(cat "$dir/count" 2>/dev/null || echo 0) + 1 ))\n'
        'echo "$n" > "$dir/count"\n'
        # One line per call: arguments may hold newlines (commit-tree -m).
        'line=$(printf "%s" "$*" | tr "\\n" " ")\n'
        'printf "%s\\n" "$line" >> "$dir/log"\n'
        'if [ -n "$QOLA_TEST_GIT_WATCH" ]; then\n'
        '  find "$QOLA_TEST_GIT_WATCH" \\( -path "*/qola/commits" -o -path "*/qola/noop"'
        ' -o -name qola.lock \\) -prune -o -printf "%P %s %m %T@ %l\\n"'
        ' | LC_ALL=C sort | cksum >> "$dir/states"\n'
        "fi\n"
        # Or before the first call whose arguments hold QOLA_TEST_GIT_PAUSE_ON (run_until's
        # pause_on: the same step even where a run makes more calls before it).
        'on=""; if [ -n "$QOLA_TEST_GIT_PAUSE_ON" ]; then case "$line" in\n'
        '  *"$QOLA_TEST_GIT_PAUSE_ON"*) on=1;; esac; fi\n'
        'if [ "$n" = "$QOLA_TEST_GIT_PAUSE_AT" ] || [ -n "$on" ]; then\n'
        '  printf "%s\\n" "$line" > "$dir/paused.tmp" && mv "$dir/paused.tmp" "$dir/paused"\n'
        "  while :; do sleep 1; done\n"
        "fi\n"
        f'exec "{real}" "$@"\n'
    )
    script.chmod(0o755)
    return Wrapper(folder)


def run_until(wrapper: Wrapper, pause_at: int, *args: str, pause_on: str = "") -> tuple[bool, str]:
    """Run `qola ARGS` and SIGKILL its process group before git call pause_at (or before
    the first call whose arguments hold pause_on).

    Returns (killed, the paused call's arguments); killed is False when the run
    ended before making that many git calls.
    """
    wrapper.reset()
    proc = procs.start(*args, env=wrapper.env(pause_at, pause_on=pause_on))
    try:
        procs.wait_for(
            lambda: wrapper.paused.exists() or proc.poll() is not None, what=f"git call {pause_at}"
        )
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    if proc.returncode != -signal.SIGKILL:
        return False, ""
    return True, wrapper.paused.read_text().strip()


def count_calls(
    wrapper: Wrapper, *args: str, watch: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run `qola ARGS` to the end through the wrapper; (result, every git call made)."""
    wrapper.reset()
    proc = procs.run(*args, env=wrapper.env(watch=watch))
    return proc, wrapper.calls()


def distinct_points(wrapper: Wrapper) -> list[int]:
    """After a count_calls with watch: the calls (1-based) before which the watched tree
    differs from what it was before the call ahead of it; a kill before any other call
    leaves the tree a kill before an earlier one leaves. The first call is always one."""
    states = wrapper.states.read_text().splitlines()
    return [n for n, state in enumerate(states, 1) if n == 1 or state != states[n - 2]]
