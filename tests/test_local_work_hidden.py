"""Files flagged assume-unchanged or skip-worktree and then edited: local work that git status
cannot see, and that `reset --hard` or a checkout write over. A move refuses over them (exit
4, the commands that save them listed, nothing changed); --force saves them first."""

from __future__ import annotations

import re

import pytest
from repos import git, head, snapshot, without_noop_stamps

FLAGS = ["assume-unchanged", "skip-worktree"]
EDIT = "my local settings\n"


def flag_and_edit(repo, path: str, flag: str) -> None:
    git(repo, "update-index", f"--{flag}", "--", path)
    (repo / path).write_text(EDIT)
    assert git(repo, "status", "--porcelain") == ""  # git itself sees nothing


@pytest.mark.parametrize("flag", FLAGS)
@pytest.mark.parametrize("where", ["lib", "nested"])
def test_a_move_refuses_over_a_flagged_edit_and_changes_nothing(
    pinned_by_qola, upstream, run_qola, flag, where
):
    repo, path = (pinned_by_qola.lib, "README") if where == "lib" else (
        pinned_by_qola.nested, "nested.txt")  # fmt: skip
    flag_and_edit(repo, path, flag)
    pinned_by_qola.set_pin(upstream.lib_v2, upstream.lib_v1)
    before = without_noop_stamps(snapshot(pinned_by_qola.root))
    res = run_qola("checkout", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 4, res.stderr
    shown = "3rdparty/lib/" + ("" if where == "lib" else "extern/nested/") + path
    assert f"uncommitted: {shown} (modified, hidden from git status by {flag})" in res.stderr
    assert f"update-index --no-{flag} -- {path}  # stash sees them only then" in res.stderr
    assert without_noop_stamps(snapshot(pinned_by_qola.root)) == before
    assert (repo / path).read_text() == EDIT


@pytest.mark.parametrize("flag", FLAGS)
@pytest.mark.parametrize("where", ["lib", "nested"])
def test_force_saves_a_flagged_edit_before_the_move(
    pinned_by_qola, upstream, run_qola, flag, where
):
    repo, path = (pinned_by_qola.lib, "README") if where == "lib" else (
        pinned_by_qola.nested, "nested.txt")  # fmt: skip
    flag_and_edit(repo, path, flag)
    pinned_by_qola.set_pin(upstream.lib_v2, upstream.lib_v1)
    res = run_qola("checkout", "--force", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(pinned_by_qola.lib) == upstream.lib_v1
    refs = re.findall(r"stash apply (\S+)", res.stderr)
    saved = [ref for ref in refs if git(repo, "show", f"{ref}:{path}") + "\n" == EDIT]
    assert saved, res.stderr  # the edit is in a backup, not lost
    verify = run_qola("verify", "-m", str(pinned_by_qola.manifest))
    assert verify.exit_code == 0, verify.stdout


def test_a_flagged_file_left_as_it_was_is_no_local_work(pinned_by_qola, upstream, run_qola):
    git(pinned_by_qola.lib, "update-index", "--assume-unchanged", "--", "README")
    pinned_by_qola.set_pin(upstream.lib_v2, upstream.lib_v1)
    res = run_qola("checkout", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(pinned_by_qola.lib) == upstream.lib_v1
