"""qola against git's own commands and its speed goals, measured side by side in one run.

    python bench/run.py [--quick] [--repeat K] [--cold-repeat K] [--json PATH] [--qola DIR]

Builds its own fixtures in a temporary folder (bench/fixtures.py), served by a `git daemon`
on 127.0.0.1, then times, interleaved within each repetition so that machine noise hits
every variant alike:

  no-op     qola checkout | git submodule update --init --recursive   (N = 1, 10, 50)
  verify    qola verify   | git submodule status --recursive          (same trees)
  cold      qola checkout of a pin 100+ commits behind the tip of a large repository
            | git clone + git checkout <pin>  (| git fetch --depth 1 <pin>
            | git clone --filter=blob:none --no-checkout + checkout <pin>, for reference)
  cache     a second qola checkout --cache DIR in a fresh folder      | the same git clone
  workflow  qola diff, qola outdated of that pin (bytes the server sent) | git fetch of main
  jobs      qola checkout --jobs 1 | --jobs 2 | --jobs 4, 10 dependencies, cold
  cmake     bench/cmake_noop.py at N=10 (what a no-op qola_checkout() adds to a configure)

and prints medians (wall, child CPU, peak RSS, bytes received), the ratios qola/anchor next
to each goal (docs/performance.md) with PASS or MISS, and writes everything as JSON. The
qola under test is the checkout this file lives in (or --qola DIR), run as
`python -m qola.cli`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import fixtures as fx

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Sample:
    """One timed run of a variant (possibly several processes, one after the other)."""

    wall: float  # seconds
    cpu: float  # seconds, user + system, of the processes and the children they waited for
    rss_kb: int  # the largest max RSS among them (wait4's ru_maxrss)
    received: int | None = None  # bytes added to object stores, where that is the point


@dataclass
class Medians:
    wall_ms: float
    cpu_ms: float
    rss_mb_max: float
    received: int | None
    runs: int


def timed(steps: Sequence[tuple[Path, Sequence[str]]], env: dict[str, str]) -> tuple[Sample, str]:
    """Run each (cwd, command) in turn; exit when one fails. The sample and the last stdout."""
    sample = Sample(0.0, 0.0, 0)
    stdout = ""
    for cwd, command in steps:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            start = time.perf_counter()
            proc = subprocess.Popen(list(command), cwd=cwd, env=env, stdout=out, stderr=err)
            # wait4, not Popen.wait: it also returns this child's own rusage (max RSS, CPU).
            _pid, status, usage = os.wait4(proc.pid, 0)
            sample.wall += time.perf_counter() - start
            proc.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            stdout = out.read().decode(errors="replace")
            if proc.returncode != 0:
                sys.exit(
                    f"{' '.join(command)} (in {cwd}) failed with {proc.returncode}:\n"
                    f"{stdout}{err.read().decode(errors='replace')}"
                )
        sample.cpu += usage.ru_utime + usage.ru_stime
        sample.rss_kb = max(sample.rss_kb, usage.ru_maxrss)
    return sample, stdout


def interleave(
    variants: dict[str, Callable[[int], Sample]], repeat: int
) -> dict[str, list[Sample]]:
    """Run every variant once per repetition, rotating the order so none always goes first."""
    samples: dict[str, list[Sample]] = {name: [] for name in variants}
    names = list(variants)
    for i in range(repeat):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            samples[name].append(variants[name](i))
    return samples


def medians(samples: list[Sample]) -> Medians:
    received = [s.received for s in samples if s.received is not None]
    return Medians(
        wall_ms=statistics.median(s.wall for s in samples) * 1000,
        cpu_ms=statistics.median(s.cpu for s in samples) * 1000,
        rss_mb_max=max(s.rss_kb for s in samples) / 1024,
        received=int(statistics.median(received)) if received else None,
        runs=len(samples),
    )


@dataclass
class Goal:
    """One goal: a measured value (None: not measurable in this run) against a limit."""

    name: str
    value: float | None
    op: str  # "<=", "<" or ">="
    limit: float
    unit: str = "x"
    note: str = ""

    @property
    def status(self) -> str:
        if self.value is None:
            return "n/a"
        ok = {
            "<=": self.value <= self.limit,
            "<": self.value < self.limit,
            ">=": self.value >= self.limit,
        }
        return "PASS" if ok[self.op] else "MISS"


@dataclass
class Results:
    sections: dict[str, dict[str, Medians]] = field(default_factory=dict)
    goals: list[Goal] = field(default_factory=list)
    facts: dict[str, object] = field(default_factory=dict)


class Bench:
    """The fixtures of one run, and the measurements made on them."""

    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.work = work
        self.env = fx.isolated_env(work)
        self.env.pop("PYTHONPATH", None)
        self.python = fx.plain_python(work, args.qola)
        # Users run qola from an installed package with its bytecode cached; without a cache
        # every run would compile qola's modules again. Kept here, not in the checkout.
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        self.git = fx.Git(self.env)
        self.results = Results()
        self.qola = [self.python, "-m", "qola.cli"]

    def record(self, section: str, samples: dict[str, list[Sample]]) -> dict[str, Medians]:
        self.results.sections[section] = {name: medians(s) for name, s in samples.items()}
        return self.results.sections[section]

    def has_option(self, option: str) -> bool:
        help_text = self.git.run(self.work, *self.qola, "checkout", "--help")
        return option in help_text

    # -- no-op and verify ---------------------------------------------------------------------

    def noop(self, daemon: fx.Daemon, shas: list[str], count: int) -> dict[str, Medians]:
        root = self.work / f"noop-{count}"
        fx.build_superproject(self.git, root, fx.dep_pins(daemon, shas, count))
        self.git(root, "submodule", "update", "-q", "--init", "--recursive")
        # qola's first run may remember each pin's gitlinks: untimed, like git's first update.
        self.git.run(root, *self.qola, "checkout")
        status = self.git(root, "submodule", "status", "--recursive")
        if any(line[:1] in "+-U" for line in status.splitlines()):
            sys.exit(f"the no-op fixture is not in sync:\n{status}")

        network: list[int] = []

        def qola(command: str) -> Callable[[int], Sample]:
            def variant(_i: int) -> Sample:
                before = daemon.connections()
                sample, out = timed([(root, [*self.qola, command])], self.env)
                network.append(daemon.connections() - before)
                if command == "checkout" and out.count("up to date") != count:
                    sys.exit(f"qola checkout was not a no-op at N={count}:\n{out}")
                return sample

            return variant

        def git(*args: str) -> Callable[[int], Sample]:
            return lambda _i: timed([(root, ["git", *args])], self.env)[0]

        # The same tree as `git submodule add` leaves it: each dependency on a branch at its
        # pin (a stamp watches the branch's ref).
        on_branch = self.work / f"noop-{count}-branch"
        shutil.copytree(root, on_branch, symlinks=True)
        for line in self.git(on_branch, "submodule", "status").splitlines():
            self.git(on_branch / line.split()[1], "checkout", "-q", "-B", "main")
        self.git.run(on_branch, *self.qola, "checkout")

        def branch_noop(_i: int) -> Sample:
            sample, out = timed([(on_branch, [*self.qola, "checkout"])], self.env)
            if out.count("up to date") != count:
                sys.exit(f"qola checkout on branches was not a no-op at N={count}:\n{out}")
            return sample

        def unstamped(i: int) -> Sample:
            # The first no-op after a change: no stamp to answer from (removed untimed).
            shutil.rmtree(root / ".git" / "qola" / "noop", ignore_errors=True)
            return qola("checkout")(i)

        samples = interleave(
            {
                "qola checkout": qola("checkout"),
                "qola checkout, no stamp": unstamped,
                "qola checkout, on branches": branch_noop,
                "git submodule update": git("submodule", "update", "--init", "--recursive"),
                "qola verify": qola("verify"),
                "git submodule status": git("submodule", "status", "--recursive"),
                # What starting this interpreter (with its site-packages) costs: qola's floor.
                "python -c pass": lambda _i: timed(
                    [(root, [self.python, "-c", "pass"])], self.env
                )[0],
            },
            self.args.repeat,
        )
        time.sleep(0.2)  # the daemon's children log a connection after accepting it
        self.results.facts[f"noop_connections_n{count}"] = sum(network)
        return self.record(f"noop N={count}", samples)

    # -- cold, cache ---------------------------------------------------------------------------

    def cold(self, large: fx.Large, with_cache: bool) -> dict[str, Medians]:
        runs = self.work / "cold"
        runs.mkdir()
        cache = self.work / "qola-cache"
        pins = {"large": ("large", large.url, large.pin)}

        def fresh(name: str) -> Path:
            root = runs / name
            root.mkdir()
            (root / "qola.toml").write_text(fx.manifest(pins))
            return root

        def clone(i: int) -> Sample:
            target = runs / f"clone-{i}"
            sample, _ = timed(
                [
                    (runs, ["git", "clone", "-q", large.url, target.name]),
                    (target, ["git", "checkout", "-q", "--detach", large.pin]),
                ],
                self.env,
            )
            sample.received = fx.object_bytes(target / ".git")
            shutil.rmtree(target)
            return sample

        def shallow(i: int) -> Sample:
            target = runs / f"shallow-{i}"
            target.mkdir()
            sample, _ = timed(
                [
                    (target, ["git", "init", "-q"]),
                    (target, ["git", "fetch", "-q", "--depth", "1", large.url, large.pin]),
                    (target, ["git", "checkout", "-q", "--detach", large.pin]),
                ],
                self.env,
            )
            sample.received = fx.object_bytes(target / ".git")
            shutil.rmtree(target)
            return sample

        def partial(i: int) -> Sample:
            # A partial clone: every commit and tree, then only the pin's blobs (fetched
            # lazily by the checkout, in one batch). Needs uploadpack.allowFilter.
            target = runs / f"partial-{i}"
            sample, _ = timed(
                [
                    (
                        runs,
                        ["git", "clone", "-q", "-n", "--filter=blob:none", large.url, target.name],
                    ),
                    (target, ["git", "checkout", "-q", "--detach", large.pin]),
                ],
                self.env,
            )
            sample.received = fx.object_bytes(target / ".git")
            shutil.rmtree(target)
            return sample

        def qola(i: int) -> Sample:
            root = fresh(f"qola-{i}")
            sample, _ = timed([(root, [*self.qola, "checkout"])], self.env)
            sample.received = fx.object_bytes(root / "large" / ".git")
            shutil.rmtree(root)
            return sample

        def qola_cache(i: int) -> Sample:
            root = fresh(f"cache-{i}")
            before = fx.tree_bytes(cache)
            sample, _ = timed([(root, [*self.qola, "checkout", "--cache", str(cache)])], self.env)
            # What the checkout's own store received, plus whatever the cache took in (all of
            # its files: an upper bound for what a mirror update fetched).
            sample.received = fx.object_bytes(root / "large" / ".git")
            sample.received += max(0, fx.tree_bytes(cache) - before)
            shutil.rmtree(root)
            return sample

        def qola_fill(i: int) -> Sample:
            # A first checkout with an empty cache of its own: what filling it costs.
            root, empty = fresh(f"fill-{i}"), self.work / f"qola-cache-fill-{i}"
            sample, _ = timed([(root, [*self.qola, "checkout", "--cache", str(empty)])], self.env)
            sample.received = fx.object_bytes(root / "large" / ".git") + sum(
                fx.object_bytes(mirror) for mirror in empty.glob("*.git")
            )
            shutil.rmtree(root)
            shutil.rmtree(empty)
            return sample

        variants = {
            "git clone + checkout": clone,
            "git fetch --depth 1": shallow,
            "git clone blob:none": partial,
            "qola checkout": qola,
        }
        if with_cache:
            variants["qola checkout --cache, first fill"] = qola_fill
            # The first checkout fills the cache; untimed, as the goal is about the second.
            first = fresh("cache-fill")
            self.git.run(first, *self.qola, "checkout", "--cache", str(cache))
            variants["qola checkout --cache"] = qola_cache
        return self.record("cold", interleave(variants, self.args.cold_repeat))

    # -- diff and outdated: what they fetch, beside git fetch of the tracked branch ------------

    def workflow(self, large: fx.Large, daemon: fx.Daemon) -> dict[str, Medians]:
        """qola diff and qola outdated on a pin 120 commits behind the tip of the large
        repository, its dependency not checked out; the bytes the server sent each, counted
        by a relay (they land in temporary repositories that are gone afterwards)."""
        runs = self.work / "workflow"
        runs.mkdir()
        with fx.byte_counter(daemon) as counter:
            url = counter.url(large.path.name)

            def project(name: str, head_pin: str, work_pin: str) -> Path:
                root = runs / name
                root.mkdir()
                manifest = root / "qola.toml"
                pins = {"large": ("large", url, head_pin)}
                manifest.write_text(fx.manifest(pins) + 'track = "main"\n')
                self.git(root, "init", "-q")
                self.git(root, "add", "qola.toml")
                self.git(root, "commit", "-q", "-m", "pins")
                manifest.write_text(manifest.read_text().replace(head_pin, work_pin))
                return root

            diff_root = project("diff", large.pin, large.tip)
            diff_help = self.git.run(self.work, *self.qola, "diff", "--help")
            stat = "--stat" if "--stat" in diff_help else "-v"
            outdated_root = project("outdated", large.pin, large.pin)

            def counted(steps: list[tuple[Path, list[str]]], cleanup: Path | None = None) -> Sample:
                counter.take()
                sample, _ = timed(steps, self.env)
                sample.received = counter.take()
                if cleanup is not None:
                    shutil.rmtree(cleanup)
                return sample

            def qola(root: Path, *args: str) -> Callable[[int], Sample]:
                return lambda _i: counted([(root, [*self.qola, *args])])

            def fetch_branch(*options: str) -> Callable[[int], Sample]:
                def variant(i: int) -> Sample:
                    target = runs / f"fetch{'-'.join(options)}-{i}"
                    target.mkdir()
                    self.git(target, "init", "-q")
                    steps = [(target, ["git", "fetch", "-q", *options, url, "main"])]
                    return counted(steps, cleanup=target)

                return variant

            def fetch_into_clone(i: int) -> Sample:
                # A full clone made when the tip was the pin, brought up to date: the
                # 120 commits' trees and blobs.
                target = runs / f"clone-at-pin-{i}"
                target.mkdir()
                self.git(target, "init", "-q")
                self.git(target, "fetch", "-q", url, f"{large.pin}:refs/remotes/origin/main")
                steps = [(target, ["git", "fetch", "-q", url, "main:refs/remotes/origin/main"])]
                return counted(steps, cleanup=target)

            variants = {
                "qola diff": qola(diff_root, "diff"),
                # (-v added the summary before `--stat` had an option of its own)
                "qola diff --stat": qola(diff_root, "diff", stat),
                "qola outdated": qola(outdated_root, "outdated"),
                "git fetch main": fetch_branch(),
                "git fetch main, clone": fetch_into_clone,
                "git fetch main blob:none": fetch_branch("--filter=blob:none"),
            }
            return self.record("workflow", interleave(variants, self.args.cold_repeat))

    # -- nested: an AITER-shaped submodule with a composable_kernel-shaped one inside --------

    def nested(self, repos: fx.Nested, with_cache: bool) -> dict[str, Medians]:
        runs = self.work / "nested"
        runs.mkdir()
        cache = self.work / "qola-cache-nested"
        aiter_modules = Path(".git/modules/3rdparty/aiter")
        ck_modules = aiter_modules / "modules" / fx.CK_PATH

        def clone(name: str) -> Path:
            """The superproject as a developer clones it (untimed): aiter not initialised."""
            root = runs / name
            self.git(runs, "clone", "-q", repos.superproject, root)
            return root

        def stores(root: Path) -> int:
            """Bytes in aiter's and composable_kernel's object stores, where git keeps them."""
            return sum(
                fx.object_bytes(root / gitdir) if (root / gitdir).is_dir() else 0
                for gitdir in (aiter_modules, ck_modules)
            )

        def update(*depth: str) -> Callable[[int], Sample]:
            def run(i: int) -> Sample:
                root = clone(f"git{''.join(depth)}-{i}")
                command = ["git", "submodule", "update", "-q", "--init", "--recursive", *depth]
                sample, _ = timed([(root, command)], self.env)
                sample.received = stores(root)
                shutil.rmtree(root)
                return sample

            return run

        def qola(*options: str) -> Callable[[int], Sample]:
            def run(i: int) -> Sample:
                root = clone(f"qola{len(options)}-{i}")
                before = fx.tree_bytes(cache) if options else 0
                sample, _ = timed([(root, [*self.qola, "checkout", *options])], self.env)
                sample.received = stores(root)
                if options:  # what the cache took in too (an upper bound for a mirror update)
                    sample.received += max(0, fx.tree_bytes(cache) - before)
                shutil.rmtree(root)
                return sample

            return run

        def floor(i: int) -> Sample:
            """Each repository's depth-1 fetch of its pin: the least any checkout can move."""
            steps = []
            targets = []
            for large in (repos.aiter, repos.ck):
                target = runs / f"floor-{large.path.stem}-{i}"
                target.mkdir()
                targets.append(target)
                steps += [
                    (target, ["git", "init", "-q"]),
                    (target, ["git", "fetch", "-q", "--depth", "1", large.url, large.pin]),
                ]
            sample, _ = timed(steps, self.env)
            sample.received = sum(fx.object_bytes(t / ".git") for t in targets)
            for target in targets:
                shutil.rmtree(target)
            return sample

        variants = {
            "git submodule update": update(),
            "git ... --depth 1": update("--depth", "1"),
            "depth-1 floors": floor,
            "qola checkout": qola(),
        }
        if with_cache:
            # The first checkout fills the cache; untimed, as the goal is about the second.
            first = clone("cache-fill")
            self.git.run(first, *self.qola, "checkout", "--cache", str(cache))
            shutil.rmtree(first)
            variants["qola checkout --cache"] = qola("--cache", str(cache))
        return self.record("nested", interleave(variants, self.args.cold_repeat))

    # -- jobs ------------------------------------------------------------------------------------

    def jobs(self, daemon: fx.Daemon, shas: list[str], count: int) -> dict[str, Medians]:
        pins = fx.dep_pins(daemon, shas, count)

        def variant(jobs: int) -> Callable[[int], Sample]:
            def run(i: int) -> Sample:
                root = self.work / f"jobs{jobs}-{i}"
                root.mkdir()
                (root / "qola.toml").write_text(fx.manifest(pins))
                sample, _ = timed([(root, [*self.qola, "checkout", "--jobs", str(jobs)])], self.env)
                shutil.rmtree(root)
                return sample

            return run

        samples = interleave(
            {"qola --jobs 1": variant(1), "qola --jobs 2": variant(2), "qola --jobs 4": variant(4)},
            self.args.cold_repeat,
        )
        return self.record(f"jobs N={count}", samples)

    # -- cmake ---------------------------------------------------------------------------------

    def cmake(self) -> dict[str, float] | None:
        """Run cmake_noop.py (of the qola under test) at N=10; what it printed, parsed."""
        script = self.args.qola / "bench" / "cmake_noop.py"
        if shutil.which("cmake") is None or not script.exists():
            return None
        generator = "Ninja" if shutil.which("ninja") else "Unix Makefiles"
        command = [
            self.python,
            str(script),
            "--deps",
            "10",
            "--repeat",
            str(self.args.repeat),
            "--generator",
            generator,
        ]
        out = self.git.run(self.work, *command)
        print(out.replace("\n", "\n  ").join(["  ", "\n"]), end="")
        parsed: dict[str, float] = {}
        for name, wall, ratio in re.findall(
            r"^(cmake-\w+) adds ([-\d.]+) ms wall \(([-\d.]+)x", out, re.M
        ):
            parsed[f"{name} adds ms"] = float(wall)
            parsed[f"{name} ratio"] = float(ratio)
        for name, wall, cpu in re.findall(r"^([\w-]+)\s+([\d.]+)\s+([\d.]+)$", out, re.M):
            parsed[f"{name} wall ms"] = float(wall)
            parsed[f"{name} cpu ms"] = float(cpu)
        return parsed


