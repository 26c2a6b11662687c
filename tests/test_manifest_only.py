"""`qola verify --manifest-only` and the pre-commit hook built on it: no checkout needed."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml
from repos import git, snapshot
from shell import SOURCE, qola_env, run_argv
from superprojects import legacy_superproject


@pytest.fixture
def fresh_clone(tmp_path, upstream) -> Path:
    """A clone of a TE-style superproject, submodules not checked out (as CI clones it).

    The dependency's folder holds a `.git` file pointing nowhere, so any look into it
    would fail: the manifest-only checks must pass without one.
    """
    origin = legacy_superproject(tmp_path / "origin", upstream.lib, upstream.lib_v2)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    (clone / "3rdparty" / "lib" / ".git").write_text("gitdir: /nonexistent/qola\n")
    return clone


def manifest_only(run_qola, root: Path, *args: str):
    return run_qola("verify", "--manifest-only", "-m", str(root / "qola.toml"), *args)


def test_manifest_only_passes_without_a_checkout(fresh_clone, upstream, run_qola):
    before = snapshot(fresh_clone)
    assert run_qola("verify", "-m", str(fresh_clone / "qola.toml")).exit_code == 1
    res = manifest_only(run_qola, fresh_clone, "--format", "json")
    assert res.exit_code == 0, res.stdout + res.stderr
    [dep] = json.loads(res.stdout)["deps"]
    assert dep["pinned"] == upstream.lib_v2 and dep["head"] is None and dep["problems"] == []
    assert snapshot(fresh_clone) == before


def test_manifest_only_staged_gitlink_that_disagrees_fails(fresh_clone, upstream, run_qola):
    git(fresh_clone, "update-index", "--cacheinfo", f"160000,{upstream.lib_tip},3rdparty/lib")
    before = snapshot(fresh_clone)
    res = manifest_only(run_qola, fresh_clone)
    assert res.exit_code == 1
    assert res.stdout == (
        f"FAIL lib 3rdparty/lib pinned {upstream.lib_v2[:12]} head -\n"
        f"     gitlink: the root records 3rdparty/lib at {upstream.lib_tip[:12]} but the "
        f"manifest pins {upstream.lib_v2[:12]}\n"
        "1 of 1 dependency does not match the manifest\n"
    )
    assert snapshot(fresh_clone) == before


def test_manifest_only_abbreviated_pin_fails_and_is_still_compared(tmp_path, upstream, run_qola):
    short = upstream.lib_v2[:10]
    root = legacy_superproject(tmp_path / "super", upstream.lib, upstream.lib_tip, written=short)
    res = manifest_only(run_qola, root, "--format", "json")
    assert res.exit_code == 1
    [dep] = json.loads(res.stdout)["deps"]
    assert [p["kind"] for p in dep["problems"]] == ["abbreviated", "gitlink"]
    assert dep["problems"][0]["message"] == (
        f"the pin {short!r} is abbreviated; write the full 40-hex SHA in its place"
    )


def test_manifest_only_dep_that_is_no_submodule_has_nothing_to_agree_with(make_project, run_qola):
    project = make_project()
    res = manifest_only(run_qola, project.root)
    assert res.exit_code == 0, res.stdout + res.stderr


def test_manifest_only_invalid_toml_exits_2_and_changes_nothing(fresh_clone, run_qola):
    manifest = fresh_clone / "qola.toml"
    manifest.write_text(manifest.read_text().replace('namespace = "te"', "namespace = te"))
    before = snapshot(fresh_clone)
    res = manifest_only(run_qola, fresh_clone)
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr == (
        f"qola: {manifest}:2:13: invalid TOML: Invalid value\n"
        "hint: fix the syntax there; the manifest is TOML (https://toml.io)\n"
    )
    assert snapshot(fresh_clone) == before


def test_manifest_only_branch_name_as_pin_exits_2(fresh_clone, upstream, run_qola):
    manifest = fresh_clone / "qola.toml"
    manifest.write_text(manifest.read_text().replace(upstream.lib_v2, "main"))
    res = manifest_only(run_qola, fresh_clone)
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: {manifest}:3: qola.lib_commit: 'main' is a branch or tag name, not a commit SHA\n"
        "hint: qola bump lib --to main\n"
    )


@pytest.mark.parametrize(
    ("args", "named"), [(("--strict",), "--strict"), (("--cmake-out", "x.cmake"), "--cmake-out")]
)
def test_manifest_only_refuses_options_that_need_a_checkout(args, named, fresh_clone, run_qola):
    before = snapshot(fresh_clone)
    res = run_qola("verify", "--manifest-only", *args, cwd=fresh_clone)
    assert res.exit_code == 2
    assert res.stdout == ""
    assert f"Error: {named} needs a checkout; it cannot go with --manifest-only" in res.stderr
    assert snapshot(fresh_clone) == before


# The hook as pre-commit runs it: `entry` split like a shell would, in the repository's
# top, with no file names (pass_filenames: false).
def hook() -> dict[str, object]:
    [only] = yaml.safe_load((SOURCE / ".pre-commit-hooks.yaml").read_text())
    return dict(only)


def run_hook(root: Path, tmp_path: Path):
    # pre-commit sets PRE_COMMIT=1 for every hook it runs (pre_commit/commands/run.py).
    env = {**qola_env(tmp_path / "hook"), "PRE_COMMIT": "1"}
    return run_argv(shlex.split(str(hook()["entry"])), root, env)


def test_pre_commit_hook_definition():
    found = hook()
    assert found["id"] == "qola-verify"
    assert found["language"] == "python"
    assert found["entry"] == "qola verify --manifest-only"
    assert found["pass_filenames"] is False  # file names would be read as dependency names
    assert found["always_run"] is True  # a moved gitlink alone changes no qola.toml


def test_pre_commit_hook_passes_on_agreeing_pins(fresh_clone, tmp_path):
    before = snapshot(fresh_clone)
    proc = run_hook(fresh_clone, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.endswith("1 dependency matches the manifest\n")
    assert snapshot(fresh_clone) == before


def test_pre_commit_hook_catches_a_gitlink_moved_without_the_manifest(
    fresh_clone, upstream, tmp_path
):
    git(fresh_clone, "update-index", "--cacheinfo", f"160000,{upstream.lib_tip},3rdparty/lib")
    proc = run_hook(fresh_clone, tmp_path)
    assert proc.returncode == 1
    assert "     gitlink: the root records 3rdparty/lib at " in proc.stdout


def test_pre_commit_hook_fails_an_invalid_manifest(fresh_clone, tmp_path):
    (fresh_clone / "qola.toml").write_text("[qola\n")
    git(fresh_clone, "add", "qola.toml")  # what pre-commit checks: the commit's content
    proc = run_hook(fresh_clone, tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"qola: {fresh_clone / 'qola.toml'}:1:6: invalid TOML: ")


@pytest.fixture
def bumped_unstaged(fresh_clone, upstream) -> Path:
    """What `qola bump` used to leave: the new gitlink staged, the new pin only in the
    work tree's manifest (so a plain `git commit` records the gitlink with the old pin)."""
    git(fresh_clone, "update-index", "--cacheinfo", f"160000,{upstream.lib_tip},3rdparty/lib")
    manifest = fresh_clone / "qola.toml"
    manifest.write_text(manifest.read_text().replace(upstream.lib_v2, upstream.lib_tip))
    return fresh_clone


