"""`qola freeze [NAME...]`: rewrite pins to the commits checked out now."""

from __future__ import annotations

from qola import console
from qola.commands.bump import stage, warn_if_only_here
from qola.session import Common, session


def freeze(common: Common, dry_run: bool) -> int:
    """Rewrite pins (all, or the names given) to what is checked out, in full."""
    from qola import moves

    with session(common, offline=True) as sess:
        changes = {}
        for dep in sess.deps:
            head = moves.current_head(sess.runner, sess.manifest, dep)
            if head != dep.commit or dep.abbreviated_from:
                changes[dep] = head
                if dep.abbreviated_from and head == dep.commit:
                    # Written in full: the short form as the manifest has it, and the full SHA.
                    console.result(f"{dep.name} {dep.abbreviated_from} -> {head}")
                else:
                    old = dep.abbreviated_from or dep.commit[:12]
                    console.result(f"{dep.name} {old} -> {head[:12]}")
                if head != dep.commit:
                    where = sess.manifest.root / dep.path
                    warn_if_only_here(sess.runner, where, dep.name, dep.path, dep.url, head)
        if not changes:
            console.result("every pin already matches what is checked out")
            return 0
        if dry_run:
            console.result("dry run: nothing was written")
            return 0
        raw, text = moves.read_manifest(sess.manifest)
        gitlinks = {dep: moves.root_gitlink(sess.runner, sess.manifest, dep) for dep in changes}
        moves.write_manifest(sess.manifest, raw, moves.edit_pins(sess.manifest, text, changes))
        stage(sess, raw, changes, gitlinks)
        return 0
