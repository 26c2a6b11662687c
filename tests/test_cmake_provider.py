"""QoLAProvider.cmake: qola as FetchContent's dependency provider, in a real FetchContent
project of two C libraries (libb with a nested submodule), configured and built on
CMake 3.24 (the provider's floor) and the newest, with Ninja and Makefiles.

The project's CMakeLists never change: the provider comes in through
CMAKE_PROJECT_TOP_LEVEL_INCLUDES. The upstreams are built once per session; every test
clones nothing it does not configure.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from repos import commit_file, git, head, init_repo, snapshot
from test_cmake import GENERATORS, REPO, _pypi_cmake, flat

PROVIDER = REPO / "cmake" / "QoLAProvider.cmake"
VERSIONS = ("3.24", "newest")

LIBA_CMAKE = """\
cmake_minimum_required(VERSION 3.14)
project(liba LANGUAGES C)
add_library(liba STATIC a.c)
target_include_directories(liba PUBLIC "${CMAKE_CURRENT_SOURCE_DIR}")
set(LIBA_SAYS "hello from liba" PARENT_SCOPE)
"""
LIBB_CMAKE = """\
cmake_minimum_required(VERSION 3.14)
project(libb LANGUAGES C)
if(NOT EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/extern/nested/nested.h")
  message(FATAL_ERROR "libb: its nested submodule is not checked out")
endif()
add_library(libb STATIC b.c)
target_include_directories(libb PUBLIC "${CMAKE_CURRENT_SOURCE_DIR}/extern/nested")
"""
SUB_CMAKE = """\
cmake_minimum_required(VERSION 3.14)
project(liba_sub LANGUAGES C)
add_library(liba_sub STATIC sub.c)
"""

PROJECT = """\
cmake_minimum_required(VERSION 3.24)
project(app LANGUAGES C)
include(FetchContent)
FetchContent_Declare(LibA GIT_REPOSITORY "@LIBA@" GIT_TAG @LIBA_TAG@ @LIBA_EXTRA@)
FetchContent_Declare(libb GIT_REPOSITORY "@LIBB@" GIT_TAG @LIBB_TAG@ GIT_SHALLOW TRUE)
FetchContent_MakeAvailable(LibA libb)
FetchContent_GetProperties(LibA)
FetchContent_GetProperties(libb)
set(report "")
foreach(dep IN ITEMS liba libb)
  foreach(what IN ITEMS SOURCE_DIR BINARY_DIR POPULATED)
    string(APPEND report "${dep}_${what}=${${dep}_${what}}\\n")
  endforeach()
endforeach()
string(APPEND report "says=${LIBA_SAYS}\\n")
if(TARGET liba_sub)
  get_target_property(system liba_sub SYSTEM)
  get_target_property(where liba_sub SOURCE_DIR)
  get_property(excluded DIRECTORY "${where}" PROPERTY EXCLUDE_FROM_ALL)
  string(APPEND report "sub=yes\\nsystem=${system}\\nexcluded=${excluded}\\n")
endif()
file(WRITE "${CMAKE_BINARY_DIR}/fetched.txt" "${report}")
add_executable(app main.c)
target_link_libraries(app PRIVATE @LINK@ libb)
"""
MAIN_C = '#include "nested.h"\nint lib_a(void);\nint lib_b(void);\n' + (
    "int main(void) { return lib_a() + lib_b() - 3 + NESTED; }\n"
)


@dataclass(frozen=True)
class Upstreams:
    """liba (tag v1.0, then more commits; a `sub` project), libb (annotated tag v2.0)
    holding nested at extern/nested."""

    liba: Path
    libb: Path
    liba_v1: str  # the tag v1.0 (lightweight)
    liba_tip: str  # main's tip, after v1.0: the branch main
    libb_v2: str  # the annotated tag v2.0
    nested_pin: str  # the nested commit libb_v2 records


@pytest.fixture(scope="session")
def upstreams(tmp_path_factory: pytest.TempPathFactory) -> Upstreams:
    base = tmp_path_factory.mktemp("provider-upstreams")
    nested = init_repo(base / "nested")
    nested_pin = commit_file(nested, "nested.h", "#define NESTED 0\n")
    commit_file(nested, "nested.h", "#define NESTED 1 /* not the pin */\n")

    liba = init_repo(base / "liba")
    (liba / "a.c").write_text("int lib_a(void) { return 1; }\n")
    (liba / "sub").mkdir()
    (liba / "sub" / "CMakeLists.txt").write_text(SUB_CMAKE)
    (liba / "sub" / "sub.c").write_text("int lib_sub(void) { return 0; }\n")
    git(liba, "add", "a.c", "sub")
    liba_v1 = commit_file(liba, "CMakeLists.txt", LIBA_CMAKE)
    git(liba, "tag", "v1.0")
    liba_tip = commit_file(liba, "a.c", "int lib_a(void) { return 1; } /* v1.1 */\n")

    libb = init_repo(base / "libb")
    (libb / "b.c").write_text("int lib_b(void) { return 2; }\n")
    git(libb, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(nested),
        "extern/nested")  # fmt: skip
    git(libb, "-C", "extern/nested", "checkout", "-q", nested_pin)
    git(libb, "add", "extern/nested", "b.c")
    libb_v2 = commit_file(libb, "CMakeLists.txt", LIBB_CMAKE)
    git(libb, "tag", "-a", "-m", "release 2.0", "v2.0")
    commit_file(libb, "b.c", "int lib_b(void) { return 2; } /* later */\n")
    return Upstreams(liba, libb, liba_v1, liba_tip, libb_v2, nested_pin)


@dataclass
class App:
    """The FetchContent project, its build folder, and the CMake and generator to use."""

    src: Path
    build: Path
    cmake: Path
    generator: str
    python_log: Path
    env: dict[str, str]

    @property
    def manifest(self) -> Path:
        return self.src / "qola.toml"

    def configure(self, *args: str, provider: bool = True, check: bool = True
                  ) -> subprocess.CompletedProcess[str]:  # fmt: skip
        words = [str(self.cmake), "-S", str(self.src), "-B", str(self.build), "-G",
                 self.generator, *args]  # fmt: skip
        if provider:
            words.append(f"-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES={PROVIDER}")
        return self.run(words, check)

    def build_(self) -> subprocess.CompletedProcess[str]:
        return self.run([str(self.cmake), "--build", str(self.build)], True)

    def run(self, words: list[str], check: bool) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(words, capture_output=True, text=True, check=False,
                              env={**os.environ, **self.env})  # fmt: skip
        if check and proc.returncode != 0:
            raise AssertionError(f"{shlex.join(words)} failed ({proc.returncode}):\n"
                                 f"{proc.stdout}\n{proc.stderr}")  # fmt: skip
        return proc

    def fetched(self) -> dict[str, str]:
        text = (self.build / "fetched.txt").read_text()
        return dict(line.split("=", 1) for line in text.splitlines())

    def python_starts(self) -> int:
        return len(self.python_log.read_text().splitlines()) if self.python_log.exists() else 0


def make_app(tmp_path: Path, upstreams: Upstreams, version: str, generator: str,
             liba_tag: str = "v1.0", liba_extra: str = "", libb_tag: str = "v2.0",
             name: str = "app") -> App:  # fmt: skip
    src = init_repo(tmp_path / name)
    link = "liba liba_sub" if "SOURCE_SUBDIR" in liba_extra else "liba"
    text = (PROJECT.replace("@LIBA@", upstreams.liba.as_posix())
            .replace("@LIBB@", upstreams.libb.as_posix())
            .replace("@LIBA_TAG@", liba_tag).replace("@LIBB_TAG@", libb_tag)
            .replace("@LIBA_EXTRA@", liba_extra).replace("@LINK@", link))  # fmt: skip
    if "SOURCE_SUBDIR" in liba_extra:  # the sub project instead: liba itself comes too
        text = text.replace("FetchContent_MakeAvailable(LibA libb)", (
            "FetchContent_MakeAvailable(LibA libb)\n"
            'add_subdirectory("${liba_SOURCE_DIR}" liba-top EXCLUDE_FROM_ALL)'))  # fmt: skip
    (src / "CMakeLists.txt").write_text(text)
    (src / "main.c").write_text(MAIN_C)
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "app")
    log = tmp_path / f"{name}-python-starts.log"
    wrapper = tmp_path / f"{name}-python"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return App(src, tmp_path / f"{name}-build", _pypi_cmake(version), generator, log,
               {"QOLA_PYTHON": str(wrapper)})


def pin_both(app: App, upstreams: Upstreams) -> None:
    app.manifest.write_text(
        f'[deps.liba]\npath = "3rdparty/liba"\nurl = "{upstreams.liba}"\n'
        f'commit = "{upstreams.liba_v1}"\ntag = "v1.0"\n\n'
        f'[deps.libb]\npath = "3rdparty/libb"\nurl = "{upstreams.libb}"\n'
        f'commit = "{upstreams.libb_v2}"\ntag = "v2.0"\n'
    )


def lines_of(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


# --- pinned declarations -------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("generator", GENERATORS, ids=["ninja", "make"])
def test_pinned_declarations_are_checked_out_at_their_pins_and_the_project_builds(
    version: str, generator: str, tmp_path: Path, upstreams: Upstreams
) -> None:
    app = make_app(tmp_path, upstreams, version, generator)
    pin_both(app, upstreams)

    proc = app.configure()

    liba, libb = app.src / "3rdparty" / "liba", app.src / "3rdparty" / "libb"
    assert head(liba) == upstreams.liba_v1
    assert head(libb) == upstreams.libb_v2
    assert head(libb / "extern" / "nested") == upstreams.nested_pin
    # Served by qola: FetchContent cloned nothing of its own.
    assert not (app.build / "_deps" / "liba-src").exists()
    assert not (app.build / "_deps" / "libb-subbuild").exists()
    assert app.fetched() == {
        "liba_SOURCE_DIR": liba.as_posix(),
        "liba_BINARY_DIR": (app.build / "_deps" / "liba-build").as_posix(),
        "liba_POPULATED": "1",  # what FetchContent_GetProperties() says
        "libb_SOURCE_DIR": libb.as_posix(),
        "libb_BINARY_DIR": (app.build / "_deps" / "libb-build").as_posix(),
        "libb_POPULATED": "1",
        "says": "hello from liba",  # PARENT_SCOPE of its CMakeLists reaches the caller
    }
    assert "-- qola: qola.toml: liba at its pin" in proc.stdout
    app.build_()
    assert subprocess.run([str(app.build / "app")], check=False).returncode == 0

    starts = app.python_starts()
    again = app.configure()
    assert app.python_starts() == starts  # nothing changed: no Python at all
    for dep, sha, tag in (("liba", upstreams.liba_v1, "v1.0"), ("libb", upstreams.libb_v2, "v2.0")):
        assert (f"-- qola: qola.toml: {dep} at its pin {sha[:12]} (tag {tag}), unchanged "
                "since the last configure") in again.stdout  # fmt: skip
    verify = subprocess.run([sys.executable, "-m", "qola", "verify"], cwd=app.src,
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert verify.returncode == 0, verify.stdout + verify.stderr


@pytest.mark.parametrize("version", VERSIONS)
def test_the_provider_says_what_fetchcontent_would_subdir_system_exclude_from_all(
    version: str, tmp_path: Path, upstreams: Upstreams
) -> None:
    extra = "SOURCE_SUBDIR sub SYSTEM EXCLUDE_FROM_ALL"
    plain = make_app(tmp_path, upstreams, version, "Ninja", liba_extra=extra, name="plain")
    plain.configure(provider=False)
    served = make_app(tmp_path, upstreams, version, "Ninja", liba_extra=extra, name="served")
    pin_both(served, upstreams)

    served.configure()

    theirs, ours = plain.fetched(), served.fetched()
    for got in (theirs, ours):  # the folders differ by design: compare the rest
        for dep in ("liba", "libb"):
            got[f"{dep}_SOURCE_DIR"] = got[f"{dep}_SOURCE_DIR"].rsplit("/", 1)[-1]
            got[f"{dep}_BINARY_DIR"] = got[f"{dep}_BINARY_DIR"].rsplit("/_deps/", 1)[-1]
    assert ours["liba_SOURCE_DIR"] == "liba" and theirs["liba_SOURCE_DIR"] == "liba-src"
    ours["liba_SOURCE_DIR"], ours["libb_SOURCE_DIR"] = "liba-src", "libb-src"
    assert ours == theirs
    assert ours["sub"] == "yes"
    newest = version == "newest"
    # CMake 3.24 has no SYSTEM target property, and FetchContent honours EXCLUDE_FROM_ALL
    # from 3.28 on.
    expected = ("ON", "TRUE") if newest else ("system-NOTFOUND", "")
    assert (ours["system"], ours["excluded"]) == expected
    served.build_()


# --- unpinned declarations and locking -----------------------------------------------


def test_an_unpinned_declaration_stops_the_configure_naming_it_and_the_command_that_pins_it(
    tmp_path: Path, upstreams: Upstreams
) -> None:
    app = make_app(tmp_path, upstreams, "newest", "Ninja")
    before = snapshot(app.src)

    proc = app.configure(check=False)

    assert proc.returncode != 0
    message = flat(proc.stderr)
    assert (f"qola: LibA: FetchContent_Declare(LibA GIT_REPOSITORY {upstreams.liba} GIT_TAG "
            f"v1.0) is not pinned in {app.manifest}, which does not exist yet; nothing was "
            "written") in message  # fmt: skip
    assert ("hint: pin every unpinned declaration at the commit its GIT_TAG names now: "
            f"cmake -DQOLA_LOCK=ON {app.build} (it stays in the cache until set OFF); or this "
            "one alone, once:") in message  # fmt: skip
    assert snapshot(app.src) == before  # no manifest, no checkout, no .gitignore line

    # The printed command pins LibA, as it says.
    [command] = [line.split("once: ", 1)[1] for line in lines_of(proc.stderr)
                 if " lock LibA " in line]  # fmt: skip
    ran = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True,
                         check=False)  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert f'commit = "{upstreams.liba_v1}"\ntag = "v1.0"\n' in app.manifest.read_text()
    assert head(app.src / "3rdparty" / "LibA") == upstreams.liba_v1

    # Now libb is the one that stops it; -DQOLA_LOCK=ON pins it.
    proc = app.configure(check=False)
    assert "qola: libb: FetchContent_Declare(libb" in flat(proc.stderr)
    app.configure("-DQOLA_LOCK=ON")
    assert f'commit = "{upstreams.libb_v2}"\ntag = "v2.0"\n' in app.manifest.read_text()
    app.build_()


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("generator", GENERATORS, ids=["ninja", "make"])
def test_qola_lock_on_pins_every_declaration_and_verify_covers_them(
    version: str, generator: str, tmp_path: Path, upstreams: Upstreams
) -> None:
    # A branch and an annotated tag: the tip followed, the tag's commit labelled.
    app = make_app(tmp_path, upstreams, version, generator, liba_tag="main")

    proc = app.configure("-DQOLA_LOCK=ON")

    assert (f"-- qola: locked libb: {upstreams.libb_v2[:12]} (tag v2.0) at 3rdparty/libb, in "
            f"{app.manifest}\n") in proc.stdout  # fmt: skip
    assert f"-- qola: added /3rdparty/LibA/ to {app.src / '.gitignore'}\n" in proc.stdout
    assert app.manifest.read_text().endswith(
        f'[deps.LibA]\npath = "3rdparty/LibA"\nurl = "{upstreams.liba}"\n'
        f'commit = "{upstreams.liba_tip}"\ntrack = "main"\n\n'
        f'[deps.libb]\npath = "3rdparty/libb"\nurl = "{upstreams.libb}"\n'
        f'commit = "{upstreams.libb_v2}"\ntag = "v2.0"\n'
    )
    assert (app.src / ".gitignore").read_text() == "/3rdparty/LibA/\n/3rdparty/libb/\n"
    assert head(app.src / "3rdparty" / "libb" / "extern" / "nested") == upstreams.nested_pin
    app.build_()
    verify = subprocess.run([sys.executable, "-m", "qola", "verify"], cwd=app.src,
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "2 dependencies match the manifest" in verify.stdout
    # Locked once: the next configure writes nothing but runs qola once more for LibA,
    # whose stamp holds the manifest as it was before libb's lock (docs/cmake.md's
    # walk-through shows it); the one after starts no Python.
    text, starts = app.manifest.read_text(), app.python_starts()
    first = app.configure().stdout
    assert f"-- qola: qola.toml: LibA at its pin {upstreams.liba_tip[:12]}\n" in first
    assert "-- qola: qola.toml: libb at its pin " in first
    assert app.python_starts() > starts
    assert "(tag v2.0), unchanged since the last configure\n" in first
    starts = app.python_starts()
    app.configure()
    assert (app.manifest.read_text(), app.python_starts()) == (text, starts)


def test_a_git_tag_no_lock_can_resolve_stops_the_configure_and_writes_nothing(
    tmp_path: Path, upstreams: Upstreams
) -> None:
    app = make_app(tmp_path, upstreams, "newest", "Ninja", liba_tag="v9.9")
    before = snapshot(app.src)

    proc = app.configure("-DQOLA_LOCK=ON", check=False)

    assert proc.returncode != 0
    assert (f"qola: LibA: GIT_TAG v9.9 is no tag, branch or commit SHA of {upstreams.liba}; "
            "nothing was written") in flat(proc.stderr)  # fmt: skip
    assert snapshot(app.src) == before


def test_a_git_tag_or_repository_off_the_pin_is_a_warning_naming_both_and_the_pin_is_built(
    tmp_path: Path, upstreams: Upstreams
) -> None:
    app = make_app(tmp_path, upstreams, "newest", "Ninja", liba_tag="v1.1")
    pin_both(app, upstreams)
    libb_url = f"file://{upstreams.libb}"  # the same repository, another URL
    app.manifest.write_text(app.manifest.read_text().replace(
        f'url = "{upstreams.libb}"', f'url = "{libb_url}"'))  # fmt: skip

    proc = app.configure()

    message = flat(proc.stderr)
    # Neither presumes which side moved (an edited GIT_TAG, or a `qola bump`): keeping
    # the pin comes first.
    assert (f"qola: LibA: GIT_TAG v1.1 does not name the commit {app.manifest} pins, "
            f"{upstreams.liba_v1[:12]} (tag v1.0); the build uses the pin. To keep it, set "
            "GIT_TAG to v1.0 (what the manifest pins); to pin what GIT_TAG names instead: "
            f"qola bump liba --to v1.1 -m {app.manifest}") in message  # fmt: skip
    assert (f"qola: libb: GIT_REPOSITORY {upstreams.libb} is not the URL {app.manifest} "
            f"fetches libb from, {libb_url}; the build uses the manifest's. To keep it, set "
            f"GIT_REPOSITORY to {libb_url}; to fetch from {upstreams.libb} instead, edit url "
            f"in [deps.libb] of {app.manifest} (no qola command changes a url)."
            ) in message  # fmt: skip
    assert head(app.src / "3rdparty" / "liba") == upstreams.liba_v1
    again = app.configure()  # at every configure, fast path included
    assert "GIT_TAG v1.1 does not name the commit" in flat(again.stderr)
    # A token in the manifest's URL is never shown (a CI log keeps what a configure says).
    token_url = "https://x-access-token:ghp_SECRET@example.invalid/libb.git?private_token=S2"
    app.manifest.write_text(app.manifest.read_text().replace(libb_url, token_url))
    said = app.configure(check=False)
    shown = flat(said.stdout + said.stderr)
    assert "is not the URL" in shown and "https://example.invalid/libb.git;" in shown, shown
    assert "SECRET" not in shown and "private_token" not in shown


# --- what FetchContent keeps ------------------------------------------------------


def test_url_find_package_args_and_override_find_package_stay_fetchcontents(
    tmp_path: Path, upstreams: Upstreams
) -> None:
    tarball = tmp_path / "liba.tar.gz"
    with tarfile.open(tarball, "w:gz") as archive:
        for name in ("CMakeLists.txt", "a.c"):
            archive.add(upstreams.liba / name, arcname=f"liba/{name}")
    app = make_app(tmp_path, upstreams, "newest", "Ninja")
    text = (app.src / "CMakeLists.txt").read_text()
    text = re.sub(r"FetchContent_Declare\(LibA [^\n]*\)",
                  f'FetchContent_Declare(LibA URL "{tarball.as_posix()}")', text)  # fmt: skip
    text = text.replace("GIT_SHALLOW TRUE)", "GIT_SHALLOW TRUE FIND_PACKAGE_ARGS NAMES nothere)")
    text = text.replace("FetchContent_MakeAvailable(LibA libb)", (
        "FetchContent_Declare(lib_over GIT_REPOSITORY \"@LIBA@\" GIT_TAG v1.0 "
        "SOURCE_SUBDIR sub OVERRIDE_FIND_PACKAGE)\n"
        "FetchContent_MakeAvailable(LibA libb lib_over)").replace(
            "@LIBA@", upstreams.liba.as_posix()))  # fmt: skip
    (app.src / "CMakeLists.txt").write_text(text)
    before = snapshot(app.src)

    proc = app.configure()  # nothing pinned, no QOLA_LOCK: no error, FetchContent did it all

    assert snapshot(app.src) == before
    for name, why in (("libb", "FIND_PACKAGE_ARGS"), ("lib_over", "OVERRIDE_FIND_PACKAGE")):
        assert (f"-- qola: {name}: left to FetchContent ({why}): not pinned by qola, and qola "
                "verify does not cover it\n") in proc.stdout  # fmt: skip
    fetched = app.fetched()
    assert fetched["liba_SOURCE_DIR"] == (app.build / "_deps" / "liba-src").as_posix()
    assert fetched["libb_SOURCE_DIR"] == (app.build / "_deps" / "libb-src").as_posix()
    assert (app.build / "_deps" / "lib_over-src" / "sub" / "CMakeLists.txt").is_file()
    app.build_()


def test_fetchcontent_source_dir_still_wins(tmp_path: Path, upstreams: Upstreams) -> None:
    app = make_app(tmp_path, upstreams, "newest", "Ninja")
    app.manifest.write_text(
        f'[deps.libb]\npath = "3rdparty/libb"\nurl = "{upstreams.libb}"\n'
        f'commit = "{upstreams.libb_v2}"\n'
    )
    local = tmp_path / "my-liba"
    git(tmp_path, "clone", "-q", str(upstreams.liba), str(local))

    app.configure(f"-DFETCHCONTENT_SOURCE_DIR_LIBA={local}")

    assert app.fetched()["liba_SOURCE_DIR"] == local.as_posix()
    assert not (app.src / "3rdparty" / "LibA").exists()
    assert "[deps.LibA]" not in app.manifest.read_text()
    assert head(app.src / "3rdparty" / "libb") == upstreams.libb_v2


def test_the_pins_file_format_is_the_one_the_provider_reads() -> None:
    from qola.output.cmake_pins import FORMAT

    assert f"set(_QOLA_PINS_FORMAT_READ {FORMAT})" in PROVIDER.read_text()


@pytest.mark.parametrize("version", VERSIONS)
def test_what_qola_cannot_pin_is_left_to_fetchcontent_and_what_it_ignores_is_said(
    version: str, tmp_path: Path, upstreams: Upstreams
) -> None:
    # LibA runs a PATCH_COMMAND; lib.a is no qola name (lib_a is), and the lib_a beside
    # it then one to CMake with it; _x is none at all. libb's GIT_SUBMODULES "" locks none.
    liba, libb = upstreams.liba.as_posix(), upstreams.libb.as_posix()
    app = make_app(tmp_path, upstreams, version, "Ninja")
    (app.src / "CMakeLists.txt").write_text(f"""\
cmake_minimum_required(VERSION 3.24)
project(app LANGUAGES NONE)
include(FetchContent)
FetchContent_Declare(lib.a GIT_REPOSITORY "{liba}" GIT_TAG v1.0 SOURCE_SUBDIR none
  SOURCE_DIR "${{CMAKE_BINARY_DIR}}/my-liba" GIT_SUBMODULES sub GIT_SUBMODULES_RECURSE OFF)
FetchContent_Declare(LibA GIT_REPOSITORY "{liba}" GIT_TAG v1.0
  PATCH_COMMAND "${{CMAKE_COMMAND}}" -E touch patched.txt)
FetchContent_Declare(libb GIT_REPOSITORY "{libb}" GIT_TAG v2.0
  GIT_SUBMODULES "" SOURCE_SUBDIR none)
FetchContent_Declare(lib_a GIT_REPOSITORY "{liba}" GIT_TAG v1.0 SOURCE_SUBDIR none)
FetchContent_Declare(_x GIT_REPOSITORY "{liba}" GIT_TAG v1.0 SOURCE_SUBDIR none)
FetchContent_MakeAvailable(lib.a LibA libb lib_a _x)
set(report "")
foreach(dep IN ITEMS lib.a lib_a _x)
  FetchContent_GetProperties(${{dep}})
  string(APPEND report "${{dep}}=${{${{dep}}_SOURCE_DIR}}\\n")
endforeach()
file(WRITE "${{CMAKE_BINARY_DIR}}/fetched.txt" "${{report}}")
""")
    before = snapshot(app.src)

    # Unpinned: the error quotes the declaration as the CMakeLists has it, and locks the
    # qola name.
    proc = app.configure(check=False)
    assert proc.returncode != 0
    message = flat(proc.stderr)
    assert ("qola: FetchContent_MakeAvailable(lib.a, which qola knows as lib_a): qola: lib_a: "
            f"FetchContent_Declare(lib.a GIT_REPOSITORY {upstreams.liba} GIT_TAG v1.0) is not "
            "pinned in") in message  # fmt: skip
    assert f"qola lock lib_a {upstreams.liba} v1.0 -m {app.manifest}" in message
    assert snapshot(app.src) == before

    proc = app.configure("-DQOLA_LOCK=ON")

    out, err = proc.stdout, flat(proc.stderr)
    assert f"-- qola: locked lib_a (FetchContent's lib.a): {upstreams.liba_v1[:12]}" in out
    assert (f"-- qola: lib.a: SOURCE_DIR not used: the checkout is the manifest's path, "
            f"{(app.src / '3rdparty' / 'lib_a').as_posix()}\n") in out  # fmt: skip
    assert ("-- qola: lib.a: a GIT_SUBMODULES list and GIT_SUBMODULES_RECURSE OFF not "
            "honoured: all submodules follow the pin's gitlinks, recursively\n") in out  # fmt: skip
    left = "left to FetchContent ({}): not pinned by qola, and qola verify does not cover it; "
    assert ("qola: LibA: " + left.format("PATCH_COMMAND") + "qola pins no declaration that "
            "changes its sources") in err  # fmt: skip
    why = "qola's name for it, lib_a, is one name to CMake with lib.a, which qola serves"
    assert f"qola: lib_a: {left.format(why)}renaming one lets qola pin both" in err
    assert ("qola: _x: " + left.format("a qola name starts with a letter or digit")
            + "renaming the declaration lets qola pin it") in err  # fmt: skip
    assert (app.build / "_deps" / "liba-src" / "patched.txt").is_file()
    assert app.fetched() == {
        "lib.a": (app.src / "3rdparty" / "lib_a").as_posix(),  # FetchContent's own name
        "lib_a": (app.build / "_deps" / "lib_a-src").as_posix(),
        "_x": (app.build / "_deps" / "_x-src").as_posix(),
    }
    assert app.manifest.read_text() == (
        f'[deps.lib_a]\npath = "3rdparty/lib_a"\nurl = "{upstreams.liba}"\n'
        f'commit = "{upstreams.liba_v1}"\ntag = "v1.0"\n\n'
        f'[deps.libb]\npath = "3rdparty/libb"\nurl = "{upstreams.libb}"\n'
        f'commit = "{upstreams.libb_v2}"\ntag = "v2.0"\nsubmodules = false\n'
    )
    libb_dir = app.src / "3rdparty" / "libb"
    assert head(libb_dir) == upstreams.libb_v2
    assert not (libb_dir / "extern" / "nested" / "nested.h").exists()
    # The same at the next configure, from the pins file: lib_a is still left.
    again = flat(app.configure().stderr)
    assert "qola: lib_a: left to FetchContent (qola's name for it, lib_a" in again


def test_a_dependencys_own_fetchcontent_declaration_is_served_and_locked_too(
    tmp_path: Path, upstreams: Upstreams
) -> None:
    # wrapper's CMakeLists brings libb in with FetchContent, as many libraries do.
    wrapper = init_repo(tmp_path / "wrapper")
    commit_file(wrapper, "CMakeLists.txt", f"""\
cmake_minimum_required(VERSION 3.14)
project(wrapper LANGUAGES NONE)
include(FetchContent)
FetchContent_Declare(libb GIT_REPOSITORY "{upstreams.libb.as_posix()}" GIT_TAG v2.0)
FetchContent_MakeAvailable(libb)
set(WRAPPER_SAW_LIBB "${{libb_SOURCE_DIR}}" PARENT_SCOPE)
""")
    app = make_app(tmp_path, upstreams, "newest", "Ninja")
    (app.src / "CMakeLists.txt").write_text(f"""\
cmake_minimum_required(VERSION 3.24)
project(app LANGUAGES C)
include(FetchContent)
FetchContent_Declare(wrapper GIT_REPOSITORY "{wrapper.as_posix()}" GIT_TAG main)
FetchContent_MakeAvailable(wrapper)
# libb again, as the project's own too (a diamond's second edge): FetchContent's no-op.
FetchContent_Declare(libb GIT_REPOSITORY "{upstreams.libb.as_posix()}" GIT_TAG v2.0)
FetchContent_MakeAvailable(libb)
file(WRITE "${{CMAKE_BINARY_DIR}}/fetched.txt"
  "libb=${{WRAPPER_SAW_LIBB}}\\nown=${{libb_SOURCE_DIR}}\\n")
""")

    app.configure("-DQOLA_LOCK=ON")

    text = app.manifest.read_text()
    assert "[deps.wrapper]" in text and f'commit = "{upstreams.libb_v2}"\ntag = "v2.0"' in text
    libb = (app.src / "3rdparty" / "libb").as_posix()
    assert app.fetched() == {"libb": libb, "own": libb}
    assert head(app.src / "3rdparty" / "libb" / "extern" / "nested") == upstreams.nested_pin


@pytest.mark.parametrize("version", VERSIONS)
def test_a_dependency_made_available_twice_is_served_once_as_fetchcontent_does(
    version: str, tmp_path: Path, upstreams: Upstreams
) -> None:
    # The top level and a sub-project (or two dependencies of a diamond) both declare
    # and make libb available: FetchContent populates it once, the second call a no-op.
    app = make_app(tmp_path, upstreams, version, "Ninja")
    (app.src / "CMakeLists.txt").write_text(f"""\
cmake_minimum_required(VERSION 3.24)
project(app LANGUAGES C)
include(FetchContent)
FetchContent_Declare(libb GIT_REPOSITORY "{upstreams.libb.as_posix()}" GIT_TAG v2.0)
FetchContent_MakeAvailable(libb)
add_subdirectory(sub)
FetchContent_MakeAvailable(libb)
""")
    (app.src / "sub").mkdir()
    (app.src / "sub" / "CMakeLists.txt").write_text(f"""\
FetchContent_Declare(libb GIT_REPOSITORY "{upstreams.libb.as_posix()}" GIT_TAG v2.0)
FetchContent_MakeAvailable(libb)
file(WRITE "${{CMAKE_BINARY_DIR}}/fetched.txt" "libb=${{libb_SOURCE_DIR}}\\n")
""")
    app.configure(provider=False)  # FetchContent alone: fine
    plain = app.build.with_name("plain-build")
    app.build.rename(plain)

    proc = app.configure("-DQOLA_LOCK=ON", check=False)

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert app.fetched() == {"libb": (app.src / "3rdparty" / "libb").as_posix()}
