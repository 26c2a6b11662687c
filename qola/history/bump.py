"""Moving pins: `bump` (to a branch, tag or SHA), `freeze` (to what is checked out), `init`.

The library the `bump`, `freeze` and `init` commands (qola/commands/) share.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from qola.base import console, safetext
from qola.base.errors import GitError, QolaError, RefusedError, UsageError
from qola.base.shas import is_full_sha
from qola.gitrun import queries
from qola.gitrun.git import Runner, command_error
from qola.gitrun.queries import head_sha, index_gitlinks, root_gitlinks
from qola.history import releases
from qola.history.commits import Nested, learn, moved
from qola.manifest import BOM, UNPINNED, Dep, Manifest, edit
from qola.repo import configfile, gitfiles
from qola.sync import patches

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

LOG_LINES = 20  # the short log shown and put in the commit message


@dataclass
class Move:
    """A pin moving from old to new, with the commits in between."""

    dep: Dep
    old: str
    new: str
    ref: str
    count: int | None = 0  # None: unknown (unknown says why)
    log: list[str] = field(default_factory=list)
    commits: list[queries.Commit] = field(default_factory=list)  # all of them, newest first
    nested: tuple[Nested, ...] = ()  # the nested submodules the move moves
    unknown: str = ""  # why the count is unknown
    tag: str | None = None  # the label written beside the new pin (None: none names it)
    back: int = 0  # the commits of the old pin's history that the new one lacks
    was: str = ""  # the pin as written when it named no commit (a ref name): a repair
    peeled: str = ""  # the commit the old pin names, where that pin is a tag object
    forward: bool = False  # to a newer release than the pin's: forward even off its history
    following: bool = False  # to where its track points now (no --to): bump, bump --all

    @property
    def old_tag(self) -> str | None:
        """The label beside the old pin (None: none, or it labels another commit)."""
        return self.dep.tag if self.old == self.dep.commit else None

    @property
    def old_as(self) -> str:
        """The old pin as people name it: its label, else its short SHA."""
        return self.old_tag or self.old[:7]

    @property
    def new_as(self) -> str:
        return self.tag or self.new[:7]

    def headline(self) -> str:
        """`aiter d32b0cb..9f1e2aa (37 commits)`, `(back 2 commits)` for a downgrade; with
        labels `fmt 11.0.2..11.1.4 (0c9fce2..1239137, 37 commits)`; a repaired pin says
        what it was (nothing to count from)."""
        if self.was:
            return f"{self.dep.name}: {self.was} → {self.new[:7]} (the pin was a ref name)"
        if self.peeled == self.new:
            return (f"{self.dep.name}: {self.old[:7]} → {self.new[:7]} (the pin was a tag "
                    "object; this is its commit)")  # fmt: skip
        said = self.unknown if self.count is None else moved(self.count, self.back)
        if self.peeled:
            said += f" from {self.peeled[:7]}, the commit of the tag object pinned"
        shas = f"{self.old[:7]}..{self.new[:7]}"
        if (self.old_as, self.new_as) == (self.old[:7], self.new[:7]):
            return f"{self.dep.name} {shas} ({said})"
        return f"{self.dep.name} {self.old_as}..{self.new_as} ({shas}, {said})"

    def details(self) -> list[str]:
        """What follows the headline: each nested submodule it moves (for a project built
        on the dependency often the line that matters most), then the short log."""
        lines = [move.line() for move in self.nested] + self.log
        if self.count is not None and self.count > len(self.log):
            lines.append(f"... and {self.count - len(self.log)} more")
        return lines

    def message(self) -> str:
        """The commit message: `Bump aiter from d32b0cb to 9f1e2aa` and the short log."""
        body = "\n".join(self.details())
        if self.back and self.count is not None:  # a move back says so before any log
            body = f"({moved(self.count, self.back)})" + (f"\n{body}" if body else "")
        if self.count is None:
            body += f"\n({self.unknown})" if body else f"({self.unknown})"
        if self.was:
            return (f"Pin {self.dep.name} at {self.new[:7]} (the pin was the ref name "
                    f"{self.was})\n\n{self.headline()}\n")  # fmt: skip
        subject = f"Bump {self.dep.name} from {self.old_as} to {self.new_as}"
        return f"{subject}\n\n{body}\n"


class Resolved(NamedTuple):
    """Where a bump goes: the commit, the remote ref it was read from (None for a SHA, and
    offline), and the tag to write beside it (None: no tag names it); tags: the tags that
    were read ({refs/tags/NAME: commit}), which label the commit that a tag object given as
    the SHA peels to."""

    sha: str
    ref: str | None
    tag: str | None
    tags: Mapping[str, str] = {}
    forward: bool = False  # a newer release by version than the pinned one (a maintenance
    # line's pin, v2.13.10, moving to v3.5.0 does not descend from it, and moves forward)


def resolve(runner: Runner, dep: Dep, worktree: Path, ref: str | None, offline: bool) -> Resolved:
    """Where ref (default: track, else the remote's default branch) points, with the tag
    that labels it: asked of the remote in one ls-remote, or offline of the local clone.

    A pin whose label upstream now names another commit is refused (RefusedError) without
    ref: following a retagged release unasked would launder it."""
    asked_for, ref = ref, ref or dep.track
    sha = ref.lower() if ref and is_full_sha(ref.lower()) else None
    if offline:
        if sha is None:
            sha = _resolve_locally(runner, dep, worktree, ref or dep.follows.ref)
        tag = ref if ref and not releases.is_pattern(ref) and ref != sha else None
        local = queries.local_tags(runner, worktree) if gitfiles.git_dir(worktree) else {}
        return Resolved(sha, None, releases.label_for(local, sha, tag), local)
    if gitfiles.git_dir(worktree) is not None:
        return _ls_remote(runner, dep, worktree, ref, sha, asked_for)
    # No repository yet: run ls-remote in a new empty folder (never a shared one such
    # as $TMPDIR, whose repository, if any, git would read config from).
    with tempfile.TemporaryDirectory(prefix="qola-ls-remote-") as empty:
        return _ls_remote(runner, dep, Path(empty), ref, sha, asked_for)


def _ls_remote(
    runner: Runner, dep: Dep, where: Path, ref: str | None, sha: str | None,
    asked_for: str | None,
) -> Resolved:
    asked = ["refs/tags/*"]
    if sha is None and not releases.is_pattern(ref):
        asked.insert(0, ref or "HEAD")
    refs = queries.remote_refs(runner, where, dep.name, dep.url, asked)
    refuse_retagged(dep, refs, asked_for)
    if sha is not None:
        return Resolved(sha, None, releases.label_for(refs, sha), refs)
    if ref is None:
        head = refs.get("HEAD")
        if head is None:
            raise GitError(dep.name, f"{dep.url} has no default branch", "give --to REF")
        return Resolved(head, "HEAD", releases.label_for(refs, head), refs)
    if releases.is_pattern(ref):
        found = releases.newest(refs, ref)
        if found is None:
            raise GitError(dep.name, f"no release of {dep.url} matches track {ref!r}",
                           "point track at the remote's tags, e.g. refs/tags/v*")  # fmt: skip
        pinned = releases.pinned_release(refs, ref, dep.commit, dep.tag)
        if pinned is not None and not releases.is_newer(found[0], pinned):
            # At the newest release, or ahead of it (a pre-release of the next): it stays.
            return Resolved(dep.commit, f"refs/tags/{pinned}", pinned, refs)
        return Resolved(found[1], f"refs/tags/{found[0]}", found[0], refs, pinned is not None)
    picked = queries.pick_ref(refs, ref)
    if picked is not None:
        name, commit = picked
        tag = name.removeprefix("refs/tags/") if name.startswith("refs/tags/") else None
        label = releases.label_for(refs, commit, tag)
        pinned = None
        if dep.track is not None and releases.is_pattern(dep.track):
            pinned = releases.pinned_release(refs, dep.track, dep.commit, dep.tag)
        forward = label is not None and releases.is_newer(label, pinned)
        return Resolved(commit, name, label, refs, forward)
    import difflib  # lazy: only for this message

    tags = [name.removeprefix("refs/tags/") for name in refs if name.startswith("refs/tags/")]
    close = difflib.get_close_matches(ref, tags, n=1, cutoff=0.6)
    hint = "give an existing branch, tag or a full commit SHA"
    if close:
        hint = f"did you mean the tag {close[0]}? qola bump {dep.name} --to {shlex.quote(close[0])}"
    raise UsageError(
        dep.name, f"{ref!r} is neither a branch nor a tag of {dep.url}; nothing was changed", hint
    )


def refuse_retagged(dep: Dep, refs: Mapping[str, str], asked_for: str | None) -> None:
    """A RefusedError when the pin's label names another commit in refs (upstream's
    tags) than the pin and the bump follows its track unasked; with --to (asked_for) the
    target is chosen, and labelled afresh, so nothing is taken on the old label's word."""
    if dep.tag is None or dep.commit == UNPINNED or asked_for is not None:
        return
    if not releases.is_pattern(dep.track) and dep.track not in (dep.tag, f"refs/tags/{dep.tag}"):
        return  # it follows a branch: where it goes the old label has no say
    now = refs.get(f"refs/tags/{dep.tag}")
    if now is None or now == dep.commit:
        return
    raise RefusedError(
        dep.name,
        f"{releases.retagged(dep, now)}, and a bump would take that unasked; nothing was "
        "changed",
        f"qola verify --remote shows how to compare the two commits; to pin what it names "
        f"now: qola bump {dep.name} --to {dep.tag} --allow-downgrade",
    )


