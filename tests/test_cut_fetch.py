"""A fetch cut short after the commit arrived, before all of its files did: never success.

git unpacks a small fetch (fewer than 100 objects) into loose objects as they arrive, the
commit first. A server that stalls mid-pack (a loopback proxy, tests/servers.py) holds the
fetch at a known point: the commit is there, most files are not. The run is then killed
(SIGKILL of its process group), or the connection dropped, or the disk fills (a small
tmpfs); the next run must fetch what is missing and check every file out, and no fast
path may call the tree up to date before it has.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import procs
import pytest
import servers
from repos import commit_file, git, head, init_repo

FILES = 60  # random 3 KiB files the new commit adds: some 190 KB of pack, 62 objects
# Bytes the stalling server sends, up to the next pkt-line boundary (servers.PktCut): every
# side-band packet that starts before it arrives whole (the commit, its tree, some files),
# and a packet holds at most 65,520 bytes, so at most some 115 KB of the pack arrive.
LIMIT = 50_000


@dataclass(frozen=True)
class Bulky:
    """Repositories served by a git daemon: lib, and nested (lib's submodule in lib2)."""

    base: Path  # the daemon's base folder
    port: int
    lib_v1: str
    lib_v2: str  # adds FILES files
    nested_v1: str
    nested_v2: str  # adds FILES files
    lib2_v1: str  # nested at nested_v1
    lib2_v2: str  # nested at nested_v2, and one small file changed


def _random_files(repo: Path, message: str) -> str:
    for i in range(FILES):
        (repo / "data").mkdir(exist_ok=True)
        (repo / "data" / f"f{i:02}.bin").write_bytes(os.urandom(3072))
    git(repo, "add", "data")
    git(repo, "commit", "-q", "-m", message)
    return head(repo)


@pytest.fixture(scope="module")
def bulky(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bulky]:
    base = tmp_path_factory.mktemp("served")
    work = tmp_path_factory.mktemp("work")
    lib = init_repo(work / "lib")
    lib_v1 = commit_file(lib, "README", "lib\n")
    lib_v2 = _random_files(lib, "many files")
    nested = init_repo(work / "nested")
    nested_v1 = commit_file(nested, "nested.txt", "nested\n")
    nested_v2 = _random_files(nested, "many nested files")
    lib2 = init_repo(work / "lib2")
    commit_file(lib2, "README", "lib2\n")
    git(lib2, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(nested),
        "extern/nested")  # fmt: skip
    git(lib2, "-C", "extern/nested", "checkout", "-q", nested_v1)
    git(lib2, "config", "-f", ".gitmodules", "submodule.extern/nested.url", "../nested.git")
    git(lib2, "add", ".gitmodules", "extern/nested")
    git(lib2, "commit", "-q", "-m", "nested at v1")
    lib2_v1 = head(lib2)
    git(lib2, "-C", "extern/nested", "checkout", "-q", nested_v2)
    git(lib2, "add", "extern/nested")
    lib2_v2 = commit_file(lib2, "README", "lib2, nested at v2\n")
    for name, repo in (("lib", lib), ("nested", nested), ("lib2", lib2)):
        git(base, "clone", "-q", "--bare", str(repo), f"{name}.git")
    with servers.git_daemon(base) as port:
        yield Bulky(base, port, lib_v1, lib_v2, nested_v1, nested_v2, lib2_v1, lib2_v2)


@pytest.fixture
def proxy(bulky: Bulky) -> Iterator[servers.StallingProxy]:
    stalling = servers.StallingProxy(bulky.port, None)
    try:
        yield stalling
    finally:
        stalling.close()


@dataclass(frozen=True)
class Tree:
    root: Path
    name: str  # lib or lib2

    @property
    def manifest(self) -> Path:
        return self.root / "qola.toml"

    @property
    def dep(self) -> Path:
        return self.root / "3rdparty" / self.name

    def pin(self, sha: str) -> None:
        text = self.manifest.read_text()
        start = text.index('commit = "') + len('commit = "')
        self.manifest.write_text(text[:start] + sha + text[start + 40 :])


def checked_out(root: Path, name: str, port: int, pin: str) -> Tree:
    """A project whose manifest pins name (served at port) at pin, checked out by qola."""
    init_repo(root)
    tree = Tree(root, name)
    url = f"git://127.0.0.1:{port}/{name}.git"
    tree.manifest.write_text(
        f'[deps.{name}]\npath = "3rdparty/{name}"\nurl = "{url}"\ncommit = "{pin}"\n'
    )
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "pins")
    first = procs.run("checkout", "-m", str(tree.manifest))
    assert first.returncode == 0, first.stderr
    return tree


