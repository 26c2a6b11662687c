"""The TOML scanner under the editor, checked against tomllib on generated documents."""

from __future__ import annotations

import sys
from typing import Any

import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from qola.manifest.edit import set_pin
from qola.manifest.tomlscan import string_values

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

OLD = "d32b0cb62ecc32bb1a858e8437d58eb9b3856af6"
NEW = "9f1e2aa67f8c26740d2ff3b29471ccba68637198"

# Keys and strings full of what trips a hand-written reader: quotes, escapes, brackets,
# `#`, `=`, dots, newlines, non-ASCII.
_CHARS = st.sampled_from(list("ab_-.1 \"'\\[]{}#=,\n\t\u00e9\u20ac\U0001f600"))
_TEXT = st.text(_CHARS, max_size=8)
_SCALAR = st.one_of(_TEXT, st.integers(), st.booleans(), st.floats(allow_nan=False))
_VALUE = st.recursive(
    _SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3)),
    max_leaves=12,
)
_DOCUMENT = st.dictionaries(_TEXT, _VALUE, max_size=5)
# No deadline: these machines are shared and noisy, and speed is never asserted in tests.
_SETTINGS = settings(deadline=None)


def _lookup(data: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def _dict_strings(data: dict[str, Any], prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """The paths of string values reachable through tables only (where pins live)."""
    found = set()
    for key, value in data.items():
        if isinstance(value, str):
            found.add((*prefix, key))
        elif isinstance(value, dict):
            found |= _dict_strings(value, (*prefix, key))
    return found


def test_string_values_in_a_hand_written_document() -> None:
    text = r'''# top
title = "x" # c
[qola]
namespace = 'te'   # ns
rocm_versions = [ "6.2", # ]
  '6.3' ,
]
notes = """a
b"""""
[ deps . "ck.tile" ]
when = 1979-05-27 07:32:00Z
x = { y = "z\"}", w = { v = 'u' }, arr = ["{", "}"] }
[[modules]]
name = "m1"
[modules.sub]
k = "v"
[[modules]]
name = "m2"
[deps]
aiter.commit = "q"
'''
    assert tomllib.loads(text)  # the document is valid TOML
    assert [(v.path, text[v.start : v.end]) for v in string_values(text)] == [
        (("title",), '"x"'),
        (("qola", "namespace"), "'te'"),
        (("qola", "notes"), '"""a\nb"""""'),
        (("deps", "ck.tile", "x", "y"), r'"z\"}"'),
        (("deps", "ck.tile", "x", "w", "v"), "'u'"),
        (("modules", 0, "name"), '"m1"'),
        (("modules", 0, "sub", "k"), '"v"'),
        (("modules", 1, "name"), '"m2"'),
        (("deps", "aiter", "commit"), '"q"'),
    ]


@_SETTINGS
@given(_DOCUMENT, st.booleans())
def test_string_values_match_tomllib(data: dict[str, Any], multiline: bool) -> None:
    text = tomli_w.dumps(data, multiline_strings=multiline)
    values = string_values(text)
    for value in values:
        span = text[value.start : value.end]
        assert tomllib.loads("k = " + span)["k"] == _lookup(data, value.path)
    found = {value.path for value in values if all(isinstance(p, str) for p in value.path)}
    assert _dict_strings(data) <= found


@_SETTINGS
@given(_DOCUMENT, _TEXT.filter(bool), st.booleans())
def test_set_pin_changes_only_the_pin(extra: dict[str, Any], name: str, literal: bool) -> None:
    # Unusable names are the loader's business; the editor must cope with any key.
    data = {**extra, "deps": {name: {"commit": OLD}, "other": {"commit": OLD}}}
    text = tomli_w.dumps(data)
    if literal:
        text = text.replace(f'"{OLD}"', f"'{OLD}'")
    new_text = set_pin(text, f"deps.{name}.commit", NEW)
    assert len(new_text) == len(text)
    assert sum(a != b for a, b in zip(text, new_text, strict=True)) <= len(NEW)
    expected = {**extra, "deps": {name: {"commit": NEW}, "other": {"commit": OLD}}}
    if name == "other":
        expected["deps"] = {"other": {"commit": NEW}}
    assert tomllib.loads(new_text) == expected
