"""On Windows qola stops at start with one clear message and exit 2, not an ImportError."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from qola.base.platforms import require_supported, unsupported

MESSAGE = (
    "qola: qola: Windows is not supported: qola runs on Linux and macOS\n"
    "hint: run it in WSL or in a Linux container\n"
)


@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_require_supported_on_linux_and_macos_returns(platform: str) -> None:
    assert unsupported(platform) is None
    require_supported(platform)


def test_require_supported_on_windows_exits_2_with_the_message(capsys) -> None:
    with pytest.raises(SystemExit) as stopped:
        require_supported("win32")

    assert stopped.value.code == 2
    assert capsys.readouterr().err == MESSAGE


# Windows as Python sees it there: sys.platform is "win32" and there is no fcntl module.
_AS_ON_WINDOWS = """\
import runpy, sys
sys.platform = "win32"
sys.modules["fcntl"] = None  # `import fcntl` raises ImportError, as on Windows
entry = sys.argv.pop(1)
if entry == "qola script":
    from qola.noop import main
    main()
else:
    runpy.run_module(entry, run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("entry", ["qola script", "qola", "qola.cli"])
@pytest.mark.parametrize("command", [["--version"], ["checkout"], ["verify"], ["demo"]])
def test_every_entry_point_on_windows_exits_2_before_doing_anything(
    tmp_path: Path, entry: str, command: list[str]
) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _AS_ON_WINDOWS, entry, *command],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )

    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", MESSAGE)
    assert list(tmp_path.iterdir()) == []
