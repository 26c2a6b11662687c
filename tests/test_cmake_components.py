"""qola_checkout() in builds of several directories (real CMake, 3.21 and the newest,
Ninja and Makefiles): components with their own manifests, a subdirectory's
configure dependencies, and TransformerEngine's shape with docs/cmake.md's snippet."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import Upstream
from repos import git, head, snapshot
from test_cmake import GENERATORS, REPO, _pypi_cmake, flat

COMBINATIONS = [(v, g) for v in ("3.21", "newest") for g in GENERATORS]
IDS = [f"{v}-{'ninja' if g == 'Ninja' else 'make'}" for v, g in COMBINATIONS]

TOP = """\
cmake_minimum_required(VERSION 3.21)
project(app LANGUAGES NONE)
include("@MODULE@")
@BODY@
add_custom_target(app ALL)
"""

COMPONENT = """\
qola_checkout(MANIFEST qola.toml)
file(WRITE "${CMAKE_BINARY_DIR}/@NAME@.txt" "deps=${QOLA_DEPENDENCIES}\\n"
  "lib=${QOLA_LIB_SHA} ${QOLA_LIB_SOURCE_DIR}\\nother=${QOLA_OTHER_SHA}\\n")
"""


@dataclass
class Build:
    """A source folder (a git repository, so that every manifest has one root), its build
    folder, and an interpreter that logs the manifest of each qola run."""

    src: Path
    build: Path
    cmake: Path
    generator: str
    log: Path

    def run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(command, capture_output=True, text=True, check=False)
        if check and proc.returncode != 0:
            raise AssertionError(f"{command} failed:\n{proc.stdout}\n{proc.stderr}")
        return proc

    def configure(self, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run(
            str(self.cmake), "-S", str(self.src), "-B", str(self.build), "-G", self.generator,
            f"-DQOLA_PYTHON={self.log.with_suffix('.sh')}", check=check,
        )  # fmt: skip

    def build_(self, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run(str(self.cmake), "--build", str(self.build), check=check)

    def qola_runs(self) -> list[str]:
        """The manifest of each qola checkout started so far."""
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return [re.search(r"--manifest (\S+)", line)[1] for line in lines if "--manifest" in line]

    def exported(self, name: str) -> dict[str, str]:
        text = (self.build / f"{name}.txt").read_text()
        return dict(line.split("=", 1) for line in text.splitlines())


def make_build(tmp_path: Path, version: str, generator: str, files: dict[str, str]) -> Build:
    src = tmp_path / "src"
    for name, text in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(
            text.replace("@MODULE@", (REPO / "cmake" / "QoLA.cmake").as_posix())
        )
    git(src, "init", "-q", "-b", "main")
    log = tmp_path / "python.log"
    wrapper = log.with_suffix(".sh")
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return Build(src, tmp_path / "build", _pypi_cmake(version), generator, log)


def pin(name: str, url: Path, commit: str, path: str | None = None) -> str:
    where = path or f"3rdparty/{name}"
    return f'[deps.{name}]\npath = "{where}"\nurl = "{url}"\ncommit = "{commit}"\n'


def two_components(tmp_path: Path, upstream: Upstream, version: str, generator: str,
                   b_lib: str) -> Build:  # fmt: skip
    """Component a pins lib; component b pins lib (at b_lib) and other, all in 3rdparty/."""
    body = "add_subdirectory(a)\nadd_subdirectory(b)"
    return make_build(tmp_path, version, generator, {
        "CMakeLists.txt": TOP.replace("@BODY@", body),
        "a/CMakeLists.txt": COMPONENT.replace("@NAME@", "a"),
        "a/qola.toml": pin("lib", upstream.lib, upstream.lib_v1),
        "b/CMakeLists.txt": COMPONENT.replace("@NAME@", "b"),
        "b/qola.toml": pin("lib", upstream.lib, b_lib)
        + pin("other", upstream.nested, upstream.nested_v1),
    })  # fmt: skip


@pytest.mark.parametrize(("version", "generator"), COMBINATIONS, ids=IDS)
def test_two_components_keep_their_own_results_stamps_and_variables(
    version: str, generator: str, tmp_path: Path, upstream: Upstream
) -> None:
    build = two_components(tmp_path, upstream, version, generator, upstream.lib_v1)
    a, b = build.src / "a" / "qola.toml", build.src / "b" / "qola.toml"

    proc = build.configure()

    lib, other = build.src / "3rdparty" / "lib", build.src / "3rdparty" / "other"
    assert head(lib) == upstream.lib_v1  # pinned by both, to the same commit: fine
    assert head(other) == upstream.nested_v1
    assert build.exported("a") == {
        "deps": "lib", "lib": f"{upstream.lib_v1} {lib.as_posix()}", "other": "",
    }  # fmt: skip
    assert build.exported("b") == {
        "deps": "lib;other", "lib": f"{upstream.lib_v1} {lib.as_posix()}",
        "other": upstream.nested_v1,
    }  # fmt: skip
    assert "-- qola: a/qola.toml: 1 dependency at its pin" in proc.stdout
    assert "-- qola: b/qola.toml: 2 dependencies at their pins" in proc.stdout
    assert len(list((build.build / "qola").glob("qola-*.cmake"))) == 2
    assert build.qola_runs() == [str(a), str(b)]

    build.build_()
    again = build.configure()
    assert build.qola_runs() == [str(a), str(b)]  # both stamps hold: no Python
    assert "-- qola: b/qola.toml: 2 dependencies at their pins, unchanged" in again.stdout

    # Only b's pin moves: only b runs qola, and a's results stand.
    (build.src / "b" / "qola.toml").write_text(
        pin("lib", upstream.lib, upstream.lib_v1)
        + pin("other", upstream.nested, upstream.nested_v2)
    )
    build.build_()
    assert build.qola_runs() == [str(a), str(b), str(b)]
    assert head(other) == upstream.nested_v2
    assert build.exported("b")["other"] == upstream.nested_v2
    assert build.exported("a")["deps"] == "lib"
    assert head(lib) == upstream.lib_v1


@pytest.mark.parametrize("edited", ["a", "b"], ids=["first-edited", "second-edited"])
@pytest.mark.parametrize(("version", "generator"), COMBINATIONS, ids=IDS)
def test_two_manifests_pinning_one_folder_to_two_commits_stop_before_anything_moves(
    version: str, generator: str, edited: str, tmp_path: Path, upstream: Upstream
) -> None:
    build = two_components(tmp_path, upstream, version, generator, upstream.lib_v1)
    build.configure()
    lib = build.src / "3rdparty" / "lib"
    a, b = build.src / "a" / "qola.toml", build.src / "b" / "qola.toml"
    if edited == "a":
        a.write_text(pin("lib", upstream.lib, upstream.lib_v2))
    else:
        b.write_text(
            pin("lib", upstream.lib, upstream.lib_v2)
            + pin("other", upstream.nested, upstream.nested_v1)
        )
    before = snapshot(build.src / "3rdparty")

    proc = build.configure(check=False)

    assert proc.returncode != 0
    message = flat(proc.stderr)
    mine, theirs = (a, b) if edited == "a" else (b, a)
    when = (
        "which a later qola_checkout() of this build checks out"
        if edited == "a"
        else "checked out earlier in this configure"
    )
    assert (
        f"qola: {mine}: checkout failed (exit 2: the manifest or the command line is invalid)"
    ) in message
    assert (
        f"qola: lib: {lib} is pinned to {upstream.lib_v2[:12]} by {mine} and to "
        f"{upstream.lib_v1[:12]} by {theirs}, {when}; one folder cannot hold both, so "
        "nothing was changed"
    ) in message
    assert "hint: pin the same commit in both manifests, or give the dependency its own path" in (
        message
    )
    assert snapshot(build.src / "3rdparty") == before
    assert head(lib) == upstream.lib_v1


@pytest.mark.parametrize(("version", "generator"), COMBINATIONS, ids=IDS)
def test_a_qola_checkout_no_longer_made_stops_constraining_the_others(
    version: str, generator: str, tmp_path: Path, upstream: Upstream
) -> None:
    build = two_components(tmp_path, upstream, version, generator, upstream.lib_v1)
    build.configure()
    lib = build.src / "3rdparty" / "lib"
    a, b = build.src / "a" / "qola.toml", build.src / "b" / "qola.toml"
    top = build.src / "CMakeLists.txt"

    # b leaves the build in the same edit that moves a's pin away from b's: the
    # configure cannot know b is gone before its end, and says how to forget it.
    top.write_text(top.read_text().replace("add_subdirectory(b)\n", ""))
    a.write_text(pin("lib", upstream.lib, upstream.lib_v2))
    before = snapshot(build.src / "3rdparty")
    proc = build.configure(check=False)
    assert proc.returncode != 0
    assert (
        f"if no qola_checkout() reads {b} any more, forget the calls of the last configure: "
        f"cmake -U_QOLA_CALLS {build.build}"
    ) in flat(proc.stderr)
    assert snapshot(build.src / "3rdparty") == before

    build.run(str(build.cmake), "-U_QOLA_CALLS", str(build.build))
    assert head(lib) == upstream.lib_v2

    # A configure that completes forgets the calls it did not make by itself.
    without_b = top.read_text()
    with_b = without_b.replace("add_subdirectory(a)", "add_subdirectory(a)\nadd_subdirectory(b)")
    top.write_text(with_b)
    b.write_text(
        pin("lib", upstream.lib, upstream.lib_v2)
        + pin("other", upstream.nested, upstream.nested_v1)
    )
    build.configure()
    top.write_text(without_b)  # b leaves the build; its manifest stays, pinning lib_v2
    build.configure()
    a.write_text(pin("lib", upstream.lib, upstream.lib_v1))
    build.configure()  # b's pin no longer counts
    assert head(lib) == upstream.lib_v1


SUBDIRECTORY = """\
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  "${CMAKE_CURRENT_SOURCE_DIR}/settings.txt")
"""


@pytest.mark.parametrize(("version", "generator"), COMBINATIONS, ids=IDS)
def test_configure_depends_of_a_subdirectory_reruns_the_parents_qola_checkout(
    version: str, generator: str, tmp_path: Path, upstream: Upstream
) -> None:
    body = (
        "qola_checkout(MANIFEST qola.toml)\n"
        'file(APPEND "${CMAKE_BINARY_DIR}/top-configures.txt" "${QOLA_LIB_SHA}\\n")\n'
        "add_subdirectory(sub)"
    )
    build = make_build(tmp_path, version, generator, {
        "CMakeLists.txt": TOP.replace("@BODY@", body),
        "qola.toml": pin("lib", upstream.lib, upstream.lib_v1),
        "sub/CMakeLists.txt": SUBDIRECTORY,
        "sub/settings.txt": "one\n",
    })  # fmt: skip
    build.configure()
    build.build_()
    configures = build.build / "top-configures.txt"
    assert configures.read_text() == f"{upstream.lib_v1}\n"

    (build.src / "sub" / "settings.txt").write_text("two\n")
    proc = build.build_()

    # The whole configure ran again, the top-level qola_checkout() with it.
    assert configures.read_text() == f"{upstream.lib_v1}\n" * 2
    assert "-- qola: qola.toml: 1 dependency at its pin" in proc.stdout
    build.build_()
    assert configures.read_text() == f"{upstream.lib_v1}\n" * 2


def after_snippet() -> str:
    """docs/cmake.md's "after" block for TransformerEngine, as it is written there."""
    text = (REPO / "docs" / "cmake.md").read_text()
    found = re.search(
        r"```cmake\n(# transformer_engine/common/ck_fused_attn/CMakeLists.txt, after\n.*?)```",
        text,
        re.S,
    )
    assert found, "docs/cmake.md lost its TransformerEngine 'after' block"
    return found[1]


