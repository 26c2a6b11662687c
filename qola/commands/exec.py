"""`qola exec -- CMD...`: run a command under the safe.directory shim."""

from __future__ import annotations

import os
import subprocess

from qola.errors import UsageError
from qola.session import Common, session


def exec_(common: Common, command: tuple[str, ...]) -> int:
    """Run command with the shim trusting every dependency; return its exit code."""
    from qola.observe import observe

    with session(common) as sess:
        trusted = [sess.manifest.root]
        for dep in sess.deps:
            state = observe(sess.manifest, dep, sess.runner)
            sess.env.add(state.worktree)
            trusted.append(state.worktree)
            for top in state.submodules or ():
                sess.env.add(*(state.worktree / sub.path for sub in top.walk()))
        # What the shim lets git into, CMD's git must not run the commands of either.
        neutral = sess.runner.overrides_for_all(trusted)
        try:
            env = {**os.environ, **sess.env, **neutral}
            proc = subprocess.run(list(command), env=env, check=False)
        except OSError as error:
            raise UsageError(command[0], f"cannot run it: {error.strerror}") from None
    return proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
