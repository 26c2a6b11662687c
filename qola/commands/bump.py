"""`qola bump NAME`: move a pin, show the log, rewrite the manifest, check out, stage."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from qola.base import console
from qola.base.errors import UsageError
from qola.commands import editing
from qola.commands.session import Common, Session, finite, session
from qola.history import bump as bumps  # (bump/bump_all here are the commands)
from qola.history import edit_record, releases, signed
from qola.history.bump_all import message, plan
from qola.manifest import UNPINNED
from qola.output import render
from qola.repo import develop_marks
from qola.sync.plan import Options

if TYPE_CHECKING:
    from qola.gitrun.git import Runner
    from qola.history.bump import Move
    from qola.manifest import Dep


class BumpOptions(NamedTuple):  # not a dataclass, as options.Spec: dataclasses cost imports
    """How `bump` moves pins: its options (spelled in qola/commands/options.py and
    cli.py), from click."""

    ref: str | None  # --to (bump NAME only)
    dry_run: bool
    do_commit: bool
    no_checkout: bool
    allow_downgrade: bool
    offline: bool
    force: bool
    lock_timeout: float
    fetch_timeout: float
    fmt: str  # json: the move as a JSON document (with dry_run only; bump NAME only)
    allow_unsigned: bool = False  # pin what its manifest's keys did not sign (the commit says)


def refuse_if_developing(sess: Session, deps: list[Dep]) -> None:
    """A bump would pin a commit the build of a dependency being developed does not use."""
    for dep in deps:
        if develop_marks.is_marked(sess.manifest.root, dep.name):
            raise UsageError(
                dep.name,
                f"it is being developed in this checkout (qola develop): a bump would "
                f"pin a commit that {dep.path} does not hold; nothing was changed",
                f"end it first (qola develop --end {dep.name}), or pin what is there "
                f"(qola freeze {dep.name})",
            )


def bump(common: Common, name: str, opts: BumpOptions) -> int:
    """Move NAME's pin to opts.ref: resolve, show the log, rewrite the pin, check out."""

    ref, dry_run, do_commit, no_checkout = opts.ref, opts.dry_run, opts.do_commit, opts.no_checkout
    offline, lock_timeout = opts.offline, opts.lock_timeout

    common = dataclasses.replace(common, names=(name,))
    # With --to, a pin written as a branch or tag name loads (as UNPINNED): this repairs it.
    with session(common, offline=offline, repair=name if ref else None) as sess:
        sess.runner.timeout = finite(opts.fetch_timeout)
        [dep] = sess.deps
        refuse_if_developing(sess, [dep])
        worktree = sess.manifest.root / dep.path
        options = Options(offline, opts.force)
        words = f"bump {name}" + (f" --to {ref}" if ref else "")
        command = command_line(words, commit=do_commit, no_checkout=no_checkout)
        finish = None if dry_run else editing.left_over(sess, command, lock_timeout)
        if finish is not None:
            return finish(options)
        # Resolved with ls-remote and described from a throw-away repository: nothing is
        # written before the checkout (none at all with --dry-run or --no-checkout).
        target = bumps.resolve(sess.runner, dep, worktree, ref, offline)
        new, source = target.sha, target.ref
        move = bumps.Move(dep, dep.commit, new, ref or dep.follows.label, tag=target.tag,
                          forward=target.forward, following=ref is None)  # fmt: skip
        if dep.commit == UNPINNED:  # no commit to count from, nor to descend from
            was = bumps.written_pin(bumps.read_manifest(sess.manifest)[1], dep)
            move = bumps.repair(sess.runner, move, worktree, source, offline, was)
        else:
            move = bumps.describe(sess.runner, move, worktree, source, offline,
                                  opts.allow_downgrade)  # fmt: skip
        if ref is not None and ref.lower() == new and move.new != new:
            # git peels it as checkout would not: the pin written is the commit it names.
            sess.note(f"{dep.name}: {ref[:12]} is a tag object, not a commit: pinning the "
                      f"commit it names, {move.new[:12]}")  # fmt: skip
            # Its label is a tag that names that commit, as for any other commit.
            move = dataclasses.replace(move, tag=releases.label_for(target.tags, move.new))
        new = move.new
        unsigned = {}
        if new != dep.commit or move.tag != dep.tag:  # refused (exit 4) before anything
            # is written, --dry-run too; a label changed on the same commit is checked too
            named = signed.asked_for(dep, move.tag, ref, source)
            tag, said = signed.vet(sess.runner, sess.manifest, dep, new, move.tag, offline,
                                   opts.allow_unsigned, named, target.tags)  # fmt: skip
            move = dataclasses.replace(move, tag=tag)
            unsigned = {dep.name: said} if said else {}
            warn_unsigned(unsigned)
        if opts.fmt == "json":

            console.result(render.bump_json(sess.manifest, move, dry_run), end="")
            return 0
        labels = {dep.name: move.tag}
        if move.old == move.new and move.tag != dep.tag:
            console.result(already(move))
        elif move.old == move.new:
            console.result(already(move))
            if do_commit and not dry_run:
                _finish_commit(sess, move, worktree, offline)
            elif not dry_run:
                _stage_disagreeing_gitlink(sess, dep)
            return 0
        else:
            console.result(move.headline())
            for line in move.details():
                console.result(f"  {line}")
        if offline and move.old != move.new:  # resolved here, not by the remote
            warn_if_only_here(sess.runner, worktree, dep.name, dep.path, dep.url, new)
        if dry_run:
            console.result("dry run: nothing was written")
            return 0
        # The edit is computed (and checked) before anything changes, and written only
        # after the checkout succeeded: a refused or failed checkout writes nothing.
        raw, text = bumps.read_manifest(sess.manifest)
        new_text = bumps.edit_pins(sess.manifest, text, {dep: new}, labels)
        if do_commit:
            bumps.pinned_copies(sess.runner, sess.manifest, {dep: new}, labels)  # or refuse
        linked = [dep] if bumps.root_gitlink(sess.runner, sess.manifest, dep) else []
        moves = "none" if no_checkout or move.old == move.new else "one"
        message = signed.recorded(move.message(), unsigned) if do_commit else None
        edit = edit_record.edit_for(sess.manifest, sess.runner, command, {dep: new}, linked,
                                message, moves, labels)  # fmt: skip
        with editing.recorded(sess, edit, lock_timeout):
            return editing.carry_out(sess, edit, options, lock_timeout, (raw, new_text), [move])