def loose(repo_gitdir: Path, sha: str) -> Path:
    return repo_gitdir / "objects" / sha[:2] / sha[2:]


def missing_objects(repo: Path, sha: str) -> list[str]:
    out = subprocess.run(["git", "rev-list", "--objects", "--no-walk", "--missing=print", sha],
                         cwd=repo, capture_output=True, text=True, check=True).stdout  # fmt: skip
    return [line for line in out.splitlines() if line.startswith("?")]


def kill_mid_fetch(tree: Tree, proxy: servers.StallingProxy, objects: Path, sha: str) -> None:
    """Run checkout, and SIGKILL its process group once the stalled fetch has written the
    commit sha (a loose object below objects) and waits for the rest."""
    proxy.limit = LIMIT
    proc = procs.start("checkout", "-m", str(tree.manifest))
    try:
        procs.wait_for(lambda: (proxy.held.is_set() and loose(objects, sha).is_file())
                       or proc.poll() is not None, what="the commit, then the stall")  # fmt: skip
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        _, stderr = proc.communicate()
    assert proc.returncode == -signal.SIGKILL, stderr
    proxy.limit = None  # the server is back


def whole(repo: Path) -> bool:
    """Every tracked file there, as git wrote it (nothing missing or changed, nothing staged)."""
    return git(repo, "status", "--porcelain", "--untracked-files=no") == ""


def noop_says_up_to_date(tree: Tree) -> bool:
    """What the no-op path (no git on PATH: it must answer from files, or step aside and
    fail) says: True when it claimed the tree is at its pins."""
    bare = tree.root.parent / "no-git"
    bare.mkdir(exist_ok=True)
    proc = procs.run("checkout", "-m", str(tree.manifest), env={"PATH": str(bare)})
    return proc.returncode == 0 and "up to date" in proc.stdout


def test_a_kill_while_the_fetch_unpacks_is_finished_by_the_next_run(tmp_path, bulky, proxy):
    """The issue's case: killed with the commit in, 40-odd files not. The next run said
    "finishing its work ... up to date" (exit 0) with the files missing."""
    tree = checked_out(tmp_path / "project", "lib", proxy.port, bulky.lib_v1)
    tree.pin(bulky.lib_v2)
    kill_mid_fetch(tree, proxy, tree.dep / ".git", bulky.lib_v2)
    assert missing_objects(tree.dep, bulky.lib_v2)  # the commit arrived, not all its files
    assert head(tree.dep) == bulky.lib_v1
    assert not noop_says_up_to_date(tree)

    rerun = procs.run("checkout", "-m", str(tree.manifest))
    assert rerun.returncode == 0, rerun.stderr
    assert "an earlier run did not finish moving 3rdparty/lib; finishing its work" in rerun.stderr
    assert head(tree.dep) == bulky.lib_v2
    assert whole(tree.dep)
    assert len(list((tree.dep / "data").iterdir())) == FILES
    assert missing_objects(tree.dep, bulky.lib_v2) == []
    assert procs.run("verify", "--strict", "-m", str(tree.manifest)).returncode == 0
    assert noop_says_up_to_date(tree)  # and from now on the fast path answers