def _resolve_locally(runner: Runner, dep: Dep, worktree: Path, ref: str) -> str:
    if gitfiles.git_dir(worktree) is not None:
        if releases.is_pattern(ref):
            found = releases.newest(queries.local_tags(runner, worktree), ref)
            if found is not None:
                return found[1]
        for name in (f"refs/remotes/origin/{ref}", f"refs/tags/{ref}", ref):
            sha = queries.commit_sha(runner, worktree, name)
            if sha:
                return sha
    raise GitError(
        dep.name,
        f"{ref!r} is not known locally and --offline forbids asking {dep.url}",
        "run without --offline, or give a full commit SHA that is present locally",
    )


def describe(
    runner: Runner,
    move: Move,
    worktree: Path,
    source: str | None,
    offline: bool,
    allow_downgrade: bool,
) -> Move:
    """Count and list the commits old..new (history.py: nothing is written anywhere);
    refuse a move backwards or sideways unless allowed."""
    span = learn(runner, move.dep, worktree, move.new, source, offline, LOG_LINES)
    unknown = (
        "commits unknown: the local history between is shallow; run without --offline "
        "to count them"
        if span.cut
        else f"commits unknown: the current pin is nowhere in {move.dep.url}"
    )
    move = dataclasses.replace(move, new=span.new, count=span.count, log=span.log,
                               commits=span.commits, nested=span.nested, back=span.back,
                               peeled=span.peeled,
                               unknown=unknown if span.count is None else "")  # fmt: skip
    if move.old == move.new:
        return move
    if (move.following and releases.is_pattern(move.dep.track) and not span.descends
            and span.known and span.count == 0):
        # The newest release is in the pin's history: the pin is ahead of it, and stays.
        return dataclasses.replace(move, new=move.old, tag=move.dep.tag, count=0, log=[],
                                   commits=[], nested=(), back=0,
                                   ref=f"ahead of the newest release, {move.tag or move.new[:12]}")
    if not span.descends and not allow_downgrade and not move.forward:
        if span.cut:
            raise UsageError(
                move.dep.name,
                f"cannot tell whether {move.new[:12]} ({move.ref}) descends from the current "
                f"pin {move.old[:12]}: the local history between is shallow and --offline "
                "forbids fetching the rest; nothing was changed",
                "run without --offline; if moving back (or sideways) is intended, add "
                "--allow-downgrade",
            )
        where = "" if span.known else f" (the current pin is nowhere in {move.dep.url})"
        raise UsageError(
            move.dep.name,
            f"{move.new[:12]} ({move.ref}) does not descend from the current pin "
            f"{move.old[:12]}{where}; nothing was changed",
            "if moving back (or sideways) is intended, add --allow-downgrade",
        )
    return move


