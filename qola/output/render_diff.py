"""What `qola diff` prints: the changes between two sets of pins as text, Markdown or JSON."""

from __future__ import annotations

import html
import time
from typing import TYPE_CHECKING, Any

from qola.base import markdown as md
from qola.base import safetext
from qola.base.plural import count
from qola.history.diff import ADDED, MOVED, RELABELLED, REMOVED, REPOINTED
from qola.output import cmake_env

if TYPE_CHECKING:
    from qola.gitrun.queries import Commit
    from qola.history.commits import Nested, Stat
    from qola.history.diff import Change, Diff

JSON_SCHEMA = 1
TEXT_LOG = 20  # commits listed per pin in text (all with -v)
MARKDOWN_LOG = 50  # commits listed per pin in a pull-request comment


# --------------------------------------------------------------------------- text


def as_text(found: Diff, verbose: bool = False) -> str:
    """One line per change, the commits of a moved pin indented below it."""
    if not found.changes:
        return f"no pin changed since {found.rev}\n"
    lines = []
    if not found.at_rev:
        lines.append(f"{found.manifest.path.name} did not exist at {found.rev}: every pin is new")
    for change in found.changes:
        lines.extend(_text_change(change, verbose))
    return "\n".join(lines) + "\n"


def _text_change(change: Change, verbose: bool) -> list[str]:
    dep = change.dep
    if change.kind == ADDED:
        if dep.tag:
            return [f"{dep.name} added at {dep.tag} ({dep.commit[:12]}, {dep.path})"]
        return [f"{dep.name} added at {dep.commit[:12]} ({dep.path})"]
    if change.kind == REMOVED:
        was = f"{dep.tag} at {dep.commit[:12]}" if dep.tag else f"at {dep.commit[:12]}"
        return [f"{dep.name} removed (was {was}, {dep.path})"]
    assert change.before is not None
    if change.kind in (REPOINTED, RELABELLED):
        now = ", ".join(part for part in (_where(change), _relabel(change)) if part)
        at = labelled(dep.commit, None if change.is_relabelled else dep.tag)
        return [f"{dep.name} at {at}, now {now}"]
    lines = [_headline(change)]
    if change.before.url != dep.url or change.before.path != dep.path:
        lines.append(f"  now {_where(change)}")
    found = change.comparison
    if found is None:
        return lines
    lines.extend(f"  {nested.line()}" for nested in found.nested or ())
    shown = found.added if verbose else found.added[:TEXT_LOG]
    lines.extend(f"  {_commit_line(c)}" for c in shown)
    if len(found.added) > len(shown):
        lines.append(f"  ... and {len(found.added) - len(shown)} more")
    dropped = found.dropped if verbose else found.dropped[:TEXT_LOG]
    lines.extend(f"  dropped: {_commit_line(c)}" for c in dropped)
    if len(found.dropped) > len(dropped):
        lines.append(f"  dropped: ... and {len(found.dropped) - len(dropped)} more")
    if found.stat is not None:
        lines.append(f"  {_shortstat(found.stat)}")
    return lines


def _headline(change: Change) -> str:
    """`lib 0c9fce2..1239137 (37 commits)`; with labels, as bump says it, `fmt
    11.0.2..11.1.4 (0c9fce2..1239137, 37 commits)`."""
    old, new = change.before, change.dep
    assert old is not None
    shas = f"{old.commit[:7]}..{new.commit[:7]}"
    if not (old.tag or new.tag):
        return f"{new.name} {shas} ({_summary(change)})"
    return f"{new.name} {old.pinned_as}..{new.pinned_as} ({shas}, {_summary(change)})"


def _summary(change: Change) -> str:
    """`37 commits`, or what makes the move suspicious."""
    found = change.comparison
    if change.error is not None:
        return "commits unknown: the history could not be fetched"
    if found is None:
        return "commits unknown"
    if not found.known:
        return f"commits unknown: the old pin is not in {change.dep.url}"
    if not found.dropped:
        return _plural(len(found.added), "commit")
    if not found.added:
        return f"DOWNGRADE: drops {_plural(len(found.dropped), 'commit')}"
    return (
        f"NOT A DESCENDANT: {_plural(len(found.added), 'commit')} added, "
        f"{len(found.dropped)} dropped"
    )


