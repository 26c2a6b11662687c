"""A manifest's values checked one by one: names, paths, URLs, commits, tracks, groups."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from qola.base import hints, names
from qola.base.hints import Hint
from qola.base.shas import is_full_sha
from qola.manifest.gitmodules import (
    SCHEME,
    SCP_LIKE,
    by_path,
    named_git_dir,
)
from qola.repo import configfile, fslimits
from qola.repo.trail import saw_file_exists, saw_folder

if TYPE_CHECKING:
    from qola.manifest import Loader

# The commit of the one dependency `load(..., repair=NAME)` lets through with a branch or tag
# name as its pin (git's null SHA: no commit). Only `bump NAME --to REF` loads so, and it
# writes a commit in its place.
UNPINNED = "0" * 40


ABBREV_SHA = re.compile(r"^[0-9a-f]{7,64}$")


HELPER_TRANSPORT = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")


ALLOWED_SCHEMES = ("https", "http", "ssh", "git", "file")


ALLOWED_URLS = "https://, http://, ssh://, git://, file://, user@host:path or a local path"


# What a manifest's names, paths, URLs and refs may not hold: the characters qola/base/safetext.py
# escapes in output (controls, line separators, bidirectional overrides), so that the no-op,
# which prints them as they are, shows what the full command shows.
CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)


DRIVE = re.compile(r"^[A-Za-z]:")


NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


OFF_LIMITS = "git's own folders are off limits"


def pass_root(
    before: str = "", command_line: str = "pass --root (or QOLA_ROOT) on the command line"
) -> Hint:
    """How to point qola at another root, in the terms of whoever runs it, after `before`."""
    return hints.either(before + command_line, before + "give qola_checkout() ROOT <folder>")


def short(text: str) -> str:
    return text if len(text) <= 60 else text[:28] + "…" + text[-28:]


def check_name(loader: Loader, where: str, name: str) -> None:
    # No dots: a name is a TOML key segment (deps.<name>.commit) and a CMake variable part.
    if not NAME.fullmatch(name):
        raise loader.fail(
            where,
            f"{name!r} is not a usable dependency name",
            "use letters, digits, '_' and '-', starting with a letter or digit",
        )
    if len(name) > fslimits.NAME_MAX:
        # The name is a folder of qola's refs: refs/qola/backup/<name>/ holds its backups.
        raise loader.fail(
            where,
            f"the name {name[:20]}… is {len(name)} characters long; a name may have "
            f"{fslimits.NAME_MAX} (it names a folder, refs/qola/backup/<name>/)",
            "give it a shorter name",
        )


def match_submodule(
    loader: Loader,
    where: str,
    name: str,
    path: str | None,
    modules: list[configfile.Submodule],
) -> configfile.Submodule:
    if path is not None:
        found = by_path(modules).get(str(PurePosixPath(path)))
        if found:
            return found
        raise loader.fail(
            where,
            f"has no url and no submodule of the root is at {path!r}",
            'add url = "…" or declare the submodule in .gitmodules',
        )
    matches = [m for m in modules if m.name == name]
    if not matches:
        matches = [m for m in modules if PurePosixPath(m.path).name == name]
    if len(matches) == 1:
        return matches[0]
    candidates = ", ".join(f"{m.name} ({m.path})" for m in (matches or modules)) or "none"
    if not matches:
        problem = f"no submodule of the root matches {name!r} (candidates: {candidates})"
    else:
        problem = f"more than one submodule matches {name!r} (candidates: {candidates})"
    if where.startswith("qola."):
        hint = f'declare it as a [deps.{name}] table with path = "…" and url = "…"'
    else:
        hint = 'give path = "…" (and url = "…") explicitly'
    raise loader.fail(where, problem, hint)


def git_dir_on(loader: Loader, real: str) -> str | None:
    """The first folder on the real path `real` that is a git dir, if any.

    A name like `.git` is refused as written; this catches the same folder reached
    through a symbolic link, and git dirs of other names (bare repositories,
    .git/modules/<name>) — anywhere qola would write into git's own files.
    """
    folder = real
    chain = []
    while True:
        chain.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for folder in reversed(chain):  # from / down: the outermost git dir is named
        known = loader._git_dirs.get(folder)
        if known is None:
            known = loader._git_dirs[folder] = named_git_dir(folder)
        if known:
            return folder
    return None


def groups(loader: Loader, where: str, value: Any) -> tuple[str, ...]:
    """A list of group names: each a name as dependency names are, none twice."""
    example = 'write it as a list of names, e.g. groups = ["fa", "gemm"]'
    if not isinstance(value, list):
        raise loader.fail(where, f"must be a list of group names, not {value!r}", example)
    for group in value:
        if not isinstance(group, str) or not NAME.fullmatch(group):
            raise loader.fail(
                where,
                f"{group!r} is not a usable group name",
                "use letters, digits, '_' and '-', starting with a letter or digit",
            )
    if len(set(value)) != len(value):
        twice = next(g for g in value if value.count(g) > 1)
        raise loader.fail(where, f"names the group {twice!r} twice", "name each group once")
    return tuple(value)


def track(loader: Loader, where: str, track: str) -> str:
    if not track or track.startswith("-") or CONTROL.search(track):
        raise loader.fail(where, f"{track!r} is not a branch or tag name")
    if "*" in track:
        return release_pattern(loader, where, track)
    why = names.ref_name_problem(track)
    if why is not None:
        # git asks the remote for it, and a fetch takes it as a refspec: `a:b` would
        # write the ref b, `+a` force it, `a*` fetch every ref it matches.
        raise loader.fail(
            where,
            f"{track!r} is not a branch or tag name git accepts ({why})",
            "give the branch or tag as git names it, e.g. main, release/2.1 or v2.1.0",
        )
    return track


def release_pattern(loader: Loader, where: str, track: str) -> str:
    """A track that follows releases: a pattern of tags such as refs/tags/v*."""
    if not track.startswith("refs/tags/"):
        raise loader.fail(
            where,
            f"{track!r} is a pattern, and only tags can be followed by one",
            'follow releases with a pattern of tags: track = "refs/tags/v*"',
        )
    why = names.ref_name_problem(track.replace("*", "x"))
    if why is not None or any(char in track for char in "?[\\"):
        raise loader.fail(
            where,
            f"{track!r} is not a pattern of tags qola follows ({why or 'only * may match'})",
            'give the tags\' common start and a *, e.g. track = "refs/tags/v*"',
        )
    return track


def tag(loader: Loader, where: str, value: str) -> str:
    """The label beside a pin: a tag's short name, as `git tag` lists it."""
    if value.startswith("refs/"):
        short = value.removeprefix("refs/tags/")
        raise loader.fail(where, f"{value!r} is a ref, not a tag's name",
                          f'write the name alone: tag = "{short}"')  # fmt: skip
    if not label_problem(value):
        return value
    raise loader.fail(
        where,
        f"{value!r} is not a tag name git accepts ({label_problem(value)})",
        "give the tag as `git tag` lists it, e.g. v2.1.0",
    )


