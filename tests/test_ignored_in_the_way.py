"""Ignored files of the user's where the new pin tracks files: local work, never lost.

The dependency ignores `config.h`, `build/` and `gen`; the user keeps local settings in
`config.h`, build output in `build/`, a generated file at `gen`; the new pin tracks
`config.h`, a file `build` and `gen/out.h`. git's checkout writes over all three without
asking (they are ignored). qola refuses (exit 4), names them and changes nothing; with
--force it keeps them under refs/qola/backup/ and the printed command brings them back,
byte for byte. The same in a nested submodule, through bump, after a kill, with a patch
series, and for a repository whose first checkout never finished.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import gitpause
import pytest
from repos import commit_file, git, head, init_repo, snapshot, without_noop_stamps

from qola.repo import store

MINE = {"config.h": b"#define MY_LOCAL_SETTING 1\n", "build/x.o": b"\x7fELF my object\n",
        "gen": b"my generated file\n"}  # fmt: skip
IGNORES = "config.h\nbuild/\ngen\n"


@dataclass(frozen=True)
class Upstreams:
    lib: Path
    v1: str  # ignores config.h, build/, gen
    v2: str  # tracks config.h, a file `build`, gen/out.h (still ignored by .gitignore)
    outer: Path  # a library whose nested submodule is lib
    outer_v1: str  # lib at v1
    outer_v2: str  # lib at v2


def _track_the_ignored(repo: Path) -> str:
    (repo / "config.h").write_text("#define UPSTREAM 1\n")
    (repo / "build").write_text("the build script\n")
    (repo / "gen").mkdir()
    (repo / "gen" / "out.h").write_text("generated upstream\n")
    git(repo, "add", "-f", "config.h", "build", "gen/out.h")
    git(repo, "commit", "-q", "-m", "track what was ignored")
    return head(repo)


@pytest.fixture(scope="module")
def ups(tmp_path_factory: pytest.TempPathFactory) -> Upstreams:
    base = tmp_path_factory.mktemp("ignoring")
    lib = init_repo(base / "lib")
    commit_file(lib, "a.c", "int a;\n")
    v1 = commit_file(lib, ".gitignore", IGNORES, "ignore local files")
    v2 = _track_the_ignored(lib)
    outer = init_repo(base / "outer")
    commit_file(outer, "README", "outer\n")
    git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "ext/lib")
    git(outer, "-C", "ext/lib", "checkout", "-q", v1)
    git(outer, "add", "ext/lib")
    git(outer, "commit", "-q", "-m", "lib at v1")
    outer_v1 = head(outer)
    git(outer, "-C", "ext/lib", "checkout", "-q", v2)
    git(outer, "add", "ext/lib")
    git(outer, "commit", "-q", "-m", "lib at v2")
    return Upstreams(lib, v1, v2, outer, outer_v1, head(outer))


@dataclass(frozen=True)
class Project:
    root: Path
    name: str

    @property
    def manifest(self) -> Path:
        return self.root / "qola.toml"

    @property
    def dep(self) -> Path:
        return self.root / "3rdparty" / self.name

    def pin(self, old: str, new: str) -> None:
        self.manifest.write_text(self.manifest.read_text().replace(old, new))


def project(root: Path, name: str, url: Path, pin: str, run_qola, extra: str = "") -> Project:
    init_repo(root)
    p = Project(root, name)
    p.manifest.write_text(f'[deps.{name}]\npath = "3rdparty/{name}"\nurl = "{url}"\n'
                          f'commit = "{pin}"\n{extra}')  # fmt: skip
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "pins")
    res = run_qola("checkout", "-q", "-m", str(p.manifest))
    assert res.exit_code == 0, res.stderr
    return p


def write_mine(tree: Path) -> None:
    for path, data in MINE.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_bytes(data)
    listed = git(tree, "status", "--porcelain", "--ignored", "--untracked-files=all")
    assert sorted(listed.splitlines()) == ["!! build/x.o", "!! config.h", "!! gen"]


def assert_mine(tree: Path) -> None:
    for path, data in MINE.items():
        assert (tree / path).read_bytes() == data, path


def work_trees_and_refs(root: Path) -> dict[str, str]:
    """A snapshot less what a fetch adds to a git dir (objects, FETCH_HEAD, shallow)."""
    fetched = ("/objects/", "/FETCH_HEAD", "/shallow")
    return {k: v for k, v in without_noop_stamps(snapshot(root)).items()
            if not any(part in "/" + k for part in fetched)}  # fmt: skip


def refused_lines(label: str, target: str) -> list[str]:
    return [f"  in the way: {label}/{path} (ignored: checking out {target[:12]} would write "
            "over it)" for path in sorted(MINE)]  # fmt: skip


def restore_by_the_printed_command(stderr: str, tree: Path) -> None:
    [command] = re.findall(rf"restore with: (git -C {re.escape(str(tree))} restore [^\n]+)",
                           stderr)  # fmt: skip
    subprocess.run(shlex.split(command), check=True, capture_output=True)


@pytest.fixture
def behind(tmp_path: Path, ups: Upstreams, run_qola) -> Project:
    """lib checked out at v1 with the user's ignored files; the manifest now pins v2
    (already fetched into lib, so that a refusal changes nothing at all)."""
    p = project(tmp_path / "project", "lib", ups.lib, ups.v1, run_qola)
    git(p.dep, "fetch", "-q", str(ups.lib), ups.v2)
    write_mine(p.dep)
    p.pin(ups.v1, ups.v2)
    return p


def test_checkout_refuses_over_ignored_files_the_pin_tracks_and_changes_nothing(
    behind, ups, run_qola
):
    before = snapshot(behind.root)
    res = run_qola("checkout", "-m", str(behind.manifest))
    assert res.exit_code == 4, res.stderr
    lines = res.stderr.splitlines()
    assert f"qola: lib: moving 3rdparty/lib to {ups.v2[:12]} would lose local work:" in lines
    assert [line for line in lines if "in the way:" in line] == refused_lines("3rdparty/lib",
                                                                               ups.v2)  # fmt: skip
    assert (f"  git -C {behind.dep} stash push --all -m 'before qola' -- build/x.o config.h gen"
            "  # the ignored files in the way") in lines  # fmt: skip
    assert without_noop_stamps(snapshot(behind.root)) == without_noop_stamps(before)
    assert head(behind.dep) == ups.v1
    assert_mine(behind.dep)


def test_the_refusal_comes_before_anything_moves_when_the_pin_must_be_fetched(
    tmp_path, ups, run_qola
):
    p = project(tmp_path / "project", "lib", ups.lib, ups.v1, run_qola)
    write_mine(p.dep)
    p.pin(ups.v1, ups.v2)
    before = work_trees_and_refs(p.root)
    res = run_qola("checkout", "-m", str(p.manifest))
    assert res.exit_code == 4, res.stderr
    assert "  in the way: 3rdparty/lib/config.h (ignored: " in res.stderr
    assert work_trees_and_refs(p.root) == before
    assert not (p.dep / ".git" / "qola" / "moving").exists()
    assert_mine(p.dep)


def test_force_keeps_the_ignored_files_and_the_printed_command_brings_them_back(
    behind, ups, run_qola
):
    res = run_qola("checkout", "--force", "-m", str(behind.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(behind.dep) == ups.v2
    assert (behind.dep / "config.h").read_text() == "#define UPSTREAM 1\n"
    assert (behind.dep / "build").read_text() == "the build script\n"
    assert (behind.dep / "gen" / "out.h").read_text() == "generated upstream\n"
    [ref] = git(behind.dep, "for-each-ref", "--format=%(refname)",
                store.backup_prefix("lib")).split()  # fmt: skip
    assert ref.endswith("-in-the-way")
    assert (f"qola: lib: saved the ignored files in the way of {ups.v2[:12]} in 3rdparty/lib "
            f"(build/x.o, config.h, gen) as {ref}; restore with: git -C {behind.dep} restore "
            f"--source={ref} --worktree -- build/x.o config.h gen\n") in res.stderr  # fmt: skip
    restore_by_the_printed_command(res.stderr, behind.dep)
    assert_mine(behind.dep)


def test_many_ignored_files_are_named_a_few_and_counted(behind, ups, run_qola):
    for i in range(12):
        (behind.dep / "build" / f"obj{i:02}.o").write_bytes(b"object %d\n" % i)
    res = run_qola("checkout", "-m", str(behind.manifest))
    assert res.exit_code == 4, res.stderr
    shown = [line for line in res.stderr.splitlines() if line.startswith("  in the way: ")]
    assert len(shown) == 5
    assert "  and 10 more ignored files in the way in 3rdparty/lib\n" in res.stderr
    forced = run_qola("checkout", "--force", "-m", str(behind.manifest))
    assert forced.exit_code == 0, forced.stderr
    [command] = re.findall(r"restore with: (git -C \S+ ls-tree [^\n]+)", forced.stderr)
    subprocess.run(command, shell=True, check=True)
    assert_mine(behind.dep)
    assert (behind.dep / "build" / "obj11.o").read_bytes() == b"object 11\n"


def test_bump_refuses_over_ignored_files_and_writes_no_pin(tmp_path, ups, run_qola):
    p = project(tmp_path / "project", "lib", ups.lib, ups.v1, run_qola, 'track = "main"\n')
    git(p.dep, "fetch", "-q", str(ups.lib), ups.v2)
    write_mine(p.dep)
    manifest = p.manifest.read_text()
    res = run_qola("bump", "lib", "--to", ups.v2, "-m", str(p.manifest))
    assert res.exit_code == 4, res.stderr
    assert "  in the way: 3rdparty/lib/config.h (ignored: " in res.stderr
    assert p.manifest.read_text() == manifest
    assert head(p.dep) == ups.v1
    assert_mine(p.dep)


def test_a_patch_series_that_adds_an_ignored_file_refuses(tmp_path, ups, run_qola):
    """The series (not the pin) adds config.h: the checkout of pin + series would write
    over the user's."""
    patches = tmp_path / "project" / "patches"
    patches.mkdir(parents=True)
    (patches / "0001-config.patch").write_text(
        "--- /dev/null\n+++ b/config.h\n@@ -0,0 +1 @@\n+#define PATCHED 1\n"
    )
    p = project(tmp_path / "project", "lib", ups.lib, ups.v1, run_qola)
    (p.dep / "config.h").write_bytes(MINE["config.h"])
    p.manifest.write_text(p.manifest.read_text() + 'patches = "patches"\n')
    res = run_qola("checkout", "-m", str(p.manifest))
    assert res.exit_code == 4, res.stderr
    assert "  in the way: 3rdparty/lib/config.h (ignored: checking out " in res.stderr
    assert head(p.dep) == ups.v1
    assert (p.dep / "config.h").read_bytes() == MINE["config.h"]


