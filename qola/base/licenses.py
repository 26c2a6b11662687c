"""The license a repository's top-level license files declare, where they declare one
identifiably; else nothing. Never a guess from a text that resembles a license.

The rule, and why each part is there: docs/sbom.md, "Licenses"."""

from __future__ import annotations

import re
from collections.abc import Mapping

# LICENSE, LICENCE, COPYING, with any suffix: LICENSE.txt, LICENSE-MIT, COPYING.LESSER.
_LICENSE_FILE = re.compile(r"^(?:LICEN[CS]E|COPYING)(?:[.\-_].*)?$", re.I)
_IDENTIFIER = re.compile(r"SPDX-License-Identifier:[ \t]*(.*?)[ \t]*(?:\*/|-->)?[ \t]*$", re.M)
# A license file's header: its first non-blank lines, blanks squeezed, as the license's
# own text begins (the SPDX license list's), each naming one license and its version.
_HEADERS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("mit license",), "MIT"),
    (("the mit license",), "MIT"),
    (("the mit license (mit)",), "MIT"),
    (("apache license", "version 2.0, january 2004"), "Apache-2.0"),
    (("bsd 2-clause license",), "BSD-2-Clause"),
    (("bsd 3-clause license",), "BSD-3-Clause"),
    (("isc license",), "ISC"),
    (("boost software license - version 1.0 - august 17th, 2003",), "BSL-1.0"),
    (("mozilla public license version 2.0",), "MPL-2.0"),
    (("mozilla public license, version 2.0",), "MPL-2.0"),
    (("this is free and unencumbered software released into the public domain.",), "Unlicense"),
)


def is_license_file(name: str) -> bool:
    """A top-level file whose name says it holds the repository's license."""
    return bool(_LICENSE_FILE.match(name))


def declared(files: Mapping[str, str], known: frozenset[str] = frozenset()) -> str | None:
    """The license the license files (name: text) declare: one SPDX expression, or None
    when there is none, when one of them declares nothing identifiable, or when they
    disagree. known: the SPDX license identifiers, in any case; an identifier line naming
    none of them is not taken (the caller's license list validates expressions)."""
    found = set()
    for name in sorted(files):
        if not is_license_file(name):
            continue
        expression = in_text(files[name], known)
        if expression is None:
            return None
        found.add(expression)
    return found.pop() if len(found) == 1 else None


def in_text(text: str, known: frozenset[str] = frozenset()) -> str | None:
    """What one license file declares: its `SPDX-License-Identifier:` lines (all the same
    expression), else a header of the table, else a first line that is exactly an SPDX
    license identifier (of known); None otherwise."""
    text = text.replace("\r\n", "\n")
    identifiers = {" ".join(found.split()) for found in _IDENTIFIER.findall(text)}
    identifiers.discard("")
    if identifiers:
        return identifiers.pop() if len(identifiers) == 1 else None
    lines = [" ".join(line.split()).lower() for line in text.split("\n") if line.strip()]
    for header, identifier in _HEADERS:
        if tuple(lines[: len(header)]) == header:
            return identifier
    if lines:
        first = " ".join(text.strip().split("\n", 1)[0].split())
        by_case = {name.lower(): name for name in known}
        if first.lower() in by_case and " " not in first:
            return by_case[first.lower()]
    return None
