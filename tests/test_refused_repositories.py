"""A problem in one repository is that repository's problem: never a whole command without
its document.

A repository under the root's `.git/modules/` that belongs to no dependency, with a
config qola would refuse to run some git command in, changes nothing for the
dependencies; a root whose config git cannot read makes each dependency's report carry
it (their gitlinks go unchecked), and every machine format still prints its document.
"""

from __future__ import annotations

import json
import os
import subprocess
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import procs
import pytest
from repos import git, snapshot, without_noop_stamps

FOREIGN_UID = 12345

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: chown to another uid")


def chown_tree(path: Path) -> None:
    subprocess.run(["chown", "-R", f"{FOREIGN_UID}:{FOREIGN_UID}", str(path)], check=True)


def documents(manifest: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    return {fmt: procs.run("verify", "--format", fmt, "-m", str(manifest))
            for fmt in ("text", "json", "junit", "github")}  # fmt: skip


def parsed(fmt: str, out: str) -> object:
    """The document, parsed: a JSON object, a JUnit tree, GitHub workflow commands."""
    if fmt == "json":
        return json.loads(out)
    if fmt == "junit":
        return ElementTree.fromstring(out)
    if fmt == "github":
        return [line for line in out.splitlines() if line.startswith("::")]
    return out.splitlines()


def test_a_refused_repository_of_no_dependency_changes_nothing_for_the_dependencies(
    pinned_by_qola, tmp_path
):
    project = pinned_by_qola
    junk = project.root / ".git" / "modules" / "junk"
    git(tmp_path, "init", "-q", "--bare", str(junk))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    marks = tmp_path / "marks"
    marks.mkdir()
    git(junk, "config", "remote.origin.uploadpack", f"touch {marks}/up; git-upload-pack")
    git(junk, "config", "core.worktree", str(elsewhere))
    chown_tree(project.root)
    before = without_noop_stamps(snapshot(project.root))
    for fmt, proc in documents(project.manifest).items():
        assert proc.returncode == 0, (fmt, proc.stdout, proc.stderr)
        assert parsed(fmt, proc.stdout) is not None
    assert json.loads(documents(project.manifest)["json"].stdout)["ok"] is True
    checkout = procs.run("checkout", "-m", str(project.manifest))
    assert checkout.returncode == 0, checkout.stderr
    assert "up to date" in checkout.stdout
    assert list(marks.iterdir()) == [] and list(elsewhere.iterdir()) == []
    assert without_noop_stamps(snapshot(project.root)) == before


def test_a_root_git_cannot_read_is_each_dependencys_problem_in_every_format(
    pinned_by_qola, tmp_path
):
    project = pinned_by_qola
    folder = tmp_path / "a-folder"
    folder.mkdir()
    git(project.root, "config", "include.path", str(folder))  # git cannot read that config
    chown_tree(project.root)
    found = documents(project.manifest)
    for fmt, proc in found.items():
        assert proc.returncode == 1, (fmt, proc.stdout, proc.stderr)
        assert parsed(fmt, proc.stdout), fmt
    [dep] = json.loads(found["json"].stdout)["deps"]
    assert [p["kind"] for p in dep["problems"]] == ["unsafe"]
    assert dep["problems"][0]["message"].startswith(
        "the root's gitlinks are not read: git cannot read the repository's config: fatal: "
    )
    assert "unsafe: the root's gitlinks are not read" in found["text"].stdout
    assert any("the root" in line for line in parsed("github", found["github"].stdout))
    manifest_only = procs.run("verify", "--manifest-only", "--format", "json",
                              "-m", str(project.manifest))  # fmt: skip
    assert manifest_only.returncode == 1, manifest_only.stderr
    assert json.loads(manifest_only.stdout)["deps"][0]["problems"][0]["kind"] == "unsafe"


_HUGE = b'[filter "' + b"x" * 200_000 + b'"]\n\tclean = cat\n'  # over exec's 128 KiB a variable


def test_a_config_too_big_to_override_through_the_environment_is_overridden_all_the_same(
    pinned_by_qola, upstream, tmp_path
):
    """A 200 KB subsection: its override would not fit in one variable of git's
    environment (exec fails: E2BIG). It goes through a file instead; the dependency's
    other filter still never runs, and every document is printed."""
    project = pinned_by_qola
    marks = tmp_path / "marks"
    marks.mkdir()
    config = project.lib / ".git" / "config"
    config.write_bytes(config.read_bytes() + _HUGE + b'[filter "pwn"]\n\tclean = "touch '
                       + os.fsencode(str(marks)) + b'/clean; cat"\n')  # fmt: skip
    (project.lib / ".git" / "info").mkdir(exist_ok=True)
    (project.lib / ".git" / "info" / "attributes").write_text("* filter=pwn\n")
    chown_tree(project.root)
    for name in ("README", "lib.txt"):
        os.utime(project.lib / name, (1, 1))
    for fmt, proc in documents(project.manifest).items():
        assert proc.returncode == 0, (fmt, proc.stdout, proc.stderr)
        assert parsed(fmt, proc.stdout) is not None
    project.set_pin(upstream.lib_v2, upstream.lib_tip)
    checkout = procs.run("checkout", "-m", str(project.manifest))
    assert checkout.returncode == 0, checkout.stderr
    assert list(marks.iterdir()) == []
    os.utime(project.lib / "README", (1, 1))
    subprocess.run(["git", "-c", "safe.directory=*", "-C", str(project.lib), "status"],
                   capture_output=True, check=False)  # fmt: skip
    assert [p.name for p in marks.iterdir()] == ["clean"]


def test_a_huge_config_of_no_dependency_changes_nothing_for_the_dependencies(pinned_by_qola,
                                                                            tmp_path):  # fmt: skip
    project = pinned_by_qola
    junk = project.root / ".git" / "modules" / "junk"
    git(tmp_path, "init", "-q", "--bare", str(junk))
    (junk / "config").write_bytes((junk / "config").read_bytes() + _HUGE)
    chown_tree(project.root)
    before = without_noop_stamps(snapshot(project.root))
    for fmt, proc in documents(project.manifest).items():
        assert proc.returncode == 0, (fmt, proc.stdout, proc.stderr)
        assert parsed(fmt, proc.stdout) is not None
    checkout = procs.run("checkout", "-m", str(project.manifest))
    assert checkout.returncode == 0, checkout.stderr
    assert "up to date" in checkout.stdout
    assert without_noop_stamps(snapshot(project.root)) == before


def test_overrides_that_fit_one_by_one_but_not_with_the_users_git_c_are_spilled(
    pinned_by_qola, tmp_path
):
    """Seven 20 KB subsections: each override fits a variable of its own, but under a
    wrapper's GIT_CONFIG_PARAMETERS (a `git -c`) qola repeats its pins there, after the
    user's, and that one variable would pass exec's 128 KiB: they go through the file."""
    project = pinned_by_qola
    config = project.lib / ".git" / "config"
    config.write_bytes(config.read_bytes() + b"".join(
        b'[filter "' + str(i).encode() * 20_000 + b'"]\n\tclean = cat\n' for i in range(7)))
    chown_tree(project.root)
    before = without_noop_stamps(snapshot(project.root))
    env = {"GIT_CONFIG_PARAMETERS": "'color.ui'='never'"}
    proc = procs.run("verify", "--format", "json", "-m", str(project.manifest), env=env)
    assert proc.returncode == 0, proc.stderr
    assert [dep["name"] for dep in json.loads(proc.stdout)["deps"]] == ["lib"]
    assert without_noop_stamps(snapshot(project.root)) == before


def test_the_overrides_file_of_a_killed_run_is_swept_by_the_next(pinned_by_qola, tmp_path,
                                                                monkeypatch):  # fmt: skip
    """It holds the user's own settings (a proxy's password): a SIGKILL skips qola's
    clean-up, so the next run removes it, as it does a dead run's shim folder."""
    import gitpause

    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    project = pinned_by_qola
    config = project.lib / ".git" / "config"
    config.write_bytes(config.read_bytes() + _HUGE)
    chown_tree(project.root)
    wrapper = gitpause.make(tmp_path / "wrapper")
    killed, paused = gitpause.run_until(wrapper, 0, "verify", "-m", str(project.manifest),
                                        pause_on="status")  # fmt: skip
    assert killed, paused
    [left] = tmp.glob("qola-overrides-*")
    assert (left / "1.config").is_file()
    proc = procs.run("verify", "-m", str(project.manifest))
    assert proc.returncode == 0, proc.stderr
    assert list(tmp.glob("qola-overrides-*")) == []