def _nested_series_adding_config(tmp_path: Path, ups: Upstreams, run_qola) -> Project:
    """outer at v1 (its nested lib at v1, which ignores config.h, where the user keeps
    settings); then a patch series for the nested lib that adds config.h."""
    p = project(tmp_path / "project", "outer", ups.outer, ups.outer_v1, run_qola)
    (p.dep / "ext" / "lib" / "config.h").write_bytes(MINE["config.h"])
    patches = p.root / "patches" / "ext" / "lib"
    patches.mkdir(parents=True)
    (patches / "0001-config.patch").write_text(
        "--- /dev/null\n+++ b/config.h\n@@ -0,0 +1 @@\n+#define PATCHED 1\n"
    )
    p.manifest.write_text(p.manifest.read_text() + 'patches = "patches"\n')
    return p


def test_a_nested_patch_series_that_adds_an_ignored_file_refuses(tmp_path, ups, run_qola):
    """The dependency stays; only its nested submodule's series would check config.h out
    (it had written over the user's with exit 0)."""
    p = _nested_series_adding_config(tmp_path, ups, run_qola)
    nested = p.dep / "ext" / "lib"
    res = run_qola("checkout", "-m", str(p.manifest))
    assert res.exit_code == 4, res.stderr
    assert "  in the way: 3rdparty/outer/ext/lib/config.h (ignored: checking out " in res.stderr
    assert head(nested) == ups.v1
    assert (nested / "config.h").read_bytes() == MINE["config.h"]
    again = run_qola("checkout", "-m", str(p.manifest))  # and so on every run: no fast path
    assert again.exit_code == 4, again.stderr


