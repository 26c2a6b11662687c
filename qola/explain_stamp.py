"""`python -m qola.explain_stamp FILE…`, as qola spelled it before its commands had a package
of their own: qola/commands/explain_stamp.py does the work."""

from __future__ import annotations

import sys

from qola.commands.explain_stamp import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