def test_manifest_only_staged_checks_the_index_not_the_work_tree(
    bumped_unstaged, upstream, run_qola
):
    before = snapshot(bumped_unstaged)
    assert manifest_only(run_qola, bumped_unstaged).exit_code == 0  # the work tree agrees
    res = manifest_only(run_qola, bumped_unstaged, "--staged")
    assert res.exit_code == 1
    assert res.stdout == (
        "checked: what is staged: qola.toml and the gitlinks in the index, not the work tree "
        "(--staged)\n"
        f"FAIL lib 3rdparty/lib pinned {upstream.lib_v2[:12]} head -\n"
        f"     gitlink: the root records 3rdparty/lib at {upstream.lib_tip[:12]} but the "
        f"manifest pins {upstream.lib_v2[:12]}\n"
        "1 of 1 dependency does not match the manifest\n"
    )
    res = manifest_only(run_qola, bumped_unstaged, "--format", "json", "--staged")
    assert json.loads(res.stdout)["checked"].startswith("what is staged: qola.toml")
    assert snapshot(bumped_unstaged) == before


def test_manifest_only_run_by_pre_commit_checks_what_is_staged(bumped_unstaged, tmp_path):
    proc = run_hook(bumped_unstaged, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith(
        "checked: what is staged: qola.toml and the gitlinks in the index, not the work tree "
        "(run by pre-commit (PRE_COMMIT=1))\n"
    )


def test_manifest_only_staged_of_a_manifest_git_does_not_track_exits_2(
    fresh_clone, run_qola
):
    git(fresh_clone, "rm", "-q", "--cached", "qola.toml")
    before = snapshot(fresh_clone)
    res = manifest_only(run_qola, fresh_clone, "--staged")
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: {fresh_clone / 'qola.toml'}: is not staged (the index has no such file), so "
        "there is nothing staged to check\n"
        "hint: git add it, or run without --staged\n"
    )
    assert snapshot(fresh_clone) == before


def test_staged_needs_manifest_only(fresh_clone, run_qola):
    res = run_qola("verify", "--staged", "-m", str(fresh_clone / "qola.toml"))
    assert res.exit_code == 2
    assert "Error: --staged checks the index: it goes with --manifest-only" in res.stderr


def test_git_commit_hook_reads_the_index_git_commits(bumped_unstaged, upstream, tmp_path):
    """A plain git hook: `git commit` is refused (the staged manifest still pins the old
    commit), `git commit -a` passes: git hands the hook the index it will commit
    (GIT_INDEX_FILE), which holds the new manifest too."""
    (bumped_unstaged / "3rdparty" / "lib" / ".git").unlink()  # `commit -a` looks into it
    hook_file = bumped_unstaged / ".git" / "hooks" / "pre-commit"
    hook_file.parent.mkdir(exist_ok=True)
    hook_file.write_text("#!/bin/sh\nexec qola verify --manifest-only --staged\n")
    hook_file.chmod(0o755)
    env = qola_env(tmp_path / "hook")
    refused = run_argv(["git", "commit", "-q", "-m", "bump lib"], bumped_unstaged, env)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    # git shows a hook's output on its stderr.
    assert "gitlink: the root records 3rdparty/lib at" in refused.stderr
    assert git(bumped_unstaged, "log", "--format=%s") == "pin lib"
    passed = run_argv(["git", "commit", "-q", "-a", "-m", "bump lib"], bumped_unstaged, env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert git(bumped_unstaged, "rev-parse", "HEAD:3rdparty/lib") == upstream.lib_tip
    assert upstream.lib_tip in git(bumped_unstaged, "show", "HEAD:qola.toml")
