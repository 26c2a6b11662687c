"""What the sdist and the wheel hold, checked against the files git tracks.

    python .ci/check_dist.py DIST_FOLDER

The sdist must hold every tracked file (the tests, docs/ and manifests/ included, so
that the test suite passes from an unpacked sdist) and nothing else but what the
build generates; the wheel must hold the package, the CMake module as qola/cmake/,
share/cmake/QoLA/ as the data files pip installs in <prefix>/share/cmake/QoLA/, and
the LICENSE. Run from the top of a git checkout; exits 1 listing every problem.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

# What building an sdist adds to the tracked files.
SDIST_GENERATED = re.compile(r"PKG-INFO|setup\.cfg|qola\.egg-info/.+")
# The files pip installs as <prefix>/share/cmake/QoLA/ (the wheel's .data/data/ folder).
SHARE = "share/cmake/QoLA/"


def tracked() -> set[str]:
    """The files git tracks in this checkout."""
    out = subprocess.run(["git", "ls-files", "-z"], capture_output=True, text=True, check=True)
    return {name for name in out.stdout.split("\0") if name}


def version() -> str:
    """The one version, as qola/__init__.py states it."""
    found = re.search(r'^__version__ = "([^"]+)"$', Path("qola/__init__.py").read_text(), re.M)
    assert found, "qola/__init__.py states no __version__"
    return found[1]


def sdist_problems(sdist: Path, files: set[str]) -> list[str]:
    """Tracked files the sdist lacks, and files it holds that are neither tracked nor built."""
    with tarfile.open(sdist) as tar:
        held = {m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()}
    extra = {name for name in held - files if not SDIST_GENERATED.fullmatch(name)}
    return [f"{sdist.name} lacks {name}" for name in sorted(files - held)] + [
        f"{sdist.name} holds {name}, which git does not track" for name in sorted(extra)
    ]


def wheel_problems(wheel: Path, files: set[str], release: str) -> list[str]:
    """The package, the CMake module and the files of <prefix>/share/cmake/QoLA/ exactly,
    and the LICENSE, in the wheel."""
    with zipfile.ZipFile(wheel) as whl:
        held = set(whl.namelist())
    dist_info = f"qola-{release}.dist-info/"
    package = {n for n in files if n.startswith("qola/")}
    for name in files:
        if name.startswith(SHARE):
            package.add(f"qola-{release}.data/data/share/cmake/QoLA/" + name.removeprefix(SHARE))
        elif name.startswith("cmake/"):
            package.add("qola/cmake/" + name.removeprefix("cmake/"))
    shipped = {n for n in held if not n.startswith(dist_info)}
    problems = [f"{wheel.name} lacks {name}" for name in sorted(package - shipped)]
    problems += [f"{wheel.name} holds {name}, not a file of the package" for name in sorted(shipped - package)]
    if dist_info + "licenses/LICENSE" not in held:
        problems.append(f"{wheel.name} lacks {dist_info}licenses/LICENSE")
    return problems


def main(dist: Path) -> int:
    """Print every problem of the sdist and wheel in dist; 1 if there was one."""
    release = version()
    sdists = sorted(dist.glob(f"qola-{release}.tar.gz"))
    wheels = sorted(dist.glob(f"qola-{release}-py3-none-any.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        print(f"check_dist: {dist} should hold one sdist and one wheel of qola {release}: "
              f"{sorted(p.name for p in dist.iterdir())}", file=sys.stderr)  # fmt: skip
        return 1
    files = tracked()
    problems = sdist_problems(sdists[0], files) + wheel_problems(wheels[0], files, release)
    for problem in problems:
        print(f"check_dist: {problem}", file=sys.stderr)
    if not problems:
        print(f"check_dist: {sdists[0].name} holds the {len(files)} tracked files; "
              f"{wheels[0].name} holds the package, its CMake module, share/cmake/QoLA/ "
              "and the LICENSE")  # fmt: skip
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
