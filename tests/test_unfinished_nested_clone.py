"""A nested submodule's first checkout that git cannot finish (a file name this file system
refuses: 150 letters é are 300 bytes, over ext4's and tmpfs' 255): every run says so, and
no fast path, nor verify, calls the tree up to date. It was: the failed checkout had
written the index, so the next run took the nested repository for checked out."""

from __future__ import annotations

import os
import subprocess

import procs
import pytest
from repos import commit_file, git, init_repo

LONG = "é" * 150 + ".txt"


def _too_long_for_here(folder) -> bool:
    try:
        (folder / LONG).write_text("x")
    except OSError:
        return True
    (folder / LONG).unlink()
    return False


def test_a_nested_first_checkout_git_cannot_finish_is_never_called_up_to_date(tmp_path):
    if not _too_long_for_here(tmp_path):
        pytest.skip("this file system holds 300-byte names")
    nested = init_repo(tmp_path / "nested")
    commit_file(nested, "ok.txt", "ok\n")
    def run(*args: str, data: bytes | None = None) -> str:
        out = subprocess.run(["git", "-C", str(nested), *args], input=data,
                             capture_output=True, check=True)  # fmt: skip
        return out.stdout.decode().strip()

    blob = run("hash-object", "-w", "--stdin", data=b"long\n")
    entries = run("ls-tree", "HEAD") + f"\n100644 blob {blob}\t{LONG}\n"
    tree = run("mktree", data=entries.encode())
    n1 = run("commit-tree", tree, "-p", "HEAD", "-m", "a long name")
    lib = init_repo(tmp_path / "lib")
    commit_file(lib, "README", "lib\n")
    (lib / ".gitmodules").write_text(f'[submodule "extern/nested"]\n\tpath = extern/nested\n'
                                     f"\turl = {nested}\n")  # fmt: skip
    git(lib, "update-index", "--add", "--cacheinfo", f"160000,{n1},extern/nested")
    git(lib, "add", ".gitmodules")
    git(lib, "commit", "-q", "-m", "nested")
    root = init_repo(tmp_path / "project")
    manifest = root / "qola.toml"
    manifest.write_text(f'[deps.lib]\npath = "3rdparty/lib"\nurl = "{lib}"\n'
                        f'commit = "{git(lib, "rev-parse", "HEAD")}"\n')  # fmt: skip
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "pins")
    for _ in range(3):  # the first run, the next (full), the next (a stamp, if one were made)
        res = procs.run("checkout", "-m", str(manifest))
        assert res.returncode == 3, res.stdout + res.stderr
        assert "up to date" not in res.stdout
        assert "did not finish" in res.stderr
    assert procs.run("verify", "-m", str(manifest)).returncode != 0
    assert os.path.isfile(root / "3rdparty" / "lib" / "extern" / "nested" / "ok.txt")
