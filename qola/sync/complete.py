"""A checkout proven whole: every tracked file of the commit there, as git wrote it.

git 2.39's checkout of a commit whose objects are not all there exits 0 with files left
unwritten; the checks that such a failure cannot pass, and what a failed one leads to:
docs/checkout.md, "A checkout proven whole".
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base.errors import GitError
from qola.base.plural import count
from qola.sync import in_the_way

if TYPE_CHECKING:
    from qola.gitrun.git import Output, Runner

SHOWN = 5  # paths named in a message; the rest are counted
_HINT = (
    "run again (once the space or the network is back): the next run fetches what is missing "
    "and finishes the checkout"
)


class IncompleteError(GitError):
    """A checkout git reported done is not whole; the next run finishes it (exit 3)."""


def listed(paths: list[str], shown: int = SHOWN) -> str:
    """The first few paths, then how many more: `a, b, c and 12 more`."""
    head = ", ".join(paths[:shown])
    return f"{head} and {len(paths) - shown} more" if len(paths) > shown else head


def problems(runner: Runner, tree: Path, subject: str) -> list[str] | None:
    """What keeps the checkout in tree from being HEAD's, as git sees it (an empty list:
    nothing); None when git cannot even read HEAD's tree. Reads the index, HEAD's trees
    and each file's lstat only: no file's content, so no filter runs."""
    staged = runner.run(tree, "diff-index", "--cached", "--name-only", "-z", "--no-renames",
                        "--end-of-options", "HEAD", "--", check=False,
                        subject=subject)  # fmt: skip
    if staged.status != 0:
        return None
    deleted = runner.run(tree, "ls-files", "-z", "--deleted", check=False, subject=subject)
    missing = [path for path in deleted.stdout.split("\0") if path]
    differing = [path for path in staged.stdout.split("\0") if path]
    found = []
    if missing:
        found.append(f"{count(len(missing), 'tracked file')} missing ({listed(missing)})")
    if differing:
        found.append(f"the index differs from HEAD at {listed(differing)}")
    return found


# Writing the files dominates a large checkout: let git use every core for it.
PARALLEL = ("-c", "checkout.workers=0")


def checkout(
    runner: Runner, tree: Path, sha: str, subject: str, label: str, *args: str,
    progress: bool = False,
) -> None:  # fmt: skip
    """Run the git checkout of sha that args spell in tree, proven whole (check); a
    failure after git began writing files (a full disk) is an IncompleteError too, with
    git's message: the next run clears what it wrote and checks out again."""
    from qola.gitrun.git import command_error  # lazy: only where git runs

    said = runner.run(tree, *args, check=False, subject=subject, progress=progress)
    if said.status != 0:
        error = command_error(subject, args, said)
        if _wrote_some(runner, tree, sha, subject):
            raise IncompleteError(
                subject,
                f"the checkout of {label} at {sha[:12]} did not finish (git had written some "
                f"of its files): {error.problem}",
                error.hint or _HINT,
            )
        raise error
    check(runner, tree, subject, label, sha, said)


def _wrote_some(runner: Runner, tree: Path, sha: str, subject: str) -> bool:
    """Whether a checkout of sha that failed had written files: a tracked file changed
    (the tree was clean before any move: its changes were refused or saved), or a file
    with sha's own content at a path sha adds."""

    if problems(runner, tree, subject) != [] or _changed(runner, tree, subject):
        return True
    found, differing = in_the_way.in_the_way(runner, tree, sha, subject)
    return bool(set(found) - set(differing))


def _changed(runner: Runner, tree: Path, subject: str) -> bool:
    out = runner.run(tree, "diff-files", "--name-only", "-z", "--ignore-submodules=all",
                     check=False, subject=subject)  # fmt: skip
    return out.status != 0 or bool(out.stdout.strip("\0"))


def check(
    runner: Runner, tree: Path, subject: str, label: str, sha: str, said: Output | None = None
) -> None:
    """Raise IncompleteError unless the checkout of sha in tree is whole (said: what git's
    checkout printed)."""
    errors = [line.strip() for line in (said.stderr if said else "").splitlines()
              if line.startswith(("error:", "fatal:"))]  # fmt: skip
    found = problems(runner, tree, subject)
    if not errors and found == []:
        return
    what = "git cannot read HEAD's tree" if found is None else "; ".join(found)
    if errors:
        shown = errors[:SHOWN] + ([f"... ({len(errors) - SHOWN} more)"] if len(errors) > SHOWN
                                   else [])  # fmt: skip
        what = "; ".join(filter(None, [what if found else "", "git said:\n    "
                                       + "\n    ".join(shown)]))  # fmt: skip
    raise IncompleteError(
        subject, f"the checkout of {label} at {sha[:12]} did not finish: {what}", _HINT
    )


def finish(
    runner: Runner, tree: Path, head: str, subject: str, fetch: Callable[[], None],
    clear: Callable[[], list[str]] = lambda: [],
) -> list[str]:  # fmt: skip
    """Complete a checkout of head that git left unfinished in tree; returns notes.

    The objects first (fetch() when head's are not all present); then, when the index
    is not head's tree (git moved HEAD but could not read the tree), a two-way
    `read-tree -m -u` from the index's tree to head, which moves the files as checkout
    would and refuses to write over anything changed (clear() first keeps and clears
    what is in its way); then every tracked file that is
    missing is written from the index (`checkout-index` writes no file that exists).
    """
    from qola.gitrun.queries import has_checkout  # lazy: only where git runs

    notes = []
    if not has_checkout(runner, tree, head):
        fetch()
        notes.append(f"fetched what {head[:12]} was missing")
    found = problems(runner, tree, subject)
    if found is None or any(part.startswith("the index") for part in found):
        notes.extend(clear())
        tree_sha = runner.run(tree, "write-tree", subject=subject).stdout.strip()
        runner.run(tree, "read-tree", "-m", "-u", "--end-of-options", tree_sha, head,
                   subject=subject)  # fmt: skip
        notes.append(f"moved the index and files that git had left behind to {head[:12]}")
    if problems(runner, tree, subject):
        runner.run(tree, "checkout-index", "-q", "-a", subject=subject)
        notes.append("wrote the tracked files the checkout had left unwritten")
    return notes
