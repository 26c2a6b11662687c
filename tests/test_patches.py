"""Patch series on top of a pin, applied for real with git."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import procs
import pytest
from conftest import Project, Upstream
from repos import commit_file, git, head, snapshot, without_noop_stamps

from qola.repo import commitcache, store

SERIES = "patches/lib"


@dataclass(frozen=True)
class Patches:
    """Patch texts made once per session on throwaway clones of the upstream."""

    readme: str  # a format-patch mail against lib v2: README
    lib_txt: str  # a plain `git diff` against lib v2: lib.txt
    readme_other: str  # README changed differently: the same name, other content
    extra: str  # a third patch, adding EXTRA
    conflicting: str  # expects README content that lib v2 does not have
    adds_lib_txt_v1: str  # against lib v1: creates lib.txt, which v2 already has
    nested: str  # a mail against nested v2: nested.txt


def _work(base: Path, source: Path, at: str) -> Path:
    work = base / f"work-{len(list(base.iterdir()))}"
    git(base, "clone", "-q", str(source), str(work))
    git(work, "checkout", "-q", "--detach", at)
    return work


def _mail(work: Path, name: str, text: str, subject: str) -> str:
    (work / name).write_text(text)
    git(work, "add", name)
    git(work, "commit", "-q", "-m", subject, "-m", "Why: the upstream has not merged it.")
    return git(work, "format-patch", "-1", "--stdout") + "\n"


@pytest.fixture(scope="session")
def texts(tmp_path_factory: pytest.TempPathFactory, upstream: Upstream) -> Patches:
    base = tmp_path_factory.mktemp("patch-texts")
    readme = _mail(_work(base, upstream.lib, upstream.lib_v2), "README", "lib, patched\n",
                   "README: say it is patched")  # fmt: skip
    work = _work(base, upstream.lib, upstream.lib_v2)
    (work / "lib.txt").write_text("lib v2\nand a fix\n")
    lib_txt = git(work, "diff") + "\n"
    readme_other = _mail(_work(base, upstream.lib, upstream.lib_v2), "README", "lib, other\n",
                         "README: another change")  # fmt: skip
    extra = _mail(_work(base, upstream.lib, upstream.lib_v2), "EXTRA", "extra\n", "add EXTRA")
    work = _work(base, upstream.lib, upstream.lib_v2)
    commit_file(work, "README", "something else\n")
    conflicting = _mail(work, "README", "and more\n", "README: needs other content")
    adds = _mail(_work(base, upstream.lib, upstream.lib_v1), "lib.txt", "mine\n", "add lib.txt")
    nested = _mail(_work(base, upstream.nested, upstream.nested_v2), "nested.txt",
                   "nested v2, patched\n", "nested: patched")  # fmt: skip
    return Patches(readme, lib_txt, readme_other, extra, conflicting, adds, nested)


def write_series(project: Project, files: dict[str, str]) -> Path:
    folder = project.root / SERIES
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def patched(make_project, texts: Patches, run_qola) -> Project:
    """lib at v2 plus two patches (a mail and a plain diff), checked out."""
    project = make_project(extra=f'patches = "{SERIES}"\n')
    write_series(project, {"0001-readme.patch": texts.readme, "0002-lib.patch": texts.lib_txt})
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    return project


def verify_json(run_qola, project: Project) -> tuple[int, list[dict[str, str]]]:
    res = run_qola("verify", "--format", "json", "-m", str(project.manifest))
    problems = [p for dep in json.loads(res.stdout)["deps"] for p in dep["problems"]]
    return res.exit_code, problems


def test_each_patch_becomes_one_commit_with_a_fixed_identity(patched, upstream, run_qola):
    lib = patched.lib
    assert git(lib, "rev-parse", "HEAD~2") == upstream.lib_v2
    log = git(lib, "log", "--format=%an <%ae> %aI|%cn <%ce> %cI|%s", "-2")
    fixed = "qola <qola@patch.invalid> 2000-01-01T00:00:00+00:00"
    assert log.splitlines() == [
        f"{fixed}|{fixed}|Apply 0002-lib.patch",
        f"{fixed}|{fixed}|README: say it is patched",
    ]
    body = git(lib, "log", "--format=%B", "-1", "HEAD~1")
    assert body == (
        "README: say it is patched\n\nWhy: the upstream has not merged it.\n\n"
        "Qola-Patch: 0001-readme.patch"
    )
    assert (lib / "README").read_text() == "lib, patched\n"
    assert (lib / "lib.txt").read_text() == "lib v2\nand a fix\n"
    assert git(lib, "status", "--porcelain") == ""
    assert verify_json(run_qola, patched) == (0, [])


def test_second_checkout_is_a_noop_that_runs_no_git(patched, tmp_path):
    before = snapshot(patched.root)
    bindir = tmp_path / "bin-without-git"
    bindir.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "qola.cli", "checkout", "-m", str(patched.manifest)],
        env={**os.environ, "PATH": str(bindir)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("up to date\n")
    assert without_noop_stamps(snapshot(patched.root)) == before


def test_two_clones_get_the_same_patched_commit(make_project, texts, run_qola):
    heads = []
    for name in ("one", "two"):
        project = make_project(extra=f'patches = "{SERIES}"\n', name=name)
        write_series(project, {"0001-readme.patch": texts.readme, "0002-lib.patch": texts.lib_txt})
        assert run_qola("checkout", "-m", str(project.manifest)).exit_code == 0
        heads.append(head(project.lib))
    assert heads[0] == heads[1]


def test_patched_head_is_found_again_when_qola_forgot_it(patched, run_qola):
    """With qola's memory of the series gone, verify works the commit out, writing nothing."""
    memory = commitcache.record_file(patched.lib / ".git", "series", "any").parent
    for item in memory.iterdir():
        item.unlink()
    before = snapshot(patched.root)
    assert verify_json(run_qola, patched) == (0, [])
    assert snapshot(patched.root) == before
    res = run_qola("checkout", "-v", "-m", str(patched.manifest))
    assert res.exit_code == 0, res.stderr
    assert "checked out" not in res.stderr


