"""Full commit SHAs as git prints them: 40 (SHA-1) or 64 (SHA-256) lower-case hex digits."""

from __future__ import annotations

import re

# The whole text must be the SHA: use fullmatch (with match and `$`, "<sha>\n" would pass).
FULL_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def is_full_sha(text: str) -> bool:
    """Whether text is exactly one full SHA, nothing around it (no newline either)."""
    return FULL_SHA.fullmatch(text) is not None
