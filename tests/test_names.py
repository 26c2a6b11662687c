"""A dependency's name as a variable: one rule in Python, the same as QoLA.cmake's twin."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from repos import git, init_repo, snapshot

from qola.base.names import override_variable, variable_name

MODULE = Path(__file__).resolve().parent.parent / "cmake" / "QoLA.cmake"

TRICKY = [
    "aiter",
    "my-lib",
    "ck-tile.v2",
    "Lib_3",
    "9lives",
    "a--b__c",
    "x y",
    "semi;colon",
    "dollar$brace{}",
    "caf\u00e9",  # two UTF-8 bytes: CMake's regex sees bytes
    "\u4e2d\u6587",
    "-",
]
# The names a manifest accepts (letters, digits, '_' and '-', not starting with '-' or
# '_'): the only ones that ever reach CMake, which reads them as a list.
ALLOWED = [name for name in TRICKY if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]*", name)]


def test_variable_name_upper_cases_and_replaces_every_other_byte() -> None:
    assert variable_name("my-lib") == "MY_LIB"
    assert override_variable("my-lib") == "QOLA_SOURCE_DIR_MY_LIB"
    assert variable_name("caf\u00e9") == "CAF__"


def test_variable_name_agrees_with_the_cmake_module_on_tricky_names(tmp_path: Path) -> None:
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not installed")
    names = tmp_path / "names.txt"
    names.write_bytes(b"".join(name.encode() + b"\n" for name in ALLOWED))
    out = tmp_path / "out.txt"
    script = tmp_path / "names.cmake"
    # The module's internal function, read from the module itself (not edited, not copied).
    script.write_text(
        f'include("{MODULE.as_posix()}")\n'
        f'file(STRINGS "{names.as_posix()}" names ENCODING UTF-8)\n'
        f'file(WRITE "{out.as_posix()}" "")\n'
        "foreach(name IN LISTS names)\n"
        "  _qola_cmake_names(upper \"${name}\")\n"
        f'  file(APPEND "{out.as_posix()}" "${{upper}}\\n")\n'
        "endforeach()\n",
        encoding="utf-8",
    )
    proc = subprocess.run([cmake, "-P", str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    from_cmake = out.read_text(encoding="utf-8").splitlines()
    assert from_cmake == [variable_name(name) for name in ALLOWED]


def test_offline_hint_names_the_variable_qola_reads(tmp_path: Path, upstream, run_qola) -> None:
    root = init_repo(tmp_path / "project")
    manifest = root / "qola.toml"
    manifest.write_text(
        f'[deps.my-lib]\npath = "3rdparty/lib"\nurl = "{upstream.lib}"\n'
        f'commit = "{upstream.lib_v2}"\n'
    )
    before = snapshot(root)
    res = run_qola("checkout", "--offline", "-m", str(manifest))
    assert res.exit_code == 3
    assert res.stderr.endswith(
        "qola: my-lib: 3rdparty/lib is not checked out and --offline forbids fetching "
        f"{upstream.lib_v2}\nhint: run once without --offline, or point "
        "QOLA_SOURCE_DIR_MY_LIB at a local copy\n"
        "qola: 1 of 1 dependency failed: my-lib\n"
    )
    assert snapshot(root) == before
    # And that variable is the one qola honours: pointed at a checkout, it is used as is.
    copy = tmp_path / "copy"
    git(tmp_path, "clone", "-q", "--recurse-submodules", str(upstream.lib), str(copy))
    res = run_qola(
        "checkout", "--offline", "-m", str(manifest), env={"QOLA_SOURCE_DIR_MY_LIB": str(copy)}
    )
    assert res.exit_code == 0, res.stderr
    assert f"overridden by {copy}" in res.stdout
