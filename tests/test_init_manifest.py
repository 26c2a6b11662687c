"""The manifest that `qola init` writes: exact text, and what the loader makes of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from qola import manifest
from qola.base.errors import ManifestError
from qola.manifest.write_new import render_init

AITER = "d32b0cb62ecc32bb1a858e8437d58eb9b3856af6"
CK = "9f1e2aa67f8c26740d2ff3b29471ccba68637198"
SUBMODULES = [
    ("aiter", "3rdparty/aiter", "https://github.com/ROCm/aiter.git", AITER),
    ("composable_kernel", "3rdparty/composable_kernel", None, CK),
]


def test_render_init_writes_one_table_per_submodule() -> None:
    assert (
        render_init(SUBMODULES)
        == f"""\
# Pins of this project's git dependencies; `qola bump NAME` moves one.

[qola]
schema = 1

[deps.aiter]
path = "3rdparty/aiter"
url = "https://github.com/ROCm/aiter.git"
commit = "{AITER}"

[deps.composable_kernel]
path = "3rdparty/composable_kernel"
commit = "{CK}"
"""
    )


def test_render_init_output_loads(tmp_path: Path) -> None:
    (tmp_path / ".gitmodules").write_text(
        '[submodule "composable_kernel"]\n'
        "\tpath = 3rdparty/composable_kernel\n"
        "\turl = https://github.com/ROCm/composable_kernel.git\n"
    )
    path = tmp_path / "qola.toml"
    path.write_text(render_init(SUBMODULES))
    loaded = manifest.load(path)
    assert [(d.name, d.path, d.url, d.commit) for d in loaded.deps] == [
        ("aiter", "3rdparty/aiter", "https://github.com/ROCm/aiter.git", AITER),
        (
            "composable_kernel",
            "3rdparty/composable_kernel",
            "https://github.com/ROCm/composable_kernel.git",
            CK,
        ),
    ]
    assert [d.key for d in loaded.deps] == ["deps.aiter.commit", "deps.composable_kernel.commit"]


def test_render_init_refuses_two_submodules_with_one_name() -> None:
    with pytest.raises(ManifestError) as caught:
        render_init([SUBMODULES[0], ("aiter", "third_party/aiter", None, AITER)])
    assert caught.value.render(cmake_build=None) == (
        "qola: third_party/aiter: dependency name 'aiter' is also used for '3rdparty/aiter'\n"
        "hint: give one of them another name"
    )


def test_render_init_refuses_name_the_loader_rejects() -> None:
    # .gitmodules names are often paths; the caller must pick a name the loader accepts.
    with pytest.raises(ManifestError) as caught:
        render_init([("3rdparty/aiter", "3rdparty/aiter", None, AITER)])
    assert caught.value.render(cmake_build=None) == (
        "qola: 3rdparty/aiter: '3rdparty/aiter' is not a usable dependency name\n"
        "hint: use letters, digits, '_' and '-', starting with a letter or digit"
    )


def test_empty_manifest_loads_with_no_dependency(tmp_path: Path) -> None:
    from qola.manifest.write_new import EMPTY

    path = tmp_path / "qola.toml"
    path.write_text(EMPTY)
    loaded = manifest.load(path)
    assert (loaded.deps, loaded.warnings) == ((), ())


@pytest.mark.parametrize("text", ["", "[qola]\nschema = 1\n", "[dep.x]\npath = 'x'\n[deps]\n"])
def test_a_manifest_pins_something_or_says_it_has_none_with_an_empty_deps_table(
    tmp_path: Path, text: str
) -> None:
    """Only an explicit empty [deps] says "none yet"; a file without it (or a misspelt
    [dep.x] beside it) that pins nothing is still refused."""
    path = tmp_path / "qola.toml"
    path.write_text(text)
    with pytest.raises(ManifestError) as caught:
        manifest.load(path)
    assert "declares no dependencies" in caught.value.problem
