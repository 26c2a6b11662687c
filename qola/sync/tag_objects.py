"""A pin that names no commit: an annotated tag's own object (the SHA `git ls-remote` prints
for `refs/tags/v1.0`, beside the commit it prints for `refs/tags/v1.0^{}`), or a tree.

git checks such a pin out as the commit it names, so HEAD could never be the pin: checkout
refuses it once the object is here, before anything moves, and says which commit to pin.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from qola.base.errors import ManifestError
from qola.gitrun.queries import commit_sha

if TYPE_CHECKING:
    from qola.gitrun.git import Runner
    from qola.manifest import Dep


class NotACommit(NamedTuple):
    """What a pin that is no commit names."""

    sha: str
    kind: str  # git's type of the object: tag, tree or blob
    tag: str | None  # a tag object's name (as the tag object says it)
    commit: str | None  # the commit it names (a tag peeled), when it names one

    def problem(self) -> str:
        """"`6d0a532` is tag `v1.0`'s object; its commit is `10d8dd3`"."""
        if self.kind != "tag":
            return f"`{self.sha[:7]}` is a {self.kind}, not a commit"
        said = f"`{self.sha[:7]}` is tag `{self.tag}`'s object"
        if self.commit is None:
            return f"{said}, and the tag names no commit"
        return f"{said}; its commit is `{self.commit[:7]}`"


def look(runner: Runner, repo: Path, sha: str) -> NotACommit | None:
    """What sha names, when repo holds it and it is not a commit; None otherwise (a commit,
    or an object repo lacks: nothing is fetched to tell)."""
    out = runner.run(repo, "cat-file", "-t", "--end-of-options", sha, check=False)
    kind = out.stdout.strip()
    if out.status != 0 or kind in ("", "commit"):
        return None
    if kind != "tag":
        return NotACommit(sha, kind, None, None)
    said = runner.run(repo, "cat-file", "tag", "--end-of-options", sha, check=False)
    name = None
    for line in said.stdout.splitlines():
        if not line:
            break  # the headers end at the first blank line; the message follows
        if line.startswith("tag "):
            name = line[len("tag "):]
    return NotACommit(sha, kind, name, commit_sha(runner, repo, sha))


def refuse(runner: Runner, repo: Path, dep: Dep) -> None:
    """A ManifestError (exit 2) when the pin, present in repo, is no commit; the hint pins
    the commit it names with a bump that runs as printed."""
    found = look(runner, repo, dep.commit)
    if found is None:
        return
    if found.commit is None:
        hint = f"pin a commit: `qola bump {dep.name} --to <branch, tag or full commit SHA>`"
    else:
        full = f"`qola bump {dep.name} --to {found.commit}`"
        by_tag = f"`qola bump {dep.name} --to {shlex.quote(found.tag)}`" if found.tag else ""
        hint = f"pin its commit: {by_tag} (or {full})" if by_tag else f"pin its commit: {full}"
    raise ManifestError(
        dep.name,
        f"{dep.key}: the pin {found.problem()}; a pin names a commit, so nothing was "
        "checked out",
        hint,
    )
