"""Numbers in messages: `1 commit`, `2 commits` (one rule for every message that counts)."""

from __future__ import annotations


def count(number: int, one: str, many: str | None = None) -> str:
    """`1 dependency`, `2 dependencies` (many: one + "s" unless given)."""
    return f"{number} {one if number == 1 else many or one + 's'}"


def verb(number: int, one: str, many: str) -> str:
    """The verb that agrees with number: verb(1, "is", "are") is "is"."""
    return one if number == 1 else many