def warn_unsigned(unsigned: dict[str, str]) -> None:
    for name, problem in unsigned.items():
        console.warning(f"{name}: pinned with --allow-unsigned: {problem}")


def already(move: Move) -> str:
    """`fmt is already at 1239137d8e2f (v11.1.4)`, and the label it gains or loses."""
    dep, said = move.dep, f"{move.dep.name} is already at {move.new[:12]} ({move.ref})"
    if move.tag == dep.tag:
        return said
    if move.tag is None:
        return f"{said}; the label {dep.tag} no longer names it: removing it"
    return f"{said}; labelling it {move.tag}"


def command_line(
    words: str, groups: tuple[str, ...] = (), *, commit: bool = False, no_checkout: bool = False
) -> str:
    """The command an edit is recorded as, and which finishes it: what names the edit
    (the pins chosen, the groups, whether it commits), without the options of how."""
    parts = ["qola", words, *(f"--group {group}" for group in groups)]
    parts += ["--commit"] * commit + ["--no-checkout"] * no_checkout
    return " ".join(parts)


def _finish_commit(sess: Session, move: Move, worktree: Path, offline: bool) -> None:
    """Commit a pin an earlier `bump --commit` wrote but did not commit (killed between)."""

    dep = move.dep
    committed = bumps.committed_pin(sess.runner, sess.manifest, dep)
    if committed is None or committed == move.new:
        return
    # The manifest's label is the new pin's: the old one is named by its SHA.
    before = dataclasses.replace(dep, commit=committed, tag=None)
    move = bumps.Move(before, committed, move.new, move.ref, tag=dep.tag)
    move = bumps.describe(sess.runner, move, worktree, None, offline, True)
    links = {dep.path: move.new} if bumps.root_gitlink(sess.runner, sess.manifest, dep) else {}
    message = move.message()
    sha = bumps.commit(sess.runner, sess.manifest, message, {dep: move.new}, links)
    sess.note(f"{dep.name}: the manifest pinned {move.new[:12]} but HEAD did not: committing it")
    console.result(f"committed {sha[:12]}: {message.splitlines()[0]}")


def _stage_disagreeing_gitlink(sess: Session, dep: Dep) -> None:
    """A pin edited by hand: stage it as the root's gitlink too (what a configure's warning
    about the two disagreeing asks for)."""

    gitlink = bumps.root_gitlink(sess.runner, sess.manifest, dep)
    if gitlink is not None and gitlink != dep.commit:
        editing.stage(sess, {dep: dep.commit}, [dep])


