"""What `qola outdated` prints: how far each pin is behind, as a table, Markdown or JSON."""

from __future__ import annotations

import html
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qola.base import markdown as md
from qola.base import safetext
from qola.base.plural import count, verb
from qola.output import cmake_env
from qola.output.render_diff import MARKDOWN_LOG, labelled, nested_cells

if TYPE_CHECKING:
    from qola.history.commits import Nested
    from qola.history.outdated import Lag, Limit

JSON_SCHEMA = 1
LOG_LINES = 20  # the commits a pin lacks, listed with -v


def as_text(lags: list[Lag], now: float, verbose: bool = False) -> str:
    """A table, one row per dependency, then notes (and with verbose the missing commits)."""
    rows = [("NAME", "PIN", "PINNED", "FOLLOWS", "TIP", "BEHIND", "DAYS")]
    notes = []
    for item in lags:
        found = item.comparison
        pinned = _day(found.old_commit.time) if found and found.old_commit else "-"
        behind = "?" if item.behind is None else str(item.behind)
        days = item.days_behind(now)
        rows.append((
            item.dep.name, labelled(item.dep.commit, item.dep.tag), pinned, item.follows,
            labelled(item.tip, item.tip_tag) if item.tip else "-", behind,
            "-" if days is None else str(days),
        ))  # fmt: skip
        if item.releases_behind:
            notes.append(f"{item.dep.name}: {count(item.releases_behind, 'release')} behind; "
                         f"the newest is {item.tip_tag}")  # fmt: skip
        elif item.ahead_of_newest:
            notes.append(f"{item.dep.name}: {_pinned_release(item)} is not older than the "
                         f"newest release, {item.tip_tag}: nothing newer to move to")  # fmt: skip
        if item.error is not None:
            notes.append(f"{item.dep.name}: could not be measured (below)")
        elif item.releases_behind is not None:
            pass  # a release: where it stands is said above, in releases, not in history
        elif item.on_track is False and item.behind == 0:
            notes.append(f"{item.dep.name}: the pin is ahead of {item.follows}: its tip is in "
                         "the pin's history, nothing newer to move to")  # fmt: skip
        elif item.on_track is False:
            notes.append(
                f"{item.dep.name}: the pin is not in the history of {item.follows}; "
                f"{behind} of its commits {verb(item.behind or 0, 'is', 'are')} missing "
                "from the pin"
            )
        elif found is not None and not found.known:
            notes.append(f"{item.dep.name}: the pin {item.dep.commit[:12]} is not upstream")
        notes.extend(f"{item.dep.name}: at the tip, {n.line()}" for n in _nested(item))
        if verbose and found is not None and found.added:
            notes.append(f"{item.dep.name}: the commits on {item.follows} that the pin lacks:")
            notes.extend(
                f"  {c.sha[:7]} {safetext.line(c.subject)} ({safetext.line(c.author)}, "
                f"{_day(c.time)})"
                for c in found.added[:LOG_LINES]
            )
            if len(found.added) > LOG_LINES:
                notes.append(f"  ... and {len(found.added) - LOG_LINES} more")
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]  # fmt: skip
    return "\n".join(lines + notes) + "\n"


def as_markdown(lags: list[Lag], now: float) -> str:
    """The table as a pull-request comment: each nested submodule the tip would move on a
    row below its dependency, then notes and each pin's missing commits."""
    out = ["### qola: how far each pin is behind", "",
           "| dependency | pin | pinned | follows | tip | behind | days |",
           "|---|---|---|---|---|---|---|"]  # fmt: skip
    notes, details = [], []
    for item in lags:
        found, dep = item.comparison, item.dep
        days = item.days_behind(now)
        behind = "unknown" if item.behind is None else str(item.behind)
        if item.behind and item.tip:
            behind = md.compare_link(dep.url, dep.commit, item.tip, behind)
        cells = [md.code(dep.name), md.commit_link(dep.url, dep.commit,
                                                   labelled(dep.commit, dep.tag)),
                 _day(found.old_commit.time) if found and found.old_commit else "",
                 md.text(item.follows), md.commit_link(dep.url, item.tip,
                                                       labelled(item.tip, item.tip_tag))
                 if item.tip else "", behind, "" if days is None else str(days)]  # fmt: skip
        out.append(md.row(cells))
        for nested in _nested(item):
            name, old, new, counts = nested_cells(nested)
            out.append(f"| {name} | {old} | | nested submodule | {new} | {counts} | |")
        notes.extend(_markdown_note(item))
        details.extend(_markdown_details(item))
    if notes:
        out += ["", *notes]
    return "\n".join(out + details) + "\n"


