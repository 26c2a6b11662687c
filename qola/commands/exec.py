"""`qola exec -- CMD...`: run a command under the safe.directory shim."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base import console
from qola.base.errors import UsageError
from qola.commands.session import Common, session
from qola.repo import gitfiles
from qola.sync.observe import observe

if TYPE_CHECKING:
    from qola.sync.observe import DepState


def exec_(common: Common, command: tuple[str, ...]) -> int:
    """Run command with the shim trusting every dependency; return its exit code."""

    with session(common) as sess:
        trusted = [sess.manifest.root]
        for dep in sess.deps:
            state = observe(sess.manifest, dep, sess.runner)
            folders = folders_to_trust(dep.name, state)
            sess.env.add(*folders)
            trusted += folders[:1] if folders[:1] == [state.worktree] else []
        # What the shim lets git into, CMD's git must not run the commands of either.
        neutral = sess.runner.overrides_for_all(trusted)
        try:
            env = {**os.environ, **sess.env, **neutral}
            proc = subprocess.run(list(command), env=env, check=False)
        except OSError as error:
            raise UsageError(command[0], f"cannot run it: {error.strerror}") from None
    return proc.returncode if proc.returncode >= 0 else 128 - proc.returncode


def folders_to_trust(name: str, state: DepState) -> list[Path]:
    """The folders of a dependency the shim trusts for CMD's git: its work tree, then its
    nested submodules'; none whose `.git` leads out of the project (a warning instead):
    git would follow it into a repository elsewhere, which qola itself never touches."""
    found = [(state.worktree, state.refusal)]
    found += [(state.worktree / sub.path, sub.refusal)
              for top in state.submodules or () for sub in top.walk()]  # fmt: skip
    kept = []
    for folder, refusal in found:
        if isinstance(refusal, gitfiles.Outside):
            console.warning(f"{name}: {folder} is not trusted for CMD's git: {refusal}")
        else:
            kept.append(folder)
    return kept
