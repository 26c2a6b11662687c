"""`verify --manifest-only`: the checks that need the manifest and the root's index only.

What it checks and which index: docs/ci.md, "What `verify --manifest-only` reads"."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from qola.base.errors import ManifestError
from qola.gitrun.git import Runner
from qola.gitrun.queries import index_gitlinks
from qola.manifest import Dep, Manifest, load
from qola.manifest.gitmodules import repository_top
from qola.sync.verify import (
    ABBREVIATED,
    DepReport,
    Problem,
    Report,
    gitlink_problems,
    guarded,
    root_gitlinks,
    with_problem,
)


@dataclass(frozen=True)
class Staged:
    """Check what is staged: why (for the output), and which index (None: the repository's)."""

    why: str
    index: str | None = None

    @property
    def env(self) -> dict[str, str]:
        return {"GIT_INDEX_FILE": self.index} if self.index else {}


def staged_mode(flag: bool, environ: Mapping[str, str]) -> Staged | None:
    """Whether to check the index: --staged, or run by pre-commit. Called before git's
    variables are scrubbed from the environment: GIT_INDEX_FILE names the index."""
    if flag:
        why = "--staged"
    elif environ.get("PRE_COMMIT") == "1":
        why = "run by pre-commit (PRE_COMMIT=1)"
    else:
        return None
    index = environ.get("GIT_INDEX_FILE")
    # Relative to the folder git ran the hook in, which is this process's.
    return Staged(why, os.path.abspath(index) if index else None)


def load_staged(path: Path, root: Path | None, runner: Runner, staged: Staged) -> Manifest:
    """The manifest (and the root's .gitmodules) as the index holds them."""
    path = Path(os.path.abspath(path))
    top = repository_top(path.parent)
    rel = os.path.relpath(path, top)
    out = runner.run(top, "cat-file", "blob", f":{rel}", check=False, env=staged.env)
    if out.status != 0 or rel.startswith(".."):
        raise ManifestError(
            str(path),
            "is not staged (the index has no such file), so there is nothing staged to check",
            "git add it, or run without --staged",
        )
    modules = runner.run(top, "cat-file", "blob", ":.gitmodules", check=False, env=staged.env)
    gitmodules = modules.stdout if modules.status == 0 else ""
    manifest = load(path, root, staged=(out.stdout.encode("utf-8"), gitmodules))
    if manifest.root != top:
        # [qola] root (or --root) names another folder: its .gitmodules is that folder's.
        manifest = load(path, root, staged=(out.stdout.encode("utf-8"), None))
    return manifest


def check(
    manifest: Manifest, deps: tuple[Dep, ...], runner: Runner, staged: Staged | None = None
) -> Report:
    """A report on the pins themselves; heads are unknown (None) and submodules empty."""
    if staged is None:
        links, unread = guarded(lambda: root_gitlinks(manifest, deps, runner))
        checked = None
    else:
        env = staged.env
        links, unread = guarded(
            lambda: index_gitlinks(runner, manifest.root, [d.path for d in deps], env=env)
        )
        checked = (
            f"what is staged: {manifest.path.name} and the gitlinks in the index, "
            f"not the work tree ({staged.why})"
        )
    reports = (with_problem(_check_one(dep, links), unread) for dep in deps)
    return Report(manifest, tuple(reports), checked)


def _check_one(dep: Dep, links: dict[str, str | None]) -> DepReport:
    problems: list[Problem] = []
    link = links.get(dep.path)
    if dep.is_abbreviated:
        # Accepted with a warning elsewhere (TE's legacy form), but a commit named by a
        # prefix is only as unique as the repository is small: not for a committed pin.
        problems.append(
            Problem(
                ABBREVIATED,
                f"the pin {dep.commit!r} is abbreviated; write the full 40-hex SHA in its place",
            )
        )
        if link is not None and link.startswith(dep.commit):
            return DepReport(dep, dep.path, None, tuple(problems))
    problems.extend(gitlink_problems(dep, links))
    return DepReport(dep, dep.path, None, tuple(problems))
