"""`qola freeze [NAME...]`: rewrite pins to the commits checked out now."""

from __future__ import annotations

from qola.base import console
from qola.commands import editing
from qola.commands.bump import command_line, warn_if_only_here
from qola.commands.session import Common, Session, session
from qola.gitrun import queries
from qola.gitrun.lock import DEFAULT_TIMEOUT
from qola.history import bump, edit_record, releases
from qola.repo import develop_marks, gitfiles
from qola.sync.plan import Options


def freeze(common: Common, dry_run: bool) -> int:
    """Rewrite pins (all, or the names given) to what is checked out, in full."""

    with session(common, offline=True) as sess:
        command = command_line(" ".join(["freeze", *common.names]), common.groups)
        finish = None if dry_run else editing.left_over(sess, command)
        if finish is not None:
            return finish(Options())
        changes, labels = {}, {}
        for dep in sess.deps:
            head = bump.current_head(sess.runner, sess.manifest, dep)
            if head != dep.commit or dep.abbreviated_from:
                changes[dep] = head
                # The label: a tag of the clone's that names what is pinned now.
                tags = queries.local_tags(sess.runner, sess.manifest.root / dep.path)
                labels[dep.name] = releases.label_for(tags, head, dep.tag)
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


def _end_developing(sess: Session) -> None:
    """What is there is pinned now: a dependency being developed (qola develop) no longer is."""
    gitdir = gitfiles.find_git_dir(sess.manifest.root)
    for dep in sess.deps:
        if gitdir is not None and develop_marks.unmark(gitdir, dep.name):
            console.result(f"{dep.name}: no longer developing (pinned at what is checked out)")
