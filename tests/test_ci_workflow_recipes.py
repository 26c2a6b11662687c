"""The pull-request (`qola diff`) and scheduled (`qola outdated`) recipes of docs/ci.md, run as
written: what is skipped, and why, is said in docs/ci.md ("How these recipes are tested")."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from repos import git
from shell import qola_env, run_shell
from superprojects import legacy_superproject
from test_ci_recipes import INSTALL, Step, only_job, recipe

COMMENT = 'gh pr comment "$PR" --body-file pin-diff.md'


def run_job(
    job: dict[str, Any], origin: Path, tmp_path: Path, branch: str = "main",
    env: dict[str, str] | None = None,
) -> list[Step]:  # fmt: skip
    """The job's steps in order, in a clone at branch, each `run:` in its own bash -e."""
    workspace = tmp_path / "workspace"
    full_env = {**qola_env(tmp_path / "tools"), **(env or {})}
    steps: list[Step] = []
    for step in job["steps"]:
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout@"):
            assert step["with"]["submodules"] is False  # qola needs no checkout of them
            git(origin.parent, "clone", "-q", "--no-recurse-submodules", "-b", branch,
                str(origin), str(workspace))  # fmt: skip
        elif uses.startswith("actions/setup-python@") or step["run"] == INSTALL:
            continue  # the tests' interpreter; `qola` on PATH is this checkout
        elif step["run"] == COMMENT:
            assert step["continue-on-error"] is True  # a fork's read-only token fails it
            continue  # skipped: the network
        else:
            proc = run_shell(step["run"], workspace, full_env)
            steps.append(Step(step["run"], proc.returncode, proc.stdout, proc.stderr))
            if proc.returncode != 0:
                break
    return steps


def test_pin_diff_recipe_puts_the_table_in_the_job_summary(tmp_path, upstream):
    origin = legacy_superproject(tmp_path / "origin", upstream.lib, upstream.lib_v2)
    git(origin, "checkout", "-q", "-b", "bump-lib")
    manifest = origin / "qola.toml"
    manifest.write_text(manifest.read_text().replace(upstream.lib_v2, upstream.lib_tip))
    git(origin, "update-index", "--cacheinfo", f"160000,{upstream.lib_tip},3rdparty/lib")
    git(origin, "commit", "-q", "-am", "Bump lib")
    summary = tmp_path / "summary.md"
    workflow = recipe("github-actions-pin-diff")
    assert workflow[True]["pull_request"]["paths"] == ["qola.toml", ".gitmodules", "3rdparty/**"]
    steps = run_job(only_job(workflow), origin, tmp_path, "bump-lib",
                    {"GITHUB_BASE_REF": "main", "GITHUB_STEP_SUMMARY": str(summary)})  # fmt: skip
    assert [(s.command, s.returncode) for s in steps] == [
        ('qola diff "origin/$GITHUB_BASE_REF" --format markdown > pin-diff.md', 0),
        ('cat pin-diff.md >> "$GITHUB_STEP_SUMMARY"', 0),
    ], steps
    v2, tip = upstream.lib_v2, upstream.lib_tip
    assert summary.read_text() == (
        "### qola: pins changed since `origin/main`\n\n"
        "| dependency | change | from | to | commits |\n"
        "|---|---|---|---|---|\n"
        f"| `lib` | forward | `{v2[:12]}` | `{tip[:12]}` | +1 |\n\n"
        "<details><summary><code>lib</code>: 1 commit</summary>\n\n"
        f"- `{tip[:7]}` lib v4 (qola tests, 2024-01-01)\n\n"
        "</details>\n"
    )


def test_outdated_recipe_passes_when_every_pin_is_at_its_tip(tmp_path, upstream):
    origin = legacy_superproject(tmp_path / "origin", upstream.lib, upstream.lib_tip)
    steps = run_job(only_job(recipe("github-actions-outdated")), origin, tmp_path)
    assert [(s.command, s.returncode) for s in steps] == [
        ("qola outdated --fail-if-behind 30d", 0)
    ], steps


def test_outdated_recipe_fails_on_a_pin_behind_by_old_commits(tmp_path, upstream):
    origin = legacy_superproject(tmp_path / "origin", upstream.lib, upstream.lib_v2)
    steps = run_job(only_job(recipe("github-actions-outdated")), origin, tmp_path)
    [step] = steps
    assert step.returncode == 1
    days = int((time.time() - 1704067200) // 86400)  # lib v4 was made on 2024-01-01
    assert step.stdout.splitlines()[1].split() == [
        "lib", upstream.lib_v2[:12], "2024-01-01", "the", "default", "branch",
        upstream.lib_tip[:12], "1", str(days),
    ]  # fmt: skip
    assert step.stderr == "qola: 1 of 1 dependency is more than 30 days behind: lib\n"
    assert not (tmp_path / "workspace" / "3rdparty" / "lib" / ".git").exists()  # no checkout
    assert os.listdir(tmp_path / "workspace" / "3rdparty" / "lib") == []
