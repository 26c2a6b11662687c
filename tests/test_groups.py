"""Groups: `groups = [...]` on a dependency, `--group NAME` on the command line, GROUPS in CMake."""

from __future__ import annotations

from pathlib import Path

import pytest
from repos import snapshot, without_noop_stamps
from superprojects import legacy_superproject
from test_cmake import Consumer, cmake_system, flat, make_consumer, manifest_text  # noqa: F401
from test_noop import as_cmake_runs_it, split_probe

NAME_HINT = "use letters, digits, '_' and '-', starting with a letter or digit"


def two_groups(upstream) -> str:
    """lib in `fa` and `gemm`, other (the nested upstream) in `gemm` only."""
    return (
        'groups = ["fa", "gemm"]\n'
        f'[deps.other]\npath = "3rdparty/other"\nurl = "{upstream.nested}"\n'
        f'commit = "{upstream.nested_v2}"\ngroups = ["gemm"]\n'
        f'[deps.loner]\npath = "3rdparty/loner"\nurl = "{upstream.nested}"\n'
        f'commit = "{upstream.nested_v1}"\n'
    )


@pytest.fixture
def grouped(make_project, upstream):
    """A project with three dependencies in groups fa and gemm (one in none); nothing
    checked out."""
    return make_project(extra=two_groups(upstream))


@pytest.fixture
def grouped_checked_out(grouped, run_qola):
    assert run_qola("checkout", "-q", "-m", str(grouped.manifest)).exit_code == 0
    return grouped


def checked_out(project) -> list[str]:
    return sorted(p.name for p in (project.root / "3rdparty").iterdir() if (p / ".git").exists())


def test_checkout_group_selects_only_its_members(grouped, run_qola):
    res = run_qola("checkout", "-m", str(grouped.manifest), "--group", "fa")
    assert res.exit_code == 0, res.stderr
    assert [line.split()[0] for line in res.stdout.splitlines()] == ["lib"]
    assert checked_out(grouped) == ["lib"]


def test_group_options_add_up_with_names_in_manifest_order(grouped_checked_out, run_qola):
    res = run_qola(
        "status", "-m", str(grouped_checked_out.manifest), "loner", "--group", "gemm",
        "--group", "fa",
    )  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert [line.split()[0] for line in res.stdout.splitlines()[1:]] == ["lib", "other", "loner"]


def test_verify_group_checks_only_its_members(grouped_checked_out, run_qola):
    res = run_qola("verify", "--format", "json", "-m", str(grouped_checked_out.manifest),
                   "--group", "gemm")  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert '"name": "lib"' in res.stdout and '"name": "other"' in res.stdout
    assert '"name": "loner"' not in res.stdout


def test_unknown_group_exits_2_with_did_you_mean_and_changes_nothing(grouped, run_qola):
    before = snapshot(grouped.root)
    res = run_qola("checkout", "-m", str(grouped.manifest), "--group", "gem")
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: {grouped.manifest}: no dependency is in group 'gem'\nhint: did you mean 'gemm'?\n"
    )
    assert snapshot(grouped.root) == before


def test_unknown_group_without_a_close_one_lists_the_groups(grouped, run_qola):
    res = run_qola("verify", "-m", str(grouped.manifest), "--group", "xyz")
    assert res.exit_code == 2
    assert res.stderr.endswith("hint: groups: fa, gemm\n")


def test_unknown_group_of_a_manifest_without_groups_says_how_to_make_one(
    pinned_clean, run_qola
):
    before = snapshot(pinned_clean.root)
    res = run_qola("verify", "-m", str(pinned_clean.manifest), "--group", "gemm")
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: {pinned_clean.manifest}: no dependency is in group 'gemm'\n"
        'hint: the manifest has no groups; a dependency joins one with groups = ["NAME"]\n'
    )
    assert snapshot(pinned_clean.root) == before