def test_a_dropped_connection_mid_pack_is_fetched_again_by_the_next_run(tmp_path, bulky):
    """No kill: the server drops the connection mid-pack, the run fails (exit 3) having
    written the commit; the next run must not take it for present."""
    cutting = servers.CuttingProxy(bulky.port, LIMIT)
    try:
        tree = checked_out(tmp_path / "project", "lib", bulky.port, bulky.lib_v1)
        text = tree.manifest.read_text().replace(str(bulky.port), str(cutting.port))
        tree.manifest.write_text(text)
        tree.pin(bulky.lib_v2)
        failed = procs.run("checkout", "-m", str(tree.manifest))
        assert failed.returncode == 3, failed.stderr
        assert "early EOF" in failed.stderr
        assert missing_objects(tree.dep, bulky.lib_v2)
        assert head(tree.dep) == bulky.lib_v1
    finally:
        cutting.close()
    tree.manifest.write_text(tree.manifest.read_text().replace(str(cutting.port), str(bulky.port)))
    rerun = procs.run("checkout", "-v", "-m", str(tree.manifest))
    assert rerun.returncode == 0, rerun.stderr
    assert head(tree.dep) == bulky.lib_v2 and whole(tree.dep)
    assert "is present locally: no fetch" not in rerun.stderr
    assert procs.run("verify", "--strict", "-m", str(tree.manifest)).returncode == 0


def test_a_kill_while_a_nested_fetch_unpacks_is_finished_by_the_next_run(tmp_path, bulky, proxy):
    """The same inside a nested submodule: lib2's new commit arrives (a small fetch), then
    its nested submodule's fetch of 60 files is cut after its commit arrived (before lib2
    moves: what a nested checkout would write over is looked at first)."""
    tree = checked_out(tmp_path / "project", "lib2", proxy.port, bulky.lib2_v1)
    nested = tree.dep / "extern" / "nested"
    tree.pin(bulky.lib2_v2)
    kill_mid_fetch(tree, proxy, tree.dep / ".git" / "modules" / "extern" / "nested",
                   bulky.nested_v2)  # fmt: skip
    assert head(tree.dep) in (bulky.lib2_v1, bulky.lib2_v2)  # (qola fetches it before moving)
    assert missing_objects(nested, bulky.nested_v2)
    assert not noop_says_up_to_date(tree)

    rerun = procs.run("checkout", "-m", str(tree.manifest))
    assert rerun.returncode == 0, rerun.stderr
    assert head(nested) == bulky.nested_v2
    assert whole(tree.dep) and whole(nested)
    assert len(list((nested / "data").iterdir())) == FILES
    assert procs.run("verify", "--strict", "-m", str(tree.manifest)).returncode == 0


def test_a_dropped_connection_in_a_nested_fetch_is_fetched_again(tmp_path, bulky, proxy):
    tree = checked_out(tmp_path / "project", "lib2", proxy.port, bulky.lib2_v1)
    nested = tree.dep / "extern" / "nested"
    tree.pin(bulky.lib2_v2)
    proxy.limit = LIMIT
    proc = procs.start("checkout", "-m", str(tree.manifest))
    objects = tree.dep / ".git" / "modules" / "extern" / "nested"
    stalled = lambda: proxy.held.is_set() and loose(objects, bulky.nested_v2).is_file()  # noqa: E731
    procs.wait_for(lambda: stalled() or proc.poll() is not None, what="the nested commit")
    proxy.limit = None
    proxy.close()  # the server goes away mid-pack: the fetch fails, the run goes on
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 3, stderr
    assert missing_objects(nested, bulky.nested_v2)
    again = servers.StallingProxy(bulky.port, None)
    try:
        text = tree.manifest.read_text().replace(str(proxy.port), str(again.port))
        tree.manifest.write_text(text)
        # The nested URL is relative to lib2's origin, which names the old port.
        git(tree.dep, "remote", "set-url", "origin", f"git://127.0.0.1:{again.port}/lib2.git")
        rerun = procs.run("checkout", "-m", str(tree.manifest))
        assert rerun.returncode == 0, rerun.stderr
    finally:
        again.close()
    assert head(nested) == bulky.nested_v2 and whole(nested)
    assert procs.run("verify", "--strict", "-m", str(tree.manifest)).returncode == 0


