"""Find where each string value of a TOML document stands in its text, for located edits."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
# A scalar that is not a string (number, boolean, date-time) ends at one of these; a
# date-time may hold a space, so whitespace alone does not end it.
_SCALAR_END = re.compile(r"[,\]}#\r\n]")


@dataclass(frozen=True)
class StringValue:
    """A string value: its key path, its span in the text (quotes included) and its kind."""

    path: tuple[str | int, ...]  # an int stands for an element of an array of tables
    start: int
    end: int
    quote: str  # the opening delimiter: " or ' (one line), """ or ''' (multi-line)

    @property
    def is_multiline(self) -> bool:
        return len(self.quote) == 3


class ScanError(Exception):
    """The text is not TOML this scanner understands (the caller asks tomllib why)."""


def string_values(text: str) -> list[StringValue]:
    """Every string value that belongs to a key, with its full key path, in document order."""
    return _Scanner(text).scan()


class _Scanner:
    """A small TOML 1.0 reader that keeps positions; it trusts tomllib to judge validity."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.found: list[StringValue] = []
        # Arrays of tables seen so far, by resolved path, with the index of their last element.
        self.arrays: dict[tuple[str | int, ...], int] = {}

    def scan(self) -> list[StringValue]:
        table: tuple[str | int, ...] = ()
        while self.pos < len(self.text):
            self._skip_blank()
            char = self._peek()
            if char == "[":
                table = self._header()
            elif char not in ("", "\r", "\n"):
                key = self._key()
                self._expect("=")
                self._value(table + key)
            self._skip_blank()
            self._end_of_line()
        return self.found

    def _header(self) -> tuple[str | int, ...]:
        if self.text.startswith("[[", self.pos):
            self.pos += 2
            key = self._key()
            self._expect("]]")
            path = (*self._resolve(key[:-1]), key[-1])
            self.arrays[path] = self.arrays.get(path, -1) + 1
            return (*path, self.arrays[path])
        self.pos += 1
        key = self._key()
        self._expect("]")
        return self._resolve(key)

    def _resolve(self, key: tuple[str, ...]) -> tuple[str | int, ...]:
        """The path of a table header, with the element index after each array of tables."""
        path: list[str | int] = []
        for part in key:
            path.append(part)
            index = self.arrays.get(tuple(path))
            if index is not None:
                path.append(index)
        return tuple(path)

    def _key(self) -> tuple[str, ...]:
        parts = []
        while True:
            self._skip_spaces()
            parts.append(self._simple_key())
            self._skip_spaces()
            if self._peek() != ".":
                return tuple(parts)
            self.pos += 1

    def _simple_key(self) -> str:
        char = self._peek()
        if char in ('"', "'"):
            start = self.pos
            self._string(char)
            # Let tomllib undo the escapes of a quoted key, rather than a second decoder here.
            return str(tomllib.loads("k = " + self.text[start : self.pos])["k"])
        match = _BARE_KEY.match(self.text, self.pos)
        if not match:
            raise ScanError(f"expected a key at offset {self.pos}")
        self.pos = match.end()
        return match.group()

    def _value(self, path: tuple[str | int, ...] | None) -> None:
        """Skip one value; record it when it is a string with a key path."""
        self._skip_spaces()
        char = self._peek()
        if char in ('"', "'"):
            start = self.pos
            quote = char * 3 if self.text.startswith(char * 3, self.pos) else char
            self._string(quote)
            if path is not None:
                self.found.append(StringValue(path, start, self.pos, quote))
        elif char == "[":
            self._array()
        elif char == "{":
            self._inline_table(path)
        else:
            match = _SCALAR_END.search(self.text, self.pos)
            end = match.start() if match else len(self.text)
            if end == self.pos:
                raise ScanError(f"expected a value at offset {self.pos}")
            self.pos = end

    def _string(self, quote: str) -> None:
        """Move past a string that starts at pos with the given delimiter."""
        escapes = quote[0] == '"'
        self.pos += len(quote)
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if escapes and char == "\\":
                self.pos += 2
            elif self.text.startswith(quote, self.pos):
                if len(quote) == 3:
                    # Up to two quotes may stand just before the closing delimiter.
                    while self.text.startswith(quote + quote[0], self.pos):
                        self.pos += 1
                self.pos += len(quote)
                return
            elif len(quote) == 1 and char in "\r\n":
                break
            else:
                self.pos += 1
        raise ScanError("unterminated string")

    def _array(self) -> None:
        # Strings in arrays are never pins, so nothing inside is recorded.
        self.pos += 1
        while True:
            self._skip_blank(newlines=True)
            if self._peek() == "]":
                self.pos += 1
                return
            self._value(None)
            self._skip_blank(newlines=True)
            if self._peek() == ",":
                self.pos += 1
            elif self._peek() != "]":
                raise ScanError(f"expected ',' or ']' at offset {self.pos}")

    def _inline_table(self, path: tuple[str | int, ...] | None) -> None:
        self.pos += 1
        self._skip_spaces()
        if self._peek() == "}":
            self.pos += 1
            return
        while True:
            key = self._key()
            self._expect("=")
            self._value(None if path is None else path + key)
            self._skip_spaces()
            char = self._peek()
            self.pos += 1
            if char == "}":
                return
            if char != ",":
                raise ScanError(f"expected ',' or '}}' at offset {self.pos - 1}")

    def _expect(self, token: str) -> None:
        self._skip_spaces()
        if not self.text.startswith(token, self.pos):
            raise ScanError(f"expected {token!r} at offset {self.pos}")
        self.pos += len(token)

    def _peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def _skip_spaces(self) -> None:
        while self._peek() in (" ", "\t"):
            self.pos += 1

    def _skip_blank(self, newlines: bool = False) -> None:
        """Skip spaces and a comment (and newlines, inside an array)."""
        while True:
            self._skip_spaces()
            char = self._peek()
            if char == "#":
                newline = self.text.find("\n", self.pos)
                self.pos = len(self.text) if newline < 0 else newline
            elif newlines and char in ("\r", "\n"):
                self.pos += 1
            else:
                return

    def _end_of_line(self) -> None:
        if self.text.startswith("\r\n", self.pos):
            self.pos += 2
        elif self._peek() == "\n":
            self.pos += 1
        elif self.pos < len(self.text):
            raise ScanError(f"expected the end of the line at offset {self.pos}")
