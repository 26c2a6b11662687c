"""`qola checkout`: bring every dependency (or the names given) to its pin."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from qola.base import console
from qola.base.plural import count
from qola.commands.editing import show_notes
from qola.commands.session import Common, finite, session, write_cmake
from qola.history import edit_record
from qola.output import cmake_calls, cmake_env, render
from qola.repo import gitfiles, store
from qola.sync import developing, report
from qola.sync.engine import checkout as run_checkout
from qola.sync.plan import Options

if TYPE_CHECKING:
    from qola.sync.at_pin import Handoff


class CheckoutOptions(NamedTuple):  # not a dataclass: dataclasses cost imports
    """How `checkout` moves and reports: its options (qola/commands/options.py), from click."""

    offline: bool
    force: bool
    jobs: int
    cache: Path | None  # --cache: the mirrors' folder
    cmake_out: Path | None
    lock_timeout: float
    fetch_timeout: float
    fmt: str  # --format


def checkout(common: Common, opts: CheckoutOptions, handoff: Handoff | None = None) -> int:
    """Check out, report each dependency in manifest order, and return the exit code.

    handoff: what the no-op loaded and observed before it stepped aside."""
    offline, fmt, cache, cmake_out = opts.offline, opts.fmt, opts.cache, opts.cmake_out

    with session(common, offline=offline, handoff=handoff) as sess:
        cmake_calls.check_claims(sess.manifest, sess.deps)  # another qola_checkout()'s folders
        _warn_if_an_edit_is_left_over(sess.manifest.root)
        sess.runner.timeout = finite(opts.fetch_timeout)
        options = Options(offline, opts.force, opts.jobs, cache.absolute() if cache else None)
        result = run_checkout(
            sess.manifest, sess.deps, sess.runner, options, sess.note, opts.lock_timeout, sess.seen
        )
        show_notes(sess, sess.deps, result)
        for dep in sess.deps:
            outcome = result.outcomes.get(dep.name)
            if dep.name in result.failures or fmt != "text":
                continue
            what = "; ".join(outcome.actions) if outcome and outcome.actions else report.UP_TO_DATE
            state = result.states.get(dep.name)
            if state is not None and state.overridden:
                what = report.overridden(state.worktree)
            elif state is not None and state.developing:
                what = developing.words(sess.runner, state)
            console.result(report.shown(*report.line(dep, what), console.paint))
        for dep in sess.deps:  # in manifest order, however --jobs finished them
            if dep.name in result.failures:
                cmake_env.report(cmake_env.render(result.failures[dep.name]))
        if result.failures:
            failed = ", ".join(result.failures)
            total = count(len(sess.deps), "dependency", "dependencies")
            cmake_env.report(
                console.paint(f"qola: {len(result.failures)} of {total} failed: {failed}",
                              "red", console.stderr())
            )  # fmt: skip
        if fmt == "json":
            console.result(render.checkout_json(sess.manifest, sess.deps, result), end="")
        if result.exit_code == 0 and cmake_out is not None:
            write_cmake(cmake_out, sess, result.seen)
        return result.exit_code


def _warn_if_an_edit_is_left_over(root: Path) -> None:
    """A killed bump or freeze left its record: say so (one lstat when there is none)."""
    import os


    gitdir = gitfiles.git_dir(root)
    if gitdir is not None and os.path.lexists(store.editing_record(gitdir)):

        edit_record.warn_if_left_over(root)
