"""Moving pins: `bump` (to a branch, tag or SHA), `freeze` (to what is checked out), `init`."""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from qola import edit, gitconfig, gitfiles, history, patches
from qola.errors import GitError, QolaError, UsageError
from qola.git import Runner, command_error
from qola.init_manifest import render_init
from qola.manifest import Dep, Manifest
from qola.observe import head_sha, index_gitlinks

_FULL_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
LOG_LINES = 20  # the short log shown and put in the commit message


@dataclass
class Move:
    """A pin moving from old to new, with the commits in between."""

    dep: Dep
    old: str
    new: str
    ref: str
    count: int = 0
    log: list[str] = field(default_factory=list)

    def headline(self) -> str:
        """`aiter d32b0cb..9f1e2aa (37 commits)`"""
        plural = "commit" if self.count == 1 else "commits"
        return f"{self.dep.name} {self.old[:7]}..{self.new[:7]} ({self.count} {plural})"

    def message(self) -> str:
        """The commit message: `Bump aiter from d32b0cb to 9f1e2aa` and the short log."""
        body = "\n".join(self.log)
        more = self.count - len(self.log)
        if more > 0:
            body += f"\n... and {more} more"
        return f"Bump {self.dep.name} from {self.old[:7]} to {self.new[:7]}\n\n{body}\n"


def resolve(
    runner: Runner, dep: Dep, worktree: Path, ref: str | None, offline: bool
) -> tuple[str, str | None]:
    """(full SHA, the remote ref it was read from) for ref (default: track, else the remote's
    default branch); the ref is None for a SHA, and offline, where nothing is fetched."""
    ref = ref or dep.track
    if ref and _FULL_SHA.match(ref.lower()):
        return ref.lower(), None
    if offline:
        return _resolve_locally(runner, dep, worktree, ref or "HEAD"), None
    if gitfiles.git_dir(worktree) is not None:
        return _ls_remote(runner, dep, worktree, ref)
    # No repository yet: run ls-remote in a new empty folder (never a shared one such
    # as $TMPDIR, whose repository, if any, git would read config from).
    with tempfile.TemporaryDirectory(prefix="qola-ls-remote-") as empty:
        return _ls_remote(runner, dep, Path(empty), ref)


def _ls_remote(runner: Runner, dep: Dep, where: Path, ref: str | None) -> tuple[str, str]:
    if ref is None:
        out = runner.run(
            where, "ls-remote", "--symref", "--end-of-options", dep.url, "HEAD",
            check=False, network=True,
        )  # fmt: skip
        if out.status != 0:
            raise command_error(dep.name, ["ls-remote", dep.url], out)
        for line in out.stdout.splitlines():
            sha, _, name = line.partition("\t")
            if name == "HEAD" and _FULL_SHA.match(sha):
                return sha, "HEAD"
        raise GitError(dep.name, f"{dep.url} has no default branch", "give --to REF")
    found = find_ref(runner, dep, where, ref)
    if found is not None:
        return found[1], found[0]
    raise UsageError(
        dep.name,
        f"{ref!r} is neither a branch nor a tag of {dep.url}; nothing was changed",
        "give an existing branch, tag or a full commit SHA",
    )


def find_ref(runner: Runner, dep: Dep, where: Path, ref: str) -> tuple[str, str] | None:
    """(full ref name, commit SHA) of a branch or tag of dep's remote; None if it has none.

    A tag wins over a branch of the same name, and an annotated tag is peeled to its
    commit. `where` is the folder git runs in (no repository is needed).
    """
    out = runner.run(
        where, "ls-remote", "--end-of-options", dep.url, ref, check=False, network=True
    )
    if out.status != 0:
        raise command_error(dep.name, ["ls-remote", dep.url, ref], out)
    refs: dict[str, str] = {}
    for line in out.stdout.splitlines():
        sha, _, name = line.partition("\t")
        refs[name] = sha
    for name in (f"refs/tags/{ref}^{{}}", f"refs/tags/{ref}", f"refs/heads/{ref}", ref,
                 f"{ref}^{{}}"):  # fmt: skip
        if name in refs:
            return name.removesuffix("^{}"), refs[name]
    return None


def _resolve_locally(runner: Runner, dep: Dep, worktree: Path, ref: str) -> str:
    if gitfiles.git_dir(worktree) is not None:
        for name in (f"refs/remotes/origin/{ref}", f"refs/tags/{ref}", ref):
            out = runner.run(
                worktree, "rev-parse", "--verify", "-q", "--end-of-options", f"{name}^{{commit}}",
                check=False,
            )  # fmt: skip
            if out.status == 0 and out.stdout.strip():
                return out.stdout.strip()
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
    span = history.learn(runner, move.dep, worktree, move.new, source, offline, LOG_LINES)
    move = dataclasses.replace(move, new=span.new, count=span.count, log=span.log)
    if move.old == move.new:
        return move
    if not span.descends and not allow_downgrade:
        where = "" if span.known else f" (the current pin is nowhere in {move.dep.url})"
        raise UsageError(
            move.dep.name,
            f"{move.new[:12]} ({move.ref}) does not descend from the current pin "
            f"{move.old[:12]}{where}; nothing was changed",
            "if moving back (or sideways) is intended, add --allow-downgrade",
        )
    return move


