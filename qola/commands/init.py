"""`qola init`: write a new manifest for the root's submodules."""

from __future__ import annotations

import errno
import glob
import os
from pathlib import Path

from qola.base import console
from qola.base.errors import ManifestError, UsageError
from qola.commands.bump import warn_if_only_here
from qola.history import bump
from qola.manifest.gitmodules import repository_top
from qola.manifest.write_new import EMPTY, render_init
from qola.repo import store


def init(manifest: Path, dry_run: bool) -> int:
    """Write (or with dry_run print) a manifest pinning each submodule at its gitlink (with
    none: one that says how to add a dependency)."""
    from qola.gitrun import git  # lazy: only where git runs

    git.scrub_environment()
    path = Path(os.path.abspath(manifest))
    if path.exists():
        raise UsageError(
            str(path), "already exists; nothing was written", "edit it, or use qola bump/freeze"
        )
    root = repository_top(path.parent)
    runner = git.Runner()
    entries = bump.init_entries(runner, root)
    # No submodules: a manifest with no dependency yet, whose first lines say how to add one.
    text = render_init([(name, where, None, link) for name, where, _, link in entries]
                       ) if entries else EMPTY  # fmt: skip
    for name, where, url, link in entries:
        warn_if_only_here(runner, root / where, name, where, url, link)
    if dry_run:
        console.result(text, end="")
        return 0
    create(path, text.encode("utf-8"))
    console.result(f"wrote {path}")
    return 0


_TEMP = ".qola-init-"
_NO_LINKS = (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK)


def create(path: Path, data: bytes) -> None:
    """Write a new file whole or not at all, and never over one that exists: a run killed
    (or a disk that fills) while it writes must not leave a short manifest that the next
    `qola init` refuses to overwrite. The bytes go to a temporary sibling first, which is
    then linked at the name (link(2) fails if the name exists: no race with a file made
    meanwhile) and removed."""

    for stale in path.parent.glob(f".{glob.escape(path.name)}{_TEMP}*"):
        pid = stale.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not store.is_alive(int(pid)):
            stale.unlink(missing_ok=True)  # a killed init's, never linked or already linked
    temp = path.with_name(f".{path.name}{_TEMP}{os.getpid()}")
    try:
        try:
            with open(temp, "xb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            try:
                os.link(temp, path)
            except OSError as error:
                if error.errno not in _NO_LINKS:
                    raise
                with open(path, "xb") as out:  # a file system without hard links
                    out.write(data)
        finally:
            temp.unlink(missing_ok=True)
    except FileExistsError:
        raise UsageError(
            str(path), "already exists; nothing was written", "edit it, or use qola bump/freeze"
        ) from None
    except OSError as error:
        raise ManifestError(
            str(path),
            f"cannot write the manifest: {error.strerror}; nothing was written",
            "free some space or make the folder writable, then run again",
        ) from None
