"""git-config syntax as git 2.39 reads it: a Python reading that is exact or says it is unsure.

`parse_exact` gives up (None) on anything it does not read exactly as git does; nothing
that decides what git will run is read here (docs/development.md, "Reading config
syntax in Python").
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Callable, Iterator
from typing import NamedTuple

_MAX_SIZE = 64 << 20  # a config file larger than this is not one to read in full
_BOM = b"\xef\xbb\xbf"
# Bytes the port does not read: controls other than tab and line feed (git keeps a NUL in
# a value as the end of a C string), and a carriage return that does not end a line.
_UNSURE = rb"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]|\r(?!\n)"  # compiled when first used
# A line read whole (git_parse_source, as the port would read it character by character):
# blank or a comment; a header (a plain subsection) with nothing but a comment after it; a
# key with a value holding no quote, escape or comment. Compiled when first used.
_PLAIN_LINE = (
    r'[ \t]*(?:\[([A-Za-z0-9.-]+)(?:[ \t]+"([^"\\\n]*)")?\][ \t]*(?:[#;][^\n]*)?'
    r"|([A-Za-z][A-Za-z0-9-]*)[ \t]*"
    r"|([A-Za-z][A-Za-z0-9-]*)[ \t]*=[ \t]*([^\"\\#;\n]*)(?:[#;][^\n]*)?"
    r"|[#;][^\n]*)?\n"
)
_ALPHA = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_KEYCHAR = _ALPHA | frozenset("0123456789-")  # git's iskeychar(): ASCII only
_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "\\": "\\", '"': '"'}


class Entry(NamedTuple):
    section: str  # lower-case
    subsection: str | None  # case-sensitive, as written
    key: str  # lower-case
    value: str | None  # None: the key stands alone (no `=`), which reads as true
    origin: str = ""  # the file it was read from, when read from one
    scope: str = ""  # git's scope (local, worktree, global ...), when git listed it

    @property
    def name(self) -> str:
        """The key as git spells it on the command line: section[.subsection].key."""
        middle = f".{self.subsection}" if self.subsection is not None else ""
        return f"{self.section}{middle}.{self.key}"

    @property
    def text(self) -> str:
        """The value, "" for a key without one."""
        return self.value or ""


class UnreadableConfig(Exception):
    """A config that cannot be read as one: a FIFO, a folder, too large, or text git rejects."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why


def entry_of(name: str, value: str | None, origin: str = "", scope: str = "") -> Entry:
    """An Entry from a full key name as git lists it (section.subsection.key)."""
    section, _, rest = name.partition(".")
    middle, dot, key = rest.rpartition(".")
    return Entry(section, middle if dot else None, key, value, origin, scope)


def parse_exact(data: bytes) -> list[Entry] | None:
    """The entries of config bytes exactly as git reads them (includes not followed), or
    None where this port is not sure it reads them as git does."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]  # git skips a UTF-8 byte order mark at the start
    if re.search(_UNSURE, data):
        return None
    return _Port(data.replace(b"\r\n", b"\n").decode("utf-8", "surrogateescape")).run()


class _Port:
    """git's parser over text with one kind of line end, character by character."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def next(self) -> str:
        """The next character; "\\n" at the end, as git's get_next_char() returns."""
        if self.pos >= len(self.text):
            self.pos = len(self.text) + 1
            return "\n"
        self.pos += 1
        return self.text[self.pos - 1]

    @property
    def eof(self) -> bool:
        return self.pos > len(self.text)

    def run(self) -> list[Entry] | None:
        entries: list[Entry] = []
        stem: str | None = None
        text = self.text
        while True:
            # A whole line of the usual kinds at once (what git reads of it is plain); any
            # other, or a line this starts within, character by character as git does.
            if self.pos == 0 or text[self.pos - 1 : self.pos] == "\n":
                line = re.compile(_PLAIN_LINE).match(text, self.pos)
                if line is not None:
                    self.pos = line.end()
                    name, sub, alone, key, value = line.groups()
                    if name is not None:
                        stem = name.lower() + ("" if sub is None else f".{sub}")
                    elif alone is not None or key is not None:
                        if stem is None:
                            return None  # a key outside any section
                        # git turns each blank inside a value into a space, drops the ends.
                        found = None if key is None else value.rstrip(" \t").replace("\t", " ")
                        entries.append(entry_of(f"{stem}.{(key or alone).lower()}", found))
                    continue
            c = self.next()
            if self.eof:
                return entries
            if c in " \t\n":
                continue
            if c in "#;":
                while self.next() != "\n":
                    pass
                continue
            if c == "[":
                stem = self.header()
                if stem is None:
                    return None
                continue
            if c not in _ALPHA or stem is None:
                return None  # git rejects the line, or a key outside any section
            entry = self.variable(stem, c)
            if entry is None:
                return None
            entries.append(entry)

    def header(self) -> str | None:
        """The section (and subsection) after `[`, as git joins them; None: not read."""
        name: list[str] = []
        while True:
            c = self.next()
            if self.eof or c == "\n":
                return None
            if c == "]":
                return "".join(name) or None
            if c in " \t":
                return self.subsection("".join(name))
            if c not in _KEYCHAR and c != ".":
                return None
            name.append(c.lower())

    def subsection(self, name: str) -> str | None:
        c = self.next()
        while c in " \t":
            c = self.next()
        if c != '"' or not name:
            return None
        out: list[str] = []
        while True:
            c = self.next()
            if c == "\n":
                return None
            if c == '"':
                break
            if c == "\\":
                c = self.next()
                if c == "\n":
                    return None
            out.append(c)
        return f"{name}.{''.join(out)}" if self.next() == "]" else None

    def variable(self, stem: str, first: str) -> Entry | None:
        key = [first.lower()]
        c = self.next()
        while not self.eof and c in _KEYCHAR:
            key.append(c.lower())
            c = self.next()
        while c in " \t":
            c = self.next()
        value = None
        if c != "\n":
            if c != "=":
                return None
            value = self.value()
            if value is None:
                return None
        return entry_of(f"{stem}.{''.join(key)}", value)

    def value(self) -> str | None:
        out: list[str] = []
        length = 0
        quote = comment = False
        space = 0
        while True:
            c = self.next()
            if c == "\n":
                return None if quote else "".join(out)
            if comment:
                continue
            if c in " \t" and not quote:
                space += 1 if length else 0
                continue
            if not quote and c in ";#":
                comment = True
                continue
            if space:
                out.append(" " * space)
                length += space
                space = 0
            if c == "\\":
                c = self.next()
                if c == "\n":
                    if self.eof:
                        return None  # a backslash ending the file: not read here
                    continue  # a value continued on the next line
                if c not in _ESCAPES:
                    return None  # git rejects the line
                out.append(_ESCAPES[c])
                length += 1
                continue
            if c == '"':
                quote = not quote
                continue
            out.append(c)
            length += 1


