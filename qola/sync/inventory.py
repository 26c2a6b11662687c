"""What a bill of materials records of a project: the root, each dependency and each
nested submodule as pinned, where it comes from, the patches on top of it and its license
files; read offline from the tree as `verify` checked it, or from the manifest and the
root's gitlinks alone. Reads; writes nothing.

How each fact is read, and what stands for one that is not known: docs/sbom.md."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from qola.base import licenses, urls
from qola.gitrun import queries
from qola.manifest import Dep, Manifest
from qola.manifest.gitmodules import by_path, relative_url, superproject_url
from qola.repo import configfile, gitfiles
from qola.sync import patches
from qola.sync.observe import SubmoduleState
from qola.sync.patches import Series
from qola.sync.verify import DEVELOPING, MISSING, OVERRIDDEN, DepReport, Report

if TYPE_CHECKING:  # qola.gitrun.git is imported only where git runs
    from qola.gitrun.git import Runner

# A license file larger than this is not read: no license text is that long, and one that
# is counts as a file that declares nothing identifiable.
LICENSE_FILE_LIMIT = 1 << 20


@dataclass(frozen=True)
class Finding:
    """What `verify` found wrong with a component (or noted of it: failure False)."""

    kind: str
    message: str
    failure: bool


class Words:
    """verify's messages as a document records them: the same tree gives the same words
    wherever it is, and they let no reader in. Each URL is without credentials (those of
    the manifest and of the .gitmodules read, and whatever has the shape of a URL); the
    root's absolute path is made relative to it (`3rdparty/aiter`, `.` for the root); a
    path in a temporary folder of qola's (gpg's keybox in it, say), different each run, is
    `<temporary>`."""

    def __init__(self, manifest: Manifest) -> None:
        self.urls = {dep.url for dep in manifest.deps}
        roots = {str(manifest.root), os.path.realpath(manifest.root)}
        # Not inside another path (file:///...), and not a longer name (/a/TE2 for /a/TE).
        self._root = re.compile(
            r"(?<![\w/.-])(?:" + "|".join(map(re.escape, sorted(roots, key=len, reverse=True)))
            + r")(/|(?![^\s'\"`:;,)\]]))"
        )  # fmt: skip
        temporary = {tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir())}
        self._temporary = re.compile(
            r"(?:" + "|".join(map(re.escape, sorted(temporary, key=len, reverse=True)))
            + r")/qola-[^\s'\"`]*"
        )  # fmt: skip

    def __call__(self, text: str) -> str:
        text = urls.scrubbed(text, self.urls)
        text = self._root.sub(lambda found: "" if found[1] == "/" else ".", text)
        return self._temporary.sub("<temporary>", text)


@dataclass(frozen=True)
class PatchRecord:
    """One patch of a series, as applied to one repository."""

    file: str  # the patch file, relative to the root (POSIX)
    message: str  # the message of the commit qola makes of it, its subject first
    data: bytes  # what is applied to this repository: the file, or its part for it
    sha1: str  # of the whole file
    sha256: str
    commit: str | None  # the commit qola made of it in this repository, when verified

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]


@dataclass(frozen=True)
class Component:
    """The root, a dependency or a nested submodule."""

    name: str
    path: str  # relative to the root (POSIX); "" for the root
    url: str | None  # where it comes from, credentials removed; None: not known
    commit: str | None  # the pin (a nested submodule's: its gitlink); None: not known
    tag: str | None  # the label: the tag that names commit
    # The top-level license files at commit, (name, text); None when not read.
    license_files: tuple[tuple[str, str], ...] | None
    dep: str = ""  # the dependency it is, or is inside ("" for the root)
    patches: tuple[PatchRecord, ...] = ()
    patched: str | None = None  # commit + patches, when verified in the tree
    patched_license_files: tuple[tuple[str, str], ...] | None = None  # at patched
    children: tuple[Component, ...] | None = ()  # nested submodules; None: not known
    findings: tuple[Finding, ...] = ()
    # Who signed the pin, as verify found it signed by a key the manifest lists (its
    # principal and key, or OpenPGP user and fingerprint); None: not checked, or not so.
    verified_by: str | None = None
    verified_on: str | None = None  # what the signature is on: "tag v1.2", "commit 1a2b3c4d5e6f"

    @property
    def version(self) -> str | None:
        """As people name it: its tag, else its commit."""
        return self.tag or self.commit

    def walk(self) -> list[Component]:
        """This component and every one nested below it."""
        found = [self]
        for child in self.children or ():
            found.extend(child.walk())
        return found


@dataclass(frozen=True)
class Inventory:
    """A project's components, and how they were read."""

    root: Component
    deps: tuple[Component, ...]
    manifest_only: bool  # from the manifest and the root's gitlinks: no dependency read
    time: int | None  # the root commit's committer date (seconds); None: no root commit
    manifest: bytes  # the manifest's text

    @property
    def ok(self) -> bool:
        """verify found no failure."""
        return not any(f.failure for c in self.components for f in c.findings)

    @property
    def components(self) -> list[Component]:
        return [self.root, *(c for dep in self.deps for c in dep.walk())]


