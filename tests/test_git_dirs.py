"""Whether a folder is a git dir (qola/repo/gitpaths.py is_git_dir), asked of git itself: its
discovery takes a folder for a bare repository exactly when is_git_directory (setup.c) does."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from repos import commit_file, git, init_repo

from qola.repo.gitpaths import is_git_dir, may_hold_repository


def _git_takes(folder: Path) -> bool:
    # Discovery stops at folder's parent: only folder itself can be the git dir found.
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(folder.parent)}
    out = subprocess.run(["git", "-C", str(folder), "rev-parse", "--absolute-git-dir"],
                         capture_output=True, text=True, env=env)  # fmt: skip
    return out.returncode == 0 and Path(out.stdout.strip()) == folder


def _made(tmp_path: Path, kind: str) -> Path:
    folder = tmp_path / kind
    if kind == "bare":
        git(tmp_path, "init", "-q", "--bare", str(folder))
    elif kind == "linked-worktree":
        repo = init_repo(tmp_path / "repo")
        commit_file(repo, "a.txt", "a")
        git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "linked"))
        folder = repo / ".git" / "worktrees" / "linked"
    elif kind.startswith("HEAD+commondir"):  # a linked worktree's, its common dir not one
        folder.mkdir()
        (folder / "HEAD").write_text("ref: refs/heads/main\n")
        common = tmp_path / "common"
        if kind.endswith("to-empty"):
            common.mkdir()
        (folder / "commondir").write_text(f"{common}\n")
    else:
        folder.mkdir()
        for name in kind.split("+"):
            if name == "HEAD":
                (folder / "HEAD").write_text("ref: refs/heads/main\n")
            elif name != "empty":
                (folder / name).mkdir()
    return folder


@pytest.mark.parametrize(
    "kind", ["bare", "linked-worktree", "HEAD+objects+refs", "empty", "HEAD", "HEAD+objects",
             "HEAD+refs", "objects+refs", "HEAD+commondir-to-nowhere", "HEAD+commondir-to-empty"],
)
def test_a_git_dir_is_what_git_takes_for_one(tmp_path, kind):
    folder = _made(tmp_path, kind)
    taken = kind in ("bare", "linked-worktree", "HEAD+objects+refs")
    assert _git_takes(folder) == taken  # the test asks git something it answers both ways
    assert is_git_dir(str(folder)) == taken


def test_where_git_may_run_is_asked_more_widely(tmp_path):
    """HEAD and objects/ without refs/: git takes it for no git dir, but where too many is
    harmless (trust, configs git might read) qola counts it."""
    folder = _made(tmp_path, "HEAD+objects")
    assert may_hold_repository(str(folder)) and not is_git_dir(str(folder))
    assert not may_hold_repository(str(_made(tmp_path, "HEAD+refs")))
