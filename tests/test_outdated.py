"""`qola outdated [NAMES]`: how far each pin is behind what it follows upstream."""

from __future__ import annotations

import json
import time

import pytest
from repos import commit_file, git, init_repo, ran, snapshot
from superprojects import legacy_superproject

DAY = 86400
JAN_1_2024 = 1704067200  # every commit of the test repositories (conftest's fixed dates)


def days_since_2024() -> int:
    return int((time.time() - JAN_1_2024) // DAY)


def outdated(run_qola, project, *args: str):
    return run_qola("outdated", "-m", str(project.manifest), *args)


def table(*rows: tuple[str, ...]) -> str:
    header = ("NAME", "PIN", "PINNED", "FOLLOWS", "TIP", "BEHIND", "DAYS")
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(7)]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() + "\n"
        for row in (header, *rows)
    )


def lib_row(upstream, pin: str, behind: str, days: str, follows: str = "main") -> tuple[str, ...]:
    return ("lib", pin[:12], "2024-01-01", follows, upstream.lib_tip[:12], behind, days)


def nested_move(upstream) -> str:
    """The line of lib's nested submodule moving from v1 to v2 (lib v1..v2 moves it)."""
    return f"submodule extern/nested: {upstream.nested_v1[:7]}..{upstream.nested_v2[:7]}"


def test_outdated_counts_the_commits_the_pin_lacks(make_project, upstream, run_qola):
    project = make_project()
    before = snapshot(project.root)
    res = outdated(run_qola, project)
    assert res.exit_code == 0, res.stderr
    assert res.stdout == table(lib_row(upstream, upstream.lib_v2, "1", str(days_since_2024())))
    assert res.stderr == ""
    assert snapshot(project.root) == before  # no clone, nothing written


def test_outdated_of_a_pin_at_the_tip_is_zero_behind(make_project, upstream, run_qola):
    res = outdated(run_qola, make_project(pin=upstream.lib_tip))
    assert res.stdout == table(lib_row(upstream, upstream.lib_tip, "0", "-"))


def test_outdated_leaves_a_checked_out_dependency_untouched(pinned_by_qola, upstream, run_qola):
    before = snapshot(pinned_by_qola.root)
    res = outdated(run_qola, pinned_by_qola, "-v")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.endswith(
        "lib: the commits on main that the pin lacks:\n"
        f"  {upstream.lib_tip[:7]} lib v4 (qola tests, 2024-01-01)\n"
    )
    fetches = [command for command in ran(res.stderr) if command.startswith("fetch ")]
    assert fetches and all("--filter=tree:0" in line for line in fetches)
    assert any("--shallow-since=" in line for line in fetches)  # back to the pin's date only
    assert snapshot(pinned_by_qola.root) == before


@pytest.mark.parametrize(
    ("limit", "code"),
    [("0", 1), ("1", 0), ("30d", 1), ("100000d", 0)],
    ids=["commits-over", "commits-within", "days-over", "days-within"],
)
def test_outdated_fail_if_behind_commits_or_days(make_project, run_qola, limit, code):
    project = make_project()
    res = outdated(run_qola, project, "--fail-if-behind", limit)
    assert res.exit_code == code
    if code:
        what = "0 commits" if limit == "0" else "30 days"
        assert res.stderr == f"qola: 1 of 1 dependency is more than {what} behind: lib\n"
    else:
        assert res.stderr == ""


def test_outdated_bad_limit_exits_2_and_writes_nothing(make_project, run_qola):
    project = make_project()
    before = snapshot(project.root)
    res = outdated(run_qola, project, "--fail-if-behind", "2w")
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr == (
        "qola: --fail-if-behind: '2w' is neither a number of commits nor of days\n"
        "hint: write 10 for ten commits, 30d for thirty days\n"
    )
    assert snapshot(project.root) == before


def test_outdated_unknown_name_exits_2(make_project, run_qola):
    res = outdated(run_qola, make_project(), "lbi")
    assert res.exit_code == 2
    assert res.stderr.endswith("no dependency named 'lbi'\nhint: did you mean 'lib'?\n")


