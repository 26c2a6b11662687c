"""`qola bump NAME`: move a pin, show the log, rewrite the manifest, check out, stage."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from qola import console
from qola.session import Common, Session, finite, session

if TYPE_CHECKING:
    from qola.bump import Move
    from qola.checkout import Result
    from qola.manifest import Dep


def bump(
    common: Common,
    name: str,
    ref: str | None,
    dry_run: bool,
    do_commit: bool,
    no_checkout: bool,
    allow_downgrade: bool,
    offline: bool,
    force: bool,
    lock_timeout: float,
    fetch_timeout: float,
) -> int:
    """Move NAME's pin to REF: resolve, show the log, rewrite the pin, check out."""
    from qola import bump as moves
    from qola.checkout import checkout as run_checkout
    from qola.plan import Options

    common = dataclasses.replace(common, names=(name,))
    with session(common) as sess:
        sess.runner.timeout = finite(fetch_timeout)
        [dep] = sess.deps
        worktree = sess.manifest.root / dep.path
        options = Options(offline, force)
        # Resolved with ls-remote and described from a throw-away repository: nothing is
        # written before the checkout (none at all with --dry-run or --no-checkout).
        new, source = moves.resolve(sess.runner, dep, worktree, ref, offline)
        move = moves.Move(dep, dep.commit, new, ref or dep.track or "the default branch")
        move = moves.describe(sess.runner, move, worktree, source, offline, allow_downgrade)
        new = move.new
        if move.old == move.new:
            console.result(f"{dep.name} is already at {new[:12]} ({move.ref})")
            if do_commit and not dry_run:
                _finish_commit(sess, move, worktree, offline)
            elif not dry_run:
                _stage_disagreeing_gitlink(sess, dep)
            return 0
        console.result(move.headline())
        for line in move.log:
            console.result(f"  {line}")
        if move.count > len(move.log):
            console.result(f"  ... and {move.count - len(move.log)} more")
        if dry_run:
            console.result("dry run: nothing was written")
            return 0
        moved = dataclasses.replace(dep, commit=new)
        # The edit is computed (and checked) before anything changes, and written only
        # after the checkout succeeded: a refused or failed checkout writes nothing.
        raw, text = moves.read_manifest(sess.manifest)
        new_text = moves.edit_pins(sess.manifest, text, {dep: new})
        if not no_checkout:
            result = run_checkout(
                sess.manifest, (moved,), sess.runner, options, sess.note, lock_timeout
            )
            if result.failures:
                left = f"{sess.manifest.path.name} was left unchanged: "
                return report_failures(result, after=left)
        gitlink = moves.root_gitlink(sess.runner, sess.manifest, dep)
        moves.write_manifest(sess.manifest, raw, new_text)
        sess.note(f"{dep.name}: {sess.manifest.path.name} now pins {new}")
        if not do_commit:  # a commit stages them itself, in one index write
            stage(sess, raw, {dep: new}, {dep: gitlink})
        else:
            links = {dep.path: new} if gitlink is not None else {}
            sha = moves.commit(sess.runner, sess.manifest, move.message(), links)
            console.result(
                f"committed {sha[:12]}: Bump {dep.name} from {move.old[:7]} to {new[:7]}"
            )
        return 0


def _finish_commit(sess: Session, move: Move, worktree: Path, offline: bool) -> None:
    """Commit a pin an earlier `bump --commit` wrote but did not commit (killed between)."""
    from qola import bump as moves

    dep = move.dep
    committed = moves.committed_pin(sess.runner, sess.manifest, dep)
    if committed is None or committed == move.new:
        return
    before = dataclasses.replace(dep, commit=committed)
    move = moves.Move(before, committed, move.new, move.ref)
    move = moves.describe(sess.runner, move, worktree, None, offline, True)
    links = {dep.path: move.new} if moves.root_gitlink(sess.runner, sess.manifest, dep) else {}
    sha = moves.commit(sess.runner, sess.manifest, move.message(), links)
    sess.note(f"{dep.name}: the manifest pinned {move.new[:12]} but HEAD did not: committing it")
    console.result(f"committed {sha[:12]}: Bump {dep.name} from {move.old[:7]} to {move.new[:7]}")


def _stage_disagreeing_gitlink(sess: Session, dep: Dep) -> None:
    """A pin edited by hand: stage it as the root's gitlink too (what a configure's warning
    about the two disagreeing asks for)."""
    from qola import bump as moves

    gitlink = moves.root_gitlink(sess.runner, sess.manifest, dep)
    if gitlink is not None and gitlink != dep.commit:
        raw, _ = moves.read_manifest(sess.manifest)
        stage(sess, raw, {dep: dep.commit}, {dep: gitlink})


def stage(
    sess: Session, raw: bytes, pins: dict[Dep, str], gitlinks: dict[Dep, str | None]
) -> None:
    """Stage the new pins with their gitlinks, so that the next `git commit` has both."""
    from qola import bump as moves

    for dep, sha in pins.items():
        if gitlinks.get(dep) is not None:
            moves.stage_gitlink(sess.runner, sess.manifest, dep, sha)
            sess.note(f"{dep.name}: staged the gitlink {dep.path} at {sha[:12]}")
    why_not = moves.stage_manifest(sess.runner, sess.manifest, raw, pins)
    name = sess.manifest.path.name
    sess.note(f"staged {name}" if why_not is None else f"{name} was not staged: {why_not}")


def report_failures(result: Result, after: str = "") -> int:
    """Print a checkout's failures; return its exit code."""
    for error in result.failures.values():
        console.message(error.render())
    if after:
        console.message(f"qola: the checkout failed; {after}nothing was committed")
    return result.exit_code
