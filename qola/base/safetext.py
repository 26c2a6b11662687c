"""Other people's text made safe for each kind of output qola writes.

Why, and one function per kind of output: docs/cli.md, "Other people's text in qola's
output"."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from qola.base.colour import STYLES

# C0 and C1 controls and DEL; the Unicode line and paragraph separators; the marks and
# overrides that reorder what a terminal shows (bidirectional text); lone surrogates
# (the bytes of a name that is not UTF-8), which no output encoding can carry.
CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f",
          "\r": "\\r"}  # fmt: skip
# The colour codes qola itself writes (qola/base/colour.py): the only escape sequences kept.
_CODES = "|".join(sorted({*STYLES.values(), "0"}, key=len, reverse=True))
_OWN_COLOUR = re.compile(rf"\x1b\[(?:{_CODES})m")
# GitHub Actions reads `::name ...::` at the start of a line (after blanks) and, in its
# older form, `##[name ...]` anywhere in one. A zero-width space breaks either.
_LINE_COMMAND = re.compile(r"^(\s*:):")
_INLINE_COMMAND = "##["
_ZERO_WIDTH = "\u200b"


def _escape(char: str) -> str:
    """One control character as git writes it in a quoted name: `\\n`, or octal bytes."""
    named = _NAMED.get(char)
    if named is not None:
        return named
    return "".join(f"\\{byte:03o}" for byte in char.encode("utf-8", "surrogateescape"))


def line(text: str) -> str:
    """text as part of one line: each control character shown as an escape."""
    return CONTROL.sub(lambda found: _escape(found.group()), text)


def path(name: str) -> str:
    """A file name from a repository as git quotes it in `git status`: in double quotes,
    with `\\`, `"` and control characters escaped, when it holds any of them; else as is.

    (Other non-ASCII characters stay readable, as with core.quotePath=false.)
    """
    if not (CONTROL.search(name) or '"' in name or "\\" in name):
        return name
    escaped = name.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{line(escaped)}"'


def shell_word(value: str) -> str:
    """value as one word of a shell command a user may paste: shlex's quoting, or bash's
    $'...' (with the escapes of `line`) when it holds a control character."""
    if not CONTROL.search(value):
        return shlex.quote(value)
    escaped = value.replace("\\", "\\\\").replace("'", "\\'")
    return f"$'{line(escaped)}'"


# A URL in a text: its scheme, and everything up to a blank, a quote or an angle bracket.
_URL = re.compile(r"""(?<![A-Za-z0-9+.%-])[A-Za-z][A-Za-z0-9+.-]*://[^\s'"<>`]+""")


def without_credentials(text: str) -> str:
    """text with every URL in it stripped of what would let its reader in (its user and
    password, its query; an ssh URL's password): a token in a manifest's URL, or in a
    remote's, must not reach a CI log. The rules: qola/base/urls.py. A URL with neither
    an '@' nor a '?' is left as it is, byte for byte."""
    from qola.base import urls  # lazy: only where a URL may be in the text

    if "@" not in text and "?" not in text:
        return text

    def stripped(found: re.Match[str]) -> str:
        url = found.group()
        return urls.scrubbed(url) if "@" in url or "?" in url else url

    return urls.scp_scrubbed(_URL.sub(stripped, text))


def for_log(text: str, commands: bool = False) -> str:
    """text as it may reach a terminal or a log: line breaks and qola's own colour codes
    kept, every other control character escaped, no line a CI runner reads as a
    command, and no URL's credentials. commands: the lines are GitHub workflow commands
    of qola's own (`verify --format github`), which keep their `::` (their data is
    escaped by their writer)."""
    text = without_credentials(text)
    pieces = []
    for piece in re.split(f"({_OWN_COLOUR.pattern})", text):
        if _OWN_COLOUR.fullmatch(piece):
            pieces.append(piece)
        else:
            pieces.append(CONTROL.sub(_escape_but_newline, piece))
    return "\n".join(_defused(each, commands) for each in "".join(pieces).split("\n"))


def _escape_but_newline(found: re.Match[str]) -> str:
    char = found.group()
    return char if char == "\n" else _escape(char)


def _defused(text: str, commands: bool) -> str:
    text = text.replace(_INLINE_COMMAND, "#" + _ZERO_WIDTH + "#[")
    if commands:
        return text
    return _LINE_COMMAND.sub(lambda found: found.group(1) + _ZERO_WIDTH + ":", text)


def json_document(document: Any) -> str:
    """The JSON text of document (indented, ASCII), with every `##[` inside its strings
    written `#\\u0023[`: the same document to a parser, no command to a CI runner."""
    text = json.dumps(document, indent=2)  # ASCII: every control character is escaped
    return without_credentials(text).replace(_INLINE_COMMAND, "#\\u0023[")
