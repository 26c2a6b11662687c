"""`qola bump --all`: every tracked pin to its tip, in one commit, all or nothing."""

from __future__ import annotations

import pytest
from repos import commit_file, git, head, init_repo, snapshot
from superprojects import legacy_superproject

OTHER = 'groups = ["small"]\n'


def other_table(upstream, pin: str, track: str = 'track = "main"\n') -> str:
    return (
        f'[deps.other]\npath = "3rdparty/other"\nurl = "{upstream.nested}"\n'
        f'commit = "{pin}"\n{track}{OTHER}'
    )


@pytest.fixture
def two_behind(make_project, upstream, run_qola):
    """lib (track main) at v1 and other (the nested upstream, track main) at its v1, both
    checked out; loner has no track."""
    loner = (
        f'[deps.loner]\npath = "3rdparty/loner"\nurl = "{upstream.nested}"\n'
        f'commit = "{upstream.nested_v1}"\n'
    )
    project = make_project(pin=upstream.lib_v1, extra=other_table(upstream, upstream.nested_v1)
                           + loner)  # fmt: skip
    assert run_qola("checkout", "-q", "-m", str(project.manifest)).exit_code == 0
    return project


def bump_all(run_qola, project, *args: str):
    return run_qola("bump", "--all", "-m", str(project.manifest), *args)


def test_bump_all_moves_every_tracked_pin_in_one_commit(two_behind, upstream, run_qola):
    before = two_behind.manifest.read_text()
    res = bump_all(run_qola, two_behind, "--commit")
    assert res.exit_code == 0, res.stderr
    lib = f"lib {upstream.lib_v1[:7]}..{upstream.lib_tip[:7]} (2 commits)"
    assert res.stdout.splitlines()[0] == lib
    assert f"other {upstream.nested_v1[:7]}..{upstream.nested_v2[:7]} (1 commit)" in res.stdout
    assert two_behind.manifest.read_text() == before.replace(
        upstream.lib_v1, upstream.lib_tip
    ).replace(f'commit = "{upstream.nested_v1}"\ntrack', f'commit = "{upstream.nested_v2}"\ntrack')
    assert head(two_behind.lib) == upstream.lib_tip
    assert head(two_behind.nested) == upstream.nested_v2  # lib's nested submodule followed
    assert head(two_behind.root / "3rdparty" / "other") == upstream.nested_v2
    assert head(two_behind.root / "3rdparty" / "loner") == upstream.nested_v1  # no track
    assert "qola: no track to follow, left as they are: loner\n" in res.stderr
    assert "qola: qola.toml now pins 2 new commits\n" in res.stderr
    message = git(two_behind.root, "log", "-1", "--format=%B")
    assert message.startswith("Bump 2 dependencies: lib, other\n\n")
    assert f"lib {upstream.lib_v1[:7]}..{upstream.lib_tip[:7]} (2 commits)\n" in message
    assert git(two_behind.root, "status", "--porcelain") == ""


def test_bump_all_commit_leaves_an_unstaged_edit_of_the_manifest_out_of_the_commit(
    two_behind, upstream, run_qola
):
    committed = git(two_behind.root, "show", "HEAD:qola.toml")
    two_behind.manifest.write_text(two_behind.manifest.read_text() + "# mine, unfinished\n")
    res = bump_all(run_qola, two_behind, "--commit")
    assert res.exit_code == 0, res.stderr
    assert git(two_behind.root, "show", "HEAD:qola.toml") == committed.replace(
        upstream.lib_v1, upstream.lib_tip
    ).replace(f'commit = "{upstream.nested_v1}"\ntrack', f'commit = "{upstream.nested_v2}"\ntrack')
    assert git(two_behind.root, "status", "--porcelain") == "M qola.toml"  # unstaged
    assert two_behind.manifest.read_text().endswith("# mine, unfinished\n")


def test_bump_all_dry_run_writes_nothing(two_behind, run_qola):
    before = snapshot(two_behind.root)
    res = bump_all(run_qola, two_behind, "--dry-run")
    assert res.exit_code == 0
    assert res.stdout.endswith("dry run: nothing was written\n")
    assert snapshot(two_behind.root) == before


@pytest.fixture
def own_other(tmp_path):
    """An upstream of other's own: o1, then o2 (main's tip) adding later.txt; branch `old`
    stays at o1."""
    repo = init_repo(tmp_path / "other-upstream")
    o1 = commit_file(repo, "other.txt", "o1\n")
    o2 = commit_file(repo, "later.txt", "o2\n")
    git(repo, "branch", "old", o1)
    return repo, o1, o2


