"""Ignored files in a move's way: local work like a modified file, refused or kept.

A move stops with exit 4 naming them; with `--force` they are kept under
`refs/qola/backup/<name>/...-in-the-way` and cleared (docs/checkout.md, "Files in a
checkout's way").
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base import safetext
from qola.base.errors import RefusedError
from qola.repo import gitfiles
from qola.sync import in_the_way, unfinished
from qola.sync.complete import SHOWN, listed

if TYPE_CHECKING:
    from qola.gitrun.git import Runner


@dataclass(frozen=True)
class Way:
    """The ignored files in the way of one repository's checkout of target."""

    label: str  # the repository, from the root: the dependency's path, maybe a nested one
    nested: str  # its path in the dependency ("" for the dependency itself)
    tree: Path
    target: str
    paths: tuple[str, ...]  # relative to tree
    repositories: tuple[str, ...] = ()  # of them, folders holding a repository


def of(runner: Runner, tree: Path, target: str, subject: str, label: str, nested: str = "") -> (
    Way | None
):  # fmt: skip
    """The ignored files in the way of a checkout of target in tree (None: none). A
    repository with no index (a first checkout never finished) is compared through an
    index made from HEAD, as its forced checkout would see it."""
    gitdir = gitfiles.git_dir(tree)
    if gitdir is None:
        return None
    head = gitfiles.read_head(gitdir)[0]
    if head is not None and not gitfiles.has_index(gitdir):
        with unfinished.head_index(runner, tree, subject) as env:
            found = in_the_way.find(runner, tree, target, subject, env)
    else:
        found = in_the_way.find(runner, tree, target, subject)
    ignored = [f for f in found if f.ignored]
    if not ignored:
        return None
    repositories = tuple(f.path for f in ignored if f.repository)
    return Way(label, nested, tree, target, tuple(f.path for f in ignored), repositories)


def lines(ways: list[Way]) -> list[str]:
    """The refusal's lines naming them: the first few of each repository, then a count."""
    out = []
    for way in ways:
        for path in way.paths[:SHOWN]:
            shown = safetext.path(f"{way.label}/{path}")
            if path in way.repositories:
                out.append(f"  in the way: {shown} (a repository: checking out "
                           f"{way.target[:12]} would write into its files)")  # fmt: skip
                continue
            out.append(f"  in the way: {shown} (ignored: checking out {way.target[:12]} would "
                       "write over it)")  # fmt: skip
        if len(way.paths) > SHOWN:
            out.append(f"  and {len(way.paths) - SHOWN} more ignored files in the way in "
                       f"{safetext.line(way.label)}")  # fmt: skip
    return out


def save_commands(ways: list[Way]) -> list[str]:
    """The commands that save them (a stash that takes ignored files too, these only)."""
    out = []
    for way in ways:
        where = safetext.shell_word(str(way.tree))
        for repository in way.repositories:  # a stash cannot hold a repository
            moved = safetext.shell_word(str(way.tree / repository))
            out.append(f"  mv {moved} {moved}.mine  # a repository: --force does not keep it")
        files = [path for path in way.paths if path not in way.repositories]
        if not files:
            continue
        way = Way(way.label, way.nested, way.tree, way.target, tuple(files))
        paths = " ".join(shlex.quote(path) for path in way.paths[:SHOWN])
        more = f" ...  # and {len(way.paths) - SHOWN} more" if len(way.paths) > SHOWN else ""
        out.append(f"  git -C {where} stash push --all -m 'before qola' -- {paths}{more}"
                   f"{'' if more else '  # the ignored files in the way'}")  # fmt: skip
    return out


def keep_and_clear(runner: Runner, ways: list[Way], subject: str) -> list[str]:
    """--force: keep each repository's files in a backup ref, then clear them; notes.

    A repository in the way cannot be kept in a commit: that stops the move (exit 4)
    before anything is kept or cleared."""
    for way in ways:
        if way.repositories:
            raise RefusedError(
                subject,
                f"{way.label}/{way.repositories[0]} is a repository, ignored, in the way of "
                f"{way.target[:12]}; --force keeps files, not repositories; nothing was "
                "changed",
                f"move {way.tree / way.repositories[0]} away and run qola again",
            )
    notes = []
    for way in ways:
        paths = list(way.paths)
        ref = in_the_way.keep_aside(runner, way.tree, paths, way.target, subject, way.nested)
        in_the_way.clear(way.tree, paths)
        notes.append(f"saved the ignored files in the way of {way.target[:12]} in {way.label} "
                     f"({listed(paths)}) as {ref}; restore with: "
                     f"{restore_command(way.tree, paths, ref)}")  # fmt: skip
    return notes


def restore_command(tree: Path, paths: Sequence[str], ref: str) -> str:
    """What brings the files kept under ref back into tree, over what the checkout wrote."""
    where = safetext.shell_word(str(tree))
    if len(paths) <= SHOWN:
        named = " ".join(shlex.quote(path) for path in paths)
        return f"git -C {where} restore --source={ref} --worktree -- {named}"
    # Every file the ref holds, and only those (a bare pathspec would match tracked files
    # the ref lacks, and restore would delete them).
    return (f"git -C {where} ls-tree -r -z --name-only {ref} | git -C {where} "
            f"--literal-pathspecs restore --source={ref} --worktree --pathspec-from-file=- "
            "--pathspec-file-nul")  # fmt: skip