def te_shaped(tmp_path: Path, upstream: Upstream, version: str, generator: str,
              manifest: str) -> Build:  # fmt: skip
    """A TransformerEngine-shaped tree: docs/cmake.md's "after" snippet in a component,
    AITER a submodule at 3rdparty/aiter (not checked out, as a fresh clone has it), qola
    vendored at 3rdparty/qola; the component writes what it got to aiter.txt."""
    component = after_snippet() + (
        'file(WRITE "${CMAKE_BINARY_DIR}/aiter.txt" "${__AITER_SOURCE_DIR} ${QOLA_AITER_SHA}\\n")\n'
    )
    build = make_build(tmp_path, version, generator, {
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.21)\nproject(te LANGUAGES NONE)\n"
        "add_subdirectory(transformer_engine/common/ck_fused_attn)\n",
        "transformer_engine/common/ck_fused_attn/CMakeLists.txt": component,
        "qola.toml": manifest,
    })  # fmt: skip
    te = build.src
    (te / "3rdparty").mkdir()
    (te / "3rdparty" / "qola").symlink_to(REPO)  # qola vendored as TE has it
    git(te, "submodule", "add", "-q", str(upstream.lib), "3rdparty/aiter")
    git(te / "3rdparty" / "aiter", "checkout", "-q", "--detach", upstream.lib_v1)
    git(te, "add", "-A", ":!3rdparty/qola")
    git(te, "commit", "-q", "-m", "TE, AITER a submodule")
    git(te, "submodule", "deinit", "-q", "-f", "3rdparty/aiter")  # as a fresh clone has it
    return build


