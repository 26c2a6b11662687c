"""The CI recipes of docs/ci.md, run as written against a fixture repository.

Each YAML block marked `<!-- tested-recipe: NAME -->` is parsed and its commands run
in a fresh clone of a TransformerEngine-style superproject. What is not run, and why
(docs/ci.md, "How these recipes are tested"):

- the checkout actions become `git clone` without submodules (the recipe must ask
  for exactly that), and `actions/setup-python` is skipped: this interpreter runs;
- the line installing qola from its git URL is skipped, explicitly and only it: tests
  never use the network, and `qola` on PATH is this checkout (tests/shell.py).
"""

from __future__ import annotations

import os
import re
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from repos import git
from shell import SOURCE, qola_env, run_shell
from superprojects import legacy_superproject

FOREIGN_UID = 12345
DOC = SOURCE / "docs" / "ci.md"
INSTALL = 'pip install "git+<qola\'s repository URL>@<tag or commit>"'  # not on PyPI


def recipe(name: str) -> dict[str, Any]:
    """The YAML block that follows `<!-- tested-recipe: name -->` in docs/ci.md."""
    found = re.search(
        rf"<!-- tested-recipe: {re.escape(name)} -->\n```yaml\n(.*?)```", DOC.read_text(), re.S
    )
    assert found, f"docs/ci.md has no recipe {name!r}"
    parsed = yaml.safe_load(found.group(1))
    assert isinstance(parsed, dict)
    return parsed


@dataclass
class Step:
    command: str
    returncode: int
    stdout: str
    stderr: str


def clone(origin: Path, workspace: Path) -> Path:
    """The CI system's checkout: the repository, its submodules left alone."""
    git(origin.parent, "clone", "-q", "--no-recurse-submodules", str(origin), str(workspace))
    return workspace


def run_github_job(job: dict[str, Any], origin: Path, tmp_path: Path) -> list[Step]:
    """The job's steps in order, each `run:` in its own bash -e, until one fails."""
    workspace = tmp_path / "workspace"
    env = qola_env(tmp_path / "tools")
    steps: list[Step] = []
    for step in job["steps"]:
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout@"):
            assert step["with"]["submodules"] is False  # qola checks the dependencies out
            clone(origin, workspace)
        elif uses.startswith("actions/setup-python@"):
            continue  # the tests' own interpreter
        elif step["run"] == INSTALL:
            continue  # skipped: the network; `qola` on PATH is this checkout
        else:
            proc = run_shell(step["run"], workspace, env)
            steps.append(Step(step["run"], proc.returncode, proc.stdout, proc.stderr))
            if proc.returncode != 0:
                break
    return steps


@pytest.fixture
def te_origin(tmp_path, upstream) -> Path:
    """The project CI checks out: lib as a submodule, pinned by `[qola] lib_commit`."""
    return legacy_superproject(tmp_path / "origin", upstream.lib, upstream.lib_v2)


def move_gitlink_only(origin: Path, sha: str) -> None:
    """A commit that moves the submodule and forgets the manifest."""
    git(origin, "update-index", "--cacheinfo", f"160000,{sha},3rdparty/lib")
    git(origin, "commit", "-q", "-m", "move lib, forget qola.toml")


def only_job(workflow: dict[str, Any]) -> dict[str, Any]:
    [job] = workflow["jobs"].values()
    assert isinstance(job, dict)
    return job


def test_github_actions_recipe_passes_on_agreeing_pins(te_origin, upstream, tmp_path):
    steps = run_github_job(only_job(recipe("github-actions")), te_origin, tmp_path)
    assert [(s.command, s.returncode) for s in steps] == [
        ("qola checkout", 0),
        ("qola verify --format github", 0),
    ], steps
    assert steps[0].stdout == (
        f"lib 3rdparty/lib {upstream.lib_v2[:12]} cloned {upstream.lib}\n"
    )
    assert steps[1].stdout == ""  # workflow commands only: there are none
    assert steps[1].stderr.endswith("qola: 1 dependency matches the manifest\n")


def test_github_actions_recipe_annotates_the_pin(te_origin, upstream, tmp_path):
    move_gitlink_only(te_origin, upstream.lib_tip)
    steps = run_github_job(only_job(recipe("github-actions")), te_origin, tmp_path)
    assert [(s.command, s.returncode) for s in steps] == [
        ("qola checkout", 0),
        ("qola verify --format github", 1),
    ], steps
    assert steps[1].stdout == (
        "::error file=qola.toml,line=3,title=qola verify%3A lib gitlink::lib (3rdparty/lib): "
        f"the root records 3rdparty/lib at {upstream.lib_tip[:12]} but the manifest pins "
        f"{upstream.lib_v2[:12]}\n"
    )
    assert steps[1].stderr.endswith("qola: 1 of 1 dependency does not match the manifest\n")