def _change(project: Project, texts: Patches) -> str:
    write_series(project, {"0001-readme.patch": texts.readme_other})
    return "the applied patches differ: changed 0001-readme.patch"


def _remove(project: Project, texts: Patches) -> str:
    (project.root / SERIES / "0002-lib.patch").unlink()
    return "the applied patches differ: extra 0002-lib.patch"


def _add(project: Project, texts: Patches) -> str:
    write_series(project, {"0003-extra.patch": texts.extra})
    return "the applied patches differ: missing 0003-extra.patch"


def _reorder(project: Project, texts: Patches) -> str:
    folder = project.root / SERIES
    (folder / "0001-readme.patch").rename(folder / "0003-readme.patch")
    return "the applied patches differ: missing 0003-readme.patch; extra 0001-readme.patch"


@pytest.mark.parametrize("change", [_change, _remove, _add, _reorder], ids=lambda f: f.__name__)
def test_verify_catches_a_changed_series_and_checkout_repairs_it(patched, texts, run_qola, change):
    message = change(patched, texts)
    before = snapshot(patched.root)
    code, problems = verify_json(run_qola, patched)
    assert code == 1
    assert [(p["kind"], p["message"]) for p in problems] == [("patches", message)]
    assert snapshot(patched.root) == before
    # qola's own patch commits are not someone's unsaved work: checkout just moves on.
    res = run_qola("checkout", "-m", str(patched.manifest))
    assert res.exit_code == 0, res.stderr
    assert verify_json(run_qola, patched) == (0, [])


def test_series_not_applied_is_reported(patched, upstream, run_qola):
    git(patched.lib, "checkout", "-q", "--detach", upstream.lib_v2)
    code, problems = verify_json(run_qola, patched)
    assert code == 1
    assert [(p["kind"], p["message"]) for p in problems] == [
        ("patches", "the patch series is not applied (0001-readme.patch, 0002-lib.patch)")
    ]


def test_a_pin_checked_out_without_its_series_is_patched_and_said_so(patched, upstream, run_qola):
    git(patched.lib, "checkout", "-q", "--detach", upstream.lib_v2)  # as `submodule update` does
    res = run_qola("checkout", "-m", str(patched.manifest))
    assert res.exit_code == 0, res.stderr
    short = upstream.lib_v2[:12]
    assert f"qola: lib: 3rdparty/lib is at {short}; its patches go on top\n" in res.stderr
    assert f"from {short} to {short}" not in res.stderr  # it was: move from the pin to the pin
    assert verify_json(run_qola, patched) == (0, [])


def test_own_commit_on_top_of_the_series_is_wrong_commit_and_protected(patched, run_qola):
    mine = commit_file(patched.lib, "mine.txt", "my work\n", "my work")
    code, problems = verify_json(run_qola, patched)
    assert code == 1 and [p["kind"] for p in problems] == ["wrong-commit"]
    (patched.root / SERIES / "0002-lib.patch").unlink()
    before = snapshot(patched.root)
    res = run_qola("checkout", "-m", str(patched.manifest))
    assert res.exit_code == 4
    assert "commit on no branch: 3rdparty/lib: " + mine[:7] in res.stderr
    assert snapshot(patched.root) == before


