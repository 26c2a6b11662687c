"""`qola diff [REV]`: the pins at a revision of the root against the work tree's."""

from __future__ import annotations

import json
import shutil

import pytest
from repos import git, ran, snapshot
from superprojects import legacy_superproject
from test_machine_formats import valid

from qola.base import markdown


def diff(run_qola, project, *args: str):
    return run_qola("diff", "-m", str(project.manifest), *args)


def subject_of(upstream, sha: str) -> str:
    return git(upstream.lib, "log", "-1", "--format=%s", sha)


@pytest.fixture
def moved_forward(make_project, upstream):
    """HEAD pins lib v2; the work tree's manifest pins main's tip (one commit later).
    Nothing is checked out."""
    project = make_project()
    project.set_pin(upstream.lib_v2, upstream.lib_tip)
    return project


@pytest.fixture
def moved_back(make_project, upstream):
    """HEAD pins main's tip; the work tree's manifest pins v2, an ancestor."""
    project = make_project(pin=upstream.lib_tip)
    project.set_pin(upstream.lib_tip, upstream.lib_v2)
    return project


def test_diff_moved_pin_lists_the_commits_between(moved_forward, upstream, run_qola):
    res = diff(run_qola, moved_forward)
    assert res.exit_code == 0, res.stderr
    assert res.stdout == (
        f"lib {upstream.lib_v2[:7]}..{upstream.lib_tip[:7]} (1 commit)\n"
        f"  {upstream.lib_tip[:7]} lib v4 (qola tests, 2024-01-01)\n"
    )
    assert res.stderr == ""


def test_diff_of_an_absent_dependency_fetches_commits_only_into_a_scratch_repository(
    moved_forward, run_qola
):
    before = snapshot(moved_forward.root)
    res = diff(run_qola, moved_forward, "-v")
    assert res.exit_code == 0
    fetches = [command for command in ran(res.stderr) if command.startswith("fetch ")]
    assert fetches and all("--filter=tree:0" in line for line in fetches)
    assert snapshot(moved_forward.root) == before  # nothing written: no clone, no file


def test_diff_reads_a_full_clone_of_the_dependency_without_fetching(
    moved_forward, upstream, run_qola
):
    git(moved_forward.root, "clone", "-q", str(upstream.lib), "3rdparty/lib")
    before = snapshot(moved_forward.root)
    res = diff(run_qola, moved_forward, "-v")
    assert res.exit_code == 0
    assert f"  {upstream.lib_tip[:7]} lib v4 (qola tests, 2024-01-01)\n" in res.stdout
    assert not [command for command in ran(res.stderr) if command.startswith("fetch ")]
    assert snapshot(moved_forward.root) == before


def test_diff_verbose_fetches_nothing_into_a_partial_clone_of_the_dependency(
    tmp_path, moved_forward, upstream, run_qola
):
    """Its blobs would be fetched lazily into it: the scratch repository fetches them."""
    server = tmp_path / "filtering.git"
    git(tmp_path, "clone", "-q", "--bare", str(upstream.lib), str(server))
    git(server, "config", "uploadpack.allowFilter", "true")
    git(moved_forward.root, "clone", "-q", "--filter=blob:none", "--no-checkout",
        f"file://{server}", "3rdparty/lib")  # fmt: skip
    assert git(moved_forward.lib, "rev-list", "--objects", "--missing=print", "--all").count("?")
    before = snapshot(moved_forward.root)
    res = diff(run_qola, moved_forward, "--stat")
    assert res.exit_code == 0, res.stderr
    assert "  1 file changed, 1 insertion(+), 1 deletion(-)\n" in res.stdout  # as git says it
    assert snapshot(moved_forward.root) == before


def test_diff_of_a_dependency_qola_checked_out_leaves_it_untouched(
    pinned_by_qola, upstream, run_qola
):
    pinned_by_qola.set_pin(upstream.lib_v2, upstream.lib_tip)
    before = snapshot(pinned_by_qola.root)
    res = diff(run_qola, pinned_by_qola)
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith(f"lib {upstream.lib_v2[:7]}..{upstream.lib_tip[:7]} (1 commit)\n")
    assert snapshot(pinned_by_qola.root) == before


