"""QoLA.cmake in real CMake projects, configured and built with Ninja and Makefiles.

Every test configures a small consumer project whose manifest pins the
session's upstream `lib`. The interpreter CMake runs is a wrapper that logs
each start, so the tests can tell when the module ran qola and when its stamp
let it skip Python. The same tests also run under CMake 3.21, the module's
floor; the others under the newest CMake on PyPI. Both are installed by the
README's test command into .test-cmake/.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import Upstream
from repos import git, head

import qola
from qola.base.requirements import needed
from qola.output.cmake_results import cmake_dir
from qola.repo import store

REPO = Path(__file__).resolve().parent.parent  # the checkout under test
MODULE = REPO / "cmake" / "QoLA.cmake"
BAD_SHA = "0123456789abcdef0123456789abcdef01234567"

CONSUMER = """\
cmake_minimum_required(VERSION 3.21)
project(consumer LANGUAGES NONE)
include("@MODULE@")
qola_checkout(MANIFEST qola.toml ${CONSUMER_ARGS})
file(WRITE "${CMAKE_BINARY_DIR}/exported.txt"
  "deps=${QOLA_DEPENDENCIES}\\nsha=${QOLA_LIB_SHA}\\nsource_dir=${QOLA_LIB_SOURCE_DIR}\\n")
# Another configure step that reads the dependency, as a version stamp would.
execute_process(COMMAND git rev-parse HEAD
  WORKING_DIRECTORY "${QOLA_LIB_SOURCE_DIR}"
  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE
  COMMAND_ERROR_IS_FATAL ANY)
file(APPEND "${CMAKE_BINARY_DIR}/configure-log.txt" "${head}\\n")
file(CONFIGURE OUTPUT lib-head.txt CONTENT "@head@\\n" @ONLY)
add_custom_command(OUTPUT built-lib-head.txt
  COMMAND "${CMAKE_COMMAND}" -E copy lib-head.txt built-lib-head.txt
  DEPENDS "${CMAKE_BINARY_DIR}/lib-head.txt")
add_custom_target(consumer ALL DEPENDS built-lib-head.txt)
"""

GENERATORS = ("Ninja", "Unix Makefiles")


def manifest_text(url: Path, commit: str) -> str:
    return f'[deps.lib]\npath = "3rdparty/lib"\nurl = "{url}"\ncommit = "{commit}"\n'


@dataclass
class Consumer:
    """A CMake project pinning `lib`, its build folder and the tools to drive it."""

    src: Path
    build: Path
    cmake: Path
    generator: str
    python_log: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def manifest(self) -> Path:
        return self.src / "qola.toml"

    @property
    def lib(self) -> Path:
        return self.src / "3rdparty" / "lib"

    def configure(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self._run(
            [
                str(self.cmake),
                "-S",
                str(self.src),
                "-B",
                str(self.build),
                "-G",
                self.generator,
                *args,
            ],
            check,
        )

    def build_(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self._run([str(self.cmake), "--build", str(self.build), *args], check)

    def _run(self, command: list[str], check: bool) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        proc = subprocess.run(
            command, capture_output=True, text=True, env={**env, **self.env}, check=False
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def pin(self, url: Path, commit: str) -> None:
        self.manifest.write_text(manifest_text(url, commit))

    def exported(self) -> dict[str, str]:
        text = (self.build / "exported.txt").read_text()
        return dict(line.split("=", 1) for line in text.splitlines())

    def configure_log(self) -> list[str]:
        return (self.build / "configure-log.txt").read_text().split()

    def python_starts(self) -> int:
        """How many times CMake started the interpreter (import check and qola runs)."""
        return len(self.python_log.read_text().splitlines()) if self.python_log.exists() else 0


def flat(text: str) -> str:
    """CMake re-wraps message text: compare with whitespace runs folded to one space."""
    return " ".join(text.split())


# --- CMake binaries ---------------------------------------------------------


# The README's test command installs both from PyPI before pytest runs (no test
# touches the network): `pip install --target .test-cmake/<version> cmake…`.
TEST_CMAKE = REPO / ".test-cmake"


def _pypi_cmake(version: str) -> Path:
    binary = TEST_CMAKE / version / "cmake" / "data" / "bin" / "cmake"
    if not binary.is_file():
        pytest.fail(
            f"{binary} is missing: run the README's test command, which installs it with "
            f"pip install --target {TEST_CMAKE / version} cmake"
        )
    return binary


@pytest.fixture(scope="session")
def cmake_3_21() -> Path:
    """CMake 3.21, the module's floor, from PyPI."""
    found = _pypi_cmake("3.21")
    version = subprocess.run([str(found), "--version"], capture_output=True, text=True)
    assert version.stdout.startswith("cmake version 3.21."), version.stdout
    return found


