"""`qola checkout` when there is nothing to do: the path every CMake configure takes.

It answers from files alone: no click, no GitPython, no git process, no shim,
no lock. It reads the command line itself, but only the forms it
is sure the full command line reads the same way; anything else — an option
it does not know, a value the full parser might refuse, a dependency that
needs work, any error — makes it step aside having written nothing, and the
full command line (qola/cli.py) runs from the start and has the last word.

So it can only ever say what the full command would say for a tree that is
already at its pins: the same lines and the same CMake file.

Having answered, it keeps the answer in a stamp (qola/repo/trail.py) in the git dir
of the repository holding the manifest, one per command line, with the files
that prove it and the QOLA_SOURCE_DIR_<NAME> values. The next no-op with the
same command line checks those and prints the same lines without importing
the manifest or observation modules at all. A stamp that does not hold, or
cannot be read or written, only means the slower path.
"""

from __future__ import annotations

import os
import sys

from qola.base import colour
from qola.base.digest import sha256_hex
from qola.commands import options
from qola.repo import noop_stamp, trail
from qola.repo.gitpaths import git_dir_of
from qola.sync import report

# What the stamped no-op imports is held to os, sys, marshal and qola's own small modules
# (a test lists them): typing, pathlib, re, json or hashlib would each cost it more than
# its own work does.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from qola.sync.at_pin import Handoff, Seen

Line = tuple[str, str]  # a report line: report.line's (what comes first, what it says)

# checkout's options by every spelling: the common ones may also come before `checkout`.
_COMMON = options.by_flag(options.COMMON)
_CHECKOUT = options.by_flag(options.COMMON + options.CHECKOUT)


def main() -> None:
    """The console script as installs made before qola.__main__:main took over name it.

    Run as `python -m qola` runs, without importing the command line from here.
    """
    import runpy

    runpy.run_module("qola", run_name="__main__", alter_sys=True)


