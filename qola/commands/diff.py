"""`qola diff [REV]`: the pins at a revision of the root against the work tree's."""

from __future__ import annotations

from qola.base import console
from qola.base.errors import EXIT_GIT
from qola.commands.session import Common, finite, session
from qola.history.diff import compare
from qola.output import cmake_env, render_diff

FORMATS = ("text", "json", "markdown")


def diff(common: Common, rev: str, fmt: str, fetch_timeout: float, stat: bool = False) -> int:
    """Print what changed between the pins at rev and the work tree's; 3 when some
    dependency's history could not be fetched (the rest is printed all the same)."""

    # Offline but for its fetches (network=True): the local steps fetch nothing lazily.
    with session(common, offline=True) as sess:
        sess.runner.timeout = finite(fetch_timeout)
        found = compare(sess.manifest, sess.deps, common.root, sess.runner, rev, stat)
        if fmt == "json":
            console.result(render_diff.as_json(found), end="")
        elif fmt == "markdown":
            console.result(render_diff.as_markdown(found), end="")
        else:
            console.result(render_diff.as_text(found, common.verbose), end="")
        failed = [change for change in found.changes if change.error is not None]
        for change in failed:
            assert change.error is not None
            console.message(cmake_env.render(change.error))
        return EXIT_GIT if failed else 0
