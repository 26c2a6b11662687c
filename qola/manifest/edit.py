"""Rewrite one pin in a manifest and write it back, every other byte left as it was.

Callers read the file as bytes and decode it as UTF-8 themselves (no newline
translation, so CRLF survives), pass the text through set_pin once per pin, and
hand the result to write_atomically together with the bytes they read.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from qola.base.errors import ManifestError
from qola.base.shas import is_full_sha
from qola.manifest.tomlscan import ScanError, StringValue, string_values
from qola.manifest.values import label_problem  # the loader's own rule

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


class LabelPlacementError(ManifestError):
    """A label the manifest's layout leaves no place for; the pin itself is fine."""


def set_label(text: str, key: str, tag: str | None, source: str = "manifest") -> str:
    """The manifest text with the label beside the pin at key (a Dep.key) set to tag, or
    removed (tag None), nothing else changed: `tag = "v1.2"` after `commit` in a [deps.NAME]
    table, `NAME_tag` after `NAME_commit` in [qola]."""
    pin = _key_path(key, source)
    label = _label_path(pin)
    where = ".".join(label)
    old = _parse(text, source)
    current = _lookup(old, label)
    if current == tag:
        return text
    if tag is not None and label_problem(tag):
        raise LabelPlacementError(source, f"{where}: {tag!r} cannot be a label "
                                  f"({label_problem(tag)})")  # fmt: skip
    if current is not None:
        value = _locate(text, where, label, source)
        if tag is not None:
            inner_start, inner_end = value.start + len(value.quote), value.end - len(value.quote)
            new_text = text[:inner_start] + tag + text[inner_end:]
        else:
            new_text = _without_line(text, value, where, source)
    else:
        assert tag is not None
        new_text = _with_label_after(text, _locate(text, key, pin, source), label, tag, source)
    _check(text, new_text, where, label, tag, source)
    return new_text


def _label_path(pin: tuple[str, ...]) -> tuple[str, ...]:
    if pin[0] == "deps":
        return (*pin[:-1], "tag")
    return ("qola", pin[-1].removesuffix("_commit") + "_tag")


# What stands before a value on its line when its key is alone there: indent, the dotted
# table part of the key, its last part, the `=`.
_KEY_BEFORE = re.compile(
    r"^([ \t]*)((?:[A-Za-z0-9_-]+[ \t]*\.[ \t]*)*)([A-Za-z0-9_-]+)([ \t]*=[ \t]*)$"
)


def _with_label_after(
    text: str, pin: StringValue, label: tuple[str, ...], tag: str, source: str
) -> str:
    """A new `tag = "…"` on the line after the pin's, written as the pin's own line is."""
    line_start = text.rfind("\n", 0, pin.start) + 1
    found = _KEY_BEFORE.match(text[line_start : pin.start])
    if found is None:
        after = text[pin.end :].lstrip(" \t")
        if after.startswith((",", "}")):  # an inline table: beside the pin, in it
            return f'{text[: pin.end]}, {label[-1]} = "{tag}"{text[pin.end :]}'
        where = ".".join(label)
        raise LabelPlacementError(source, f"{where}: no place to write it beside the pin",
                                  f'add {label[-1]} = "{tag}" below the pin')  # fmt: skip
    indent, dotted, _, equals = found.groups()
    line = f'{indent}{dotted}{label[-1]}{equals}"{tag}"'
    end = text.find("\n", pin.end)
    if end == -1:
        newline = "\r\n" if "\r\n" in text else "\n"
        return text + newline + line  # the file had no final newline: still none
    newline = "\r\n" if text[end - 1 : end] == "\r" else "\n"
    cut = end - 1 if newline == "\r\n" else end
    return text[:cut] + newline + line + text[cut:]


def _without_line(text: str, value: StringValue, where: str, source: str) -> str:
    """The text without the line that holds only the value's key, the value and a comment."""
    line_start = text.rfind("\n", 0, value.start) + 1
    end = text.find("\n", value.end)
    end = len(text) if end == -1 else end + 1
    rest = text[value.end : end].strip()
    if _KEY_BEFORE.match(text[line_start : value.start]) and (not rest or rest.startswith("#")):
        if end == len(text) and not text.endswith("\n") and line_start:  # the last line
            line_start -= 2 if text[line_start - 2 : line_start] == "\r\n" else 1
        return text[:line_start] + text[end:]
    # In an inline table, as qola writes it there: `, tag = "v1.0"` goes, or `tag = "v1.0", `
    # where it comes first. The edit is then checked like any other (it must change the
    # label alone), so a layout this misreads is refused, not written.
    key = where.rsplit(".", 1)[-1]
    before = re.search(rf",[ \t]*{key}[ \t]*=[ \t]*$", text[line_start : value.start])
    if before is not None:
        return text[: line_start + before.start()] + text[value.end :]
    first = re.search(rf"\{{[ \t]*({key}[ \t]*=[ \t]*)$", text[line_start : value.start])
    after = re.match(r"[ \t]*,[ \t]*", text[value.end :])
    if first is not None and after is not None:
        return text[: line_start + first.start(1)] + text[value.end + after.end() :]
    raise LabelPlacementError(source, f"{where}: it shares its line with other keys, so qola "
                              "cannot remove it alone", "remove it by hand")  # fmt: skip


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
    old_text: str, new_text: str, key: str, path: tuple[str, ...], new_sha: str | None,
    source: str,
) -> None:
    """Refuse an edit whose parse differs from the original in anything but the value at
    path (new_sha, or None: removed)."""
    old = _parse(old_text, source)
    try:
        new = tomllib.loads(new_text)
        restored = _with_value(new, path, _lookup(old, path))
        # repr, not ==: it tells True from 1 and 1.0 from 1, and nan equals itself.
        same = repr(_lookup(new, path)) == repr(new_sha) and _canon(restored) == _canon(old)
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError):
        same = False
    if not same:
        raise ManifestError(
            source,
            f"{key}: the edit would change more than the pin; nothing was written",
            _BUG_HINT,
        )


def _canon(data: Any) -> str:
    """data as text in which key order does not count (a removed and restored key moves)."""
    if isinstance(data, dict):
        return "{" + ", ".join(f"{k!r}: {_canon(data[k])}" for k in sorted(data)) + "}"
    if isinstance(data, list):
        return "[" + ", ".join(_canon(item) for item in data) + "]"
    return repr(data)


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
    """A copy of data with the value at path replaced, or removed where value is None
    (copying only the tables on the way)."""
    head, rest = path[0], path[1:]
    copy = dict(data)
    if rest:
        copy[head] = _with_value(data[head], rest, value)
    elif value is None:
        copy.pop(head, None)
    else:
        copy[head] = value
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