def test_patch_that_does_not_apply_stops_with_exit_3_and_changes_nothing(
    patched, texts, upstream, run_qola
):
    old_head = head(patched.lib)
    write_series(patched, {"0000-conflicting.patch": texts.conflicting})
    before = snapshot(patched.root)
    res = run_qola("checkout", "-m", str(patched.manifest))
    assert res.exit_code == 3
    assert (
        f"qola: lib: patch 0000-conflicting.patch does not apply to {upstream.lib_v2[:12]}:\n"
        in res.stderr
    )
    assert "error: patch failed: README:1" in res.stderr
    assert "hint: refresh the patch against the pinned commit" in res.stderr
    assert snapshot(patched.root) == before
    assert head(patched.lib) == old_head
    code, problems = verify_json(run_qola, patched)
    assert code == 1 and problems[0]["kind"] == "patches"
    assert "0000-conflicting.patch does not apply" in problems[0]["message"]
    # Fixed, the next run finishes the job.
    (patched.root / SERIES / "0000-conflicting.patch").unlink()
    assert run_qola("checkout", "-m", str(patched.manifest)).exit_code == 0


def test_clone_with_a_failing_patch_leaves_no_folder(make_project, texts, run_qola):
    project = make_project(extra=f'patches = "{SERIES}"\n')
    write_series(project, {"0001-conflicting.patch": texts.conflicting})
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 3
    assert "patch 0001-conflicting.patch does not apply" in res.stderr
    assert not project.lib.exists()
    assert not list(project.lib.parent.glob(".*qola-clone*"))


def test_nested_submodule_patches_are_applied_inside_it(make_project, texts, upstream, run_qola):
    project = make_project(extra=f'patches = "{SERIES}"\n')
    write_series(
        project,
        {"0001-readme.patch": texts.readme, "extern/nested/0001-nested.patch": texts.nested},
    )
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    nested = project.nested
    assert git(nested, "rev-parse", "HEAD~1") == upstream.nested_v2
    assert (nested / "nested.txt").read_text() == "nested v2, patched\n"
    assert git(nested, "log", "-1", "--format=%s") == "nested: patched"
    assert (project.lib / "README").read_text() == "lib, patched\n"
    assert verify_json(run_qola, project) == (0, [])
    before = snapshot(project.root)
    assert run_qola("checkout", "-m", str(project.manifest)).exit_code == 0
    assert snapshot(project.root) == before

    git(nested, "checkout", "-q", "--detach", upstream.nested_v2)
    code, problems = verify_json(run_qola, project)
    assert code == 1
    assert [(p["kind"], p["message"]) for p in problems] == [
        (
            "patches",
            "extern/nested: the patch series is not applied (extern/nested/0001-nested.patch)",
        )
    ]
    assert run_qola("checkout", "-m", str(project.manifest)).exit_code == 0
    assert verify_json(run_qola, project) == (0, [])


def test_patches_for_a_folder_that_is_no_submodule_are_refused(make_project, texts, run_qola):
    project = make_project(extra=f'patches = "{SERIES}"\n')
    write_series(project, {"extern/other/0001-nested.patch": texts.nested})
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 2
    assert (
        f"qola: lib: {SERIES}/extern/other holds patches, but extern/other is not a nested "
        "submodule of 3rdparty/lib that git checks out\n"
    ) in res.stderr
    assert not project.lib.exists()


def test_bump_that_breaks_a_patch_stops_before_writing_anything(
    make_project, texts, upstream, run_qola
):
    project = make_project(pin=upstream.lib_v1, extra=f'patches = "{SERIES}"\n')
    write_series(project, {"0001-lib-txt.patch": texts.adds_lib_txt_v1})
    assert run_qola("checkout", "-m", str(project.manifest)).exit_code == 0
    assert (project.lib / "lib.txt").read_text() == "mine\n"
    before = snapshot(project.root)
    res = run_qola("bump", "lib", "--to", "v2.0", "--commit", "-m", str(project.manifest))
    assert res.exit_code == 3
    assert "patch 0001-lib-txt.patch does not apply" in res.stderr
    assert "lib.txt: already exists" in res.stderr
    assert project.manifest.read_text().count(upstream.lib_v1) == 1
    assert git(project.root, "log", "--format=%s") == "pins"
    assert git(project.lib, "rev-parse", "HEAD~1") == upstream.lib_v1
    after = snapshot(project.root)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    # Only what bump fetched to show the log may differ: objects, no file, ref or index.
    assert changed
    fetched = tuple(f"3rdparty/lib/.git/{n}" for n in ("objects/", "FETCH_HEAD", "shallow"))
    assert [k for k in changed if not k.startswith(fetched)] == []


