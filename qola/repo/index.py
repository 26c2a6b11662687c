"""The flagged entries of a repository's index file, read without running git.

Why, and what makes it hand over to git: docs/performance.md, "Index flags read from the
file"."""

from __future__ import annotations

import hashlib
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

from qola.repo import configfile, gitfiles

ASSUME_UNCHANGED = "assume-unchanged"
SKIP_WORKTREE = "skip-worktree"

_HASHES = {"sha1": 20, "sha256": 32}  # extensions.objectformat → bytes per object name

_HEADER = struct.Struct(">4sII")  # "DIRC", version, number of entries
_VALID = 0x8000  # assume-valid ("assume-unchanged"), in the entry's flags
_EXTENDED = 0x4000  # a second 16-bit flags word follows (version 3 and later)
_NAME_MASK = 0x0FFF
_STAGE = 0x3000  # the merge stage: 0 unless the path is in conflict
_NULS = [bytes(n) for n in range(9)]
_SKIP = 0x4000  # skip-worktree, in the extended flags
_KNOWN_EXTENDED = 0x6000  # skip-worktree and intent-to-add; git refuses any other bit

_TYPE_MASK = 0o170000
_GITLINK = 0o160000
_FILE_TYPES = frozenset({0o100000, 0o120000, _GITLINK})  # sparse directories are not here


@dataclass(frozen=True)
class Entry:
    """An index entry: a flagged file, or a gitlink (where a nested submodule may live)."""

    path: str  # relative to the repository's work tree (undecodable bytes as surrogates)
    mode: str  # octal, as `git ls-files -s` prints it
    sha: str
    flag: str | None  # ASSUME_UNCHANGED or SKIP_WORKTREE as `ls-files -v` tags it; None

    @property
    def is_gitlink(self) -> bool:
        return self.mode == "160000"


def flagged_entries(gitdir: Path) -> tuple[Entry, ...] | None:
    """The flagged entries and gitlinks of gitdir's index, in index order; None when unsure."""
    found = read(gitdir)
    return found[1] if found is not None else None


def read(gitdir: Path) -> tuple[bytes, tuple[Entry, ...]] | None:
    """The bytes of gitdir's index and, parsed from them, its flagged entries and gitlinks
    in index order; None when unsure."""
    settings = _settings(gitdir)
    if settings is None:
        return None
    hash_size, sparse = settings
    # With core.sparseCheckout git clears skip-worktree, in memory, from files that are
    # present (git 2.37, repo_read_index): the bits on disk are not what git acts on.
    if sparse:
        return None
    data = _index_bytes(gitdir)
    if data is None:
        return None
    entries = parse(data, hash_size)
    return (data, entries) if entries is not None else None


def gitlinks(gitdir: Path) -> tuple[dict[str, str | None], bytes] | None:
    """The gitlinks gitdir's index records (SHA; None for a path in conflict, which has one
    entry per merge stage) and the bytes they were read from; None when unsure."""
    found = read(gitdir)
    if found is None:
        return None
    data, entries = found
    links: dict[str, str | None] = {}
    for entry in entries:
        if entry.is_gitlink:
            links[entry.path] = entry.sha if entry.path not in links else None
    return links, data


def gitlink_paths(gitdir: Path) -> list[str] | None:
    """The paths of every gitlink in gitdir's index, skip-worktree or not ([] when there is
    no index); None when unsure."""
    # A missing index is an empty one to git: no gitlink, no submodule to look into.
    if not os.path.lexists(gitdir / "index"):
        return []
    settings = _settings(gitdir)
    data = _index_bytes(gitdir) if settings is not None else None
    entries = parse(data, settings[0]) if data is not None and settings is not None else None
    return None if entries is None else [entry.path for entry in entries if entry.is_gitlink]


