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


# What says a file holds more than the license its header (or first line) names: another
# license's name, by the licenses whose own text may name it.
_OTHER_LICENSES: tuple[tuple[str, frozenset[str]], ...] = (
    (r"\b(?:a|l)?gpl\b", frozenset()),
    (r"gnu (?:affero |lesser |library )?general public license", frozenset({"MPL-2.0"})),
    (r"mozilla public license", frozenset({"MPL-2.0"})),
    (r"apache license", frozenset({"Apache-2.0"})),
    (r"\bmit license", frozenset({"MIT"})),
    (r"\bbsd[ -]?\d-clause", frozenset({"BSD-2-Clause", "BSD-3-Clause"})),
    (r"\bisc license", frozenset({"ISC"})),
    (r"boost software license", frozenset({"BSL-1.0"})),
    (r"eclipse public license|creative commons|common development and distribution license",
     frozenset()),
    (r"\bncsa\b|university of illinois|under different license terms", frozenset()),
    (r"public domain", frozenset({"Unlicense"})),
)
_EXCEPTION = re.compile(r"\bexceptions?\b")
# The LLVM exception appended to Apache-2.0's text (as LLVM and wasmtime ship it): SPDX's
# LLVM-exception.
_LLVM_EXCEPTION = re.compile(r"llvm exceptions? to the apache 2\.0 license")
# A clause the license does not have: the short licenses' texts grant without conditions
# of use (a "commercial" one is another license), BSD-2 has two clauses, BSD-3 three.
_NOT_IN = {
    "MIT": r"commercial",
    "ISC": r"commercial",
    "BSL-1.0": r"commercial",
    "BSD-2-Clause": r"commercial|advertising|^\s*[3-9][.)]",
    "BSD-3-Clause": r"commercial|advertising|^\s*[4-9][.)]",
}
# What may be an SPDX identifier named in the text (GPL-3.0-only, Zlib-acknowledgement):
# a hyphenated word, looked up in the license list (a bare word, Intel or JSON, may be a
# company's or a format's name in a copyright line).
_IDENTIFIER_SHAPED = re.compile(r"(?<![\w.+-])[A-Za-z][\w.+]*(?:-[\w.+]+)+")


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
            return _alone(identifier, "\n".join(lines[len(header):]), known)
    if lines:
        first = " ".join(text.strip().split("\n", 1)[0].split())
        by_case = {name.lower(): name for name in known}
        if first.lower() in by_case and " " not in first:
            return _alone(by_case[first.lower()], "\n".join(lines[1:]), known)
    return None


def _alone(identifier: str, rest: str, known: frozenset[str]) -> str | None:
    """identifier, when the rest of its file (lower-cased lines) holds nothing beyond that
    license: no other license named, no exception (but the LLVM exception after Apache-2.0,
    which SPDX names), no clause the license has not; else None (never a guess)."""
    for pattern, naming in _OTHER_LICENSES:
        if identifier not in naming and re.search(pattern, rest):
            return None
    extra = _NOT_IN.get(identifier)
    if extra is not None and re.search(extra, rest, re.M):
        return None
    others = {name.lower() for name in known} - {identifier.lower()}
    if any(token in others for token in _IDENTIFIER_SHAPED.findall(rest)):
        return None
    if _EXCEPTION.search(rest):
        if identifier == "Apache-2.0" and _LLVM_EXCEPTION.search(rest):
            return "Apache-2.0 WITH LLVM-exception"
        return None
    return identifier
