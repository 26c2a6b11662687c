"""When QoLA.cmake runs qola: hints in CMake's terms, and the pins of the build's other calls.

QoLA.cmake sets two variables for the qola it starts, and only for it:

- QOLA_CMAKE_BINARY_DIR, the build folder. It says that a person is configuring a
  build rather than typing qola commands, so a hint names the `-D` cache variable to
  set, as the command that configures that build folder again
  (`cmake -DQOLA_FORCE=ON /src/build`), or the whole one-off command to run.
- QOLA_CMAKE_CLAIMS, what the earlier `qola_checkout()` calls of the same configure
  checked out: one line per dependency folder, `<sha>\\t<folder>\\t<manifest>`. A
  folder another manifest pinned to another commit stops the checkout before
  anything moves (the two calls would otherwise move it back and forth).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from qola.errors import UsageError

if TYPE_CHECKING:
    from qola.manifest import Dep, Manifest

BINARY_DIR = "QOLA_CMAKE_BINARY_DIR"
CLAIMS = "QOLA_CMAKE_CLAIMS"


def binary_dir() -> str | None:
    """The build folder of the CMake configure that runs this qola (None: not under CMake)."""
    return os.environ.get(BINARY_DIR) or None


def hint(command_line: str, cmake: str) -> str:
    """The hint for whoever runs qola: `command_line` for a person, `cmake` in a configure."""
    return cmake if binary_dir() else command_line


def reconfigure(*settings: str, env: str = "") -> str:
    """The command that configures this build again with settings (`-DQOLA_FORCE=ON`), or
    with an environment variable set (`QOLA_LOCK_TIMEOUT=1800`)."""
    import shlex

    words = [env] if env else []
    words += ["cmake", *settings, shlex.quote(binary_dir() or "<build>")]
    return " ".join(words)


def qola_command(*args: str) -> str:
    """A qola command line a person can paste: `qola ARGS`, or, when the `qola` on PATH is
    not this one (a virtual environment that is not active), this interpreter's
    `python -m qola ARGS`, with the PYTHONPATH that found this qola."""
    import shlex
    import shutil

    words = [shlex.quote(arg) for arg in args]
    found = shutil.which("qola")
    package = Path(__file__).resolve().parent
    source = str(package.parent)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    from_path = any(_same(p, source) for p in paths)
    if found and not from_path and _same(os.path.dirname(found), os.path.dirname(sys.executable)):
        return " ".join(["qola", *words])
    prefix = [f"PYTHONPATH={shlex.quote(source)}"] if from_path else []
    return " ".join([*prefix, shlex.quote(sys.executable), "-m", "qola", *words])


def rerun(*extra: str) -> str:
    """This qola command line once more with extra options, as a person can paste it: the
    overrides QoLA.cmake put in the environment in front, its --cmake-out left out."""
    import shlex

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


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_claims(manifest: Manifest, deps: tuple[Dep, ...]) -> None:
    """Stop, before anything moves, when another qola_checkout() of this configure pinned
    one of deps' folders to another commit."""
    text = os.environ.get(CLAIMS)
    if not text:
        return
    from qola.observe import override_dir

    claimed: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        sha, _, rest = line.partition("\t")
        folder, _, other = rest.partition("\t")
        if sha and folder and other:
            claimed.setdefault(os.path.normpath(folder), (sha, other))
    for dep in deps:
        folder = os.path.normpath(os.path.abspath(manifest.root / dep.path))
        if folder not in claimed or override_dir(dep.name) is not None:
            continue
        sha, other = claimed[folder]
        if sha != dep.commit and os.path.abspath(other) != os.path.abspath(manifest.path):
            raise UsageError(
                dep.name,
                f"{folder} is pinned to {dep.commit[:12]} by {manifest.path} and to "
                f"{sha[:12]} by {other}, checked out earlier in this configure; one folder "
                "cannot hold both, so nothing was changed",
                "pin the same commit in both manifests, or give the dependency its own "
                "path in one of them",
            )
