"""`verify --manifest-only`: the checks that need the manifest and the root's index only.

For a pre-commit hook or a CI step before any checkout: the manifest loads and
validates (syntax, keys, paths, URLs — load() raises otherwise), every pin is a full
SHA, and the root's gitlinks agree with the pins. No dependency folder is read.
"""

from __future__ import annotations

from qola.git import Runner
from qola.manifest import Dep, Manifest
from qola.verify import ABBREVIATED, DepReport, Problem, Report, gitlink_problems, root_gitlinks


def check(manifest: Manifest, deps: tuple[Dep, ...], runner: Runner) -> Report:
    """A report on the pins themselves; heads are unknown (None) and submodules empty."""
    links = root_gitlinks(manifest, deps, runner)
    return Report(manifest, tuple(_check_one(dep, links) for dep in deps))


def _check_one(dep: Dep, links: dict[str, str | None]) -> DepReport:
    problems: list[Problem] = []
    link = links.get(dep.path)
    if dep.is_abbreviated:
        # Accepted with a warning elsewhere (TE's legacy form), but a commit named by a
        # prefix is only as unique as the repository is small: not for a committed pin.
        problems.append(
            Problem(
                ABBREVIATED,
                f"the pin {dep.commit!r} is abbreviated; `qola freeze {dep.name}` writes it "
                "in full",
            )
        )
        if link is not None and link.startswith(dep.commit):
            return DepReport(dep, dep.path, None, tuple(problems))
    problems.extend(gitlink_problems(dep, links))
    return DepReport(dep, dep.path, None, tuple(problems))
