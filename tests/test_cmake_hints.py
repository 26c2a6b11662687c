"""Inside a configure every hint speaks CMake: the -D setting, as the command that
configures the build again, or the one command to run once (real CMake).

And git's own advice to trust a folder in the global config, printed under
"detected dubious ownership", never reaches the user: qola's hint replaces it.
"""

from __future__ import annotations

import os
import subprocess

import procs
import pytest
from conftest import Upstream
from repos import head, snapshot
from test_cmake import GENERATORS, Consumer, _pypi_cmake, flat, make_consumer

FOREIGN_UID = 12345
GIT_ADVICE = "git config --global --add safe.directory"

needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root: chown-ing a tree to another uid is the test"
)


@pytest.fixture(params=[(v, g) for v in ("3.21", "newest") for g in GENERATORS],
                ids=lambda p: f"{p[0]}-{'ninja' if p[1] == 'Ninja' else 'make'}")  # fmt: skip
def configured(request: pytest.FixtureRequest, tmp_path, upstream: Upstream) -> Consumer:
    """The consumer at lib_v1, configured once, for each CMake and generator."""
    version, generator = request.param
    consumer = make_consumer(tmp_path, upstream, _pypi_cmake(version), generator, upstream.lib_v1)
    consumer.configure()
    return consumer


@pytest.fixture
def consumer(tmp_path, upstream: Upstream) -> Consumer:
    return make_consumer(tmp_path, upstream, _pypi_cmake("newest"), "Ninja", upstream.lib_v1)


def chown_tree(path) -> None:
    subprocess.run(["chown", "-R", f"{FOREIGN_UID}:{FOREIGN_UID}", str(path)], check=True)


@needs_root
def test_foreign_owned_dependency_with_safe_directory_off_hints_the_cmake_setting(
    configured: Consumer, upstream: Upstream
) -> None:
    chown_tree(configured.lib)
    configured.pin(upstream.lib, upstream.lib_v2)  # so that git must run in it
    before = snapshot(configured.lib)

    proc = configured.configure("-DQOLA_SAFE_DIRECTORY=OFF", check=False)

    assert proc.returncode != 0
    message = flat(proc.stderr)
    assert "detected dubious ownership" in message
    assert (
        "hint: the repository belongs to another user; let qola trust it for its own git "
        f"commands: cmake -DQOLA_SAFE_DIRECTORY=SCOPED {configured.build} (the default; ALL "
        "trusts every folder)"
    ) in message
    assert GIT_ADVICE not in proc.stderr + proc.stdout
    assert "--safe-directory" not in message.split("The command was:")[0]
    assert snapshot(configured.lib) == before

    # The hint's own command. (The consumer's own `git rev-parse` then fails in the
    # foreign tree, as any git command without qola's shim does.)
    proc = configured.configure("-DQOLA_SAFE_DIRECTORY=SCOPED", check=False)

    assert f"-- qola: lib 3rdparty/lib {upstream.lib_v2[:12]} checked out" in proc.stdout
    assert head_as_owner(configured.lib) == upstream.lib_v2


def head_as_owner(repo) -> str:
    from repos import git

    return git(repo, "-c", f"safe.directory={repo}", "rev-parse", "HEAD")


@needs_root
def test_dubious_ownership_on_the_command_line_shows_qolas_hint_not_gits_advice(
    pinned_clean,
) -> None:
    chown_tree(pinned_clean.root)

    proc = procs.run("verify", "--safe-directory", "off", "-m", str(pinned_clean.manifest))

    assert proc.returncode == 3
    assert "detected dubious ownership" in proc.stderr
    assert GIT_ADVICE not in proc.stderr
    assert "To add an exception for this directory" not in proc.stderr
    assert (
        "hint: the repository belongs to another user; run qola with --safe-directory scoped "
        "(the default) or all"
    ) in proc.stderr


def test_offline_configure_of_a_missing_pin_hints_the_cmake_setting(
    configured: Consumer, upstream: Upstream
) -> None:
    configured.pin(upstream.lib, upstream.lib_tip)  # not fetched yet
    before = snapshot(configured.lib)

    proc = configured.configure("-DQOLA_OFFLINE=ON", check=False)

    assert proc.returncode != 0
    message = flat(proc.stderr)
    assert f"qola: lib: commit {upstream.lib_tip} is not present locally" in message
    assert (
        f"hint: configure once with the network: cmake -DQOLA_OFFLINE=OFF {configured.build}"
    ) in message
    assert "run once without --offline" not in message
    assert snapshot(configured.lib) == before