def _index_bytes(gitdir: Path) -> bytes | None:
    """The index file's bytes; None unless it is a regular file that can be read (a FIFO
    planted at its name must not make qola wait)."""
    try:
        fd = os.open(gitdir / "index", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            return handle.read()
        except OSError:
            return None


def parse(data: bytes, hash_size: int) -> tuple[Entry, ...] | None:
    """The flagged entries and gitlinks of an index file's bytes; None when not understood."""
    if len(data) < _HEADER.size + hash_size:
        return None
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version not in (2, 3, 4):
        return None
    end = len(data) - hash_size
    checksum = data[end:]
    # index.skipHash (git 2.40) writes zeros instead of the checksum; git then skips it too.
    if checksum != bytes(hash_size):
        algorithm = hashlib.sha1 if hash_size == 20 else hashlib.sha256
        if algorithm(memoryview(data)[:end]).digest() != checksum:
            return None
    entries = _entries(data, version, count, hash_size, end)
    if entries is None:
        return None
    found, pos = entries
    return found if _extensions_understood(data, pos, end) else None


def _entries(
    data: bytes, version: int, count: int, hash_size: int, end: int
) -> tuple[tuple[Entry, ...], int] | None:
    """(kept entries, where the extensions start), or None."""
    # Written for speed (a big dependency's index has tens of thousands of entries):
    # only the flagged entries and gitlinks are decoded. Entries follow each other,
    # so checking where the last one ends (pos <= end) covers every read before it;
    # a read past the data raises, which declines too.
    unpack = struct.Struct(f">24xI{12 + hash_size}xH").unpack_from  # mode, flags
    fixed = 42 + hash_size
    kept: list[tuple[int, int, bytes, str | None]] = []  # (entry start, mode, name, flag)
    pos = _HEADER.size
    previous = b""  # version 4 compresses each path against the one before
    try:
        for _ in range(count):
            mode, flags = unpack(data, pos)
            name_at = pos + fixed
            extended = 0
            if flags & _EXTENDED:
                if version < 3:
                    return None
                extended = data[name_at] << 8 | data[name_at + 1]
                if extended & ~_KNOWN_EXTENDED:
                    return None
                name_at += 2
            length = flags & _NAME_MASK
            name = None
            if version == 4:
                strip = data[name_at]
                name_at += 1
                if strip & 0x80:
                    decoded = _varint(data, name_at - 1, end)
                    if decoded is None:
                        return None
                    strip, name_at = decoded
                name_end = data.find(b"\0", name_at, end)
                if name_end < 0 or strip > len(previous):
                    return None
                # An empty suffix is fine: the stages of a conflicted path share one name.
                name = previous[: len(previous) - strip] + data[name_at:name_end]
                if not name or (length != _NAME_MASK and length != len(name)):
                    return None
                previous = name
                following = name_end + 1
            else:
                # Like git: the length from the flags, or up to the NUL when it did not fit.
                name_end = name_at + length if length != _NAME_MASK else data.find(b"\0", name_at)
                following = pos + ((name_end - pos + 8) & ~7)  # padded with 1-8 NULs
                if name_end <= name_at or data[name_end:following] != _NULS[following - name_end]:
                    return None
            kind = mode & _TYPE_MASK
            if kind not in _FILE_TYPES:
                return None  # a sparse directory entry (or worse): only git knows what is below
            # `ls-files -v` tags an unmerged entry M/m: skip-worktree shows only at stage 0.
            if extended & _SKIP and not flags & _STAGE:
                kept.append((pos, mode, name or data[name_at:name_end], SKIP_WORKTREE))
            elif flags & _VALID:
                kept.append((pos, mode, name or data[name_at:name_end], ASSUME_UNCHANGED))
            elif kind == _GITLINK:
                kept.append((pos, mode, name or data[name_at:name_end], None))
            pos = following
    except (IndexError, struct.error):
        return None
    if pos > end or any(b"\0" in name for _, _, name, _ in kept):
        return None
    found = tuple(
        Entry(os.fsdecode(name), f"{mode:06o}", data[at + 40 : at + 40 + hash_size].hex(), flag)
        for at, mode, name, flag in kept
    )
    return found, pos


def _varint(data: bytes, pos: int, end: int) -> tuple[int, int] | None:
    """git's offset varint (varint.c): (value, position after it), or None."""
    value = -1
    while True:
        if pos >= end or value > 1 << 32:
            return None
        byte = data[pos]
        pos += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, pos


def _extensions_understood(data: bytes, pos: int, end: int) -> bool:
    """True when the extensions fill the rest exactly and each may be ignored."""
    while pos < end:
        if pos + 8 > end:
            return False
        signature = data[pos : pos + 4]
        (size,) = struct.unpack_from(">I", data, pos + 4)
        # An extension whose name does not start with A-Z is one a reader must
        # understand: `link` (split index), `sdir` (sparse index) and any newer one.
        if not 0x41 <= signature[0] <= 0x5A:
            return False
        pos += 8 + size
    return pos == end


def _settings(gitdir: Path) -> tuple[int, bool] | None:
    """(bytes per object name, sparse checkout on) from the repository's config, or None
    where that is not read here exactly as git reads it (git is asked instead)."""
    texts = []
    # extensions.worktreeConfig keeps core.sparseCheckout in config.worktree (as
    # sparse-checkout writes it), read after the repository's config.
    for path in (gitfiles.common_dir(gitdir) / "config", gitdir / "config.worktree"):
        try:
            texts.append(path.read_bytes())
        except FileNotFoundError:
            if path.name == "config":
                return None
        except OSError:
            return None
    lowered = [t.lower() for t in texts]
    if not any(b"objectformat" in t or b"sparsecheckout" in t or b"include" in t
               for t in lowered):  # fmt: skip
        return _HASHES["sha1"], False  # the usual case, without parsing every line
    entries = []
    for text in texts:
        found = configfile.parse_exact(text)
        if found is None or configfile.has_include(found):
            return None  # an include may turn sparse checkout on
        entries += found
    hash_size = _HASHES.get(configfile.get(entries, "extensions", None, "objectformat") or "sha1")
    if hash_size is None:
        return None
    sparse = configfile.get(entries, "core", None, "sparsecheckout")
    return hash_size, sparse is not None and sparse.lower() not in ("false", "no", "off", "0")
