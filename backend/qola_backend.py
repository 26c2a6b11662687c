"""setuptools' build backend, with share/cmake/QoLA/ in the editable wheel too.

A wheel holds the files of pyproject.toml's [tool.setuptools.data-files] under its
`.data/data/` folder, which pip installs into the prefix: share/cmake/QoLA/ becomes
<prefix>/share/cmake/QoLA/, where find_package(QoLA) looks. setuptools leaves those
files out of the editable wheel it makes for `pip install -e .` (pypa/setuptools#3399),
so this backend is setuptools' own with one change: build_editable adds them to that
wheel, and to its RECORD, which makes `pip uninstall` remove them too. Were setuptools
to add them itself, the wheel is left as it is.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (every other hook is setuptools')

SHARE = "share/cmake/QoLA"  # in the source tree, and under the prefix


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, object] | None = None,
    metadata_directory: str | None = None,
) -> str:
    name = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    add_share(Path(wheel_directory) / name, sorted(Path(SHARE).glob("*.cmake")))
    return name


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def add_share(wheel: Path, files: list[Path]) -> None:
    """Rewrite wheel with files under <name>.data/data/share/cmake/QoLA/, listed in RECORD."""
    with zipfile.ZipFile(wheel) as old:
        entries = [(info, old.read(info)) for info in old.infolist()]
    [record] = [info.filename for info, _ in entries
                if info.filename.endswith(".dist-info/RECORD")]  # fmt: skip
    data = record.removesuffix(".dist-info/RECORD") + ".data/data/"
    if any(info.filename.startswith(data + SHARE + "/") for info, _ in entries):
        return
    added = [(f"{data}{SHARE}/{file.name}", file.read_bytes()) for file in files]
    new = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(new, "w", zipfile.ZIP_DEFLATED) as out:
        for info, content in entries:
            if info.filename == record:
                lines = content.decode().splitlines()
                at = len(lines) - 1 if lines and lines[-1].startswith(record + ",") else len(lines)
                lines[at:at] = [_record_line(path, content) for path, content in added]
                for path, content in added:
                    out.writestr(path, content)
                out.writestr(info, "\n".join(lines) + "\n")
            else:
                out.writestr(info, content)
    new.replace(wheel)
