"""Build real git repositories with the git CLI (never with GitPython or qola itself)."""

from __future__ import annotations

import hashlib
import os
import shlex
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


def ran(stderr: str) -> list[str]:
    """The git commands `-v` says qola runs (`qola: run: git -C DIR [--git-dir=DIR] ARGS`),
    as ARGS: without `git -C DIR` and the --git-dir naming a bare repository, and without
    the --progress qola adds to read git's progress."""
    commands = []
    for line in stderr.splitlines():
        if line.startswith("qola: run: git -C "):
            words = shlex.split(line.removeprefix("qola: run: "))[3:]
            if words and words[0].startswith("--git-dir="):
                words = words[1:]
            commands.append(" ".join(word for word in words if word != "--progress"))
    return commands


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


def without_noop_stamps(state: dict[str, str]) -> dict[str, str]:
    """A snapshot (of a root) less the no-op's stamps, where store.noop_stamps keeps them."""
    from qola.repo import store

    folder = store.noop_stamps(Path(".git")).as_posix()
    return {
        k: v
        for k, v in state.items()
        if not k.startswith(folder) and (k, v) != (f"{Path(folder).parent.as_posix()}/", "dir")
    }


def snapshot(root: Path) -> dict[str, str]:
    """Every file and link below root (work trees and .git alike) with a digest of it."""
    from qola.repo import store

    state: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames) + [d for d in dirnames if os.path.islink(Path(dirpath, d))]:
            if name == store.LOCK_NAME and Path(dirpath).name == ".git":
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


def fast_import_large(path: Path, small_commits: int, files: int, file_size: int) -> list[str]:
    """A repository with a long history, then two commits that each rewrite `files` big files.

    Returns [tip of the small history, big A, big B]. The content is random, so it does not
    compress: a depth-1 fetch of a big commit moves about files * file_size bytes.
    """
    path.mkdir(parents=True)
    git(path, "init", "-q", "--bare", "-b", "main")  # no work tree to write: an upstream
    stream = bytearray()

    def commit(mark: int, message: str, changes: bytes) -> None:
        msg = message.encode()
        stream.extend(b"commit refs/heads/main\nmark :%d\n" % mark)
        stream.extend(b"committer qola tests <tests@qola.invalid> %d +0000\n" % (1704067200 + mark))
        stream.extend(b"data %d\n%s\n" % (len(msg), msg))
        if mark > 1:
            stream.extend(b"from :%d\n" % (mark - 1))
        stream.extend(changes)
        stream.extend(b"\n")

    for i in range(1, small_commits + 1):
        body = b"line %d\n" % i
        commit(i, f"small {i}", b"M 100644 inline log.txt\ndata %d\n%s\n" % (len(body), body))
    for offset, name in ((1, "big A"), (2, "big B")):
        changes = bytearray()
        # B drops A's first 50 files and adds 50 new ones: a move that deletes and creates.
        for n in range(50 * (offset - 1), files + 50 * (offset - 1)):
            blob = os.urandom(file_size)
            changes.extend(b"M 100644 inline data/%04d.bin\ndata %d\n" % (n, len(blob)))
            changes.extend(blob + b"\n")
        if offset == 2:
            changes.extend(b"".join(b"D data/%04d.bin\n" % n for n in range(50)))
        commit(small_commits + offset, name, bytes(changes))
    # Random blobs never delta: a small window keeps fast-import from trying for long.
    subprocess.run(
        ["git", "-c", "pack.compression=0", "fast-import", "--quiet", "--depth=1"],
        cwd=path,
        input=bytes(stream),
        check=True,
    )
    marks = [small_commits, small_commits + 1, small_commits + 2]
    return [git(path, "rev-parse", f"main~{small_commits + 2 - m}") for m in marks]


def large_project(root: Path, url: Path | str, pin: str) -> Path:
    """A superproject pinning `big` (from the large upstream) at `pin`; returns the manifest."""
    init_repo(root)
    manifest = root / "qola.toml"
    manifest.write_text(f'[deps.big]\npath = "3rdparty/big"\nurl = "{url}"\ncommit = "{pin}"\n')
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", "qola.toml", ".gitignore")
    git(root, "commit", "-q", "-m", "pins")
    return manifest


def temp_clones(root: Path) -> list[Path]:
    """qola's temporary clones of `big` (store.temp_clone) that are still there."""
    from qola.repo import store

    model = store.temp_clone(root / "3rdparty" / "big")
    return list(model.parent.glob(model.name.rsplit("-", 1)[0] + "-*"))


# Git protocol v0, where a server without uploadpack.allowAnySHA1InWant refuses a SHA that
# is no branch tip (v2 allows any reachable SHA): set in the environment of a test.
PROTOCOL_V0 = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "protocol.version",
    "GIT_CONFIG_VALUE_0": "0",
}
