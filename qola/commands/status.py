"""`qola status`: one line per dependency, for people (or a JSON document)."""

from __future__ import annotations

from qola.base import console
from qola.commands.session import Common, session
from qola.output import render
from qola.sync.verify import DIRTY, GITLINK
from qola.sync.verify import verify as run_verify

# The colour of each state in the STATE column; failures are red.
_COLOURS = {"ok": "green", "overridden": "yellow", "developing": "yellow"}


def status(common: Common, fmt: str = "text") -> int:
    """Print pin, HEAD, state, gitlink and dirt per dependency; 0 when all match."""

    with session(common, offline=True) as sess:
        report = run_verify(sess.manifest, sess.deps, sess.runner)
        if fmt == "json":
            console.result(render.status_json(report), end="")
            return 0 if report.ok else 1
        if not sess.manifest.deps:
            console.result(f"no dependencies in {sess.manifest.path}")
            console.message("hint: add one: qola add NAME URL --tag T")
            return 0
        rows = [("NAME", "PATH", "PIN", "HEAD", "STATE", "GITLINK", "DIRTY")]
        for dep in report.deps:
            kinds = [p.kind for p in dep.problems]
            rows.append(
                (
                    dep.dep.name,
                    dep.path,
                    f"{dep.dep.tag} ({dep.dep.commit[:7]})" if dep.dep.tag else dep.dep.commit[:12],
                    dep.head[:12] if dep.head else "-",
                    render.state_of(dep),
                    "differs" if GITLINK in kinds else "ok",
                    "yes" if DIRTY in kinds else "no",
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for number, row in enumerate(rows):
            cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
            cells[-1] = row[-1]  # no padding at the end of the line
            if number:  # the header stays plain; padding is added before the colour
                state = row[4]
                cells[4] = console.paint(cells[4], _COLOURS.get(state, "red"))
                if row[5] == "differs":
                    cells[5] = console.paint(cells[5], "red")
                if row[6] == "yes":
                    cells[6] = console.paint(cells[6], "red")
            console.result("  ".join(cells).rstrip())
        return 0 if report.ok else 1
