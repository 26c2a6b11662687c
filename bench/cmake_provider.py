"""qola as FetchContent's dependency provider (QoLAProvider.cmake) against FetchContent's own,
on the same project, measured side by side in one run.

    python bench/cmake_provider.py [--quick] [--repeat K] [--cmake PATH]... [--json PATH]

Builds, in a temporary folder, with the git CLI (bench/fixtures.py), served by a loopback
`git daemon` behind a relay that counts the bytes the server sends:

  history.git  a library whose release tag v1 is 120 commits behind main's tip: no branch
               tip, so FetchContent cannot clone it with GIT_SHALLOW (a depth-1 clone of the
               branches lacks the tag's commit) and clones the whole history
  withsub.git  a library whose tag v2 is main's tip (GIT_SHALLOW works), with two release
               branches further back, and a nested submodule `nested.git` with a history
               of its own at extern/nested

and a project that declares both (FetchContent_Declare(history ... GIT_TAG v1),
FetchContent_Declare(withsub ... GIT_TAG v2 GIT_SHALLOW TRUE)). For each CMake given
(default: `cmake` on PATH, and .test-cmake/newest when the test command installed it):

  reconfigure  `cmake -S src -B build` with nothing changed, interleaved: FetchContent's own
               build, the provider's (qola.toml locking both, written once by
               -DQOLA_LOCK=ON), and the project without its dependencies (the floor); on
               CMake >= 3.30 also FetchContent with CMP0168 NEW (no sub-build), for reference
  cold         a first configure of one dependency at a time into a fresh build folder
               (and, for qola, a source tree without its checkout): the bytes the server
               sent, FetchContent's clone against qola's

and prints medians, the ratios, and one line per goal: reconfigure with the provider
<= 0.2x FetchContent's on CMake 3.25 (and any CMake before 3.30: a sub-build per
dependency), <= 1.0x on the newest; cold bytes <= 0.5x FetchContent's GIT_SHALLOW clone,
<= 0.1x its full clone.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import fixtures as fx

REPO = Path(__file__).resolve().parent.parent
PROVIDER = REPO / "cmake" / "QoLAProvider.cmake"

PROJECT = """\
cmake_minimum_required(VERSION 3.24)
project(bench LANGUAGES NONE)
include(FetchContent)
FetchContent_Declare(history GIT_REPOSITORY "@HISTORY@" GIT_TAG v1)
FetchContent_Declare(withsub GIT_REPOSITORY "@WITHSUB@" GIT_TAG v2 GIT_SHALLOW TRUE)
if(BENCH_DEPS)
  FetchContent_MakeAvailable(${BENCH_DEPS})