def repair(
    runner: Runner, move: Move, worktree: Path, source: str | None, offline: bool, was: str
) -> Move:
    """The move of a pin that named no commit (was: the branch or tag name written as the
    pin) to move.new, checked to be a commit of the dependency (a tag object is peeled) as
    describe checks one. There is no old commit: nothing to count from, nor to descend
    from."""
    pinned = dataclasses.replace(move.dep, commit=move.new)
    span = learn(runner, pinned, worktree, move.new, source, offline, LOG_LINES)
    return dataclasses.replace(move, new=span.new, count=None, was=was,
                               unknown="the pin was a ref name")  # fmt: skip


def written_pin(text: str, dep: Dep) -> str:
    """The dependency's pin as the manifest text writes it (stripped)."""
    found: object = tomllib.loads(text)
    for part in dep.key.split("."):  # names hold no dots: deps.<name>.commit, qola.<name>_commit
        found = found.get(part) if isinstance(found, dict) else None
    return found.strip() if isinstance(found, str) else ""


def read_manifest(manifest: Manifest) -> tuple[bytes, str]:
    """The manifest's bytes and text (less a byte order mark), read once for an edit."""
    raw = manifest.path.read_bytes()
    return raw, raw.decode("utf-8").removeprefix(BOM)


Labels = Mapping[str, "str | None"]  # by dependency name: the tag beside its new pin


