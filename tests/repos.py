"""Build real git repositories with the git CLI (never with GitPython or qola itself)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path


def git(cwd: Path | str, *args: str, check: bool = True) -> str:
    """Run git in cwd and return its stripped stdout."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"git {' '.join(args)} failed in {cwd} ({proc.returncode}):\n{proc.stderr}"
        )
    return proc.stdout.strip()


def commit_file(repo: Path, name: str, text: str, message: str | None = None) -> str:
    """Write a file, commit it, and return the new commit's SHA."""
    target = repo / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    git(repo, "add", "--", name)
    git(repo, "commit", "-q", "-m", message or f"update {name}")
    return git(repo, "rev-parse", "HEAD")


def init_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    return path


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD")


def snapshot(root: Path) -> dict[str, str]:
    """Every file and link below root (work trees and .git alike) with a digest of it."""
    state: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames) + [d for d in dirnames if os.path.islink(Path(dirpath, d))]:
            if name == "qola.lock" and Path(dirpath).name == ".git":
                continue  # the root's lock file: empty, and there only to be locked
            path = Path(dirpath, name)
            rel = str(path.relative_to(root))
            if path.is_symlink():
                state[rel] = "link:" + os.readlink(path)
            else:
                st = path.stat()
                digest = hashlib.sha1(path.read_bytes()).hexdigest()
                state[rel] = f"{oct(st.st_mode)}:{digest}"
        for d in dirnames:
            state[str(Path(dirpath, d).relative_to(root)) + "/"] = "dir"
    return state
