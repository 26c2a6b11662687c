"""Fixtures for bench/run.py: an isolated git, a loopback git daemon, and generated repositories.

Everything is built with the git CLI (and `git fast-import` for the large repository) in a
temporary folder, never with qola or GitPython, so a fixture cannot share a bug with the code
under test. Nothing here reads or writes the real $HOME or the user's git config.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

GITCONFIG = """\
[protocol "file"]
\tallow = always
[init]
\tdefaultBranch = main
[advice]
\tdetachedHead = false
[user]
\tname = bench
\temail = bench@example.invalid
"""

# Leaked by hooks and IDEs; git would act on another repository (qola strips them too).
_LEAKY = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_CEILING_DIRECTORIES",
)

# Bytes -> a skewed alphabet of 16 symbols: text that zlib shrinks about 2.5x, like source code,
# but whose content is fresh PRNG output, so neither zlib nor git's deltas find it twice.
_TEXT = bytes(b"etaoinsrhl_ (\n;."[(i * 7) % 16 if i % 3 else i % 5] for i in range(256))


def isolated_env(base: Path) -> dict[str, str]:
    """os.environ with git pointed at a config and a $HOME inside base, and a fixed identity."""
    home = base / "home"
    home.mkdir(parents=True, exist_ok=True)
    gitconfig = base / "gitconfig"
    gitconfig.write_text(GITCONFIG)
    env = {k: v for k, v in os.environ.items() if k not in _LEAKY and not k.startswith("QOLA_")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_GLOBAL=str(gitconfig),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.invalid",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.invalid",
        GIT_AUTHOR_DATE="1700000000 +0000",
        GIT_COMMITTER_DATE="1700000000 +0000",
        GIT_TERMINAL_PROMPT="0",
        LC_ALL="C",
    )
    return env


def plain_python(base: Path, qola: Path) -> str:
    """A Python that imports qola from the folder qola and its dependencies from this one's
    site-packages, as an installed qola would, without their .pth files.

    An editable install (`pip install -e`, what the test command makes) adds an import hook
    that site runs at every start: about 40 ms here, twice what starting Python costs, and
    nothing a user's `pip install .` pays. The benchmark measures what users run.
    """
    import site
    import venv

    home = base / "python"
    venv.EnvBuilder(symlinks=True, with_pip=False).create(home)
    python = home / "bin" / "python"
    # Without -S: site is what tells Python it runs in a virtual environment.
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    if not purelib.startswith(str(home)):
        sys.exit(f"the benchmark's Python would write outside {home}: {purelib}")
    # A .pth line that names a folder only adds it to sys.path: the .pth files inside it
    # (the editable hook's) are not run. qola's folder first, so that it is the one imported.
    # (This interpreter's site-packages, and those a .pth gave it: run from a plain Python
    # itself, as cmake_noop.py is by run.py, its dependencies come from the latter.)
    folders = [str(qola), *site.getsitepackages(),
               *(p for p in sys.path if p.endswith("site-packages"))]  # fmt: skip
    folders = list(dict.fromkeys(folders))
    (Path(purelib) / "qola-bench.pth").write_text("\n".join(folders) + "\n")
    return str(python)


class Git:
    """Runs git (and other commands) under one isolated environment; exits on failure."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def run(self, cwd: Path, *args: str | Path, stdin: bytes | None = None) -> str:
        proc = subprocess.run(
            [str(a) for a in args],
            cwd=cwd,
            env=self.env,
            input=stdin,
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            sys.exit(
                f"{' '.join(map(str, args))} (in {cwd}) failed with {proc.returncode}:\n"
                f"{proc.stdout.decode(errors='replace')}{proc.stderr.decode(errors='replace')}"
            )
        return proc.stdout.decode().strip()

    def __call__(self, cwd: Path, *args: str | Path) -> str:
        return self.run(cwd, "git", *args)


def text(rng: random.Random, size: int) -> bytes:
    """size bytes of source-like text from rng."""
    return rng.randbytes(size).translate(_TEXT)


# -- the loopback server ---------------------------------------------------------------------


@dataclass(frozen=True)
class Daemon:
    """A `git daemon` on 127.0.0.1 serving every repository under base; connections are logged."""

    base: Path
    port: int
    log: Path

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def connections(self) -> int:
        """How many connections the daemon has accepted so far."""
        return self.log.read_text(errors="replace").count("Connection from")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _is_listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@contextmanager
def git_daemon(base: Path, env: dict[str, str]) -> Iterator[Daemon]:
    """Serve base over git:// on loopback, on a free port, for the duration of the block."""
    base.mkdir(parents=True, exist_ok=True)
    log = base.parent / "daemon.log"
    for _attempt in range(5):
        port = _free_port()
        with log.open("ab") as sink:
            proc = subprocess.Popen(
                [
                    "git",
                    "daemon",
                    "--listen=127.0.0.1",
                    f"--port={port}",
                    "--reuseaddr",
                    "--export-all",
                    f"--base-path={base}",
                    "--informative-errors",
                    "--verbose",
                    "--log-destination=stderr",
                    str(base),
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=sink,
            )
        deadline = time.monotonic() + 20
        while proc.poll() is None and time.monotonic() < deadline and not _is_listening(port):
            time.sleep(0.05)
        if proc.poll() is None and _is_listening(port):
            break
        proc.kill()
        proc.wait()
    else:
        sys.exit(f"git daemon did not start; see {log}")
    try:
        yield Daemon(base, port, log)
    finally:
        proc.terminate()
        proc.wait()


@dataclass
class Counter:
    """A TCP relay on 127.0.0.1 in front of the daemon that counts the bytes it sends to
    clients: what a fetch received over the wire, wherever it stored it (a temporary
    repository included)."""

    port: int
    daemon: Daemon
    sent: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def take(self) -> int:
        """The bytes sent since the last take."""
        with self._lock:
            sent, self.sent = self.sent, 0
        return sent

    def add(self, count: int) -> None:
        with self._lock:
            self.sent += count


@contextmanager
def byte_counter(daemon: Daemon) -> Iterator[Counter]:
    """A Counter relaying to daemon, for the duration of the block."""
    listener = socket.create_server(("127.0.0.1", 0))
    counter = Counter(listener.getsockname()[1], daemon)

    def pump(source: socket.socket, sink: socket.socket, counted: bool) -> None:
        try:
            while data := source.recv(1 << 16):
                sink.sendall(data)
                if counted:
                    counter.add(len(data))
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)
            if counted:  # the server's side ends last: both sockets are done
                source.close()
                sink.close()

    def serve() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # the listener was closed
            server = socket.create_connection(("127.0.0.1", daemon.port))
            threading.Thread(target=pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=pump, args=(server, client, True), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield counter
    finally:
        listener.close()


# -- small dependencies: N libraries with a nested submodule each ----------------------------


def build_deps(git: Git, daemon: Daemon, count: int, dep_bytes: int) -> list[str]:
    """Repositories depK (dep_bytes of text, a nested submodule) and nestedK; their HEADs."""
    shas = []
    for k in range(count):
        rng = random.Random(f"dep{k}")
        nested = daemon.base / f"nested{k}"
        nested.mkdir()
        git(nested, "init", "-q")
        (nested / "nested.txt").write_bytes(text(rng, 4096))
        git(nested, "add", ".")
        git(nested, "commit", "-q", "-m", f"nested {k}")
        nested_sha = git(nested, "rev-parse", "HEAD")

        dep = daemon.base / f"dep{k}"
        (dep / "src").mkdir(parents=True)
        git(dep, "init", "-q")
        files = 4
        for f in range(files):
            (dep / "src" / f"part{f}.c").write_bytes(text(rng, dep_bytes // files))
        (dep / ".gitmodules").write_text(
            f'[submodule "nested"]\n\tpath = extern/nested\n\turl = {daemon.url(f"nested{k}")}\n'
        )
        git(dep, "add", ".")
        git(dep, "update-index", "--add", "--cacheinfo", f"160000,{nested_sha},extern/nested")
        git(dep, "commit", "-q", "-m", f"dep {k} with a nested submodule")
        shas.append(git(dep, "rev-parse", "HEAD"))
    return shas


def manifest(deps: dict[str, tuple[str, str, str]]) -> str:
    """A qola.toml pinning name -> (path, url, commit), with the root being its own folder."""
    tables = "".join(
        f'\n[deps.{name}]\npath = "{path}"\nurl = "{url}"\ncommit = "{commit}"\nsubmodules = true\n'
        for name, (path, url, commit) in deps.items()
    )
    return f'[qola]\nschema = 1\nroot = "."\n{tables}'


def dep_pins(daemon: Daemon, shas: list[str], count: int) -> dict[str, tuple[str, str, str]]:
    """The manifest entries of the first count small dependencies, at deps/depK."""
    return {f"dep{k}": (f"deps/dep{k}", daemon.url(f"dep{k}"), shas[k]) for k in range(count)}


def build_superproject(git: Git, root: Path, pins: dict[str, tuple[str, str, str]]) -> None:
    """A root repository whose submodules and qola.toml agree on every pin; not populated."""
    root.mkdir(parents=True)
    git(root, "init", "-q")
    (root / ".gitmodules").write_text(
        "".join(
            f'[submodule "{name}"]\n\tpath = {path}\n\turl = {url}\n'
            for name, (path, url, _) in pins.items()
        )
    )
    (root / "qola.toml").write_text(manifest(pins))
    git(root, "add", ".gitmodules", "qola.toml")
    for path, _url, sha in pins.values():
        git(root, "update-index", "--add", "--cacheinfo", f"160000,{sha},{path}")
    git(root, "commit", "-q", "-m", f"{len(pins)} dependencies")


# -- the large repository for the cold path ---------------------------------------------------


@dataclass(frozen=True)
class LargeSpec:
    """The shape of the generated large repository."""

    files: int
    tree_bytes: int
    commits: int
    history_factor: float  # raw bytes rewritten over the history, as a multiple of the tree
    behind: int  # how many commits the pin is behind the tip


@dataclass(frozen=True)
class Large:
    """The large repository as served, and the commit pinned."""

    path: Path
    url: str
    pin: str
    tip: str
    pack_bytes: int


def build_large(
    git: Git, daemon: Daemon, spec: LargeSpec, name: str = "large.git", extra: bytes = b""
) -> Large:
    """A bare repository made with fast-import, with a history far bigger than its tree.

    name: its folder under the daemon; extra: fast-import file commands added to the
    first commit (and so to every commit after it), e.g. a .gitmodules and a gitlink.
    """
    repo = daemon.base / name
    git(daemon.base, "init", "-q", "--bare", repo)
    # Fetching the pin by SHA needs one of these before protocol v2 (which allows it anyway).
    git(repo, "config", "uploadpack.allowAnySHA1InWant", "true")
    git(repo, "config", "uploadpack.allowFilter", "true")
    # Level 1 halves fast-import's time; the content is PRNG text, so the pack barely grows.
    proc = subprocess.Popen(
        ["git", "-c", "pack.compression=1", "fast-import", "--quiet"],
        cwd=repo,
        env=git.env,
        stdin=subprocess.PIPE,
    )
    assert proc.stdin is not None
    with proc.stdin as sink:
        for chunk in large_stream(spec, seed=name.removesuffix(".git"), extra=extra):
            sink.write(chunk)
    if proc.wait() != 0:
        sys.exit("git fast-import failed")
    git(repo, "symbolic-ref", "HEAD", "refs/heads/main")
    packs = sum(p.stat().st_size for p in (repo / "objects" / "pack").glob("*.pack"))
    return Large(
        path=repo,
        url=daemon.url(name),
        pin=git(repo, "rev-parse", f"main~{spec.behind}"),
        tip=git(repo, "rev-parse", "main"),
        pack_bytes=packs,
    )


def large_stream(spec: LargeSpec, seed: str = "large", extra: bytes = b"") -> Iterator[bytes]:
    """The fast-import stream of the large repository (seed: of its PRNG; extra: file
    commands added to the first commit).

    Each file's versions are written one after the other, so that fast-import stores each as
    a delta on the previous one: the pack then holds the tree plus what the history rewrote,
    as a real project's pack does. Commit c > 0 rewrites one region in each of 1 to 4 files.
    """
    rng = random.Random(seed)
    paths, weights = [], []
    for i in range(spec.files):
        folder = "assets" if i % 10 == 9 else f"src/mod{i % 23}"
        paths.append(f"{folder}/file{i}.{'bin' if folder == 'assets' else 'c'}")
        weights.append(rng.lognormvariate(0, 1))
    scale = spec.tree_bytes / sum(weights)
    sizes = [max(256, int(w * scale)) for w in weights]

    # A commit rewrites one region in each of 1 to 4 files (2.5 on average); a region is
    # at most the whole file, so the history's bytes grow more slowly than the factor.
    mean = spec.history_factor * spec.tree_bytes / spec.commits / 2.5
    edits: list[list[tuple[int, int, int]]] = [[] for _ in paths]  # file -> (commit, off, len)
    changed: list[list[int]] = [[] for _ in range(spec.commits)]  # commit -> files rewritten
    for c in range(1, spec.commits):
        for f in sorted(rng.sample(range(len(paths)), rng.randint(1, 4))):
            length = min(sizes[f], max(64, int(rng.expovariate(1 / mean))))
            edits[f].append((c, rng.randrange(sizes[f] - length + 1), length))
            changed[c].append(f)

    marks: dict[tuple[int, int], int] = {}  # (file, commit of that version) -> mark
    for f, path in enumerate(paths):
        frng = random.Random(f"{seed}:{f}")
        binary = path.endswith(".bin")
        content = bytearray(frng.randbytes(sizes[f]) if binary else text(frng, sizes[f]))
        versions = [(0, bytes(content))]
        for c, offset, length in edits[f]:
            content[offset : offset + length] = (
                frng.randbytes(length) if binary else text(frng, length)
            )
            versions.append((c, bytes(content)))
        for c, data in versions:
            marks[f, c] = len(marks) + 1
            yield b"blob\nmark :%d\ndata %d\n" % (marks[f, c], len(data))
            yield data
            yield b"\n"

    for c in range(spec.commits):
        subject = "initial import" if c == 0 else f"rewrite part of {len(changed[c])} file(s)"
        stamp = b"%d +0000" % (1_600_000_000 + 600 * c)
        message = subject.encode() + b"\n"
        yield b"commit refs/heads/main\n"
        yield b"author bench <bench@example.invalid> %s\n" % stamp
        yield b"committer bench <bench@example.invalid> %s\n" % stamp
        yield b"data %d\n%s" % (len(message), message)
        for f in range(len(paths)) if c == 0 else changed[c]:
            yield b"M 100644 :%d %s\n" % (marks[f, c], paths[f].encode())
        if c == 0:
            yield extra
        yield b"\n"


def object_bytes(gitdir: Path) -> int:
    """Bytes in a repository's object store (packs and loose objects, not indexes): what
    was received over the wire, less the protocol's framing."""
    objects = gitdir / "objects"
    total = 0
    for dirpath, _dirs, names in os.walk(objects):
        for name in names:
            if name.endswith((".idx", ".rev", ".bitmap", ".keep", ".promisor")):
                continue
            if name in ("alternates", "commit-graph") or dirpath.endswith("info"):
                continue
            total += os.path.getsize(os.path.join(dirpath, name))
    return total


def tree_bytes(path: Path) -> int:
    """Bytes of the files in a work tree, .git excluded."""
    total = 0
    for dirpath, dirs, names in os.walk(path):
        if ".git" in dirs:
            dirs.remove(".git")
        total += sum(os.path.getsize(os.path.join(dirpath, n)) for n in names)
    return total


# -- an AITER-shaped repository with a composable_kernel-shaped nested submodule ---------------


@dataclass(frozen=True)
class Nested:
    """AITER and its nested composable_kernel as served, and a TE-shaped superproject."""

    aiter: Large
    ck: Large
    superproject: Path  # a repository (not served) whose submodule 3rdparty/aiter pins aiter


CK_PATH = "3rdparty/composable_kernel"


def build_nested(
    git: Git, daemon: Daemon, aiter_spec: LargeSpec, ck_spec: LargeSpec, base: Path
) -> Nested:
    """ck.git; aiter.git recording ck's pin at 3rdparty/composable_kernel from its first
    commit on (AITER's .gitmodules names composable_kernel by an absolute URL, as here);
    and a superproject with aiter at 3rdparty/aiter and TE's legacy `[qola] aiter_commit`."""
    ck = build_large(git, daemon, ck_spec, "ck.git")
    modules = (
        f'[submodule "{CK_PATH}"]\n\tpath = {CK_PATH}\n\turl = {ck.url}\n'
    ).encode()
    extra = b"M 100644 inline .gitmodules\ndata %d\n%s\n" % (len(modules), modules)
    extra += b"M 160000 %s %s\n" % (ck.pin.encode(), CK_PATH.encode())
    aiter = build_large(git, daemon, aiter_spec, "aiter.git", extra)
    root = base / "te-origin"
    root.mkdir(parents=True)
    git(root, "init", "-q")
    (root / ".gitmodules").write_text(
        f'[submodule "3rdparty/aiter"]\n\tpath = 3rdparty/aiter\n\turl = {aiter.url}\n'
    )
    (root / "qola.toml").write_text(f'[qola]\nnamespace = "te"\naiter_commit = "{aiter.pin}"\n')
    git(root, "add", ".gitmodules", "qola.toml")
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{aiter.pin},3rdparty/aiter")
    git(root, "commit", "-q", "-m", "TE pins aiter")
    return Nested(aiter, ck, root)
