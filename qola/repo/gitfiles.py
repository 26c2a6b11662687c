"""What a repository says on disk, read from its files without running git.

These reads serve the no-op path that every CMake configure takes. They take a
folder for a repository only when git would (`refusal` says why not), and
anything they cannot answer with certainty returns None: the caller asks git.
Every file they read is noted for the stamp being recorded, if any (qola/repo/trail.py),
at a path the operating system resolves the same way (no `..` in it).
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

from qola.base.shas import is_full_sha
from qola.repo import trail
from qola.repo.gitpaths import common_dir as common_dir
from qola.repo.gitpaths import common_dir_text as _common_dir
from qola.repo.gitpaths import git_dir_of
from qola.repo.gitpaths import physical as _physical
from qola.repo.gitpaths import read as _read
from qola.repo.setup_config import format_problem, read_settings, worktree_problem

_HEX = frozenset(b"0123456789abcdef")


def git_dir(worktree: Path) -> Path | None:
    """The git directory of a work tree when git would take it for this work tree's
    repository (`.git` folder or `gitdir:` file), else None (`refusal` says why)."""
    return inspect(worktree)[0]


def find_git_dir(worktree: Path) -> Path | None:
    """gitpaths.git_dir_of for a Path: where a work tree's `.git` leads, for qola's own files."""
    found = git_dir_of(os.fspath(worktree))
    return Path(found) if found is not None else None


def refusal(worktree: Path) -> str | None:
    """Why a `.git` in worktree is not a repository git would accept here (None: it is,
    or there is no `.git` at all)."""
    return inspect(worktree)[1]


# While a read-only command looks (verify): what inspect found for each work tree, so that
# its several looks at one repository read the repository's files once.
_SEEN: dict[tuple[str, bool, object, bool], tuple[Path | None, str | None]] | None = None


@contextlib.contextmanager
def unchanging() -> Iterator[None]:
    """Meanwhile qola changes no repository (a read-only command): inspect judges each work
    tree once. Threads share what it found."""
    global _SEEN
    before = _SEEN
    _SEEN = {}
    try:
        yield
    finally:
        _SEEN = before


def inspect(worktree: Path, head: bool = True) -> tuple[Path | None, str | None]:
    """(git dir, None) for a repository git would accept as this work tree's;
    (None, why) for a `.git` it would not; (None, None) when there is no `.git`.

    head=False: without asking whether HEAD's commit is there, which git needs to check
    a tree out and to tell its state, not to read its config (config_dir)."""
    seen = _SEEN
    if seen is None:
        return _inspect(worktree, head)
    key = (os.fspath(worktree), _CHOSEN.get(), _PROJECT, head)
    found = seen.get(key)
    if found is None:
        found = seen[key] = _inspect(worktree, head)
    return found


def config_dir(worktree: Path) -> Path | None:
    """The git dir whose config git reads for this work tree (None: no repository git
    takes). Its HEAD commit is not looked at: a commit in the root moves the branch and
    writes objects, which must not void a stamp that only asked for the root's config."""
    return inspect(worktree, head=False)[0]


def _inspect(worktree: Path, head: bool = True) -> tuple[Path | None, str | None]:
    # os.path on strings: this runs for every repository on the no-op path.
    top = os.fspath(worktree)
    dotgit = os.path.join(top, ".git")
    if os.path.isdir(dotgit):
        trail.saw_dir(dotgit)
        gitdir = dotgit
        # A .git folder of its own lies where its work tree does, unless it is a link.
        led = _PROJECT is not None and os.path.islink(dotgit)
    else:
        data = _read(dotgit)
        if data is None:
            if os.path.lexists(dotgit):
                return None, ".git is neither a folder nor a readable file"
            return None, None
        trail.watch(dotgit)  # a gitfile: `git submodule absorbgitdirs` and the like rewrite it
        text = data.decode("utf-8", "surrogateescape").rstrip("\r\n")
        if not text.startswith("gitdir: "):
            return None, ".git is a file without a `gitdir: ` line"
        target = text[len("gitdir: ") :]
        # git reads the path from where the .git file is, through symlinks on the way
        # (read_gitfile_gently): `..` is resolved against real folders, never as text.
        resolved = _physical(os.path.join(top, target))
        if resolved is None:
            return None, f".git points to {target}, which cannot be resolved"
        gitdir = resolved
        led = True
    outside = _outside(top, gitdir) if led else None
    if outside is None and _PROJECT is not None:
        common = _common_dir(gitdir)  # refs and objects, for a linked worktree's git dir
        outside = _outside(top, common) if common not in (None, gitdir) else None
    why = outside or _repository_problem(gitdir, top)
    if why is None and head:
        why = _head_object_problem(gitdir)
    if why is not None:
        return None, why
    return Path(gitdir), None


