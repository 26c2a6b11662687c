"""`qola verify --remote`: is each pin still upstream, in the history of what it follows?"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from conftest import Project
from repos import commit_file, git, ran, snapshot


@pytest.fixture
def own_upstream(tmp_path, upstream):
    """A private copy of the upstream lib, which a test may rewrite or delete."""
    copy = tmp_path / "remote" / "lib"
    git(tmp_path, "clone", "-q", "--mirror", str(upstream.lib), str(copy))
    return copy


@pytest.fixture
def feature_pinned(tmp_path, own_upstream, run_qola):
    """A project pinning a commit that only the upstream's `feature` branch has (its track),
    fetched over a file:// URL, the way a network remote is (not as a local path)."""
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(own_upstream), str(work))
    git(work, "switch", "-q", "-c", "feature")
    pin = commit_file(work, "feature.txt", "feature\n")
    git(work, "push", "-q", "origin", "feature")
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    (root / "qola.toml").write_text(
        f'[deps.lib]\npath = "3rdparty/lib"\nurl = "file://{own_upstream}"\ncommit = "{pin}"\n'
        'track = "feature"\n'
    )
    assert run_qola("checkout", "-q", "-m", str(root / "qola.toml")).exit_code == 0
    return Project(root, root / "qola.toml"), pin


def verify_remote(run_qola, manifest, *args):
    return run_qola("verify", "--remote", "--format", "json", "-m", str(manifest), *args)


def problems(res):
    return [
        (p["kind"], p["message"]) for d in json.loads(res.stdout)["deps"] for p in d["problems"]
    ]


def test_remote_pin_on_track_branch_passes(pinned_clean, run_qola):
    before = snapshot(pinned_clean.root)
    res = verify_remote(run_qola, pinned_clean.manifest)
    assert res.exit_code == 0, res.stdout + res.stderr
    assert problems(res) == []
    assert snapshot(pinned_clean.root) == before  # nothing fetched into the dependency


def test_remote_pin_at_tracked_tag_passes(pinned_clean, run_qola):
    pinned_clean.manifest.write_text(
        pinned_clean.manifest.read_text().replace('track = "main"', 'track = "v2.0"')
    )
    assert verify_remote(run_qola, pinned_clean.manifest).exit_code == 0


def test_remote_without_track_follows_the_default_branch(pinned_clean, upstream, run_qola):
    text = pinned_clean.manifest.read_text().replace('track = "main"\n', "")
    pinned_clean.manifest.write_text(text)
    assert verify_remote(run_qola, pinned_clean.manifest).exit_code == 0
    pinned_clean.set_pin(upstream.lib_v2, upstream.lib_v3)  # only on `side`
    res = verify_remote(run_qola, pinned_clean.manifest)
    assert res.exit_code == 1
    assert ("unreachable", (
        f"the pin {upstream.lib_v3[:12]} is not in the history of the default branch at "
        f"{upstream.lib} (now at {upstream.lib_tip[:12]}): it was never on it, or it was "
        "rewritten or moved back since"
    )) in problems(res)  # fmt: skip


def test_remote_pin_missing_locally_is_checked_upstream_anyway(make_project, upstream, run_qola):
    """Without a checkout there is no pin date to bound the fetch: the whole track is used."""
    project = make_project()
    res = verify_remote(run_qola, project.manifest)
    assert res.exit_code == 1
    assert [k for k, _ in problems(res)] == ["missing"]


def test_remote_deleted_branch_is_unreachable(feature_pinned, own_upstream, run_qola):
    project, pin = feature_pinned
    assert verify_remote(run_qola, project.manifest).exit_code == 0
    git(own_upstream, "branch", "-q", "-D", "feature")
    before = snapshot(project.root)
    res = verify_remote(run_qola, project.manifest)
    assert res.exit_code == 1
    assert problems(res) == [
        (
            "unreachable",
            f"track 'feature' no longer exists at file://{own_upstream} (deleted?); "
            f"nothing upstream is known to contain the pin {pin[:12]}",
        )
    ]
    assert snapshot(project.root) == before
    # Offline, the checkout still matches its manifest: only --remote looks upstream.
    assert run_qola("verify", "-m", str(project.manifest)).exit_code == 0