def test_a_nested_patch_series_with_force_keeps_the_ignored_file(tmp_path, ups, run_qola):
    p = _nested_series_adding_config(tmp_path, ups, run_qola)
    nested = p.dep / "ext" / "lib"
    res = run_qola("checkout", "--force", "-m", str(p.manifest))
    assert res.exit_code == 0, res.stderr
    assert (nested / "config.h").read_text() == "#define PATCHED 1\n"
    restore_by_the_printed_command(res.stderr, nested)
    assert (nested / "config.h").read_bytes() == MINE["config.h"]


@pytest.mark.parametrize("force", [False, True])
def test_a_repository_of_the_users_in_an_ignored_folder_the_pin_tracks_refuses(
    tmp_path, ups, run_qola, force
):
    """The user's own repository at gen/ (ignored); the new pin tracks gen/out.h: git's
    checkout wrote into that repository's work tree with exit 0, its edit lost."""
    p = project(tmp_path / "project", "lib", ups.lib, ups.v1, run_qola)
    git(p.dep, "fetch", "-q", str(ups.lib), ups.v2)
    mine = init_repo(p.dep / "gen")
    commit_file(mine, "out.h", "committed by me\n")
    (mine / "out.h").write_text("my uncommitted edit\n")
    p.pin(ups.v1, ups.v2)
    before = work_trees_and_refs(p.root)
    res = run_qola("checkout", *(["--force"] if force else []), "-m", str(p.manifest))
    assert res.exit_code == 4, res.stderr
    if force:
        assert "3rdparty/lib/gen is a repository, ignored, in the way of " in res.stderr
    else:
        assert (f"  in the way: 3rdparty/lib/gen (a repository: checking out {ups.v2[:12]} "
                "would write into its files)") in res.stderr  # fmt: skip
        assert f"  mv {p.dep / 'gen'} {p.dep / 'gen'}.mine" in res.stderr
    assert head(p.dep) == ups.v1
    assert (mine / "out.h").read_text() == "my uncommitted edit\n"
    assert work_trees_and_refs(p.root) == before