def label_of(dep: Dep, sha: str, labels: Labels | None) -> str | None:
    """The label written beside dep's new pin sha: the one given, else its own while the
    pin stays, else none (a label is never left naming another commit)."""
    if labels is not None and dep.name in labels:
        return labels[dep.name]
    return dep.tag if sha == dep.commit else None


def edit_pins(
    manifest: Manifest, text: str, pins: dict[Dep, str], labels: Labels | None = None
) -> str:
    """The manifest text with only the pins' values, and their labels, replaced."""
    source = str(manifest.path)
    for dep, sha in pins.items():
        text = edit.set_pin(text, dep.key, sha, source=source)
        tag = label_of(dep, sha, labels)
        try:
            text = edit.set_label(text, dep.key, tag, source=source)
        except edit.LabelPlacementError as error:
            if tag is None:
                raise  # the old label would be left naming another commit
            console.warning(f"{dep.name}: {tag} is not written beside the pin: {error.problem}")
    return text


def write_manifest(manifest: Manifest, raw: bytes, new_text: str) -> None:
    """Write the edited manifest atomically, refusing if the file changed since it was read."""
    if raw.startswith(BOM.encode()):
        new_text = BOM + new_text  # kept byte for byte, as every other byte of the file
    edit.write_atomically(manifest.path, new_text, raw)


def root_gitlink(runner: Runner, manifest: Manifest, dep: Dep) -> str | None:
    """The commit the root's index records at the dep's path, when it is a submodule."""
    return root_gitlinks(runner, manifest.root, [dep.path]).get(dep.path)


def stage_gitlink(runner: Runner, root: Path, dep: Dep, sha: str) -> None:
    """The root's index records dep's submodule at sha (its work tree is left alone)."""
    runner.run(root, "update-index", "--cacheinfo", f"160000,{sha},{dep.path}", subject=dep.name)