def _relabel(change: Change) -> str:
    """What happened to the label beside a pin that stayed: `labelled v2.0 (was v2)`,
    `labelled v2.0`, `unlabelled (was v2)`; empty when it did not change."""
    if not change.is_relabelled:
        return ""
    assert change.before is not None and change.after is not None
    old, new = change.before.tag, change.after.tag
    if new is None:
        return f"unlabelled (was {old})"
    return f"labelled {new}" + (f" (was {old})" if old else "")


def labelled(sha: str, tag: str | None) -> str:
    """A pin as a table shows it: `7f1f774d2b3c`, or with a label `v1.0 (7f1f774)`
    (`diff` and `outdated`)."""
    return f"{tag} ({sha[:7]})" if tag else sha[:12]


def _where(change: Change) -> str:
    assert change.before is not None and change.after is not None
    moved = []
    if change.before.url != change.after.url:
        moved.append(f"from {change.after.url} (was {change.before.url})")
    if change.before.path != change.after.path:
        moved.append(f"in {change.after.path} (was {change.before.path})")
    return ", ".join(moved)


def _commit_line(commit: Commit) -> str:
    """A commit as a line: its subject and author (other people's text) made readable."""
    subject, author = safetext.line(commit.subject), safetext.line(commit.author)
    return f"{commit.sha[:7]} {subject} ({author}, {_day(commit.time)})"


# ----------------------------------------------------------------------- markdown


def as_markdown(found: Diff) -> str:
    """A table and, per moved pin, its commits: a pull-request comment."""
    title = f"### qola: pins changed since {md.code(found.rev)}"
    if not found.changes:
        return f"qola: no pin changed since {md.code(found.rev)}.\n"
    out = [title, ""]
    if not found.at_rev:
        out += [f"{md.code(found.manifest.path.name)} did not exist there: every pin is new.", ""]
    out += ["| dependency | change | from | to | commits |", "|---|---|---|---|---|"]
    for change in found.changes:
        out.append(_markdown_row(change))
        if change.comparison is not None:
            out.extend(_nested_row(nested) for nested in change.comparison.nested or ())
    for change in found.changes:
        out.extend(_markdown_details(change))
    return "\n".join(out) + "\n"


def _markdown_row(change: Change) -> str:
    dep = change.dep
    old = change.before.commit if change.before else None
    new = change.after.commit if change.after else None
    cells = [
        md.code(dep.name),
        _markdown_kind(change),
        md.commit_link(change.before.url, old, labelled(old, change.before.tag))
        if change.before and old else "",
        md.commit_link(dep.url, new, labelled(new, dep.tag)) if new else "",
        "",
    ]
    found = change.comparison
    if change.kind in (ADDED, REMOVED, REPOINTED, RELABELLED):
        cells[4] = ""
    elif found is None or not found.known:
        cells[4] = "unknown"
    elif old and new:
        counts = _counts(len(found.added), len(found.dropped))
        cells[4] = md.compare_link(dep.url, old, new, counts)
    return md.row(cells)


def _nested_row(nested: Nested) -> str:
    """A nested submodule the move moves, on a row of its own below its dependency's."""
    name, old, new, counts = nested_cells(nested)
    word = "added" if not old else "removed" if not new else "moved"
    return f"| {name} | nested submodule {word} | {old} | {new} | {counts} |"


def nested_cells(nested: Nested) -> tuple[str, str, str, str]:
    """A nested submodule's move as table cells: its path, from, to, and the commits
    between when they were counted (`diff` and `outdated` tables)."""
    old, new = (sha[:12] if set(sha) != {"0"} else "" for sha in (nested.old, nested.new))
    return (f"↳ {md.code(nested.path)}", md.code(old) if old else "", md.code(new) if new else "",
            "" if nested.count is None else _counts(nested.count, nested.back))  # fmt: skip


def _counts(added: int, dropped: int) -> str:
    """`+3`, or `+3 / -2` where the move drops commits (backwards or sideways)."""
    return f"+{added}" + (f" / -{dropped}" if dropped else "")


def _markdown_kind(change: Change) -> str:
    """The change as a reviewer must see it: a pin that now comes from another
    repository or goes to another folder says so, whatever else it does."""
    word = _markdown_move(change) if change.kind == MOVED else change.kind
    where = _where(change) if change.before and change.after else ""
    if not where:
        return word
    return f"{word}: {md.text(where)}" if change.kind != MOVED else f"{word}; ⚠️ {md.text(where)}"


