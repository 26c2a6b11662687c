"""Read git-config syntax (.gitmodules, .git/config) without running git."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    section: str  # lower-case
    subsection: str | None  # case-sensitive, as written
    key: str  # lower-case
    value: str


_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}


def parse(text: str) -> list[Entry]:
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
            entries.append(Entry(section, subsection, key, "true"))
            continue
        # A value may continue onto the next lines with a trailing backslash.
        while raw.rstrip("\r").endswith("\\") and not raw.endswith("\\\\") and i < len(lines):
            raw = raw.rstrip("\r")[:-1] + lines[i]
            i += 1
        entries.append(Entry(section, subsection, key, _parse_value(raw)))
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