# ------------------------------------------------------------------- a full disk


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs for the project: the tests fill it to a chosen number of bytes."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)],
                             capture_output=True, text=True, check=False)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """A file that leaves `leave` bytes free on disk; remove it to free the space."""
    filler = disk / "filler"
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    with filler.open("wb") as handle:
        handle.truncate(0)
        handle.write(b"\0" * max(0, free - leave))
    return filler


@pytest.mark.parametrize("leave", [12_288, 40_960], ids=["commit-only", "commit-and-some-files"])
def test_a_fetch_a_full_disk_cut_never_leaves_head_on_a_commit_it_cannot_check_out(
    leave, small_disk, bulky
):
    """The disk fills while git unpacks: the commit is written, its tree or files are not.
    The old code's next run (disk still full) moved HEAD onto that commit, and every run
    after it failed on "bad tree object HEAD"; or, with the disk freed, said checked out
    with the files missing."""
    tree = checked_out(small_disk / "project", "lib", bulky.port, bulky.lib_v1)
    tree.pin(bulky.lib_v2)
    filler = fill(small_disk, leave)
    first = procs.run("checkout", "-m", str(tree.manifest))
    assert first.returncode == 3, first.stderr
    assert "No space left on device" in first.stderr
    assert (tree.dep / ".git" / "objects" / bulky.lib_v2[:2] / bulky.lib_v2[2:]).is_file()
    again = procs.run("checkout", "-m", str(tree.manifest))  # the disk still full
    assert again.returncode == 3, again.stderr
    assert head(tree.dep) == bulky.lib_v1 and whole(tree.dep)
    filler.unlink()
    freed = procs.run("checkout", "-m", str(tree.manifest))
    assert freed.returncode == 0, freed.stderr
    assert head(tree.dep) == bulky.lib_v2 and whole(tree.dep)
    assert len(list((tree.dep / "data").iterdir())) == FILES
    assert procs.run("verify", "--strict", "-m", str(tree.manifest)).returncode == 0


def test_a_checkout_a_full_disk_cut_is_finished_by_the_next_run(small_disk, bulky):
    """Room for the objects, not for the files: git writes some, then fails on the index.
    The files it wrote made every later run fail (untracked files in the way of the pin)
    although the hint promised that what was half-written is redone. The move stays
    recorded; no fast path calls the tree up to date; the run after the space is freed
    clears what git wrote and checks out."""
    tree = checked_out(small_disk / "project", "lib", bulky.port, bulky.lib_v1)
    tree.pin(bulky.lib_v2)
    filler = fill(small_disk, 300 * 1024)  # the loose objects, and a few files
    first = procs.run("checkout", "-m", str(tree.manifest))
    assert first.returncode == 3, first.stderr
    assert f"qola: lib: the checkout of 3rdparty/lib at {bulky.lib_v2[:12]} did not finish " in (
        first.stderr
    )
    assert "the cause: No space left on device" in first.stderr
    assert 0 < len(list((tree.dep / "data").iterdir())) < FILES  # git wrote some
    assert not noop_says_up_to_date(tree)
    filler.unlink()
    freed = procs.run("checkout", "-m", str(tree.manifest))
    assert freed.returncode == 0, freed.stderr
    assert "an earlier run did not finish moving 3rdparty/lib; finishing its work" in freed.stderr
    assert head(tree.dep) == bulky.lib_v2 and whole(tree.dep)
    assert len(list((tree.dep / "data").iterdir())) == FILES
    assert procs.run("verify", "--strict", "-m", str(tree.manifest)).returncode == 0
    assert noop_says_up_to_date(tree)


