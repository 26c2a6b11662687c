"""`python -m qola.commands.explain_stamp FILE…`: which entries of a stamp no longer hold,
and why."""

from __future__ import annotations

import inspect
import json
import os
import sys

from qola.base.plural import count, verb
from qola.output.cmake_results import read_stamp
from qola.repo import noop_stamp
from qola.repo.trail import explain


def main(argv: list[str]) -> int:
    """`python -m qola.commands.explain_stamp FILE…`: which entries of a stamp no longer
    hold, and why.

    FILE is a no-op stamp (`.git/qola/noop/*.stamp` in the root repository) or a CMake
    results file (`<build>/qola/qola-*.cmake`).
    """
    if not argv or argv[0] in ("-h", "--help"):
        print(inspect.cleandoc(main.__doc__ or ""), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    missing = [name for name in argv if not os.path.isfile(name)]
    if missing:
        print(f"qola: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    broken = False
    for name in argv:
        if name.endswith(noop_stamp.SUFFIX):
            data = noop_stamp.load(name)
            entries = data.get("entries") if isinstance(data, dict) else None
            invocation = data.get("invocation") if isinstance(data, dict) else None
            if not (isinstance(entries, list) and isinstance(invocation, dict)
                    and all(isinstance(e, list) and len(e) == 2
                            and all(isinstance(x, str) for x in e) for e in entries)):  # fmt: skip
                print(f"{name}: not a no-op stamp this qola can read")
                broken = True
                continue
            pairs = [(p, e) for p, e in entries]
            shown = {k: invocation.get(k) for k in ("manifest", "root", "names", "cmake_out")}
            identity = invocation.get("qola")  # where the qola that wrote it is, first
            qola = identity[0] if isinstance(identity, list) and identity else "?"
            print(f"{name}: the no-op's stamp for {json.dumps(shown)}, by the qola in {qola}")
        elif name.endswith(".json") and os.path.basename(os.path.dirname(name)) == "noop":
            print(f"{name}: an older qola's no-op stamp, which this qola never reads "
                  "(safe to delete)")  # fmt: skip
            continue
        else:
            with open(name, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
            if "set(_QOLA_STAMP " not in text:
                print(f"{name}: not a no-op stamp nor a CMake results file of qola's")
                broken = True
                continue
            pairs = read_stamp(text)
            print(f"{name}: the CMake stamp")
        lines = explain(pairs)
        for line in lines:
            print(f"  {line}")
        if not pairs:
            print("  no stamp: nothing could vouch for that run's answer; qola runs each time")
        elif lines:
            print(f"  {len(lines)} of {count(len(pairs), 'entry', 'entries')} no longer "
                  f"{verb(len(lines), 'holds', 'hold')}: the fast path steps aside and qola "
                  "looks again")  # fmt: skip
        else:
            print(f"  {verb(len(pairs), 'its', 'all')} {count(len(pairs), 'entry', 'entries')} "
                  f"{verb(len(pairs), 'holds', 'hold')}")  # fmt: skip
        broken = broken or bool(lines) or not pairs
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
