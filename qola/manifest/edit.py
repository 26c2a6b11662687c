"""Rewrite one pin in a manifest and write it back, every other byte left as it was.

Callers read the file as bytes and decode it as UTF-8 themselves (no newline
translation, so CRLF survives), pass the text through set_pin once per pin, and
hand the result to write_atomically together with the bytes they read.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from qola.base.errors import ManifestError
from qola.base.shas import is_full_sha
from qola.manifest.tomlscan import ScanError, StringValue, string_values

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_BUG_HINT = "this is a bug in qola; please report it with the manifest"


def set_pin(text: str, key: str, new_sha: str, source: str = "manifest") -> str:
    """The manifest text with the pin at key (a Dep.key) set to new_sha and nothing else changed."""
    path = _key_path(key, source)
    if not is_full_sha(new_sha):
        raise ManifestError(
            source, f"{key}: {new_sha!r} is not a full commit SHA (40 or 64 lower-case hex)"
        )
    value = _locate(text, key, path, source)
    # Only the characters between the quotes change: the quoting style, the spacing around
    # `=` and a comment after the value stay. A hex SHA needs no escaping in either style.
    inner_start, inner_end = value.start + len(value.quote), value.end - len(value.quote)
    new_text = text[:inner_start] + new_sha + text[inner_end:]
    _check(text, new_text, key, path, new_sha, source)
    return new_text


def write_atomically(path: Path, new_text: str, expected_old: bytes) -> None:
    """Replace the file at path with new_text, unless it no longer holds expected_old."""
    # Write through a symlinked manifest instead of replacing the link with a file.
    target = Path(os.path.realpath(path))
    try:
        current = target.read_bytes()
        status = target.stat()
    except OSError as exc:
        raise ManifestError(str(path), f"cannot read the manifest: {exc.strerror}") from None
    if current != expected_old:
        raise ManifestError(
            str(path),
            "changed on disk since qola read it; nothing was written",
            "re-run the command",
        )
    # The temporary file is in the same folder so that os.replace is a rename, which is atomic.
    try:
        # A short name of its own: one built from the manifest's could pass NAME_MAX.
        fd, tmp = tempfile.mkstemp(prefix=".qola-edit-", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise ManifestError(str(path), f"cannot write the manifest: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(new_text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        # Root in a container editing a tree owned by the host user must not leave
        # a root-owned manifest behind; anyone else cannot chown and need not.
        with contextlib.suppress(OSError):
            os.chown(tmp, status.st_uid, status.st_gid)
        os.chmod(tmp, stat.S_IMODE(status.st_mode))
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise ManifestError(str(path), f"cannot write the manifest: {exc.strerror}") from None
        raise
    _fsync_folder(target.parent)


def _key_path(key: str, source: str) -> tuple[str, ...]:
    """The TOML path of a Dep.key."""
    # Split at the ends, not at every dot: the loader forbids dots in names today, but a
    # quoted key may hold one, and it must not turn into a different path here.
    deps, commit = "deps.", ".commit"
    if key.startswith(deps) and key.endswith(commit) and len(key) > len(deps + commit):
        return ("deps", key[len(deps) : -len(commit)], "commit")
    if key.startswith("qola.") and key.endswith("_commit") and len(key) > len("qola._commit"):
        return ("qola", key[len("qola.") :])
    raise ManifestError(
        source,
        f"{key}: not a pin qola can rewrite",
        "pins are deps.<name>.commit or qola.<name>_commit",
    )


def _locate(text: str, key: str, path: tuple[str, ...], source: str) -> StringValue:
    """The one string value at path; anything else is refused with the reason."""
    try:
        values = string_values(text)
    except ScanError as exc:
        _parse(text, source)  # a TOML error, if there is one, is the message the user needs
        raise ManifestError(source, f"{key}: cannot locate the pin ({exc})", _BUG_HINT) from None
    matches = [value for value in values if value.path == path]
    if len(matches) > 1:
        lines = ", ".join(str(_line(text, value.start)) for value in matches)
        raise ManifestError(
            source,
            f"{key}: set {len(matches)} times (lines {lines}); qola will not guess which to change",
            "keep one of them (a merge may have doubled it) and re-run",
        )
    if not matches:
        found = _lookup(_parse(text, source), path)
        if found is None:
            raise ManifestError(
                source,
                f"{key}: no such pin in the manifest",
                "re-run the command; the manifest may have changed since qola read it",
            )
        raise ManifestError(
            source,
            f"{key}: is {type(found).__name__} {found!r}, not a string",
            f'write the pin as a string: {path[-1]} = "<sha>"',
        )
    value = matches[0]
    if value.is_multiline:
        raise ManifestError(
            f"{source}:{_line(text, value.start)}",
            f"{key}: is a multi-line string, which qola does not rewrite",
            f'write the pin on one line: {path[-1]} = "<sha>"',
        )
    return value


def _check(
    old_text: str, new_text: str, key: str, path: tuple[str, ...], new_sha: str, source: str
) -> None:
    """Refuse an edit whose parse differs from the original in anything but the pin."""
    old = _parse(old_text, source)
    try:
        new = tomllib.loads(new_text)
        restored = _with_value(new, path, _lookup(old, path))
        # repr, not ==: it tells True from 1 and 1.0 from 1, and nan equals itself.
        same = repr(_lookup(new, path)) == repr(new_sha) and repr(restored) == repr(old)
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError):
        same = False
    if not same:
        raise ManifestError(
            source,
            f"{key}: the edit would change more than the pin; nothing was written",
            _BUG_HINT,
        )


def _parse(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(source, f"invalid TOML: {exc}") from None


def _lookup(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    found: Any = data
    for part in path:
        if not isinstance(found, dict) or part not in found:
            return None
        found = found[part]
    return found


def _with_value(data: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A copy of data with the value at path replaced (copying only the tables on the way)."""
    head, rest = path[0], path[1:]
    copy = dict(data)
    copy[head] = _with_value(data[head], rest, value) if rest else value
    return copy


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _fsync_folder(folder: Path) -> None:
    # Makes the rename itself durable.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
