"""Read git-config syntax (.gitmodules, .git/config) without running git."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

MAX_INCLUDE_DEPTH = 10  # git's own limit (config.c); deeper, git stops with an error
_MAX_SIZE = 64 << 20  # a config file larger than this is not one to read in full


@dataclass(frozen=True)
class Entry:
    section: str  # lower-case
    subsection: str | None  # case-sensitive, as written
    key: str  # lower-case
    value: str
    origin: str = ""  # the file it was read from, when read from one

    @property
    def name(self) -> str:
        """The key as git spells it on the command line: section[.subsection].key."""
        middle = f".{self.subsection}" if self.subsection is not None else ""
        return f"{self.section}{middle}.{self.key}"


class UnreadableConfig(Exception):
    """A config file that exists but cannot be read as one (a FIFO, a folder, too large)."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why


def read(path: str, home: str | None, files: list[str]) -> list[Entry]:
    """The entries of a config file, each `include.path` and `includeIf.*.path` read in its
    place (whatever the condition: what a file could include counts); every file looked at
    (read or missing) is added to files. A missing file has no entries."""
    return _read(path, home, files, 0)


def _read(path: str, home: str | None, files: list[str], depth: int) -> list[Entry]:
    files.append(path)
    text = read_text(path)
    if text is None:
        return []
    entries: list[Entry] = []
    for entry in parse(text, origin=path):
        entries.append(entry)
        is_include = entry.key == "path" and entry.section in ("include", "includeif")
        if is_include and entry.value and depth < MAX_INCLUDE_DEPTH:
            included = _include_path(entry.value, path, home)
            if included is not None:
                entries.extend(_read(included, home, files, depth + 1))
    return entries


def _include_path(value: str, including: str, home: str | None) -> str | None:
    """Where an include points, as git's handle_path_include() resolves it."""
    if value == "~" or value.startswith("~/"):
        if not home:
            return None
        value = home + value[1:]
    elif value.startswith("~"):
        return None  # ~user: another user's home, which git looks up; not followed here
    return value if os.path.isabs(value) else os.path.join(os.path.dirname(including), value)


def read_text(path: str) -> str | None:
    """A config file's text; None when there is none. Never waits on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    except OSError as error:
        raise UnreadableConfig(path, error.strerror or str(error)) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableConfig(path, "not a regular file")
        if info.st_size > _MAX_SIZE:
            raise UnreadableConfig(path, f"{info.st_size} bytes: too large to be a config")
        return handle.read().decode("utf-8", errors="replace")


_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}


def parse(text: str, origin: str = "") -> list[Entry]:
    """Parse git-config text; lines git itself would reject are skipped."""
    entries: list[Entry] = []
    section: str | None = None
    subsection: str | None = None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            end = _header_end(line)
            if end < 0:
                section = None
                continue
            section, subsection = _parse_header(line[1:end])
            line = line[end + 1 :].strip()
            if not line or line[0] in "#;":
                continue
        if section is None:
            continue
        key, sep, raw = line.partition("=")
        key = key.strip().lower()
        if not key:
            continue
        if not sep:
            entries.append(Entry(section, subsection, key, "true", origin))
            continue
        # A value may continue onto the next lines with a trailing backslash.
        while raw.rstrip("\r").endswith("\\") and not raw.endswith("\\\\") and i < len(lines):
            raw = raw.rstrip("\r")[:-1] + lines[i]
            i += 1
        entries.append(Entry(section, subsection, key, _parse_value(raw), origin))
    return entries


def _header_end(line: str) -> int:
    in_quotes = False
    escaped = False
    for pos, ch in enumerate(line):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            in_quotes = not in_quotes
        elif ch == "]" and not in_quotes:
            return pos
    return -1


def _parse_header(inner: str) -> tuple[str, str | None]:
    name, _, rest = inner.partition(" ")
    rest = rest.strip()
    if rest.startswith('"') and rest.endswith('"') and len(rest) >= 2:
        sub = rest[1:-1]
        out: list[str] = []
        escaped = False
        for ch in sub:
            if escaped:
                out.append(ch)
                escaped = False
            elif ch == "\\":
                escaped = True
            else:
                out.append(ch)
        return name.lower(), "".join(out)
    if "." in name:  # the deprecated [section.subsection] form
        sec, _, sub = name.partition(".")
        return sec.lower(), sub.lower()
    return name.lower(), None


def _parse_value(raw: str) -> str:
    if not any(ch in raw for ch in '"\\#;'):
        return raw.strip()  # the common case: nothing to unquote, unescape or cut off
    out: list[str] = []
    in_quotes = False
    pending_space = ""
    pos = 0
    raw = raw.strip()
    while pos < len(raw):
        ch = raw[pos]
        pos += 1
        if ch == "\\" and pos < len(raw):
            out.append(pending_space + _ESCAPES.get(raw[pos], raw[pos]))
            pending_space = ""
            pos += 1
        elif ch == '"':
            in_quotes = not in_quotes
        elif ch in "#;" and not in_quotes:
            break
        elif ch.isspace() and not in_quotes:
            pending_space += ch
        else:
            out.append(pending_space + ch)
            pending_space = ""
    return "".join(out)


@dataclass(frozen=True)
class Submodule:
    """One `[submodule "name"]` of a .gitmodules file."""

    name: str
    path: str
    url: str | None
    update: str | None


def submodules(text: str) -> list[Submodule]:
    """The submodules declared in .gitmodules text, in file order."""
    found: dict[str, dict[str, str]] = {}
    for entry in parse(text):
        if entry.section == "submodule" and entry.subsection is not None:
            found.setdefault(entry.subsection, {})[entry.key] = entry.value
    return [
        Submodule(name, keys["path"].rstrip("/"), keys.get("url"), keys.get("update"))
        for name, keys in found.items()
        if keys.get("path")
    ]


def get(entries: list[Entry], section: str, subsection: str | None, key: str) -> str | None:
    """The last value of section.subsection.key, as git would answer."""
    value = None
    for entry in entries:
        if entry.section == section and entry.subsection == subsection and entry.key == key:
            value = entry.value
    return value
