"""Fetch one commit by SHA into a repository, and what to do when a server will not send it.

Only the commit (at depth 1, only its tree); its error is the one reported, unless a
protocol v0 server refused the SHA itself: then the tracked branch or tag, then the
tags, and nothing broader (docs/submodules.md, "What is fetched, and the fallback").
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base.errors import GitError
from qola.gitrun.git import command_error
from qola.gitrun.queries import has_commit
from qola.manifest import followed
from qola.sync import submodules

if TYPE_CHECKING:
    from qola.gitrun.git import Output, Runner

# What git 2.39 says when a server will not send a commit asked for by SHA: the server's
# upload-pack ("not our ref", protocol v0 and v2), or the client before asking, when a
# v0 server offers neither allow-tip-sha1-in-want nor allow-reachable-sha1-in-want.
# JGit servers (Gerrit) say "want <sha> not valid".
_REFUSED_WANT = re.compile(
    r"not our ref|does not allow request for unadvertised object|want [0-9a-f]{40,64} not valid"
)
TAGS = "+refs/tags/*:refs/tags/*"
# git fetch would also fetch, "on demand", in every populated submodule whose gitlink the
# new commits change, by its remote's branches: whole histories qola does not want.
_ALONE = ("--no-recurse-submodules",)


@dataclass(frozen=True)
class Source:
    """Where a commit comes from, and how to name it in messages."""

    subject: str  # the dependency, for `qola: <subject>:` errors
    url: str
    track: str | None = None  # the branch or tag that can hold the commit (default branch)
    label: str = ""  # e.g. "nested submodule extern/ck" ("" for the dependency itself)
    hint_track: str | None = None  # how to give track, for the hint ("" when it cannot be)


def is_refused_want(out: Output) -> bool:
    """True when git says the server refused to send a commit by SHA."""
    return bool(_REFUSED_WANT.search(out.stderr))


def fetch_commit(
    runner: Runner,
    repo: Path,
    source: Source,
    sha: str,
    shallow: bool,
    env: dict[str, str] | None = None,
) -> str:
    """Make commit sha present in the repository at repo; returns a note on how."""
    depth = ["--depth", "1"] if shallow else []
    args = ["fetch", "-q", "--no-tags", *_ALONE, *depth, "--end-of-options", source.url, sha]
    with tempfile.TemporaryDirectory(prefix="qola-fetch-") as folder:
        # The packet trace (a few KB: pack data is not traced) says which protocol the
        # server spoke, which decides what its refusal means.
        trace = os.path.join(folder, "packets")
        first = runner.run(repo, *args, check=False, network=True, progress=True,
                           env={**(env or {}), "GIT_TRACE_PACKET": trace})  # fmt: skip
        v2 = _spoke_v2(trace)
    if first.status == 0:
        return f"fetched {sha[:12]} by SHA{' (depth 1)' if shallow else ''}"
    if first.timed_out is not None or not is_refused_want(first):
        # A remote that hangs would hang the fallback too; any other failure (DNS,
        # connection, no such repository) is not cured by asking for more.
        raise command_error(source.subject, args, first)
    if v2:
        # Protocol v2's upload-pack sends any object it has when asked by SHA (git
        # 2.39 upload-pack.c parse_want): "not our ref" means it has no such commit,
        # and no branch or tag of it can hold one.
        raise GitError(
            source.subject,
            f"{_label(source)}commit {sha} is not in {source.url}: the server (protocol v2, "
            "which sends any commit it has by SHA) does not have it; nothing else was "
            f"fetched:\n{_first(source, args, first)}",
            _hint(source, searched=False),
        )
    return _search(runner, repo, source, sha, args, first, env)


def fetch_label(runner: Runner, repo: Path, subject: str, url: str, tag: str) -> str:
    """Fetch the pin's label, the tag whose signature `verify` checks, beside the pin
    (its object only: the commit is there); a tag of the clone's own is never replaced.
    What it says, added to the fetch's note: the tag is an improvement, never a failure."""
    ref = f"refs/tags/{tag}"
    args = ["fetch", "-q", "--no-tags", *_ALONE, "--end-of-options", url, f"{ref}:{ref}"]
    out = runner.run(repo, *args, check=False, network=True, subject=subject)
    if out.status == 0:
        return f", and tag {tag}"
    return f" (tag {tag} was not fetched: {' '.join(out.stderr.split())[:200]})"


