"""Where commands write: results to stdout, notes, warnings and errors to stderr.

Commands never import click (only cli.py does); they write through here.
"""

from __future__ import annotations

import sys


def result(text: str = "", end: str = "\n") -> None:
    """A line of the command's result (stdout)."""
    sys.stdout.write(text + end)
    sys.stdout.flush()


def message(text: str) -> None:
    """A note, warning or error for people (stderr)."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def raw(data: bytes, err: bool = False) -> None:
    """Another program's output, byte for byte (stdout, or stderr with err)."""
    stream = sys.stderr if err else sys.stdout
    stream.flush()
    stream.buffer.write(data)
    stream.buffer.flush()
