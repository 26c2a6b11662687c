"""`qola bump`, `qola freeze` and `qola init`: moving pins without disturbing anything else."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from repos import git, head, init_repo, snapshot
from superprojects import legacy_superproject

import qola.history.bump
import qola.manifest


@pytest.fixture
def at_v1(pinned_clean, upstream, run_qola):
    """lib pinned and checked out at v1 (full history present), manifest committed."""
    pinned_clean.set_pin(upstream.lib_v2, upstream.lib_v1)
    git(pinned_clean.root, "commit", "-q", "-am", "pin v1")
    assert run_qola("checkout", "-m", str(pinned_clean.manifest)).exit_code == 0
    return pinned_clean


def test_bump_to_track_rewrites_only_the_pin_and_checks_out(at_v1, upstream, run_qola):
    before = at_v1.manifest.read_bytes()
    res = run_qola("bump", "lib", "-m", str(at_v1.manifest))
    assert res.exit_code == 0, res.stderr
    assert before.replace(upstream.lib_v1.encode(), upstream.lib_tip.encode()) == (
        at_v1.manifest.read_bytes()
    )
    assert b"  # lib v2\n" in at_v1.manifest.read_bytes()  # the comment on the pin's line
    assert head(at_v1.lib) == upstream.lib_tip
    assert head(at_v1.nested) == upstream.nested_v2
    assert res.stdout.splitlines()[0] == (
        f"lib {upstream.lib_v1[:7]}..{upstream.lib_tip[:7]} (2 commits)"
    )
    assert res.stdout.splitlines()[1:] == [
        f"  submodule extern/nested: {upstream.nested_v1[:7]}..{upstream.nested_v2[:7]} "
        "(1 commit)",  # counted: the nested checkout holds both and the history between
        f"  {upstream.lib_tip[:7]} lib v4",
        f"  {upstream.lib_v2[:7]} lib v2, nested v2",
    ]
    assert run_qola("verify", "-m", str(at_v1.manifest)).exit_code == 0


def test_bump_from_shallow_clone_deepens_for_the_log(pinned_clean, upstream, run_qola):
    """qola's own clones are one commit deep; bump still counts and lists the commits."""
    assert git(pinned_clean.lib, "rev-list", "--count", "HEAD") == "1"
    res = run_qola("bump", "lib", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines() == [
        f"lib {upstream.lib_v2[:7]}..{upstream.lib_tip[:7]} (1 commit)",
        f"  {upstream.lib_tip[:7]} lib v4",
    ]


def test_bump_to_annotated_tag(at_v1, upstream, run_qola):
    res = run_qola("bump", "lib", "--to", "v2.0", "-m", str(at_v1.manifest))
    assert res.exit_code == 0, res.stderr
    assert upstream.lib_v2 in at_v1.manifest.read_text()
    assert head(at_v1.lib) == upstream.lib_v2


def test_bump_dry_run_writes_nothing(at_v1, upstream, run_qola):
    """Not even objects: the log is read from a throw-away repository."""
    before = snapshot(at_v1.root)
    res = run_qola("bump", "lib", "--dry-run", "-m", str(at_v1.manifest))
    assert res.exit_code == 0, res.stderr
    assert res.stdout == (
        f"lib {upstream.lib_v1[:7]}..{upstream.lib_tip[:7]} (2 commits)\n"
        f"  submodule extern/nested: {upstream.nested_v1[:7]}..{upstream.nested_v2[:7]} "
        "(1 commit)\n"
        f"  {upstream.lib_tip[:7]} lib v4\n"
        f"  {upstream.lib_v2[:7]} lib v2, nested v2\n"
        "dry run: nothing was written\n"
    )
    assert snapshot(at_v1.root) == before


def test_bump_dry_run_and_no_checkout_of_a_dependency_not_checked_out_clone_nothing(
    make_project, upstream, run_qola
):
    project = make_project(pin=upstream.lib_v1)
    before = snapshot(project.root)
    res = run_qola("bump", "lib", "--to", "v2.0", "--dry-run", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    assert res.stdout == (
        f"lib {upstream.lib_v1[:7]}..v2.0 ({upstream.lib_v1[:7]}..{upstream.lib_v2[:7]}, "
        "1 commit)\n"
        f"  submodule extern/nested: {upstream.nested_v1[:7]}..{upstream.nested_v2[:7]}\n"
        f"  {upstream.lib_v2[:7]} lib v2, nested v2\n"
        "dry run: nothing was written\n"
    )
    assert snapshot(project.root) == before
    assert not (project.root / "3rdparty").exists()
    res = run_qola("bump", "lib", "--to", "v2.0", "--no-checkout", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    assert upstream.lib_v2 in project.manifest.read_text()
    assert not (project.root / "3rdparty").exists()


def test_bump_backwards_is_refused_and_writes_nothing(pinned_clean, upstream, run_qola):
    git(pinned_clean.lib, "fetch", "-q", "--unshallow", str(upstream.lib))
    before = snapshot(pinned_clean.root)
    res = run_qola("bump", "lib", "--to", upstream.lib_v1, "-m", str(pinned_clean.manifest))
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: lib: {upstream.lib_v1[:12]} ({upstream.lib_v1}) does not descend from the "
        f"current pin {upstream.lib_v2[:12]}; nothing was changed\n"
        "hint: if moving back (or sideways) is intended, add --allow-downgrade\n"
    )
    assert snapshot(pinned_clean.root) == before


def test_bump_sideways_needs_allow_downgrade(at_v1, upstream, run_qola):
    res = run_qola("bump", "lib", "--to", "side", "-m", str(at_v1.manifest))
    assert res.exit_code == 0, res.stderr  # side descends from v1
    res = run_qola("bump", "lib", "--to", "main", "-m", str(at_v1.manifest))
    assert res.exit_code == 2
    assert "does not descend from the current pin" in res.stderr
    res = run_qola("bump", "lib", "--to", "main", "--allow-downgrade", "-m", str(at_v1.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(at_v1.lib) == upstream.lib_tip


def test_bump_unknown_ref_exits_2_and_writes_nothing(at_v1, upstream, run_qola):
    before = snapshot(at_v1.root)
    res = run_qola("bump", "lib", "--to", "no-such-branch", "-m", str(at_v1.manifest))
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: lib: 'no-such-branch' is neither a branch nor a tag of {upstream.lib}; "
        "nothing was changed\nhint: give an existing branch, tag or a full commit SHA\n"
    )
    assert snapshot(at_v1.root) == before


def test_bump_unknown_dependency_exits_2(at_v1, run_qola):
    before = snapshot(at_v1.root)
    res = run_qola("bump", "lbi", "-m", str(at_v1.manifest))
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: {at_v1.manifest}: no dependency named 'lbi'\nhint: did you mean 'lib'?\n"
    )
    assert snapshot(at_v1.root) == before


def test_bump_offline_ref_not_present_exits_3(pinned_clean, run_qola):
    before = snapshot(pinned_clean.root)
    res = run_qola("bump", "lib", "--offline", "--to", "release", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 3
    assert res.stderr.startswith(
        "qola: lib: 'release' is not known locally and --offline forbids asking"
    )
    assert snapshot(pinned_clean.root) == before


def test_bump_refuses_over_local_work_and_writes_nothing(at_v1, run_qola):
    (at_v1.lib / "README").write_text("mine\n")
    before = without_fetched_objects(snapshot(at_v1.root))
    res = run_qola("bump", "lib", "-m", str(at_v1.manifest))
    assert res.exit_code == 4
    assert "uncommitted: 3rdparty/lib/README (modified)" in res.stderr
    assert "qola: the checkout failed; qola.toml was left unchanged: nothing was committed" in (
        res.stderr
    )
    assert without_fetched_objects(snapshot(at_v1.root)) == before


def test_bump_force_says_what_it_saved_and_how_to_restore_it(at_v1, upstream, run_qola):
    """As `checkout --force` does: the backup ref and the command that brings the work back."""
    (at_v1.lib / "README").write_text("mine\n")
    res = run_qola("bump", "lib", "--force", "-m", str(at_v1.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(at_v1.lib) == upstream.lib_tip
    ref = git(at_v1.lib, "for-each-ref", "--format=%(refname)", "refs/qola/backup/")
    assert ref.startswith("refs/qola/backup/lib/")
    assert f"restore with: git -C {at_v1.lib} stash apply {ref}\n" in res.stderr
    git(at_v1.lib, "stash", "apply", "-q", ref)
    assert (at_v1.lib / "README").read_text() == "mine\n"


def without_fetched_objects(state: dict[str, str]) -> dict[str, str]:
    """A snapshot less what a fetch adds: objects (and FETCH_HEAD, shallow), no refs or files."""
    git_internal = ("/.git/objects/", "/.git/FETCH_HEAD", "/.git/shallow")
    return {k: v for k, v in state.items() if not any(part in k for part in git_internal)}


def test_bump_failing_checkout_writes_nothing(at_v1, upstream, run_qola):
    """An untracked file the new pin would overwrite: git refuses, the manifest stays."""
    (at_v1.lib / "lib.txt").write_text("mine, untracked\n")
    res = run_qola("bump", "lib", "-m", str(at_v1.manifest))
    assert res.exit_code == 3
    assert "untracked working tree files would be overwritten" in res.stderr
    assert upstream.lib_v1 in at_v1.manifest.read_text()
    assert head(at_v1.lib) == upstream.lib_v1
    assert (at_v1.lib / "lib.txt").read_text() == "mine, untracked\n"


def test_bump_manifest_changed_meanwhile_writes_nothing(at_v1, upstream, run_qola, monkeypatch):
    read = qola.history.bump.read_manifest

    def read_then_someone_edits(manifest):
        raw, text = read(manifest)
        manifest.path.write_text(text + "# edited by someone else\n")
        return raw, text

    monkeypatch.setattr(qola.history.bump, "read_manifest", read_then_someone_edits)
    res = run_qola("bump", "lib", "-m", str(at_v1.manifest))
    assert res.exit_code == 2
    assert "changed on disk since qola read it; nothing was written" in res.stderr
    assert at_v1.manifest.read_text().endswith("# edited by someone else\n")
    assert upstream.lib_v1 in at_v1.manifest.read_text()


@pytest.fixture
def te_style(tmp_path, upstream, run_qola):
    """The TE layout: lib is a submodule of the root, pinned by `[qola] lib_commit`."""
    root = init_repo(tmp_path / "te")
    git(root, "submodule", "add", "-q", str(upstream.lib), "3rdparty/lib")
    git(root, "-C", "3rdparty/lib", "checkout", "-q", upstream.lib_v1)
    git(root, "add", "3rdparty/lib")
    (root / "qola.toml").write_bytes(
        b'[qola]\r\nnamespace = "te"\r\n'
        + f"lib_commit = '{upstream.lib_v1}' # pinned for 6.4\r\n".encode()
        + b'\r\n[build]\r\njobs = 8\r\n\r\n[[modules]]\r\nname = "lib"\r\n'
    )
    git(root, "add", "qola.toml")
    git(root, "commit", "-q", "-m", "pin lib")
    assert run_qola("checkout", "-m", str(root / "qola.toml")).exit_code == 0
    return root


def tagged(manifest: bytes, old: str, new: str, tag: str) -> bytes:
    """te_style's manifest with the pin moved from old to new and labelled tag."""
    pinned = manifest.replace(old.encode(), new.encode())
    newline = b"\r\n" if b"\r\n" in manifest else b"\n"
    return pinned.replace(b"6.4" + newline, b'6.4%slib_tag = "%s"%s' % (newline, tag.encode(),
                                                                       newline), 1)


def test_bump_commit_legacy_form_commits_manifest_and_gitlink(te_style, upstream, run_qola):
    root = te_style
    before = (root / "qola.toml").read_bytes()
    (root / "unrelated.txt").write_text("staged by the user\n")
    git(root, "add", "unrelated.txt")
    res = run_qola("bump", "lib", "--to", "v2.0", "--commit", "-m", str(root / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    after = (root / "qola.toml").read_bytes()
    assert after == tagged(before, upstream.lib_v1, upstream.lib_v2, "v2.0")
    assert b"\r\n" in after and b"'" + upstream.lib_v2.encode() + b"' # pinned" in after
    message = git(root, "log", "-1", "--format=%B")
    assert message == (
        f"Bump lib from {upstream.lib_v1[:7]} to v2.0\n\n"
        f"submodule extern/nested: {upstream.nested_v1[:7]}..{upstream.nested_v2[:7]}\n"
        f"{upstream.lib_v2[:7]} lib v2, nested v2"
    )
    assert git(root, "show", "--name-only", "--format=", "HEAD").splitlines() == [
        "3rdparty/lib",
        "qola.toml",
    ]
    assert git(root, "rev-parse", "HEAD:3rdparty/lib") == upstream.lib_v2
    assert git(root, "diff", "--cached", "--name-only") == "unrelated.txt"  # still staged
    assert run_qola("verify", "-m", str(root / "qola.toml")).exit_code == 0


def test_bump_commit_leaves_an_unstaged_edit_of_the_manifest_unstaged_and_uncommitted(
    te_style, upstream, run_qola
):
    """The commit holds the pin change of HEAD's manifest, as staging does: the user's own
    unfinished edit of the file is neither committed nor staged."""
    manifest = te_style / "qola.toml"
    committed = git(te_style, "show", "HEAD:qola.toml")
    manifest.write_bytes(manifest.read_bytes() + b"# TODO: not for this commit\r\n")
    res = run_qola("bump", "lib", "--to", "v2.0", "--commit", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    bumped = tagged(committed.encode(), upstream.lib_v1, upstream.lib_v2, "v2.0").decode()
    assert git(te_style, "show", "HEAD:qola.toml") == bumped
    assert git(te_style, "show", ":qola.toml") == bumped  # the index: the commit's copy
    assert git(te_style, "diff", "--cached", "--name-only") == ""
    assert git(te_style, "diff", "--name-only") == "qola.toml"  # the TODO, still unstaged
    assert manifest.read_bytes().endswith(b"# TODO: not for this commit\r\n")
    assert f"lib_commit = '{upstream.lib_v2}'" in manifest.read_text()
    assert git(te_style, "rev-parse", "HEAD:3rdparty/lib") == upstream.lib_v2


def test_bump_commit_leaves_a_staged_edit_of_the_manifest_staged_and_uncommitted(
    te_style, upstream, run_qola
):
    manifest = te_style / "qola.toml"
    committed = git(te_style, "show", "HEAD:qola.toml")
    manifest.write_bytes(manifest.read_bytes() + b"# staged, for the next commit\r\n")
    git(te_style, "add", "qola.toml")
    res = run_qola("bump", "lib", "--to", "v2.0", "--commit", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    bumped = tagged(committed.encode(), upstream.lib_v1, upstream.lib_v2, "v2.0").decode()
    assert git(te_style, "show", "HEAD:qola.toml") == bumped
    assert git(te_style, "show", ":qola.toml") == bumped + "\n# staged, for the next commit"
    assert git(te_style, "diff", "--cached", "--name-only") == "qola.toml"  # still staged
    assert git(te_style, "diff", "--name-only") == ""
    assert git(te_style, "rev-parse", "HEAD:3rdparty/lib") == upstream.lib_v2


def test_bump_commit_of_a_pin_heads_manifest_lacks_refuses_and_changes_nothing(
    te_style, upstream, run_qola
):
    """A dependency added to the manifest but never committed: its pin change alone cannot
    be committed (HEAD's manifest has no such pin), so nothing is done."""
    manifest = te_style / "qola.toml"
    git(te_style, "rm", "-q", "--cached", "qola.toml")
    (te_style / "qola.toml").write_bytes(b"[qola]\r\nnamespace = 'te'\r\n")
    git(te_style, "add", "qola.toml")
    git(te_style, "commit", "-q", "-m", "qola.toml without the pin")
    manifest.write_bytes(
        b"[qola]\r\nnamespace = 'te'\r\n" + f"lib_commit = '{upstream.lib_v1}'\r\n".encode()
    )
    before = snapshot(te_style)
    res = run_qola("bump", "lib", "--to", "v2.0", "--commit", "-m", str(manifest))
    assert res.exit_code == 2
    assert res.stderr.endswith(
        f"qola: {manifest}: the copy of it in HEAD has no pin for lib, so the bump cannot be "
        "committed alone; nothing was changed\n"
        "hint: commit the manifest first, or bump without --commit (the pin is then staged)\n"
    )
    assert snapshot(te_style) == before


def test_bump_commit_of_a_manifest_git_does_not_track_commits_it_whole(
    te_style, upstream, run_qola
):
    """A manifest never committed nor staged has no pin change of its own: `--commit`
    adds the file as it is, and stages it."""
    manifest = te_style / "qola.toml"
    git(te_style, "rm", "-q", "--cached", "qola.toml")
    git(te_style, "commit", "-q", "-m", "qola.toml not tracked")
    res = run_qola("bump", "lib", "--to", "v2.0", "--commit", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert git(te_style, "show", "HEAD:qola.toml") == manifest.read_text().strip()
    assert f"lib_commit = '{upstream.lib_v2}'" in manifest.read_text()
    assert git(te_style, "status", "--porcelain", "--", "qola.toml") == ""


def test_bump_without_commit_stages_the_gitlink(te_style, upstream, run_qola):
    res = run_qola("bump", "lib", "--to", "v2.0", "-m", str(te_style / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    staged = git(te_style, "ls-files", "-s", "3rdparty/lib").split()[1]
    assert staged == upstream.lib_v2
    assert run_qola("verify", "-m", str(te_style / "qola.toml")).exit_code == 0


def test_bump_stages_the_manifest_with_the_gitlink_and_nothing_else_of_the_users(
    te_style, upstream, run_qola
):
    """A plain `git commit` then records the new pin and the new gitlink together; the
    user's own unstaged edit of the manifest stays unstaged."""
    manifest = te_style / "qola.toml"
    manifest.write_bytes(manifest.read_bytes() + b"# my note, not for this commit\r\n")
    res = run_qola("bump", "lib", "--to", "v2.0", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert "qola: staged qola.toml\n" in res.stderr
    assert git(te_style, "diff", "--cached", "--name-only").splitlines() == [
        "3rdparty/lib",
        "qola.toml",
    ]
    assert git(te_style, "diff", "--name-only") == "qola.toml"  # the note, still unstaged
    staged = git(te_style, "show", ":qola.toml")
    assert f"lib_commit = '{upstream.lib_v2}'" in staged and "my note" not in staged
    assert run_qola("verify", "--manifest-only", "--staged", "-m", str(manifest)).exit_code == 0
    git(te_style, "commit", "-q", "-m", "bump lib")
    assert git(te_style, "rev-parse", "HEAD:3rdparty/lib") == upstream.lib_v2
    assert f"lib_commit = '{upstream.lib_v2}'" in git(te_style, "show", "HEAD:qola.toml")


def test_bump_stages_the_index_copy_byte_for_byte_whatever_core_autocrlf_says(
    te_style, upstream, run_qola
):
    """The staged copy is a blob's own bytes with the pin edited: git's input filters
    (core.autocrlf turning CRLF into LF) must not rewrite the rest of it."""
    git(te_style, "config", "core.autocrlf", "true")
    staged = subprocess.run(["git", "show", ":qola.toml"], cwd=te_style, capture_output=True,
                            check=True).stdout  # fmt: skip
    assert b"\r\n" in staged
    res = run_qola("bump", "lib", "--to", "v2.0", "-m", str(te_style / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    after = subprocess.run(["git", "show", ":qola.toml"], cwd=te_style, capture_output=True,
                           check=True).stdout  # fmt: skip
    assert after == tagged(staged, upstream.lib_v1, upstream.lib_v2, "v2.0")


def test_freeze_stages_the_manifest_with_the_gitlink(te_style, upstream, run_qola):
    git(te_style / "3rdparty" / "lib", "checkout", "-q", "--detach", upstream.lib_v2)
    res = run_qola("freeze", "-m", str(te_style / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    assert git(te_style, "diff", "--cached", "--name-only").splitlines() == [
        "3rdparty/lib",
        "qola.toml",
    ]
    assert run_qola("verify", "--manifest-only", "--staged", "-m", str(te_style / "qola.toml")
                    ).exit_code == 0  # fmt: skip


def test_bump_no_checkout_writes_only_the_manifest_and_the_index(tmp_path, upstream, run_qola):
    """Nothing is fetched into the dependency (a clone `git submodule add` left) or moved."""
    root = legacy_superproject(tmp_path / "te", upstream.lib, upstream.lib_v1)
    before = snapshot(root)
    res = run_qola("bump", "lib", "--to", "v2.0", "--no-checkout", "-m", str(root / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    after = snapshot(root)
    assert {k for k in set(before) | set(after) if before.get(k) != after.get(k)} == {
        "qola.toml",
        ".git/index",
        *[k for k in after if k.startswith(".git/objects/") and k not in before],
    }
    staged = git(root, "diff", "--cached", "--name-only").splitlines()
    assert staged == ["3rdparty/lib", "qola.toml"]


def test_bump_legacy_pin_follows_its_track_key(tmp_path, upstream, run_qola):
    """`[qola] lib_track` names the branch the pin lives on (not the default one)."""
    root = legacy_superproject(tmp_path / "te", upstream.lib, upstream.lib_v1)
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text() + 'lib_track = "side"\n')
    res = run_qola("bump", "lib", "--no-checkout", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[0] == (
        f"lib {upstream.lib_v1[:7]}..{upstream.lib_v3[:7]} (1 commit)"
    )
    assert f'lib_commit = "{upstream.lib_v3}"' in manifest.read_text()


def test_bump_no_checkout_leaves_the_dependency(at_v1, upstream, run_qola):
    res = run_qola("bump", "lib", "--no-checkout", "-m", str(at_v1.manifest))
    assert res.exit_code == 0, res.stderr
    assert upstream.lib_tip in at_v1.manifest.read_text()
    assert head(at_v1.lib) == upstream.lib_v1


def test_freeze_rewrites_pin_to_checked_out_commit(at_v1, upstream, run_qola):
    git(at_v1.lib, "checkout", "-q", upstream.lib_v2)
    before = at_v1.manifest.read_bytes()
    res = run_qola("freeze", "-m", str(at_v1.manifest))
    assert res.exit_code == 0, res.stderr
    assert res.stdout == f"lib {upstream.lib_v1[:12]} -> {upstream.lib_v2[:12]}\n"
    assert at_v1.manifest.read_bytes() == before.replace(
        upstream.lib_v1.encode(), upstream.lib_v2.encode()
    )
    assert "may exist only" not in res.stderr  # v2 came from the remote (one commit deep)
    # The nested submodule stayed at v1's gitlink, which v2 does not record: said.
    assert (f"lib: the nested submodule extern/nested is checked out at "
            f"{upstream.nested_v1[:12]}, but {upstream.lib_v2[:12]}, the commit pinned, "
            f"records {upstream.nested_v2[:12]}") in res.stderr  # fmt: skip


@pytest.mark.parametrize("where", ["detached", "on a local branch"])
def test_freeze_of_a_commit_made_in_the_checkout_warns_naming_it(
    at_v1, upstream, run_qola, where
):
    """A commit no remote-tracking branch or tag has, and that was never fetched, may exist
    only here: the pin is written and staged as asked, with a warning saying so."""
    if where != "detached":
        git(at_v1.lib, "checkout", "-q", "-b", "my-fix")
    git(at_v1.lib, "commit", "-q", "--allow-empty", "-m", "local only")
    local = head(at_v1.lib)
    res = run_qola("freeze", "-m", str(at_v1.manifest))
    assert res.exit_code == 0, res.stderr
    assert res.stdout == f"lib {upstream.lib_v1[:12]} -> {local[:12]}\n"
    assert only_here_warning("lib", local, "3rdparty/lib", upstream.lib) in res.stderr
    assert f'commit = "{local}"' in at_v1.manifest.read_text()


def test_freeze_of_a_commit_on_a_remote_tracking_branch_does_not_warn(
    at_v1, upstream, run_qola
):
    git(at_v1.lib, "fetch", "-q", "origin", "main")
    git(at_v1.lib, "checkout", "-q", "origin/main")
    res = run_qola("freeze", "-m", str(at_v1.manifest))
    assert res.exit_code == 0, res.stderr
    assert res.stdout == f"lib {upstream.lib_v1[:12]} -> {upstream.lib_tip[:12]}\n"
    assert "may exist only" not in res.stderr  # (the nested submodule is off: test_repairs)


def test_freeze_expands_abbreviated_legacy_sha(te_style, upstream, run_qola):
    manifest = te_style / "qola.toml"
    manifest.write_bytes(
        manifest.read_bytes().replace(
            upstream.lib_v1.encode(), b"%s" % upstream.lib_v1[:9].encode()
        )
    )
    res = run_qola("freeze", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert (
        f"lib_commit = '{upstream.lib_v1}' # pinned for 6.4\r\n".encode() in manifest.read_bytes()
    )


def test_freeze_missing_dependency_exits_3(make_project, run_qola):
    project = make_project()
    before = snapshot(project.root)
    res = run_qola("freeze", "-m", str(project.manifest))
    assert res.exit_code == 3
    assert res.stderr == (
        "qola: lib: 3rdparty/lib is not checked out; nothing to freeze\nhint: run qola checkout\n"
    )
    assert snapshot(project.root) == before


def test_init_writes_manifest_for_root_submodules(te_style, upstream, run_qola):
    (te_style / "qola.toml").unlink()
    res = run_qola("init", "-m", str(te_style / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    text = (te_style / "qola.toml").read_text()
    assert '[deps.lib]\npath = "3rdparty/lib"\n' in text
    assert f'commit = "{upstream.lib_v1}"' in text
    assert run_qola("verify", "-m", str(te_style / "qola.toml")).exit_code == 0


def only_here_warning(name: str, sha: str, path: str, url: object) -> str:
    return (
        f"qola: warning: {name}: {sha[:12]} is on no remote-tracking branch or tag of {path} "
        "and was never fetched: it may exist only in this checkout\n"
        f"hint: push it to {url} before you commit this pin; "
        "`qola verify --remote` checks that the branch or tag it follows holds it\n"
    )


def test_init_of_a_gitlink_made_in_the_checkout_warns_naming_it(te_style, upstream, run_qola):
    lib = te_style / "3rdparty" / "lib"
    git(lib, "commit", "-q", "--allow-empty", "-m", "local only")
    git(te_style, "add", "3rdparty/lib")
    (te_style / "qola.toml").unlink()
    res = run_qola("init", "-m", str(te_style / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    assert only_here_warning("lib", head(lib), "3rdparty/lib", upstream.lib) in res.stderr
    assert f'commit = "{head(lib)}"' in (te_style / "qola.toml").read_text()


def test_init_of_gitlinks_from_the_remote_does_not_warn(te_style, run_qola):
    (te_style / "qola.toml").unlink()
    res = run_qola("init", "-m", str(te_style / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    assert res.stderr == ""


def test_bump_offline_to_a_commit_made_in_the_checkout_warns_naming_it(
    at_v1, upstream, run_qola
):
    """Offline, the new pin is resolved here, not by the remote: it may be one of the
    user's own commits."""
    git(at_v1.lib, "commit", "-q", "--allow-empty", "-m", "local only")
    local = head(at_v1.lib)
    git(at_v1.lib, "checkout", "-q", "--detach", upstream.lib_v1)
    res = run_qola("bump", "lib", "--offline", "--to", local, "--no-checkout", "-m",
                   str(at_v1.manifest))  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert only_here_warning("lib", local, "3rdparty/lib", upstream.lib) in res.stderr
    assert f'commit = "{local}"' in at_v1.manifest.read_text()


def test_init_refuses_to_overwrite(te_style, run_qola):
    before = snapshot(te_style)
    res = run_qola("init", "-m", str(te_style / "qola.toml"))
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: {te_style / 'qola.toml'}: already exists; nothing was written\n"
        "hint: edit it, or use qola bump/freeze\n"
    )
    assert snapshot(te_style) == before


def test_init_without_submodules_writes_a_manifest_that_says_how_to_add_one(
    tmp_path, run_qola, upstream
):
    """No loop: status without a manifest names init; init writes one that loads with no
    dependency, whose first line is the `qola add` to run; status then names it too; and
    that command, run with a name, URL and tag, adds the first pin."""
    from qola.manifest.write_new import EMPTY

    root = init_repo(tmp_path / "plain")
    res = run_qola("status", cwd=root)
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == (
        "hint: create one with `qola init`, or pass --manifest PATH (or set QOLA_MANIFEST)"
    )
    res = run_qola("init", cwd=root)
    assert res.exit_code == 0, res.stderr
    assert (root / "qola.toml").read_text() == EMPTY
    first = EMPTY.splitlines()[0]
    assert first == "# Add a dependency:  qola add NAME URL --tag T"
    loaded = qola.manifest.load(root / "qola.toml")
    assert loaded.deps == () and loaded.warnings == ()
    res = run_qola("status", cwd=root)
    assert res.exit_code == 0, res.stderr
    assert res.stdout == f"no dependencies in {root / 'qola.toml'}\n"
    assert res.stderr == "hint: add one: qola add NAME URL --tag T\n"
    for command in (first.split(":  ", 1)[1], res.stderr.split(": ", 2)[2].strip()):
        line = command.replace("NAME", "lib").replace("URL", str(upstream.lib))
        (root / "qola.toml").write_text(EMPTY)
        added = run_qola(*line.replace(" T", " v2.0").split()[1:], "--no-checkout", cwd=root)
        assert added.exit_code == 0, added.stderr
        [dep] = qola.manifest.load(root / "qola.toml").deps
        assert (dep.name, dep.commit, dep.tag) == ("lib", upstream.lib_v2, "v2.0")
    assert run_qola("checkout", cwd=root).exit_code == 0
    assert run_qola("status", cwd=root).stdout.splitlines()[1].split()[:6] == [
        "lib", "3rdparty/lib", "v2.0", f"({upstream.lib_v2[:7]})", upstream.lib_v2[:12],
        "ok"]  # fmt: skip


def test_empty_manifest_checks_out_and_verifies_nothing(tmp_path, run_qola):
    root = init_repo(tmp_path / "plain")
    assert run_qola("init", cwd=root).exit_code == 0
    res = run_qola("checkout", cwd=root)
    assert (res.exit_code, res.stdout) == (0, "")
    res = run_qola("verify", cwd=root)
    assert (res.exit_code, res.stdout) == (0, "0 dependencies match the manifest\n")


def test_init_dry_run_without_submodules_prints_and_writes_nothing(tmp_path, run_qola):
    from qola.manifest.write_new import EMPTY

    root = init_repo(tmp_path / "plain")
    res = run_qola("init", "--dry-run", cwd=root)
    assert (res.exit_code, res.stdout) == (0, EMPTY)
    assert not (root / "qola.toml").exists()


def test_bump_commit_is_signed_as_git_commit_would_sign_it_with_the_users_program(
    te_style, upstream, run_qola, tmp_path, monkeypatch
):
    """commit.gpgSign says the user's commits are signed (git commit-tree, plumbing, does
    not read it: qola does); with the user's own program, never the repository's."""
    signer = tmp_path / "my-signer"
    signer.write_text("#!/bin/sh\ncat > /dev/null\n"
                      "printf '\\n[GNUPG:] SIG_CREATED D 1 8 00 0 X\\n' >&2\n"
                      "printf -- '-----BEGIN PGP SIGNATURE-----\\n\\nmine\\n"
                      "-----END PGP SIGNATURE-----\\n'\n")  # fmt: skip
    signer.chmod(0o755)
    theirs = tmp_path / "their-signer"
    theirs.write_text(f"#!/bin/sh\ntouch {tmp_path / 'theirs-ran'}\nexit 1\n")
    theirs.chmod(0o755)
    config = tmp_path / "user.gitconfig"
    config.write_text(Path(os.environ["GIT_CONFIG_GLOBAL"]).read_text()
                      + f"[gpg]\n\tprogram = {signer}\n")  # fmt: skip
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    git(te_style, "config", "commit.gpgSign", "true")
    git(te_style, "config", "gpg.program", str(theirs))
    res = run_qola("bump", "lib", "--to", "v2.0", "--commit", "-m", str(te_style / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    assert "mine" in git(te_style, "cat-file", "commit", "HEAD")
    assert not (tmp_path / "theirs-ran").exists()


def test_bump_commit_that_git_cannot_sign_names_the_signing_settings(
    te_style, upstream, run_qola, tmp_path, monkeypatch
):
    """commit.gpgSign with a key that cannot sign: exit 3 with git's words, the settings
    named and what to do; HEAD stays, the edit's record stays, and the rerun, once
    signing is off, finishes the commit."""
    key = tmp_path / "no-such-key.pub"
    config = tmp_path / "user.gitconfig"
    config.write_text(Path(os.environ["GIT_CONFIG_GLOBAL"]).read_text()
                      + f"[commit]\n\tgpgSign = true\n[gpg]\n\tformat = ssh\n"
                      f"[user]\n\tsigningKey = {key}\n")  # fmt: skip
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    before = head(te_style)
    manifest = str(te_style / "qola.toml")
    res = run_qola("bump", "lib", "--to", "v2.0", "--commit", "-m", manifest)
    assert res.exit_code == 3, res.stderr
    assert f"Couldn't load public key {key}" in res.stderr
    assert ("git could not sign the commit, which your config asks for (commit.gpgSign = "
            f"true, gpg.format = ssh, user.signingKey = {key})") in res.stderr  # fmt: skip
    assert ("hint: make signing work (the key that user.signingKey names, gpg.format's "
            "program or agent; `git commit --allow-empty -m test` shows it), or turn it off "
            "for this project (git config commit.gpgSign false); then run the same command "
            "again, which finishes this edit") in res.stderr  # fmt: skip
    assert head(te_style) == before
    assert (te_style / ".git" / "qola" / "editing").exists()
    git(te_style, "config", "commit.gpgSign", "false")
    rerun = run_qola("bump", "lib", "--to", "v2.0", "--commit", "-m", manifest)
    assert rerun.exit_code == 0, rerun.stderr
    assert git(te_style, "log", "-1", "--format=%s").startswith("Bump lib from ")
    assert git(te_style, "rev-parse", "HEAD~1") == before


def test_a_new_abbreviated_pin_not_fetched_is_refused_with_the_fix_not_freeze(
    tmp_path, upstream, run_qola
):
    """A legacy pin moved to an abbreviated SHA the checkout lacks: `qola freeze` would write
    the commit checked out (the old one), so the hint is to write the new one in full."""
    root = init_repo(tmp_path / "te")
    (root / ".gitmodules").write_text(
        f'[submodule "lib"]\n\tpath = 3rdparty/lib\n\turl = {upstream.lib}\n'
    )
    git(root, "add", ".gitmodules")
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{upstream.lib_v1},3rdparty/lib")
    manifest = root / "qola.toml"
    manifest.write_text(f'[qola]\nnamespace = "te"\nlib_commit = "{upstream.lib_v1}"\n')
    git(root, "add", "qola.toml")
    git(root, "commit", "-q", "-m", "pin lib")
    assert run_qola("checkout", "-q", "-m", str(manifest)).exit_code == 0  # depth 1: v1 only
    short = upstream.lib_v2[:10]
    manifest.write_text(manifest.read_text().replace(upstream.lib_v1, short))
    before = snapshot(root)
    for command in ("checkout", "freeze", "status"):
        res = run_qola(command, "-m", str(manifest))
        assert res.exit_code == 2, (command, res.stderr)
        assert res.stderr == (
            f"qola: warning: {manifest}:3: qola.lib_commit: abbreviated SHA {short!r}; "
            "write the full 40-hex SHA in its place\n"
            f"qola: {manifest}:3: qola.lib_commit: cannot expand the abbreviated SHA "
            f"{short!r} locally (not in the root's gitlink nor in the checkout)\n"
            "hint: write the full 40-hex SHA in its place\n"
        )
        assert snapshot(root) == before
    manifest.write_text(manifest.read_text().replace(short, upstream.lib_v2))
    assert run_qola("checkout", "-q", "-m", str(manifest)).exit_code == 0
    assert head(root / "3rdparty" / "lib") == upstream.lib_v2
