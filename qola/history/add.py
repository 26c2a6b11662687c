"""What `qola add` pins: a tag, a branch, a commit or the remote's default branch, resolved
with ls-remote (nothing cloned), and the tag that names the commit, if one does."""

from __future__ import annotations

import re
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from qola.base.errors import GitError, UsageError
from qola.base.shas import is_full_sha
from qola.gitrun import queries
from qola.gitrun.git import Runner
from qola.history.releases import label_for, version_key

_HEX = re.compile(r"[0-9a-fA-F]+")
_TAGS, _HEADS, _PEELED = "refs/tags/", "refs/heads/", "^{}"


class Wanted(NamedTuple):
    """What the command line asks for: at most one of tag, branch and commit."""

    tag: str | None
    branch: str | None
    commit: str | None


class Resolved(NamedTuple):
    """The pin `add` writes, and the labels beside it."""

    commit: str  # full SHA, of a commit (never a tag object's)
    tag: str | None  # a tag's short name that names exactly this commit
    track: str | None  # the branch it follows (with --branch)
    source: str  # for people: `tag v2.0`, `branch main`, `the default branch`, `commit`


def check_wanted(wanted: Wanted) -> None:
    """Refuse what no remote can be asked (two of the options, an abbreviated SHA) before
    anything runs."""
    given = [flag for flag, value in zip(("--tag", "--branch", "--commit"), wanted, strict=True)
             if value is not None]  # fmt: skip
    if len(given) > 1:
        raise UsageError("qola add", f"{' and '.join(given)} each choose the pin: give one",
                         "give one of --tag T, --branch B, --commit SHA (or none: the "
                         "remote's default branch)")  # fmt: skip
    for flag, value in zip(("--tag", "--branch"), wanted, strict=False):
        if value is not None and not short_ref(value, flag == "--tag"):
            raise UsageError("qola add", f"{flag} {value!r} names no tag or branch",
                             f"give the name as git lists it, e.g. {flag} v1.2.0")  # fmt: skip
    sha = wanted.commit
    if sha is None or is_full_sha(sha.lower()):
        return
    if _HEX.fullmatch(sha):
        raise UsageError(
            "qola add",
            f"--commit {sha!r} is abbreviated: a remote resolves no abbreviation",
            "give all 40 hex digits (64 in a sha256 repository); "
            f"`git rev-parse {sha}` in a clone prints them",
        )
    raise UsageError(
        "qola add",
        f"--commit {sha!r} is not a commit SHA",
        f"for a tag or a branch give --tag {sha} or --branch {sha}",
    )


def short_ref(ref: str, tag: bool) -> str:
    """A tag's or branch's name as given (`v1.2`, or `refs/tags/v1.2` for a tag), short."""
    return ref.removeprefix(_TAGS if tag else _HEADS)


def resolve(runner: Runner, name: str, url: str, wanted: Wanted, retry: Sequence[str]
) -> Resolved:  # fmt: skip
    """The pin for wanted, from the remote at url. retry: the rest of the command line,
    after `qola add NAME URL`, for a hint that gives another ref (without the ref's option).

    A ref the remote lacks is a UsageError with the closest of its tags and branches; a
    remote that cannot be asked, a GitError (exit 3)."""
    # No repository to run in: a new empty folder (never a shared one such as $TMPDIR,
    # whose repository, if any, git would read config from).
    with tempfile.TemporaryDirectory(prefix="qola-ls-remote-") as empty:
        refs = queries.remote_branches_and_tags(runner, Path(empty), name, url)
        if wanted.tag is not None:
            return _tag(refs, name, url, short_ref(wanted.tag, True), retry)
        if wanted.branch is not None:
            return _branch(refs, name, url, short_ref(wanted.branch, False), retry)
        if wanted.commit is not None:
            return _commit(refs, wanted.commit.lower())
        head = queries.default_branch(runner, Path(empty), name, url)
    if head is None:
        raise GitError(
            name,
            f"{url} has no default branch (its HEAD names no commit); nothing was written",
            "choose the pin: --tag T, --branch B or --commit SHA",
        )
    return Resolved(head, tag_naming(refs, head), None, "the default branch")