_EXAMPLES = {
    "path": "3rdparty/aiter", "url": "https://github.com/ROCm/aiter.git",
    "commit": "<the full 40-hex SHA>", "tag": "v1.2", "track": "main", "patches": "patches/aiter",
    "patches_dir": "patches", "allowed-signers": "keys/aiter.allowed_signers",
    "allowed_signers": "keys/aiter.allowed_signers", "signers": "keys/aiter.allowed_signers",
    "keyring": "keys/aiter.asc",
}


def string_hint(where: str) -> str:
    """The hint for a value that must be a string: the key written with one, in quotes."""
    key = where.rsplit(".", 1)[-1]
    short = key.rsplit("_", 1)[-1] if where.startswith("qola.") and "_" in key else key
    example = _EXAMPLES.get(key) or _EXAMPLES.get(short, "...")
    return f'write it in quotes, e.g. {key} = "{example}"'


def label_problem(tag: str) -> str | None:
    """Why tag cannot be a pin's label (None: it can), checked where it is read and written."""
    if not tag or tag.startswith("-") or CONTROL.search(tag):
        return "empty, leading '-' or a control character"
    if any(char in tag for char in "\\\"'"):
        return "it holds a quote or a backslash"
    if tag.startswith("refs/"):
        return "it starts with refs/, as a ref does, not a tag's short name"
    return names.ref_name_problem(f"refs/tags/{tag}")


