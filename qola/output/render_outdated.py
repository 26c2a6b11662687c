"""What `qola outdated` prints: how far each pin is behind, as a table or JSON."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qola.base import safetext
from qola.base.plural import verb
from qola.output import cmake_env

if TYPE_CHECKING:
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
            item.dep.name, item.dep.commit[:12], pinned, item.follows,
            item.tip[:12] if item.tip else "-", behind, "-" if days is None else str(days),
        ))  # fmt: skip
        if item.error is not None:
            notes.append(f"{item.dep.name}: could not be measured (below)")
        elif item.on_track is False:
            notes.append(
                f"{item.dep.name}: the pin is not in the history of {item.follows}; "
                f"{behind} of its commits {verb(item.behind or 0, 'is', 'are')} missing "
                "from the pin"
            )
        elif found is not None and not found.known:
            notes.append(f"{item.dep.name}: the pin {item.dep.commit[:12]} is not upstream")
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
        "pinned_date": _iso(found.old_commit.time) if found and found.old_commit else None,
        "follows": item.dep.track,
        "ref": item.ref,
        "tip": item.tip,
        "tip_date": _iso(newest.time) if newest else None,
        "tip_subject": newest.subject if newest else None,
        "behind": item.behind,
        "behind_days": item.days_behind(now),
        "on_track": item.on_track,
        "over_limit": item.exceeds(limit, now),
        "error": cmake_env.render(item.error) if item.error else None,
    }


def _day(seconds: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(seconds))


def _iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