def test_offline_first_configure_hints_the_network_or_a_source_dir_setting(
    consumer: Consumer,
) -> None:
    proc = consumer.configure("-DQOLA_OFFLINE=ON", check=False)

    assert proc.returncode != 0
    message = flat(proc.stderr)
    assert (
        f"hint: configure once with the network: cmake -DQOLA_OFFLINE=OFF {consumer.build}; "
        f"or use a copy you have: cmake -DQOLA_SOURCE_DIR_LIB=/path/to/it {consumer.build}"
    ) in message
    assert not consumer.lib.exists()


def test_lock_held_by_another_run_hints_a_longer_wait_as_a_configure(
    consumer: Consumer, upstream: Upstream
) -> None:
    holder = procs.hold_lock(consumer.src)
    try:
        consumer.env["QOLA_LOCK_TIMEOUT"] = "0"
        proc = consumer.configure(check=False)
    finally:
        holder.kill()
        holder.wait()

    assert proc.returncode != 0
    assert (
        "hint: wait for that run to finish and configure again, or wait longer: "
        f"QOLA_LOCK_TIMEOUT=1800 cmake {consumer.build}"
    ) in flat(proc.stderr)
    assert not consumer.lib.exists()


def test_root_that_does_not_exist_hints_the_root_argument(consumer: Consumer) -> None:
    proc = consumer.configure(f"-DCONSUMER_ARGS=ROOT;{consumer.src / 'nowhere'}", check=False)

    assert proc.returncode != 0
    message = flat(proc.stderr)
    assert "the root folder does not exist" in message
    assert "hint: check qola_checkout()'s ROOT" in message
    assert "--root" not in message.split("The command was:")[0]


def test_refusal_hint_gives_the_one_off_command_that_runs_as_it_says(
    consumer: Consumer, upstream: Upstream
) -> None:
    consumer.configure()
    (consumer.lib / "README").write_text("my work\n")
    consumer.pin(upstream.lib, upstream.lib_v2)

    proc = consumer.configure(check=False)

    lines = proc.stderr.splitlines()
    at = lines.index(next(line for line in lines if line.strip().endswith("go on, once:")))
    once = lines[at + 1].strip()
    assert once.endswith(
        f" checkout --manifest {consumer.manifest} --safe-directory scoped --force"
    )
    ran = subprocess.run(["sh", "-c", once], capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    assert head(consumer.lib) == upstream.lib_v2


# git 2.45 and later name both owners before the advice; those lines stay.
NEWER_GITS_REFUSAL = """\
fatal: detected dubious ownership in repository at '/src/3rdparty/lib'
'/src/3rdparty/lib' is owned by:
\t12345
but the current user is:
\t0
To add an exception for this directory, call:

\tgit config --global --add safe.directory /src/3rdparty/lib
"""


@pytest.mark.parametrize("under_cmake", [False, True])
def test_git_error_keeps_the_owners_and_drops_the_global_trust_advice(
    under_cmake: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qola.gitrun.git import Output, command_error
    from qola.output import cmake_env

    if under_cmake:
        monkeypatch.setenv("QOLA_CMAKE_BINARY_DIR", "/src/build")

    error = command_error("lib", ["status"], Output(128, "", NEWER_GITS_REFUSAL))

    assert error.problem == (
        "`git status` failed with exit code 128:\n"
        "    fatal: detected dubious ownership in repository at '/src/3rdparty/lib'\n"
        "    '/src/3rdparty/lib' is owned by:\n"
        "    \t12345\n"
        "    but the current user is:\n"
        "    \t0"
    )
    hint = cmake_env.word(error.hint)  # the error carries both wordings; the edge picks one
    if under_cmake:
        assert hint is not None
        assert "cmake -DQOLA_SAFE_DIRECTORY=SCOPED /src/build" in hint
    else:
        assert hint == (
            "the repository belongs to another user; run qola with --safe-directory scoped "
            "(the default) or all"
        )
