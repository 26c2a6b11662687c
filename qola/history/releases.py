"""Tags as people read them: the label of a pinned commit, and releases in version order.

A track such as `refs/tags/v*` follows releases: of the tags it matches, the newest in
version order (as `git tag --sort=v:refname`: runs of digits compare as numbers; read
from each tag's first digit, so that `v0.11.0` comes before `12.2.0`).
A pre-release (a letter after the version's first digit: `v1.2-rc1`, `2.0.0b1`) counts
only when the pattern itself names one (a letter after its first `*`: `refs/tags/v*-rc*`),
and a tag with no digit at all (`latest`) is no release.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fnmatch import fnmatchcase

from qola.manifest.values import label_problem

TAGS = "refs/tags/"
_RUNS = re.compile(r"\d+|\D+")
_PRE = re.compile(r"\d.*[A-Za-z]")


def is_pattern(track: str | None) -> bool:
    """Whether a track follows releases (a ref pattern) rather than one branch or tag."""
    return track is not None and "*" in track


def version_key(name: str) -> tuple[tuple[tuple[int, int, str], ...], str]:
    """A sort key in version order: `v1.9` before `v1.10`. The version is read from the
    first digit on, so that tags a project spelled two ways compare by their numbers
    (fmt's `v0.11.0` before its `12.2.0`, googletest's `release-1.8.1` before `v1.13.0`)
    where `git tag --sort=v:refname` would compare the `v`; the prefix breaks ties."""
    digit = re.search(r"\d", name)
    start = digit.start() if digit else len(name)
    runs = _RUNS.findall(name[start:])
    return tuple((0, int(r), "") if r.isdigit() else (1, 0, r) for r in runs), name[:start]


def releases(refs: Mapping[str, str], pattern: str) -> list[tuple[str, str]]:
    """(tag, commit) of each release the pattern matches among refs, oldest first."""
    star = pattern.find("*")
    names_pre = bool(re.search(r"[A-Za-z]", pattern[star:])) if star >= 0 else True
    found = []
    for ref, sha in refs.items():
        if not ref.startswith(TAGS) or not fnmatchcase(ref, pattern):
            continue
        tag = ref[len(TAGS) :]
        if not re.search(r"\d", tag) or (_PRE.search(tag) and not names_pre):
            continue
        found.append((tag, sha))
    return sorted(found, key=lambda item: version_key(item[0]))


def newest(refs: Mapping[str, str], pattern: str) -> tuple[str, str] | None:
    """(tag, commit) of the newest release the pattern matches; None when none does."""
    found = releases(refs, pattern)
    return found[-1] if found else None


def behind(refs: Mapping[str, str], pattern: str, pin: str, label: str | None) -> int | None:
    """How many releases are newer than the pinned one (its label, else the release that
    names the pin); None when the pin is no release the pattern matches."""
    found = releases(refs, pattern)
    tags = [tag for tag, _ in found]
    at = tags.index(label) if label in tags else None
    if at is None:
        at = max((i for i, (_, sha) in enumerate(found) if sha == pin), default=None)
    return None if at is None else len(found) - 1 - at


def label_for(refs: Mapping[str, str], sha: str, prefer: str | None = None) -> str | None:
    """The tag to write beside a pin at sha: prefer where it names sha, else the newest
    release naming it, else the newest tag naming it; None when no tag names it (or none
    can be written as a label)."""
    tags = [ref[len(TAGS) :] for ref, commit in refs.items()
            if ref.startswith(TAGS) and commit == sha]  # fmt: skip
    tags = [tag for tag in tags if label_problem(tag) is None]
    if prefer in tags:
        return prefer
    if not tags:
        return None
    plain = [tag for tag in tags if re.search(r"\d", tag) and not _PRE.search(tag)]
    return max(plain or tags, key=version_key)
