"""A hand checkout inside a dependency re-runs configure on the next build (real CMake).

The results file lists every HEAD and `.git` file qola read as configure
dependencies: `git checkout` in a dependency or a nested submodule rewrites one,
the build system re-runs configure, and qola_checkout() brings the tree back to
its pin, or stops the build with the refusal when that would lose work. With
CMake 3.21 (the module's floor) and the newest, Ninja and Makefiles alike.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import Upstream
from repos import git, head
from test_cmake import GENERATORS, Consumer, _pypi_cmake, flat, make_consumer


@pytest.fixture(params=[(v, g) for v in ("3.21", "newest") for g in GENERATORS],
                ids=lambda p: f"{p[0]}-{'ninja' if p[1] == 'Ninja' else 'make'}")  # fmt: skip
def built(request: pytest.FixtureRequest, tmp_path: Path, upstream: Upstream) -> Consumer:
    """The consumer at lib_v1, configured and built, its dependencies able to move back
    without --force (the other commits are on remote-tracking refs)."""
    version, generator = request.param
    consumer = make_consumer(tmp_path, upstream, _pypi_cmake(version), generator, upstream.lib_v1)
    consumer.configure()
    consumer.build_()
    for repo in (consumer.lib, consumer.lib / "extern" / "nested"):
        git(repo, "fetch", "-q", "origin", "+refs/heads/main:refs/remotes/origin/main")
    return consumer


def test_hand_checkout_in_dependency_reruns_configure_on_build_and_restores_the_pin(
    built: Consumer, upstream: Upstream
) -> None:
    git(built.lib, "checkout", "-q", "--detach", upstream.lib_tip)

    built.build_()

    assert head(built.lib) == upstream.lib_v1
    assert built.configure_log() == [upstream.lib_v1, upstream.lib_v1]  # configure ran again
    built.build_()
    assert len(built.configure_log()) == 2  # and settled: no configure on every build


def test_hand_checkout_in_nested_submodule_reruns_configure_on_build_and_restores_it(
    built: Consumer, upstream: Upstream
) -> None:
    nested = built.lib / "extern" / "nested"
    git(nested, "checkout", "-q", "--detach", upstream.nested_v2)

    built.build_()

    assert head(nested) == upstream.nested_v1
    assert len(built.configure_log()) == 2


def test_hand_checkout_with_local_edit_fails_the_build_with_the_refusal(
    built: Consumer, upstream: Upstream
) -> None:
    git(built.lib, "checkout", "-q", "--detach", upstream.lib_tip)
    (built.lib / "lib.txt").write_text("my work\n")

    proc = built.build_(check=False)

    assert proc.returncode != 0
    message = flat(proc.stdout + proc.stderr)
    assert f"qola: {built.manifest}: checkout failed (exit 4: refused: local work" in message
    assert "3rdparty/lib/lib.txt (modified)" in message
    assert head(built.lib) == upstream.lib_tip  # nothing was changed
    assert (built.lib / "lib.txt").read_text() == "my work\n"


def test_deleted_dependency_reruns_configure_on_build_and_is_cloned_again(
    built: Consumer, upstream: Upstream
) -> None:
    shutil.rmtree(built.lib)  # every watched HEAD and .git file goes with it

    built.build_()

    assert head(built.lib / "extern" / "nested") == upstream.nested_v1
    assert len(built.configure_log()) == 2