def stage_manifest(
    runner: Runner, manifest: Manifest, pins: dict[Dep, str], labels: Labels | None = None
) -> str | None:
    """Stage the new pins in the manifest the root's index tracks; None, or why not.

    Only the pins change in the staged copy: when it differed from the file before the
    edit (the user's own staged or unstaged edits), the same pin edit is made on the
    staged text, so nothing else of the user's is staged.
    """
    root = manifest.root
    rel = os.path.relpath(manifest.path, root)
    if rel.startswith("..") or gitfiles.git_dir(root) is None:
        return "it is outside the root's repository"
    out = runner.run(root, "--literal-pathspecs", "ls-files", "-s", "-z", "--", rel, check=False)
    fields = out.stdout.split("\t", 1)[0].split()
    if out.status != 0 or len(fields) != 3 or fields[2] != "0":
        return "git does not track it (or it is in conflict)"
    mode, blob = fields[0], fields[1]
    staged = runner.run(root, "cat-file", "blob", blob, subject=str(manifest.path)).stdout
    try:
        text = _with_pins(manifest, staged, pins, labels)
    except QolaError:
        return "its staged copy differs from the file and has other pins"
    new_blob = _write_blob(runner, root, text)
    runner.run(root, "update-index", "--cacheinfo", f"{mode},{new_blob},{rel}",
               subject=str(manifest.path))  # fmt: skip
    return None


def _with_pins(
    manifest: Manifest, text: str, pins: dict[Dep, str], labels: Labels | None = None
) -> str:
    """A copy of the manifest (HEAD's, the index's) with only the pins' values replaced, its
    byte order mark kept; a QolaError when the copy lacks one of the pins."""
    edited = edit_pins(manifest, text.removeprefix(BOM), pins, labels)
    return BOM + edited if text.startswith(BOM) else edited


def _signing(runner: Runner, root: Path) -> list[str]:
    """The commit is the user's, made as `git commit` would: signed where commit.gpgSign
    says so (git commit-tree, plumbing, reads it not). The program is the user's own or
    git's built-in one: a repository's gpg.program is overridden."""
    said = runner.run(root, "config", "--type=bool", "--get", "commit.gpgsign", check=False)
    return ["-S"] if said.stdout.strip() == "true" else ["--no-gpg-sign"]


def _commit_tree(runner: Runner, root: Path, tree: str, parents: list[str], message: str) -> str:
    """The commit of tree, signed where the user's config says so; a GitError naming the
    signing settings when git could not sign it."""
    signing = _signing(runner, root)
    args = ("commit-tree", *signing, tree, *parents, "-m", message)
    said = runner.run(root, *args, check=False)
    if said.status == 0:
        return said.stdout.strip()
    error = command_error(str(root), args, said)
    if signing != ["-S"] or error.hint is not None:
        raise error
    settings = ["commit.gpgSign = true"]
    for key in ("gpg.format", "user.signingKey"):
        value = runner.run(root, "config", "--get", key, check=False).stdout.strip()
        if value:
            settings.append(f"{key} = {safetext.line(value)}")
    raise GitError(
        error.subject,
        f"{error.problem}\ngit could not sign the commit, which your config asks for "
        f"({', '.join(settings)})",
        "make signing work (the key that user.signingKey names, gpg.format's program or "
        "agent; `git commit --allow-empty -m test` shows it), or turn it off for this "
        "project (git config commit.gpgSign false); then run the same command again, which "
        "finishes this edit",
    )


def _write_blob(runner: Runner, root: Path, text: str) -> str:
    """Write text into the root's object store as it is; its blob's SHA."""
    with tempfile.TemporaryDirectory(prefix="qola-stage-") as folder:
        path = Path(folder) / "manifest"
        path.write_bytes(text.encode("utf-8"))
        # --no-filters: the text is a blob's own, edited; core.autocrlf or an attribute
        # must not convert it again.
        return runner.run(root, "hash-object", "-w", "--no-filters", "--", str(path)
                          ).stdout.strip()  # fmt: skip


