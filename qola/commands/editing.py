"""The last steps `bump` and `freeze` share: move, write the manifest, stage or commit.

Each runs under the root's lock with its record written first (qola/history/edit_record.py), so that
a run killed anywhere in them is finished by the same command run again.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from qola.base import console
from qola.base.errors import QolaError
from qola.base.plural import count
from qola.gitrun.lock import DEFAULT_TIMEOUT, root_lock
from qola.history import bump, bump_all, edit_record
from qola.output import cmake_env
from qola.sync.engine import checkout as run_checkout

if TYPE_CHECKING:
    from qola.commands.session import Session
    from qola.history.bump import Move
    from qola.manifest import Dep
    from qola.sync.engine import Result
    from qola.sync.plan import Options


@contextmanager
def recorded(sess: Session, edit: edit_record.Edit | None, lock_timeout: float) -> Iterator[None]:
    """Hold the root's lock with the edit's record written (edit None: it is there already,
    a killed run's); remove the record when the block ends, unless a signal ends it."""

    root = sess.manifest.root
    with root_lock(root, lock_timeout, sess.note):
        if edit is not None:
            # Left meanwhile by a run that held the lock while this one planned, and was
            # killed: this run's plan did not see it, so it must not replace it.
            left = edit_record.left_over(root, locked=True)
            if left is not None:
                edit_record.refuse_other(root, left, edit.command, meanwhile=True)
            edit_record.begin(root, edit)
        try:
            yield
        except Exception:
            # An error is reported and ends the command: the next run plans anew, unless
            # the manifest holds the new pins already (a commit refused for want of an
            # identity, a staging that failed): a plan then finds every pin "already at"
            # its tip and would commit nothing, so the edit is left to finish, as after a
            # kill, or a signal (KeyboardInterrupt, SystemExit).
            left = edit if edit is not None else edit_record.left_over(root, locked=True)
            if left is not None and _written(sess, left):
                sess.note(f"{sess.manifest.path.name} holds the new pins already; run "
                          f"`{left.command}` again to finish this edit (it writes, stages "
                          "and commits what this run meant to, and nothing else)")  # fmt: skip
            else:
                edit_record.end(root)
            raise
        edit_record.end(root)


def _written(sess: Session, edit: edit_record.Edit) -> bool:
    """Whether the manifest on disk holds the edit's new pins (and some pin moves)."""

    deps = {dep.name: dep for dep in sess.manifest.deps}
    if all(pin.old == pin.new for pin in edit.pins):
        return False  # nothing tells a written manifest from one not written yet
    try:
        _, text = bump.read_manifest(sess.manifest)
        return bump.edit_pins(sess.manifest, text, edit.pin_map(deps), edit.labels()) == text
    except (QolaError, OSError, KeyError):
        return False


def left_over(
    sess: Session, command: str, lock_timeout: float = DEFAULT_TIMEOUT
) -> Callable[[Options], int] | None:
    """When a killed run left an edit, a function that finishes it (or, when command is not
    the one that made it, refuses with a RefusedError); None when there is none."""
    root = sess.manifest.root
    path = edit_record.record_path(root)
    # Whether a record is there, not whether its pid lives: a pid is reused, and a run that
    # is really under way holds the lock, which finish() waits for before it reads again.
    if path is None or not os.path.lexists(path):
        return None

    def finish(options: Options) -> int:
        with root_lock(root, lock_timeout, sess.note):
            edit = edit_record.left_over(root, locked=True)  # again: no other run writes it now
            if edit is None:
                sess.note("an earlier edit of the manifest finished meanwhile; run again")
                return 0
            edit_record.refuse_other(root, edit, command)
            return _finish(sess, edit, options, lock_timeout)

    return finish


def _finish(sess: Session, edit: edit_record.Edit, options: Options, lock_timeout: float) -> int:
    progress = edit_record.judge(sess.runner, sess.manifest, edit)
    sess.note(f"an earlier `{edit.command}` did not finish; finishing it (the pins it "
              "chose, and nothing else)")  # fmt: skip
    with recorded(sess, None, lock_timeout):
        if progress.committed is not None:
            assert edit.message is not None
            console.result(f"committed {progress.committed[:12]}: "
                           f"{edit.message.splitlines()[0]}")  # fmt: skip
            return 0
        return carry_out(sess, edit, options, lock_timeout, None if progress.written else ())


def carry_out(
    sess: Session,
    edit: edit_record.Edit,
    options: Options,
    lock_timeout: float,
    prepared: tuple[bytes, str] | tuple[()] | None,
    moving: list[Move] | None = None,
) -> int:
    """Move (as edit.moves says), write the manifest, then stage or commit; the record is
    held by the caller. prepared: the manifest's bytes as read and its edited text (a
    fresh run's, checked before the record was written); () to read and edit it now (a
    killed run's, whose manifest was not written yet); None when it is written already."""

    manifest = sess.manifest
    deps = {dep.name: dep for dep in manifest.deps}
    pins, labels = edit.pin_map(deps), edit.labels()
    if prepared is not None:
        if not prepared:
            raw, text = bump.read_manifest(manifest)
            prepared = (raw, bump.edit_pins(manifest, text, pins, labels))
            if edit.message is not None:
                bump.pinned_copies(sess.runner, manifest, pins, labels)  # or refuse, now
        if moving is None:
            moving = [bump.Move(deps[pin.name], pin.old, pin.new, "") for pin in edit.pins]
        code = _move(sess, edit, moving, options, lock_timeout)
        if code:
            return code
        bump.write_manifest(manifest, *prepared)
        if edit.command.startswith("qola bump --all"):
            sess.note(f"{manifest.path.name} now pins {count(len(pins), 'new commit')}")
        elif edit.command.startswith("qola bump "):
            pin = edit.pins[0]
            said = f"{pin.name}: {manifest.path.name} now"
            if pin.old != pin.new:
                sess.note(f"{said} pins {pin.new}")
            else:  # the label alone changed
                sess.note(f"{said} labels it {pin.tag}" if pin.tag else f"{said} has no label")
    linked = [deps[name] for name in edit.gitlinks]
    if edit.message is None:
        stage(sess, pins, linked, labels)
        return 0
    links = {dep.path: pins[dep] for dep in linked}
    sha = bump.commit(sess.runner, manifest, edit.message, pins, links, labels)
    console.result(f"committed {sha[:12]}: {edit.message.splitlines()[0]}")
    return 0


def _move(
    sess: Session, edit: edit_record.Edit, moving: list[Move], options: Options, lock_timeout: float
) -> int:
    """Bring the dependencies to the new pins; the exit code of a failure, else 0."""

    if edit.moves == "one":
        [move] = moving
        # With its new label: a dependency whose signatures are checked fetches that tag.
        moved = dataclasses.replace(move.dep, commit=move.new, tag=move.tag)
        result = run_checkout(sess.manifest, (moved,), sess.runner, options, sess.note,
                              lock_timeout)  # fmt: skip
        show_notes(sess, (moved,), result)
        if result.failures:
            left = f"{sess.manifest.path.name} was left unchanged: "
            return report_failures(result, after=left)
        return 0
    if edit.moves != "all":
        return 0
    steps, refused = bump_all.prepare(sess.runner, sess.manifest, moving, options)
    if refused:
        for error in refused:
            console.message(cmake_env.render(error))
        console.message("qola: bump --all: nothing was changed")
        return refused[0].exit_code
    result, restored = bump_all.move_all(sess.runner, sess.manifest, steps, options, sess.note,
                                      lock_timeout)  # fmt: skip
    show_notes(sess, (item.move.dep for item in steps), result)
    if restored is not None:
        return _report_rollback(sess, result, restored)
    for item in steps:
        if item.overridden is not None:
            sess.note(f"{item.move.dep.name}: overridden by {item.overridden}; not moved")
        elif item.head is None:
            sess.note(f"{item.move.dep.name}: not checked out; `qola checkout` "
                      "fetches its new pin")  # fmt: skip
    return 0


def stage(
    sess: Session, pins: dict[Dep, str], linked: list[Dep], labels: bump.Labels | None = None
) -> None:
    """Stage the new pins with the gitlinks of linked, so that the next `git commit` has
    both."""

    for dep in linked:
        bump.stage_gitlink(sess.runner, sess.manifest.root, dep, pins[dep])
        sess.note(f"{dep.name}: staged the gitlink {dep.path} at {pins[dep][:12]}")
    why_not = bump.stage_manifest(sess.runner, sess.manifest, pins, labels)
    name = sess.manifest.path.name
    sess.note(f"staged {name}" if why_not is None else f"{name} was not staged: {why_not}")


def show_notes(sess: Session, deps: Iterable[Dep], result: Result) -> None:
    """What a checkout noted of each dependency: what it saved, and how to get it back,
    always (--force's backups); the rest with -v."""
    for dep in deps:
        outcome = result.outcomes.get(dep.name)
        for note in outcome.shown if outcome is not None else ():
            sess.note(f"{dep.name}: {note}")
        for note in outcome.notes if outcome is not None else ():
            (sess.note if "saved" in note else sess.debug)(f"{dep.name}: {note}")


def report_failures(result: Result, after: str = "") -> int:
    """Print a checkout's failures; return its exit code."""
    for error in result.failures.values():
        console.message(cmake_env.render(error))
    if after:
        console.message(f"qola: the checkout failed; {after}nothing was committed")
    return result.exit_code


def _report_rollback(sess: Session, result: Result, restored: Result) -> int:
    """A move failed: say so, and whether every dependency is back where it was."""
    for error in result.failures.values():
        console.message(cmake_env.render(error))
    if restored.failures:
        for error in restored.failures.values():
            console.message(cmake_env.render(error))
        stuck = ", ".join(restored.failures)
        console.message(
            f"qola: bump --all failed and could not put back {stuck} (above); "
            f"{sess.manifest.path.name} and the index are unchanged"
        )
    else:
        console.message(
            "qola: bump --all failed: every dependency was put back where it was; "
            f"{sess.manifest.path.name} and the index are unchanged, nothing was committed"
        )
    return result.exit_code
