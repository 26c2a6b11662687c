"""Patches that reach into a nested submodule, on a project shaped like TransformerEngine:
a dependency aiter with the nested submodule 3rdparty/composable_kernel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from repos import commit_file, git, head, init_repo, snapshot, without_noop_stamps

CK = "3rdparty/composable_kernel"
SERIES = "patches/aiter"


@dataclass(frozen=True)
class Aiter:
    """aiter, pinning composable_kernel at ck_pin, and the patch texts made against them."""

    ck: Path
    aiter: Path
    ck_pin: str
    pin: str
    later: str  # a descendant of pin, the same gitlink
    mixed: str  # a format-patch mail changing aiter.py and, inside CK, include/x.hpp
    ck_only: str  # a plain diff (no headers) from aiter, changing only CK's include/y.hpp
    ck_mail: str  # headers only (no `From <sha>` line), made in CK: README
    ck_broken: str  # a plain diff from aiter whose CK part expects what x.hpp does not have


def _submodule_diff(work: Path, *args: str) -> str:
    return git(work, "-c", "diff.submodule=diff", *args) + "\n"


@pytest.fixture(scope="session")
def aiter(tmp_path_factory: pytest.TempPathFactory) -> Aiter:
    base = tmp_path_factory.mktemp("aiter-upstream")
    ck = init_repo(base / "composable_kernel")
    commit_file(ck, "include/x.hpp", "int x = 1;\n")
    commit_file(ck, "include/y.hpp", "int y = 1;\n")
    ck_pin = commit_file(ck, "README", "composable kernel\n")
    upstream = init_repo(base / "aiter")
    commit_file(upstream, "aiter.py", "print('aiter')\n")
    git(upstream, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(ck), CK)
    git(upstream, "commit", "-q", "-m", "add composable_kernel")
    pin = head(upstream)

    work = base / "work"
    git(base, "-c", "protocol.file.allow=always", "clone", "-q", "--recurse-submodules",
        str(upstream), str(work))  # fmt: skip
    # A patch of both repositories: `git diff --submodule=diff` shows the submodule's
    # changes inline, under its path; format-patch does not, so that part is added in.
    (work / "aiter.py").write_text("print('aiter, fixed')\n")
    (work / CK / "include/x.hpp").write_text("int x = 2;\n")
    inline = _submodule_diff(work, "diff", "--", CK)
    git(work, "commit", "-q", "-m", "aiter+ck: fix the build",
        "-m", "Why: upstream has not merged it.", "aiter.py")  # fmt: skip
    mail = git(work, "format-patch", "-1", "--stdout") + "\n"
    at = mail.index("diff --git a/aiter.py")
    mixed = mail[:at] + inline[inline.index("diff --git"):] + mail[at:]
    git(work / CK, "checkout", "-q", "--", ".")
    (work / CK / "include/y.hpp").write_text("int y = 2;\n")
    ck_only = _submodule_diff(work, "diff")
    git(work / CK, "checkout", "-q", "--", ".")
    (work / CK / "include/x.hpp").write_text("int x = 3;\n")
    broken = _submodule_diff(work, "diff").replace("-int x = 1;", "-int x = 7;")
    git(work / CK, "checkout", "-q", "--", ".")
    (work / CK / "README").write_text("composable kernel, tuned\n")
    ck_mail = "From: Someone <someone@example.com>\nSubject: [PATCH] ck: tune the README\n\n"
    ck_mail += git(work / CK, "diff") + "\n"
    later = commit_file(upstream, "docs.txt", "later\n")  # main's tip, what bump finds
    return Aiter(ck, upstream, ck_pin, pin, later, mixed, ck_only, ck_mail, broken)


@dataclass(frozen=True)
class Root:
    root: Path
    manifest: Path

    @property
    def aiter(self) -> Path:
        return self.root / "3rdparty" / "aiter"

    @property
    def ck(self) -> Path:
        return self.aiter / CK


def _root(tmp_path: Path, text: str, patches: dict[str, str]) -> Root:
    root = init_repo(tmp_path / "te")
    (root / "qola.toml").write_text(text)
    (root / ".gitignore").write_text("/3rdparty/\n")
    for name, body in patches.items():
        (root / SERIES / name).parent.mkdir(parents=True, exist_ok=True)
        (root / SERIES / name).write_text(body)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "pins")
    return Root(root, root / "qola.toml")


def _tables(aiter: Aiter) -> str:
    return (
        f'[deps.aiter]\npath = "3rdparty/aiter"\nurl = "{aiter.aiter}"\n'
        f'commit = "{aiter.pin}"\ntrack = "main"\npatches = "{SERIES}"\n'
    )


def _verify(run_qola, root: Root) -> tuple[int, list[tuple[str, str]]]:
    res = run_qola("verify", "--format", "json", "-m", str(root.manifest))
    found = json.loads(res.stdout)["deps"]
    return res.exit_code, [(p["kind"], p["message"]) for dep in found for p in dep["problems"]]


def _subjects(repo: Path, count: int) -> list[str]:
    return git(repo, "log", f"-{count}", "--format=%s").splitlines()


@pytest.fixture
def split(tmp_path, aiter: Aiter, run_qola) -> Root:
    """aiter checked out with a patch that reaches into CK and one only for CK."""
    patches = {"0001-mixed.patch": aiter.mixed, "0002-ck.patch": aiter.ck_only}
    root = _root(tmp_path, _tables(aiter), patches)
    res = run_qola("checkout", "-m", str(root.manifest))
    assert res.exit_code == 0, res.stderr
    return root


def test_patch_reaching_into_a_nested_submodule_is_applied_there(split, aiter, run_qola):
    assert git(split.aiter, "rev-parse", "HEAD~1") == aiter.pin
    assert _subjects(split.aiter, 1) == ["aiter+ck: fix the build"]
    assert (split.aiter / "aiter.py").read_text() == "print('aiter, fixed')\n"
    # In the nested submodule: each patch's part there, in patch order, paths stripped.
    assert git(split.ck, "rev-parse", "HEAD~2") == aiter.ck_pin
    assert _subjects(split.ck, 2) == ["Apply 0002-ck.patch", "aiter+ck: fix the build"]
    assert git(split.ck, "log", "-1", "--format=%B", "HEAD~1") == (
        "aiter+ck: fix the build\n\nWhy: upstream has not merged it.\n\n"
        "Qola-Patch: 0001-mixed.patch"
    )
    assert (split.ck / "include/x.hpp").read_text() == "int x = 2;\n"
    assert (split.ck / "include/y.hpp").read_text() == "int y = 2;\n"
    assert _verify(run_qola, split) == (0, [])


def test_split_series_second_checkout_is_a_noop_that_runs_no_git(split, tmp_path):
    before = snapshot(split.root)
    bindir = tmp_path / "bin-without-git"
    bindir.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "qola.cli", "checkout", "-m", str(split.manifest)],
        env={**os.environ, "PATH": str(bindir)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("up to date\n")
    assert without_noop_stamps(snapshot(split.root)) == before


def test_split_series_not_applied_in_the_nested_submodule_is_reported(split, aiter, run_qola):
    git(split.ck, "checkout", "-q", "--detach", aiter.ck_pin)
    assert _verify(run_qola, split) == (1, [
        ("patches", f"{CK}: the patch series is not applied (0001-mixed.patch, 0002-ck.patch)"),
    ])  # fmt: skip
    res = run_qola("checkout", "-m", str(split.manifest))
    assert res.exit_code == 0, res.stderr
    assert (split.ck / "include/x.hpp").read_text() == "int x = 2;\n"
    assert _verify(run_qola, split) == (0, [])


def test_split_part_that_does_not_apply_stops_with_exit_3_and_changes_nothing(
    split, aiter, run_qola
):
    (split.root / SERIES / "0003-broken.patch").write_text(aiter.ck_broken)
    before = snapshot(split.root)
    res = run_qola("checkout", "-m", str(split.manifest))
    assert res.exit_code == 3
    assert (
        f"qola: aiter: patch 0003-broken.patch does not apply to {CK} at "
        f"{aiter.ck_pin[:12]}:\n"
    ) in res.stderr
    assert "error: patch failed: include/x.hpp:1" in res.stderr
    assert "hint: refresh the patch against the pinned commit" in res.stderr
    assert snapshot(split.root) == before
    code, problems = _verify(run_qola, split)
    assert code == 1
    assert [kind for kind, _ in problems] == ["patches"]
    assert "0003-broken.patch does not apply" in problems[0][1]


def test_legacy_manifest_sub_folder_and_split_patch_share_the_nested_series(
    tmp_path, aiter, run_qola
):
    """Both layouts at once, with the legacy [qola] form: the parts of the dependency's
    patches first, then the sub-folder's; a mail without its `From <sha>` line still
    gives its Subject."""
    patches = {"0001-mixed.patch": aiter.mixed, f"{CK}/0001-tune.patch": aiter.ck_mail}
    text = f'[qola]\naiter_commit = "{aiter.pin}"\npatches_dir = "{SERIES}"\n'
    root = _root(tmp_path, text, patches)
    git(root.root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "-f",
        str(aiter.aiter), "3rdparty/aiter")  # fmt: skip
    git(root.root, "update-index", "--cacheinfo", f"160000,{aiter.pin},3rdparty/aiter")
    git(root.root, "commit", "-q", "-m", "aiter")
    res = run_qola("checkout", "-m", str(root.manifest))
    assert res.exit_code == 0, res.stderr
    assert _subjects(root.ck, 2) == ["ck: tune the README", "aiter+ck: fix the build"]
    assert git(root.ck, "rev-parse", "HEAD~2") == aiter.ck_pin
    assert git(root.ck, "log", "-1", "--format=%B") == (
        f"ck: tune the README\n\nQola-Patch: {CK}/0001-tune.patch"
    )
    assert (root.ck / "README").read_text() == "composable kernel, tuned\n"
    assert _subjects(root.aiter, 1) == ["aiter+ck: fix the build"]
    assert _verify(run_qola, root) == (0, [])


def test_nested_patch_with_submodules_off_says_why_it_does_not_apply(tmp_path, aiter, run_qola):
    text = _tables(aiter) + "submodules = false\n"
    root = _root(tmp_path, text, {"0001-mixed.patch": aiter.mixed})
    before = snapshot(root.root)
    res = run_qola("checkout", "-m", str(root.manifest))
    assert res.exit_code == 3
    assert f"qola: aiter: patch 0001-mixed.patch does not apply to {aiter.pin[:12]}:\n" in (
        res.stderr
    )
    assert f"error: {CK}/include/x.hpp: does not exist in index" in res.stderr
    assert (
        f"hint: {CK}/include/x.hpp lies inside {CK}, a nested submodule that qola does not "
        "check out (submodules = false, or update = none in .gitmodules)"
    ) in res.stderr
    assert snapshot(root.root) == before


_CROSSING = (
    "diff --git a/aiter.py b/3rdparty/composable_kernel/aiter.py\n"
    "similarity index 100%\nrename from aiter.py\nrename to 3rdparty/composable_kernel/aiter.py\n"
)


def test_patch_moving_a_file_into_a_nested_submodule_is_refused_and_changes_nothing(
    split, aiter, run_qola
):
    (split.root / SERIES / "0003-cross.patch").write_text(_CROSSING)
    before = snapshot(split.root)
    res = run_qola("checkout", "-m", str(split.manifest))
    assert res.exit_code == 2
    assert (
        "qola: aiter: patch 0003-cross.patch renames or copies a file across a nested "
        f"submodule's boundary ({CK}/aiter.py, aiter.py)\nhint: split the patch in two\n"
    ) in res.stderr
    assert snapshot(split.root) == before


@pytest.mark.parametrize("gone", ["tools/gone.py", "gone.py"])
def test_patch_of_a_file_the_pin_lacks_says_so_and_changes_nothing(split, aiter, run_qola, gone):
    missing = f"diff --git a/{gone} b/{gone}\n--- a/{gone}\n+++ b/{gone}\n@@ -1 +1 @@\n-old\n+new\n"
    (split.root / SERIES / "0003-missing.patch").write_text(missing)
    before = snapshot(split.root)
    res = run_qola("checkout", "-m", str(split.manifest))
    assert res.exit_code == 3
    assert f"qola: aiter: patch 0003-missing.patch does not apply to {aiter.pin[:12]}:\n" in (
        res.stderr
    )
    assert (
        f"hint: {aiter.pin[:12]} has no file {gone}: refresh the patch against the "
        "pinned commit (git format-patch), or remove it\n"
    ) in res.stderr
    assert snapshot(split.root) == before


def _change(path: str, old: str, new: str) -> str:
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -1 +1 @@\n-{old}\n+{new}\n"
    )


def _deep_root(tmp_path: Path, deep, patches: dict[str, str]) -> Root:
    root = init_repo(tmp_path / "root")
    (root / "qola.toml").write_text(
        f'[deps.top]\npath = "3rdparty/top"\nurl = "{deep.top}"\ncommit = "{deep.top_v1}"\n'
        'patches = "patches/top"\n'
    )
    for name, text in patches.items():
        (root / "patches/top" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "patches/top" / name).write_text(text)
    return Root(root, root / "qola.toml")


def test_patched_submodule_two_levels_deep_is_neither_dirty_nor_local_work(
    tmp_path, deep, run_qola
):
    """git counts a nested submodule's new commits as modified content of its parent:
    qola's own patch commits two levels down are looked at on their own."""
    mid_txt = _change("mid.txt", "mid 1", "mid 1, patched")
    project = _deep_root(tmp_path, deep, {
        "extern/mid/0001-mid.patch": mid_txt,
        "extern/mid/extern/deep/0001-deep.patch": _change("deep.txt", "deep 1", "deep 1, ok"),
    })  # fmt: skip
    assert run_qola("checkout", "-m", str(project.manifest)).exit_code == 0
    assert _verify(run_qola, project) == (0, [])
    folder = project.root / "patches/top/extern/mid/extern/deep"
    (folder / "0001-deep.patch").write_text(_change("deep.txt", "deep 1", "deep 1, redone"))
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    deep_txt = project.root / "3rdparty/top/extern/mid/extern/deep/deep.txt"
    assert deep_txt.read_text() == "deep 1, redone\n"
    assert _verify(run_qola, project) == (0, [])