@dataclass(frozen=True)
class Copies:
    """The manifest a bump commits and then stages: HEAD's copy and the index's, each with
    only the pins edited (None where there is no such copy)."""

    committed: str | None
    staged: str | None


def pinned_copies(
    runner: Runner, manifest: Manifest, pins: dict[Dep, str], labels: Labels | None = None
) -> Copies:
    """What `--commit` would commit: the pin change alone, whatever else the user has
    edited in the file or staged. A UsageError when a copy has no such pin (called before
    anything is written, so that nothing is)."""
    root = manifest.root
    rel = os.path.relpath(manifest.path, root)
    if rel.startswith("..") or gitfiles.git_dir(root) is None:
        raise UsageError(str(manifest.path), "the manifest is outside the root's repository; "
                         "cannot commit it")  # fmt: skip
    copies = []
    for rev, where in (("HEAD", "HEAD"), ("", "the index")):
        text = queries.blob_at(runner, root, rev, rel)
        try:
            copies.append(None if text is None else _with_pins(manifest, text, pins, labels))
        except QolaError:
            names = ", ".join(dep.name for dep in pins)
            raise UsageError(
                str(manifest.path),
                f"the copy of it in {where} has no pin for {names}, so the bump cannot be "
                "committed alone; nothing was changed",
                "commit the manifest first, or bump without --commit (the pin is then staged)",
            ) from None
    return Copies(*copies)


def commit(
    runner: Runner,
    manifest: Manifest,
    move_message: str,
    pins: dict[Dep, str],
    gitlinks: dict[str, str],
    labels: Labels | None = None,
) -> str:
    """Commit the pin change of the manifest and the given gitlinks, nothing else.

    The commit holds HEAD's manifest with only the pins changed; the index then stages
    its own copy with the same edit: the user's other edits of the file, staged or not,
    stay as they were and out of the commit, as do their other staged changes. (A
    manifest HEAD does not hold is committed as the index has it, else whole.)

    The steps are ordered so that a kill between any two leaves HEAD and the index
    each at the old pins or at the new ones: the objects first (nothing refers to
    them yet), then one index write staging the manifest and the gitlinks together,
    then HEAD. So HEAD is never new while the index still holds the old pins (which
    the next `git commit` would record as a revert of the bump).
    """
    root = manifest.root
    rel = os.path.relpath(manifest.path, root)
    copies = pinned_copies(runner, manifest, pins, labels)
    # A private index holding HEAD plus our changes: the user's other staged
    # changes stay staged and out of this commit.
    with tempfile.TemporaryDirectory(prefix="qola-index-") as folder:
        index = os.path.join(folder, "index")
        private = Runner(env={**runner.env, "GIT_INDEX_FILE": index}, trust=runner.trust)
        parent = head_sha(runner, root)
        if parent is not None:
            private.run(root, "read-tree", "HEAD")
        text = copies.committed if copies.committed is not None else copies.staged
        if text is not None:
            blob = _write_blob(runner, root, text)
        else:  # in neither: the file is committed as `git add` would stage it
            blob = runner.run(root, "hash-object", "-w", "--", rel).stdout.strip()
        entry = private.run(root, "ls-files", "-s", "--", rel).stdout.split()
        mode = entry[0] if entry and entry[0] in ("100644", "100755") else "100644"
        links = [f"160000,{link},{path}" for path, link in gitlinks.items()]
        private.run(root, "update-index", "--add", *_cacheinfo([f"{mode},{blob},{rel}", *links]))
        tree = private.run(root, "write-tree").stdout.strip()
        staging = links
        if copies.staged is not None and copies.staged != text:
            # The index's own copy, pin edited, at the index's own mode.
            entry = runner.run(root, "ls-files", "-s", "--", rel).stdout.split()
            kept = entry[0] if entry and entry[0] in ("100644", "100755") else mode
            staging = [f"{kept},{_write_blob(runner, root, copies.staged)},{rel}", *links]
        elif copies.staged is not None or copies.committed is None:
            staging = [f"{mode},{blob},{rel}", *links]
        # else: the user staged the manifest's removal, which stays staged.
    parents = ["-p", parent] if parent is not None else []
    sha = _commit_tree(runner, root, tree, parents, move_message)
    # The real index: manifest and gitlinks in one write, before HEAD moves.
    if staging:
        runner.run(root, "update-index", "--add", *_cacheinfo(staging))
    old = parent or "0" * 40
    runner.run(root, "update-ref", "-m", "qola bump", "HEAD", sha, old)
    return sha


