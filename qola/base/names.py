"""Names: a dependency's as a variable (the NAME in QOLA_<NAME>_SHA and
QOLA_SOURCE_DIR_<NAME>), and a track's as a ref name git accepts.

One rule for every place that spells such a variable (the CMake results file,
the source-dir override the command line and the no-op read, the hints that
tell a user what to set). cmake/QoLA.cmake has the same rule in
`_qola_cmake_name`; a test runs both on the same names.
"""

from __future__ import annotations

import re

# Bytes, not characters: CMake's regular expressions work on the UTF-8 bytes of a
# string, so a name holding "é" becomes "__" in CMake; matching bytes here keeps the
# two rules equal for any name (the manifest allows only ASCII names anyway).
_NOT_IDENTIFIER = re.compile(rb"[^A-Za-z0-9_]")


def variable_name(name: str) -> str:
    """`my-lib` -> `MY_LIB`: upper case, every other byte `_` (as CMake's TOUPPER/REGEX)."""
    raw = _NOT_IDENTIFIER.sub(b"_", name.encode("utf-8", "surrogateescape"))
    return raw.decode("ascii").upper()


def override_variable(name: str) -> str:
    """The variable that points a dependency at a local folder: QOLA_SOURCE_DIR_<NAME>."""
    return "QOLA_SOURCE_DIR_" + variable_name(name)


_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")


def ref_name_problem(name: str) -> str | None:
    """Why name is no ref name (git check-ref-format), or may mean more in a refspec."""
    found = _REF_FORBIDDEN.search(name)
    if found:
        return f"it holds {found.group()!r}"
    if name.startswith("+"):
        return "a leading '+' forces a fetch"
    for rule, why in (
        ("..", "it holds '..'"),
        ("@{", "it holds '@{'"),
        ("//", "it holds '//'"),
    ):
        if rule in name:
            return why
    if name == "@":
        return "'@' alone names HEAD"
    if name.startswith("/") or name.endswith("/"):
        return "it starts or ends with '/'"
    if name.endswith("."):
        return "it ends with '.'"
    for part in name.split("/"):
        if part.startswith("."):
            return f"its part {part!r} starts with '.'"
        if part.endswith(".lock"):
            return f"its part {part!r} ends with '.lock'"
    return None