# -- the report ------------------------------------------------------------------------------


def ratio(
    results: Results, section: str, qola: str, anchor: str, key: str = "wall_ms"
) -> float | None:
    """qola's median over the anchor's, when both were measured."""
    variants = results.sections.get(section, {})
    if qola not in variants or anchor not in variants:
        return None
    top, bottom = getattr(variants[qola], key), getattr(variants[anchor], key)
    return None if top is None or not bottom else top / bottom


def evaluate(results: Results, cmake: dict[str, float] | None) -> list[Goal]:
    """The goals, each with the ratio this run measured."""
    secs = results.sections
    goals = []
    for n, limit in ((10, 0.6), (50, 0.2)):
        section = f"noop N={n}"
        goals.append(
            Goal(
                f"no-op checkout / git submodule update, N={n}",
                ratio(results, section, "qola checkout", "git submodule update"),
                "<=",
                limit,
            )
        )
        goals.append(
            Goal(
                f"  the same on a tree whose dependencies sit on a branch, N={n}",
                ratio(results, section, "qola checkout, on branches", "git submodule update"),
                "<=",
                limit,
            )
        )
        first = ratio(results, section, "qola checkout, no stamp", "git submodule update")
        if n == 10:
            goals.append(
                Goal(f"the first no-op after a change (no stamp), N={n}", first, "<=", 1.0)
            )
    per_dep = {
        n: secs[f"noop N={n}"]["qola checkout"].wall_ms / n
        for n in (10, 50)
        if f"noop N={n}" in secs
    }
    flat = per_dep[50] / per_dep[10] if len(per_dep) == 2 else None
    note = ", ".join(f"{v:.2f} ms/dep at N={n}" for n, v in per_dep.items())
    if flat is not None:
        slope = (per_dep[50] * 50 - per_dep[10] * 10) / 40
        note += f"; marginal {slope:.2f} ms per extra dep from 10 to 50"
    goals.append(Goal("no-op ms/dep at N=50 / at N=10 (flat)", flat, "<=", 1.0, note=note))
    connections = [v for k, v in results.facts.items() if k.startswith("noop_connections")]
    goals.append(
        Goal(
            "no-op checkout+verify: connections to the server",
            float(sum(connections)) if connections else None,
            "<=",
            0,
            unit="",
        )
    )
    stamp = cmake.get("cmake-stamp ratio") if cmake else None
    goals.append(
        Goal(
            "CMake: no-op qola_checkout() adds / git's no-op, N=10",
            stamp,
            "<=",
            0.05,
            note=(
                f"without the stamp (runs qola): {cmake['cmake-qola ratio']:.2f}x"
                if cmake and "cmake-qola ratio" in cmake
                else "cmake_noop.py not run"
            ),
        ),
    )
    for n in (10, 50):
        goals.append(
            Goal(
                f"verify / git submodule status, N={n}",
                ratio(results, f"noop N={n}", "qola verify", "git submodule status"),
                "<=",
                1.0,
            )
        )
    anchor = "git clone + checkout"
    goals += [
        Goal(
            "cold checkout bytes / git clone",
            ratio(results, "cold", "qola checkout", anchor, "received"),
            "<=",
            0.20,
        ),
        Goal(
            "cold checkout wall / git clone + checkout",
            ratio(results, "cold", "qola checkout", anchor),
            "<=",
            0.65,
        ),
        Goal(
            "--cache first fill bytes / git fetch --depth 1",
            ratio(
                results,
                "cold",
                "qola checkout --cache, first fill",
                "git fetch --depth 1",
                "received",
            ),
            "<=",
            1.05,
        ),
        Goal(
            "--cache second checkout bytes / git clone",
            ratio(results, "cold", "qola checkout --cache", anchor, "received"),
            "<",
            0.01,
            note="" if "qola checkout --cache" in secs.get("cold", {}) else "--cache not available",
        ),
        Goal(
            "--cache second checkout wall / git clone + checkout",
            ratio(results, "cold", "qola checkout --cache", anchor),
            "<=",
            0.45,
        ),
    ]
    plain = "git submodule update"
    depth1 = ratio(results, "nested", "git ... --depth 1", "depth-1 floors", "received")
    goals += [
        Goal(
            "nested cold bytes / depth-1 floors (aiter + ck)",
            ratio(results, "nested", "qola checkout", "depth-1 floors", "received"),
            "<=",
            1.15,
            note="" if depth1 is None else f"git submodule update --depth 1: {depth1:.2f}x",
        ),
        Goal(
            "nested cold wall / git submodule update --init --recursive",
            ratio(results, "nested", "qola checkout", plain),
            "<=",
            0.6,
        ),
        Goal(
            "nested warm --cache bytes / git submodule update",
            ratio(results, "nested", "qola checkout --cache", plain, "received"),
            "<",
            0.01,
        ),
    ]
    workflow = secs.get("workflow", {})
    for command in ("qola diff", "qola outdated"):
        note = ""
        if command in workflow:
            clone = ratio(results, "workflow", command, "git fetch main, clone", "received")
            note = (
                f"{size(workflow[command].received)} against "
                f"{size(workflow['git fetch main'].received)}; {clone:.3f}x of what a full "
                "clone at the pin fetches to reach the tip"
            )
        goals.append(
            Goal(
                f"{command} bytes / git fetch of the tracked branch",
                ratio(results, "workflow", command, "git fetch main", "received"),
                "<=",
                0.01,
                note=note,
            )
        )
    jobs = next((s for name, s in secs.items() if name.startswith("jobs")), None)
    speedup = jobs["qola --jobs 1"].wall_ms / jobs["qola --jobs 2"].wall_ms if jobs else None
    # The goal is read one job per core; more jobs than cores is reported beside it.
    four = jobs["qola --jobs 1"].wall_ms / jobs["qola --jobs 4"].wall_ms if jobs else None
    goals.append(
        Goal(
            "--jobs 2 speed-up over --jobs 1, 10 deps cold",
            speedup,
            ">=",
            1.6,
            note=f"--jobs 4: {four:.2f}x" if four else "--jobs not available",
        )
    )
    rss = [v["qola checkout"].rss_mb_max for k, v in secs.items() if k.startswith("noop")]
    goals.append(Goal("no-op checkout peak RSS", max(rss) if rss else None, "<", 60, unit=" MB"))
    return goals


