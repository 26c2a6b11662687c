"""`qola freeze [NAME...]`: rewrite pins to the commits checked out now."""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base import console, safetext
from qola.commands import editing
from qola.commands.bump import command_line, warn_if_only_here, warn_unsigned
from qola.commands.session import Common, Session, session
from qola.gitrun import queries
from qola.gitrun.lock import DEFAULT_TIMEOUT
from qola.history import bump, edit_record, releases, signed
from qola.repo import develop_marks, gitfiles
from qola.sync.observe import observe
from qola.sync.plan import Options

if TYPE_CHECKING:
    from qola.manifest import Dep
    from qola.sync.observe import SubmoduleState


def freeze(common: Common, dry_run: bool, allow_unsigned: bool = False) -> int:
    """Rewrite pins (all, or the names given) to what is checked out, in full."""

    with session(common, offline=True) as sess:
        command = command_line(" ".join(["freeze", *common.names]), common.groups)
        finish = None if dry_run else editing.left_over(sess, command)
        if finish is not None:
            return finish(Options())
        changes, labels, unsigned = {}, {}, {}
        for dep in sess.deps:
            head = bump.current_head(sess.runner, sess.manifest, dep)
            if head != dep.commit or dep.abbreviated_from:
                changes[dep] = head
                # The label: a tag of the clone's that names what is pinned now.
                tags = queries.local_tags(sess.runner, sess.manifest.root / dep.path)
                labels[dep.name] = releases.label_for(tags, head, dep.tag)
                if head != dep.commit or labels[dep.name] != dep.tag:  # refusals first
                    # The label is qola's choice: one that verifies, else none where the
                    # commit does.
                    labels[dep.name], problem = signed.vet(
                        sess.runner, sess.manifest, dep, head, labels[dep.name], True,
                        allow_unsigned, named=False)  # fmt: skip
                    unsigned.update({dep.name: problem} if problem else {})
                if dep.abbreviated_from and head == dep.commit:
                    # Written in full: the short form as the manifest has it, and the full SHA.
                    console.result(f"{dep.name} {dep.abbreviated_from} -> {head}")
                else:
                    old = dep.abbreviated_from or dep.commit[:12]
                    tag = labels[dep.name]
                    said = f"{dep.name} {old} -> {head[:12]}"
                    console.result(f"{said} ({tag})" if tag else said)
                if head != dep.commit:
                    where = sess.manifest.root / dep.path
                    warn_if_only_here(sess.runner, where, dep.name, dep.path, dep.url, head)
            _warn_nested_off(sess, dep, head)
        warn_unsigned(unsigned)
        if not changes:
            console.result("every pin already matches what is checked out")
            _end_developing(sess)
            return 0
        if dry_run:
            for dep in sess.deps:
                if develop_marks.is_marked(sess.manifest.root, dep.name):
                    console.result(f"{dep.name}: would no longer be developing")
            console.result("dry run: nothing was written")
            return 0
        raw, text = bump.read_manifest(sess.manifest)
        new_text = bump.edit_pins(sess.manifest, text, changes, labels)
        linked = [dep for dep in changes if bump.root_gitlink(sess.runner, sess.manifest, dep)]
        edit = edit_record.edit_for(sess.manifest, sess.runner, command, changes, linked, None,
                                "frozen", labels)  # fmt: skip
        with editing.recorded(sess, edit, DEFAULT_TIMEOUT):
            code = editing.carry_out(sess, edit, Options(), DEFAULT_TIMEOUT,
                                     (raw, new_text))  # fmt: skip
        if code == 0:
            _end_developing(sess)
        return code


def _warn_nested_off(sess: Session, dep: Dep, head: str) -> None:
    """Warn of each nested submodule checked out off the gitlink that head records: the
    pin does not hold it (a checkout moves it back to the gitlink, and verify fails until
    then). A warning, not a refusal: the commit pinned is the dependency's own and right;
    what is off is only checked out, and the warning says how to pin it too."""
    if not dep.submodules:
        return  # its nested submodules are left as they are: none is the pin's business
    state = observe(sess.manifest, dataclasses.replace(dep, commit=head), sess.runner)
    worktree = sess.manifest.root / dep.path
    for folder, commit, sub in _walk(worktree, worktree, head, state.submodules or ()):
        if sub.head is None or sub.at_target or sub.wanted is None:
            continue  # not checked out (checkout brings it), or where the pin puts it
        holder = "the commit pinned" if folder == worktree else (
            f"the commit {safetext.path(os.path.relpath(folder, worktree))} is at")
        console.warning(
            f"{dep.name}: the nested submodule {safetext.path(sub.path)} is checked out at "
            f"{sub.head[:12]}, but {commit[:12]}, {holder}, records {sub.wanted[:12]}: a "
            "checkout puts it back there, and `qola verify` fails until then"
        )
        name = os.path.relpath(worktree / sub.path, folder)
        git = f"git -C {shlex.quote(str(folder))}"
        console.message(
            f"hint: to pin {sub.head[:12]}, commit it there ({git} add -- "
            f"{shlex.quote(name)} && {git} commit -m 'Move {name}'), then run "
            f"`qola freeze {dep.name}` again"
        )


def _walk(
    worktree: Path, folder: Path, commit: str, subs: Iterable[SubmoduleState]
) -> list[tuple[Path, str, SubmoduleState]]:
    """Each nested submodule below folder (at commit) with the repository whose commit
    records it and that commit; sub.path is relative to the dependency's work tree."""
    found = []
    for sub in subs:
        found.append((folder, commit, sub))
        if sub.head is not None:
            found += _walk(worktree, worktree / sub.path, sub.head, sub.children)
    return found


def _end_developing(sess: Session) -> None:
    """What is there is pinned now: a dependency being developed (qola develop) no longer is."""
    gitdir = gitfiles.find_git_dir(sess.manifest.root)
    for dep in sess.deps:
        if gitdir is not None and develop_marks.unmark(gitdir, dep.name):
            console.result(f"{dep.name}: no longer developing (pinned at what is checked out)")