def has_include(entries: list[Entry]) -> bool:
    """True when the entries name another file to read (include.path, includeIf.*.path)."""
    return any(e.key == "path" and e.section in ("include", "includeif") for e in entries)


def parse_listing(data: bytes, with_scope_and_origin: bool) -> list[Entry]:
    """The entries of `git config --list -z` output (with --show-scope --show-origin)."""
    fields = data.decode("utf-8", "surrogateescape").split("\0")
    if fields and fields[-1] == "":
        fields.pop()
    step = 3 if with_scope_and_origin else 1
    entries = []
    for i in range(0, len(fields) - step + 1, step):
        scope, origin = (fields[i], fields[i + 1]) if step == 3 else ("", "")
        name, newline, value = fields[i + step - 1].partition("\n")
        origin = origin[len("file:") :] if origin.startswith("file:") else origin
        entries.append(entry_of(name, value if newline else None, origin, scope))
    return entries


# How git reads config text where the port is unsure: (bytes, the file's path or None,
# follow includes) -> entries, or UnreadableConfig when git rejects it. Installed by
# qola/gitrun/git.py when it is imported; the no-op path, which runs no git, holds it back.
GitReader = Callable[[bytes, "str | None", bool], list[Entry]]
_GIT: GitReader | None = None
_HELD_BACK = 0


def use_git(reader: GitReader) -> None:
    """Let entries() ask git (what qola/gitrun/git.py installs)."""
    global _GIT
    _GIT = reader


@contextlib.contextmanager
def without_git() -> Iterator[None]:
    """Meanwhile entries() never runs git: it answers None where it would need to."""
    global _HELD_BACK
    _HELD_BACK += 1
    try:
        yield
    finally:
        _HELD_BACK -= 1


def entries(data: bytes, path: str | None = None, includes: bool = False) -> list[Entry] | None:
    """git's reading of config bytes (read from the file at path, if any), includes
    followed when includes is true: from the port where it is sure, else from git; None
    when it would take git and git may not run here. Raises UnreadableConfig where git
    rejects the text."""
    found = parse_exact(data)
    if found is not None and not (includes and has_include(found)):
        return found
    if _GIT is None or _HELD_BACK:
        return None
    return _GIT(data, path, includes)


def read_bytes(path: str) -> bytes | None:
    """A config file's bytes; None when there is none. Never waits on a FIFO."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise UnreadableConfig(path, error.strerror or str(error)) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableConfig(path, "not a regular file")
        if info.st_size > _MAX_SIZE:
            raise UnreadableConfig(path, f"{info.st_size} bytes: too large to be a config")
        return handle.read()


class Submodule(NamedTuple):
    """One `[submodule "name"]` of a .gitmodules file."""

    name: str
    path: str
    url: str | None
    update: str | None


def submodules(data: str | bytes) -> list[Submodule] | None:
    """The submodules declared in .gitmodules text, in file order (None: unreadable here,
    or git rejects it)."""
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    try:
        found = entries(raw)
    except UnreadableConfig:
        return None
    return None if found is None else submodules_of(found)


def submodules_of(found: list[Entry]) -> list[Submodule]:
    """The submodules that config entries (of a .gitmodules) declare."""
    keys: dict[str, dict[str, str]] = {}
    for entry in found:
        if entry.section == "submodule" and entry.subsection is not None:
            keys.setdefault(entry.subsection, {})[entry.key] = entry.text
    return [
        Submodule(name, values["path"].rstrip("/"), values.get("url"), values.get("update"))
        for name, values in keys.items()
        if values.get("path")
    ]


def get(found: list[Entry], section: str, subsection: str | None, key: str) -> str | None:
    """The last value of section.subsection.key, as git would answer ("true" for a key
    without `=`; None when it is not set)."""
    value = None
    for entry in found:
        if entry.section == section and entry.subsection == subsection and entry.key == key:
            value = "true" if entry.value is None else entry.value
    return value
