"""`qola foreach [NAMES] -- CMD...`: a command in each dependency's folder, under the shim.

qola runs as a real process here: CMD writes to the file descriptors it inherits,
which an in-process runner cannot capture.
"""

from __future__ import annotations

import os
import subprocess

import procs
import pytest
from repos import git, snapshot
from superprojects import legacy_superproject

SHOW = 'echo "$QOLA_NAME $QOLA_COMMIT $QOLA_PATH $(pwd)"'


@pytest.fixture
def two_checked_out(make_project, upstream, run_qola):
    """lib (with its nested submodule) and other, both checked out at their pins."""
    project = make_project(
        extra=f'[deps.other]\npath = "3rdparty/other"\nurl = "{upstream.nested}"\n'
        f'commit = "{upstream.nested_v1}"\ngroups = ["small"]\n'
    )
    assert run_qola("checkout", "-q", "-m", str(project.manifest)).exit_code == 0
    return project


def foreach(project, *args: str) -> subprocess.CompletedProcess[str]:
    return procs.run("foreach", "-m", str(project.manifest), *args)


def test_foreach_runs_in_each_folder_with_name_commit_and_path(two_checked_out, upstream):
    proc = foreach(two_checked_out, "--", "sh", "-c", SHOW)
    assert proc.returncode == 0, proc.stderr
    lib, other = two_checked_out.lib, two_checked_out.root / "3rdparty" / "other"
    assert proc.stdout == (
        f"lib {upstream.lib_v2} {lib} {lib}\nother {upstream.nested_v1} {other} {other}\n"
    )
    assert proc.stderr == f"qola: lib ({lib})\nqola: other ({other})\n"


def test_foreach_names_and_groups_select(two_checked_out):
    proc = foreach(two_checked_out, "-q", "--group", "small", "--", "sh", "-c", "echo $QOLA_NAME")
    assert (proc.stdout, proc.stderr) == ("other\n", "")
    proc = foreach(two_checked_out, "-q", "lib", "--", "sh", "-c", "echo $QOLA_NAME")
    assert proc.stdout == "lib\n"


def test_foreach_stops_at_the_first_failure_with_its_exit_code(two_checked_out):
    proc = foreach(two_checked_out, "-q", "--", "sh", "-c", "echo $QOLA_NAME; exit 7")
    assert proc.returncode == 7
    assert proc.stdout == "lib\n"
    assert proc.stderr == (
        "qola: the command failed in 1 of 2: lib (exit 7)\nqola: not run after the failure: other\n"
    )


def test_foreach_keep_going_runs_everywhere_and_exits_with_the_first_failure(two_checked_out):
    script = 'echo $QOLA_NAME; [ "$QOLA_NAME" = lib ] && exit 5; exit 6'
    proc = foreach(two_checked_out, "-q", "--keep-going", "--", "sh", "-c", script)
    assert proc.returncode == 5
    assert proc.stdout == "lib\nother\n"
    assert proc.stderr == "qola: the command failed in 2 of 2: lib (exit 5), other (exit 6)\n"


def test_foreach_jobs_keeps_each_dependencys_output_together(two_checked_out):
    # lib sleeps between its two lines while other runs: the output still comes whole.
    script = 'echo "1 $QOLA_NAME"; [ "$QOLA_NAME" = lib ] && sleep 0.5; echo "2 $QOLA_NAME"'
    proc = foreach(two_checked_out, "-q", "-j", "2", "--", "sh", "-c", script)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "1 lib\n2 lib\n1 other\n2 other\n"


def test_foreach_skips_a_dependency_that_is_not_checked_out(make_project, upstream):
    project = make_project()
    proc = foreach(project, "--", "sh", "-c", SHOW)
    assert proc.returncode == 0
    assert proc.stdout == ""
    assert proc.stderr == f"qola: lib: {project.lib} is not checked out; skipped\n"


def test_foreach_without_a_command_exits_2(two_checked_out):
    proc = foreach(two_checked_out)
    assert proc.returncode == 2
    assert proc.stderr == (
        "qola: foreach: no command to run\nhint: qola foreach [NAMES] -- CMD [ARG...]\n"
    )


def test_foreach_command_not_on_path_exits_2_and_runs_nothing(two_checked_out):
    before = snapshot(two_checked_out.root)
    proc = foreach(two_checked_out, "--", "no-such-command-qola", "x")
    assert proc.returncode == 2
    assert proc.stderr == "qola: no-such-command-qola: command not found on PATH; nothing was run\n"
    assert snapshot(two_checked_out.root) == before


def test_foreach_unknown_group_exits_2_and_runs_nothing(two_checked_out, tmp_path):
    mark = tmp_path / "ran"
    proc = foreach(two_checked_out, "--group", "smal", "--", "touch", str(mark))
    assert proc.returncode == 2
    assert proc.stderr.endswith("no dependency is in group 'smal'\nhint: did you mean 'small'?\n")
    assert not mark.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: chown to another uid")
def test_foreach_git_in_a_nested_submodule_of_a_foreign_owned_tree_works_under_the_shim(
    two_checked_out, upstream
):
    subprocess.run(["chown", "-R", "12345:12345", str(two_checked_out.root)], check=True)
    refused = git(two_checked_out.nested, "rev-parse", "HEAD", check=False)
    assert refused == ""  # plain git refuses the tree (dubious ownership)
    proc = foreach(two_checked_out, "-q", "lib", "--", "git", "-C", "extern/nested", "rev-parse",
                   "HEAD")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{upstream.nested_v2}\n"


def test_foreach_legacy_form_runs_in_the_submodule(tmp_path, upstream, run_qola):
    root = legacy_superproject(tmp_path / "te", upstream.lib, upstream.lib_v2)
    manifest = root / "qola.toml"
    assert run_qola("checkout", "-q", "-m", str(manifest)).exit_code == 0
    proc = procs.run("foreach", "-q", "-m", str(manifest), "--", "git", "rev-parse", "HEAD")
    assert (proc.returncode, proc.stdout) == (0, f"{upstream.lib_v2}\n")