def test_diff_downgrade_is_flagged_with_the_dropped_commits(moved_back, upstream, run_qola):
    res = diff(run_qola, moved_back)
    assert res.exit_code == 0, res.stderr
    assert res.stdout == (
        f"lib {upstream.lib_tip[:7]}..{upstream.lib_v2[:7]} (DOWNGRADE: drops 1 commit)\n"
        f"  dropped: {upstream.lib_tip[:7]} lib v4 (qola tests, 2024-01-01)\n"
    )


def test_diff_move_to_a_side_branch_is_flagged_as_not_a_descendant(
    make_project, upstream, run_qola
):
    project = make_project()
    project.set_pin(upstream.lib_v2, upstream.lib_v3)
    res = diff(run_qola, project)
    assert res.stdout == (
        f"lib {upstream.lib_v2[:7]}..{upstream.lib_v3[:7]} (NOT A DESCENDANT: 1 commit added, "
        "1 dropped)\n"
        f"  submodule extern/nested: {upstream.nested_v2[:7]}..{upstream.nested_v1[:7]}\n"
        f"  {upstream.lib_v3[:7]} update side.txt (qola tests, 2024-01-01)\n"
        f"  dropped: {upstream.lib_v2[:7]} lib v2, nested v2 (qola tests, 2024-01-01)\n"
    )


def test_diff_stat_adds_the_stat_and_the_nested_submodule_move(
    make_project, upstream, run_qola
):
    project = make_project(pin=upstream.lib_v1)
    project.set_pin(upstream.lib_v1, upstream.lib_v2)
    # -v is the global verbose flag (each git command as it starts): it adds no stat.
    verbose = diff(run_qola, project, "-v")
    assert verbose.exit_code == 0, verbose.stderr
    assert "files changed" not in verbose.stdout
    assert ran(verbose.stderr)
    res = diff(run_qola, project, "--stat")
    assert res.exit_code == 0, res.stderr
    assert not ran(res.stderr)
    assert res.stdout == (
        f"lib {upstream.lib_v1[:7]}..{upstream.lib_v2[:7]} (1 commit)\n"
        f"  submodule extern/nested: {upstream.nested_v1[:7]}..{upstream.nested_v2[:7]}\n"
        f"  {upstream.lib_v2[:7]} lib v2, nested v2 (qola tests, 2024-01-01)\n"
        "  2 files changed, 2 insertions(+), 1 deletion(-)\n"
    )


def test_diff_added_and_removed_dependencies(make_project, upstream, run_qola):
    other = f'[deps.other]\npath = "3rdparty/other"\nurl = "{upstream.nested}"\n'
    project = make_project(extra=other + f'commit = "{upstream.nested_v1}"\n')
    text = project.manifest.read_text().replace(other, other.replace("other", "fresh"))
    project.manifest.write_text(text)
    res = diff(run_qola, project)
    assert res.stdout == (
        f"fresh added at {upstream.nested_v1[:12]} (3rdparty/fresh)\n"
        f"other removed (was at {upstream.nested_v1[:12]}, 3rdparty/other)\n"
    )


def test_diff_without_changes_says_so(make_project, run_qola):
    res = diff(run_qola, make_project())
    assert (res.exit_code, res.stdout) == (0, "no pin changed since HEAD\n")


def test_diff_against_a_revision_before_the_manifest_lists_every_pin_as_new(
    make_project, upstream, run_qola
):
    project = make_project()
    empty_tree = git(project.root, "mktree", "--missing")
    git(project.root, "tag", "empty", git(project.root, "commit-tree", empty_tree, "-m", "empty"))
    res = diff(run_qola, project, "empty")
    assert res.exit_code == 0, res.stderr
    assert res.stdout == (
        "qola.toml did not exist at empty: every pin is new\n"
        f"lib added at {upstream.lib_v2[:12]} (3rdparty/lib)\n"
    )