class Outside(str):
    """Why a repository is refused: its git dir lies outside the project."""


# While a command works on a project: its root's real path, and the folders a git dir of
# a repository in it may lie in (the root's work tree, its git dir, its common dir).
_PROJECT: tuple[str, tuple[str, ...]] | None = None


@contextlib.contextmanager
def confined(root: Path) -> Iterator[None]:
    """Meanwhile, a repository in root's work tree whose `.git` leads out of the project
    (root and root's git dirs) is refused, with an `Outside` reason: qola would fetch,
    check out and write refs in someone else's repository. A folder outside the project
    (a QOLA_SOURCE_DIR_<NAME> override) may lead anywhere: the user chose it."""
    global _PROJECT
    real_root = os.path.realpath(root)
    allowed = [real_root]
    gitdir = find_git_dir(root)
    if gitdir is not None:
        allowed += [os.path.realpath(gitdir), os.path.realpath(common_dir(gitdir))]
    before = _PROJECT
    _PROJECT = (real_root, tuple(dict.fromkeys(allowed)))
    try:
        yield
    finally:
        _PROJECT = before


# Set (on one thread) while a folder the user named is looked at: QOLA_SOURCE_DIR_<NAME>.
_CHOSEN: ContextVar[bool] = ContextVar("qola_chosen_folder", default=False)


@contextlib.contextmanager
def chosen_by_user() -> Iterator[None]:
    """Meanwhile, on this thread only, a repository is taken wherever its `.git` leads: the
    folder is one the user named (QOLA_SOURCE_DIR_<NAME>), used as it is."""
    token = _CHOSEN.set(True)
    try:
        yield
    finally:
        _CHOSEN.reset(token)


def _outside(top: str, gitdir: str) -> Outside | None:
    """Why gitdir, where top's `.git` leads, is out of bounds (None: it is not, or top is
    not a folder of the project but the root itself or one outside it)."""
    if _PROJECT is None or _CHOSEN.get():
        return None
    root, allowed = _PROJECT
    real = os.path.realpath(gitdir)
    trail.saw_folder(gitdir, real)  # a link put on the way later changes where it leads
    if any(_is_within(real, folder) for folder in allowed):
        return None
    real_top = os.path.realpath(top)
    trail.saw_folder(top, real_top)
    if real_top == root or not _is_within(real_top, root):
        return None
    return Outside(
        f".git leads to {real}, outside the project ({root} and its git dir); qola reads "
        "and writes no repository there"
    )


def project_root() -> str | None:
    """The real path of the root of the project a command works on (None: none yet)."""
    return _PROJECT[0] if _PROJECT is not None else None


def is_project_root(common: str) -> bool:
    """Whether common is the common dir of the project's root (while a command works on
    one): the user's own repository, not a dependency's."""
    return _PROJECT is not None and len(_PROJECT[1]) > 1 and (
        os.path.realpath(common) == _PROJECT[1][-1])


def root_holding(gitdir: str) -> str | None:
    """The project's root (a real path) when gitdir, a real path, lies in the root's own git
    dir (a submodule's, under modules/: its work tree is in the root's); else None."""
    if _PROJECT is None or len(_PROJECT[1]) < 2:
        return None
    root, allowed = _PROJECT
    return root if _is_within(gitdir, allowed[1]) else None


def _is_within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _repository_problem(gitdir: str, worktree: str) -> str | None:
    """Why git would not take gitdir for worktree's repository (setup.c), or None."""

    def shown(path: str) -> str:  # inside the work tree: relative to it
        inside = path.startswith(worktree + os.sep)
        return os.path.relpath(path, worktree) if inside else path

    head = os.path.join(gitdir, "HEAD")
    if os.path.islink(head):
        if not os.readlink(head).startswith("refs/"):
            return f"{shown(head)} is a link outside refs/"
    else:
        data = _read(head)
        if data is None:
            return f"{shown(head)} is missing"
        if not _is_headref(data):
            return f"{shown(head)} names neither a ref nor a commit"
    common = _common_dir(gitdir)
    if common is None:
        return f"{shown(os.path.join(gitdir, 'commondir'))} points nowhere"
    for folder in ("objects", "refs"):
        if not os.path.isdir(os.path.join(common, folder)):
            return f"{shown(os.path.join(common, folder))} is missing"
        trail.saw_dir(os.path.join(common, folder))
    config = _read(os.path.join(common, "config"))
    settings = read_settings(config or b"", shown(os.path.join(common, "config")))
    if isinstance(settings, str):
        return settings
    if settings.get("extensions.worktreeconfig") in ("true", "yes", "on", "1"):
        # Per-worktree config may set core.bare and core.worktree (setup.c reads it).
        own = _read(os.path.join(gitdir, "config.worktree")) or b""
        extra = read_settings(own, "config.worktree")
        if isinstance(extra, str):
            return extra
        settings.update(extra)
    elif os.path.isfile(os.path.join(gitdir, "commondir")):
        # A linked worktree: git ignores the shared config's core.bare and core.worktree.
        settings.pop("core.bare", None)
        settings.pop("core.worktree", None)
    return format_problem(settings) or worktree_problem(settings, gitdir, worktree)