def _spoke_v2(trace: str) -> bool:
    """True when git's packet trace shows the server answering in protocol v2."""
    try:
        with open(trace, encoding="utf-8", errors="replace") as handle:
            return any(line.rstrip().endswith("< version 2") for line in handle)
    except OSError:
        return False


def _search(
    runner: Runner,
    repo: Path,
    source: Source,
    sha: str,
    first_args: list[str],
    first: Output,
    env: dict[str, str] | None,
) -> str:
    """The server refused sha by SHA: look for it in track (or the default branch), then tags."""
    # A filter needs a named remote (git records the partial clone's promisor under its
    # name); qola's clones name the URL `origin`. git fetches a remote from the first of
    # its URLs, and a repository's config may give it several: only a remote whose every
    # URL is the manifest's is used. Elsewhere the fetch goes by URL, unfiltered.
    remote, blobs = source.url, []
    urls = submodules.remote_urls(runner, repo, "origin")
    if urls and all(url == source.url for url in urls):
        remote, blobs = "origin", ["--filter=blob:none"]
    branch = followed(source.track).ref
    searched = "the default branch" if source.track is None else repr(source.track)
    # A track of releases (refs/tags/v*) is searched with the tags, which hold it.
    for refspec in (TAGS,) if "*" in branch else (branch, TAGS):
        args = ["fetch", "-q", "--no-tags", *_ALONE, *blobs, "--end-of-options", remote, refspec]
        out = runner.run(repo, *args, check=False, network=True, progress=True, env=env)
        if out.status != 0:
            error = command_error(source.subject, args, out)
            raise GitError(
                source.subject,
                f"{_label(source)}commit {sha} could not be fetched: the server would not "
                f"send it by SHA, and looking for it in {searched} and the tags failed:\n"
                f"{_indent(error.problem)}\nthe first error was:\n"
                f"{_first(source, first_args, first)}",
                _hint(source),
            )
        if has_commit(runner, repo, sha):
            where = "the tags" if refspec == TAGS else searched
            return (
                f"the server refused to send {sha[:12]} by SHA; found it in {where}"
                f"{' (fetched without blobs)' if blobs else ''}"
            )
    raise GitError(
        source.subject,
        f"{_label(source)}commit {sha} is not in {source.url}: the server would not send it "
        f"by SHA, and neither {searched} nor the tags contain it (nothing else was "
        f"fetched); the first error was:\n{_first(source, first_args, first)}",
        _hint(source),
    )


def _label(source: Source) -> str:
    return f"{source.label}: " if source.label else ""


def _first(source: Source, args: list[str], first: Output) -> str:
    return _indent(command_error(source.subject, args, first).problem)


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def _hint(source: Source, searched: bool = True) -> str:
    if source.hint_track == "":
        return f"check that {source.url} still has the commit the gitlink records"
    hint = f"check the pin, or move it: qola bump {source.subject} --to REF"
    if not searched:
        return hint
    where = source.hint_track or 'track = "<branch>"'
    return f"{hint}; a commit on another branch is found once that branch is named: {where}"


def nested_environment() -> dict[str, str]:
    """Git's own stance for URLs a repository (not the user) names, as `git submodule` takes it.

    git submodule runs its clones with GIT_PROTOCOL_FROM_USER=0, so protocols allowed
    only "from the user" (file://, local paths, unless protocol.file.allow=always) are
    refused for URLs that come from a .gitmodules file.
    """
    return {"GIT_PROTOCOL_FROM_USER": "0"}
