"""`python -m qola` and the `qola` console script: the no-op first, then the command line.

A checkout with nothing to do is answered from files before click is even imported
(qola/noop.py); anything else goes to the full command line (qola/cli.py).
"""

from __future__ import annotations

import sys


def main() -> None:
    """The console script."""
    from qola.base.platforms import require_supported  # lazy: the no-op first, click only past it

    require_supported()
    from qola.noop import answer  # lazy: the no-op first, click only past it

    handoff = answer(sys.argv[1:])
    from qola.base.requirements import require  # lazy: past the no-op, before click

    require()
    from qola.cli import main as full  # lazy: the no-op first, click only past it

    full(handoff)


if __name__ == "__main__":
    main()
