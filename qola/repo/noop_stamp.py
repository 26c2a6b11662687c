"""The no-op's stamp files: where they live in a git dir, and how one is read and written.

A stamp is written with marshal, not json: the no-op that answers from one imports
neither json nor the regular expressions json needs (a fifth of its time). marshal's
format for dicts, lists, strings and numbers is the same in every Python qola runs on;
a stamp that cannot be read (truncated, another format) only sends the no-op the slow way.
"""

from __future__ import annotations

import marshal
import os
import stat

TYPE_CHECKING = False  # the stamped no-op imports this: typing would cost it more than the rest
if TYPE_CHECKING:
    from collections.abc import Mapping

STATE = "qola"  # qola's folder inside a git dir
SUFFIX = ".stamp"


def path(gitdir: str, key: str) -> str:
    """Where the stamp of one command line (its key) lives."""
    return os.path.join(gitdir, STATE, "noop", key + SUFFIX)


def gitdir_of(stamp: str) -> str:
    """The git dir a stamp belongs to: the folder its write starts from."""
    return os.path.dirname(os.path.dirname(os.path.dirname(stamp)))


def load(stamp: str) -> object:
    """What a stamp file holds (None: it is missing, not a file, or cannot be read).

    Opened without blocking and read only when it is a plain file: a FIFO planted at the
    name would otherwise stop every configure."""
    try:
        fd = os.open(stamp, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            return marshal.loads(handle.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def dumps(data: Mapping[str, object]) -> bytes:
    """A stamp's bytes (dicts, lists, strings, numbers and None only)."""
    return marshal.dumps(dict(data), 4)
