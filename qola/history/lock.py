"""What `qola lock` pins: a FetchContent declaration's GIT_TAG, read as git reads it after a
clone (a tag, else a branch, else a commit), resolved with one ls-remote (nothing cloned)."""

from __future__ import annotations

import re
import shlex
import tempfile
from pathlib import Path

from qola.base.errors import UsageError
from qola.base.shas import is_full_sha
from qola.gitrun import queries
from qola.gitrun.git import Runner
from qola.history.add import Resolved, commits_of_tags, tag_naming

# What FetchContent checks out when a declaration gives no GIT_TAG (ExternalProject's
# default, whatever the remote's default branch is).
DEFAULT_GIT_TAG = "master"

_HEX = re.compile(r"[0-9a-f]{7,64}")
_TAGS, _HEADS = "refs/tags/", "refs/heads/"


def resolve_git_tag(runner: Runner, name: str, url: str, git_tag: str) -> Resolved:
    """The pin for GIT_TAG git_tag of the remote at url: the commit a tag of that name
    names (annotated tags peeled), else the tip of the branch of that name (then followed:
    track), else the commit of that SHA (abbreviated: the one ref tip it begins).

    A name the remote lacks is a UsageError (exit 2) with the closest tag or branch; a
    remote that cannot be asked, a GitError (exit 3)."""
    with tempfile.TemporaryDirectory(prefix="qola-ls-remote-") as empty:
        refs = queries.remote_branches_and_tags(runner, Path(empty), name, url)
    tags = commits_of_tags(refs)
    wanted = git_tag.removeprefix(_TAGS)
    if not git_tag.startswith(_HEADS) and wanted in tags:
        sha = tags[wanted]
        return Resolved(sha, tag_naming(refs, sha, prefer=wanted), None, f"tag {wanted}")
    # origin/B too: git checks out the remote-tracking branch of FetchContent's clone.
    branch = git_tag.removeprefix(_HEADS).removeprefix("origin/")
    if not git_tag.startswith(_TAGS) and _HEADS + branch in refs:
        sha = refs[_HEADS + branch]
        return Resolved(sha, tag_naming(refs, sha), branch, f"branch {branch}")
    sha = git_tag.lower()
    if is_full_sha(sha):
        return Resolved(sha, tag_naming(refs, sha), None, "commit")
    if _HEX.fullmatch(sha):
        tips = sorted({commit for commit in refs.values() if commit.startswith(sha)})
        if len(tips) == 1:
            return Resolved(tips[0], tag_naming(refs, tips[0]), None, "commit")
        raise UsageError(
            name,
            f"GIT_TAG {git_tag} is an abbreviated commit SHA that no tag or branch of {url} "
            "begins with; a remote resolves no abbreviation; nothing was written",
            "write the commit's full SHA in GIT_TAG (`git rev-parse "
            f"{git_tag}` in a clone prints it), or lock that SHA",
        )
    raise _unknown(name, url, git_tag, refs, tags)


def _unknown(name: str, url: str, git_tag: str, refs: dict[str, str], tags: dict[str, str]
             ) -> UsageError:  # fmt: skip
    import difflib  # lazy: only for this message

    branches = [ref[len(_HEADS) :] for ref in refs if ref.startswith(_HEADS)]
    problem = f"GIT_TAG {git_tag} is no tag, branch or commit SHA of {url}; nothing was written"
    close = difflib.get_close_matches(git_tag, [*tags, *branches], n=1, cutoff=0.6)
    if close:
        kind = "tag" if close[0] in tags else "branch"
        return UsageError(name, problem, f"did you mean the {kind} {close[0]}? Write it in GIT_TAG")
    return UsageError(name, problem,
                      f"`git ls-remote --heads --tags {shlex.quote(url)}` lists its names")