def test_patch_reaching_two_submodules_deep_is_applied_at_each_level(tmp_path, deep, run_qola):
    patch = "From: Someone <someone@example.com>\nSubject: three levels\n\n" + "".join([
        _change("top.txt", "top 1", "top 1, patched"),
        _change("extern/mid/mid.txt", "mid 1", "mid 1, patched"),
        _change("extern/mid/extern/deep/deep.txt", "deep 1", "deep 1, patched"),
    ])  # fmt: skip
    project = _deep_root(tmp_path, deep, {"0001-levels.patch": patch})
    root = project.root
    top = root / "3rdparty/top"
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    for repo, base, name in [
        (top, deep.top_v1, "top.txt"),
        (top / "extern/mid", deep.mid_v1, "mid.txt"),
        (top / "extern/mid/extern/deep", deep.deep_v1, "deep.txt"),
    ]:
        assert git(repo, "rev-parse", "HEAD~1") == base
        assert _subjects(repo, 1) == ["three levels"]
        assert (repo / name).read_text().endswith(", patched\n")
    assert _verify(run_qola, project) == (0, [])
    before = snapshot(root)
    assert run_qola("checkout", "-m", str(project.manifest)).exit_code == 0
    assert without_noop_stamps(snapshot(root)) == without_noop_stamps(before)
    # The patch changed: qola's own commits at every level are no unsaved work.
    (root / "patches/top/0001-levels.patch").write_text(patch.replace("patched", "redone"))
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    assert (top / "extern/mid/extern/deep/deep.txt").read_text() == "deep 1, redone\n"
    assert _verify(run_qola, project) == (0, [])