def _is_headref(data: bytes) -> bool:
    """git's validate_headref (setup.c): "ref: refs/…", or an object name."""
    if data.startswith(b"ref:"):
        return data[4:].lstrip().startswith(b"refs/")
    return len(data) >= 40 and all(byte in _HEX for byte in data[:40])


def _head_object_problem(gitdir: str) -> str | None:
    """Why HEAD's commit cannot be read (its object is in no store git looks in), or None.

    An unborn HEAD (a new repository) names no object: nothing to find.
    """
    data = _read(os.path.join(gitdir, "HEAD")) or b""
    text = data.decode("ascii", "surrogateescape").strip()
    sha = text if is_full_sha(text) else None
    if text.startswith("ref:"):
        sha = resolve_ref(Path(gitdir), text[4:].strip())
    if sha is None:
        return None
    common = _common_dir(gitdir)
    if common is not None and _has_object(os.path.join(common, "objects"), sha, 0):
        return None
    return f"HEAD ({sha[:12]}) is not a commit it has"


# Alternates within alternates: git follows five levels (object-file.c).
_ALTERNATES_DEPTH = 5


def _has_object(objects: str, sha: str, depth: int) -> bool:
    """Whether an object store (or one it borrows from) holds the object, loose or packed."""
    loose = os.path.join(objects, sha[:2], sha[2:])
    if os.path.isfile(loose):
        trail.saw_file_exists(loose)  # content-addressed: that it is there is enough
        return True
    folder = os.path.join(objects, "pack")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        names = []
    wanted = bytes.fromhex(sha)
    for name in names:
        if not name.endswith(".idx"):
            continue
        index, pack = os.path.join(folder, name), os.path.join(folder, name[:-4] + ".pack")
        if os.path.isfile(pack) and _index_has(index, wanted):
            trail.saw_file_exists(index)  # a pack's name is the checksum of its content
            trail.saw_file_exists(pack)
            return True
    alternates = _read(os.path.join(objects, "info", "alternates"))
    if alternates is None or depth >= _ALTERNATES_DEPTH:
        return False
    for line in alternates.decode("utf-8", "surrogateescape").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        other = _physical(os.path.join(objects, line))  # relative to this store
        if other is not None and _has_object(other, sha, depth + 1):
            return True
    return False


def _index_has(index: str, wanted: bytes) -> bool:
    """Whether a version-2 pack index lists the object (binary search of its sorted names)."""
    size = len(wanted)
    try:
        with open(index, "rb") as handle:
            header = handle.read(8 + 256 * 4)
            if len(header) != 8 + 256 * 4 or header[:8] != b"\377tOc\0\0\0\2":
                return False  # version 1, or not an index: git is asked instead
            fanout = struct.unpack(">256I", header[8:])
            low = fanout[wanted[0] - 1] if wanted[0] else 0
            high = fanout[wanted[0]]
            handle.seek(8 + 256 * 4 + low * size)
            names = handle.read((high - low) * size)
    except OSError:
        return False
    first, last = 0, len(names) // size
    while first < last:
        middle = (first + last) // 2
        found = names[middle * size : (middle + 1) * size]
        if found == wanted:
            return True
        if found < wanted:
            first = middle + 1
        else:
            last = middle
    return False