def test_outdated_legacy_form_follows_the_default_branch(tmp_path, upstream, run_qola):
    root = legacy_superproject(tmp_path / "te", upstream.lib, upstream.lib_v1)
    res = run_qola("outdated", "-m", str(root / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    # v1..tip: v2 and v4 on main (the side branch's commit is not on it).
    assert res.stdout == table(
        lib_row(upstream, upstream.lib_v1, "2", str(days_since_2024()), "the default branch")
    ) + f"lib: at the tip, {nested_move(upstream)}\n"


def test_outdated_pin_off_its_track_says_so(make_project, upstream, run_qola):
    res = outdated(run_qola, make_project(pin=upstream.lib_v3))
    assert res.exit_code == 0
    assert res.stdout == table(
        lib_row(upstream, upstream.lib_v3, "2", str(days_since_2024()))
    ) + (
        "lib: the pin is not in the history of main; 2 of its commits are missing from the pin\n"
        f"lib: at the tip, {nested_move(upstream)}\n"
    )


def test_outdated_json_document(make_project, upstream, run_qola):
    res = outdated(run_qola, make_project(), "--format", "json", "--fail-if-behind", "0")
    assert res.exit_code == 1
    document = json.loads(res.stdout)
    assert {k: document[k] for k in ("schema", "ok", "limit")} == {
        "schema": 1,
        "ok": False,
        "limit": {"commits": 0, "days": None},
    }
    [dep] = document["deps"]
    assert dep == {
        "name": "lib",
        "path": "3rdparty/lib",
        "pinned": upstream.lib_v2,
        "tag": None,
        "pinned_date": "2024-01-01T00:00:00Z",
        "follows": "main",
        "ref": "refs/heads/main",
        "tip": upstream.lib_tip,
        "tip_tag": None,
        "releases_behind": None,
        "tip_date": "2024-01-01T00:00:00Z",
        "tip_subject": "lib v4",
        "behind": 1,
        "behind_days": days_since_2024(),
        "on_track": True,
        "submodules": [],
        "over_limit": True,
        "error": None,
    }


def test_outdated_vanished_track_exits_3_after_the_others(make_project, upstream, run_qola):
    other = (
        f'[deps.other]\npath = "3rdparty/other"\nurl = "{upstream.nested}"\n'
        f'commit = "{upstream.nested_v1}"\ntrack = "gone"\n'
    )
    project = make_project(extra=other)
    res = outdated(run_qola, project)
    assert res.exit_code == 3
    assert res.stdout.splitlines()[1].startswith("lib ")
    assert res.stdout.splitlines()[2].split() == ["other", upstream.nested_v1[:12], "-", "gone",
                                                  "-", "?", "-"]  # fmt: skip
    assert res.stderr == (
        f"qola: other: track 'gone' no longer exists at {upstream.nested} (deleted?)\n"
        "hint: point track at an existing branch or tag\n"
    )


def test_outdated_group_selects(make_project, upstream, run_qola):
    other = (
        f'groups = ["fa"]\n[deps.other]\npath = "3rdparty/other"\nurl = "{upstream.nested}"\n'
        f'commit = "{upstream.nested_v1}"\n'
    )
    res = outdated(run_qola, make_project(extra=other), "--group", "fa")
    assert [line.split()[0] for line in res.stdout.splitlines()] == ["NAME", "lib"]


@pytest.mark.parametrize(
    ("limit", "said"),
    [("0", "more than 0 commits behind"), ("1", "more than 1 commit behind"),
     ("2", "more than 2 commits behind"), ("1d", "more than 1 day behind"),
     ("30d", "more than 30 days behind")],
)  # fmt: skip
def test_outdated_limit_counts_its_commits_and_days_in_words_that_agree(limit, said):
    from qola.history.outdated import parse_limit

    assert parse_limit(limit).describe() == said


@pytest.fixture
def old_branch_merged_today(tmp_path, make_project, monkeypatch):
    """An upstream whose main merged, today, a branch with a commit made 90 days ago, off
    a commit made 100 days ago that the project pins (track main)."""
    repo = init_repo(tmp_path / "merged-upstream")
    now = int(time.time())

    def dated(days_ago: int) -> None:
        when = f"@{now - days_ago * DAY} +0000"
        monkeypatch.setenv("GIT_AUTHOR_DATE", when)
        monkeypatch.setenv("GIT_COMMITTER_DATE", when)

    dated(100)
    base = commit_file(repo, "base.txt", "base\n")
    git(repo, "checkout", "-q", "-b", "feature")
    dated(90)
    commit_file(repo, "feature.txt", "feature\n", "feature work")
    git(repo, "checkout", "-q", "main")
    dated(0)
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge feature", "feature")
    manifest = (f'[deps.up]\npath = "3rdparty/up"\nurl = "{repo}"\ncommit = "{base}"\n'
                'track = "main"\n')  # fmt: skip
    project = make_project()
    project.manifest.write_text(manifest)
    return project


def test_outdated_days_count_from_when_a_merge_landed_not_from_its_commits(
    old_branch_merged_today, run_qola
):
    res = outdated(run_qola, old_branch_merged_today, "--format", "json")
    [dep] = json.loads(res.stdout)["deps"]
    assert (dep["behind"], dep["behind_days"]) == (2, 0)
    res = outdated(run_qola, old_branch_merged_today, "--fail-if-behind", "30d")
    assert (res.exit_code, res.stderr) == (0, "")
