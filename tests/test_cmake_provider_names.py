"""A FetchContent name qola maps (my.lib: my_lib) or cannot tell from another to CMake (a_b,
where the manifest pins a-b), against the manifest's own pins: real configures."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from repos import snapshot
from test_cmake import flat
from test_cmake_provider import Upstreams, make_app, upstreams  # noqa: F401 (the fixture)

CMAKE = """\
cmake_minimum_required(VERSION 3.24)
project(app LANGUAGES NONE)
include(FetchContent)
{declarations}
set(report "")
foreach(dep IN ITEMS {names})
  FetchContent_GetProperties(${{dep}})
  string(APPEND report "${{dep}}=${{${{dep}}_SOURCE_DIR}}\\n")
endforeach()
file(WRITE "${{CMAKE_BINARY_DIR}}/fetched.txt" "${{report}}")
"""


@pytest.mark.parametrize("version", ("3.24", "newest"))
def test_a_mapped_name_does_not_take_the_pin_of_the_declaration_named_so(
    version: str, tmp_path: Path, upstreams: Upstreams  # noqa: F811
) -> None:
    # The manifest pins my_lib (liba), for the declaration my_lib. Another declaration,
    # my.lib (libb), made available first, maps to my_lib: it must not be served liba's
    # pin (and leave the declaration the manifest names to FetchContent, unpinned).
    app = make_app(tmp_path, upstreams, version, "Ninja")
    liba, libb = upstreams.liba.as_posix(), upstreams.libb.as_posix()
    (app.src / "CMakeLists.txt").write_text(CMAKE.format(names="my.lib my_lib", declarations=(
        f'FetchContent_Declare(my.lib GIT_REPOSITORY "{libb}" GIT_TAG v2.0 SOURCE_SUBDIR no)\n'
        f'FetchContent_Declare(my_lib GIT_REPOSITORY "{liba}" GIT_TAG v1.0 SOURCE_SUBDIR no)\n'
        "FetchContent_MakeAvailable(my.lib my_lib)")))  # fmt: skip
    app.manifest.write_text(f'[deps.my_lib]\npath = "3rdparty/my_lib"\nurl = "{liba}"\n'
                            f'commit = "{upstreams.liba_v1}"\ntag = "v1.0"\n')  # fmt: skip

    proc = app.configure(check=False)

    assert proc.returncode == 0, proc.stdout + proc.stderr
    fetched = app.fetched()
    assert fetched["my_lib"] == (app.src / "3rdparty" / "my_lib").as_posix()
    assert fetched["my.lib"] != fetched["my_lib"]
    assert "qola: my.lib: left to FetchContent" in flat(proc.stderr)


@pytest.mark.parametrize("version", ("3.24",))
def test_a_name_one_to_cmake_with_a_pinned_one_is_left_with_a_warning_as_documented(
    version: str, tmp_path: Path, upstreams: Upstreams  # noqa: F811
) -> None:
    # docs/cmake.md, Names: "a_b beside a-b" the manifest pins is left to FetchContent
    # with a warning. The manifest pins a-b; the only declaration is a_b.
    app = make_app(tmp_path, upstreams, version, "Ninja")
    liba, libb = upstreams.liba.as_posix(), upstreams.libb.as_posix()
    (app.src / "CMakeLists.txt").write_text(CMAKE.format(names="a_b", declarations=(
        f'FetchContent_Declare(a_b GIT_REPOSITORY "{libb}" GIT_TAG v2.0 SOURCE_SUBDIR no)\n'
        "FetchContent_MakeAvailable(a_b)")))  # fmt: skip
    app.manifest.write_text(f'[deps.a-b]\npath = "3rdparty/a-b"\nurl = "{liba}"\n'
                            f'commit = "{upstreams.liba_v1}"\ntag = "v1.0"\n')  # fmt: skip
    before = snapshot(app.src)

    for lock in ("OFF", "ON"):
        proc: subprocess.CompletedProcess[str] = app.configure(f"-DQOLA_LOCK={lock}", check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "qola: a_b: left to FetchContent (qola's name for it, a_b, is one name to CMake " \
               "with a-b" in flat(proc.stderr)
    assert snapshot(app.src) == before
