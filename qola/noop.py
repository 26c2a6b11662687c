"""`qola checkout` when there is nothing to do: the path every CMake configure takes.

It answers from files alone: no click, no GitPython, no git process, no shim,
no lock (DESIGN §11). It reads the command line itself, but only the forms it
is sure the full command line reads the same way; anything else — an option
it does not know, a value the full parser might refuse, a dependency that
needs work, any error — makes it step aside having written nothing, and the
full command line (qola/cli.py) runs from the start and has the last word.

So it can only ever say what the full command would say for a tree that is
already at its pins: the same lines and the same CMake file.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
                return None  # -h, --, -qv, -j4 and the like: the full parser's to read
        else:
            names.append(arg)
    for name, variable in _ENV.items():
        if name not in options and os.environ.get(variable):
            options[name] = os.environ[variable]
    if os.environ.get("QOLA_OFFLINE", "").strip().lower() not in _BOOLEAN_WORDS:
        return None
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
    return True


def _noop(argv: list[str]) -> list[str] | None:
    """The report's lines when every selected dependency needs nothing, else None."""
    parsed = parse(argv)
    if parsed is None or not _valid(parsed[0]):
        return None
    options, names = parsed
    from qola.errors import QolaError
    from qola.manifest import load
    from qola.observe import observe

    try:
        root = options.get("root")
        manifest = load(Path(options.get("manifest", "qola.toml")), Path(root) if root else None)
        deps = manifest.select(names)
        if manifest.warnings:
            return None  # (an abbreviated legacy pin, which expanding asks git for anyway)
        lines = []
        for dep in deps:
            if dep.is_abbreviated:
                return None  # expanding a legacy pin asks git
            state = observe(manifest, dep, None)
            if state.overridden:
                what = f"overridden by {state.worktree}"
            elif state.is_synced:
                what = "up to date"
            else:
                return None
            lines.append(f"{dep.name} {dep.path} {dep.commit[:12]} {what}")
        if "cmake_out" in options:
            from qola.cmake_out import write_for

            write_for(Path(options["cmake_out"]), manifest, deps)
    except (QolaError, OSError, UnicodeDecodeError):
        return None
    return lines