def test_force_over_an_ignored_link_leading_outside_keeps_the_link_and_what_it_leads_to(
    behind, ups, tmp_path, run_qola
):
    """gen, ignored, is a link to a folder of the user's outside the project: --force
    keeps the link itself, never what is behind it."""
    (behind.dep / "gen").unlink()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "out.h").write_text("my data\n")
    (behind.dep / "gen").symlink_to(outside)
    res = run_qola("checkout", "--force", "-m", str(behind.manifest))
    assert res.exit_code == 0, res.stderr
    assert (outside / "out.h").read_text() == "my data\n"  # untouched
    assert not (behind.dep / "gen").is_symlink()
    assert (behind.dep / "gen" / "out.h").read_text() == "generated upstream\n"


def test_a_file_only_the_users_global_excludes_file_ignores_is_in_the_way(
    tmp_path, ups, run_qola
):
    """my.cfg is ignored by nothing in the repository, only by the user's own
    core.excludesFile; the new pin tracks it (git writes over it silently all the same)."""
    p = project(tmp_path / "project", "lib", ups.lib, ups.v1, run_qola)
    lib = init_repo(tmp_path / "lib")  # lib's v2 plus a tracked my.cfg
    git(lib, "fetch", "-q", str(ups.lib), ups.v2)
    git(lib, "checkout", "-q", "--detach", ups.v2)
    v3 = commit_file(lib, "my.cfg", "upstream settings\n")
    git(p.dep, "fetch", "-q", str(lib), v3)
    excludes = tmp_path / "excludes"
    excludes.write_text("my.cfg\n")
    config = tmp_path / "global.gitconfig"
    config.write_text(Path(os.environ["GIT_CONFIG_GLOBAL"]).read_text()
                      + f"[core]\n\texcludesFile = {excludes}\n")  # fmt: skip
    (p.dep / "my.cfg").write_text("my settings\n")
    p.pin(ups.v1, v3)
    res = run_qola("checkout", "-m", str(p.manifest), env={"GIT_CONFIG_GLOBAL": str(config)})
    assert res.exit_code == 4, res.stderr
    assert "  in the way: 3rdparty/lib/my.cfg (ignored: checking out " in res.stderr
    assert (p.dep / "my.cfg").read_text() == "my settings\n"
    assert head(p.dep) == ups.v1


