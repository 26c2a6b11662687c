"""Finish what a killed run left half-done in a dependency, before anything else looks at it.

A run that moves an existing dependency writes `<gitdir>/qola/moving` once
its local work has been checked, and removes it when the move is over or git
reported an error (git checks before it writes, and the normal path copes with
what a clean failure leaves); both happen under the root's lock (qola.lock).
So a later run, holding that lock, that finds the marker knows the run that
wrote it was killed mid-move (SIGKILL, SIGINT, SIGTERM, OOM, power loss).

What such a run can leave: git's own lock files (`index.lock`, `shallow.lock`
…), which make every later git command in the repository fail, and a work
tree half-way between the old commit and the pin (git writes the files before
the index and HEAD). The marker is written only after the local-work check
passed (or `--force` saved the work), so at that moment no tracked file was
modified: differences found afterwards are the dying git's. They are saved
anyway, under refs/qola/backup/<name>/, and then the move is completed.

Clones need none of this: they happen in a temporary folder (apply.py).
"""

from __future__ import annotations

import json
import os
import time
from contextlib import suppress
from pathlib import Path

from qola import gitfiles
from qola.git import Runner
from qola.manifest import Dep
from qola.observe import has_commit

_MARKER = Path("qola") / "moving"
# Git's lock files that a killed git leaves behind (lockfile.c: "<file>.lock").
_LOCK_SUFFIX = ".lock"
_CLOCK_SLACK = 2.0  # seconds: file times and time.time() may disagree a little


def begin(worktree: Path) -> None:
    """Record that a move of this dependency starts (after its local work was checked)."""
    gitdir = gitfiles.git_dir(worktree)
    if gitdir is not None:
        marker = gitdir / _MARKER
        marker.parent.mkdir(exist_ok=True)
        marker.write_text(json.dumps({"pid": os.getpid(), "started": time.time()}) + "\n")


def end(worktree: Path) -> None:
    """Record that the move is over (or failed cleanly); only a kill leaves the marker."""
    gitdir = gitfiles.git_dir(worktree)
    if gitdir is not None:
        with suppress(OSError):  # also on a read-only file system, where begin() failed
            (gitdir / _MARKER).unlink()
        with suppress(OSError):  # and the folder begin() made, unless it holds more
            (gitdir / _MARKER).parent.rmdir()


def repair(runner: Runner, worktree: Path, dep: Dep) -> list[str]:
    """Finish a move an earlier run left unfinished in this dependency; returns notes."""
    gitdir = gitfiles.git_dir(worktree)
    if gitdir is None:
        return []
    marker = gitdir / _MARKER
    try:
        started = float(json.loads(marker.read_text())["started"])
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError):
        started = 0.0  # a marker cut short by the kill: any lock may be the dead run's
    notes = [f"an earlier run did not finish moving {dep.path}; finishing its work"]
    for lock in _stale_locks(gitfiles.common_dir(gitdir), started - _CLOCK_SLACK):
        with suppress(OSError):
            lock.unlink()
            notes.append(f"removed {lock}, left by that run")
    notes.extend(_save_and_reset(runner, worktree, dep))
    if has_commit(runner, worktree, dep.commit):
        # The pin was fetched before the kill: complete the checkout. -f, because the
        # dying checkout may have written files of the pin that the old index lacks.
        runner.run(worktree, "checkout", "-q", "-f", "--detach", dep.commit, subject=dep.name)
        if dep.submodules:
            runner.run(worktree, "submodule", "sync", "-q", "--recursive", subject=dep.name)
            update = ("submodule", "update", "-q", "--init", "--checkout", "--force")
            runner.run(worktree, *update, "--recursive", subject=dep.name, network=True)
    marker.unlink()
    return notes


def _stale_locks(gitdir: Path, since: float) -> list[Path]:
    found = []
    for folder, _dirs, files in os.walk(gitdir):
        for name in files:
            path = Path(folder, name)
            if name.endswith(_LOCK_SUFFIX) and name != "qola.lock":
                with suppress(OSError):
                    if path.stat().st_mtime >= since:
                        found.append(path)
    return found


def _save_and_reset(runner: Runner, worktree: Path, dep: Dep) -> list[str]:
    stash = runner.run(worktree, "stash", "create", check=False).stdout.strip()
    if not stash:
        return []
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    ref = f"refs/qola/backup/{dep.name}/{stamp}-interrupted"
    runner.run(worktree, "update-ref", ref, stash, subject=dep.name)
    runner.run(worktree, "reset", "-q", "--hard", subject=dep.name)
    return [f"saved what that run left modified as {ref}"]
