"""The packages qola needs, and the one check that the Python running it has them.

A Python that lacks one would fail at its first import of it, part-way through a command
(GitPython only when git first runs): a PYTHONPATH checkout, a CMake configure's
QOLA_PYTHON, an install made with --no-deps. The entry points check, past the no-op
and before anything else, and stop with exit 5 naming the interpreter, what it lacks and
the line that installs it. The CMake module asks the same question before it runs qola
(cmake/QoLARun.cmake).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing's own costs every command
if TYPE_CHECKING:
    from qola.base.errors import InstallError


# pyproject.toml's dependencies, each with the module it provides (a test holds the two
# lists equal) and the Python version from which the standard library has it instead.
REQUIREMENTS: tuple[tuple[str, str, tuple[int, int] | None], ...] = (
    ("click", "click>=8.2", None),
    ("git", "GitPython>=3.1.30", None),
    ("tomli", "tomli>=2.0.1", (3, 11)),
    ("tomli_w", "tomli-w>=1.0", None),
)


def needed() -> list[tuple[str, str]]:
    """(module, requirement) of each package this Python needs installed."""
    return [(module, requirement) for module, requirement, until in REQUIREMENTS
            if until is None or sys.version_info[:2] < until]  # fmt: skip


def missing() -> list[str]:
    """The requirements whose module this Python cannot find (a folder of that name
    without an __init__.py, which imports as an empty namespace, counts as missing)."""
    import importlib.util  # lazy: past the no-op only

    gone = []
    for module, requirement in needed():
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is None or spec.origin is None:
            gone.append(requirement)
    return gone


def name(requirement: str) -> str:
    """The distribution a requirement names: `GitPython` of `GitPython>=3.1.30`."""
    return requirement.partition(">")[0]


def require() -> None:
    """Exit 5 with what to install when this Python lacks a package qola needs."""
    gone = missing()
    if gone:
        error = missing_error(sys.executable, gone)
        print(error.render(cmake_build=None), file=sys.stderr)
        sys.exit(error.exit_code)


def missing_error(python: str, gone: list[str]) -> InstallError:
    """The error for a Python that lacks the requirements gone."""
    import shlex  # lazy: the error path only

    from qola.base.errors import InstallError  # lazy: the error path only
    from qola.base.install import PLACEHOLDER, checkout, installed_from  # lazy: the error path

    names = [name(requirement) for requirement in gone]
    verb = "is" if len(names) == 1 else "are"
    run = shlex.quote(python)
    tree = checkout()
    everything = _listed([name(requirement) for _, requirement in needed()])
    if _managed():
        # pip refuses to install for it: a virtual environment of qola's own, with qola.
        source = str(tree) if tree is not None else installed_from() or PLACEHOLDER
        hint = (f"{python} is managed by the system (EXTERNALLY-MANAGED); give qola a "
                f"virtual environment of its own: {run} -m venv /path/to/venv && "
                f"/path/to/venv/bin/python -m pip install {shlex.quote(source)}")  # fmt: skip
    else:
        words = " ".join(shlex.quote(requirement) for requirement in gone)
        hint = f"install {'it' if len(names) == 1 else 'them'}: {run} -m pip install {words}"
        if tree is not None:
            hint += (f"; or install this qola checkout, which brings them all: "
                     f"{run} -m pip install {shlex.quote(str(tree))}")  # fmt: skip
    hint += f"; or run qola with a Python that has {everything}"
    return InstallError(python, f"cannot run qola: {_listed(names)} {verb} not installed "
                        "for this Python", hint)  # fmt: skip


def _managed() -> bool:
    """Whether this Python is the system's, which pip refuses to install for (PEP 668)."""
    import os  # lazy: the error path only
    import sysconfig  # lazy: the error path only

    stdlib = sysconfig.get_path("stdlib") or ""
    return sys.prefix == sys.base_prefix and os.path.isfile(
        os.path.join(stdlib, "EXTERNALLY-MANAGED"))  # fmt: skip


def _listed(words: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
