"""Whether a CMake configure runs this qola, and the words for it: hints, errors, reports.

The variable QoLA.cmake sets for it: docs/cmake.md, "What QoLA.cmake tells the qola
it starts"."""

from __future__ import annotations

import os

from qola.base import console, hints
from qola.base.errors import QolaError
from qola.base.hints import Hint

BINARY_DIR = "QOLA_CMAKE_BINARY_DIR"


def binary_dir() -> str | None:
    """The build folder of the CMake configure that runs this qola (None: not under CMake)."""
    return os.environ.get(BINARY_DIR) or None


def word(hint: str | Hint | None) -> str | None:
    """A hint's text for whoever runs this qola: in CMake's terms under a configure."""
    return hints.word(hint, binary_dir())


def render(error: QolaError) -> str:
    """An error's text for whoever runs this qola."""
    return error.render(cmake_build=binary_dir())


def report(text: str) -> None:
    """What failed and what to do, where the person reads it: stderr, but stdout under a
    configure (QoLA.cmake shows stderr live, and what it has not shown, in its FATAL_ERROR)."""
    console.report(text, to_stdout=binary_dir() is not None)


def reconfigure(*settings: str, env: str = "") -> str:
    """The command that configures this build again with settings, or with an environment
    variable set."""
    return hints.reconfigure(binary_dir(), *settings, env=env)