def test_diff_legacy_form_with_an_abbreviated_pin_at_the_revision(tmp_path, upstream, run_qola):
    """TE's form: the pin at HEAD is abbreviated and expanded by HEAD's own gitlink."""
    root = legacy_superproject(tmp_path / "te", upstream.lib, upstream.lib_v2,
                               written=upstream.lib_v2[:10])  # fmt: skip
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace(upstream.lib_v2[:10], upstream.lib_tip))
    res = run_qola("diff", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert res.stdout == (
        f"lib {upstream.lib_v2[:7]}..{upstream.lib_tip[:7]} (1 commit)\n"
        f"  {upstream.lib_tip[:7]} lib v4 (qola tests, 2024-01-01)\n"
    )


@pytest.mark.parametrize("checked_out", [False, True], ids=["absent", "checked-out"])
def test_diff_of_an_unchanged_abbreviated_pin_reports_no_change(
    tmp_path, upstream, run_qola, checked_out
):
    """Both sides are expanded before they are compared: the same commit, spelled short,
    is no move (absent, as in the pull-request recipe: no fetch of a short SHA either)."""
    root = legacy_superproject(tmp_path / "te", upstream.lib, upstream.lib_v2,
                               written=upstream.lib_v2[:10])  # fmt: skip
    manifest = root / "qola.toml"
    if checked_out:
        assert run_qola("checkout", "-q", "-m", str(manifest)).exit_code == 0
    before = snapshot(root)
    res = run_qola("diff", "-m", str(manifest))
    assert (res.exit_code, res.stdout) == (0, "no pin changed since HEAD\n"), res.stderr
    data = json.loads(run_qola("diff", "--format", "json", "-m", str(manifest)).stdout)
    assert (data["changes"], data["unchanged"]) == ([], ["lib"])
    assert snapshot(root) == before


def test_diff_of_a_moved_abbreviated_pin_names_both_commits_in_full(
    tmp_path, upstream, run_qola
):
    root = legacy_superproject(tmp_path / "te", upstream.lib, upstream.lib_v2,
                               written=upstream.lib_v2[:10])  # fmt: skip
    git(root, "update-index", "--cacheinfo", f"160000,{upstream.lib_tip},3rdparty/lib")
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace(upstream.lib_v2[:10], upstream.lib_tip[:10]))
    res = run_qola("diff", "--format", "json", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    [change] = json.loads(res.stdout)["changes"]
    assert (change["change"], change["old"], change["new"]) == (
        "moved", upstream.lib_v2, upstream.lib_tip
    )


def test_diff_against_a_branch(moved_forward, upstream, run_qola):
    git(moved_forward.root, "branch", "dev")
    git(moved_forward.root, "commit", "-q", "-am", "bump lib")
    res = diff(run_qola, moved_forward, "dev")
    assert res.stdout.startswith(f"lib {upstream.lib_v2[:7]}..{upstream.lib_tip[:7]} (1 commit)\n")
    assert diff(run_qola, moved_forward).stdout == "no pin changed since HEAD\n"


def test_diff_markdown_is_a_table_with_the_commits_below(moved_back, upstream, run_qola):
    res = diff(run_qola, moved_back, "--format", "markdown")
    assert res.exit_code == 0, res.stderr
    tip, v2 = upstream.lib_tip, upstream.lib_v2
    assert res.stdout == (
        "### qola: pins changed since `HEAD`\n\n"
        "| dependency | change | from | to | commits |\n"
        "|---|---|---|---|---|\n"
        f"| `lib` | ⚠️ **downgrade** | `{tip[:12]}` | `{v2[:12]}` | +0 / -1 |\n\n"
        "<details><summary><code>lib</code>: 0 commits, 1 dropped</summary>\n\n"
        f"- dropped: `{tip[:7]}` lib v4 (qola tests, 2024-01-01)\n\n"
        "</details>\n"
    )


def test_diff_markdown_without_changes_is_one_line(make_project, run_qola):
    res = run_qola("diff", "-m", str(make_project().manifest), "--format", "markdown")
    assert res.stdout == "qola: no pin changed since `HEAD`.\n"


def test_diff_json_document(moved_forward, upstream, run_qola):
    res = diff(run_qola, moved_forward, "--format", "json")
    document = json.loads(res.stdout)
    assert document["schema"] == 1
    assert document["rev"] == "HEAD"
    assert document["rev_commit"] == git(moved_forward.root, "rev-parse", "HEAD")
    assert document["manifest_at_rev"] is True
    assert document["unchanged"] == []
    [change] = document["changes"]
    assert change == {
        "name": "lib",
        "change": "moved",
        "path": "3rdparty/lib",
        "url": str(upstream.lib),
        "old": upstream.lib_v2,
        "new": upstream.lib_tip,
        "old_tag": None,
        "tag": None,
        "known": True,
        "descends": True,
        "commits": [
            {
                "sha": upstream.lib_tip,
                "subject": "lib v4",
                "author": "qola tests",
                "date": "2024-01-01T00:00:00Z",
            }
        ],
        "dropped": [],
        "old_path": "3rdparty/lib",
        "old_url": str(upstream.lib),
        "submodules": [],  # lib v2..tip moves no nested submodule
        "stat": None,
        "error": None,
    }


def test_diff_unknown_revision_exits_2_and_writes_nothing(moved_forward, run_qola):
    before = snapshot(moved_forward.root)
    res = diff(run_qola, moved_forward, "no-such-branch")
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: no-such-branch: is not a commit of {moved_forward.root}\n"
        "hint: give a branch, tag or commit of the root's repository (e.g. origin/main); "
        "in CI, fetch it first\n"
    )
    assert snapshot(moved_forward.root) == before


