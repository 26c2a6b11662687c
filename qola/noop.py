"""`qola checkout` when there is nothing to do: the path every CMake configure takes.

It answers from files alone: no click, no GitPython, no git process, no shim,
no lock (DESIGN §11). It reads the command line itself, but only the forms it
is sure the full command line reads the same way; anything else — an option
it does not know, a value the full parser might refuse, a dependency that
needs work, any error — makes it step aside having written nothing, and the
full command line (qola/cli.py) runs from the start and has the last word.

So it can only ever say what the full command would say for a tree that is
already at its pins: the same lines and the same CMake file.

Having answered, it keeps the answer in a stamp (qola/stamp.py) in the git dir
of the repository holding the manifest, one per command line, with the files
that prove it and the QOLA_SOURCE_DIR_<NAME> values. The next no-op with the
same command line checks those and prints the same lines without importing
the manifest or observation modules at all. A stamp that does not hold, or
cannot be read or written, only means the slower path.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from qola import stamp

# checkout's options that take a value, by every spelling; "" = not a value option.
_VALUED = {
    "-m": "manifest",
    "--manifest": "manifest",
    "--root": "root",
    "--safe-directory": "safe_directory",
    "-j": "jobs",
    "--jobs": "jobs",
    "--cache": "cache",
    "--cmake-out": "cmake_out",
    "--lock-timeout": "lock_timeout",
    "--fetch-timeout": "fetch_timeout",
}
_FLAGS = {"-v", "--verbose", "-q", "--quiet", "--offline", "--force"}
_ENV = {
    "manifest": "QOLA_MANIFEST",
    "root": "QOLA_ROOT",
    "safe_directory": "QOLA_SAFE_DIRECTORY",
    "jobs": "QOLA_JOBS",
    "cache": "QOLA_CACHE_DIR",
    "lock_timeout": "QOLA_LOCK_TIMEOUT",
    "fetch_timeout": "QOLA_FETCH_TIMEOUT",
}
# What click's boolean flags accept from QOLA_OFFLINE (anything else is an error there).
_BOOLEAN_WORDS = {"", "1", "0", "true", "false", "t", "f", "yes", "no", "y", "n", "on", "off"}


def main() -> None:
    """The console script: answer a no-op checkout here, else run the full command line."""
    from qola.platforms import require_supported

    require_supported()
    answer(sys.argv[1:])
    from qola.cli import main as full

    full()


def answer(argv: list[str]) -> None:
    """Exit 0 having printed the no-op's report when argv is a checkout with nothing to do.

    Returns (having written nothing) whenever that is not certain.
    """
    try:
        report = _noop(argv)
    except KeyboardInterrupt:
        print("qola: interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception:  # anything unexpected is the full command's to report
        return
    if report is None:
        return
    sys.stdout.write("".join(line + "\n" for line in report))
    sys.stdout.flush()
    sys.exit(0)


def parse(argv: list[str]) -> tuple[dict[str, str], list[str]] | None:
    """checkout's options (name -> value; flags map to "") and names, or None."""
    if not argv or argv[0] != "checkout":
        return None
    options: dict[str, str] = {}
    names: list[str] = []
    args = iter(argv[1:])
    for arg in args:
        if arg == "--":
            names.extend(args)  # as click reads it: everything after `--` is a name
            break
        if arg.startswith("-"):
            flag, equals, value = arg.partition("=")
            if flag in _FLAGS and not equals:
                options[flag.lstrip("-")] = ""
            elif flag in _VALUED and flag.startswith("--") and equals:
                options[_VALUED[flag]] = value
            elif arg in _VALUED:
                following = next(args, None)
                if following is None:
                    return None
                options[_VALUED[arg]] = following
            else:
                return None  # -h, -qv, -j4 and the like: the full parser's to read
        else:
            names.append(arg)
    for name, variable in _ENV.items():
        if name not in options and os.environ.get(variable):
            options[name] = os.environ[variable]
    if os.environ.get("QOLA_OFFLINE", "").strip().lower() not in _BOOLEAN_WORDS:
        return None
    if "_QOLA_COMPLETE" in os.environ:
        return None  # click's shell completion
    return options, names


def _valid(options: dict[str, str]) -> bool:
    """Would the full command line accept these values (as far as a no-op needs)?"""
    mode = options.get("safe_directory", "scoped")
    if mode.lower() not in ("scoped", "all", "off"):
        return False
    jobs = options.get("jobs", "1")
    if not jobs.isascii() or not jobs.isdigit() or int(jobs) < 1:
        return False
    for name, least in (("lock_timeout", 0.0), ("fetch_timeout", 0.0)):
        if name not in options:
            continue
        try:
            seconds = float(options[name])
        except ValueError:
            return False
        if seconds != seconds or seconds < least or (name == "fetch_timeout" and seconds == 0):
            return False  # NaN, negative, or a zero fetch timeout
    # click.Path(dir_okay=False) / (file_okay=False) refuse these before anything runs.
    for name in ("manifest", "cmake_out"):
        if name in options and (not options[name] or os.path.isdir(options[name])):
            return False
    for name in ("root", "cache"):
        if name in options and (not options[name] or os.path.isfile(options[name])):
            return False
    for name in ("manifest", "cmake_out", "root", "cache"):
        # click.Path(readable=True), its default, refuses an existing unreadable path.
        path = options.get(name)
        if path and os.path.exists(path) and not os.access(path, os.R_OK):
            return False
    return True