@pytest.fixture(scope="session")
def cmake_system() -> Path:
    """The newest CMake on PyPI."""
    return _pypi_cmake("newest")


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An interpreter that cannot import qola: a venv without site packages."""
    folder = tmp_path_factory.mktemp("bare-venv")
    venv.create(folder, with_pip=False)
    return folder / "bin" / "python"


def make_consumer(
    tmp_path: Path, upstream: Upstream, cmake: Path, generator: str, commit: str
) -> Consumer:
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(CONSUMER.replace("@MODULE@", MODULE.as_posix()))
    log = tmp_path / "python-starts.log"
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    consumer = Consumer(
        src,
        tmp_path / "build",
        cmake,
        generator,
        log,
        # The qola under test, whatever else the interpreter has installed.
        {"PYTHONPATH": str(REPO), "QOLA_PYTHON": str(wrapper)},
    )
    consumer.pin(upstream.lib, commit)
    return consumer


@pytest.fixture(params=GENERATORS, ids=["ninja", "make"])
def consumer_gen(request: pytest.FixtureRequest, tmp_path: Path, upstream: Upstream) -> Consumer:
    """The consumer at lib_v1, for each generator, with the system CMake."""
    cmake = request.getfixturevalue("cmake_system")
    return make_consumer(tmp_path, upstream, cmake, request.param, upstream.lib_v1)


@pytest.fixture(params=GENERATORS, ids=["ninja", "make"])
def consumer_3_21(
    request: pytest.FixtureRequest, tmp_path: Path, upstream: Upstream, cmake_3_21: Path
) -> Consumer:
    """The consumer at lib_v1, for each generator, with CMake 3.21."""
    return make_consumer(tmp_path, upstream, cmake_3_21, request.param, upstream.lib_v1)


@pytest.fixture
def consumer(tmp_path: Path, upstream: Upstream, cmake_system: Path) -> Consumer:
    """The consumer at lib_v1, with the system CMake and Ninja."""
    return make_consumer(tmp_path, upstream, cmake_system, "Ninja", upstream.lib_v1)


# --- the tests --------------------------------------------------------------


def test_first_configure_checks_out_and_exports_variables(
    consumer_gen: Consumer, upstream: Upstream
) -> None:
    proc = consumer_gen.configure()

    assert head(consumer_gen.lib) == upstream.lib_v1
    assert head(consumer_gen.lib / "extern" / "nested") == upstream.nested_v1
    assert consumer_gen.exported() == {
        "deps": "lib",
        "sha": upstream.lib_v1,
        "source_dir": consumer_gen.lib.as_posix(),
    }
    assert f"-- qola: lib 3rdparty/lib {upstream.lib_v1[:12]}" in proc.stdout
    consumer_gen.build_()
    assert (consumer_gen.build / "built-lib-head.txt").read_text() == upstream.lib_v1 + "\n"


def test_unchanged_build_does_not_rerun_configure(consumer_gen: Consumer) -> None:
    consumer_gen.configure()
    consumer_gen.build_()
    consumer_gen.build_()

    assert len(consumer_gen.configure_log()) == 1


def test_pin_edit_reruns_configure_on_build_and_moves_dependency(
    consumer_gen: Consumer, upstream: Upstream
) -> None:
    consumer_gen.configure()
    consumer_gen.build_()

    consumer_gen.pin(upstream.lib, upstream.lib_v2)
    consumer_gen.build_()

    assert head(consumer_gen.lib) == upstream.lib_v2
    assert head(consumer_gen.lib / "extern" / "nested") == upstream.nested_v2
    # The project's own execute_process ran again, after the dependency moved.
    assert consumer_gen.configure_log() == [upstream.lib_v1, upstream.lib_v2]
    assert consumer_gen.exported()["sha"] == upstream.lib_v2
    assert (consumer_gen.build / "built-lib-head.txt").read_text() == upstream.lib_v2 + "\n"
    consumer_gen.build_()
    assert len(consumer_gen.configure_log()) == 2


def test_bad_pin_fails_configure_naming_manifest_dependency_and_sha(
    consumer: Consumer, upstream: Upstream
) -> None:
    consumer.pin(upstream.lib, BAD_SHA)

    proc = consumer.configure(check=False)

    assert_bad_pin_error(proc, consumer, upstream)


def assert_bad_pin_error(
    proc: subprocess.CompletedProcess[str], consumer: Consumer, upstream: Upstream
) -> None:
    assert proc.returncode != 0
    message = flat(proc.stderr)
    assert "CMake Error at" in message
    assert f"qola: {consumer.manifest}: checkout failed (exit 3: a git operation failed):" in (
        message
    )
    assert f"qola: lib: commit {BAD_SHA} is not in {upstream.lib}" in message
    assert "-- Configuring incomplete, errors occurred!" in proc.stdout


def test_cmake_3_21_checks_out_rebuilds_on_pin_edit_and_skips_python_when_unchanged(
    consumer_3_21: Consumer, upstream: Upstream
) -> None:
    consumer = consumer_3_21
    consumer.configure()
    assert head(consumer.lib) == upstream.lib_v1
    assert consumer.exported()["sha"] == upstream.lib_v1
    consumer.build_()
    consumer.build_()
    assert consumer.configure_log() == [upstream.lib_v1]

    consumer.pin(upstream.lib, upstream.lib_v2)
    consumer.build_()
    assert head(consumer.lib / "extern" / "nested") == upstream.nested_v2
    assert consumer.configure_log() == [upstream.lib_v1, upstream.lib_v2]
    assert (consumer.build / "built-lib-head.txt").read_text() == upstream.lib_v2 + "\n"

    starts = consumer.python_starts()
    consumer.configure()
    assert consumer.python_starts() == starts

    consumer.pin(upstream.lib, BAD_SHA)
    assert_bad_pin_error(consumer.configure(check=False), consumer, upstream)


def test_reconfigure_with_nothing_changed_does_not_start_python(
    consumer: Consumer, upstream: Upstream
) -> None:
    consumer.configure()
    starts = consumer.python_starts()

    proc = consumer.configure()

    assert consumer.python_starts() == starts
    assert "-- qola: qola.toml: 1 dependency at its pin, unchanged since the last configure\n" in (
        proc.stdout
    )
    assert consumer.exported()["sha"] == upstream.lib_v1


def test_reconfigure_after_a_dependency_folder_became_a_symlink_out_of_the_source_runs_qola(
    consumer: Consumer, tmp_path: Path
) -> None:
    consumer.configure()
    outside = tmp_path / "outside"
    outside.mkdir()
    (consumer.src / "3rdparty").rename(outside / "3rdparty")
    (consumer.src / "3rdparty").symlink_to(outside / "3rdparty")
    starts = consumer.python_starts()

    proc = consumer.configure(check=False)

    # The stamp records where each dependency folder leads (file(REAL_PATH)): not fooled.
    assert consumer.python_starts() > starts
    assert proc.returncode != 0
    assert "leaves the root through a symlink" in proc.stdout + proc.stderr


def test_reconfigure_after_dependency_moved_by_hand_runs_qola_and_restores_pin(
    consumer: Consumer, upstream: Upstream
) -> None:
    consumer.configure()
    # Reachable from a remote-tracking ref, so qola may move it back without --force.
    git(consumer.lib, "fetch", "-q", "origin", "+refs/heads/main:refs/remotes/origin/main")
    git(consumer.lib, "checkout", "-q", "--detach", upstream.lib_tip)
    starts = consumer.python_starts()

    consumer.configure()

    assert consumer.python_starts() > starts
    assert head(consumer.lib) == upstream.lib_v1


def test_reconfigure_after_nested_submodule_moved_by_hand_runs_qola_and_restores_it(
    consumer: Consumer, upstream: Upstream
) -> None:
    consumer.configure()
    nested = consumer.lib / "extern" / "nested"
    git(nested, "fetch", "-q", "origin", "+refs/heads/main:refs/remotes/origin/main")
    git(nested, "checkout", "-q", "--detach", upstream.nested_v2)
    starts = consumer.python_starts()

    consumer.configure()

    assert consumer.python_starts() > starts
    assert head(nested) == upstream.nested_v1


def make_patch(tmp_path: Path, upstream: Upstream, name: str, text: str) -> str:
    """A format-patch that writes file `name` in lib, made on a throwaway clone at lib_v1."""
    work = tmp_path / f"patch-work-{len(list(tmp_path.glob('patch-work-*')))}"
    git(tmp_path, "clone", "-q", str(upstream.lib), str(work))
    git(work, "checkout", "-q", "--detach", upstream.lib_v1)
    (work / name).write_text(text)
    git(work, "add", name)
    git(work, "commit", "-q", "-m", f"{name}: {text.strip()}")
    return git(work, "format-patch", "-1", "--stdout") + "\n"


def test_patch_file_edit_or_addition_reruns_configure_on_build(
    consumer: Consumer, upstream: Upstream, tmp_path: Path
) -> None:
    patches = consumer.src / "patches"
    patches.mkdir()
    (patches / "0001-readme.patch").write_text(
        make_patch(tmp_path, upstream, "README", "patched once\n")
    )
    consumer.manifest.write_text(
        manifest_text(upstream.lib, upstream.lib_v1) + 'patches = "patches"\n'
    )
    consumer.configure()
    consumer.build_()

    (patches / "0001-readme.patch").write_text(
        make_patch(tmp_path, upstream, "README", "patched twice\n")
    )
    consumer.build_()
    assert len(consumer.configure_log()) == 2

    (patches / "0002-more.patch").write_text(make_patch(tmp_path, upstream, "EXTRA", "another\n"))
    consumer.build_()
    assert len(consumer.configure_log()) == 3
    consumer.build_()
    assert len(consumer.configure_log()) == 3


def test_local_work_stops_configure_with_force_hint_and_qola_force_moves_on(
    consumer: Consumer, upstream: Upstream
) -> None:
    consumer.configure()
    (consumer.lib / "README").write_text("my work\n")
    consumer.pin(upstream.lib, upstream.lib_v2)

    refused = consumer.configure(check=False)

    assert refused.returncode != 0
    message = flat(refused.stderr)
    assert f"qola: {consumer.manifest}: checkout failed (exit 4: refused: local work" in message
    assert f"or on every configure: cmake -DQOLA_FORCE=ON {consumer.build}" in message
    assert head(consumer.lib) == upstream.lib_v1
    assert (consumer.lib / "README").read_text() == "my work\n"

    consumer.configure("-DQOLA_FORCE=ON")

    assert head(consumer.lib) == upstream.lib_v2
    assert git(consumer.lib, "for-each-ref", "--format=%(refname)", store.BACKUP_PREFIX)


def test_source_dir_cache_variable_uses_folder_as_is(
    consumer: Consumer, upstream: Upstream, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "my-lib"
    git(tmp_path, "clone", "-q", str(upstream.lib), str(elsewhere))

    proc = consumer.configure(f"-DQOLA_SOURCE_DIR_LIB={elsewhere}")

    assert not consumer.lib.exists()
    assert consumer.exported() == {
        "deps": "lib",
        "sha": upstream.lib_v1,  # the pin, whatever the override holds
        "source_dir": elsewhere.as_posix(),
    }
    assert consumer.configure_log() == [upstream.lib_tip]
    assert f"-- qola: lib 3rdparty/lib {upstream.lib_v1[:12]} overridden by {elsewhere}" in (
        proc.stdout
    )


def test_source_dir_environment_variable_seeds_the_cache_setting(
    consumer: Consumer, upstream: Upstream, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "my-lib"
    git(tmp_path, "clone", "-q", str(upstream.lib), str(elsewhere))
    consumer.env["QOLA_SOURCE_DIR_LIB"] = str(elsewhere)

    consumer.configure()

    assert not consumer.lib.exists()
    assert consumer.exported()["source_dir"] == elsewhere.as_posix()
    cache = (consumer.build / "CMakeCache.txt").read_text()
    assert f"QOLA_SOURCE_DIR_LIB:PATH={elsewhere}\n" in cache

    # From then on the cache decides, whatever the environment says.
    consumer.configure("-DQOLA_SOURCE_DIR_LIB=")

    assert head(consumer.lib) == upstream.lib_v1
    assert consumer.exported()["source_dir"] == consumer.lib.as_posix()


def test_skip_checkout_leaves_dependency_and_warns_about_mismatch(
    consumer: Consumer, upstream: Upstream
) -> None:
    consumer.configure()
    consumer.pin(upstream.lib, upstream.lib_v2)

    proc = consumer.configure("-DQOLA_SKIP_CHECKOUT=ON")

    assert head(consumer.lib) == upstream.lib_v1
    assert "CMake Warning" in proc.stderr
    assert "QOLA_SKIP_CHECKOUT is ON, so they were left as they are" in flat(proc.stderr)
    mismatch = "wrong-commit: HEAD is"
    assert (proc.stdout + proc.stderr).count(mismatch) == 1, proc.stdout + proc.stderr
    assert mismatch in proc.stderr  # in the warning, not again as STATUS lines
    assert consumer.exported()["sha"] == upstream.lib_v2
    assert consumer.configure_log()[-1] == upstream.lib_v1


def test_skip_checkout_from_environment_clones_nothing(consumer: Consumer) -> None:
    consumer.env["QOLA_SKIP_CHECKOUT"] = "1"

    proc = consumer.configure(check=False)

    assert not consumer.lib.exists()
    assert "QOLA_SKIP_CHECKOUT is ON" in flat(proc.stderr)


def test_python_executable_is_the_interpreter_when_qola_python_is_unset(
    consumer: Consumer,
) -> None:
    wrapper = consumer.env.pop("QOLA_PYTHON")

    consumer.configure(f"-DPython_EXECUTABLE={wrapper}")

    assert consumer.python_starts() > 0
    assert consumer.lib.exists()


def test_deps_argument_checks_out_only_the_named_dependencies(
    consumer: Consumer, upstream: Upstream
) -> None:
    consumer.manifest.write_text(
        manifest_text(upstream.lib, upstream.lib_v1)
        + f'\n[deps.other]\npath = "3rdparty/other"\nurl = "{upstream.nested}"\n'
        f'commit = "{upstream.nested_v1}"\n'
    )

    consumer.configure("-DCONSUMER_ARGS=DEPS;lib")

    assert consumer.lib.exists()
    assert not (consumer.src / "3rdparty" / "other").exists()
    assert consumer.exported()["deps"] == "lib"


def test_unknown_argument_fails_configure(consumer: Consumer) -> None:
    proc = consumer.configure("-DCONSUMER_ARGS=QUIET;BOGUS;1", check=False)

    assert proc.returncode != 0
    assert "qola_checkout: unknown arguments: BOGUS;1" in flat(proc.stderr)
    assert not consumer.lib.exists()
    assert consumer.python_starts() == 0


def test_interpreter_without_qolas_dependencies_fails_with_exact_pip_command(
    consumer: Consumer, bare_python: Path
) -> None:
    consumer.env = {"QOLA_PYTHON": str(bare_python)}  # and no PYTHONPATH

    proc = consumer.configure(check=False)

    # The module of a qola checkout runs that checkout's package: only the
    # dependencies can be missing; each is named, with the line that installs them, or a
    # virtual environment with the checkout installed, which brings them.
    assert proc.returncode != 0
    message = flat(proc.stderr)
    needs = [requirement for _, requirement in needed()]
    names = [r.partition(">")[0] for r in needs]
    names = ", ".join(names[:-1]) + " and " + names[-1]
    assert f"qola: {bare_python} cannot run qola from {REPO}: {names} are not installed" in (
        message
    )
    lines = [line.strip() for line in proc.stderr.splitlines()]
    assert f'"{bare_python}" -m pip install ' + " ".join(f'"{r}"' for r in needs) in lines
    assert f'"{consumer.build}/qola-venv/bin/python" -m pip install "{REPO}"' in lines
    assert f'cmake -DQOLA_PYTHON="{consumer.build}/qola-venv/bin/python" "{consumer.build}"' in (
        lines
    )
    assert not consumer.lib.exists()


def test_quiet_checkout_prints_no_summary(consumer: Consumer) -> None:
    proc = consumer.configure("-DCONSUMER_ARGS=QUIET")

    assert "qola:" not in proc.stdout
    assert consumer.lib.exists()


def test_verify_target_passes_then_fails_on_dirty_dependency(consumer: Consumer) -> None:
    consumer.configure()
    consumer.build_("--target", "qola-verify")

    (consumer.lib / "README").write_text("edited\n")
    proc = consumer.build_("--target", "qola-verify", check=False)

    assert proc.returncode != 0
    assert "dirty" in proc.stdout + proc.stderr


def test_find_package_finds_module_in_cmake_dir(
    tmp_path: Path, cmake_system: Path, upstream: Upstream
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21)\n"
        "project(found LANGUAGES NONE)\n"
        "find_package(QoLA 0.1 CONFIG REQUIRED)\n"
        'message(STATUS "QoLA ${QoLA_VERSION} from ${QoLA_DIR}")\n'
        "if(NOT COMMAND qola_checkout)\n"
        '  message(FATAL_ERROR "no qola_checkout")\n'
        "endif()\n"
        "find_package(QoLA 99 CONFIG QUIET)\n"
        'message(STATUS "QoLA 99 found: ${QoLA_FOUND}")\n'
    )
    proc = subprocess.run(
        [
            str(cmake_system),
            "-S",
            str(src),
            "-B",
            str(tmp_path / "build"),
            "-G",
            "Ninja",
            f"-DCMAKE_PREFIX_PATH={cmake_dir()}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )

    assert proc.returncode == 0, proc.stderr
    assert f"-- QoLA {qola.__version__} from {cmake_dir()}" in proc.stdout
    assert "-- QoLA 99 found: 0" in proc.stdout


def test_cmake_dir_is_the_repository_cmake_folder_in_a_source_checkout() -> None:
    assert cmake_dir() == REPO / "cmake"


def test_cmake_names_the_meaning_of_every_exit_code_help_lists(
    cmake_system: Path, tmp_path: Path
) -> None:
    """A failed qola_checkout() says what qola's exit code means, for each code --help lists
    (129 too: a closed terminal's SIGHUP)."""
    from test_cli import help_exit_codes

    from qola.cli import EXIT_CODES

    codes = sorted(code for code in help_exit_codes(EXIT_CODES) if code != 0)
    script = tmp_path / "meanings.cmake"
    script.write_text(
        f'include("{(REPO / "cmake" / "QoLARun.cmake").as_posix()}")\n'
        + "".join(f'_qola_exit_meaning(m {code})\nmessage(STATUS "${{m}}")\n' for code in codes)
    )
    proc = subprocess.run(
        [str(cmake_system), "-P", str(script)], capture_output=True, text=True, check=False
    )

    assert proc.returncode == 0, proc.stderr
    said = [line.removeprefix("-- ") for line in proc.stdout.splitlines()]
    assert [line.split(":", 1)[0] for line in said] == [f"exit {code}" for code in codes]
    assert "exit 129: hung up (SIGHUP)" in said
