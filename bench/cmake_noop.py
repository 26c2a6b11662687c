"""What a no-op qola_checkout() adds to a CMake configure, beside git's own no-op.

    python bench/cmake_noop.py [--deps 10,50,200] [--repeat 15] [--generator Ninja]

For each N, builds, in a temporary folder, N upstream libraries each with a
nested submodule, a CMake project whose manifest pins them all, and a plain git
superproject with the same N submodules. Then, interleaved so that machine
noise hits every variant alike, it times:

  cmake-bare      re-configure of the same project without qola_checkout()
  cmake-stamp     re-configure with qola_checkout(), stamp valid (no Python)
  cmake-qola      re-configure with qola_checkout(), stamp dropped (runs qola's no-op)
  git-update      git submodule update --init --recursive in the superproject

and prints medians (wall and child CPU) and what qola_checkout() adds over
cmake-bare, as a ratio of git-update. With several N it ends with one row per N:
what the stamp check adds, per dependency, and against the goal (at most 0.05x
git's no-op at every N; a flat cost per dependency). The qola under test is this
checkout.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fixtures import plain_python

REPO = Path(__file__).resolve().parent.parent
MODULE = REPO / "cmake" / "QoLA.cmake"

PROJECT = """\
cmake_minimum_required(VERSION 3.21)
project(bench LANGUAGES NONE)
if(WITH_QOLA)
  include("@MODULE@")
  qola_checkout(MANIFEST qola.toml)
