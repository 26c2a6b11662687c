"""`qola demo`: build throwaway repositories and run the real commands on them, offline."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from qola.base.errors import UsageError
from qola.gitrun.git import Runner
from qola.output.cmake_results import cmake_dir

# Local submodule URLs need this since git 2.38.1 (CVE-2022-39253); the demo
# sets it for its own commands only, through the environment.
DEMO_ENV = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "protocol.file.allow",
    "GIT_CONFIG_VALUE_0": "always",
}
_AUTHOR = {
    "GIT_AUTHOR_NAME": "qola demo",
    "GIT_AUTHOR_EMAIL": "demo@qola.invalid",
    "GIT_COMMITTER_NAME": "qola demo",
    "GIT_COMMITTER_EMAIL": "demo@qola.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}

CMAKELISTS = """\
cmake_minimum_required(VERSION 3.21)
project(qola_demo NONE)
find_package(QoLA CONFIG REQUIRED)
qola_checkout(MANIFEST ${CMAKE_CURRENT_SOURCE_DIR}/qola.toml)
message(STATUS "lib is at ${QOLA_LIB_SHA} in ${QOLA_LIB_SOURCE_DIR}")
"""


def run(folder: Path | None, echo: Callable[[str], None]) -> int:
    """Build the demo in folder and walk through it; returns the exit code."""
    # Absolute, because git takes a local submodule URL as a path only when it is absolute
    # or starts with ./ or ../ (`git submodule add d/upstream/nested` is refused).
    base = Path(folder).absolute() if folder else Path(tempfile.mkdtemp(prefix="qola-demo-"))
    base.mkdir(parents=True, exist_ok=True)
    if any(base.iterdir()):

        raise UsageError(str(base), "the demo folder is not empty", "give a new or empty folder")
    git = Runner(env={**DEMO_ENV, **_AUTHOR})
    echo(f"# qola demo in {base}")
    echo("# 1. an upstream library `lib` with a nested submodule, and two releases of it")
    v1, v2 = _make_upstream(git, base / "upstream")
    project = base / "project"
    _make_project(git, project, base / "upstream" / "lib", v1)
    echo(f"# 2. a CMake project pinning lib at {v1[:12]}: {project}/qola.toml")
    echo((project / "qola.toml").read_text().rstrip())
    name, email = _AUTHOR["GIT_AUTHOR_NAME"], _AUTHOR["GIT_AUTHOR_EMAIL"]
    echo(f"# its git identity, for the commit of step 4, is its own: {name} <{email}>")
    env_line = " ".join(f"{k}={v}" for k, v in DEMO_ENV.items())
    echo("# 3. the real commands (local submodule URLs need protocol.file.allow):")
    echo(f"$ cd {shlex.quote(str(project))}")
    echo(f"$ export {env_line}")
    env = {**os.environ, **DEMO_ENV}
    steps: list[list[str]] = [
        ["checkout"],
        ["verify"],
        ["status"],
    ]
    for args in steps:
        if _step(args, project, env, echo) != 0:
            return 1
    echo(f"# 4. move the pin to main's tip ({v2[:12]}): resolve, show the log, rewrite, check out")
    for args in (["bump", "lib", "--commit"], ["verify"]):
        if _step(args, project, env, echo) != 0:
            return 1
    cmake = shutil.which("cmake")
    if cmake is None:
        echo("# cmake is not on PATH: skipping the CMake configure")
    else:

        echo("# 5. a CMake configure: qola_checkout() finds everything pinned and does nothing")
        command = [
            cmake,
            "-S",
            str(project),
            "-B",
            str(project / "build"),
            f"-DCMAKE_PREFIX_PATH={cmake_dir()}",
            f"-DQOLA_PYTHON={sys.executable}",
        ]
        echo("$ " + shlex.join(command))
        if subprocess.run(command, env=env, check=False).returncode != 0:
            return 1
    echo(f"# done; everything is in {base}")
    return 0


def _step(args: list[str], project: Path, env: dict[str, str], echo: Callable[[str], None]) -> int:
    echo("$ qola " + shlex.join(args))
    proc = subprocess.run([sys.executable, "-m", "qola", *args], cwd=project, env=env, check=False)
    if proc.returncode != 0:
        echo(f"# qola {args[0]} exited with {proc.returncode}")
    return proc.returncode


def _commit(git: Runner, repo: Path, name: str, text: str, message: str) -> str:
    (repo / name).write_text(text)
    git.run(repo, "add", "--", name)
    git.run(repo, "commit", "-q", "-m", message)
    return git.run(repo, "rev-parse", "HEAD").stdout.strip()


def _make_upstream(git: Runner, base: Path) -> tuple[str, str]:
    nested = base / "nested"
    lib = base / "lib"
    for repo in (nested, lib):
        repo.mkdir(parents=True)
        git.run(repo, "init", "-q", "-b", "main")
    n1 = _commit(git, nested, "nested.txt", "nested 1\n", "nested 1")
    _commit(git, lib, "lib.txt", "lib 1\n", "lib 1")
    git.run(lib, "submodule", "add", "-q", "--", str(nested), "extern/nested")
    git.run(lib, "-C", "extern/nested", "checkout", "-q", n1)
    v1 = _commit(git, lib, "lib.txt", "lib 1.1\n", "lib 1.1 with nested 1")
    n2 = _commit(git, nested, "nested.txt", "nested 2\n", "nested 2")
    git.run(lib, "-C", "extern/nested", "fetch", "-q")
    git.run(lib, "-C", "extern/nested", "checkout", "-q", n2)
    git.run(lib, "add", "extern/nested")
    v2 = _commit(git, lib, "lib.txt", "lib 2\n", "lib 2 with nested 2")
    return v1, v2


def _make_project(git: Runner, project: Path, lib: Path, pin: str) -> None:
    project.mkdir(parents=True)
    git.run(project, "init", "-q", "-b", "main")
    # An identity of the project's own, in its config rather than the environment, for
    # the commit `qola bump --commit` makes: a machine without user.name/user.email (a
    # fresh container or CI runner) runs the demo, and so do the commands repeated by
    # hand, without an `export` that would follow the person into their own repositories.
    git.run(project, "config", "user.name", _AUTHOR["GIT_AUTHOR_NAME"])
    git.run(project, "config", "user.email", _AUTHOR["GIT_AUTHOR_EMAIL"])
    (project / "qola.toml").write_text(
        "# Pins for the demo project.\n"
        "[deps.lib]\n"
        'path = "3rdparty/lib"\n'
        f'url = "{lib}"\n'
        f'commit = "{pin}"\n'
        'track = "main"\n'
    )
    (project / "CMakeLists.txt").write_text(CMAKELISTS)
    (project / ".gitignore").write_text("/3rdparty/\n/build/\n")
    git.run(project, "add", "--", "qola.toml", "CMakeLists.txt", ".gitignore")
    git.run(project, "commit", "-q", "-m", "demo project")
