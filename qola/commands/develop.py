"""`qola develop [--end] [NAME...]`: work on a dependency in this checkout, as you have it.

What the mode is for and how it differs from an override: docs/developing.md."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from qola.base import console
from qola.base.errors import UsageError
from qola.commands.session import Common, Session, session
from qola.gitrun.lock import DEFAULT_TIMEOUT, root_lock
from qola.manifest import Dep
from qola.repo import develop_marks, gitfiles
from qola.sync import developing, report
from qola.sync.observe import observe, override_dir


def develop(common: Common, end: bool) -> int:
    """Mark (or, with end, unmark) the dependencies named; without names, list the marked.

    A mark whose name the manifest no longer has (renamed, removed) is listed as such, and
    `--end NAME` removes it."""
    names = common.names
    with session(dataclasses.replace(common, names=()), offline=True) as sess:
        root = sess.manifest.root
        gitdir = gitfiles.find_git_dir(root)
        marked = develop_marks.marked(root)
        known = {dep.name for dep in sess.manifest.deps}
        if not names:
            if end:
                raise UsageError("develop", "--end needs the names of the dependencies to end",
                                 "qola develop --end NAME (qola develop lists them)")  # fmt: skip
            for dep in (dep for dep in sess.manifest.deps if dep.name in marked):
                state = observe(sess.manifest, dep, sess.runner)
                console.result(report.shown(*report.line(dep, developing.words(sess.runner, state)),
                                            console.paint))  # fmt: skip
            for name in (name for name in marked if name not in known):
                console.result(f"{name} (not in the manifest): marked; qola develop --end {name} "
                               "removes the mark")  # fmt: skip
            if not marked:
                console.result("no dependency is being developed in this checkout")
            return 0
        stale = [name for name in names if end and name in marked and name not in known]
        rest = [name for name in names if name not in stale]
        sess.deps = sess.manifest.select(rest) if rest else ()  # select([]) would be all
        if gitdir is not None:
            for name in stale:
                develop_marks.unmark(gitdir, name)
                console.result(f"{name}: mark removed (the manifest has no such dependency)")
        if not sess.deps:
            return 0
        if gitdir is None:
            raise UsageError(
                "develop",
                f"{root} is not a git repository: the mark is kept in the root's git dir",
                "run it in the git checkout the manifest belongs to",
            )
        for dep in sess.deps:  # every name is checked before anything is written
            if not end:
                _can_develop(sess, dep)
        with root_lock(root, DEFAULT_TIMEOUT, sess.note, "develop writes its mark"):
            for dep in sess.deps:
                if end:
                    _end(gitdir, dep)
                    continue
                develop_marks.mark(gitdir, dep.name)
                state = observe(sess.manifest, dep, sess.runner)
                what = developing.words(sess.runner, state)
                console.result(report.shown(*report.line(dep, what), console.paint))
                ending = developing.ENDING.format(name=dep.name)
                sess.note(f"{dep.name}: checkout and configure leave {dep.path} as it is, and "
                          f"verify fails on it; {ending}")  # fmt: skip
        return 0


def _can_develop(sess: Session, dep: Dep) -> None:
    """Refuse, before anything is written, what the mode cannot mean."""
    variable = override_dir(dep.name)
    if variable is not None:
        raise UsageError(
            dep.name,
            f"it is overridden (used from {variable}): qola never changes that folder anyway; "
            "nothing was written",
            "unset the override to develop it in the project",
        )
    state = observe(sess.manifest, dep, sess.runner)
    if not state.is_repo:
        raise UsageError(
            dep.name,
            f"{dep.path} is not checked out: there is nothing to develop yet; nothing was written",
            f"run qola checkout first, then qola develop {dep.name}",
        )


def _end(gitdir: Path, dep: Dep) -> None:
    if develop_marks.unmark(gitdir, dep.name):
        console.result(f"{dep.name}: no longer developing; the next checkout brings "
                       f"{dep.path} back to the pin {dep.commit[:12]} (refusing if that "
                       "would lose work)")  # fmt: skip
    else:
        console.result(f"{dep.name}: was not being developed; nothing was changed")