endif()
"""


def run(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        sys.exit(f"{' '.join(map(str, args))} failed:\n{proc.stdout}\n{proc.stderr}")


def git(cwd: Path, *args: str) -> None:
    run("git", *args, cwd=cwd)


def commit(repo: Path, name: str, text: str) -> None:
    (repo / name).write_text(text)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", f"add {name}")


def build_fixture(base: Path, deps: int) -> tuple[Path, Path]:
    upstream = base / "upstream"
    shas = []
    for i in range(deps):
        nested = upstream / f"nested{i}"
        nested.mkdir(parents=True)
        git(nested, "init", "-q", "-b", "main")
        commit(nested, "n.txt", f"nested {i}\n")
        lib = upstream / f"lib{i}"
        lib.mkdir()
        git(lib, "init", "-q", "-b", "main")
        commit(lib, "lib.txt", f"lib {i}\n")
        git(lib, "submodule", "add", "-q", str(nested), "extern/nested")
        git(lib, "commit", "-q", "-m", "nested")
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=lib, capture_output=True, text=True, check=True
        )
        shas.append(out.stdout.strip())

    project = base / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(PROJECT.replace("@MODULE@", MODULE.as_posix()))
    (project / "qola.toml").write_text(
        "".join(
            f'[deps.lib{i}]\npath = "3rdparty/lib{i}"\nurl = "{upstream / f"lib{i}"}"\n'
            f'commit = "{sha}"\n\n'
            for i, sha in enumerate(shas)
        )
    )

    superproject = base / "superproject"
    superproject.mkdir()
    git(superproject, "init", "-q", "-b", "main")
    for i in range(deps):
        git(superproject, "submodule", "add", "-q", str(upstream / f"lib{i}"), f"3rdparty/lib{i}")
    git(superproject, "commit", "-q", "-m", "submodules")
    git(superproject, "submodule", "update", "-q", "--init", "--recursive")
    return project, superproject


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the children) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{proc.stdout}\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


STAMP_GOAL = 0.05  # the stamp check adds at most this much of git's no-op, at every N


def measure(
    base: Path, deps: int, repeat: int, generator: str, env: dict[str, str]
) -> dict[str, tuple[float, float]]:
    """Medians (wall, cpu) of every variant for N deps, printed as they come."""
    cmake = shutil.which("cmake")
    assert cmake is not None
    project, superproject = build_fixture(base, deps)
    bare, qola = base / "build-bare", base / "build-qola"
    configure = [cmake, "-S", str(project), "-G", generator]
    run(*configure, "-B", bare, "-DWITH_QOLA=OFF", env=env)
    run(*configure, "-B", qola, "-DWITH_QOLA=ON", env=env)
    variants = {
        "cmake-bare": [*configure, "-B", str(bare)],
        "cmake-stamp": [*configure, "-B", str(qola)],
        # -U drops the stamp's key from the cache: the module must run qola.
        "cmake-qola": [*configure, "-B", str(qola), "-U_QOLA_KEY_*"],
        "git-update": ["git", "submodule", "update", "-q", "--init", "--recursive"],
    }
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, command in variants.items():
            cwd = superproject if name == "git-update" else base
            samples[name].append(timed(command, cwd, env))
    medians = {
        name: (
            statistics.median(s[0] for s in runs),
            statistics.median(s[1] for s in runs),
        )
        for name, runs in samples.items()
    }
    print(
        f"N={deps} dependencies with a nested submodule each, {generator}, "
        f"{repeat} interleaved runs, medians:"
    )
    print(f"{'variant':<12} {'wall ms':>9} {'cpu ms':>9}")
    for name, (wall, cpu) in medians.items():
        print(f"{name:<12} {wall * 1000:9.1f} {cpu * 1000:9.1f}")
    git_wall, git_cpu = medians["git-update"]
    for name in ("cmake-stamp", "cmake-qola"):
        add_wall = medians[name][0] - medians["cmake-bare"][0]
        add_cpu = medians[name][1] - medians["cmake-bare"][1]
        print(
            f"{name} adds {add_wall * 1000:.1f} ms wall ({add_wall / git_wall:.2f}x git), "
            f"{add_cpu * 1000:.1f} ms cpu ({add_cpu / git_cpu:.2f}x git)"
        )
    print(flush=True)
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deps", default="10,50,200", help="comma-separated N (default 10,50,200)")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--generator", default="Ninja")
    args = parser.parse_args()
    sizes = [int(n) for n in args.deps.split(",")]

    if shutil.which("cmake") is None:
        sys.exit("cmake is not on PATH")
    rows = []
    for deps in sizes:
        base = Path(tempfile.mkdtemp(prefix="qola-bench-cmake-"))
        env = {
            **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
            "QOLA_PYTHON": plain_python(base, REPO),
            "GIT_CONFIG_GLOBAL": str(base / "gitconfig"),
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        (base / "gitconfig").write_text(
            '[protocol "file"]\n\tallow = always\n[user]\n\tname = bench\n\temail = b@b\n'
            "[advice]\n\tdetachedHead = false\n"
        )
        saved = dict(os.environ)
        os.environ.update(env)
        try:
            medians = measure(base, deps, args.repeat, args.generator, env)
        finally:
            os.environ.clear()
            os.environ.update(saved)
            shutil.rmtree(base, ignore_errors=True)
        stamp = medians["cmake-stamp"][0] - medians["cmake-bare"][0]
        rows.append((deps, medians["git-update"][0], stamp))
    if len(rows) > 1:
        print("what the stamp check adds to a configure (wall, medians), by N:")
        header = f"{'N':>5} {'git no-op ms':>13} {'stamp adds ms':>14} {'x git':>7} {'ms/dep':>7}"
        print(f"{header}  goal")
        for deps, git_wall, stamp in rows:
            ratio = stamp / git_wall
            verdict = "PASS" if ratio <= STAMP_GOAL else "MISS"
            print(
                f"{deps:>5} {git_wall * 1000:13.1f} {stamp * 1000:14.1f} {ratio:7.3f} "
                f"{stamp * 1000 / deps:7.3f}  {verdict} (<= {STAMP_GOAL}x)"
            )
        (small, _, small_add), (large, _, large_add) = rows[0], rows[-1]
        print(
            f"cost per dependency at N={large} over N={small}: "
            f"{(large_add / large) / (small_add / small):.2f}x (1.00: it grows linearly)"
            if small_add > 0
            else "the stamp check is below the noise at the smallest N"
        )


if __name__ == "__main__":
    main()
