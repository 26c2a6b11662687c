"""`qola status`: one line per dependency, for people."""

from __future__ import annotations

from qola import console
from qola.session import Common, session


def status(common: Common) -> int:
    """Print pin, HEAD, state, gitlink and dirt per dependency; 0 when all match."""
    from qola.verify import DIRTY, GITLINK
    from qola.verify import verify as run_verify

    with session(common) as sess:
        report = run_verify(sess.manifest, sess.deps, sess.runner)
        rows = [("NAME", "PATH", "PIN", "HEAD", "STATE", "GITLINK", "DIRTY")]
        for dep in report.deps:
            kinds = [p.kind for p in dep.problems]
            state = next((k for k in kinds if k not in (DIRTY, GITLINK)), "ok")
            rows.append(
                (
                    dep.dep.name,
                    dep.path,
                    dep.dep.commit[:12],
                    dep.head[:12] if dep.head else "-",
                    state,
                    "differs" if GITLINK in kinds else "ok",
                    "yes" if DIRTY in kinds else "no",
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            cells = zip(row, widths, strict=True)
            console.result("  ".join(cell.ljust(w) for cell, w in cells).rstrip())
        return 0 if report.ok else 1