def test_legacy_patches_dir_applies_the_series(tmp_path, upstream, texts, run_qola):
    root = tmp_path / "legacy"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream.lib),
        "3rdparty/lib")  # fmt: skip
    git(root, "-C", "3rdparty/lib", "checkout", "-q", upstream.lib_v2)
    git(root, "add", "3rdparty/lib")
    (root / "qola.toml").write_text(
        f'[qola]\nlib_commit = "{upstream.lib_v2}"\npatches_dir = "{SERIES}"\n'
    )
    project = Project(root, root / "qola.toml")
    write_series(project, {"0001-readme.patch": texts.readme})
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    assert git(project.lib, "rev-parse", "HEAD~1") == upstream.lib_v2
    assert (project.lib / "README").read_text() == "lib, patched\n"
    assert verify_json(run_qola, project) == (0, [])


def test_freeze_pins_the_commit_below_the_patches(patched, upstream, run_qola):
    before = patched.manifest.read_text()
    res = run_qola("freeze", "-m", str(patched.manifest))
    assert res.exit_code == 0, res.stderr
    assert res.stdout == "every pin already matches what is checked out\n"
    assert patched.manifest.read_text() == before


def _new_file_patch(i: int) -> str:
    return (
        f"diff --git a/added/f{i:03} b/added/f{i:03}\nnew file mode 100644\n"
        f"--- /dev/null\n+++ b/added/f{i:03}\n@@ -0,0 +1 @@\n+file {i}\n"
    )


def test_sigkill_while_a_series_is_applied_then_rerun_succeeds(patched, tmp_path):
    """A series is built in a temporary index and object writes only: a kill there leaves
    the dependency as it was, and the next run applies the whole series."""
    old_head = head(patched.lib)
    write_series(patched, {f"{i:04}-added.patch": _new_file_patch(i) for i in range(3, 63)})
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {"TMPDIR": str(temp)}
    proc = procs.start("checkout", "-m", str(patched.manifest), env=env)
    try:
        procs.wait_for(
            lambda: bool(list(temp.glob("qola-series-*/index"))) or proc.poll() is not None,
            what="a series being applied",
        )
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL, "the run ended before the series was applied"
    assert head(patched.lib) == old_head
    assert git(patched.lib, "status", "--porcelain") == ""
    rerun = procs.run("checkout", "-m", str(patched.manifest), env=env)
    assert rerun.returncode == 0, rerun.stderr
    assert git(patched.lib, "rev-list", "--count", f"{old_head}..HEAD") == "60"
    assert (patched.lib / "added" / "f062").read_text() == "file 62\n"
    assert procs.run("verify", "--strict", "-m", str(patched.manifest)).returncode == 0


def test_nested_patches_with_submodules_off_are_refused_and_change_nothing(
    make_project, texts, run_qola
):
    project = make_project(extra=f'patches = "{SERIES}"\nsubmodules = false\n')
    write_series(project, {"extern/nested/0001-nested.patch": texts.nested})
    before = snapshot(project.root)
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 2
    assert (
        f"qola: lib: the patch folder {SERIES} has patches for nested submodules "
        "(extern/nested) but submodules = false\n"
        "hint: set submodules = true, or move those patches away\n"
    ) in res.stderr
    assert snapshot(project.root) == before


def test_noop_stamp_sees_an_edited_patch(patched, texts):
    """The no-op's stamp lists every patch file: one edited, the next no-op looks again."""
    def answered() -> bool:
        return not procs.noop_declined(["checkout", "-q"], patched.root)

    assert answered()  # and stamped
    assert list(store.noop_stamps(patched.root / ".git").glob("*.stamp"))
    assert answered()  # from the stamp
    edited = {"0001-readme.patch": texts.readme_other, "0002-lib.patch": texts.lib_txt}
    write_series(patched, edited)
    assert not answered()  # the series changed: the full checkout must re-apply it


def test_verify_of_a_patched_pin_at_another_commit_counts_its_patches(patched, upstream, run_qola):
    elsewhere = git(patched.lib, "commit-tree", "-m", "unrelated", "HEAD^{tree}")
    git(patched.lib, "checkout", "-q", "--detach", elsewhere)
    assert verify_json(run_qola, patched) == (1, [
        {"kind": "wrong-commit", "failure": True,
         "message": f"HEAD is {elsewhere[:12]}, the pin is {upstream.lib_v2[:12]} + 2 patches"},
    ])  # fmt: skip
