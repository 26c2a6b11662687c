"""Each kind of stamp entry, holding and broken, through both checkers: they must agree.

The no-op's stamp is checked by qola/repo/trail.py's holds(), the CMake results file's by
QoLA.cmake's _qola_stamp_holds() (under CMake 3.21 and the newest); the entries are the
same, so the answers must be too. Paths hold a space and a non-ASCII letter on purpose.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from stamp_checkers import MODULE, cmake_holds, results_file
from test_cmake import _pypi_cmake

from qola.repo import trail

Entries = list[tuple[str, str]]


def _file(base: Path) -> Entries:
    (base / "a file").write_text("content\n")
    return [(str(base / "a file"), trail.expect(base / "a file"))]


def _folder(base: Path) -> Entries:
    (base / "a folder").mkdir()
    return [(str(base / "a folder"), "dir")]


def _present(base: Path) -> Entries:
    (base / "pack-1.idx").write_text("an index\n")
    return [(str(base / "pack-1.idx"), "file")]


def _nothing(base: Path) -> Entries:
    return [(str(base / "no such file"), "missing")]


def _realpath(base: Path) -> Entries:
    (base / "lib" / "sub").mkdir(parents=True)
    (base / "copy" / "sub").mkdir(parents=True)
    return [(str(base / "lib" / "sub"), trail.expect_realpath(base / "lib" / "sub"))]


def _patches(base: Path) -> Entries:
    (base / "patches" / "extern").mkdir(parents=True)
    (base / "patches" / "0001-a.patch").write_text("a\n")
    (base / "patches" / "extern" / "0001-b.patch").write_text("b\n")
    return [(str(base / "patches"), trail.expect_patches(base / "patches"))]


def _relink(base: Path, name: str, target: Path) -> None:
    path = base / name
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
    path.symlink_to(target)


CASES: list[tuple[str, Callable[[Path], Entries], Callable[[Path], object], bool]] = [
    ("file-unchanged", _file, lambda b: None, True),
    ("file-rewritten-same", _file, lambda b: (b / "a file").write_text("content\n"), True),
    ("file-edited", _file, lambda b: (b / "a file").write_text("other\n"), False),
    ("file-removed", _file, lambda b: (b / "a file").unlink(), False),
    ("file-became-folder", _file, lambda b: ((b / "a file").unlink(), (b / "a file").mkdir()),
     False),
    ("file-linked-to-same-content", _file,
     lambda b: ((b / "twin").write_text("content\n"), _relink(b, "a file", b / "twin")), True),
    ("file-linked-to-other-content", _file,
     lambda b: ((b / "twin").write_text("other\n"), _relink(b, "a file", b / "twin")), False),
    ("folder-unchanged", _folder, lambda b: None, True),
    ("folder-removed", _folder, lambda b: (b / "a folder").rmdir(), False),
    ("folder-became-file", _folder,
     lambda b: ((b / "a folder").rmdir(), (b / "a folder").write_text("x")), False),
    ("present-unchanged", _present, lambda b: None, True),
    ("present-rewritten", _present, lambda b: (b / "pack-1.idx").write_text("other\n"), True),
    ("present-removed", _present, lambda b: (b / "pack-1.idx").unlink(), False),
    ("present-became-folder", _present,
     lambda b: ((b / "pack-1.idx").unlink(), (b / "pack-1.idx").mkdir()), False),
    ("missing-still", _nothing, lambda b: None, True),
    ("missing-now-a-dangling-link", _nothing,
     lambda b: (b / "no such file").symlink_to(b / "nowhere"), True),
    ("missing-now-there", _nothing, lambda b: (b / "no such file").write_text(""), False),
    ("missing-now-a-folder", _nothing, lambda b: (b / "no such file").mkdir(), False),
    ("realpath-unchanged", _realpath, lambda b: None, True),
    ("realpath-folder-became-link", _realpath,
     lambda b: _relink(b / "lib", "sub", b / "copy" / "sub"), False),
    ("realpath-parent-became-link", _realpath, lambda b: _relink(b, "lib", b / "copy"), False),
    ("realpath-folder-removed", _realpath, lambda b: (b / "lib" / "sub").rmdir(), True),
    ("patches-unchanged", _patches, lambda b: None, True),
    ("patches-one-edited", _patches,
     lambda b: (b / "patches" / "0001-a.patch").write_text("edited\n"), True),
    ("patches-other-file-added", _patches,
     lambda b: (b / "patches" / "README").write_text("x"), True),
    ("patches-one-added", _patches,
     lambda b: (b / "patches" / "0002-c.patch").write_text("c\n"), False),
    ("patches-nested-added", _patches,
     lambda b: (b / "patches" / "extern" / "0002-d.patch").write_text("d\n"), False),
    ("patches-one-renamed", _patches,
     lambda b: (b / "patches" / "0001-a.patch").rename(b / "patches" / "0001-z.patch"), False),
    ("patches-folder-removed", _patches, lambda b: shutil.rmtree(b / "patches"), False),
]  # fmt: skip


@pytest.mark.parametrize("version", ["3.21", "newest"])
@pytest.mark.parametrize(("make", "change", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_stamp_entry_gets_the_same_answer_from_both_checkers(
    tmp_path: Path, version: str, make, change, expected: bool
) -> None:
    base = tmp_path / "a dir é"
    base.mkdir()
    entries = make(base)
    results = results_file(tmp_path / "build", entries)
    change(base)

    assert trail.holds(entries) is expected
    assert cmake_holds(_pypi_cmake(version), results) is expected


def test_an_expectation_neither_checker_knows_never_holds(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    entries = [(str(tmp_path / "f"), "mtime:123")]

    assert trail.holds(entries) is False
    assert cmake_holds(_pypi_cmake("newest"), results_file(tmp_path / "build", entries)) is False


def test_an_empty_stamp_never_holds_in_cmake(tmp_path: Path) -> None:
    assert cmake_holds(_pypi_cmake("newest"), results_file(tmp_path / "build", [])) is False


def test_qola_cmake_reads_the_stamp_format_that_qola_writes() -> None:
    # CMake cannot import Python: QoLA.cmake keeps its own copy of the number.
    proc = subprocess.run(
        [str(_pypi_cmake("newest")), f"-DMODULE={MODULE.as_posix()}", "-P", "/dev/stdin"],
        input='include("${MODULE}")\nmessage(STATUS "format=${_QOLA_RESULTS_FORMAT}")\n',
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"-- format={trail.FORMAT}\n" in proc.stdout


def test_stamp_paths_are_what_the_operating_system_resolves(tmp_path: Path) -> None:
    """A `..` after a symlink leads where the link goes; CMake's file(REAL_PATH) would
    collapse it as text. No stamp path holds one: both checkers would disagree on it."""
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "a").mkdir()
    os.symlink(tmp_path / "real" / "sub", tmp_path / "a" / "link")
    seen = trail.Trail()
    seen.note(str(tmp_path / "a" / "link" / ".." / "f"), "missing")
    assert seen.unprovable is not None
    assert seen.pairs() == []


def test_python_m_qola_explain_stamp_names_the_entry_that_no_longer_holds(pinned_by_qola, upstream):
    import sys

    from procs import environment, noop_declined

    results = pinned_by_qola.root / "build" / "results.cmake"
    assert not noop_declined(["checkout", "--cmake-out", str(results)], pinned_by_qola.root)
    [noop_stamp] = (pinned_by_qola.root / ".git" / "qola" / "noop").glob("*.stamp")
    files = [str(results), str(noop_stamp)]

    def explained() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "qola.commands.explain_stamp", *files],
                              capture_output=True, text=True, env=environment())  # fmt: skip

    held = explained()
    assert held.returncode == 0, held.stderr
    assert held.stdout.count("  all ") == 2
    # The spelling the docs gave before the commands had a package of their own still works.
    earlier = subprocess.run([sys.executable, "-m", "qola.explain_stamp", *files],
                             capture_output=True, text=True, env=environment())  # fmt: skip
    assert (earlier.returncode, earlier.stdout) == (0, held.stdout)

    head = pinned_by_qola.lib / ".git" / "modules" / "extern" / "nested" / "HEAD"
    was = trail.expect(head)
    # (qola fetched the nested submodule one commit deep: the other commit by SHA)
    git_fetch = ["git", "fetch", "-q", "origin", upstream.nested_v1]
    git_checkout = ["git", "checkout", "-q", "--detach", upstream.nested_v1]
    subprocess.run(git_fetch, cwd=pinned_by_qola.nested, check=True)
    subprocess.run(git_checkout, cwd=pinned_by_qola.nested, check=True)
    broken = explained()

    assert broken.returncode == 1
    line = f"  {head}: was {was}, now {trail.expect(head)}\n"
    assert broken.stdout.count(line) == 2
    assert "entries no longer holds: the fast path steps aside and qola looks again" in (
        broken.stdout
    )


def test_explain_stamp_shows_its_usage_and_names_a_missing_file(tmp_path):
    import sys

    from procs import environment

    def explain(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "qola.commands.explain_stamp", *args],
                              capture_output=True, text=True, env=environment())  # fmt: skip

    shown = explain("--help")
    assert (shown.returncode, shown.stderr) == (0, "")
    assert "FILE is a no-op stamp" in shown.stdout
    assert not shown.stdout.splitlines()[2].startswith(" ")  # as written, not as indented
    assert explain().returncode == 2 and "FILE is a no-op stamp" in explain().stderr
    other = tmp_path / "notes.txt"
    other.write_text("set(SOMETHING 1)\n")
    refused = explain(str(other))
    assert refused.returncode == 1
    assert refused.stdout == f"{other}: not a no-op stamp nor a CMake results file of qola's\n"
    old = tmp_path / "noop" / "0123.json"
    old.parent.mkdir()
    old.write_text("{}")
    assert "an older qola's no-op stamp" in explain(str(old)).stdout
    import marshal

    shapes = [{"entries": [1]}, {"invocation": [], "entries": []},
              {"invocation": {}, "entries": [[1, 2]]}, {"invocation": {"qola": 3}}]  # fmt: skip
    for shape in shapes:
        odd = tmp_path / "odd.stamp"
        odd.write_bytes(marshal.dumps(shape))
        read = explain(str(odd))
        assert (read.returncode, read.stderr) == (1, ""), read.stderr
        assert read.stdout == f"{odd}: not a no-op stamp this qola can read\n"
        odd.unlink()
    other.unlink()
    old.unlink()
    old.parent.rmdir()
    missing = explain(str(tmp_path / "nowhere.stamp"))
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == f"qola: no such file: {tmp_path / 'nowhere.stamp'}\n"
    assert list(tmp_path.iterdir()) == []