def answer(argv: list[str]) -> Handoff | None:
    """Exit 0 having printed the no-op's report when argv is a checkout with nothing to do.

    Returns (having written nothing) whenever that is not certain: with what it loaded and
    observed meanwhile, for the full command to start from, when it got that far.
    """
    handoff: list[Handoff] = []
    try:
        found = _noop(argv, handoff)
    except KeyboardInterrupt:
        print("qola: interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception:  # anything unexpected is the full command's to report
        return None
    if found is None:
        return handoff[0] if handoff else None
    notes, lines = found
    if notes:
        sys.stderr.write("".join(f"qola: {note}\n" for note in notes))
        sys.stderr.flush()
    sys.stdout.write("".join(report.shown(first, what, _paint) + "\n" for first, what in lines))
    sys.stdout.flush()
    sys.exit(0)


def _paint(text: str, style: str) -> str:
    return colour.paint(text, style, sys.stdout)


def parse(argv: list[str]) -> tuple[dict[str, str], list[str], list[str]] | None:
    """checkout's options (dest -> value; flags map to ""), names and groups, or None.

    Common options may stand before `checkout` too: one given after it wins, as in
    qola/cli.py; then one given before it; then the environment.
    """
    before: dict[str, str] = {}
    args = iter(argv)
    for arg in args:
        if arg == "checkout":
            break
        if not _read_option(arg, args, _COMMON, before):
            return None  # another command, --version, -h, or a form only click reads
    else:
        return None
    options_: dict[str, str] = {}
    names: list[str] = []
    groups: list[str] = []  # --group (after `checkout` only), the one option given repeatedly
    for arg in args:
        if arg == "--":
            names.extend(args)  # as click reads it: everything after `--` is a name
            break
        if arg.startswith("-"):
            flag, equals, value = arg.partition("=")
            if flag == "--group":
                following = value if equals else next(args, None)
                if following is None:
                    return None
                groups.append(following)
            elif not _read_option(arg, args, _CHECKOUT, options_):
                return None  # -h, -qv, -j4 and the like: the full parser's to read
        else:
            names.append(arg)
    for dest, value in before.items():
        options_.setdefault(dest, value)
    for spec in options.COMMON + options.CHECKOUT:
        if spec.envvar is None or spec.dest in options_:
            continue  # given on the command line (either side of `checkout`): never read
        found = os.environ.get(spec.envvar)
        if spec.is_flag:
            if found is not None and not spec.accepts(found):
                return None  # click refuses it: the full command says so
        elif found:
            options_[spec.dest] = found
    if "_QOLA_COMPLETE" in os.environ:
        return None  # click's shell completion
    return options_, names, groups


def _read_option(arg: str, rest: Iterator[str], table: dict[str, options.Spec],
                 into: dict[str, str]) -> bool:  # fmt: skip
    """Read one option (taking its value from rest when separate); False: not one we read."""
    flag, equals, value = arg.partition("=")
    spec = table.get(flag)
    if spec is None:
        return False
    if spec.is_flag:
        if equals:
            return False
        into[spec.dest] = ""
    elif equals and flag.startswith("--"):
        into[spec.dest] = value
    elif not equals:
        following = next(rest, None)
        if following is None:
            return False
        into[spec.dest] = following
    else:
        return False
    return True


def _valid(options_: dict[str, str]) -> bool:
    """Would the full command line accept these values (as far as a no-op needs)?"""
    for spec in options.COMMON + options.CHECKOUT:
        if spec.dest in options_ and not spec.is_flag and not spec.accepts(options_[spec.dest]):
            return False
    return True


def _noop(argv: list[str], handoff: list[Handoff]) -> tuple[list[str], list[Line]] | None:
    """(notes for stderr, the report's lines) when every selected dependency needs
    nothing, else None (with what it loaded and observed in handoff, when it did)."""
    parsed = parse(argv)
    if parsed is None or not _valid(parsed[0]):
        return None
    given, names, groups = parsed
    searched_from = None
    if "manifest" in given:
        manifest = given["manifest"]
    else:  # as the full command line finds it (qola/commands/options.py)
        searched_from = os.getcwd()
        manifest = options.find_manifest(searched_from)[0]
    invocation = {
        "format": trail.FORMAT,
        "qola": _identity(),
        "manifest": os.path.abspath(manifest),
        "root": os.path.abspath(given["root"]) if given.get("root") else None,
        "names": names,
        "groups": groups,
        "cmake_out": os.path.abspath(given["cmake_out"]) if "cmake_out" in given else None,
    }
    notes = []
    if "verbose" in given and "quiet" not in given:  # what -v says (-q wins), as console.debug
        notes.append(options.manifest_note(manifest, searched_from))
    stamp_file = _stamp_file(invocation)
    if stamp_file is not None:
        lines = _answer_from_stamp(stamp_file, invocation)
        if lines is not None:
            return notes, lines
    from qola.repo.configfile import without_git  # lazy: only when the stamp misses

    with without_git():  # the no-op runs no git: where a reading needs git, it steps aside
        lines = _observe_all(invocation, stamp_file, handoff)
    return None if lines is None else (notes, lines)


def _observe_all(
    invocation: dict[str, Any], stamp_file: str | None, handoff: list[Handoff]
) -> list[Line] | None:
    """The answer from the manifest and every dependency's files; a stamp of it when it can.
    What it loaded and observed goes in handoff (the full command starts from it)."""
    from pathlib import Path  # lazy: only when the stamp misses

    from qola.base.errors import QolaError  # lazy: only when the stamp misses
    from qola.base.names import override_variable  # lazy: only when the stamp misses
    from qola.manifest import load  # lazy: only when the stamp misses
    from qola.repo.gitfiles import confined  # lazy: only when the stamp misses
    from qola.sync.at_pin import Handoff, look_at, verdict  # lazy: the fast path's fall-through

    manifest_path = Path(invocation["manifest"])
    cmake_out = invocation["cmake_out"]
    lines: list[Line] = []
    seen: dict[str, Seen] = {}

    def look() -> bool:
        """Every selected dependency at its pin or overridden: its report line, in lines.
        Each one is observed (for the full command, should it come to that)."""
        there = True
        for dep in deps:
            if dep.is_abbreviated:
                there = False  # expanding a legacy pin asks git
                continue
            try:
                found = seen[dep.name] = look_at(manifest, dep)
            except QolaError:
                there = False  # the full command says why (it may need git to read it)
                continue
            what = verdict(found.state)
            if what is None:
                there = False  # the full command decides, and says why
            elif there:
                lines.append(report.line(dep, what))
        return there

    try:
        root = invocation["root"]
        manifest = load(manifest_path, Path(root) if root else None)
        handoff.append(Handoff(manifest, root, seen))
        deps = manifest.select(invocation["names"], invocation["groups"])
        if manifest.warnings:
            return None  # (an abbreviated legacy pin, which expanding asks git for anyway)
        # The stamp lists what the loader and the look read, each as it was read.
        with confined(manifest.root):
            proof = trail.vouch(manifest.looked, look)
        if len(lines) != len(deps):
            return None  # some dependency needs work (look stopped there)
        if cmake_out is not None:
            from qola.output.cmake_results import write_for  # lazy: only when the stamp misses

            written = write_for(Path(cmake_out), manifest, deps, proof)
            if written is None:
                return None  # only git can read the root's index: the full command's to say
            proof = written  # with the root's index while a pin and its gitlink disagree
    except (QolaError, OSError, UnicodeDecodeError):
        return None
    pairs = proof.entries
    if stamp_file is not None and pairs is not None:
        if cmake_out is not None:
            pairs.append((cmake_out, trail.expect(cmake_out)))
        env = {name: _override(name) for name in (override_variable(d.name) for d in deps)}
        _write_stamp(stamp_file, invocation, env, pairs, lines)
    return lines


def _identity() -> list[object]:
    """This qola: where it is, and each module's path, size and mtime, in every package
    below it (another install, or an edited or moved module, never answers from a stamp
    this one wrote)."""
    top = os.path.dirname(os.path.abspath(__file__))
    found: list[object] = [top]
    pending = [top]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as entries:
            listed = sorted(entries, key=lambda e: e.name)
        for entry in listed:
            if entry.name.endswith(".py") and entry.is_file():
                info = entry.stat()
                # entry.path is top's own prefix and the rest: no relpath (a hundred of
                # them cost the steady no-op a millisecond)
                found.append([entry.path[len(top) + 1:], info.st_size, info.st_mtime_ns])
            elif entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                pending.append(entry.path)
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
    gitdir = git_dir_of(folder)
    if gitdir is None:
        return None
    # repr, not json: the same invocation always reads the same (its dicts keep their order)
    return noop_stamp.path(gitdir, sha256_hex(repr(invocation).encode())[:32])


def _answer_from_stamp(path: str, invocation: dict[str, Any]) -> list[Line] | None:
    """The lines a previous no-op printed, when nothing its stamp lists has changed since."""
    data = noop_stamp.load(path)
    if not isinstance(data, dict) or data.get("invocation") != invocation:
        return None
    env, pairs, lines = data.get("env"), data.get("entries"), data.get("lines")
    if not (
        isinstance(env, dict)
        and isinstance(pairs, list)
        and all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
                for p in pairs)
        and isinstance(lines, list)
        and all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
                for p in lines)
    ):  # fmt: skip
        return None
    if any(_override(name) != value for name, value in env.items()):
        return None  # an override was set, changed or removed
    return [(p[0], p[1]) for p in lines] if trail.holds((p[0], p[1]) for p in pairs) else None


def _write_stamp(
    path: str,
    invocation: dict[str, Any],
    env: dict[str, str],
    pairs: list[tuple[str, str]],
    lines: list[Line],
) -> None:
    """Keep the answer with what proves it; a stamp that cannot be written is only slower."""
    data = {
        "invocation": invocation,
        "env": env,
        "entries": [[path, expectation] for path, expectation in pairs],
        "lines": [list(line) for line in lines],  # each [what comes first, what it says]
    }
    import contextlib  # lazy: only when the stamp misses

    from qola.repo import store  # lazy: only when the stamp misses

    with contextlib.suppress(OSError):
        store.write_file(path, noop_stamp.dumps(data), noop_stamp.gitdir_of(path))