def read_head(gitdir: Path) -> tuple[str | None, str | None]:
    """(commit SHA, branch ref) of HEAD; the SHA is None when it cannot be read."""
    head = os.path.join(gitdir, "HEAD")
    data = _read(head)
    if data is None:
        return None, None
    trail.watch(head)  # a hand checkout rewrites it
    text = data.decode("ascii", "surrogateescape").strip()
    if is_full_sha(text):
        return text, None
    if text.startswith("ref:"):
        # A branch moves without HEAD changing: resolve_ref notes the loose ref file (or
        # its absence) and packed-refs, so a commit on the branch voids a stamp.
        ref = text[4:].strip()
        if not ref.startswith("refs/") or ".." in ref or "//" in ref:
            return None, ref  # git takes no such HEAD (validate_headref)
        return resolve_ref(gitdir, ref), ref
    return None, None


_WORKTREE_REFS = ("refs/bisect/", "refs/worktree/", "refs/rewritten/")


def resolve_ref(gitdir: Path, ref: str) -> str | None:
    """A ref's SHA from its loose file or packed-refs, or None (symbolic or unknown)."""
    common = common_dir(gitdir)
    # A linked worktree keeps only its own refs (refs/bisect/, refs/worktree/,
    # refs/rewritten/) in its git dir; git reads every other ref from the common dir.
    own = ref.startswith(_WORKTREE_REFS)
    for base in [gitdir if own else common]:
        data = _read(os.path.join(base, ref))
        if data is None:
            continue
        trail.watch(os.path.join(base, ref))  # a commit on the branch rewrites it
        text = data.decode("ascii", "surrogateescape").strip()
        return text if is_full_sha(text) else None
    packed_refs = os.path.join(common, "packed-refs")
    packed = _read(packed_refs)
    if packed is None:
        return None
    trail.watch(packed_refs)
    for line in packed.decode("utf-8", "surrogateescape").splitlines():
        sha, _, name = line.partition(" ")
        if name == ref and is_full_sha(sha):
            return sha
    return None


def is_shallow(gitdir: Path) -> bool:
    return (common_dir(gitdir) / "shallow").is_file()


def shallow_commits(gitdir: Path) -> list[str]:
    """The commits git fetched with a depth (the `shallow` file): their parents are not here."""
    try:
        listed = (common_dir(gitdir) / "shallow").read_text().split()
    except OSError:
        return []
    return [sha for sha in listed if is_full_sha(sha)]


def is_populated(worktree: Path) -> bool:
    """True when the folder exists and holds anything at all."""
    try:
        with os.scandir(worktree) as it:
            return any(True for _ in it)
    except OSError:
        return False


def modules_dir_problem(root: Path, name: str) -> str | None:
    """Why the git dir git keeps for the root's submodule `name` (<git dir>/modules/<name>)
    lies outside the project, where git in the root still reads it; None when it does not
    (or is not there). Where it leads is noted for a stamp."""
    gitdir = find_git_dir(root)
    if gitdir is None or ".." in name.split("/"):
        return None
    allowed = [os.path.realpath(root), os.path.realpath(gitdir),
               os.path.realpath(common_dir(gitdir))]  # fmt: skip
    for base in dict.fromkeys([gitdir, common_dir(gitdir)]):
        folder = os.path.join(base, "modules", name)
        if not os.path.lexists(folder):
            trail.saw_file(folder, None)
            continue
        real = os.path.realpath(folder)
        trail.saw_folder(folder, real)
        if not any(_is_within(real, top) for top in allowed):
            return (f"its git dir {folder} leads to {real}, outside the project; qola reads "
                    "and writes no repository there")  # fmt: skip
    return None


def move_recorded(gitdir: Path) -> bool:
    """True when a run's record of a move is in the git dir (store.moving_marker): a run
    was killed moving the dependency, or found its checkout unfinished (recovery.py).
    Only the run that finishes the move may call such a tree up to date; that the record
    is absent is noted for a stamp, so that one written before is void once it appears."""
    marker = os.path.join(gitdir, "qola", "moving")  # store.moving_marker, without store
    if os.path.lexists(marker):
        return True
    trail.saw_file(marker, None)
    return False


def has_index(gitdir: Path) -> bool:
    """True when the repository has an index: every finished checkout writes one.

    A repository whose HEAD names a commit but that has no index never finished its
    first checkout: `git clone --no-checkout` (what `git submodule update` does before
    its checkout) or qola's own population, stopped half-way; or a user's `rm .git/index`.
    Whether it is there is noted for a stamp (what it holds changes with every refresh).
    """
    index = os.path.join(gitdir, "index")
    if os.path.isfile(index):
        trail.saw_file_exists(index)
        return True
    if os.path.lexists(index):
        trail.cannot_prove(f"{index} is not a file")  # git cannot read it either
        return True
    trail.saw_file(index, None)
    return False