def test_bump_all_with_one_downgrade_refuses_all_and_changes_nothing(
    make_project, upstream, own_other, run_qola
):
    """other follows a branch whose tip is behind its pin: the whole bump is refused."""
    repo, o1, o2 = own_other
    other = f'[deps.other]\npath = "3rdparty/other"\nurl = "{repo}"\ncommit = "{o2}"\n'
    project = make_project(pin=upstream.lib_v1, extra=other + 'track = "old"\n')
    assert run_qola("checkout", "-q", "-m", str(project.manifest)).exit_code == 0
    before = snapshot(project.root)
    res = bump_all(run_qola, project, "--commit")
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: other: {o1[:12]} (old) does not descend from the current pin "
        f"{o2[:12]}; nothing was changed\n"
        "hint: if moving back (or sideways) is intended, add --allow-downgrade\n"
    )
    assert snapshot(project.root) == before


def test_bump_all_with_local_work_in_one_refuses_all_and_changes_nothing(
    two_behind, upstream, run_qola
):
    (two_behind.root / "3rdparty" / "other" / "nested.txt").write_text("my work\n")
    before = snapshot(two_behind.root)
    res = bump_all(run_qola, two_behind)
    assert res.exit_code == 4
    other = two_behind.root / "3rdparty" / "other"
    assert res.stderr == (
        "qola: no track to follow, left as they are: loner\n"
        f"qola: other: moving 3rdparty/other to {upstream.nested_v2[:12]} would lose local work:\n"
        "  uncommitted: 3rdparty/other/nested.txt (modified)\n"
        "nothing was changed; to keep that work, save it first:\n"
        f"  git -C {other} stash push -m 'before qola'  # the changes in 3rdparty/other\n"
        "hint: then run qola again; or run it with --force to save all of it under "
        "refs/qola/backup/other/ and go on\n"
        "qola: bump --all: nothing was changed\n"
    )
    assert snapshot(two_behind.root) == before


def test_bump_all_puts_back_what_moved_when_a_later_checkout_fails(
    make_project, upstream, own_other, run_qola
):
    """other's checkout fails (an untracked file where its new pin writes one) after lib
    moved: lib goes back to v1, and the manifest and the index stay as they were."""
    repo, o1, _ = own_other
    other = f'[deps.other]\npath = "3rdparty/other"\nurl = "{repo}"\ncommit = "{o1}"\n'
    project = make_project(pin=upstream.lib_v1, extra=other + 'track = "main"\n')
    assert run_qola("checkout", "-q", "-m", str(project.manifest)).exit_code == 0
    (project.root / "3rdparty" / "other" / "later.txt").write_text("mine, untracked\n")
    before = snapshot(project.root)
    res = bump_all(run_qola, project, "--commit")
    assert res.exit_code == 3, res.stderr
    assert "qola: lib: move 3rdparty/lib from " in res.stderr  # lib did move first
    assert "untracked working tree files would be overwritten" in res.stderr
    assert res.stderr.endswith(
        "qola: bump --all failed: every dependency was put back where it was; qola.toml "
        "and the index are unchanged, nothing was committed\n"
    )
    assert head(project.lib) == upstream.lib_v1
    assert head(project.nested) == upstream.nested_v1
    assert head(project.root / "3rdparty" / "other") == o1
    after = snapshot(project.root)
    # Outside the git dirs (where the fetched objects and qola's records are) not a byte moved.
    outside = [k for k in before if ".git/" not in k and not k.endswith(".git")]
    assert {k: after.get(k) for k in outside} == {k: before[k] for k in outside}
    assert set(after) - set(before) <= {k for k in after if ".git/" in k}
    assert git(project.root, "log", "-1", "--format=%s") == "pins"


def test_bump_all_no_checkout_writes_the_pins_and_moves_nothing(two_behind, upstream, run_qola):
    res = bump_all(run_qola, two_behind, "--no-checkout")
    assert res.exit_code == 0, res.stderr
    assert upstream.lib_tip in two_behind.manifest.read_text()
    assert head(two_behind.lib) == upstream.lib_v1
    assert git(two_behind.root, "diff", "--cached", "--name-only") == "qola.toml"


def test_bump_all_writes_the_pin_of_a_dependency_not_checked_out_without_cloning(
    make_project, upstream, run_qola
):
    project = make_project(pin=upstream.lib_v1)
    res = bump_all(run_qola, project)
    assert res.exit_code == 0, res.stderr
    assert upstream.lib_tip in project.manifest.read_text()
    assert not project.lib.exists()
    assert "qola: lib: not checked out; `qola checkout` fetches its new pin\n" in res.stderr


def test_bump_all_leaves_an_overridden_dependency_untouched(
    two_behind, upstream, run_qola, monkeypatch
):
    own = two_behind.root / "3rdparty" / "other"
    monkeypatch.setenv("QOLA_SOURCE_DIR_OTHER", str(own))
    git(own, "checkout", "-q", "-b", "my-work")
    before = snapshot(own)
    res = bump_all(run_qola, two_behind)
    assert res.exit_code == 0, res.stderr
    assert f"qola: other: overridden by {own}; not moved\n" in res.stderr
    assert snapshot(own) == before  # not moved, nothing fetched into it
    assert head(two_behind.lib) == upstream.lib_tip
    assert f'commit = "{upstream.nested_v2}"' in two_behind.manifest.read_text()