def _pinned_release(item: Lag) -> str:
    return f"the pin, {item.dep.tag}," if item.dep.tag else "the pin"


def _markdown_note(item: Lag) -> list[str]:
    name = md.code(item.dep.name)
    if item.error is not None:
        return [f"- {name}: could not be measured: {md.text(cmake_env.render(item.error))}"]
    if item.releases_behind:
        return [f"- {name}: {count(item.releases_behind, 'release')} behind; the newest is "
                f"{md.code(item.tip_tag or '')}"]
    if item.ahead_of_newest:
        return [f"- {name}: {md.text(_pinned_release(item))} is not older than the newest "
                f"release, {md.code(item.tip_tag or '')}"]
    if item.releases_behind is not None:
        return []
    if item.on_track is False and item.behind == 0:
        return [f"- {name}: the pin is ahead of {md.text(item.follows)}: its tip is in the "
                "pin's history"]
    if item.on_track is False:
        return [f"- {name}: ⚠️ the pin is not in the history of {md.text(item.follows)}"]
    found = item.comparison
    if found is not None and not found.known:
        return [f"- {name}: ⚠️ the pin {md.code(item.dep.commit[:12])} is not upstream"]
    return []


def _markdown_details(item: Lag) -> list[str]:
    found, dep = item.comparison, item.dep
    if found is None or not found.added:
        return []
    title = (f"<code>{html.escape(dep.name)}</code>: {count(len(found.added), 'commit')} "
             f"on {html.escape(item.follows)} that the pin lacks")  # fmt: skip
    out = ["", f"<details><summary>{title}</summary>", ""]
    for commit in found.added[:MARKDOWN_LOG]:
        link = md.commit_link(dep.url, commit.sha, commit.sha[:7])
        out.append(f"- {link} {md.text(commit.subject)} ({md.text(commit.author)}, "
                   f"{_day(commit.time)})")  # fmt: skip
    if len(found.added) > MARKDOWN_LOG:
        out.append(f"- … and {len(found.added) - MARKDOWN_LOG} more")
    return [*out, "", "</details>"]


def _nested(item: Lag) -> tuple[Nested, ...]:
    """The nested submodules the tip would move (none when that is unknown)."""
    found = item.comparison
    return (found.nested or ()) if found is not None else ()


def as_json(
    manifest: Path, root: Path, lags: list[Lag], limit: Limit | None, now: float, code: int
) -> str:
    """The versioned JSON document (docs/workflow.md)."""
    document = {
        "schema": JSON_SCHEMA,
        "command": "outdated",
        "manifest": str(manifest),
        "root": str(root),
        "ok": code == 0,
        "limit": None if limit is None else {"commits": limit.commits, "days": limit.days},
        "deps": [_lag_json(item, limit, now) for item in lags],
    }
    return safetext.json_document(document)


def _lag_json(item: Lag, limit: Limit | None, now: float) -> dict[str, Any]:
    found = item.comparison
    newest = found.new_commit if found else None
    return {
        "name": item.dep.name,
        "path": item.dep.path,
        "pinned": item.dep.commit,
        "tag": item.dep.tag,
        "pinned_date": _iso(found.old_commit.time) if found and found.old_commit else None,
        "follows": item.dep.track,
        "ref": item.ref,
        "tip": item.tip,
        "tip_tag": item.tip_tag,
        "releases_behind": item.releases_behind,
        "tip_date": _iso(newest.time) if newest else None,
        "tip_subject": newest.subject if newest else None,
        "behind": item.behind,
        "behind_days": item.days_behind(now),
        "on_track": item.on_track,
        "submodules": None if found is None or found.nested is None else [
            {"path": n.path, "old": n.old, "new": n.new, "count": n.count,
             "back": None if n.count is None else n.back} for n in found.nested
        ],
        "over_limit": item.exceeds(limit, now),
        "error": cmake_env.render(item.error) if item.error else None,
    }


def _day(seconds: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(seconds))


def _iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
