"""Test isolation and the upstream repositories every test clones from."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from repos import commit_file, git, head, init_repo

from qola.cli import cli

_SESSION_HOME: Path | None = None


def pytest_configure(config: pytest.Config) -> None:
    """Isolate git for the whole session: no real $HOME, no global or system config."""
    global _SESSION_HOME
    import tempfile

    _SESSION_HOME = Path(tempfile.mkdtemp(prefix="qola-test-home-"))
    gitconfig = _SESSION_HOME / "isolated.gitconfig"
    gitconfig.write_text(
        '[protocol "file"]\n\tallow = always\n'
        "[init]\n\tdefaultBranch = main\n"
        "[user]\n\tname = qola tests\n\temail = tests@qola.invalid\n"
        "[advice]\n\tdetachedHead = false\n"
    )
    for var in list(os.environ):
        if var.startswith(("GIT_", "QOLA_")):
            del os.environ[var]
    # Every qola the tests start (python -m qola, the qola script, CMake's QOLA_PYTHON) must
    # be this checkout's, not whichever one is installed (an editable install of another
    # worktree would otherwise answer for it).
    source = str(Path(__file__).resolve().parent.parent)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))
    os.environ.update(
        {
            "HOME": str(_SESSION_HOME),
            "XDG_CONFIG_HOME": str(_SESSION_HOME / ".config"),
            "GIT_CONFIG_GLOBAL": str(gitconfig),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "qola tests",
            "GIT_AUTHOR_EMAIL": "tests@qola.invalid",
            "GIT_COMMITTER_NAME": "qola tests",
            "GIT_COMMITTER_EMAIL": "tests@qola.invalid",
            "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
            "GIT_TERMINAL_PROMPT": "0",
        }
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SESSION_HOME is not None:
        shutil.rmtree(_SESSION_HOME, ignore_errors=True)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts without qola settings or leaked git variables."""
    for var in list(os.environ):
        if var.startswith("QOLA_") or var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
            monkeypatch.delenv(var)
    for var in ("NO_COLOR", "FORCE_COLOR", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(var, raising=False)
    from qola.base import console

    console.configure()  # -v or -q of an earlier command run in this process ends with it


@dataclass(frozen=True)
class Upstream:
    """A library `lib` with a nested submodule `extern/nested`, and its history."""

    nested: Path
    lib: Path
    nested_v1: str
    nested_v2: str
    lib_v1: str  # nested at nested_v1
    lib_v2: str  # nested at nested_v2; the annotated tag v2.0
    lib_v3: str  # on a side branch `side`, not an ancestor of main's tip
    lib_tip: str  # main's tip, a descendant of lib_v2


@pytest.fixture(scope="session")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Upstream:
    base = tmp_path_factory.mktemp("upstream")
    nested = init_repo(base / "nested")
    nested_v1 = commit_file(nested, "nested.txt", "nested v1\n")
    nested_v2 = commit_file(nested, "nested.txt", "nested v2\n")

    lib = init_repo(base / "lib")
    commit_file(lib, "README", "lib\n")
    git(
        lib,
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        str(nested),
        "extern/nested",
    )
    git(lib, "-C", "extern/nested", "checkout", "-q", nested_v1)
    git(lib, "add", "extern/nested")
    git(lib, "commit", "-q", "-m", "add nested at v1")
    lib_v1 = head(lib)
    git(lib, "-C", "extern/nested", "checkout", "-q", nested_v2)
    git(lib, "add", "extern/nested")
    commit_file(lib, "lib.txt", "lib v2\n", "lib v2, nested v2")
    lib_v2 = head(lib)
    git(lib, "tag", "-a", "-m", "release 2", "v2.0", lib_v2)
    git(lib, "checkout", "-q", "-b", "side", lib_v1)
    lib_v3 = commit_file(lib, "side.txt", "side\n")
    git(lib, "checkout", "-q", "main")
    git(lib, "submodule", "update", "-q")
    lib_tip = commit_file(lib, "lib.txt", "lib v4\n", "lib v4")
    return Upstream(nested, lib, nested_v1, nested_v2, lib_v1, lib_v2, lib_v3, lib_tip)


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def run_qola():
    """Run the command line in-process and return exit code, stdout and stderr."""

    def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Result:
        runner = CliRunner()
        old = Path.cwd()
        if cwd is not None:
            os.chdir(cwd)
        try:
            res = runner.invoke(cli, list(args), env=env, catch_exceptions=False)
        finally:
            os.chdir(old)
        return Result(res.exit_code, res.stdout, res.stderr)

    return run


@dataclass(frozen=True)
class Project:
    """A superproject whose qola.toml pins `lib` (at 3rdparty/lib) from the upstream."""

    root: Path
    manifest: Path

    @property
    def lib(self) -> Path:
        return self.root / "3rdparty" / "lib"

    @property
    def nested(self) -> Path:
        return self.lib / "extern" / "nested"

    def set_pin(self, old: str, new: str) -> None:
        self.manifest.write_text(self.manifest.read_text().replace(old, new))


def manifest_text(upstream: Upstream, pin: str, extra: str = "") -> str:
    return (
        "# the project's pins\n"
        "[deps.lib]\n"
        'path = "3rdparty/lib"\n'
        f'url = "{upstream.lib}"\n'
        f'commit = "{pin}"  # lib v2\n'
        'track = "main"\n'
        f"{extra}"
    )


@pytest.fixture
def make_project(tmp_path: Path, upstream: Upstream):
    """A new superproject (a git repository) with a manifest; nothing checked out."""

    def make(pin: str | None = None, extra: str = "", name: str = "project") -> Project:
        root = init_repo(tmp_path / name)
        manifest = root / "qola.toml"
        manifest.write_text(manifest_text(upstream, pin or upstream.lib_v2, extra))
        (root / ".gitignore").write_text("/3rdparty/\n")
        git(root, "add", "qola.toml", ".gitignore")
        git(root, "commit", "-q", "-m", "pins")
        return Project(root, manifest)

    return make


def _template_root(base: Path, upstream: Upstream) -> Path:
    root = init_repo(base / "project")
    (root / "qola.toml").write_text(manifest_text(upstream, upstream.lib_v2))
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", "qola.toml", ".gitignore")
    git(root, "commit", "-q", "-m", "pins")
    return root


@pytest.fixture(scope="session")
def _synced_template(tmp_path_factory: pytest.TempPathFactory, upstream: Upstream) -> Path:
    """lib put at its pin by the git CLI alone: no cache, stamp or ref of qola's.

    As a developer would by hand: the pin fetched by SHA one commit deep (no
    remote-tracking refs), checked out detached, and `git submodule update --init
    --recursive` for the nested submodule (a full clone, in .git/modules).
    """
    root = _template_root(tmp_path_factory.mktemp("template"), upstream)
    lib = init_repo(root / "3rdparty" / "lib")
    git(lib, "remote", "add", "origin", str(upstream.lib))
    git(lib, "fetch", "-q", "--depth", "1", "origin", upstream.lib_v2)
    git(lib, "checkout", "-q", "--detach", upstream.lib_v2)
    git(lib, "submodule", "update", "-q", "--init", "--recursive")
    return root


@pytest.fixture(scope="session")
def _qola_template(tmp_path_factory: pytest.TempPathFactory, upstream: Upstream) -> Path:
    root = _template_root(tmp_path_factory.mktemp("qola-template"), upstream)
    res = CliRunner().invoke(cli, ["checkout", "-q", "-m", str(root / "qola.toml")])
    assert res.exit_code == 0, res.output
    return root


@pytest.fixture
def pinned_clean(tmp_path: Path, _synced_template: Path) -> Project:
    """A superproject with lib checked out at its pin by git, nested submodule included."""
    root = tmp_path / "project"
    shutil.copytree(_synced_template, root, symlinks=True)
    return Project(root, root / "qola.toml")


@pytest.fixture
def pinned_by_qola(tmp_path: Path, _qola_template: Path) -> Project:
    """The same tree as qola's own checkout leaves it: its refs and remembered gitlinks."""
    root = tmp_path / "project"
    shutil.copytree(_qola_template, root, symlinks=True)
    return Project(root, root / "qola.toml")


@pytest.fixture
def behind_pin(pinned_clean: Project, upstream: Upstream) -> Project:
    """lib is checked out at v2 but the manifest pins main's tip, which is not fetched yet."""
    pinned_clean.set_pin(upstream.lib_v2, upstream.lib_tip)
    return pinned_clean


@dataclass(frozen=True)
class LargeUpstream:
    """A bare repository with a long history and two big commits (random, incompressible)."""

    path: Path
    small_tip: str
    big_a: str  # 600 files of 16 KiB
    big_b: str  # 550 of them rewritten, 50 deleted, 50 added


@pytest.fixture(scope="session")
def large_upstream(tmp_path_factory: pytest.TempPathFactory) -> LargeUpstream:
    """Built once per session with git fast-import: a clone of it takes long enough to kill."""
    from repos import fast_import_large

    path = tmp_path_factory.mktemp("large") / "big.git"
    return LargeUpstream(path, *fast_import_large(path, 1000, 600, 16384))


@pytest.fixture(scope="session")
def deep(tmp_path_factory: pytest.TempPathFactory):
    """Upstreams with nested submodules two levels deep (superprojects.build_deep)."""
    from superprojects import build_deep

    return build_deep(tmp_path_factory.mktemp("deep"))
