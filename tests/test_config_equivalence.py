"""qola's own reading of config text agrees with git's `config --list`, or says it is unsure.

Generated configs (hypothesis: headers with spaces, tabs and odd subsections, comments
and values ending in backslashes, escapes, quotes, continuation lines, includes with `~`
and relative paths, byte order marks, line ends, raw bytes) are read by git and by each
Python reader that remains (the no-op's: gitconfig.parse_exact, the no-op's view of a
repository's core and extensions settings, the include-following entries()): each
either answers exactly what git does, or answers nothing (the slow path then asks git).
It is never confidently wrong.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from qola.repo import configfile, setup_config

_SETTINGS = settings(max_examples=500, derandomize=True, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])  # fmt: skip

# Mostly what git writes and people type; now and then what only git reads exactly.
_WS = st.sampled_from([b"", b" ", b"\t", b"  ", b" \t"] * 4 + [b"\r", b"\v", b"\x0c"])
_NAMES = st.sampled_from([b"core", b"Core", b"filter", b"extensions", b"a.b", b"x-y", b"a.B.c",
                          b"", b"a_b", b"remote", b"include", b"includeIf"])  # fmt: skip
_SUB_CHARS = st.sampled_from([b"a", b"Z", b" ", b"\t", b"\\", b'\\"', b"\\\\", b"\\x", b"]",
                              b"[", b".", b"#", b";", b"=", "\u2028".encode(), b"\xff"] * 3
                             + [b"\x1c", b"\v", b"\x00", b"\r"])  # fmt: skip
_VALUE_CHARS = st.sampled_from([b"a", b"1", b" ", b"  ", b"\t", b'"', b"\\", b"\\n", b"\\t",
                                b"\\b", b"\\q", b'\\"', b"\\\\", b";", b"#", b"=",
                                "\u2028".encode(), "\u00e9".encode(), b"\xff", b"true",
                                b"/tmp/x", b"~"] * 2 + [b"\x1c", b"\x7f"])  # fmt: skip
_KEYS = st.sampled_from([b"bare", b"worktree", b"repositoryFormatVersion", b"clean", b"path",
                         b"objectformat", b"x-1", b"k", b"1k", b"-k", b"k_", b"K"])  # fmt: skip


@st.composite
def _line(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["header", "variable", "variable", "comment", "blank",
                                 "include", "raw"]))  # fmt: skip
    ws = draw(_WS)
    if kind == "header":
        name = draw(_NAMES)
        body = b"[" + name
        if draw(st.booleans()):
            sub = b"".join(draw(st.lists(_SUB_CHARS, max_size=5)))
            body += draw(st.sampled_from([b" ", b"\t", b"  ", b"\v", b""])) + b'"' + sub + b'"'
        body += draw(st.sampled_from([b"]", b"] ", b"]#c", b"] k = v", b""]))
        return ws + body
    if kind == "variable":
        key = draw(_KEYS)
        if draw(st.booleans()):
            return ws + key + draw(_WS) + draw(st.sampled_from([b"", b"", b"# c", b";"]))
        value = b"".join(draw(st.lists(_VALUE_CHARS, max_size=6)))
        tail = draw(st.sampled_from([b"", b" ", b"\\", b" ;\\", b" # c \\", b'"']))
        return ws + key + draw(_WS) + b"=" + draw(_WS) + value + tail
    if kind == "comment":
        text = b"".join(draw(st.lists(_VALUE_CHARS, max_size=4)))
        return ws + draw(st.sampled_from([b"#", b";"])) + text
    if kind == "include":
        target = draw(st.sampled_from([b"~/inc", b"inc", b"sub/inc", b"~root/../inc",
                                       b"/nonexistent/inc", b"~nobody-qola/inc"]))  # fmt: skip
        section = draw(st.sampled_from([b"[include]", b'[includeIf "gitdir:/"]',
                                        b'[includeIf "onbranch:main"]']))  # fmt: skip
        return section + b"\n\tpath = " + target
    if kind == "raw":
        return draw(st.binary(max_size=8))
    return ws


@st.composite
def configs(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(_line(), max_size=8))
    if draw(st.integers(0, 3)):  # mostly a config that starts with a section, as most do
        first = draw(st.sampled_from([b"core", b'filter "x"', b'a\t"b"']))
        lines.insert(0, b"[" + first + b"]")
    end = draw(st.sampled_from([b"\n", b"\r\n"]))
    text = end.join(lines) + draw(st.sampled_from([end, b""]))
    return (b"\xef\xbb\xbf" if draw(st.integers(0, 3)) == 0 else b"") + text


@st.composite
def _plausible(draw: st.DrawFn) -> bytes:
    """Sections of `key = value` lines, each part now and then odd: what git mostly accepts."""
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        sub = b"".join(draw(st.lists(_SUB_CHARS, max_size=4)))
        header = draw(st.sampled_from([b"[core]", b'[filter "' + sub + b'"]',
                                       b'[filter\t"' + sub + b'"]', b"[a.B]"]))  # fmt: skip
        parts.append(draw(_WS) + header)
        for _ in range(draw(st.integers(0, 3))):
            value = b"".join(draw(st.lists(_VALUE_CHARS, max_size=5)))
            tail = draw(st.sampled_from([b"", b"", b" ", b" ;\\", b" # c", b"\\"]))
            parts.append(draw(_WS) + draw(_KEYS) + draw(_WS) + b"=" + draw(_WS) + value + tail)
    return b"\n".join(parts) + b"\n"


_ANY = st.one_of(configs(), _plausible())
# The variants the issue found, and their neighbours, always among the examples.
_KNOWN = [b'[filter\t"pwn"]\n\tclean = x\n', b'[x]\n\ty = a ;\\\n\tclean = b\n',
          b'[filter "p\xffwn"]\n\tclean = x\n', b'\xef\xbb\xbf[core]\n\tbare = true\n',
          b'[a "x\x1cy"]\nk = 1\n', '[a "x\u2028y"]\nk = 1\n'.encode(), b'[a "x\vy"]\nk=1\n',
          b'[a "b\\"c\\x"]\nk = v\n', b"[a]\nk = v \\\n w\n", b"[a]\nk = a\tb  c \n",
          b'[a]\nk = " x " y\n', b"[a]\nk = \\q\n", b"[a]\nk = x\\", b"[core]\n\tbare\n",
          b"[include]\n\tpath = ~root/../inc\n", b"[include]\n\tpath = sub/inc\n"]


def _known(test):  # type: ignore[no-untyped-def]
    for data in _KNOWN:
        test = example(data=data)(test)
    return test


def _git_list(data: bytes, folder: Path, includes: bool) -> list[tuple[str, str | None]] | None:
    """git's own listing of the text (None: git rejects it)."""
    path = folder / "config"
    path.write_bytes(data)
    env = {**os.environ, "HOME": str(folder), "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", "config", "--file", str(path), "--list", "-z",
         "--includes" if includes else "--no-includes"],
        capture_output=True, env=env, cwd=folder, check=False, timeout=30,
    )  # fmt: skip
    if done.returncode != 0:
        return None
    return [(e.name, e.value) for e in configfile.parse_listing(done.stdout, False)]