def _markdown_move(change: Change) -> str:
    found = change.comparison
    if change.error is not None:
        return "moved (history not fetched)"
    if found is None or not found.known:
        return "⚠️ moved; the old pin is not upstream"
    if found.dropped and not found.added:
        return "⚠️ **downgrade**"
    if found.dropped:
        return "⚠️ **not a descendant**"
    return "forward"


def _markdown_details(change: Change) -> list[str]:
    found = change.comparison
    if found is None or not (found.added or found.dropped):
        return []
    dep = change.dep
    title = f"<code>{html.escape(dep.name)}</code>: {_plural(len(found.added), 'commit')}"
    if found.dropped:
        title += f", {len(found.dropped)} dropped"
    out = ["", f"<details><summary>{title}</summary>", ""]
    for label, listed in (("", found.added), ("dropped: ", found.dropped)):
        for commit in listed[:MARKDOWN_LOG]:
            link = md.commit_link(dep.url, commit.sha, commit.sha[:7])
            out.append(
                f"- {label}{link} {md.text(commit.subject)} "
                f"({md.text(commit.author)}, {_day(commit.time)})"
            )
        if len(listed) > MARKDOWN_LOG:
            out.append(f"- {label}… and {len(listed) - MARKDOWN_LOG} more")
    if found.stat is not None:
        out += ["", _shortstat(found.stat)]
    out += ["", "</details>"]
    return out


# --------------------------------------------------------------------------- json


def as_json(found: Diff) -> str:
    """The versioned JSON document (docs/workflow.md)."""
    document = {
        "schema": JSON_SCHEMA,
        "command": "diff",
        "manifest": str(found.manifest.path),
        "root": str(found.manifest.root),
        "rev": found.rev,
        "rev_commit": found.rev_commit,
        "manifest_at_rev": found.at_rev,
        "changes": [_change_json(change) for change in found.changes],
        "unchanged": list(found.unchanged),
    }
    return safetext.json_document(document) + "\n"


def _change_json(change: Change) -> dict[str, Any]:
    found = change.comparison
    document: dict[str, Any] = {
        "name": change.name,
        "change": change.kind,
        "path": change.dep.path,
        "url": change.dep.url,
        "old": change.before.commit if change.before else None,
        "new": change.after.commit if change.after else None,
        "old_tag": change.before.tag if change.before else None,  # the labels beside them
        "tag": change.after.tag if change.after else None,
        "known": found.known if found else None,
        "descends": found.descends if found else None,
        "commits": [_commit_json(c) for c in found.added] if found else None,
        "dropped": [_commit_json(c) for c in found.dropped] if found else None,
        "old_path": change.before.path if change.before else None,
        "old_url": change.before.url if change.before else None,
        "submodules": _nested_json(found.nested) if found else None,
        "stat": None,
        "error": cmake_env.render(change.error) if change.error else None,
    }
    if found is not None and found.stat is not None:
        stat = found.stat
        document["stat"] = {
            "files": stat.files,
            "insertions": stat.insertions,
            "deletions": stat.deletions,
            "submodules": [{"path": p, "old": a, "new": b} for p, a, b in stat.submodules],
        }
    return document


def _nested_json(nested: tuple[Nested, ...] | None) -> list[dict[str, Any]] | None:
    """Each nested submodule the move moves (None: the trees could not be read)."""
    if nested is None:
        return None
    return [{"path": n.path, "old": n.old, "new": n.new, "count": n.count,
             "back": None if n.count is None else n.back} for n in nested]  # fmt: skip


def _commit_json(commit: Commit) -> dict[str, Any]:
    return {
        "sha": commit.sha,
        "subject": commit.subject,
        "author": commit.author,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(commit.time)),
    }


# ------------------------------------------------------------------------ helpers


def _plural(number: int, word: str) -> str:
    return count(number, word)


def _shortstat(stat: Stat) -> str:
    """As `git diff --shortstat` says it: `1 file changed, 2 insertions(+), 1 deletion(-)`."""
    return (f"{count(stat.files, 'file')} changed, {count(stat.insertions, 'insertion')}(+), "
            f"{count(stat.deletions, 'deletion')}(-)")  # fmt: skip


def _day(seconds: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(seconds))