def warn_if_only_here(
    runner: Runner, worktree: Path, name: str, path: str, url: str | None, sha: str
) -> None:
    """Say so when a new pin may exist only in this checkout: committed and pushed as it
    is, it breaks every other checkout (git's "not our ref"). A warning, not a refusal: the
    commit may be on its way to the remote, and nothing qola writes here reaches others."""

    if bumps.is_only_here(runner, worktree, sha):
        console.warning(
            f"{name}: {sha[:12]} is on no remote-tracking branch or tag of {path} "
            "and was never fetched: it may exist only in this checkout"
        )
        console.message(
            f"hint: push it to {url or 'its remote'} before you commit this pin; "
            "`qola verify --remote` checks that the branch or tag it follows holds it"
        )


def bump_all(common: Common, opts: BumpOptions) -> int:
    """Move every pin that has a track (of the selected ones) to its tip, all or nothing."""

    dry_run, do_commit, no_checkout = opts.dry_run, opts.do_commit, opts.no_checkout
    offline, force, lock_timeout = opts.offline, opts.force, opts.lock_timeout

    with session(common, offline=offline) as sess:
        sess.runner.timeout = finite(opts.fetch_timeout)
        command = command_line("bump --all", common.groups, commit=do_commit,
                               no_checkout=no_checkout)  # fmt: skip
        finish = None if dry_run else editing.left_over(sess, command, lock_timeout)
        if finish is not None:
            return finish(Options(offline, force))
        tracked = tuple(dep for dep in sess.deps if dep.track)
        untracked = [dep.name for dep in sess.deps if not dep.track]
        if untracked:
            sess.note(f"no track to follow, left as they are: {', '.join(untracked)}")
        # Every move planned (and every refusal met) before anything is written.
        if not tracked:
            console.result("nothing to bump: no selected dependency has a track to follow")
            return 0
        refuse_if_developing(sess, list(tracked))  # all or nothing, as every other refusal
        planned = plan(sess.runner, sess.manifest, tracked, offline, opts.allow_downgrade)
        moving = [move for move in planned if (move.new, move.tag) != (move.old, move.dep.tag)]
        unsigned, vetted = {}, {}
        for move in moving:  # all or nothing: every refusal before anything is written
            if move.new != move.old or move.tag != move.dep.tag:  # a relabel too
                named = signed.asked_for(move.dep, move.tag, None, None)
                vetted[move.dep.name], said = signed.vet(
                    sess.runner, sess.manifest, move.dep, move.new, move.tag, offline,
                    opts.allow_unsigned, named)  # fmt: skip
                unsigned.update({move.dep.name: said} if said else {})
        warn_unsigned(unsigned)
        # The label each is written with: one that verifies, where qola chose it.
        planned, moving = ([dataclasses.replace(move, tag=vetted.get(move.dep.name, move.tag))
                            for move in moves] for moves in (planned, moving))  # fmt: skip
        for move in planned:
            if move.old == move.new:
                console.result(already(move))
                continue
            console.result(move.headline())
            for line in move.details():
                console.result(f"  {line}")
            if offline:  # resolved here, not by the remote
                where = sess.manifest.root / move.dep.path
                warn_if_only_here(sess.runner, where, move.dep.name, move.dep.path,
                                  move.dep.url, move.new)  # fmt: skip
        if not moving or dry_run:
            if dry_run:
                console.result("dry run: nothing was written")
            return 0
        raw, text = bumps.read_manifest(sess.manifest)
        pins = {move.dep: move.new for move in moving}
        labels = {move.dep.name: move.tag for move in moving}
        new_text = bumps.edit_pins(sess.manifest, text, pins, labels)
        if do_commit:
            bumps.pinned_copies(sess.runner, sess.manifest, pins, labels)  # or refuse, now
        linked = [dep for dep in pins if bumps.root_gitlink(sess.runner, sess.manifest, dep)]
        edit = edit_record.edit_for(sess.manifest, sess.runner, command, pins, linked,
                                signed.recorded(message(moving), unsigned) if do_commit else None,
                                "none" if no_checkout else "all", labels)  # fmt: skip
        with editing.recorded(sess, edit, lock_timeout):
            return editing.carry_out(sess, edit, Options(offline, force), lock_timeout,
                                     (raw, new_text), moving)  # fmt: skip