def test_noop_with_group_answers_without_click_like_the_full_command(
    grouped_checked_out, run_qola
):
    root = grouped_checked_out.root
    before = snapshot(root)
    args = ["checkout", "--group=gemm", "--group", "fa"]
    fast = as_cmake_runs_it(*args, cwd=root)
    stderr, loaded = split_probe(fast.stderr)
    full = run_qola(*args, cwd=root)
    assert (fast.returncode, fast.stdout, stderr) == (full.exit_code, full.stdout, full.stderr)
    assert [line.split()[0] for line in fast.stdout.splitlines()] == ["lib", "other"]
    assert loaded == "qola.manifest"  # answered before click was imported
    again = as_cmake_runs_it(*args, cwd=root)  # from the stamp this time
    assert (again.returncode, again.stdout) == (0, fast.stdout)
    assert without_noop_stamps(snapshot(root)) == without_noop_stamps(before)


def test_noop_with_unknown_group_leaves_the_error_to_the_full_command(grouped_checked_out):
    fast = as_cmake_runs_it("checkout", "--group", "gem", cwd=grouped_checked_out.root)
    assert fast.returncode == 2
    assert "no dependency is in group 'gem'\nhint: did you mean 'gemm'?" in fast.stderr


def test_legacy_form_groups_key_selects(tmp_path, upstream, run_qola):
    root = legacy_superproject(tmp_path / "te", upstream.lib, upstream.lib_v2)
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text() + 'lib_groups = ["fa"]\n')
    res = run_qola("status", "-m", str(manifest), "--group", "fa")
    assert res.stdout.splitlines()[1].split()[0] == "lib"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ('"fa"', "must be a list of group names, not 'fa'\n"
                 'hint: write it as a list of names, e.g. groups = ["fa", "gemm"]'),
        ('["fa", 3]', f"3 is not a usable group name\nhint: {NAME_HINT}"),
        ('["f a"]', f"'f a' is not a usable group name\nhint: {NAME_HINT}"),
        ('["fa", "fa"]', "names the group 'fa' twice\nhint: name each group once"),
    ],
    ids=["string", "number", "blank", "twice"],
)
def test_bad_groups_value_exits_2_naming_the_key_and_changes_nothing(
    make_project, run_qola, value, problem
):
    project = make_project(extra=f"groups = {value}\n")
    before = snapshot(project.root)
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 2
    assert res.stderr == f"qola: {project.manifest}:7: deps.lib.groups: {problem}\n"
    assert snapshot(project.root) == before


def test_cmake_groups_checks_out_the_group_and_skips_python_next_time(
    tmp_path: Path, upstream, cmake_system: Path  # noqa: F811
) -> None:
    consumer: Consumer = make_consumer(tmp_path, upstream, cmake_system, "Ninja", upstream.lib_v1)
    consumer.manifest.write_text(
        manifest_text(upstream.lib, upstream.lib_v1)
        + 'groups = ["fa"]\n'
        + f'[deps.other]\npath = "3rdparty/other"\nurl = "{upstream.nested}"\n'
        f'commit = "{upstream.nested_v1}"\ngroups = ["gemm"]\n'
    )
    consumer.configure("-DCONSUMER_ARGS=GROUPS;fa")
    assert consumer.lib.exists()
    assert not (consumer.src / "3rdparty" / "other").exists()
    assert consumer.exported()["deps"] == "lib"
    starts = consumer.python_starts()
    consumer.configure()
    assert consumer.python_starts() == starts  # the stamp held: no interpreter started


def test_cmake_unknown_group_fails_configure_with_did_you_mean(
    tmp_path: Path, upstream, cmake_system: Path  # noqa: F811
) -> None:
    consumer = make_consumer(tmp_path, upstream, cmake_system, "Ninja", upstream.lib_v1)
    consumer.manifest.write_text(manifest_text(upstream.lib, upstream.lib_v1) + 'groups=["gemm"]\n')
    proc = consumer.configure("-DCONSUMER_ARGS=GROUPS;gem", check=False)
    assert proc.returncode != 0
    assert "no dependency is in group 'gem' hint: did you mean 'gemm'?" in flat(proc.stderr)
    assert not consumer.lib.exists()