def test_diff_invalid_manifest_at_the_revision_exits_2_naming_it(make_project, run_qola):
    project = make_project()
    good = project.manifest.read_text()
    project.manifest.write_text(good.replace('track = "main"', 'trak = "main"'))
    git(project.root, "commit", "-q", "-am", "typo")
    project.manifest.write_text(good)
    before = snapshot(project.root)
    res = diff(run_qola, project)
    assert res.exit_code == 2
    assert res.stderr == (
        "qola: HEAD:qola.toml:6: deps.lib.trak: unknown key\nhint: did you mean 'track'?\n"
    )
    assert snapshot(project.root) == before


def test_diff_bad_format_exits_2(moved_forward, run_qola):
    res = diff(run_qola, moved_forward, "--format", "html")
    assert res.exit_code == 2
    assert "Invalid value for '--format'" in res.stderr


def test_diff_unreachable_dependency_exits_3_after_printing_the_rest(
    tmp_path, make_project, upstream, run_qola
):
    gone = tmp_path / "gone.git"
    shutil.copytree(upstream.nested, gone)
    extra = f'[deps.other]\npath = "3rdparty/other"\nurl = "{gone}"\n'
    project = make_project(extra=extra + f'commit = "{upstream.nested_v1}"\n')
    project.set_pin(upstream.lib_v2, upstream.lib_tip)
    project.set_pin(upstream.nested_v1, upstream.nested_v2)
    shutil.rmtree(gone)
    res = diff(run_qola, project)
    assert res.exit_code == 3
    assert res.stdout == (
        f"lib {upstream.lib_v2[:7]}..{upstream.lib_tip[:7]} (1 commit)\n"
        f"  {upstream.lib_tip[:7]} lib v4 (qola tests, 2024-01-01)\n"
        f"other {upstream.nested_v1[:7]}..{upstream.nested_v2[:7]} "
        "(commits unknown: the history could not be fetched)\n"
    )
    assert res.stderr.startswith("qola: other: `git fetch")


def test_markdown_text_neither_marks_up_nor_mentions_nor_links():
    zero = "\u200b"
    assert markdown.text("fix *all* the_things | <b> @bob (#12)") == (
        f"fix \\*all\\* the\\_things \\| \\<b\\> @{zero}bob \\(\\#{zero}12\\)"
    )
    assert markdown.code("a`b") == "``a`b``"
    # A tag may hold |: in a table cell GitHub splits at it even inside a code span.
    assert markdown.row([markdown.code("v1|2"), markdown.text("a|b")]) == "| `v1\\|2` | a\\|b |"


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/ROCm/aiter.git",
        "https://github.com/ROCm/aiter",
        "git@github.com:ROCm/aiter.git",
        "ssh://git@github.com/ROCm/aiter.git",
    ],
)
def test_markdown_links_commits_of_github_repositories(url):
    assert markdown.commit_link(url, "d32b0cb62e", "d32b0cb") == (
        "[`d32b0cb`](https://github.com/ROCm/aiter/commit/d32b0cb62e)"
    )


