"""A new pin of a dependency whose manifest lists who may sign it: signed so, or refused
(exit 4) unless --allow-unsigned, before anything is written.

The commit is checked where it is: the dependency's clone when it holds it (and the tag of
its label), else a scratch repository that fetches the commit alone (commits only, one
deep) and the tag of the label, which is what `verify` checks once it is checked out.

A label the user named (`--to TAG`, `--tag TAG`, the newest release of a track's pattern)
is checked as it is. A label qola chose (for a SHA, a branch, what is checked out) is
written only where its tag verifies: the first tag naming the commit that does, else none
when the commit's own signature does; so what is written passes `verify` either way."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from qola.base import console
from qola.base.errors import RefusedError
from qola.gitrun import queries
from qola.history import releases, scratch
from qola.repo import gitfiles
from qola.sync import signatures

if TYPE_CHECKING:
    from qola.gitrun.git import Runner
    from qola.manifest import Dep, Manifest

ALLOWED = "Pinned with --allow-unsigned"  # how a commit message records what was let through


class Vetted(NamedTuple):
    """What a new pin is written with: its label, and (with --allow-unsigned) why it is
    not signed by a listed key, for the warning and a commit message."""

    tag: str | None
    unsigned: str | None = None


def asked_for(dep: Dep, label: str | None, ref: str | None, source: str | None) -> bool:
    """Whether label is the tag the user named, not one qola chose: the ref given (`--to
    TAG`), or the release a pattern (the ref's, else the track's) picked (source: the ref
    it was read from, refs/tags/NAME)."""
    if label is None:
        return False
    if source == f"{releases.TAGS}{label}":
        return True
    if ref is None:
        return releases.is_pattern(dep.track)
    return label in (ref, ref.removeprefix(releases.TAGS))


def vet(runner: Runner, manifest: Manifest, dep: Dep, sha: str, tag: str | None,
        offline: bool, allow_unsigned: bool, named: bool = True,
        tags: Mapping[str, str] | None = None) -> Vetted:  # fmt: skip
    """The label to write beside sha and, with allow_unsigned, why sha is not signed by a
    key dep lists; else a RefusedError when it is not. named: tag is the user's, checked
    as it is; else qola chose it, and any tag naming sha that verifies (tags:
    {refs/tags/NAME: commit}, read of the remote, or of the clone offline, when not
    given), else none, is written instead when tag does not."""
    if not dep.is_signed:
        return Vetted(tag)
    with signatures.Keys() as keys, _Checker(runner, keys, manifest, dep, sha, offline) as at:
        first = at.verdict(tag)
        if named or tag is None:
            return _vetted(manifest, dep, tag, first, allow_unsigned)
        verdicts = []
        for label in [tag, *_other_labels(at, tag, tags)]:
            verdict = first if label == tag else at.verdict(label)
            if verdict.ok and verdict.checked == f"tag {label}":
                return Vetted(label)
            verdicts.append(verdict)
        commit = at.verdict(None)
    tried = "; ".join(v.problem for v in verdicts if v.problem is not None)
    if commit.problem is None:
        console.note(f"{dep.name}: no tag naming {sha[:12]} carries a good signature"
                     + (f" ({tried})" if tried else "")
                     + ": pinned without a label, on the commit's own signature")
        return Vetted(None)
    if allow_unsigned:  # the label stays: verify checks its tag, and says what this says
        return Vetted(tag, first.problem or commit.problem)
    problem = f"{commit.problem}, nor does a tag naming it carry a good signature ({tried})"
    return _vetted(manifest, dep, tag, signatures.Verdict(commit.checked, problem=problem),
                   False)  # fmt: skip


def _vetted(manifest: Manifest, dep: Dep, tag: str | None, verdict: signatures.Verdict,
            allow_unsigned: bool) -> Vetted:  # fmt: skip
    if verdict.problem is None:
        return Vetted(tag)
    if allow_unsigned:
        return Vetted(tag, verdict.problem)
    files = signatures.key_files(dep, manifest.root)
    raise RefusedError(
        dep.name,
        f"{verdict.problem}; nothing was changed",
        f"pin a commit (or a tag) signed by a key {files} lists, or add --allow-unsigned to "
        "pin it all the same",
    )


def _other_labels(at: _Checker, tag: str, tags: Mapping[str, str] | None) -> list[str]:
    """The tags naming the commit that a label can hold, but tag, best first."""
    if tags is None:
        tags = at.tags()
    left = {ref: commit for ref, commit in tags.items()
            if commit == at.sha and ref != f"{releases.TAGS}{tag}"}  # fmt: skip
    found = []
    while (best := releases.label_for(left, at.sha)) is not None:
        found.append(best)
        del left[f"{releases.TAGS}{best}"]
    return found


class _Checker:
    """Checks of one commit, with one tag or none each: in the dependency's clone when it
    holds the commit (and the tag, naming it), else in one scratch repository, made once."""

    def __init__(self, runner: Runner, keys: signatures.Keys, manifest: Manifest, dep: Dep,
                 sha: str, offline: bool) -> None:  # fmt: skip
        self.runner, self.keys, self.manifest, self.dep = runner, keys, manifest, dep
        self.sha, self.offline = sha, offline
        self.worktree = manifest.root / dep.path
        self.here = (gitfiles.git_dir(self.worktree) is not None
                     and queries.has_commit(runner, self.worktree, sha))  # fmt: skip
        self._stack = contextlib.ExitStack()
        self._probe: scratch.Probe | None = None

    def __enter__(self) -> _Checker:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def verdict(self, tag: str | None) -> signatures.Verdict:
        runner, dep, root, sha = self.runner, self.dep, self.manifest.root, self.sha
        if self.here and (self.offline or tag is None
                          or queries.local_tag(runner, self.worktree, tag) == sha):  # fmt: skip
            return signatures.check(runner, self.keys, dep, self.worktree, root, sha, tag or "")
        repo = self._scratch()
        fetched = tag is not None and repo.fetch(f"refs/tags/{tag}", "--depth=1")
        if not repo.has(sha):  # the tag names another commit: the commit alone is checked
            repo.fetch(sha, "--depth=1", required=True)
            fetched = False
        return signatures.check(runner, self.keys, dep, repo.path, root, sha, tag or "",
                                tag_ref=scratch.REF if fetched else None)  # fmt: skip

    def tags(self) -> dict[str, str]:
        """{refs/tags/NAME: commit} of the remote's tags, or offline of the clone's."""
        if self.offline:
            found = gitfiles.git_dir(self.worktree) is not None
            return queries.local_tags(self.runner, self.worktree) if found else {}
        return queries.remote_refs(self.runner, self._scratch().path, self.dep.name,
                                   self.dep.url, [f"{releases.TAGS}*"])  # fmt: skip

    def _scratch(self) -> scratch.Probe:
        if self._probe is None:
            probe = scratch.scratch(self.runner, self.dep.name, self.dep.url)
            self._probe = self._stack.enter_context(probe)
        return self._probe


def recorded(message: str, problems: dict[str, str]) -> str:
    """A commit message with what --allow-unsigned let through, by dependency, at its end."""
    if not problems:
        return message
    lines = [f"{ALLOWED}: {problem} ({name})" for name, problem in problems.items()]
    return message.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