def size(n: int | None) -> str:
    if n is None:
        return ""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return ""


def print_report(results: Results, cmake: dict[str, float] | None) -> None:
    for section, variants in results.sections.items():
        runs = next(iter(variants.values())).runs
        print(f"\n{section} ({runs} interleaved runs, medians)")
        print(f"  {'variant':<24} {'wall ms':>9} {'cpu ms':>9} {'peak MB':>8} {'received':>10}")
        for name, m in variants.items():
            print(
                f"  {name:<24} {m.wall_ms:9.1f} {m.cpu_ms:9.1f} {m.rss_mb_max:8.1f} "
                f"{size(m.received):>10}"
            )
    if cmake:
        print("\ncmake N=10 (bench/cmake_noop.py, interleaved, medians)")
        for key, value in cmake.items():
            print(f"  {key:<24} {value:9.2f}")
    print(f"\n{'goal':<56} {'measured':>9} {'goal':>9}  result")
    for g in results.goals:
        value = "-" if g.value is None else f"{g.value:.3f}{g.unit}"
        limit = f"{g.op} {g.limit:g}{g.unit}"
        print(f"{g.name:<56} {value:>9} {limit:>9}  {g.status}")
        if g.note:
            print(f"    {g.note}")


# -- the run ---------------------------------------------------------------------------------