endif()
"""

# (history, withsub, nested), generated as run.py's large repository. history is a mature
# library: years of commits, its history's bytes rewritten 24 times its tree's (a full clone
# ~13x its depth-1 fetch; run.py's AITER-shaped repository, 11 times, gives ~7x).
SPECS = {
    False: (fx.LargeSpec(files=200, tree_bytes=8 << 20, commits=1500, history_factor=24,
                         behind=120),
            fx.LargeSpec(files=100, tree_bytes=4 << 20, commits=800, history_factor=6, behind=0),
            fx.LargeSpec(files=60, tree_bytes=2 << 20, commits=600, history_factor=8,
                         behind=30)),
    True: (fx.LargeSpec(files=40, tree_bytes=1 << 20, commits=300, history_factor=24,
                        behind=120),
           fx.LargeSpec(files=30, tree_bytes=512 << 10, commits=200, history_factor=6, behind=0),
           fx.LargeSpec(files=20, tree_bytes=256 << 10, commits=150, history_factor=8,
                        behind=30)),
}  # fmt: skip
GOALS = {"reconfigure_old": 0.2, "reconfigure_newest": 1.0, "shallow": 0.5, "full": 0.1}


def run(words: list[str], env: dict[str, str], cwd: Path | None = None) -> float:
    """Run; exit when it fails. Its wall time in seconds."""
    start = time.perf_counter()
    proc = subprocess.run(words, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(words)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return wall


def build_upstreams(git: fx.Git, daemon: fx.Daemon, quick: bool) -> dict[str, str]:
    """history.git (tag v1 at its pin), nested.git, withsub.git (tag v2 at main, release
    branches, nested at its pin); what each tag names."""
    history_spec, withsub_spec, nested_spec = SPECS[quick]
    history = fx.build_large(git, daemon, history_spec, "history.git")
    git(history.path, "tag", "v1", history.pin)
    nested = fx.build_large(git, daemon, nested_spec, "nested.git")
    modules = f'[submodule "extern/nested"]\n\tpath = extern/nested\n\turl = {nested.url}\n'
    extra = b"M 100644 inline .gitmodules\ndata %d\n%s\n" % (len(modules), modules.encode())
    extra += b"M 160000 %s extern/nested\n" % nested.pin.encode()
    withsub = fx.build_large(git, daemon, withsub_spec, "withsub.git", extra)
    git(withsub.path, "tag", "-a", "-m", "release 2", "v2", withsub.tip)
    commits = withsub_spec.commits
    for branch, back in (("release/1", commits // 2), ("release/1.1", commits // 4)):
        git(withsub.path, "branch", branch, f"main~{back}")
    return {"history": history.pin, "withsub": withsub.tip, "nested": nested.pin}


def cmake_version(cmake: str) -> tuple[int, int]:
    out = subprocess.run([cmake, "--version"], capture_output=True, text=True, check=True).stdout
    found = re.search(r"version (\d+)\.(\d+)", out)
    assert found is not None, out
    return int(found.group(1)), int(found.group(2))


def measure(cmake: str, base: Path, counter: fx.Counter, env: dict[str, str], repeat: int
            ) -> dict[str, object]:  # fmt: skip
    """The reconfigure medians and the cold bytes for one CMake."""
    version = cmake_version(cmake)
    work = base / f"cmake-{version[0]}.{version[1]}"
    text = (PROJECT.replace("@HISTORY@", counter.url("history.git"))
            .replace("@WITHSUB@", counter.url("withsub.git")))  # fmt: skip
    trees = {}
    for name in ("fc", "qola", "bare"):
        trees[name] = work / f"src-{name}"
        trees[name].mkdir(parents=True)
        (trees[name] / "CMakeLists.txt").write_text(text)
    both = "-DBENCH_DEPS=history;withsub"

    def configure(tree: str, build: str, *args: str) -> float:
        words = [cmake, "-S", str(trees[tree]), "-B", str(work / build), "-G", "Ninja", *args]
        return run(words, env)

    provider = f"-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES={PROVIDER}"
    # Cold, one dependency at a time: the bytes the server sent.
    cold: dict[str, dict[str, int]] = {}
    for dep in ("history", "withsub"):
        counter.take()
        configure("fc", f"cold-fc-{dep}", f"-DBENCH_DEPS={dep}")
        fc = counter.take()
        configure("qola", f"cold-lock-{dep}", f"-DBENCH_DEPS={dep}", provider, "-DQOLA_LOCK=ON")
        shutil.rmtree(trees["qola"] / "3rdparty" / dep)  # the lock's checkout: not measured
        shutil.rmtree(work / f"cold-lock-{dep}")
        counter.take()
        configure("qola", f"cold-qola-{dep}", f"-DBENCH_DEPS={dep}", provider)
        cold[dep] = {"fetchcontent": fc, "qola": counter.take()}

    # Reconfigure, nothing changed.
    configure("fc", "fc", both)
    configure("qola", "qola", both, provider)
    configure("bare", "bare")
    variants = {"fetchcontent": ("fc", "fc"), "provider": ("qola", "qola"),
                "no dependencies": ("bare", "bare")}  # fmt: skip
    if version >= (3, 30):
        configure("fc", "fc-direct", both, "-DCMAKE_POLICY_DEFAULT_CMP0168=NEW")
        variants["fetchcontent CMP0168 NEW"] = ("fc", "fc-direct")
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, (tree, build) in variants.items():
            samples[name].append(configure(tree, build))
    medians = {name: statistics.median(walls) * 1000 for name, walls in samples.items()}
    return {"version": f"{version[0]}.{version[1]}", "reconfigure_ms": medians, "cold": cold}


def report(results: list[dict[str, object]]) -> list[dict[str, object]]:
    """Print the tables and the goals; the goals as JSON-ready rows."""
    goals: list[dict[str, object]] = []
    for result in results:
        version = str(result["version"])
        medians = result["reconfigure_ms"]
        cold = result["cold"]
        assert isinstance(medians, dict) and isinstance(cold, dict)
        print(f"CMake {version}: unchanged reconfigure, medians")
        for name, ms in medians.items():
            print(f"  {name:<26} {ms:8.1f} ms")
        ratio = medians["provider"] / medians["fetchcontent"]
        major, minor = (int(part) for part in version.split("."))
        newest = (major, minor) >= (3, 30)  # FetchContent can do without its sub-build
        limit = GOALS["reconfigure_newest" if newest else "reconfigure_old"]
        goals.append({"name": f"reconfigure provider / FetchContent, CMake {version}",
                      "value": round(ratio, 3), "limit": limit, "pass": ratio <= limit})
        print(f"CMake {version}: cold configure, bytes the server sent")
        for dep, how in (("withsub", "GIT_SHALLOW clone"), ("history", "full clone")):
            fc, qola = cold[dep]["fetchcontent"], cold[dep]["qola"]
            print(f"  {dep:<8} FetchContent ({how}) {fc / 1e6:8.2f} MB   qola {qola / 1e6:8.2f} MB"
                  f"   {qola / fc:.3f}x")
            limit = GOALS["shallow" if dep == "withsub" else "full"]
            goals.append({"name": f"cold bytes qola / FetchContent's {how}, CMake {version}",
                          "value": round(qola / fc, 3), "limit": limit,
                          "pass": qola / fc <= limit})  # fmt: skip
    print(f"\n{'goal':<62} {'measured':>9} {'goal':>7}")
    for goal in goals:
        verdict = "PASS" if goal["pass"] else "MISS"
        print(f"{goal['name']:<62} {goal['value']:>8}x {'<= ' + str(goal['limit']):>7} {verdict}")
    return goals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small repositories, 3 repetitions")
    parser.add_argument("--repeat", type=int, default=None, help="reconfigure runs (default 9)")
    parser.add_argument("--cmake", action="append", help="a CMake to measure (repeatable)")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    repeat = args.repeat or (3 if args.quick else 9)
    cmakes = args.cmake or [c for c in (shutil.which("cmake"),
                                        str(REPO / ".test-cmake/newest/cmake/data/bin/cmake"))
                            if c and Path(c).is_file()]  # fmt: skip
    if not cmakes or shutil.which("ninja") is None:
        sys.exit("needs cmake (3.24 or newer) and ninja")
    base = Path(tempfile.mkdtemp(prefix="qola-bench-provider-"))
    try:
        env = fx.isolated_env(base)
        env["QOLA_PYTHON"] = fx.plain_python(base, REPO)
        env["PYTHONPYCACHEPREFIX"] = str(base / "pycache")
        git = fx.Git(env)
        results = []
        with fx.git_daemon(base / "served", env) as daemon, fx.byte_counter(daemon) as counter:
            pins = build_upstreams(git, daemon, args.quick)
            for cmake in cmakes:
                results.append(measure(cmake, base, counter, env, repeat))
        goals = report(results)
        if args.json is not None:
            args.json.write_text(json.dumps({"schema": 1, "pins": pins, "results": results,
                                             "goals": goals}, indent=2) + "\n")  # fmt: skip
    finally:
        if args.keep:
            print(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
