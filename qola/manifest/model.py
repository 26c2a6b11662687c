"""What a loaded manifest is: its dependencies, each pinned, validated and frozen."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from qola.base.errors import ManifestError
from qola.base.shas import is_full_sha

SCHEMA = 1


BOM = "\ufeff"


DEP_KEYS = ("path", "url", "commit", "tag", "track", "submodules", "patches", "groups",
            "allowed-signers", "keyring")


# What the legacy form may say beside `[qola] <name>_commit`, as `<name>_<key>`. Read only
# for a name that has a `<name>_commit`: every other key in [qola] is other tools'.
LEGACY_KEYS = ("tag", "track", "url", "submodules", "patches", "groups", "allowed_signers",
               "keyring")


class Followed(NamedTuple):
    """The upstream ref a pin follows: its track, else the remote's default branch."""

    ref: str  # what git fetches or ls-remote asks for: the track, or HEAD
    label: str  # for people: the track as written, or "the default branch"


def followed(track: str | None) -> Followed:
    """The ref followed with this track (None: none set): what `bump` moves the pin to."""
    if track is None:
        return Followed("HEAD", "the default branch")
    return Followed(track, f"releases {track}" if "*" in track else track)


@dataclass(frozen=True)
class Dep:
    """One pinned dependency, validated."""

    name: str
    path: str  # POSIX, relative to the root
    url: str  # absolute URL or absolute local path
    commit: str  # the pin: a full SHA, or an abbreviated one (legacy form only)
    track: str | None  # branch, tag or pattern of tags (refs/tags/v*) that `bump` follows
    submodules: bool  # nested submodules follow the pinned commit's gitlinks
    patches: str | None  # folder of *.patch, relative to the root
    submodule_name: str | None  # its name in the root's .gitmodules, when it is one
    key: str  # where the pin stands in the manifest, e.g. "deps.aiter.commit"
    line: int | None  # the pin's line in the manifest (1-based), when found
    abbreviated_from: str | None = None  # the legacy abbreviated pin this one was expanded from
    groups: tuple[str, ...] = ()  # the groups `--group NAME` selects it by
    tag: str | None = None  # the label beside the pin: the tag that names the pinned commit
    # Who may sign the pin (absolute paths): an ssh allowed signers file (git's
    # gpg.ssh.allowedSignersFile format), OpenPGP public keys; None: its signature is not checked.
    allowed_signers: str | None = None
    keyring: str | None = None

    @property
    def pinned_as(self) -> str:
        """The pin as people name it: its tag where it has one, else the short commit."""
        return self.tag or self.commit[:7]

    @property
    def is_signed(self) -> bool:
        """True when the manifest lists who may sign its pin (verify, bump check it)."""
        return self.allowed_signers is not None or self.keyring is not None

    @property
    def follows(self) -> Followed:
        return followed(self.track)

    @property
    def is_abbreviated(self) -> bool:
        return not is_full_sha(self.commit)


@dataclass(frozen=True)
class Manifest:
    """A loaded manifest: where it is, its root, and its dependencies."""

    path: Path
    root: Path
    deps: tuple[Dep, ...]
    warnings: tuple[str, ...] = ()
    # What loading it read, as stamp entries (qola/repo/trail.py); None: nothing vouches for it.
    looked: tuple[tuple[str, str], ...] | None = None

    def select(
        self, names: tuple[str, ...] | list[str], groups: tuple[str, ...] | list[str] = ()
    ) -> tuple[Dep, ...]:
        """The named dependencies and those in any of the groups (all when neither is given),
        in manifest order."""
        if not names and not groups:
            return self.deps
        known = {dep.name: dep for dep in self.deps}
        for name in names:
            if name not in known:
                raise ManifestError(
                    str(self.path),
                    f"no dependency named {name!r}",
                    did_you_mean(name, list(known)) or f"known: {', '.join(known) or 'none'}",
                )
        every = sorted({group for dep in self.deps for group in dep.groups})
        for group in groups:
            if group not in every:
                raise ManifestError(
                    str(self.path),
                    f"no dependency is in group {group!r}",
                    did_you_mean(group, every) or known_groups(every),
                )
        return tuple(
            dep for dep in self.deps if dep.name in names or any(g in groups for g in dep.groups)
        )


def known_groups(every: list[str]) -> str:
    """The hint of an unknown group: the groups there are, or how a dependency joins one."""
    if every:
        return f"groups: {', '.join(every)}"
    return 'the manifest has no groups; a dependency joins one with groups = ["NAME"]'


def did_you_mean(word: str, choices: list[str]) -> str | None:
    import difflib  # only for messages

    close = difflib.get_close_matches(word, choices, n=1)
    return f"did you mean {close[0]!r}?" if close else None