# A history rewriting 11x the tree's bytes (less in fact: a rewrite stops at the end of its
# file) makes the full pack 7.2x a depth-1 fetch, 103.5 MB against 14.4 MB, as AITER's is
# (a full clone of AITER 104 MB, a depth-1 fetch of its pin 15 MB).
QUICK_LARGE = fx.LargeSpec(files=40, tree_bytes=2 << 20, commits=300, history_factor=11, behind=120)
LARGE = fx.LargeSpec(files=600, tree_bytes=24 << 20, commits=3000, history_factor=11, behind=120)
# composable_kernel inside AITER: a smaller tree whose history is still several times it.
QUICK_CK = fx.LargeSpec(files=30, tree_bytes=1 << 20, commits=200, history_factor=8, behind=40)
CK = fx.LargeSpec(files=400, tree_bytes=10 << 20, commits=2000, history_factor=8, behind=40)
SECTIONS = ("noop", "cmake", "cold", "workflow", "nested", "jobs")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="smoke test: N=1,10, a 2 MB large repo, 3 repetitions"
    )
    parser.add_argument("--deps", help="no-op sizes N, comma-separated (default 1,10,50)")
    parser.add_argument("--repeat", type=int, help="repetitions of the fast rows (default 7)")
    parser.add_argument(
        "--cold-repeat", type=int, help="repetitions of the cold, cache and jobs rows (default 3)"
    )
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"sections to run, comma-separated, of {','.join(SECTIONS)}",
    )
    parser.add_argument(
        "--qola", type=Path, default=REPO, help="the qola checkout to benchmark (default: this one)"
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=REPO / "bench" / "results.json",
        help="where to write the results (default bench/results.json)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    args.qola = args.qola.resolve()
    args.sizes = [int(n) for n in (args.deps or ("1,10" if args.quick else "1,10,50")).split(",")]
    args.repeat = args.repeat or (3 if args.quick else 7)
    args.cold_repeat = args.cold_repeat or 3
    args.large = QUICK_LARGE if args.quick else LARGE
    args.ck = QUICK_CK if args.quick else CK
    args.dep_bytes = (32 if args.quick else 256) << 10
    args.only = set(args.only.split(","))
    return args


def progress(message: str, started: float = time.monotonic()) -> None:
    print(f"[{time.monotonic() - started:6.1f}s] {message}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="qola-bench-"))
    bench = Bench(args, work)
    facts = bench.results.facts
    # An unpacked sdist is no git checkout: its commit is unknown, not an error.
    checkout = (Path(args.qola) / ".git").exists()
    facts.update(
        date=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        loadavg_start=os.getloadavg(),
        cpus=os.cpu_count(),
        python=platform.python_version(),
        git=bench.git(work, "version"),
        qola=bench.git.run(work, bench.python, "-c", "import qola; print(qola.__file__)"),
        qola_commit=bench.git(args.qola, "rev-parse", "HEAD") if checkout else None,
        qola_dirty=bool(
            bench.git(
                args.qola, "status", "--porcelain", "--untracked-files=no", "--", "qola", "cmake"
            )
        )
        if checkout
        else None,
        quick=args.quick,
        repeat=args.repeat,
        cold_repeat=args.cold_repeat,
    )
    options = {o: bench.has_option(o) for o in ("--jobs", "--cache")}
    facts["checkout_options"] = options
    cmake = None
    try:
        with fx.git_daemon(work / "srv", bench.env) as daemon:
            count = max([*args.sizes, 10])
            progress(f"building {count} dependencies with a nested submodule each")
            shas = fx.build_deps(bench.git, daemon, count, args.dep_bytes)
            if "noop" in args.only:
                for n in args.sizes:
                    progress(f"no-op and verify, N={n}")
                    bench.noop(daemon, shas, n)
            if "cmake" in args.only:
                progress("cmake_noop.py, N=10")
                cmake = bench.cmake()
            if "cold" in args.only:
                progress(f"generating the large repository ({args.large})")
                large = fx.build_large(bench.git, daemon, args.large)
                facts["large"] = {
                    **asdict(args.large),
                    "pack_bytes": large.pack_bytes,
                    "pin": large.pin,
                    "tip": large.tip,
                }
                progress(f"cold checkout: pack {size(large.pack_bytes)}")
                bench.cold(large, with_cache=options["--cache"])
            if "workflow" in args.only:
                if "cold" not in args.only:
                    progress(f"generating the large repository ({args.large})")
                    large = fx.build_large(bench.git, daemon, args.large)
                    facts["large"] = {**asdict(args.large), "pack_bytes": large.pack_bytes,
                                      "pin": large.pin, "tip": large.tip}  # fmt: skip
                progress("diff and outdated: bytes fetched, beside git fetch of the branch")
                bench.workflow(large, daemon)
            if "nested" in args.only:
                progress(f"generating AITER- and composable_kernel-shaped repositories ({args.ck})")
                repos = fx.build_nested(bench.git, daemon, args.large, args.ck, work)
                facts["nested"] = {
                    "aiter_pack_bytes": repos.aiter.pack_bytes,
                    "ck": asdict(args.ck),
                    "ck_pack_bytes": repos.ck.pack_bytes,
                }
                progress(
                    f"nested: aiter pack {size(repos.aiter.pack_bytes)}, "
                    f"ck pack {size(repos.ck.pack_bytes)}"
                )
                bench.nested(repos, with_cache=options["--cache"])
            if "jobs" in args.only and options["--jobs"]:
                progress("cold checkout of 10 dependencies, --jobs 1, 2 and 4")
                bench.jobs(daemon, shas, 10)
    finally:
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    facts["loadavg_end"] = os.getloadavg()
    bench.results.goals = evaluate(bench.results, cmake)
    print_report(bench.results, cmake)
    document = {
        "schema": 1,
        "facts": facts,
        "sections": {
            s: {v: asdict(m) for v, m in vs.items()} for s, vs in bench.results.sections.items()
        },
        "cmake": cmake,
        "goals": [{**asdict(g), "status": g.status} for g in bench.results.goals],
    }
    args.json.write_text(json.dumps(document, indent=2) + "\n")
    print(f"\nload average {facts['loadavg_start']} -> {facts['loadavg_end']}; wrote {args.json}")


if __name__ == "__main__":
    main()
