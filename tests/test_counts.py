"""The count of commits between two pins is git's, wherever qola prints or writes it.

The history of a move is fetched into a scratch repository back to a day before the old
pin's date. A long-lived branch merged since brings commits older than that: the fetch
stops at them, and a count from what it holds would be short (`bump` once said 674
commits where `git rev-list --count` said 2,831).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from repos import commit_file, git, head, init_repo, snapshot

DAY = 86400
OLD_WORK = 24  # commits of the long-lived branch made before the old pin


@dataclass(frozen=True)
class Merged:
    """An upstream whose main merged a long-lived branch after the project pinned main."""

    upstream: Path
    root: Path
    manifest: Path
    old: str  # the pin: main, 10 days ago
    new: str  # main's tip: the merge of the branch, today

    def count(self) -> int:
        """What git counts: the commits in new's history and not in old's."""
        return int(git(self.upstream, "rev-list", "--count", self.new, f"^{self.old}"))


@pytest.fixture
def old_branch_merged(tmp_path, monkeypatch) -> Merged:
    """main: base (100 days ago), the pin (10 days ago), then today the merge of `feature`:
    OLD_WORK commits off base made 95 days ago and one made 5 days ago. The project pins
    main at the pin (track main); nothing is checked out."""
    repo = init_repo(tmp_path / "upstream")
    now = int(time.time())

    def dated(days_ago: int) -> None:
        when = f"@{now - days_ago * DAY} +0000"
        monkeypatch.setenv("GIT_AUTHOR_DATE", when)
        monkeypatch.setenv("GIT_COMMITTER_DATE", when)

    dated(100)
    commit_file(repo, "base.txt", "base\n")
    git(repo, "checkout", "-q", "-b", "feature")
    dated(95)
    for n in range(OLD_WORK):
        commit_file(repo, "feature.txt", f"step {n}\n", f"feature step {n}")
    dated(5)
    commit_file(repo, "feature.txt", "done\n", "feature done")
    git(repo, "checkout", "-q", "main")
    dated(10)
    old = commit_file(repo, "main.txt", "pinned\n", "the pin")
    dated(0)
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge feature", "feature")
    monkeypatch.delenv("GIT_AUTHOR_DATE")
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    root = init_repo(tmp_path / "project")
    manifest = root / "qola.toml"
    manifest.write_text(
        f'[deps.up]\npath = "3rdparty/up"\nurl = "{repo}"\ncommit = "{old}"\ntrack = "main"\n'
    )
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "pin up")
    return Merged(repo, root, manifest, old, head(repo))


@pytest.fixture
def checked_out_at_the_pin(old_branch_merged, run_qola) -> Merged:
    """The dependency checked out by qola at the pin: the pin's date is known, so the
    history is fetched back to a day before it."""
    merged = old_branch_merged
    res = run_qola("checkout", "-m", str(merged.manifest))
    assert res.exit_code == 0, res.stderr
    return merged


def test_bump_diff_and_outdated_count_what_git_counts_across_an_old_merged_branch(
    checked_out_at_the_pin, run_qola
):
    merged = checked_out_at_the_pin
    count = merged.count()
    assert count == OLD_WORK + 2
    headline = f"up {merged.old[:7]}..{merged.new[:7]} ({count} commits)"
    before = snapshot(merged.root)
    bumped = run_qola("bump", "up", "--dry-run", "-m", str(merged.manifest))
    assert bumped.exit_code == 0, bumped.stderr
    lines = bumped.stdout.splitlines()
    assert lines[0] == headline
    assert lines[-2:] == [f"  ... and {count - 20} more", "dry run: nothing was written"]
    document = run_qola("bump", "up", "--dry-run", "--format", "json", "-m", str(merged.manifest))
    body = json.loads(document.stdout)
    assert (body["count"], body["count_known"], len(body["commits"])) == (count, True, count)
    every = run_qola("bump", "--all", "--dry-run", "-m", str(merged.manifest))
    assert every.stdout.splitlines()[0] == headline
    assert snapshot(merged.root) == before
    merged.manifest.write_text(merged.manifest.read_text().replace(merged.old, merged.new))
    assert run_qola("diff", "-m", str(merged.manifest)).stdout.splitlines()[0] == headline
    merged.manifest.write_text(merged.manifest.read_text().replace(merged.new, merged.old))
    res = run_qola("outdated", "-m", str(merged.manifest), "--format", "json")
    assert json.loads(res.stdout)["deps"][0]["behind"] == count


def test_bump_commit_message_counts_what_git_counts(checked_out_at_the_pin, run_qola):
    merged = checked_out_at_the_pin
    res = run_qola("bump", "up", "--commit", "--no-checkout", "-m", str(merged.manifest))
    assert res.exit_code == 0, res.stderr
    message = git(merged.root, "log", "-1", "--format=%B")
    assert message.startswith(f"Bump up from {merged.old[:7]} to {merged.new[:7]}\n\n")
    assert message.endswith(f"\n... and {merged.count() - 20} more")
    assert len(message.splitlines()) == 2 + 20 + 1


def test_bump_all_commit_message_counts_what_git_counts(checked_out_at_the_pin, run_qola):
    merged = checked_out_at_the_pin
    res = run_qola("bump", "--all", "--commit", "--no-checkout", "-m", str(merged.manifest))
    assert res.exit_code == 0, res.stderr
    message = git(merged.root, "log", "-1", "--format=%B")
    assert f"up {merged.old[:7]}..{merged.new[:7]} ({merged.count()} commits)\n" in message
    assert f"\n  ... and {merged.count() - 20} more" in message


@pytest.fixture
def shallow_since_the_pin(old_branch_merged) -> Merged:
    """The dependency cloned by hand back to a day before the pin: the merge and the
    branch's last commit are there, the branch's older commits are not."""
    merged = old_branch_merged
    since = int(git(merged.upstream, "log", "-1", "--format=%ct", merged.old)) - DAY
    git(merged.root, "clone", "-q", f"--shallow-since={since}",
        f"file://{merged.upstream}", "3rdparty/up")  # fmt: skip
    clone = merged.root / "3rdparty" / "up"
    assert int(git(clone, "rev-list", "--count", merged.new, f"^{merged.old}")) < merged.count()
    git(clone, "checkout", "-q", "--detach", merged.old)
    return merged


def test_bump_offline_in_a_shallow_clone_says_the_count_is_unknown(
    shallow_since_the_pin, run_qola
):
    """Offline nothing can be fetched: the count cannot be known, so it is not given."""
    merged = shallow_since_the_pin
    before = snapshot(merged.root)
    res = run_qola("bump", "up", "--offline", "--to", merged.new, "--dry-run", "-m",
                   str(merged.manifest))  # fmt: skip
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == (
        f"up {merged.old[:7]}..{merged.new[:7]} (commits unknown: the local history between "
        "is shallow; run without --offline to count them)"
    )
    assert not any("more" in line for line in lines)
    document = run_qola("bump", "up", "--offline", "--to", merged.new, "--dry-run", "--format",
                        "json", "-m", str(merged.manifest))  # fmt: skip
    body = json.loads(document.stdout)
    assert body["count_known"] is False  # count: only the commits the clone holds
    assert body["count"] == len(body["commits"]) < merged.count()
    assert snapshot(merged.root) == before


def test_bump_offline_commit_in_a_shallow_clone_writes_no_count(shallow_since_the_pin, run_qola):
    merged = shallow_since_the_pin
    res = run_qola("bump", "up", "--offline", "--to", merged.new, "--commit", "--no-checkout",
                   "-m", str(merged.manifest))  # fmt: skip
    assert res.exit_code == 0, res.stderr
    message = git(merged.root, "log", "-1", "--format=%B")
    assert message.endswith(
        "\n(commits unknown: the local history between is shallow; run without --offline to "
        "count them)"
    )
    assert "more" not in message


def test_bump_offline_from_one_commit_deep_pins_refuses_saying_it_cannot_tell(
    old_branch_merged, run_qola
):
    """Both pins one commit deep (as qola fetches them): whether new descends from old
    cannot be told offline; the refusal says so, and nothing is written."""
    merged = old_branch_merged
    clone = init_repo(merged.root / "3rdparty" / "up")
    git(clone, "remote", "add", "origin", str(merged.upstream))
    for sha in (merged.old, merged.new):
        git(clone, "fetch", "-q", "--depth=1", f"file://{merged.upstream}", sha)
    git(clone, "checkout", "-q", "--detach", merged.old)
    before = snapshot(merged.root)
    res = run_qola("bump", "up", "--offline", "--to", merged.new, "-m", str(merged.manifest))
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: up: cannot tell whether {merged.new[:12]} ({merged.new}) descends from the "
        f"current pin {merged.old[:12]}: the local history between is shallow and --offline "
        "forbids fetching the rest; nothing was changed\n"
        "hint: run without --offline; if moving back (or sideways) is intended, add "
        "--allow-downgrade\n"
    )
    assert snapshot(merged.root) == before


def test_bump_to_a_commit_made_in_a_full_clone_of_the_dependency_is_refused(
    checked_out_at_the_pin, run_qola
):
    """The clone holds both commits and the history between, but the new one is not
    upstream: learning the commits from the remote fails, and nothing is written."""
    merged = checked_out_at_the_pin
    clone = merged.root / "3rdparty" / "up"
    git(clone, "fetch", "-q", "--unshallow", "origin")
    git(clone, "commit", "-q", "--allow-empty", "-m", "made here")
    local = head(clone)
    git(clone, "checkout", "-q", "--detach", merged.old)
    before = snapshot(merged.root)
    res = run_qola("bump", "up", "--to", local, "-m", str(merged.manifest))
    assert res.exit_code == 3
    assert res.stderr.splitlines()[0] == (
        "qola: up: `git fetch -q --no-tags --no-write-fetch-head --no-recurse-submodules "
        f"--filter=tree:0 --end-of-options {merged.upstream} {local}` failed with exit code 128:"
    )
    assert f"upload-pack: not our ref {local}" in res.stderr
    assert snapshot(merged.root) == before