def test_github_upstream_recipe_passes_when_the_pin_is_on_the_default_branch(te_origin, tmp_path):
    steps = run_github_job(only_job(recipe("github-actions-upstream")), te_origin, tmp_path)
    assert [(s.command, s.returncode) for s in steps] == [
        ("qola verify --manifest-only --remote --format github", 0)
    ], steps
    assert not (tmp_path / "workspace" / "3rdparty" / "lib" / ".git").exists()  # no checkout


def test_github_upstream_recipe_reports_a_pin_off_the_default_branch(tmp_path, upstream):
    origin = legacy_superproject(tmp_path / "origin", upstream.lib, upstream.lib_v3)
    steps = run_github_job(only_job(recipe("github-actions-upstream")), origin, tmp_path)
    [step] = steps
    assert step.returncode == 1
    assert step.stdout.startswith(
        "::error file=qola.toml,line=3,title=qola verify%3A lib unreachable::lib (3rdparty/lib): "
        f"the pin {upstream.lib_v3[:12]} is not in the history of the default branch at "
        f"{upstream.lib} (now at {upstream.lib_tip[:12]})"
    )


needs_root = pytest.mark.skipif(
    os.geteuid() != 0,
    reason="needs root: chown-ing the clone to another uid is the test",
)


def run_gitlab_job(job: dict[str, Any], origin: Path, tmp_path: Path) -> tuple[Path, Step]:
    """Clone, hand the clone to another uid, then run before_script + script as one shell."""
    assert job["variables"]["GIT_SUBMODULE_STRATEGY"] == "none"
    workspace = clone(origin, tmp_path / "workspace")
    subprocess.run(["chown", "-R", f"{FOREIGN_UID}:{FOREIGN_UID}", str(workspace)], check=True)
    refused = subprocess.run(
        ["git", "-C", str(workspace), "status"], capture_output=True, text=True, check=False
    )
    assert "detected dubious ownership" in refused.stderr  # the situation is real
    lines = [*job["before_script"], *job["script"]]
    install = f"python -m venv /tmp/qola && /tmp/qola/bin/{INSTALL}"
    assert lines[0] == install  # skipped: the network; `qola` on PATH is this checkout
    script = "\n".join(lines[1:])
    env = {**qola_env(tmp_path / "tools"), "CI_PROJECT_DIR": str(workspace)}
    proc = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return workspace, Step(script, proc.returncode, proc.stdout, proc.stderr)


@needs_root
def test_gitlab_recipe_as_a_foreign_uid_passes_on_agreeing_pins(te_origin, upstream, tmp_path):
    job = recipe("gitlab-ci")["verify-pins"]
    assert job["image"]["docker"]["user"] != "0"
    workspace, step = run_gitlab_job(job, te_origin, tmp_path)
    assert step.returncode == 0, step.stderr
    report = ET.parse(workspace / job["artifacts"]["reports"]["junit"]).getroot()
    assert report.get("tests") == "1" and report.get("failures") == "0"
    [case] = report.iter("testcase")
    assert case.get("name") == "lib" and case.find("failure") is None
    assert "dubious ownership" not in step.stderr
    lib = workspace / "3rdparty" / "lib"
    assert git(lib, "-c", f"safe.directory={lib}", "rev-parse", "HEAD") == upstream.lib_v2


@needs_root
def test_gitlab_recipe_as_a_foreign_uid_reports_the_gitlink(te_origin, upstream, tmp_path):
    move_gitlink_only(te_origin, upstream.lib_tip)
    job = recipe("gitlab-ci")["verify-pins"]
    workspace, step = run_gitlab_job(job, te_origin, tmp_path)
    assert step.returncode == 1  # the job fails; `artifacts: when: always` keeps the report
    report = ET.parse(workspace / job["artifacts"]["reports"]["junit"]).getroot()
    assert report.get("tests") == "1" and report.get("failures") == "1"
    failure = report.find("testsuite/testcase/failure")
    assert failure is not None and failure.get("type") == "gitlink"
    assert job["artifacts"]["when"] == "always"