def commit(loader: Loader, where: str, name: str, value: str, legacy: bool) -> str:
    commit = value.strip().lower()
    if is_full_sha(commit):
        return commit
    if legacy and ABBREV_SHA.match(commit):
        loader.warnings.append(
            f"{loader.at(where)}: {where}: abbreviated SHA {commit!r}; "
            "write the full 40-hex SHA in its place"
        )
        return commit
    if re.fullmatch(r"[0-9a-fA-F]+", value.strip()):
        # Not `qola bump --to` it: a remote resolves no abbreviation, and bump reads this
        # manifest first.
        problem = f"{value!r} is not a full commit SHA (40 hex digits, or 64 for sha256)"
        raise loader.fail(where, problem, "write the full 40-hex SHA in its place")
    if name == loader.repair and value.strip():
        return UNPINNED  # `bump NAME --to REF` writes the commit in its place
    ref = value.strip()
    if not ref:
        raise loader.fail(where, "the pin is empty, not a commit SHA", f"qola bump {name} --to REF")
    if ref.endswith("^{}") and names.ref_name_problem(ref[:-3]) is None:
        ref = ref[:-3]  # a tag peeled, as ls-remote prints it: the tag's commit
    elif names.ref_name_problem(ref) is not None or any(char in ref for char in "~^:@{"):
        # A revision git works out in a clone (main~1): no remote resolves it.
        problem = f"{ref!r} is a revision, not a commit SHA, and no remote resolves it"
        raise loader.fail(where, problem, f"in a full clone of the dependency, `git rev-parse "
                          f"{_shell_word(ref)}` prints its SHA; then: qola bump {name} --to "
                          "<that SHA>")  # fmt: skip
    # A remote-tracking name (origin/main) is the remote's branch main.
    ref = ref.removeprefix("origin/") if ref.startswith("origin/") and len(ref) > 7 else ref
    problem = f"{value!r} is a branch or tag name, not a commit SHA"
    # Runs as printed: bump loads this manifest with repair=NAME, and resolves the name.
    raise loader.fail(where, problem, f"qola bump {name} --to {_shell_word(ref)}")


def _shell_word(text: str) -> str:
    """text as one word a shell passes on as it is (quoted only where it must be)."""
    import shlex  # only for this message

    return shlex.quote(text)


def relative(loader: Loader, where: str, value: str, plain: str, absolute: str | Hint
) -> tuple[str, ...]:
    """The parts of a relative POSIX path (a dependency's or the root's), or exit 2."""
    if CONTROL.search(value):
        raise loader.fail(where, f"{value!r} contains control characters", plain)
    if "\\" in value:
        raise loader.fail(where, f"{value!r} contains '\\'", "separate folders with '/'")
    if value.startswith("/") or DRIVE.match(value):
        raise loader.fail(where, f"{value!r} is absolute", absolute)
    return PurePosixPath(value).parts


def outside_git(loader: Loader, where: str, value: str, parts: tuple[str, ...]) -> None:
    if any(part.lower() == ".git" for part in parts):
        raise loader.fail(where, f"{value!r} has a .git component", OFF_LIMITS)