def from_tree(manifest: Manifest, report: Report, runner: Runner) -> Inventory:
    """The components as the tree holds them, verify's report on it taken as it is."""
    said = Words(manifest)
    deps = tuple(_dependency(manifest, found, runner, said) for found in report.deps)
    return Inventory(_root(manifest, runner), deps, False, _time(manifest, runner),
                     manifest.path.read_bytes())  # fmt: skip


def from_manifest(manifest: Manifest, report: Report, runner: Runner) -> Inventory:
    """The components as the manifest pins them (verify --manifest-only's report): no
    dependency's folder is read, so their licenses and nested submodules are not known."""
    said = Words(manifest)
    deps = []
    for found in report.deps:
        dep = found.dep
        deps.append(
            Component(
                dep.name, dep.path, urls.without_credentials(dep.url), dep.commit, dep.tag,
                None, dep.name, _manifest_patches(manifest.root, dep), children=None,
                findings=_findings(found, said),
            )
        )  # fmt: skip
    return Inventory(_root(manifest, runner), tuple(deps), True, _time(manifest, runner),
                     manifest.path.read_bytes())  # fmt: skip


def _root(manifest: Manifest, runner: Runner) -> Component:
    root = manifest.root
    commit = queries.head_sha(runner, root) if gitfiles.git_dir(root) else None
    origin = superproject_url(root)
    url = urls.without_credentials(origin) if origin else None
    name = (urls.repository_name(url) if url else None) or root.name or "root"
    tag = None
    if commit is not None:
        named = sorted(n for n, sha in queries.local_tags(runner, root).items() if sha == commit)
        tag = named[0].removeprefix("refs/tags/") if len(named) == 1 else None
    return Component(name, "", url, commit, tag, _license_files(runner, root, commit))


def _time(manifest: Manifest, runner: Runner) -> int | None:
    if gitfiles.git_dir(manifest.root) is None:
        return None
    return queries.commit_time(runner, manifest.root, "HEAD")


def _manifest_patches(root: Path, dep: Dep) -> tuple[PatchRecord, ...]:
    """dep's patches as its patch folder holds them, each file whole, no commit named
    (none when the folder cannot be read: verify says why)."""
    try:
        layout = patches.load(root, dep)
    except patches.SeriesError:
        return ()
    return tuple(_record(root, patch, None) for s in layout.values() for patch in s.patches)


def _findings(found: DepReport, said: Words, path: str | None = None) -> tuple[Finding, ...]:
    """The problems of found that concern the nested submodule at path (relative to the
    dependency), or, with path None, every other one; their messages as said has them."""
    nested = {s.path for top in found.submodules for s in top.walk()}
    return tuple(
        Finding(p.kind, said(p.message), p.is_failure)
        for p in found.problems
        if (p.path == path if path is not None else p.path not in nested)
    )


def _dependency(manifest: Manifest, found: DepReport, runner: Runner, said: Words) -> Component:
    dep = found.dep
    tree = manifest.root / dep.path
    url = urls.without_credentials(dep.url)
    kinds = {p.kind for p in found.problems}
    read = found.head is not None and not kinds & {OVERRIDDEN, DEVELOPING, MISSING}
    verified = found.ok and read
    files = _license_files(runner, tree, dep.commit) if read else None
    records, patched = _patches(manifest.root, runner, tree, dep.commit, found.head,
                                found.own, verified)  # fmt: skip
    if found.own is None:
        # The tree did not say how its series splits (not there, or not read): it is
        # recorded as the manifest pins it, as --manifest-only records it.
        records = _manifest_patches(manifest.root, dep)
    children: tuple[Component, ...] | None = ()
    if dep.submodules:
        children = None
        if read and found.head:
            children = _nested(manifest.root, runner, found, dep, tree, found.head, url,
                               found.submodules, verified, said)  # fmt: skip
    return Component(
        dep.name, dep.path, url, dep.commit, dep.tag, files, dep.name, records, patched,
        _license_files(runner, tree, patched) if patched else None, children,
        _findings(found, said), verified_by=found.signed_by, verified_on=found.signed_on,
    )  # fmt: skip


