"""Patch series on top of a pin: each *.patch one commit, the same on every machine.

How a series is applied and remembered: docs/patches.md, "How a series becomes commits"."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base.errors import GitError, UsageError
from qola.base.shas import is_full_sha
from qola.manifest import Dep
from qola.repo import commitcache, gitfiles, store
from qola.sync import patch_parts

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from qola.gitrun.git import Output, Runner

# Changing anything that shapes the commits (identity, date, message, recipe) must
# change RECIPE, so that results remembered under the old recipe are not reused.
RECIPE = "qola-series-2"
TRAILER = "Qola-Patch"
IDENTITY = {
    "GIT_AUTHOR_NAME": "qola",
    "GIT_AUTHOR_EMAIL": "qola@patch.invalid",
    "GIT_AUTHOR_DATE": "@946684800 +0000",  # 2000-01-01: fixed, so every machine agrees
    "GIT_COMMITTER_NAME": "qola",
    "GIT_COMMITTER_EMAIL": "qola@patch.invalid",
    "GIT_COMMITTER_DATE": "@946684800 +0000",
}
# Settings of the user's that would make the commits differ between machines.
_NEUTRAL = ("-c", "i18n.commitEncoding=UTF-8", "-c", "apply.whitespace=nowarn")
_HINT = "create it, or fix the patches setting in the manifest"
_TRAILER_LINE = re.compile(rf"^{TRAILER}: (.+)$", re.M)


@dataclass(frozen=True)
class Patch:
    name: str  # relative to the dependency's patch folder, e.g. "0001-fix.patch"
    path: Path
    data: bytes  # what is applied: the file, or the part of it for one repository


@dataclass(frozen=True)
class Series:
    """The patches for one repository: the dependency itself ("") or a nested submodule."""

    repo: str  # "" or the nested submodule's path relative to the dependency
    patches: tuple[Patch, ...]

    def fingerprint(self, base: str) -> str:
        """A name for base + these patches: equal fingerprints give equal commits."""
        import hashlib  # not needed (nor imported) on the no-op path without patches

        digest = hashlib.sha256(f"{RECIPE}\0{base}\0".encode())
        for patch in self.patches:
            digest.update(f"{patch.name}\0{len(patch.data)}\0".encode())
            digest.update(patch.data)
        return digest.hexdigest()


@dataclass(frozen=True)
class Applied:
    """What a series produced on top of base: one commit per patch, in order."""

    base: str
    chain: tuple[str, ...]
    names: tuple[str, ...]

    @property
    def head(self) -> str:
        return self.chain[-1] if self.chain else self.base


class SeriesError(UsageError):
    """The patch folder cannot be read: checkout stops with exit 2, verify reports it."""


def split(
    layout: Mapping[str, Series], repo: str, inner: Collection[str], subject: str
) -> Series | None:
    """The series of repository repo ("" or a nested submodule's path): the part for it of
    each patch in its own folder and in the folders of the repositories above it (those
    first, in the order load gives), a part being the files in repo but in none of its
    nested submodules inner (paths relative to the dependency). None when none is left."""
    found = []
    for folder, series in layout.items():
        if folder != repo and not (folder == "" or repo.startswith(folder + "/")):
            continue
        for patch in series.patches:
            try:
                data = patch_parts.part(patch.data, folder, repo, inner)
            except patch_parts.CrossingError as error:
                raise SeriesError(
                    subject, f"patch {patch.name} renames or copies a file across a nested "
                    f"submodule's boundary ({error})", "split the patch in two",
                ) from None
            if data is not None:
                found.append(Patch(patch.name, patch.path, data))
    return Series(repo, tuple(found)) if found else None


def reaches(layout: Mapping[str, Series], repo: str, deeper: bool = False) -> bool:
    """A patch for repo, or one above it, changes a file below repo; with deeper, one
    inside a directory there (the split then depends on repo's nested submodules)."""
    test = patch_parts.reaches_deeper if deeper else patch_parts.reaches
    for folder, series in layout.items():
        above = folder == repo or (repo and (folder == "" or repo.startswith(folder + "/")))
        if above and any(test(patch.data, folder, repo) for patch in series.patches):
            return True
    return False


def load(root: Path, dep: Dep) -> dict[str, Series]:
    """Every series of a dependency keyed by repository ("" first); {} when it has none."""
    if dep.patches is None:
        return {}
    folder = root / dep.patches
    if not folder.is_dir():
        what = "does not exist" if not folder.exists() else "is not a folder"
        raise SeriesError(dep.name, f"the patch folder {dep.patches} {what}", _HINT)
    found: dict[str, list[Patch]] = {}
    try:
        for path in sorted(folder.rglob("*.patch")):
            if not path.is_file():
                continue
            relative = path.relative_to(folder).as_posix()
            repo = relative.rpartition("/")[0]
            found.setdefault(repo, []).append(Patch(relative, path, path.read_bytes()))
    except OSError as error:
        raise SeriesError(
            dep.name, f"cannot read the patch folder {dep.patches}: {error}", _HINT
        ) from None
    # rglob's sorted paths put each folder's patches in name order; parents before children.
    ordered = sorted(found.items(), key=lambda item: (item[0].count("/"), item[0]))
    return {repo: Series(repo, tuple(patches)) for repo, patches in ordered}


def remembered(gitdir: Path, series: Series, base: str) -> Applied | None:
    """What applying series to base produced before, if this repository has done it."""
    data = commitcache.read_commit_cache(gitdir, series.fingerprint(base), folder="series")
    if data is None:
        return None
    chain, names = data.get("chain"), data.get("names")
    if not (isinstance(chain, list) and isinstance(names, list)):
        return None
    expected = [p.name for p in series.patches]
    if names != expected or len(chain) != len(expected) or data.get("base") != base:
        return None
    if not all(isinstance(sha, str) and is_full_sha(sha) for sha in chain):
        return None
    return Applied(base, tuple(chain), tuple(expected))


def remember(gitdir: Path, series: Series, applied: Applied) -> None:
    """Record what series produced on base: how qola (and its no-op) recognise it later.

    Not a cache that may fail quietly: without the record a patched HEAD cannot be told
    from someone's commits, so a record that cannot be written stops the move (exit 3).
    """
    import json


    data = {"base": applied.base, "chain": list(applied.chain), "names": list(applied.names)}
    path = commitcache.record_file(gitdir, "series", series.fingerprint(applied.base))
    text = json.dumps(data, sort_keys=True)
    try:
        store.write_file(path, text.encode(), gitfiles.common_dir(gitdir))
    except OSError as error:
        raise GitError(
            str(gitdir),
            f"cannot record the result of the patch series in {error.filename or path}: "
            f"{error.strerror}",
            f"remove {error.filename}" if store.is_unsafe(error) else "make the git dir writable",
        ) from None


def build(
    runner: Runner, worktree: Path, base: str, series: Series, subject: str, scratch: bool
) -> Applied:
    """Commit the series on top of base without touching the work tree, index or refs.

    With scratch, even the new objects go to a temporary store (borrowing the
    repository's as an alternate): the repository is left exactly as it was.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="qola-series-") as temp:
        env = {"GIT_INDEX_FILE": os.path.join(temp, "index"), **IDENTITY}
        if scratch:
            objects = runner.run(worktree, "rev-parse", "--git-path", "objects", subject=subject)
            store = (worktree / objects.stdout.strip()).resolve()
            env["GIT_OBJECT_DIRECTORY"] = os.path.join(temp, "objects")
            env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = str(store)
            os.mkdir(env["GIT_OBJECT_DIRECTORY"])
        runner.run(worktree, "read-tree", "--end-of-options", base, subject=subject, env=env)
        parent = base
        chain = []
        text = os.path.join(temp, "patch")
        for patch in series.patches:
            # The bytes the fingerprint names (a part of the file, perhaps), never the
            # file again: what is applied is what is remembered.
            with open(text, "wb") as handle:
                handle.write(patch.data)
            applied = runner.run(
                worktree,
                *_NEUTRAL,
                "apply",
                "--cached",
                "--end-of-options",
                text,
                check=False,
                env=env,
            )
            if applied.status != 0:
                raise _does_not_apply(runner, worktree, subject, series, patch, base, applied)
            tree = runner.run(worktree, "write-tree", subject=subject, env=env).stdout.strip()
            parent = runner.run(
                worktree,
                *_NEUTRAL,
                "commit-tree",
                "--no-gpg-sign",
                "-p",
                parent,
                "-m",
                message(patch),
                "--end-of-options",
                tree,
                subject=subject,
                env=env,
            ).stdout.strip()
            chain.append(parent)
    return Applied(base, tuple(chain), tuple(p.name for p in series.patches))


def _does_not_apply(
    runner: Runner, worktree: Path, subject: str, series: Series, patch: Patch, base: str,
    out: Output,
) -> GitError:
    from qola.gitrun.git import command_error  # lazy: only where git runs

    error = command_error(subject, ["apply", "--cached", str(patch.path)], out)
    where = f"{series.repo} at {base[:12]}" if series.repo else f"{base[:12]}"
    return GitError(
        subject,
        f"patch {patch.name} does not apply to {where}:\n{error.problem}",
        _hint(runner, worktree, series, base, out.stderr),
    )


_MISSING = re.compile(r"^error: (.+): does not exist in index$", re.M)


def _hint(runner: Runner, worktree: Path, series: Series, base: str, said: str) -> str:
    """What to do: for a file the pinned commit does not have, why it is not there."""
    missing = _MISSING.findall(said)
    refresh = "refresh the patch against the pinned commit (git format-patch), or remove it"
    if not missing:
        return refresh
    path = missing[0]
    links = []
    parents = [path.rsplit("/", depth)[0] for depth in range(1, path.count("/") + 1)]
    if parents:  # the folders the file would be in: is one of them a submodule's gitlink?
        out = runner.run(
            worktree, "ls-tree", "-z", "--end-of-options", base, "--", *parents, check=False
        )
        links = [r.split("\t", 1)[1] for r in out.stdout.split("\0") if r[:7] == "160000 "]
    if links:
        inside = f" of {series.repo}" if series.repo else ""
        return (
            f"{path} lies inside {max(links, key=len)}, a nested submodule{inside} that qola "
            "does not check out (submodules = false, or update = none in .gitmodules): "
            "qola applies the part of a patch below a nested submodule inside it only when "
            "it checks that submodule out"
        )
    where = f"{series.repo} at {base[:12]}" if series.repo else base[:12]
    return f"{where} has no file {path}: {refresh}"


def message(patch: Patch) -> str:
    """The commit message: the patch's subject and body, or the file name; then a trailer."""
    text = patch.data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    subject, body = _mail_text(text) or _show_text(text) or ("", "")
    subject = subject or f"Apply {Path(patch.name).name}"
    parts = [subject]
    if body:
        parts.append(body)
    parts.append(f"{TRAILER}: {patch.name}")
    return "\n\n".join(parts) + "\n"


_HEADER = re.compile(r"^[A-Za-z][A-Za-z0-9-]*:[ \t]")


def _mail_text(text: str) -> tuple[str, str] | None:
    """Subject and body of a mail: `git format-patch` output, with or without its first
    `From <sha>` line (headers only, as a mail client saves it); None without a Subject."""
    head, _, rest = text.partition("\n\n")
    lines = head.split("\n")
    if lines[0].startswith("From ") and not _HEADER.match(lines[0]):
        lines = lines[1:]
    if not lines or not _HEADER.match(lines[0]):
        return None
    import email.parser  # only when a series is applied: not on the no-op path
    import email.policy

    mail = email.parser.HeaderParser(policy=email.policy.default).parsestr(
        "\n".join(lines) + "\n\n"
    )
    subject = " ".join(str(mail.get("Subject", "")).split())
    if not subject:
        return None
    subject = re.sub(r"^\[[^\]]*PATCH[^\]]*\]\s*", "", subject)
    body_lines = []
    for line in rest.splitlines():
        if line == "---" or line.startswith("diff --git "):
            break
        body_lines.append(line)
    return subject, "\n".join(body_lines).strip()


def _show_text(text: str) -> tuple[str, str] | None:
    """Subject and body of `git show` / `git log -p` output (the message indented)."""
    head, _, rest = text.partition("\n\n")
    if not re.match(r"commit [0-9a-f]{7,64}\b", head):
        return None
    message = []
    for line in rest.splitlines():
        if line and not line.startswith("    "):
            break
        message.append(line[4:])
    subject, _, body = "\n".join(message).strip().partition("\n")
    return (subject.strip(), body.strip()) if subject.strip() else None


def on_head(
    runner: Runner, worktree: Path, base: str, head: str, limit: int
) -> list[tuple[str, str]] | None:
    """The (commit, patch name) of qola's patches from base up to head, oldest first.

    None when anything else is there: base is not an ancestor, a merge, more than
    limit commits, or a commit that is not one of qola's patches.
    """
    out = runner.run(
        worktree,
        "log",
        f"--max-count={limit + 1}",
        "--format=%H %P%x00%B%x00",
        "--end-of-options",
        head,
        f"^{base}",
        check=False,
    )
    if out.status != 0:
        return None
    records = out.stdout.split("\0")
    commits = [(records[i].split(), records[i + 1]) for i in range(0, len(records) - 1, 2)]
    if len(commits) > limit:
        return None
    found: list[tuple[str, str]] = []
    parent = base
    for shas, body in reversed(commits):
        trailer = _TRAILER_LINE.findall(body)
        if len(shas) != 2 or shas[1] != parent or not trailer:
            return None
        found.append((shas[0], trailer[-1].strip()))
        parent = shas[0]
    return found if parent == head else None


def base_below(runner: Runner, worktree: Path, head: str) -> str:
    """The first commit below head that is not one of qola's patch commits."""
    out = runner.run(
        worktree,
        "log",
        "--first-parent",
        "--max-count=1000",  # a series is short; no need to read a long history
        "--format=%H%x00%B%x00",
        "--end-of-options",
        head,
    )
    records = out.stdout.split("\0")
    for i in range(0, len(records) - 1, 2):
        if not _TRAILER_LINE.search(records[i + 1]):
            return records[i].strip()
    return head


def describe(applied: list[str], wanted: list[str], changed: list[str]) -> str:
    """How the patches on HEAD differ from the series: missing, extra, reordered, changed."""
    parts = []
    missing = [n for n in wanted if n not in applied]
    extra = [n for n in applied if n not in wanted]
    if missing:
        parts.append("missing " + ", ".join(missing))
    if extra:
        parts.append("extra " + ", ".join(extra))
    if not missing and not extra and applied != wanted:
        parts.append("reordered (" + ", ".join(applied) + ")")
    if changed:
        parts.append("changed " + ", ".join(changed))
    return "; ".join(parts) or "differs from the series"
