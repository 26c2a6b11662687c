"""The platforms qola runs on: Linux and macOS. Checked by the entry points, first thing.

qola locks with fcntl.flock, which Windows does not have: there `import fcntl`
(and, before it, the POSIX-only parts of the standard library qola uses) would
end in a traceback half-way through a command. The entry points (the main of
qola/noop.py, and `python -m qola.cli`) call require_supported() before they
import anything else of qola's, so Windows gets one clear message and exit 2.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing's own would cost every command, the no-op included

if TYPE_CHECKING:
    from qola.base.errors import UsageError


def unsupported(platform: str) -> UsageError | None:
    """The error to stop with on `platform` (a sys.platform value), or None where qola runs."""
    if platform != "win32":
        return None
    # Imported here: every entry point, the no-op included, runs this check first.
    from qola.base.errors import UsageError  # lazy: the error path only (the no-op loads no errors)

    return UsageError(
        "qola",
        "Windows is not supported: qola runs on Linux and macOS",
        "run it in WSL or in a Linux container",
    )


def require_supported(platform: str = sys.platform) -> None:
    """Exit 2 with the error on a platform qola cannot run on; return otherwise."""
    error = unsupported(platform)
    if error is not None:
        print(error.render(cmake_build=None), file=sys.stderr)  # no hint of it words CMake
        sys.exit(error.exit_code)