def test_remote_force_pushed_branch_is_unreachable(
    feature_pinned, own_upstream, upstream, run_qola
):
    project, pin = feature_pinned
    git(own_upstream, "update-ref", "refs/heads/feature", upstream.lib_v1)  # a force-push back
    res = verify_remote(run_qola, project.manifest)
    assert res.exit_code == 1
    assert problems(res) == [
        (
            "unreachable",
            f"the pin {pin[:12]} is not in the history of branch 'feature' at "
            f"file://{own_upstream} (now at {upstream.lib_v1[:12]}): it was never on it, or it "
            "was rewritten or moved back since",
        )
    ]


def test_remote_pin_older_than_the_shallow_window_is_still_found(
    feature_pinned, own_upstream, tmp_path, run_qola
):
    """Commits after the pin dated before it (skewed clocks, rebases) defeat the date bound:
    the probe then fetches the whole branch rather than call the pin unreachable."""
    project, _ = feature_pinned
    work = tmp_path / "work"
    env = {"GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z", "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z"}
    for n in range(2):
        (work / "later.txt").write_text(f"{n}\n")
        subprocess.run(["git", "add", "later.txt"], cwd=work, check=True)
        subprocess.run(
            ["git", "commit", "-q", "-m", f"backdated {n}"],
            cwd=work,
            check=True,
            env={**os.environ, **env},
        )
    git(work, "push", "-q", "origin", "feature")
    res = verify_remote(run_qola, project.manifest, "-v")
    assert res.exit_code == 0, res.stdout + res.stderr
    fetches = [command for command in ran(res.stderr) if command.startswith("fetch")]
    assert "--shallow-since=" in fetches[0]  # the bounded fetch was tried first, then more
    assert len(fetches) == 2


def test_remote_unreachable_upstream_exits_3_naming_dep_and_url(
    feature_pinned, own_upstream, run_qola
):
    project, _ = feature_pinned
    shutil.rmtree(own_upstream)
    before = snapshot(project.root)
    res = verify_remote(run_qola, project.manifest)
    assert res.exit_code == 3
    step, error = res.stderr.split("\n", 1)
    assert step == f"qola: lib: checking upstream file://{own_upstream}"  # what it was doing
    assert error.startswith(
        f"qola: lib: `git ls-remote file://{own_upstream} feature` failed with exit code 128:\n    "
    )
    assert "does not appear to be a git repository" in res.stderr
    assert snapshot(project.root) == before


def test_verify_without_remote_spawns_no_network_git(feature_pinned, own_upstream, run_qola):
    """The upstream is gone: an offline verify cannot notice, and must not try."""
    project, _ = feature_pinned
    shutil.rmtree(own_upstream)
    res = run_qola("verify", "-v", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stdout + res.stderr
    commands = ran(res.stderr)
    assert commands and not any(
        word in line for line in commands for word in ("fetch", "ls-remote", "clone")
    ), commands


def test_remote_legacy_pin_with_its_track_key_passes(tmp_path, upstream, run_qola):
    """TE's form: `[qola] lib_commit` on a branch other than the default one. Without
    `lib_track` the pin is (rightly) not in main's history; with it, it is found."""
    from superprojects import legacy_superproject

    root = legacy_superproject(tmp_path / "te", upstream.lib, upstream.lib_v3)
    manifest = root / "qola.toml"
    res = verify_remote(run_qola, manifest, "--manifest-only")
    assert res.exit_code == 1
    assert [kind for kind, _ in problems(res)] == ["unreachable"]
    manifest.write_text(manifest.read_text() + 'lib_track = "side"\n')
    res = verify_remote(run_qola, manifest, "--manifest-only")
    assert res.exit_code == 0, res.stdout + res.stderr