def test_files_git_left_unwritten_with_exit_0_fail_the_checkout_until_a_run_finishes_it(
    tmp_path, bulky
):
    """A file of the pin that goes from the object store between qola's check and git's
    checkout (a wrapper in front of git removes it): git checks out with exit 0 and the
    file unwritten. That is exit 3, the move stays recorded, and the next run (the object
    is fetched again) finishes it."""
    tree = checked_out(tmp_path / "project", "lib", bulky.port, bulky.lib_v1)
    tree.pin(bulky.lib_v2)
    url = f"git://127.0.0.1:{bulky.port}/lib.git"
    git(tree.dep, "fetch", "-q", "--depth", "1", url, bulky.lib_v2)  # 62 loose objects
    blob = git(tree.dep, "rev-parse", f"{bulky.lib_v2}:data/f07.bin")
    assert loose(tree.dep / ".git", blob).is_file()
    wrapper = tmp_path / "wrapper"
    wrapper.mkdir()
    real = shutil.which("git")
    (wrapper / "git").write_text(
        "#!/bin/sh\n"
        f'case " $* " in *" checkout "*" {bulky.lib_v2} "*) '
        f'rm -f "{loose(tree.dep / ".git", blob)}";; esac\n'
        f'exec "{real}" "$@"\n'
    )
    (wrapper / "git").chmod(0o755)
    first = procs.run("checkout", "-m", str(tree.manifest),
                      env={"PATH": f"{wrapper}{os.pathsep}{os.environ['PATH']}"})  # fmt: skip
    assert first.returncode == 3, first.stderr
    assert (f"qola: lib: the checkout of 3rdparty/lib at {bulky.lib_v2[:12]} did not finish: "
            "1 tracked file missing (data/f07.bin); git said:\n    error: ") in first.stderr
    assert blob in first.stderr
    assert head(tree.dep) == bulky.lib_v2  # git moved HEAD, exit 0
    assert not noop_says_up_to_date(tree)
    rerun = procs.run("checkout", "-m", str(tree.manifest))
    assert rerun.returncode == 0, rerun.stderr
    assert "an earlier run did not finish moving 3rdparty/lib; finishing its work" in rerun.stderr
    assert whole(tree.dep) and (tree.dep / "data" / "f07.bin").is_file()
    assert procs.run("verify", "--strict", "-m", str(tree.manifest)).returncode == 0


def test_a_head_left_on_a_commit_without_its_tree_is_repaired(tmp_path, bulky):
    """What the old code left after a full disk (git moved HEAD onto the commit whose tree
    never arrived, and nothing recorded a move): every run failed on "bad tree object
    HEAD". The next run fetches the pin again and moves the files there."""
    tree = checked_out(tmp_path / "project", "lib", bulky.port, bulky.lib_v1)
    commit = git(bulky.base / "lib.git", "cat-file", "commit", bulky.lib_v2) + "\n"
    written = subprocess.run(["git", "hash-object", "-w", "-t", "commit", "--stdin"],
                             cwd=tree.dep, input=commit, capture_output=True, text=True,
                             check=True).stdout.strip()  # fmt: skip
    assert written == bulky.lib_v2
    git(tree.dep, "checkout", "-q", "--detach", bulky.lib_v2)  # git: exit 0, HEAD moved
    assert head(tree.dep) == bulky.lib_v2
    tree.pin(bulky.lib_v2)
    rerun = procs.run("checkout", "-m", str(tree.manifest))
    assert rerun.returncode == 0, rerun.stderr
    assert head(tree.dep) == bulky.lib_v2 and whole(tree.dep)
    assert len(list((tree.dep / "data").iterdir())) == FILES
    assert procs.run("verify", "--strict", "-m", str(tree.manifest)).returncode == 0
