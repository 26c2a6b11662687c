"""`qola init`: write a new manifest for the root's submodules."""

from __future__ import annotations

import os
from pathlib import Path

from qola import console


def init(manifest: Path, dry_run: bool) -> int:
    """Write (or with dry_run print) a manifest pinning each submodule at its gitlink."""
    from qola import git, moves
    from qola.commands.bump import warn_if_only_here
    from qola.errors import UsageError
    from qola.init_manifest import render_init
    from qola.manifest import repository_top

    git.scrub_environment()
    path = Path(os.path.abspath(manifest))
    if path.exists():
        raise UsageError(
            str(path), "already exists; nothing was written", "edit it, or use qola bump/freeze"
        )
    root = repository_top(path.parent)
    runner = git.Runner()
    entries = moves.init_entries(runner, root)
    text = render_init([(name, where, None, link) for name, where, _, link in entries])
    for name, where, url, link in entries:
        warn_if_only_here(runner, root / where, name, where, url, link)
    if dry_run:
        console.result(text, end="")
        return 0
    with open(path, "x", encoding="utf-8", newline="") as out:
        out.write(text)
    console.result(f"wrote {path}")
    return 0
