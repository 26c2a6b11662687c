"""A pin the root's gitlink disagrees with: a configure warning, at every configure until
the two agree, naming both commits and the command that stages the pin (real CMake)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import Upstream
from repos import git, head, snapshot
from test_cmake import GENERATORS, Consumer, _pypi_cmake, flat, make_consumer


def submodule_root(consumer: Consumer, upstream: Upstream) -> None:
    """Make the consumer's source folder a git repository with lib as its submodule, the
    gitlink at lib_v1 as the manifest pins it."""
    git(consumer.src, "init", "-q", "-b", "main")
    git(consumer.src, "submodule", "add", "-q", str(upstream.lib), "3rdparty/lib")
    git(consumer.lib, "checkout", "-q", "--detach", upstream.lib_v1)
    git(consumer.src, "add", "-A")
    git(consumer.src, "commit", "-q", "-m", "lib as a submodule, pinned")


@pytest.fixture(params=[(v, g) for v in ("3.21", "newest") for g in GENERATORS],
                ids=lambda p: f"{p[0]}-{'ninja' if p[1] == 'Ninja' else 'make'}")  # fmt: skip
def built(request: pytest.FixtureRequest, tmp_path, upstream: Upstream) -> Consumer:
    """A consumer whose root records lib as a submodule at its pin, configured and built."""
    version, generator = request.param
    consumer = make_consumer(tmp_path, upstream, _pypi_cmake(version), generator, upstream.lib_v1)
    submodule_root(consumer, upstream)
    consumer.configure()
    consumer.build_()
    return consumer


def warning_of(proc: subprocess.CompletedProcess[str]) -> str:
    return flat(proc.stdout + proc.stderr)


def test_pin_edited_by_hand_warns_at_every_configure_until_bump_stages_it(
    built: Consumer, upstream: Upstream
) -> None:
    built.pin(upstream.lib, upstream.lib_v2)

    proc = built.build_()  # the edit re-runs configure

    assert head(built.lib) == upstream.lib_v2  # a warning, not a failure
    message = warning_of(proc)
    assert "CMake Warning" in message
    assert f"qola: {built.manifest}: a pin and the root's gitlink disagree:" in message
    assert (
        f"lib: the manifest pins {upstream.lib_v2[:12]} but the root's index records "
        f"3rdparty/lib at {upstream.lib_v1[:12]}: the root's next commit would keep that "
        "commit as its gitlink. To stage the pin as the gitlink, run:"
    ) in message
    command = next(
        line.strip() for line in (proc.stdout + proc.stderr).splitlines() if " bump lib " in line
    )
    assert command.endswith(f"qola bump lib --to {upstream.lib_v2} -m {built.manifest}")

    starts = built.python_starts()
    again = built.configure()  # nothing changed: the stamp holds, and so does the warning
    assert built.python_starts() == starts
    assert "a pin and the root's gitlink disagree" in warning_of(again)

    ran = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    assert git(built.src, "ls-files", "-s", "3rdparty/lib").split()[1] == upstream.lib_v2
    assert git(built.src, "diff", "--cached", "--name-only").split() == [
        "3rdparty/lib",
        "qola.toml",
    ]

    settled = built.configure()
    assert "gitlink disagree" not in warning_of(settled)
    assert "CMake Warning" not in settled.stderr


def test_pin_that_agrees_with_the_gitlink_configures_without_warning(built: Consumer) -> None:
    proc = built.configure()

    assert "gitlink" not in warning_of(proc)
    assert "CMake Warning" not in proc.stderr


def test_bump_to_the_pin_already_written_stages_the_gitlink_beside_the_manifest(
    tmp_path, upstream: Upstream
) -> None:
    consumer = make_consumer(tmp_path, upstream, _pypi_cmake("newest"), "Ninja", upstream.lib_v1)
    submodule_root(consumer, upstream)
    consumer.pin(upstream.lib, upstream.lib_v2)
    git(consumer.lib, "fetch", "-q", "origin")
    git(consumer.lib, "checkout", "-q", "--detach", upstream.lib_v2)
    before = snapshot(consumer.lib)

    bump = ["bump", "lib", "--to", upstream.lib_v2, "-m", str(consumer.manifest)]
    proc = subprocess.run(
        [sys.executable, "-m", "qola", *bump], capture_output=True, text=True, check=False
    )

    assert proc.returncode == 0, proc.stderr
    # The pin was written by hand without its label; v2.0 names it upstream.
    assert proc.stdout == (
        f"lib is already at {upstream.lib_v2[:12]} ({upstream.lib_v2}); labelling it v2.0\n"
    )
    assert proc.stderr == (
        "qola: lib: qola.toml now labels it v2.0\n"
        f"qola: lib: staged the gitlink 3rdparty/lib at {upstream.lib_v2[:12]}\n"
        "qola: staged qola.toml\n"
    )
    assert git(consumer.src, "ls-files", "-s", "3rdparty/lib").split()[1] == upstream.lib_v2
    assert snapshot(consumer.lib) == before


def test_root_commits_that_change_no_pin_re_run_nothing(
    built: Consumer, upstream: Upstream
) -> None:
    """The developer's day: commits, an amend, a new branch's commits and `git status` in
    the root re-run neither the configure nor qola; a commit that moves a pin does."""
    configures = len(built.configure_log())
    starts = built.python_starts()
    readme = built.src / "README.rst"
    for n in range(10):
        readme.write_text(f"edit {n}\n")
        git(built.src, "add", "README.rst")
        if n == 3:
            git(built.src, "commit", "-q", "--amend", "--no-edit")
        elif n == 6:
            git(built.src, "checkout", "-q", "-b", "feature")  # a new branch at the same commit
            git(built.src, "commit", "-q", "-m", f"edit {n}")
        else:
            git(built.src, "commit", "-q", "-m", f"edit {n}")
        git(built.src, "status", "--porcelain")  # refreshes the index
        out = built.build_()
        assert "Re-running CMake" not in out.stdout, (n, out.stdout)
    assert len(built.configure_log()) == configures
    assert built.python_starts() == starts
    # A commit that bumps a pin (its gitlink with it) re-runs the configure, which moves it.
    built.pin(upstream.lib, upstream.lib_v2)
    git(built.lib, "checkout", "-q", "--detach", upstream.lib_v2)
    git(built.src, "commit", "-q", "-am", "bump lib")
    built.build_()
    assert len(built.configure_log()) == configures + 1
    assert head(built.lib) == upstream.lib_v2
