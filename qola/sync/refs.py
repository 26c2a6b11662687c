"""The refs qola writes in a dependency's repositories: a backup of local work under
refs/qola/backup/, a commit qola checked out under refs/qola/pins/, and the rule that
saves a move's repositories before any of them is reset."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from qola.gitrun.git import check_writable
from qola.repo.store import pin_ref

if TYPE_CHECKING:
    from qola.gitrun.git import Runner


def save(runner: Runner, tree: Path, ref: str, sha: str, subject: str) -> None:
    """Create ref at sha; git refuses (GitError) rather than replace a ref that exists."""
    runner.run(tree, "update-ref", "--no-deref", ref, sha, "0" * len(sha), subject=subject)


def keep_pin(runner: Runner, tree: Path, sha: str, subject: str) -> None:
    """Keep a commit qola checked out under refs/qola/pins/ (from gc, and from local work)."""
    runner.run(tree, "update-ref", "--no-deref", pin_ref(sha), sha, subject=subject)


# Saves one repository's work (its path in the dependency, its folder): the notes that say
# what it saved, and whether it saved the tracked changes (then `reset --hard` may clear them).
SaveOne = Callable[[str, Path], tuple[list[str], bool]]


def save_then_reset(
    runner: Runner, repos: Sequence[tuple[str, Path]], subject: str, save_one: SaveOne
) -> list[str]:
    """Save each repository's work, then `reset --hard` those whose changes were saved, so
    that git can move them; the notes, in the order of repos.

    repos lists parents before their nested submodules. Every one is saved before any is
    reset, the deepest first: nothing is reset while a repository below it still holds work
    that is not saved; and one git must not write in stops the step before any is touched.
    """
    for _, tree in repos:
        check_writable(tree, subject, "stash create, update-ref, reset --hard")
    notes: list[str] = []
    saved_trees = []
    for nested, tree in reversed(repos):
        more, stashed = save_one(nested, tree)
        notes += more
        if stashed:
            saved_trees.append(tree)
    for tree in saved_trees:
        runner.run(tree, "reset", "-q", "--hard", subject=subject)
    return notes[::-1]