def read_manifest(manifest: Manifest) -> tuple[bytes, str]:
    """The manifest's bytes and text, read once for an edit."""
    raw = manifest.path.read_bytes()
    return raw, raw.decode("utf-8")


def edit_pins(manifest: Manifest, text: str, pins: dict[Dep, str]) -> str:
    """The manifest text with only the pins' values replaced."""
    for dep, sha in pins.items():
        text = edit.set_pin(text, dep.key, sha, source=str(manifest.path))
    return text


def write_manifest(manifest: Manifest, raw: bytes, new_text: str) -> None:
    """Write the edited manifest atomically, refusing if the file changed since it was read."""
    edit.write_atomically(manifest.path, new_text, raw)


def root_gitlink(runner: Runner, manifest: Manifest, dep: Dep) -> str | None:
    """The commit the root's index records at the dep's path, when it is a submodule."""
    if gitfiles.git_dir(manifest.root) is None:
        return None
    return index_gitlinks(runner, manifest.root, [dep.path]).get(dep.path)


def stage_gitlink(runner: Runner, manifest: Manifest, dep: Dep, sha: str) -> None:
    runner.run(
        manifest.root, "update-index", "--cacheinfo", f"160000,{sha},{dep.path}", subject=dep.name
    )


def stage_manifest(
    runner: Runner, manifest: Manifest, old_raw: bytes, pins: dict[Dep, str]
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
    if staged.encode() != old_raw:
        try:
            text = edit_pins(manifest, staged, pins)
        except QolaError:
            return "its staged copy differs from the file and has other pins"
    else:
        text = edit_pins(manifest, old_raw.decode("utf-8"), pins)
    with tempfile.TemporaryDirectory(prefix="qola-stage-") as folder:
        path = Path(folder) / "manifest"
        path.write_bytes(text.encode("utf-8"))
        new_blob = runner.run(root, "hash-object", "-w", "--", str(path)).stdout.strip()
    runner.run(root, "update-index", "--cacheinfo", f"{mode},{new_blob},{rel}",
               subject=str(manifest.path))  # fmt: skip
    return None


def commit(runner: Runner, manifest: Manifest, move_message: str, gitlinks: dict[str, str]) -> str:
    """Commit exactly the manifest and the given gitlinks, whatever else is staged."""
    root = manifest.root
    rel = os.path.relpath(manifest.path, root)
    if rel.startswith(".."):
        raise UsageError(str(manifest.path), "the manifest is outside the root; cannot commit it")
    # A private index holding HEAD plus our two changes: the user's other staged
    # changes stay staged and out of this commit.
    with tempfile.TemporaryDirectory(prefix="qola-index-") as folder:
        index = os.path.join(folder, "index")
        private = Runner(env={**runner.env, "GIT_INDEX_FILE": index}, trust=runner.trust)
        has_head = runner.run(root, "rev-parse", "-q", "--verify", "HEAD", check=False)
        if has_head.status == 0:
            private.run(root, "read-tree", "HEAD")
        blob = runner.run(root, "hash-object", "-w", "--", rel).stdout.strip()
        private.run(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}")
        for path, sha in gitlinks.items():
            private.run(root, "update-index", "--add", "--cacheinfo", f"160000,{sha},{path}")
        tree = private.run(root, "write-tree").stdout.strip()
    parents = ["-p", has_head.stdout.strip()] if has_head.status == 0 else []
    sha = runner.run(root, "commit-tree", tree, *parents, "-m", move_message).stdout.strip()
    old = has_head.stdout.strip() if has_head.status == 0 else "0" * 40
    runner.run(root, "update-ref", "-m", "qola bump", "HEAD", sha, old)
    # The real index now agrees with the new HEAD for those paths.
    runner.run(root, "add", "--", rel)
    for path, link in gitlinks.items():
        runner.run(root, "update-index", "--cacheinfo", f"160000,{link},{path}")
    return sha


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


def init_text(runner: Runner, root: Path) -> str:
    """A new manifest pinning each of the root's submodules at its recorded gitlink."""
    try:
        text = (root / ".gitmodules").read_text(encoding="utf-8", errors="replace")
        modules = gitconfig.submodules(text)
    except OSError:
        modules = []
    if not modules:
        raise UsageError(str(root), "has no submodules to pin (no .gitmodules entries)",
                         "write qola.toml by hand; see manifests/full.toml")  # fmt: skip
    links = index_gitlinks(runner, root)
    entries = []
    for module in modules:
        link = links.get(module.path)
        if link is None:
            continue
        name = re.sub(r"[^A-Za-z0-9_-]", "_", module.path.rsplit("/", 1)[-1]).lstrip("_-")
        entries.append((name or "dep", module.path, None, link))
    if not entries:
        raise UsageError(str(root), "none of the .gitmodules entries has a gitlink in the index")
    return render_init(entries)