def _noop(argv: list[str]) -> list[str] | None:
    """The report's lines when every selected dependency needs nothing, else None."""
    parsed = parse(argv)
    if parsed is None or not _valid(parsed[0]):
        return None
    options, names = parsed
    invocation = {
        "format": stamp.FORMAT,
        "qola": _identity(),
        "manifest": os.path.abspath(options.get("manifest", "qola.toml")),
        "root": os.path.abspath(options["root"]) if options.get("root") else None,
        "names": names,
        "cmake_out": os.path.abspath(options["cmake_out"]) if "cmake_out" in options else None,
    }
    stamp_file = _stamp_file(invocation)
    if stamp_file is not None:
        lines = _answer_from_stamp(stamp_file, invocation)
        if lines is not None:
            return lines
    return _observe_all(invocation, stamp_file)


def _observe_all(invocation: dict[str, Any], stamp_file: str | None) -> list[str] | None:
    """The answer from the manifest and every dependency's files; a stamp of it when it can."""
    from qola.errors import QolaError
    from qola.manifest import load
    from qola.names import override_variable
    from qola.observe import observe

    manifest_path = Path(invocation["manifest"])
    cmake_out = invocation["cmake_out"]
    lines: list[str] = []

    def look() -> bool:
        """Every selected dependency at its pin or overridden: its report line, in lines."""
        for dep in deps:
            if dep.is_abbreviated:
                return False  # expanding a legacy pin asks git
            state = observe(manifest, dep, None)
            if state.overridden:
                what = f"overridden by {state.worktree}"
            elif state.is_synced:
                what = "up to date"
            else:
                return False
            lines.append(f"{dep.name} {dep.path} {dep.commit[:12]} {what}")
        return True

    try:
        root = invocation["root"]
        manifest = load(manifest_path, Path(root) if root else None)
        deps = manifest.select(invocation["names"])
        if manifest.warnings:
            return None  # (an abbreviated legacy pin, which expanding asks git for anyway)
        # The stamp lists what the loader and the look read, each as it was read.
        proof = stamp.proven(manifest, deps, look)
        if len(lines) != len(deps):
            return None  # some dependency needs work (look stopped there)
        if cmake_out is not None:
            from qola.cmake_out import write_for

            written = write_for(Path(cmake_out), manifest, deps, proof)
            if written is None:
                return None  # only git can read the root's index: the full command's to say
            proof = written  # with the root's index while a pin and its gitlink disagree
    except (QolaError, OSError, UnicodeDecodeError):
        return None
    pairs = proof.entries
    if stamp_file is not None and pairs is not None:
        if cmake_out is not None:
            pairs.append((cmake_out, stamp.expect(cmake_out)))
        env = {name: _override(name) for name in (override_variable(d.name) for d in deps)}
        _write_stamp(stamp_file, invocation, env, pairs, lines)
    return lines


def _identity() -> list[object]:
    """This qola: where it is, and each module's size and mtime (another install, or an
    edited module, never answers from a stamp this one wrote)."""
    folder = os.path.dirname(os.path.abspath(__file__))
    found: list[object] = [folder]
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.name.endswith(".py"):
                info = entry.stat()
                found.append([entry.name, info.st_size, info.st_mtime_ns])
    return found


def _override(variable: str) -> str:
    """An override's folder as observe.override_dir resolves it (a relative one from here)."""
    value = os.environ.get(variable)
    return os.path.abspath(value) if value else ""


def _stamp_file(invocation: dict[str, Any]) -> str | None:
    """Where this invocation's stamp lives: in the git dir of the repository holding the
    manifest (None when there is none)."""
    folder = os.path.dirname(invocation["manifest"])
    while not os.path.exists(os.path.join(folder, ".git")):
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    from qola.gitfiles import find_git_dir

    gitdir = find_git_dir(Path(folder))
    if gitdir is None:
        return None
    key = hashlib.sha256(json.dumps(invocation, sort_keys=True).encode()).hexdigest()[:32]
    from qola import store

    return store.noop_stamp(gitdir, key)


def _answer_from_stamp(path: str, invocation: dict[str, Any]) -> list[str] | None:
    """The lines a previous no-op printed, when nothing its stamp lists has changed since."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("invocation") != invocation:
        return None
    env, pairs, lines = data.get("env"), data.get("entries"), data.get("lines")
    if not (
        isinstance(env, dict)
        and isinstance(pairs, list)
        and all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
                for p in pairs)
        and isinstance(lines, list)
        and all(isinstance(line, str) for line in lines)
    ):  # fmt: skip
        return None
    if any(_override(name) != value for name, value in env.items()):
        return None  # an override was set, changed or removed
    return lines if stamp.holds((p[0], p[1]) for p in pairs) else None


def _write_stamp(
    path: str,
    invocation: dict[str, Any],
    env: dict[str, str],
    pairs: list[tuple[str, str]],
    lines: list[str],
) -> None:
    """Keep the answer with what proves it; a stamp that cannot be written is only slower."""
    data = {
        "invocation": invocation,
        "env": env,
        "entries": [[path, expectation] for path, expectation in pairs],
        "lines": lines,
    }
    from qola import store

    with contextlib.suppress(OSError):
        store.write_file(path, json.dumps(data).encode(), store.noop_stamp_gitdir(path))