def commits_of_tags(refs: Mapping[str, str]) -> dict[str, str]:
    """Each tag's short name to the commit it names: an annotated tag's peeled line
    (`refs/tags/T^{}`), never its object; a lightweight tag's own."""
    tags: dict[str, str] = {}
    for ref, sha in refs.items():
        if ref.startswith(_TAGS) and not ref.endswith(_PEELED):
            tags[ref[len(_TAGS) :]] = refs.get(ref + _PEELED, sha)
    return tags


def tag_naming(refs: Mapping[str, str], sha: str, prefer: str | None = None) -> str | None:
    """The tag to write beside a pin at sha, as every command that writes a pin chooses it
    (history/releases.py): prefer where it names sha, else a release before a pre-release
    (v2.0 before v2.0-rc1, which a release commit often carries too), the newest version
    first (v2.10 after v2.9); None when no tag that a label can hold names it."""
    peeled = {_TAGS + tag: commit for tag, commit in commits_of_tags(refs).items()}
    return label_for(peeled, sha, prefer)


def _tag(refs: Mapping[str, str], name: str, url: str, tag: str, retry: Sequence[str]
) -> Resolved:  # fmt: skip
    sha = commits_of_tags(refs).get(tag)
    if sha is not None:
        return Resolved(sha, tag_naming(refs, sha, prefer=tag), None, f"tag {tag}")
    raise _unknown(refs, name, url, tag, "tag", retry)


def _commit(refs: Mapping[str, str], sha: str) -> Resolved:
    """A full SHA as given; an annotated tag's object (the line ls-remote prints for
    refs/tags/T) is the commit it names, which is what git would check out."""
    for ref, value in refs.items():
        peeled = refs.get(ref + _PEELED)
        if value == sha and ref.startswith(_TAGS) and peeled is not None and peeled != sha:
            tag = ref[len(_TAGS) :]
            return Resolved(peeled, tag_naming(refs, peeled, prefer=tag), None,
                            f"tag {tag}, whose object {sha[:12]} was given")  # fmt: skip
    return Resolved(sha, tag_naming(refs, sha), None, "commit")


def _branch(refs: Mapping[str, str], name: str, url: str, branch: str, retry: Sequence[str]
) -> Resolved:  # fmt: skip
    sha = refs.get(_HEADS + branch)
    if sha is not None:
        # A tag of the same name wins wherever a track is read: follow the branch by its
        # full name then.
        track = _HEADS + branch if _TAGS + branch in refs else branch
        return Resolved(sha, tag_naming(refs, sha), track, f"branch {branch}")
    raise _unknown(refs, name, url, branch, "branch", retry)


def _unknown(refs: Mapping[str, str], name: str, url: str, ref: str, kind: str,
             retry: Sequence[str]) -> UsageError:  # fmt: skip
    """`'v1.3' is not a tag of URL`, with the closest tag or branch and the command line
    that takes it."""
    import difflib  # lazy: only for this message

    tags = list(commits_of_tags(refs))
    branches = [ref[len(_HEADS) :] for ref in refs if ref.startswith(_HEADS)]
    problem = f"{ref!r} is not a {kind} of {url}; nothing was written"
    other = "branch" if kind == "tag" else "tag"
    if ref in (branches if kind == "tag" else tags):
        problem = f"{ref!r} is a {other} of {url}, not a {kind}; nothing was written"
        return UsageError(name, problem, _again(name, url, other, ref, retry))
    candidates = [("tag", tag) for tag in tags] + [("branch", branch) for branch in branches]
    close = difflib.get_close_matches(ref, [word for _, word in candidates], n=1, cutoff=0.6)
    if close:
        found = next(kind for kind, word in candidates if word == close[0])
        hint = f"did you mean the {found} {close[0]}? " + _again(name, url, found, close[0], retry)
        return UsageError(name, problem, hint)
    if not candidates:
        return UsageError(name, f"{problem}: it has no branches or tags",
                          "check the URL; give --commit SHA for a commit no ref names")  # fmt: skip
    listed = ", ".join(sorted(tags, key=version_key, reverse=True)[:5] + branches[:5])
    return UsageError(
        name,
        f"{problem}; it has {len(tags)} tags and {len(branches)} branches (such as {listed})",
        f"`git ls-remote --heads --tags {shlex.quote(url)}` lists them all",
    )


def _again(name: str, url: str, kind: str, ref: str, retry: Sequence[str]) -> str:
    """The command line once more, with the ref given as what it is."""
    flag = "--tag" if kind == "tag" else "--branch"
    return shlex.join(["qola", "add", name, url, flag, ref, *retry])