def test_a_first_checkout_never_finished_does_not_force_over_ignored_files(
    behind, ups, run_qola
):
    """No index (a checkout git or a killed run never finished): qola finishes such a
    tree with checkout -f, which would write over anything in the way."""
    (behind.dep / ".git" / "index").unlink()
    before = snapshot(behind.root)
    res = run_qola("checkout", "-m", str(behind.manifest))
    assert res.exit_code == 4, res.stderr
    assert [line for line in res.stderr.splitlines() if "in the way:" in line] == (
        refused_lines("3rdparty/lib", ups.v2)
    )
    assert without_noop_stamps(snapshot(behind.root)) == without_noop_stamps(before)
    assert_mine(behind.dep)


@pytest.fixture
def nested_behind(tmp_path: Path, ups: Upstreams, run_qola) -> Project:
    """outer at v1 (its nested lib at v1, with the user's ignored files in it); the manifest
    now pins outer v2, whose gitlink moves lib to v2."""
    p = project(tmp_path / "project", "outer", ups.outer, ups.outer_v1, run_qola)
    write_mine(p.dep / "ext" / "lib")
    p.pin(ups.outer_v1, ups.outer_v2)
    return p


def test_a_nested_submodule_refuses_before_its_parent_moves(nested_behind, ups, run_qola):
    nested = nested_behind.dep / "ext" / "lib"
    before = work_trees_and_refs(nested_behind.root)
    res = run_qola("checkout", "-m", str(nested_behind.manifest))
    assert res.exit_code == 4, res.stderr
    assert [line for line in res.stderr.splitlines() if "in the way:" in line] == (
        refused_lines("3rdparty/outer/ext/lib", ups.v2)
    )
    assert head(nested_behind.dep) == ups.outer_v1  # the parent did not move either
    assert work_trees_and_refs(nested_behind.root) == before
    assert_mine(nested)