@pytest.mark.parametrize(("version", "generator"), COMBINATIONS, ids=IDS)
def test_te_shaped_tree_after_snippet_checks_out_and_follows_pin_edits(
    version: str, generator: str, tmp_path: Path, upstream: Upstream
) -> None:
    legacy = f'[qola]\naiter_commit = "{upstream.lib_v1}"\n'
    build = te_shaped(tmp_path, upstream, version, generator, legacy)
    te = build.src

    build.configure()
    build.build_()

    aiter = te / "3rdparty" / "aiter"
    assert head(aiter) == upstream.lib_v1
    assert head(aiter / "extern" / "nested") == upstream.nested_v1
    assert (build.build / "aiter.txt").read_text() == f"{aiter.as_posix()} {upstream.lib_v1}\n"

    (te / "qola.toml").write_text(f'[qola]\naiter_commit = "{upstream.lib_v2}"\n')
    build.build_()  # the pin edit re-runs configure by itself

    assert head(aiter) == upstream.lib_v2
    assert head(aiter / "extern" / "nested") == upstream.nested_v2
    assert (build.build / "aiter.txt").read_text() == f"{aiter.as_posix()} {upstream.lib_v2}\n"


@pytest.mark.parametrize("form", ["legacy", "deps"])
@pytest.mark.parametrize(("version", "generator"), COMBINATIONS, ids=IDS)
def test_configure_after_the_one_that_cloned_a_submodule_dependency_starts_no_python(
    version: str, generator: str, form: str, tmp_path: Path, upstream: Upstream
) -> None:
    manifest = (
        f'[qola]\naiter_commit = "{upstream.lib_v1}"\n'
        if form == "legacy"
        else pin("aiter", upstream.lib, upstream.lib_v1)
    )
    build = te_shaped(tmp_path, upstream, version, generator, manifest)
    build.configure()  # clones AITER and initialises the submodule in the root's config
    assert head(build.src / "3rdparty" / "aiter") == upstream.lib_v1
    starts = build.log.read_text()

    proc = build.configure()

    assert build.log.read_text() == starts  # no interpreter started
    assert "-- qola: qola.toml: 1 dependency at its pin, unchanged since the last configure" in (
        proc.stdout
    )