def test_bump_all_without_a_tracked_dependency_says_so(make_project, upstream, run_qola):
    project = make_project(extra="")
    project.manifest.write_text(project.manifest.read_text().replace('track = "main"\n', ""))
    before = snapshot(project.root)
    res = bump_all(run_qola, project)
    assert (res.exit_code, res.stdout) == (
        0, "nothing to bump: no selected dependency has a track to follow\n"
    )
    assert res.stderr == "qola: no track to follow, left as they are: lib\n"
    assert snapshot(project.root) == before


def test_bump_all_legacy_form_stages_the_gitlinks(tmp_path, upstream, run_qola):
    root = legacy_superproject(tmp_path / "te", upstream.lib, upstream.lib_v1)
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text() + 'lib_track = "main"\n')
    git(root, "commit", "-q", "-am", "track")
    assert run_qola("checkout", "-q", "-m", str(manifest)).exit_code == 0
    res = run_qola("bump", "--all", "--commit", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert git(root, "rev-parse", "HEAD:3rdparty/lib") == upstream.lib_tip
    assert f'lib_commit = "{upstream.lib_tip}"  # lib v2\n' in manifest.read_text()
    assert git(root, "status", "--porcelain") == ""


def test_bump_all_group_moves_only_its_members(two_behind, upstream, run_qola):
    res = bump_all(run_qola, two_behind, "--group", "small")
    assert res.exit_code == 0, res.stderr
    assert head(two_behind.root / "3rdparty" / "other") == upstream.nested_v2
    assert head(two_behind.lib) == upstream.lib_v1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bump", "--all", "lib"], "--all bumps every tracked pin to its tip: no NAME, no --to"),
        (["bump", "--all", "--to", "main"],
         "--all bumps every tracked pin to its tip: no NAME, no --to"),
        (["bump"], "give the NAME of the dependency to bump, or --all"),
        (["bump", "lib", "--group", "small"],
         "--group selects what --all bumps: add --all, or give no --group"),
    ],
    ids=["name", "to", "neither", "group-without-all"],
)  # fmt: skip
def test_bump_all_bad_command_line_exits_2_and_changes_nothing(
    two_behind, run_qola, args, message
):
    before = snapshot(two_behind.root)
    res = run_qola(*args, "-m", str(two_behind.manifest))
    assert res.exit_code == 2
    assert res.stderr.endswith(f"Error: {message}\n")
    assert snapshot(two_behind.root) == before


def test_bump_all_unknown_group_exits_2_and_changes_nothing(two_behind, run_qola):
    before = snapshot(two_behind.root)
    res = bump_all(run_qola, two_behind, "--group", "smal")
    assert res.exit_code == 2
    assert res.stderr.endswith("no dependency is in group 'smal'\nhint: did you mean 'small'?\n")
    assert snapshot(two_behind.root) == before


def test_bump_all_of_one_pin_says_one_new_commit(make_project, upstream, run_qola):
    project = make_project(pin=upstream.lib_v1)
    res = bump_all(run_qola, project, "--no-checkout")
    assert res.exit_code == 0, res.stderr
    assert "qola: qola.toml now pins 1 new commit\n" in res.stderr


def test_bump_all_commit_that_git_refuses_after_the_manifest_is_written_is_finished(
    two_behind, upstream, run_qola
):
    """The commit fails (no identity) with the manifest written and the dependencies moved:
    a rerun planned afresh found every pin "already at" its tip and committed nothing."""
    git(two_behind.root, "config", "user.name", "")  # git refuses an empty name
    names = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")
    no_identity = dict.fromkeys(names)
    before = head(two_behind.root)
    res = run_qola("bump", "--all", "--commit", "-m", str(two_behind.manifest), env=no_identity)
    assert res.exit_code == 3, res.stderr
    assert ("qola: qola.toml holds the new pins already; run `qola bump --all --commit` again "
            "to finish this edit") in res.stderr  # fmt: skip
    assert head(two_behind.root) == before
    git(two_behind.root, "config", "--unset", "user.name")  # the user sets one up
    rerun = bump_all(run_qola, two_behind, "--commit")
    assert rerun.exit_code == 0, rerun.stderr
    assert "an earlier `qola bump --all --commit` did not finish; finishing it" in rerun.stderr
    message = git(two_behind.root, "log", "-1", "--format=%B")
    assert message.startswith("Bump 2 dependencies: lib, other\n\n")
    assert git(two_behind.root, "status", "--porcelain") == ""
    assert head(two_behind.lib) == upstream.lib_tip