def test_a_nested_submodule_with_force_keeps_them_under_its_backup(nested_behind, ups, run_qola):
    nested = nested_behind.dep / "ext" / "lib"
    res = run_qola("checkout", "--force", "-m", str(nested_behind.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(nested) == ups.v2
    [ref] = git(nested, "for-each-ref", "--format=%(refname)",
                store.backup_prefix("outer") + "ext/lib/").split()  # fmt: skip
    assert ref.endswith("-in-the-way")
    restore_by_the_printed_command(res.stderr, nested)
    assert_mine(nested)


def test_a_kill_before_the_checkout_keeps_the_ignored_files_for_the_repair(
    tmp_path, ups, run_qola
):
    """Killed between the fetch and git's checkout; the next run repairs the move without
    --force: the ignored files are kept first (they are not the pin's) and restorable."""
    p = project(tmp_path / "project", "lib", ups.lib, ups.v1, run_qola)
    p.pin(ups.v1, ups.v2)
    wrapper = gitpause.make(tmp_path / "wrapper")
    killed, paused = gitpause.run_until(wrapper, 0, "checkout", "-m", str(p.manifest),
                                        pause_on="checkout -q --detach")  # fmt: skip
    assert killed and "checkout -q --detach" in paused
    write_mine(p.dep)  # since the kill
    res = run_qola("checkout", "-m", str(p.manifest))
    assert res.exit_code == 0, res.stderr
    assert "an earlier run did not finish moving 3rdparty/lib; finishing its work" in res.stderr
    assert head(p.dep) == ups.v2
    assert (p.dep / "config.h").read_text() == "#define UPSTREAM 1\n"
    restore_by_the_printed_command(res.stderr, p.dep)
    assert_mine(p.dep)


def test_a_nested_repository_with_no_commit_yet_keeps_an_ignored_file_there(
    pinned_by_qola, run_qola
):
    """The first checkout into a nested folder that already holds files: its repository
    has no commit (HEAD unborn, no index) and an ignored file of the user's at a path the
    gitlink tracks. git's plain checkout writes over it; qola refuses (exit 4)."""
    nested = pinned_by_qola.nested
    gitdir = Path(git(nested, "rev-parse", "--absolute-git-dir"))
    git(nested, "symbolic-ref", "HEAD", "refs/heads/unborn")
    (gitdir / "index").unlink()
    for child in nested.iterdir():
        if child.name != ".git":
            child.unlink()
    (gitdir / "info").mkdir(exist_ok=True)
    (gitdir / "info" / "exclude").write_text("nested.txt\n")
    (nested / "nested.txt").write_bytes(MINE["config.h"])
    res = run_qola("checkout", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 4, res.stderr
    assert "  in the way: 3rdparty/lib/extern/nested/nested.txt (ignored: checking out " in (
        res.stderr
    )
    assert (nested / "nested.txt").read_bytes() == MINE["config.h"]
    forced = run_qola("checkout", "--force", "-m", str(pinned_by_qola.manifest))
    assert forced.exit_code == 0, forced.stderr
    restore_by_the_printed_command(forced.stderr, nested)
    assert (nested / "nested.txt").read_bytes() == MINE["config.h"]


def test_the_backup_commit_is_never_signed_whatever_the_dependencys_config_says(
    behind, ups, run_qola, tmp_path, monkeypatch
):
    """The backup is qola's own commit: a dependency's commit.gpgSign must not make it
    ask the user's signing program (their key) to sign what the dependency holds."""
    marks = tmp_path / "marks"
    marks.mkdir()
    program = tmp_path / "my-gpg"
    program.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(marks / 'signed'))}\nexit 1\n")
    program.chmod(0o755)
    config = tmp_path / "user.gitconfig"
    config.write_text(Path(os.environ["GIT_CONFIG_GLOBAL"]).read_text()
                      + f"[gpg]\n\tprogram = {program}\n")  # fmt: skip
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    git(behind.dep, "config", "commit.gpgSign", "true")
    res = run_qola("checkout", "--force", "-m", str(behind.manifest))
    assert res.exit_code == 0, res.stderr
    assert list(marks.iterdir()) == []
    [ref] = git(behind.dep, "for-each-ref", "--format=%(refname)",
                store.backup_prefix("lib")).split()  # fmt: skip
    assert "gpgsig" not in git(behind.dep, "cat-file", "commit", ref)
