"""`qola verify`: read-only, offline, and never green for a tree that differs from the manifest."""

from __future__ import annotations

import json
import shutil

import pytest
from repos import commit_file, git, ran, snapshot


def verify(run_qola, project, *args):
    return run_qola("verify", "--format", "json", "-m", str(project.manifest), *args)


def kinds(res) -> list[str]:
    return [p["kind"] for dep in json.loads(res.stdout)["deps"] for p in dep["problems"]]


def test_verify_synced_tree_passes_and_writes_nothing(pinned_clean, run_qola):
    before = snapshot(pinned_clean.root)
    res = verify(run_qola, pinned_clean)
    assert res.exit_code == 0, res.stdout
    doc = json.loads(res.stdout)
    assert doc["schema"] == 1 and doc["ok"] is True
    [dep] = doc["deps"]
    assert dep["name"] == "lib" and dep["path"] == "3rdparty/lib" and dep["problems"] == []
    assert dep["head"] == dep["pinned"]
    assert dep["submodules"][0]["path"] == "extern/nested" and dep["submodules"][0]["ok"]
    assert snapshot(pinned_clean.root) == before


def test_verify_text_format(pinned_clean, upstream, run_qola):
    res = run_qola("verify", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 0
    short = upstream.lib_v2[:12]
    assert res.stdout == (
        f"ok   lib 3rdparty/lib pinned {short} head {short}\n1 dependency matches the manifest\n"
    )


def test_verify_untracked_file_passes_without_strict(pinned_clean, run_qola):
    (pinned_clean.lib / "build.log").write_text("x")
    assert verify(run_qola, pinned_clean).exit_code == 0


def test_verify_branch_at_pin_passes(pinned_clean, run_qola):
    git(pinned_clean.lib, "switch", "-q", "-c", "work")
    assert verify(run_qola, pinned_clean).exit_code == 0


def test_missing_patch_folder_fails_verify_and_checkout_changes_nothing(
    make_project, upstream, run_qola
):
    project = make_project(extra='patches = "patches/lib"\n')
    before = snapshot(project.root)
    res = run_qola("verify", "--format", "json", "-m", str(project.manifest))
    assert res.exit_code == 1
    assert kinds(res) == ["missing", "patches"]
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 2
    assert res.stderr.startswith(
        "qola: lib: the patch folder patches/lib does not exist\n"
        "hint: create it, or fix the patches setting in the manifest\n"
    )
    assert snapshot(project.root) == before


def test_verify_dep_with_broken_git_dir_fails_and_never_reads_the_project(pinned_clean, run_qola):
    """With its refs gone, the dep is no repository: git must not fall back to the project's."""
    shutil.rmtree(pinned_clean.lib / ".git" / "refs")
    res = run_qola("verify", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 1
    assert "missing: 3rdparty/lib is not a repository git accepts: .git/refs is missing" in (
        res.stdout
    )


# Every way we found to make the tree differ from the manifest, with the kind verify must name.
def _modified_file(p, u):
    (p.lib / "lib.txt").write_text("edited\n")


def _staged_change(p, u):
    (p.lib / "lib.txt").write_text("staged\n")
    git(p.lib, "add", "lib.txt")


def _deleted_file(p, u):
    (p.lib / "lib.txt").unlink()


def _new_staged_file(p, u):
    (p.lib / "new.txt").write_text("x")
    git(p.lib, "add", "new.txt")


def _mode_change(p, u):
    (p.lib / "lib.txt").chmod(0o755)


def _nested_modified(p, u):
    (p.nested / "nested.txt").write_text("edited\n")


def _nested_moved(p, u):
    git(p.nested, "checkout", "-q", u.nested_v1)


def _nested_deinit(p, u):
    git(p.lib, "submodule", "deinit", "-q", "--force", "extern/nested")


def _nested_deinit_gitfile_put_back(p, u):
    """git counts it de-initialised (`submodule status`: -) though its .git file is back."""
    gitfile = (p.nested / ".git").read_text()
    _nested_deinit(p, u)
    (p.nested / ".git").write_text(gitfile)


def _nested_config_removed(p, u):
    git(p.lib, "config", "--remove-section", "submodule.extern/nested")


def _nested_active_by_pathspec(*specs: str):
    """The nested submodule active through `submodule.active` pathspecs alone (what
    `git clone --recurse-submodules` writes: `.`), not submodule.<name>.active."""

    def mutate(p, u):
        git(p.lib, "config", "--unset-all", "submodule.extern/nested.active", check=False)
        for spec in specs:
            git(p.lib, "config", "--add", "submodule.active", spec)

    return mutate


def _nested_local_commit(p, u):
    commit_file(p.nested, "x.txt", "x\n", "nested local commit")


def _extra_local_commit(p, u):
    commit_file(p.lib, "x.txt", "x\n", "local commit")


def _other_commit_detached(p, u):
    git(p.lib, "fetch", "-q", "--unshallow", str(u.lib))
    git(p.lib, "checkout", "-q", "--detach", u.lib_v1)


def _branch_at_other_commit(p, u):
    _extra_local_commit(p, u)
    git(p.lib, "switch", "-q", "-c", "feature")


def _dep_deleted(p, u):
    shutil.rmtree(p.lib)


def _dep_replaced_by_folder(p, u):
    shutil.rmtree(p.lib)
    p.lib.mkdir()
    (p.lib / "lib.txt").write_text("lib v2\n")


def _dep_empty_folder(p, u):
    shutil.rmtree(p.lib)
    p.lib.mkdir()


def _replace_ref_hides_other_content(p, u):
    """`git replace` makes the pin show another commit's tree; qola must see the real one."""
    git(p.lib, "fetch", "-q", "--unshallow", str(u.lib))
    git(p.lib, "replace", u.lib_v2, u.lib_tip)
    git(p.lib, "reset", "-q", "--hard")


def _nested_gitlink_removed_from_index(p, u):
    git(p.lib, "rm", "-q", "--cached", "extern/nested")


def _pin_changed_in_manifest(p, u):
    p.set_pin(u.lib_v2, u.lib_tip)


def _hidden(flag, repo, name):
    def mutate(p, u):
        tree = {"lib": p.lib, "nested": p.nested}[repo]
        git(tree, "update-index", flag, name)
        (tree / name).write_text("edited behind git status's back\n")

    return mutate


def _hidden_deleted(p, u):
    git(p.lib, "update-index", "--skip-worktree", "lib.txt")
    (p.lib / "lib.txt").unlink()


MUTATIONS = {
    "assume-unchanged-modified": (_hidden("--assume-unchanged", "lib", "lib.txt"), "dirty", ()),
    "skip-worktree-modified": (_hidden("--skip-worktree", "lib", "lib.txt"), "dirty", ()),
    "skip-worktree-deleted": (_hidden_deleted, "dirty", ()),
    "nested-assume-unchanged-modified": (
        _hidden("--assume-unchanged", "nested", "nested.txt"),
        "dirty",
        (),
    ),
    "modified-file": (_modified_file, "dirty", ()),
    "staged-change": (_staged_change, "dirty", ()),
    "deleted-file": (_deleted_file, "dirty", ()),
    "new-staged-file": (_new_staged_file, "dirty", ()),
    "mode-change": (_mode_change, "dirty", ()),
    "nested-modified": (_nested_modified, "dirty", ()),
    "nested-moved": (_nested_moved, "submodule", ()),
    "nested-deinit": (_nested_deinit, "submodule", ()),
    "nested-deinit-gitfile-put-back": (_nested_deinit_gitfile_put_back, "submodule", ()),
    "nested-not-initialised-in-config": (_nested_config_removed, "submodule", ()),
    "nested-local-commit": (_nested_local_commit, "submodule", ()),
    "nested-not-in-submodule-active": (_nested_active_by_pathspec("other"), "submodule", ()),
    "nested-excluded-by-submodule-active": (
        _nested_active_by_pathspec(".", ":(exclude)extern"),
        "submodule",
        (),
    ),
    "extra-local-commit": (_extra_local_commit, "wrong-commit", ()),
    "other-commit-detached": (_other_commit_detached, "wrong-commit", ()),
    "branch-at-other-commit": (_branch_at_other_commit, "wrong-commit", ()),
    "dep-deleted": (_dep_deleted, "missing", ()),
    "dep-replaced-by-folder": (_dep_replaced_by_folder, "missing", ()),
    "dep-empty-folder": (_dep_empty_folder, "missing", ()),
    "pin-changed": (_pin_changed_in_manifest, "wrong-commit", ()),
    "replace-ref": (_replace_ref_hides_other_content, "dirty", ()),
    "nested-gitlink-unstaged": (_nested_gitlink_removed_from_index, "dirty", ()),
    "untracked-strict": (lambda p, u: (p.lib / "new.txt").write_text("x"), "dirty", ("--strict",)),
    "nested-untracked-strict": (
        lambda p, u: (p.nested / "new.txt").write_text("x"),
        "dirty",
        ("--strict",),
    ),
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_verify_catches_mutation(mutation, pinned_clean, upstream, run_qola):
    mutate, kind, args = MUTATIONS[mutation]
    mutate(pinned_clean, upstream)
    before = snapshot(pinned_clean.root)
    res = verify(run_qola, pinned_clean, *args)
    assert res.exit_code == 1, res.stdout
    doc = json.loads(res.stdout)
    assert doc["ok"] is False and doc["deps"][0]["ok"] is False
    assert kind in kinds(res)
    assert snapshot(pinned_clean.root) == before  # read-only, even when failing
    text = run_qola("verify", "-m", str(pinned_clean.manifest), *args)
    assert text.exit_code == 1
    assert text.stdout.startswith("FAIL lib ")
    assert f"     {kind}: " in text.stdout


# Changes that leave the tree as the manifest says: verify must pass every one.
UNTOUCHED = {
    "nothing": lambda p, u: None,
    "branch-at-pin": lambda p, u: git(p.lib, "switch", "-q", "-c", "work"),
    "untracked-without-strict": lambda p, u: (p.lib / "build.log").write_text("x"),
    "assume-unchanged-untouched": lambda p, u: git(
        p.lib, "update-index", "--assume-unchanged", "lib.txt"
    ),
    "skip-worktree-untouched": lambda p, u: git(
        p.lib, "update-index", "--skip-worktree", "lib.txt"
    ),
    "touched-same-content": lambda p, u: (p.lib / "lib.txt").write_text("lib v2\n"),
    "gc-and-repack": lambda p, u: git(p.lib, "gc", "-q"),
    "nested-active-by-submodule-active-dot": _nested_active_by_pathspec("."),
    "nested-active-by-submodule-active-glob": _nested_active_by_pathspec("ext*"),
}


@pytest.mark.parametrize("change", sorted(UNTOUCHED))
def test_verify_passes_untouched_tree(change, pinned_clean, upstream, run_qola):
    UNTOUCHED[change](pinned_clean, upstream)
    res = verify(run_qola, pinned_clean)
    assert res.exit_code == 0, res.stdout
    assert kinds(res) == []


def test_verify_names_the_hidden_file_and_its_flag(pinned_clean, upstream, run_qola):
    _hidden("--assume-unchanged", "nested", "nested.txt")(pinned_clean, upstream)
    res = run_qola("verify", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 1
    assert (
        "     dirty: extern/nested/nested.txt: modified (hidden by assume-unchanged)\n"
        in res.stdout
    )


@pytest.fixture
def root_submodule_project(tmp_path, upstream, run_qola):
    """The dep is a submodule of the root, pinned by the legacy form, checked out by qola."""
    root = tmp_path / "super"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "submodule", "add", "-q", str(upstream.lib), "3rdparty/lib")
    git(root, "-C", "3rdparty/lib", "checkout", "-q", upstream.lib_v2)
    git(root, "add", "3rdparty/lib")
    (root / "qola.toml").write_text(f'[qola]\nnamespace = "te"\nlib_commit = "{upstream.lib_v2}"\n')
    git(root, "add", "qola.toml")
    git(root, "commit", "-q", "-m", "pin lib")
    assert run_qola("checkout", "-m", str(root / "qola.toml")).exit_code == 0
    return root


def test_verify_root_submodule_in_agreement_passes(root_submodule_project, run_qola):
    res = run_qola("verify", "-m", str(root_submodule_project / "qola.toml"))
    assert res.exit_code == 0, res.stdout


def test_verify_gitlink_staged_differently_is_caught(root_submodule_project, upstream, run_qola):
    root = root_submodule_project
    git(root, "update-index", "--cacheinfo", f"160000,{upstream.lib_tip},3rdparty/lib")
    res = run_qola("verify", "--format", "json", "-m", str(root / "qola.toml"))
    assert res.exit_code == 1
    assert kinds(res) == ["gitlink"]


def test_verify_gitlink_committed_differently_is_caught(root_submodule_project, upstream, run_qola):
    root = root_submodule_project
    git(root, "update-index", "--cacheinfo", f"160000,{upstream.lib_tip},3rdparty/lib")
    git(root, "commit", "-q", "-m", "move gitlink only")
    res = run_qola("verify", "-m", str(root / "qola.toml"))
    assert res.exit_code == 1
    assert (
        f"     gitlink: the root records 3rdparty/lib at {upstream.lib_tip[:12]} but the "
        f"manifest pins {upstream.lib_v2[:12]}\n"
    ) in res.stdout


def test_verify_never_fetches(behind_pin, upstream, run_qola, tmp_path):
    """The pin is not present locally: verify reports it and does not go looking for it."""
    before = snapshot(behind_pin.root)
    res = verify(run_qola, behind_pin)
    assert res.exit_code == 1
    assert kinds(res) == ["wrong-commit"]
    assert git(behind_pin.lib, "cat-file", "-t", upstream.lib_tip, check=False) == ""
    assert snapshot(behind_pin.root) == before


def test_verify_overridden_dep_is_reported_not_failed(pinned_clean, make_project, run_qola):
    project = make_project(name="other")
    res = run_qola(
        "verify",
        "--format",
        "json",
        "-m",
        str(project.manifest),
        env={"QOLA_SOURCE_DIR_LIB": str(pinned_clean.lib)},
    )
    assert res.exit_code == 0
    assert kinds(res) == ["overridden"]


def test_status_lists_each_dep(pinned_clean, upstream, run_qola):
    (pinned_clean.lib / "lib.txt").write_text("edited\n")
    res = run_qola("status", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 1
    short = upstream.lib_v2[:12]
    assert res.stdout == (
        "NAME  PATH          PIN           HEAD          STATE  GITLINK  DIRTY\n"
        f"lib   3rdparty/lib  {short}  {short}  ok     ok       yes\n"
    )


@pytest.fixture
def three_pinned(pinned_by_qola, upstream):
    """Three copies of a dependency qola checked out (its gitlinks remembered)."""
    pinned_clean = pinned_by_qola
    """pinned_clean with two more deps, `b` and `c`: copies of lib, at the same pin."""
    for name in ("b", "c"):
        shutil.copytree(pinned_clean.lib, pinned_clean.root / "3rdparty" / name, symlinks=True)
        with pinned_clean.manifest.open("a") as manifest:
            manifest.write(
                f'\n[deps.{name}]\npath = "3rdparty/{name}"\nurl = "{upstream.lib}"\n'
                f'commit = "{upstream.lib_v2}"\n'
            )
    return pinned_clean


STATUS = "git --no-optional-locks status --porcelain=v2 -z --untracked-files=no " \
    "--ignore-submodules=none"  # fmt: skip


def test_verify_runs_one_git_status_per_dep_and_reads_flags_from_the_index(
    three_pinned, run_qola
):
    """No `ls-files -v` per dependency: the flags come from the index files."""
    nested_b = three_pinned.root / "3rdparty" / "b" / "extern" / "nested"
    git(nested_b, "update-index", "--assume-unchanged", "nested.txt")
    (nested_b / "nested.txt").write_text("edited behind git status's back\n")
    res = run_qola("verify", "-v", "-m", str(three_pinned.manifest))
    assert res.exit_code == 1
    assert [line.split()[:2] for line in res.stdout.splitlines()[:4]] == [
        ["ok", "lib"], ["FAIL", "b"], ["dirty:", "extern/nested/nested.txt:"], ["ok", "c"],
    ]  # fmt: skip
    assert "dirty: extern/nested/nested.txt: modified (hidden by assume-unchanged)" in res.stdout
    assert sorted(ran(res.stderr)) == sorted(
        ["--literal-pathspecs ls-files -s -z -- 3rdparty/lib 3rdparty/b 3rdparty/c"]
        + [STATUS.removeprefix("git ")] * 3
    )


def test_verify_falls_back_to_ls_files_for_an_index_it_cannot_read(three_pinned, run_qola):
    """A split index in one nested submodule: git is asked for that repository only."""
    nested_c = three_pinned.root / "3rdparty" / "c" / "extern" / "nested"
    git(nested_c, "update-index", "--skip-worktree", "nested.txt")
    git(nested_c, "update-index", "--split-index")
    (nested_c / "nested.txt").unlink()
    res = run_qola("verify", "-v", "-m", str(three_pinned.manifest))
    assert res.exit_code == 1
    assert "FAIL c " in res.stdout
    assert "dirty: extern/nested/nested.txt: deleted (hidden by skip-worktree)" in res.stdout
    listed = [command for command in ran(res.stderr) if " ls-files -v " in command]
    assert listed == ["--no-optional-locks ls-files -v -s -z --recurse-submodules"]


def test_verify_many_deps_report_in_manifest_order_as_a_sequential_run_would(
    three_pinned, run_qola
):
    from qola import manifest as qola_manifest
    from qola.gitrun import git as qola_git
    from qola.sync import verify as qola_verify

    (three_pinned.root / "3rdparty" / "c" / "lib.txt").write_text("edited\n")
    git(three_pinned.root / "3rdparty" / "lib", "update-index", "--skip-worktree", "README")
    (three_pinned.root / "3rdparty" / "lib" / "README").write_text("edited\n")
    loaded = qola_manifest.load(three_pinned.manifest, None)
    deps = loaded.select(())
    runner = qola_git.Runner()
    parallel = qola_verify.verify(loaded, deps, runner)
    links = qola_verify.root_gitlinks(loaded, deps, runner)
    with qola_verify.signatures.Keys() as keys:
        sequential = [qola_verify._verify_one(loaded, dep, runner, False, links, keys)
                      for dep in deps]  # fmt: skip
    assert list(parallel.deps) == sequential
    assert [(d.dep.name, d.ok) for d in parallel.deps] == [
        ("lib", False), ("b", True), ("c", False),
    ]  # fmt: skip