def test_refusal_over_local_work_writes_nothing_while_it_works_out_the_split(
    split, aiter, run_qola
):
    """The split needs the pin's gitlinks; with qola's record of them gone they are read
    with git, and a checkout that then refuses (exit 4) records nothing."""
    for record in (split.aiter / ".git" / "qola" / "commits").iterdir():
        record.unlink()
    edited = aiter.mixed.replace("aiter, fixed", "aiter, fixed again")
    (split.root / SERIES / "0001-mixed.patch").write_text(edited)
    (split.aiter / "aiter.py").write_text("mine\n")
    before = snapshot(split.root)
    res = run_qola("checkout", "-m", str(split.manifest))
    assert res.exit_code == 4, res.stderr
    assert "uncommitted: 3rdparty/aiter/aiter.py (modified)" in res.stderr
    assert snapshot(split.root) == before


def test_verify_without_qola_records_of_a_series_only_for_the_nested_submodule(
    tmp_path, aiter, run_qola
):
    """Every patch reaches into CK only: aiter is wanted at its pin, even when qola's
    records of the pin's gitlinks (which say so) are gone and verify asks git."""
    root = _root(tmp_path, _tables(aiter), {"0001-ck.patch": aiter.ck_only})
    assert run_qola("checkout", "-m", str(root.manifest)).exit_code == 0
    assert head(root.aiter) == aiter.pin
    for record in (root.aiter / ".git" / "qola" / "commits").iterdir():
        record.unlink()
    before = snapshot(root.root)
    assert _verify(run_qola, root) == (0, [])
    assert snapshot(root.root) == before


def test_bump_moves_the_pin_with_its_split_series(split, aiter, run_qola):
    res = run_qola("bump", "aiter", "--commit", "-m", str(split.manifest))
    assert res.exit_code == 0, res.stderr
    assert aiter.later in split.manifest.read_text()
    assert git(split.aiter, "rev-parse", "HEAD~1") == aiter.later
    assert git(split.ck, "rev-parse", "HEAD~2") == aiter.ck_pin
    assert _verify(run_qola, split) == (0, [])
