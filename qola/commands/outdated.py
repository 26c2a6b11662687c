"""`qola outdated [NAMES]`: how far each pin is behind what it follows upstream."""

from __future__ import annotations

import time

from qola.base import console
from qola.base.errors import EXIT_GIT, EXIT_MISMATCH
from qola.base.plural import count, verb
from qola.commands.session import Common, finite, session
from qola.history.outdated import measure_all, parse_limit
from qola.output import cmake_env, render_outdated

FORMATS = ("text", "json", "markdown")


def outdated(common: Common, fmt: str, fail_if_behind: str | None, fetch_timeout: float) -> int:
    """Print each pin's lag; 1 when one exceeds --fail-if-behind, 3 when one could not be
    measured (the others are printed all the same)."""

    limit = parse_limit(fail_if_behind) if fail_if_behind is not None else None
    # Offline but for its fetches (network=True): the local steps fetch nothing lazily.
    with session(common, offline=True) as sess:
        sess.runner.timeout = finite(fetch_timeout)
        lags = measure_all(sess.manifest, sess.deps, sess.runner)
        now = time.time()
        over = [item for item in lags if item.exceeds(limit, now)]
        failed = [item for item in lags if item.error is not None]
        code = EXIT_GIT if failed else EXIT_MISMATCH if over else 0
        if fmt == "json":
            console.result(render_outdated.as_json(sess.manifest.path, sess.manifest.root, lags,
                                                  limit, now, code))
        elif fmt == "markdown":
            console.result(render_outdated.as_markdown(lags, now), end="")
        else:
            console.result(render_outdated.as_text(lags, now, common.verbose), end="")
        for item in failed:
            assert item.error is not None
            console.message(cmake_env.render(item.error))
        if over and limit is not None:
            names = ", ".join(item.dep.name for item in over)
            total = count(len(lags), "dependency", "dependencies")
            console.message(f"qola: {len(over)} of {total} {verb(len(over), 'is', 'are')} "
                            f"{limit.describe()}: {names}")  # fmt: skip
        return code