def _folder(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("equivalence")
    (folder / "sub").mkdir()
    for name in ("inc", "sub/inc"):
        (folder / name).write_bytes(b'[filter "included"]\n\tclean = x\n')
    return folder


@given(data=_ANY)
@_SETTINGS
@_known
def test_the_port_agrees_with_git_or_is_unsure(tmp_path_factory, data):
    folder = _folder(tmp_path_factory)
    found = configfile.parse_exact(data)
    if found is None:
        return
    assert [(e.name, e.value) for e in found] == _git_list(data, folder, includes=False)


@given(data=configs())
@_SETTINGS
@_known
def test_readers_that_follow_includes_agree_with_git_or_are_unsure(tmp_path_factory, data):
    """entries(includes=True) without git, as on the no-op path: never a listing that
    leaves out what an include brings."""
    folder = _folder(tmp_path_factory)
    with configfile.without_git():
        found = configfile.entries(data, str(folder / "config"), includes=True)
    if found is None:
        return
    assert [(e.name, e.value) for e in found] == _git_list(data, folder, includes=True)


@given(data=_ANY)
@_SETTINGS
@_known
def test_the_noop_view_of_core_settings_agrees_with_git_or_is_unsure(tmp_path_factory, data):
    """What the no-op takes from a repository's config (core.*, extensions.*: whether git
    accepts the repository, and its work tree) is git's, or nothing."""
    folder = _folder(tmp_path_factory)
    with configfile.without_git():
        found = setup_config.read_settings(data, "config")
    listed = _git_list(data, folder, includes=False)
    if isinstance(found, str):
        # Unsure (the no-op leaves it to git), never a refusal git would not make.
        assert found == "config: a config qola reads exactly only with git" or listed is None
        return
    assert listed is not None, "qola read a config git rejects"
    wanted = {}
    for name, value in listed:
        section, _, rest = name.partition(".")
        if section in ("core", "extensions") and "." not in rest:
            wanted[name] = "true" if value is None else value
    assert found == wanted


@given(data=configs())
@_SETTINGS
@_known
def test_gitmodules_paths_agree_with_git_or_are_unsure(tmp_path_factory, data):
    """The paths .gitmodules lists, from which qola finds the repositories git may enter."""
    folder = _folder(tmp_path_factory)
    text = data + b'\n[submodule "s"]\n\tpath = some/where\n'
    found = configfile.parse_exact(text)
    if found is None:
        return
    listed = _git_list(text, folder, includes=False)
    assert listed is not None
    ours = [m.path for m in configfile.submodules_of(found)]
    theirs = [m.path for m in configfile.submodules_of([configfile.entry_of(n, v)
                                                       for n, v in listed])]  # fmt: skip
    assert ours == theirs
