"""Markdown for pull-request comments: text from commits made safe, links to GitHub.

What must not become markup, a mention or a link: docs/workflow.md, "Markdown made safe"."""

from __future__ import annotations

import re

from qola.base import safetext

_MARKUP = re.compile(r"([\\`*_{}\[\]()<>#+!|~&])")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_REFERENCE = re.compile(r"(#|\bGH-)(?=\d)", re.IGNORECASE)
_AUTOLINK = re.compile(r"(://|\bwww\.)(?=\S)", re.IGNORECASE)
_GITHUB = re.compile(
    r"^(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)"
    r"([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$"
)
_ZERO_WIDTH = "\u200b"


def text(value: str) -> str:
    """value as plain text in Markdown: no markup, mention or issue link of its own."""
    value = " ".join(value.split())  # no line break can end a table row or a list item
    value = safetext.line(value)
    value = _MENTION.sub("@" + _ZERO_WIDTH, value)
    value = _REFERENCE.sub(lambda found: found.group() + _ZERO_WIDTH, value)
    value = _AUTOLINK.sub(lambda found: found.group() + _ZERO_WIDTH, value)
    return _MARKUP.sub(r"\\\1", value)


def code(value: str) -> str:
    """value as a code span (its backticks cannot end the span)."""
    value = safetext.line(value)
    fence = "`" * (max((len(run) for run in re.findall("`+", value)), default=0) + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def row(cells: list[str]) -> str:
    """A table row of cells made by text, code and the links: a `|` a code span holds
    (a tag may) is escaped too, since GitHub splits cells at it even inside one."""
    return "| " + " | ".join(re.sub(r"(?<!\\)\|", r"\\|", cell) for cell in cells) + " |"


def github_repository(url: str) -> str | None:
    """https://github.com/OWNER/REPO for a GitHub URL (https, ssh or scp-like), else None."""
    found = _GITHUB.match(url)
    return f"https://github.com/{found[1]}/{found[2]}" if found else None


def commit_link(url: str, sha: str, shown: str) -> str:
    """shown as a code span, linked to the commit when url is on GitHub."""
    base = github_repository(url)
    return f"[{code(shown)}]({base}/commit/{sha})" if base else code(shown)


def compare_link(url: str, old: str, new: str, shown: str) -> str:
    """shown, linked to GitHub's comparison of old...new when url is on GitHub."""
    base = github_repository(url)
    return f"[{shown}]({base}/compare/{old}...{new})" if base else shown
