"""Tags as people read them: the label of a pinned commit, and releases in version order.

A track such as `refs/tags/v*` follows releases: of the tags it matches, the newest in
version order (as `git tag --sort=v:refname`: runs of digits compare as numbers; read
from each tag's first digit, so that `v0.11.0` comes before `12.2.0`; a pre-release
before the release it leads to: `v2.0-rc1` before `v2.0`).
A pre-release is a tag with a word of pre-release in it (`alpha`, `beta`, `rc`, `pre`,
`preview`, `dev`, `snapshot`, `nightly`, `init`, or PEP 440's `a`/`b`/`c` between digits:
`v1.2-rc1`, `2.0.0b1`, `prerelease-3.1.0`); a letter that ends a version is a release
(`OpenSSL_1_1_1w`, tzdata's `2024a`, ntp's `4.2.8p17`). Pre-releases count only when the
pattern itself names one (a letter after its first `*`: `refs/tags/v*-rc*`), and a tag
with no digit at all (`latest`) is no release.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fnmatch import fnmatchcase

from qola.manifest import Dep
from qola.manifest.values import label_problem

TAGS = "refs/tags/"
_RUNS = re.compile(r"\d+|\D+")
# Words of a tag, split at every change between letters, digits and the rest: v1.2-rc1 is
# v, 1, 2, rc, 1. A word of pre-release, or a/b/c between two numbers (PEP 440's 2.0b1).
_WORDS = re.compile(r"[^\W\d_]+|\d+")
_PRE_WORDS = frozenset(
    {"alpha", "beta", "rc", "cr", "pre", "prerelease", "preview", "dev", "snapshot", "nightly",
     "init"}  # LLVM's llvmorg-21-init: where the next version's development starts
)


def is_pre_release(tag: str) -> bool:
    """Whether tag names a pre-release (module docstring)."""
    words = _WORDS.findall(tag.lower())
    for i, word in enumerate(words):
        if word in _PRE_WORDS:
            return True
        between = 0 < i < len(words) - 1 and words[i - 1].isdigit() and words[i + 1].isdigit()
        if word in ("a", "b", "c") and between:
            return True
    return False


def is_pattern(track: str | None) -> bool:
    """Whether a track follows releases (a ref pattern) rather than one branch or tag."""
    return track is not None and "*" in track


def version_key(name: str) -> tuple[tuple[tuple[int, int, str], ...], str]:
    """A sort key in version order: `v1.9` before `v1.10`. The version is read from the
    first digit on, so that tags a project spelled two ways compare by their numbers
    (fmt's `v0.11.0` before its `12.2.0`, googletest's `release-1.8.1` before `v1.13.0`)
    where `git tag --sort=v:refname` would compare the `v`; the prefix breaks ties. A
    pre-release's words sort before the end of a version (`v2.0-rc1` before `v2.0`), a
    release's letter after it (`1_1_1w` after `1_1_1`)."""
    digit = re.search(r"\d", name)
    start = digit.start() if digit else len(name)
    runs = _RUNS.findall(name[start:])
    pre = is_pre_release(name)
    key = []
    for run in runs:
        if run.isdigit():
            key.append((1, int(run), ""))
        else:
            key.append((0 if pre and re.search(r"[^\W\d_]", run) else 2, 0, run))
    key.append((1, -1, ""))  # the end of the version: after a pre-release, before a letter
    return tuple(key), name[:start]


def releases(refs: Mapping[str, str], pattern: str) -> list[tuple[str, str]]:
    """(tag, commit) of each release the pattern matches among refs, oldest first."""
    star = pattern.find("*")
    names_pre = bool(re.search(r"[A-Za-z]", pattern[star:])) if star >= 0 else True
    found = []
    for ref, sha in refs.items():
        if not ref.startswith(TAGS) or not fnmatchcase(ref, pattern):
            continue
        tag = ref[len(TAGS) :]
        if not re.search(r"\d", tag) or (is_pre_release(tag) and not names_pre):
            continue
        found.append((tag, sha))
    return sorted(found, key=lambda item: version_key(item[0]))


def newest(refs: Mapping[str, str], pattern: str) -> tuple[str, str] | None:
    """(tag, commit) of the newest release the pattern matches; None when none does."""
    found = releases(refs, pattern)
    return found[-1] if found else None


def pinned_release(
    refs: Mapping[str, str], pattern: str, pin: str, label: str | None
) -> str | None:
    """The tag the pattern matches that the pin is, as upstream says (refs): its label
    where that names the pin, else the newest such tag naming it (a pre-release too: a pin
    may be ahead of the newest release); None when no tag the pattern matches names it."""
    def matches(tag: str) -> bool:
        return fnmatchcase(TAGS + tag, pattern) and refs.get(TAGS + tag) == pin

    if label is not None and matches(label):
        return label
    named = [ref[len(TAGS) :] for ref in refs if ref.startswith(TAGS)]
    return max((tag for tag in named if matches(tag)), key=version_key, default=None)


def behind(refs: Mapping[str, str], pattern: str, pin: str, label: str | None) -> int | None:
    """How many releases are newer than the pinned one (pinned_release), by version and
    counted by commit: two tags of one commit (protobuf's v21.12 and v3.21.12) are one
    release; 0 for a pin at or ahead of the newest (a pre-release of the next one); None
    when the pin is no tag the pattern matches."""
    pinned = pinned_release(refs, pattern, pin, label)
    if pinned is None:
        return None
    found = releases(refs, pattern)
    # Where the pin stands: the newest version any of its tags says (protobuf's v3.21.12
    # is its v21.12), so that no older commit counts as newer.
    at = max([version_key(tag) for tag, sha in found if sha == pin] + [version_key(pinned)])
    return len({sha for tag, sha in found if version_key(tag) > at} - {pin})


def is_newer(tag: str, than: str | None) -> bool:
    """Whether release tag comes after than in version order (False when than is None)."""
    return than is not None and version_key(tag) > version_key(than)


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
    plain = [tag for tag in tags if re.search(r"\d", tag) and not is_pre_release(tag)]
    return max(plain or tags, key=version_key)


def retagged(dep: Dep, now: str) -> str:
    """What both `bump` (refusing) and `verify --remote` say of a label that names now, not
    the pinned commit, upstream."""
    return (f"tag {dep.tag} at {dep.url} names {now[:12]} now, not the pin {dep.commit[:12]}: "
            "it was moved (retagged) upstream")  # fmt: skip
