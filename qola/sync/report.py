"""A dependency's line in checkout's report, its words and its colour, for the full command
and the no-op alike (which imports this: it imports nothing)."""

from __future__ import annotations

TYPE_CHECKING = False  # the no-op imports this: typing would cost it more than the rest
if TYPE_CHECKING:
    from collections.abc import Callable

    from qola.manifest import Dep

UP_TO_DATE = "up to date"
_OVERRIDDEN = "overridden by "
DEVELOPING = "developing"  # how the line of a dependency `qola develop` marked begins


def overridden(folder: object) -> str:
    """What the line says of a dependency used from QOLA_SOURCE_DIR_<NAME>'s folder."""
    return f"{_OVERRIDDEN}{folder}"


def line(dep: Dep, what: str) -> tuple[str, str]:
    """(what comes first, what the line says of it): `<name> <path> <commit[:12]> <what>`."""
    return f"{dep.name} {dep.path} {dep.commit[:12]}", what


def shown(first: str, what: str, paint: Callable[[str, str], str]) -> str:
    """The line, with what it says painted: green up to date, yellow overridden or
    developing (what a checkout did is not coloured)."""
    if what == UP_TO_DATE:
        what = paint(what, "green")
    elif what.startswith((_OVERRIDDEN, DEVELOPING)):
        what = paint(what, "yellow")
    return f"{first} {what}"