def path(loader: Loader, where: str, value: str, root: Path, kind: str = "folder") -> str:
    """A folder below the root (kind "dependency": one qola clones, see fslimits)."""
    plain = 'write a relative path such as "3rdparty/aiter"'
    if not value:
        raise loader.fail(where, "is empty", plain)
    parts = relative(loader, where, value, plain, f"paths are relative to the root, {root}")
    if ".." in parts:
        raise loader.fail(where, f"{value!r} contains '..'", "paths must stay inside the root")
    outside_git(loader, where, value, parts)
    norm = str(PurePosixPath(*[p for p in parts if p != "."])) if parts else ""
    if norm in ("", "."):
        raise loader.fail(
            where, f"{value!r} is the root itself", "give it a folder below the root"
        )
    too_long = fslimits.problem(root / norm, tuple(norm.split("/")), root, kind)
    if too_long is not None:
        raise loader.fail(where, *too_long)
    if loader._real_root is None or loader._real_root[0] != root:
        loader._real_root = (root, os.path.realpath(root))
        saw_folder(root, loader._real_root[1])
    real_root = loader._real_root[1]
    real = os.path.realpath(os.path.join(root, norm))
    saw_folder(os.path.join(root, norm), real)
    if os.path.commonpath([real_root, real]) != real_root:
        raise loader.fail(
            where,
            f"{value!r} leaves the root through a symlink (to {real})",
            f"paths must stay inside the root, {real_root}",
        )
    inside = git_dir_on(loader, real)
    if inside is not None:
        raise loader.fail(
            where,
            f"{value!r} leads into the git dir {inside} through a symlink",
            "git's own folders are off limits",
        )
    return norm


def url(loader: Loader, where: str, value: str, root: Path) -> str:
    allowed = f"use {ALLOWED_URLS}"
    if not value or CONTROL.search(value) or value != value.strip():
        raise loader.fail(
            where,
            f"{value!r} is not a usable URL (empty, blanks or control characters)",
            allowed,
        )
    if value.startswith("-"):
        raise loader.fail(
            where, f"{value!r} starts with '-', which git would read as an option", allowed
        )
    if HELPER_TRANSPORT.match(value):
        raise loader.fail(
            where, f"{value!r} uses a '<helper>::' transport, which can run commands", allowed
        )
    scheme = SCHEME.match(value)
    if scheme:
        if scheme.group(1).lower() not in ALLOWED_SCHEMES:
            raise loader.fail(
                where, f"{value!r}: scheme {scheme.group(1)!r} is not allowed", allowed
            )
        return value
    if SCP_LIKE.match(value) and not value.startswith(("/", "./", "../")):
        return value
    local = Path(value if os.path.isabs(value) else os.path.normpath(root / value))
    # A repository no file system can hold: git could only fail to find it.
    too_long = fslimits.problem(local, local.parts[1:], loader.path.parent)
    if too_long is not None:
        raise loader.fail(where, *too_long)
    return value if os.path.isabs(value) else str(local)


def key_file(loader: Loader, where: str, value: str | None, root: Path) -> str | None:
    """The absolute path of a file of signing keys (allowed-signers, keyring), written
    relative to the manifest's folder: it must be a file in the project (whoever may change
    it may change the pin as well); None when not given."""
    if value is None:
        return None
    plain = 'write a path relative to the manifest, such as "keys/aiter.allowed_signers"'
    if not value:
        raise loader.fail(where, "is empty", plain)
    parts = relative(loader, where, value, plain, "key files are relative to the manifest's "
                     f"folder, {loader.path.parent}")  # fmt: skip
    outside_git(loader, where, value, parts)
    full = os.path.normpath(os.path.join(loader.path.parent, *parts))
    real, real_root = os.path.realpath(full), os.path.realpath(root)
    saw_folder(full, real)  # (what the no-op's stamp proves unchanged, as for every path)
    if os.path.commonpath([real_root, real]) != real_root:
        raise loader.fail(where, f"{value!r} leads out of the root, to {real}",
                          f"keep the keys in the project, below {real_root}")  # fmt: skip
    if not os.path.isfile(full):
        said = "is not a file" if os.path.exists(full) else "does not exist"
        raise loader.fail(where, f"{value!r} ({full}) {said}",
                          "give the file that lists the keys allowed to sign this "
                          "dependency's pins")  # fmt: skip
    saw_file_exists(full)
    return full
