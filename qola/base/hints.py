"""Hints that read differently when a CMake configure runs qola.

A low layer does not know who runs it, so it raises a `Hint`: the words for a person at a
command line and the words for a configure, whose commands (`Configure`, `Rerun`) are data.
Only the layer that knows it runs under CMake (the error handler, the commands) words it,
with `word(hint, build)`."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import NamedTuple


class Configure(NamedTuple):
    """`cmake SETTINGS <build>`: configure this build again, with an environment variable
    (`QOLA_LOCK_TIMEOUT=1800`) in front when env is given."""

    settings: tuple[str, ...]
    env: str = ""


class Rerun(NamedTuple):
    """This qola command line once more, with extra options."""

    extra: tuple[str, ...]


Part = str | Configure | Rerun


class Hint(NamedTuple):
    """A hint in two wordings: for a person at a command line, and for a CMake configure."""

    person: str
    cmake: tuple[Part, ...]


def either(person: str, *cmake: Part) -> Hint:
    """The hint `person` on a command line, the parts `cmake` joined in a configure."""
    return Hint(person, cmake)


def join(separator: str, items: list[str | Hint]) -> str | Hint:
    """Hints one after the other, each worded as the others are."""
    if all(isinstance(item, str) for item in items):
        return separator.join(item for item in items if isinstance(item, str))
    person: list[str] = []
    cmake: list[Part] = []
    for at, item in enumerate(items):
        if at:
            person.append(separator)
            cmake.append(separator)
        person.append(item.person if isinstance(item, Hint) else item)
        cmake.extend(item.cmake if isinstance(item, Hint) else (item,))
    return Hint("".join(person), tuple(cmake))


def configure(*settings: str, env: str = "") -> Configure:
    return Configure(settings, env)


def rerun(*extra: str) -> Rerun:
    return Rerun(extra)


def word(hint: str | Hint | None, build: str | None) -> str | None:
    """The text of a hint: a Hint's CMake wording when build (the build folder of the
    configure that runs qola) is given, its person's wording when not."""
    if not isinstance(hint, Hint):
        return hint
    if build is None:
        return hint.person
    return "".join(_part(part, build) for part in hint.cmake)


def _part(part: Part, build: str) -> str:
    if isinstance(part, Configure):
        return reconfigure(build, *part.settings, env=part.env)
    if isinstance(part, Rerun):
        return rerun_command(*part.extra)
    return part


def reconfigure(build: str | None, *settings: str, env: str = "") -> str:
    """The command that configures the build in `build` again with settings
    (`-DQOLA_FORCE=ON`), or with an environment variable set (`QOLA_LOCK_TIMEOUT=1800`)."""
    words = [env] if env else []
    words += ["cmake", *settings, shlex.quote(build or "<build>")]
    return " ".join(words)


def qola_command(*args: str) -> str:
    """A qola command line a person can paste: `qola ARGS`, or, when the `qola` on PATH is
    not this one (a virtual environment that is not active), this interpreter's
    `python -m qola ARGS`, with the PYTHONPATH that found this qola."""
    # Not at the top: errors imports this module, and every entry point reports Windows
    # with an error, where shutil would import what only Windows has (_winapi).
    import shutil

    words = [shlex.quote(arg) for arg in args]
    found = shutil.which("qola")
    package = sys.modules[__name__.partition(".")[0]].__file__ or ""
    source = str(Path(package).resolve().parent.parent)  # the folder holding qola/
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    from_path = any(_same(p, source) for p in paths)
    beside = found is not None and _same(os.path.dirname(found), os.path.dirname(sys.executable))
    if beside and (not from_path or _installed_editable(source)):
        return " ".join(["qola", *words])
    prefix = [f"PYTHONPATH={shlex.quote(source)}"] if from_path else []
    return " ".join([*prefix, shlex.quote(sys.executable), "-m", "qola", *words])


def rerun_command(*extra: str) -> str:
    """This qola command line once more with extra options, as a person can paste it: the
    overrides QoLA.cmake put in the environment in front, its --cmake-out left out."""
    args: list[str] = []
    rest = iter(sys.argv[1:])
    for arg in rest:
        if arg == "--cmake-out":
            next(rest, None)
        elif not arg.startswith("--cmake-out="):
            args.append(arg)
    names: list[str] = []
    if "--" in args:
        at = args.index("--")
        args, names = args[:at], args[at:]
    overrides = [
        f"{name}={shlex.quote(value)}"
        for name, value in sorted(os.environ.items())
        if name.startswith("QOLA_SOURCE_DIR_") and value
    ]
    return " ".join([*overrides, qola_command(*args, *extra, *names)])


def _installed_editable(source: str) -> bool:
    """Whether this Python's qola is an editable install of source: its `qola` runs source's
    code without the PYTHONPATH a CMake configure of the checkout adds."""
    import json  # lazy: the error path only
    from importlib import metadata  # lazy: the error path only
    from urllib.parse import unquote, urlsplit  # lazy: the error path only

    # Every qola this Python sees: the checkout's own qola.egg-info, on PYTHONPATH, comes
    # first and says nothing of the install in site-packages.
    for found in metadata.distributions(name="qola"):
        try:
            said = json.loads(found.read_text("direct_url.json") or "{}")
        except (ValueError, OSError):
            continue
        url = urlsplit(str(said.get("url", "")))
        editable = bool(said.get("dir_info", {}).get("editable"))
        if editable and url.scheme == "file" and _same(unquote(url.path), source):
            return True
    return False


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