def test_markdown_does_not_link_other_hosts():
    assert markdown.commit_link("https://gitlab.com/a/b.git", "d32b0cb62e", "d32b0cb") == (
        "`d32b0cb`"
    )


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("&commat;octocat", "\\&commat;octocat"),
        ("&commat;ROCm/security-team", "\\&commat;ROCm/security-team"),
        ("&num;1 and &#64;bob", "\\&num;1 and \\&\\#\u200b64;bob"),
        ("fixes GH-1, gh-22", "fixes GH-\u200b1, gh-\u200b22"),
        ("see https://evil.example/login", "see https://\u200bevil.example/login"),
        ("see www.evil.example", "see www.\u200bevil.example"),
        ("bell\x07 \x1b[8mhidden", "bell\\\\a \\\\033\\[8mhidden"),
    ],
    ids=["entity-mention", "entity-team", "entity-issue", "gh-n", "url", "www", "controls"],
)
def test_markdown_text_leaves_no_way_to_mention_link_or_control(written, shown):
    assert markdown.text(written) == shown


def test_diff_markdown_says_a_moved_pin_now_comes_from_another_repository_and_folder(
    make_project, upstream, tmp_path, run_qola
):
    fork = tmp_path / "fork"
    git(tmp_path, "clone", "-q", str(upstream.lib), str(fork))
    project = make_project()
    text = project.manifest.read_text().replace(upstream.lib_v2, upstream.lib_tip)
    text = text.replace(f'url = "{upstream.lib}"', f'url = "{fork}"')
    project.manifest.write_text(text.replace("3rdparty/lib", "3rdparty/lib2"))
    res = diff(run_qola, project, "--format", "markdown")
    assert res.exit_code == 0, res.stderr
    [row] = [line for line in res.stdout.splitlines() if line.startswith("| `lib` |")]
    where = markdown.text(
        f"from {fork} (was {upstream.lib}), in 3rdparty/lib2 (was 3rdparty/lib)"
    )
    assert f"| forward; ⚠️ {where} |" in row


# -- the label beside a pin (tag = "v2.0"): shown beside the commit in every format, and a
# change of the label alone is a change of its own kind, relabelled.

LABEL = 'tag = "v2.0"\n'  # upstream.lib_v2 is the annotated tag v2.0


@pytest.fixture
def labelled(make_project):
    """HEAD pins lib v2 labelled v2.0."""
    return make_project(extra=LABEL)


def relabel(project, old: str, new: str) -> None:
    project.manifest.write_text(project.manifest.read_text().replace(old, new))


def test_diff_of_a_labelled_move_names_the_labels_as_bump_does(labelled, upstream, run_qola):
    v2, tip = upstream.lib_v2, upstream.lib_tip
    labelled.set_pin(v2, tip)
    relabel(labelled, LABEL, 'tag = "v4"\n')
    before = snapshot(labelled.root)
    res = diff(run_qola, labelled)
    assert res.exit_code == 0, res.stderr
    assert res.stdout == (
        f"lib v2.0..v4 ({v2[:7]}..{tip[:7]}, 1 commit)\n"
        f"  {tip[:7]} lib v4 (qola tests, 2024-01-01)\n"
    )
    md = diff(run_qola, labelled, "--format", "markdown").stdout
    assert f"| `lib` | forward | `v2.0 ({v2[:7]})` | `v4 ({tip[:7]})` | +1 |\n" in md
    [change] = valid(diff(run_qola, labelled, "--format", "json").stdout, "diff")["changes"]
    assert (change["change"], change["old_tag"], change["tag"]) == ("moved", "v2.0", "v4")
    assert snapshot(labelled.root) == before


def test_diff_of_a_move_off_a_label_names_the_new_pin_by_its_sha(labelled, upstream, run_qola):
    v2, tip = upstream.lib_v2, upstream.lib_tip
    labelled.set_pin(v2, tip)
    relabel(labelled, LABEL, "")
    res = diff(run_qola, labelled)
    assert res.stdout.splitlines()[0] == f"lib v2.0..{tip[:7]} ({v2[:7]}..{tip[:7]}, 1 commit)"
    [change] = valid(diff(run_qola, labelled, "--format", "json").stdout, "diff")["changes"]
    assert (change["old_tag"], change["tag"]) == ("v2.0", None)