def _cacheinfo(entries: list[str]) -> list[str]:
    return [arg for entry in entries for arg in ("--cacheinfo", entry)]


def committed_pin(runner: Runner, manifest: Manifest, dep: Dep) -> str | None:
    """The dep's pin in the manifest as HEAD has it; None when HEAD has none to read."""
    rel = os.path.relpath(manifest.path, manifest.root)
    if rel.startswith("..") or gitfiles.git_dir(manifest.root) is None:
        return None
    text = queries.blob_at(runner, manifest.root, "HEAD", rel)
    if text is None:
        return None
    try:
        found: object = tomllib.loads(text)
    except Exception:  # any document at all: a pin that cannot be read is no pin
        return None
    for part in dep.key.split("."):  # names hold no dots: deps.<name>.commit, qola.<name>_commit
        found = found.get(part) if isinstance(found, dict) else None
    pin = found.strip().lower() if isinstance(found, str) else None
    return pin if pin and is_full_sha(pin) else None


def current_head(runner: Runner, manifest: Manifest, dep: Dep) -> str:
    """What is checked out for dep now (for freeze)."""
    worktree = manifest.root / dep.path
    gitdir = gitfiles.git_dir(worktree)
    sha = gitfiles.read_head(gitdir)[0] if gitdir else None
    sha = sha or (head_sha(runner, worktree) if gitdir else None)
    if sha is None:
        raise GitError(
            dep.name, f"{dep.path} is not checked out; nothing to freeze", "run qola checkout"
        )
    if dep.patches is not None:
        # qola's own patch commits are not upstream's: pin the commit below them.
        sha = patches.base_below(runner, worktree, sha)
    return sha


def is_only_here(runner: Runner, worktree: Path, sha: str) -> bool | None:
    """Whether sha may exist only in this checkout: no remote-tracking branch or tag holds
    it, it is no pin qola checked out, and git did not fetch it with a depth. None when
    that cannot be told (no repository there, or git refused to say)."""
    if gitfiles.git_dir(worktree) is None:
        return None
    try:
        found = queries.only_here(runner, worktree, sha, upstream=True, limit=1)
    except QolaError:  # the repository's own config forbids running git there
        return None
    return None if found is None else bool(found)


def init_entries(runner: Runner, root: Path) -> list[tuple[str, str, str | None, str]]:
    """(name, path, the URL .gitmodules gives, gitlink) of each submodule `init` pins; none
    where the root has no submodules."""
    try:
        text = (root / ".gitmodules").read_text(encoding="utf-8", errors="replace")
        modules = configfile.submodules(text) or []  # None: git rejects it
    except OSError:
        modules = []
    if not modules:
        return []
    links = index_gitlinks(runner, root)
    entries = []
    for module in modules:
        link = links.get(module.path)
        if link is None:
            continue
        name = re.sub(r"[^A-Za-z0-9_-]", "_", module.path.rsplit("/", 1)[-1]).lstrip("_-")
        entries.append((name or "dep", module.path, module.url, link))
    if not entries:
        raise UsageError(str(root), "none of the .gitmodules entries has a gitlink in the index")
    return entries
