"""A `.lfsconfig` in a dependency that is not the upstream's never steers git-lfs.

The user's config runs git-lfs (filter.lfs, as `git lfs install` sets it); git-lfs reads
lfs.url from a `.lfsconfig` at the top of the work tree (else the index's, else HEAD's)
and sends its batch request there, with the user's credentials. The tree belongs to
another uid; a loopback listener counts the connections it gets, and plain git (trusting
the tree) connects to it, so each test can fail.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import procs
import pytest
from repos import commit_file, git, head, init_repo, snapshot
from test_fetch_target import Listener, as_root, chown_tree, listener, private_tmp  # noqa: F401

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: chown to another uid")

LFS = ('[filter "lfs"]\n\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge -- %f\n'
       "\tprocess = git-lfs filter-process\n\trequired = true\n")  # fmt: skip
DATA = bytes(range(256)) * 4


@dataclass(frozen=True)
class World:
    up: Path
    root: Path
    v1: str
    v2: str  # adds data.bin, stored by git-lfs

    @property
    def manifest(self) -> Path:
        return self.root / "qola.toml"

    @property
    def lib(self) -> Path:
        return self.root / "3rdparty" / "lib"


def lfs_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "user.gitconfig"
    config.write_text(Path(os.environ["GIT_CONFIG_GLOBAL"]).read_text() + LFS)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))


def world(tmp_path: Path, lfsconfig: str | None = None) -> World:
    """lib at v1 (with lfsconfig tracked, when given), then v2 adding an LFS file; a project
    pinning v1, checked out, then pinned at v2 (not checked out yet)."""
    up = init_repo(tmp_path / "up")
    if lfsconfig is not None:
        (up / ".lfsconfig").write_text(lfsconfig)
        git(up, "add", ".lfsconfig")
    v1 = commit_file(up, "lib.txt", "v1\n")
    (up / ".gitattributes").write_text("*.bin filter=lfs diff=lfs merge=lfs -text\n")
    (up / "data.bin").write_bytes(DATA)
    git(up, "add", ".gitattributes", "data.bin")
    git(up, "commit", "-q", "-m", "v2: lfs")
    v2 = head(up)
    root = init_repo(tmp_path / "project")
    (root / "qola.toml").write_text(
        f'[deps.lib]\npath = "3rdparty/lib"\nurl = "{up}"\ncommit = "{v1}"\n'
    )
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "pins")
    first = procs.run("checkout", "-m", str(root / "qola.toml"))
    assert first.returncode == 0, first.stderr
    found = World(up, root, v1, v2)
    found.manifest.write_text(found.manifest.read_text().replace(v1, v2))
    return found


def theirs(port: int) -> str:
    return f"[lfs]\n\turl = http://127.0.0.1:{port}/lfs\n"


def plant(lib: Path, how: str, text: str, tmp_path: Path) -> None:
    target = lib / ".lfsconfig"
    if how in ("untracked", "modified"):
        target.write_text(text)
    elif how == "staged":  # in the index only: git-lfs reads `:.lfsconfig`
        target.write_text(text)
        git(lib, "add", "-f", ".lfsconfig")
        target.unlink()
    elif how == "link":
        (tmp_path / "elsewhere").write_text(text)
        target.symlink_to(tmp_path / "elsewhere")


@pytest.mark.parametrize("how", ["untracked", "staged", "link", "modified"])
def test_a_lfsconfig_not_the_upstreams_stops_every_command_there(
    tmp_path, monkeypatch, listener, private_tmp, how  # noqa: F811
):
    lfs_user(tmp_path, monkeypatch)
    found = world(tmp_path, "[lfs]\n\tlocksverify = false\n" if how == "modified" else None)
    plant(found.lib, how, theirs(listener.port), tmp_path)
    chown_tree(found.root)
    before = snapshot(found.root)
    proc = procs.run("checkout", "-m", str(found.manifest))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"{found.lib / '.lfsconfig'} " in proc.stderr
    assert "git-lfs (your filter.lfs) would read it" in proc.stderr
    assert "hint: if you did not put it there, remove it" in proc.stderr
    # verify runs no git there either: the tree judged from its files, the reason given.
    verified = procs.run("verify", "-m", str(found.manifest))
    assert verified.returncode == 1, verified.stdout + verified.stderr
    assert f"unsafe: {found.lib / '.lfsconfig'} " in verified.stdout
    assert listener.connections == 0
    assert snapshot(found.root) == before
    assert git(found.lib, "-c", "safe.directory=*", "rev-parse", "HEAD") == found.v1
    # The threat is real: plain git in that tree sends git-lfs's request there.
    as_root(found.lib, "fetch", "-q", str(found.up), found.v2)
    as_root(found.lib, "checkout", "-q", "--detach", found.v2)
    assert listener.connections > 0


def test_the_upstreams_own_lfsconfig_is_read_as_it_is(tmp_path, monkeypatch, private_tmp):  # noqa: F811
    """A tracked, unchanged .lfsconfig is the upstream's: checkout and verify go on, and
    git-lfs fetches from where it says (the upstream itself)."""
    lfs_user(tmp_path, monkeypatch)
    found = world(tmp_path, f"[lfs]\n\turl = file://{tmp_path / 'up'}\n")
    chown_tree(found.root)
    proc = procs.run("checkout", "-m", str(found.manifest))
    assert proc.returncode == 0, proc.stderr
    assert (found.lib / "data.bin").read_bytes() == DATA
    verified = procs.run("verify", "-m", str(found.manifest))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_without_git_lfs_in_the_users_config_a_lfsconfig_is_nothing_to_git(tmp_path):
    found = world(tmp_path)
    (found.lib / ".lfsconfig").write_text(theirs(1))
    found.manifest.write_text(found.manifest.read_text().replace(found.v2, found.v1))
    proc = procs.run("verify", "-m", str(found.manifest))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_projects_own_lfsconfig_is_the_users(tmp_path, monkeypatch):
    lfs_user(tmp_path, monkeypatch)
    found = world(tmp_path)
    found.manifest.write_text(found.manifest.read_text().replace(found.v2, found.v1))
    (found.root / ".lfsconfig").write_text(theirs(1))
    proc = procs.run("verify", "-m", str(found.manifest))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_nested_submodules_lfsconfig_is_refused_too(tmp_path, monkeypatch, listener):  # noqa: F811
    nested = init_repo(tmp_path / "nested")
    commit_file(nested, "n.txt", "n1\n")
    lib = init_repo(tmp_path / "lib")
    commit_file(lib, "README", "lib\n")
    git(lib, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(nested),
        "extern/nested")  # fmt: skip
    git(lib, "commit", "-q", "-m", "nested")
    root = init_repo(tmp_path / "project")
    manifest = root / "qola.toml"
    manifest.write_text(f'[deps.lib]\npath = "3rdparty/lib"\nurl = "{lib}"\n'
                        f'commit = "{head(lib)}"\n')  # fmt: skip
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "pins")
    assert procs.run("checkout", "-m", str(manifest)).returncode == 0
    lfs_user(tmp_path, monkeypatch)
    planted = root / "3rdparty" / "lib" / "extern" / "nested" / ".lfsconfig"
    planted.write_text(theirs(listener.port))
    chown_tree(root)
    before = snapshot(root)
    verified = procs.run("verify", "-m", str(manifest))
    assert verified.returncode != 0, verified.stdout + verified.stderr
    assert f"{planted} is not tracked" in verified.stdout
    assert snapshot(root) == before
    planted.unlink()
    assert procs.run("verify", "-m", str(manifest)).returncode == 0


def test_a_failed_lfs_transfer_names_the_endpoint_qola_overrode(tmp_path, monkeypatch):
    """The user's LFS mirror, set in the dependency's own config: qola empties it (a
    repository's config does not say where git-lfs sends credentials), and when git-lfs
    then fails, the hint says which key and how to set it in the user's own config;
    following it, the rerun finishes."""
    lfs_user(tmp_path, monkeypatch)
    found = world(tmp_path)
    mirror = tmp_path / "mirror"
    subprocess.run(["cp", "-a", str(found.up), str(mirror)], check=True)
    subprocess.run(["rm", "-rf", str(found.up / ".git" / "lfs")], check=True)
    git(found.lib, "config", "lfs.url", f"file://{mirror}")
    proc = procs.run("checkout", "-m", str(found.manifest))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "smudge filter lfs failed" in proc.stderr
    assert (f"hint: git-lfs failed where qola overrode the repository's LFS endpoint "
            f"(lfs.url = 'file://{mirror}' of {found.lib / '.git' / 'config'} was given an "
            "empty one (no endpoint))") in proc.stderr  # fmt: skip
    assert f"git config --global lfs.url file://{mirror}," in proc.stderr
    assert "once the space or the network is back" not in proc.stderr
    git(tmp_path, "config", "--global", "lfs.url", f"file://{mirror}")
    rerun = procs.run("checkout", "-m", str(found.manifest))
    assert rerun.returncode == 0, rerun.stderr
    assert (found.lib / "data.bin").read_bytes() == DATA
