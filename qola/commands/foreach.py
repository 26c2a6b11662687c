"""`qola foreach [NAMES] -- CMD...`: run a command in each dependency's folder, under the shim."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base import console
from qola.base.errors import UsageError
from qola.commands.exec import folders_to_trust
from qola.commands.session import Common, Session, session
from qola.repo import gitfiles
from qola.sync.observe import observe

if TYPE_CHECKING:
    from qola.manifest import Dep

NOT_FOUND = 127  # a shell's code for a command it cannot find
NOT_RUNNABLE = 126  # ... and for one it found but cannot run


@dataclass
class Run:
    """CMD in one dependency: its folder, and once it ran, its exit code and output."""

    dep: Dep
    folder: Path
    code: int | None = None  # None: not run (stopped before it)
    stdout: bytes = b""
    stderr: bytes = b""
    problem: str | None = None  # why CMD could not be started there


def foreach(common: Common, command: tuple[str, ...], keep_going: bool, jobs: int) -> int:
    """Run command in each selected dependency; the exit code of the first that failed."""
    if not command:
        raise UsageError("foreach", "no command to run", "qola foreach [NAMES] -- CMD [ARG...]")
    _check_runnable(command[0])
    with session(common) as sess:
        runs, env = _prepare(sess)
        if jobs <= 1 or len(runs) <= 1:
            for run in runs:
                sess.note(f"{run.dep.name} ({run.folder})")
                _run(run, command, env, capture=False)
                if run.code and not keep_going:
                    break
        else:
            _run_parallel(sess, runs, command, env, keep_going, jobs)
    return _report(runs)


def _check_runnable(program: str) -> None:
    """A bare command name must be on PATH (else nothing runs: exit 2); a path is looked
    for in each dependency's folder."""
    if os.sep not in program and shutil.which(program) is None:
        raise UsageError(program, "command not found on PATH; nothing was run")


def _prepare(sess: Session) -> tuple[list[Run], dict[str, str]]:
    """The runs, in manifest order, and the environment: the shim trusting every
    dependency and nested submodule, with their own config's commands overridden."""

    runs, trusted = [], [sess.manifest.root]
    for dep in sess.deps:
        state = observe(sess.manifest, dep, sess.runner)
        if isinstance(state.refusal, gitfiles.Outside):
            console.warning(f"{dep.name}: {state.worktree} is skipped: {state.refusal}")
            continue
        if not (state.is_repo or (state.overridden and state.worktree.is_dir())):
            sess.note(f"{dep.name}: {state.worktree} is not checked out; skipped")
            continue
        sess.env.add(*folders_to_trust(dep.name, state))
        trusted.append(state.worktree)
        runs.append(Run(dep, state.worktree))
    # What the shim lets git into, CMD's git must not run the commands of either.
    neutral = sess.runner.overrides_for_all(trusted)
    return runs, {**os.environ, **sess.env, **neutral}


def _run(run: Run, command: tuple[str, ...], env: dict[str, str], capture: bool) -> None:
    own = {"QOLA_NAME": run.dep.name, "QOLA_PATH": str(run.folder), "QOLA_COMMIT": run.dep.commit}
    try:
        proc = subprocess.run(list(command), cwd=run.folder, env={**env, **own},
                              capture_output=capture, check=False)  # fmt: skip
    except OSError as error:
        run.code = NOT_FOUND if isinstance(error, FileNotFoundError) else NOT_RUNNABLE
        run.problem = f"cannot run {command[0]!r} in {run.folder}: {error.strerror}"
        return
    run.code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
    run.stdout, run.stderr = proc.stdout or b"", proc.stderr or b""


def _run_parallel(
    sess: Session,
    runs: list[Run],
    command: tuple[str, ...],
    env: dict[str, str],
    keep_going: bool,
    jobs: int,
) -> None:
    """jobs at a time, each one's output kept and written whole when it ends, in manifest
    order; after a failure (without keep_going) nothing new starts."""
    failed = threading.Event()

    def task(run: Run) -> Run:
        if not failed.is_set() or keep_going:
            _run(run, command, env, capture=True)
            if run.code:
                failed.set()
        return run

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for run in pool.map(task, runs):  # map yields in manifest order
            if run.code is None:
                continue
            sess.note(f"{run.dep.name} ({run.folder})")
            console.raw(run.stdout)
            console.raw(run.stderr, err=True)


def _report(runs: list[Run]) -> int:
    """Say what failed and what did not run; the first failure's exit code, else 0."""
    failures = [run for run in runs if run.code]
    for run in failures:
        if run.problem:
            console.message(f"qola: {run.dep.name}: {run.problem}")
    if not failures:
        return 0
    listed = ", ".join(f"{run.dep.name} (exit {run.code})" for run in failures)
    console.message(f"qola: the command failed in {len(failures)} of {len(runs)}: {listed}")
    skipped = [run.dep.name for run in runs if run.code is None]
    if skipped:
        console.message(f"qola: not run after the failure: {', '.join(skipped)}")
    first = failures[0].code
    assert first is not None
    return first