def _nested(
    root: Path, runner: Runner, found: DepReport, dep: Dep, repo: Path, commit: str,
    url: str | None, states: tuple[SubmoduleState, ...], verified: bool, said: Words,
) -> tuple[Component, ...]:
    """The nested submodules states describes, inside the repository at repo (at commit,
    fetched from url)."""
    tree = root / dep.path
    modules = _module_urls(runner, repo, commit)
    said.urls.update(found for found in modules.values() if found)
    found_here = []
    for state in states:
        inside = PurePosixPath(os.path.relpath(tree / state.path, repo)).as_posix()
        sub_url = _resolved(modules.get(inside), url)
        sub_tree = tree / state.path
        head = state.head
        records, patched = _patches(root, runner, sub_tree, state.expected, head,
                                    state.series, verified)  # fmt: skip
        children = (
            _nested(root, runner, found, dep, sub_tree, head, sub_url, state.children,
                    verified, said)
            if head is not None
            else None
        )
        name = (urls.repository_name(sub_url) if sub_url else None) or state.path.split("/")[-1]
        found_here.append(
            Component(
                name, f"{dep.path}/{state.path}", sub_url, state.expected, None,
                _license_files(runner, sub_tree, state.expected) if head else None, dep.name,
                records, patched,
                _license_files(runner, sub_tree, patched) if patched else None, children,
                _findings(found, said, state.path),
            )
        )  # fmt: skip
    return tuple(found_here)


def _module_urls(runner: Runner, repo: Path, commit: str) -> dict[str, str | None]:
    """{path: URL} of the submodules the .gitmodules of commit declares."""
    text = queries.blob_at(runner, repo, commit, ".gitmodules")
    declared = configfile.submodules(text) if text is not None else None
    return {path: module.url for path, module in by_path(declared or []).items()}


def _resolved(raw: str | None, base: str | None) -> str | None:
    """A .gitmodules URL as git resolves it: ./ and ../ against the superproject's URL."""
    if not raw or raw.startswith("-"):  # git ignores a url read as an option
        return None
    if raw.startswith(("./", "../")):
        return urls.without_credentials(relative_url(base, raw)) if base else None
    return urls.without_credentials(raw)


def _patches(
    root: Path, runner: Runner, tree: Path, base: str, head: str | None,
    series: Series | None, verified: bool,
) -> tuple[tuple[PatchRecord, ...], str | None]:
    """The records of series on top of base, and the commit they make; the commits qola
    made of them only when verify passed (head is then exactly base + series)."""
    if series is None:
        return (), None
    chain = None
    if verified and head is not None:
        found = patches.on_head(runner, tree, base, head, len(series.patches))
        if found is not None and [name for _, name in found] == [p.name for p in series.patches]:
            chain = [sha for sha, _ in found]
    records = tuple(
        _record(root, patch, chain[n] if chain else None) for n, patch in enumerate(series.patches)
    )
    return records, chain[-1] if chain else None


def _record(root: Path, patch: patches.Patch, commit: str | None) -> PatchRecord:
    whole = patch.path.read_bytes()
    return PatchRecord(
        PurePosixPath(os.path.relpath(patch.path, root)).as_posix(), patches.message(patch),
        patch.data, hashlib.sha1(whole).hexdigest(), hashlib.sha256(whole).hexdigest(), commit,
    )  # fmt: skip


def _license_files(
    runner: Runner, repo: Path, commit: str | None
) -> tuple[tuple[str, str], ...] | None:
    """The license files at the top of commit's tree, with their text ("" for one too large
    to be a license); None when the repository lacks commit."""
    if commit is None or gitfiles.git_dir(repo) is None:
        return None
    files = queries.top_files(runner, repo, commit)
    if files is None:
        return None
    found = []
    for name, size in sorted(files.items()):
        if licenses.is_license_file(name):
            text = queries.blob_at(runner, repo, commit, name) if size <= LICENSE_FILE_LIMIT else ""
            found.append((name, text or ""))
    return tuple(found)