@pytest.mark.parametrize(
    ("old", "new", "said", "old_tag", "tag"),
    [
        ("", LABEL, "now labelled v2.0", None, "v2.0"),
        (LABEL, "", "now unlabelled (was v2.0)", "v2.0", None),
        (LABEL, 'tag = "release-2"\n', "now labelled release-2 (was v2.0)", "v2.0", "release-2"),
    ],
    ids=["added", "removed", "renamed"],
)
def test_diff_of_a_label_alone_is_a_change_relabelled(
    make_project, upstream, run_qola, old, new, said, old_tag, tag
):
    project = make_project(extra=old)
    relabel(project, f'track = "main"\n{old}', f'track = "main"\n{new}')
    before = snapshot(project.root)
    res = diff(run_qola, project)
    assert (res.exit_code, res.stderr) == (0, "")
    assert res.stdout == f"lib at {upstream.lib_v2[:12]}, {said}\n"
    data = valid(diff(run_qola, project, "--format", "json").stdout, "diff")
    [change] = data["changes"]
    assert (change["change"], change["old"], change["new"]) == (
        "relabelled", upstream.lib_v2, upstream.lib_v2
    )
    assert (change["old_tag"], change["tag"], change["known"], change["commits"]) == (
        old_tag, tag, None, None
    )
    assert data["unchanged"] == []
    md = diff(run_qola, project, "--format", "markdown").stdout
    v2 = upstream.lib_v2
    shown = [f"`{label} ({v2[:7]})`" if label else f"`{v2[:12]}`" for label in (old_tag, tag)]
    assert f"| `lib` | relabelled | {shown[0]} | {shown[1]} |  |\n" in md
    assert "<details>" not in md  # no commits to list
    assert snapshot(project.root) == before


def test_diff_of_a_repointed_pin_says_its_label_too(labelled, upstream, run_qola):
    relabel(labelled, "3rdparty/lib", "3rdparty/lib2")
    res = diff(run_qola, labelled)
    assert res.stdout == (
        f"lib at v2.0 ({upstream.lib_v2[:7]}), now in 3rdparty/lib2 (was 3rdparty/lib)\n"
    )
    relabel(labelled, LABEL, "")  # repointed and relabelled: repointed, which says both
    res = diff(run_qola, labelled)
    assert res.stdout == (
        f"lib at {upstream.lib_v2[:12]}, now in 3rdparty/lib2 (was 3rdparty/lib), "
        "unlabelled (was v2.0)\n"
    )
    [change] = valid(diff(run_qola, labelled, "--format", "json").stdout, "diff")["changes"]
    assert (change["change"], change["old_tag"], change["tag"]) == ("repointed", "v2.0", None)


def test_diff_of_labelled_pins_added_and_removed(make_project, upstream, run_qola):
    other = f'[deps.other]\npath = "3rdparty/other"\nurl = "{upstream.lib}"\n'
    pin = f'commit = "{upstream.lib_v2}"\n{LABEL}'
    project = make_project(extra=other + pin)
    relabel(project, other, other.replace("other", "fresh"))
    res = diff(run_qola, project)
    assert res.exit_code == 0, res.stderr
    v2 = upstream.lib_v2
    assert res.stdout == (
        f"fresh added at v2.0 ({v2[:12]}, 3rdparty/fresh)\n"
        f"other removed (was v2.0 at {v2[:12]}, 3rdparty/other)\n"
    )
    changes = valid(diff(run_qola, project, "--format", "json").stdout, "diff")["changes"]
    assert [(c["change"], c["old_tag"], c["tag"]) for c in changes] == [
        ("added", None, "v2.0"), ("removed", "v2.0", None)
    ]
    md = diff(run_qola, project, "--format", "markdown").stdout
    assert f"| `fresh` | added |  | `v2.0 ({v2[:7]})` |  |\n" in md
    assert f"| `other` | removed | `v2.0 ({v2[:7]})` |  |  |\n" in md


def test_diff_of_a_legacy_label_alone_is_relabelled(tmp_path, upstream, run_qola):
    """TE's form: [qola] lib_tag beside lib_commit."""
    root = legacy_superproject(tmp_path / "te", upstream.lib, upstream.lib_v2)
    manifest = root / "qola.toml"
    text = manifest.read_text()
    pin = next(line for line in text.splitlines() if line.startswith("lib_commit"))
    manifest.write_text(text.replace(pin, f'{pin}\nlib_tag = "v2.0"'))
    res = run_qola("diff", "-m", str(manifest))
    assert (res.exit_code, res.stdout) == (0, f"lib at {upstream.lib_v2[:12]}, now labelled v2.0\n")
