"""When text gets colour, and how: one rule for the command line and the no-op.

Colour goes only to a terminal (and never with TERM=dumb), never with NO_COLOR set
(https://no-color.org: any non-empty value), and always with FORCE_COLOR set to
anything but 0, even into a pipe. NO_COLOR wins over FORCE_COLOR. The machine
formats (JSON, JUnit, GitHub) never ask for it.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # the no-op imports this: typing would cost it more than the rest
if TYPE_CHECKING:
    from typing import TextIO

STYLES = {"red": "31", "green": "32", "yellow": "33", "bold": "1", "dim": "2"}


def wanted(stream: TextIO) -> bool:
    """Does text written to stream get colour?"""
    if os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR")
    if force:
        return force != "0"
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return terminal and os.environ.get("TERM") != "dumb"


def paint(text: str, style: str, stream: TextIO) -> str:
    """text in a colour, when stream gets colour."""
    if not text or not wanted(stream):
        return text
    return f"\x1b[{STYLES[style]}m{text}\x1b[0m"
