"""The manifest editor: each property that `bump` and `freeze` must preserve has its own test."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from qola.base.errors import ManifestError
from qola.manifest.edit import set_pin, write_atomically

OLD = "d32b0cb62ecc32bb1a858e8437d58eb9b3856af6"
NEW = "9f1e2aa67f8c26740d2ff3b29471ccba68637198"


def _refusal(text: str, key: str, sha: str = NEW) -> str:
    with pytest.raises(ManifestError) as caught:
        set_pin(text, key, sha, source="qola.toml")
    return caught.value.render(cmake_build=None)


def test_set_pin_keeps_comment_on_pin_line() -> None:
    before = f"""[deps.aiter]
path = "3rdparty/aiter"
commit = "{OLD}"  # FP8 GEMM fix, see ROCm/aiter#412
"""
    assert (
        set_pin(before, "deps.aiter.commit", NEW)
        == f"""[deps.aiter]
path = "3rdparty/aiter"
commit = "{NEW}"  # FP8 GEMM fix, see ROCm/aiter#412
"""
    )


def test_set_pin_keeps_crlf() -> None:
    before = f'[qola]\r\nschema = 1\r\n\r\n[deps.aiter]\r\ncommit = "{OLD}"\r\ntrack = "main"\r\n'
    assert (
        set_pin(before, "deps.aiter.commit", NEW)
        == f'[qola]\r\nschema = 1\r\n\r\n[deps.aiter]\r\ncommit = "{NEW}"\r\ntrack = "main"\r\n'
    )


def test_set_pin_keeps_literal_quotes() -> None:
    before = f"""[deps.aiter]
path = '3rdparty/aiter'
commit = '{OLD}'
"""
    assert (
        set_pin(before, "deps.aiter.commit", NEW)
        == f"""[deps.aiter]
path = '3rdparty/aiter'
commit = '{NEW}'
"""
    )


def test_set_pin_keeps_key_order() -> None:
    before = f"""[deps.aiter]
commit = "{OLD}"
url = "https://github.com/ROCm/aiter.git"
track = "main"
path = "3rdparty/aiter"
"""
    assert (
        set_pin(before, "deps.aiter.commit", NEW)
        == f"""[deps.aiter]
commit = "{NEW}"
url = "https://github.com/ROCm/aiter.git"
track = "main"
path = "3rdparty/aiter"
"""
    )


def test_set_pin_keeps_blank_lines_and_spacing() -> None:
    # Blank lines, a whitespace-only line, aligned `=`, trailing spaces and a final line
    # without a newline: a re-serialising writer would normalise every one of them.
    before = (
        "[qola]\n\n\n"
        "schema = 1\n"
        "   \t\n"
        "[deps.aiter]\n"
        'path   = "3rdparty/aiter"\n'
        f'commit =   "{OLD}"   \n'
        "\n"
        "submodules = false"
    )
    assert set_pin(before, "deps.aiter.commit", NEW) == (
        "[qola]\n\n\n"
        "schema = 1\n"
        "   \t\n"
        "[deps.aiter]\n"
        'path   = "3rdparty/aiter"\n'
        f'commit =   "{NEW}"   \n'
        "\n"
        "submodules = false"
    )


# A TransformerEngine-style legacy manifest: [qola] keys beside tables that other tools own.
TE_MANIFEST = """\
# QoLA settings for ROCm TransformerEngine.
[qola]
namespace = "transformer_engine"
rocm_versions = [
    "6.4",
    "7.0",  # first release with gfx950
]
aiter_commit = "{pin}"  # AITER main
patches_dir = "3rdparty/patches"

[build]
cmake_args = ["-DCMAKE_BUILD_TYPE=Release", "-DGPU_TARGETS=gfx942;gfx950"]
jobs = 16

[[modules]]
name = "fused_attn_aiter"
sources = "transformer_engine/common/fused_attn_rocm"
# The module tool records the AITER commit it was last tested with; not a pin.
aiter_commit = "{old}"

[[modules]]
name = "gemm"
enabled = true
"""


def test_set_pin_leaves_other_tables() -> None:
    before = TE_MANIFEST.format(pin=OLD, old=OLD)
    assert set_pin(before, "qola.aiter_commit", NEW) == TE_MANIFEST.format(pin=NEW, old=OLD)


def test_set_pin_legacy_form_abbreviated_sha_written_in_full() -> None:
    # What `qola freeze` does with the abbreviated SHAs the legacy form allows.
    before = "[qola]\nnamespace = 'te'\naiter_commit = 'd32b0cb'\nck_commit = \"0a1b2c3\"\n"
    assert set_pin(before, "qola.aiter_commit", OLD) == (
        f"[qola]\nnamespace = 'te'\naiter_commit = '{OLD}'\nck_commit = \"0a1b2c3\"\n"
    )


def test_set_pin_only_the_named_dep() -> None:
    # Both dependencies are pinned to the same SHA: a search for the old value finds two.
    before = f"""[deps.ck]
path = "3rdparty/composable_kernel"
commit = "{OLD}"

[deps.aiter]
path = "3rdparty/aiter"
commit = "{OLD}"
"""
    assert (
        set_pin(before, "deps.aiter.commit", NEW)
        == f"""[deps.ck]
path = "3rdparty/composable_kernel"
commit = "{OLD}"

[deps.aiter]
path = "3rdparty/aiter"
commit = "{NEW}"
"""
    )


def test_set_pin_ignores_commented_out_pin() -> None:
    before = f"""[deps.aiter]
# commit = "{OLD}"  (before the FP8 fix)
commit = "{OLD}"
notes = '''
commit = "{OLD}"
'''
"""
    assert (
        set_pin(before, "deps.aiter.commit", NEW)
        == f"""[deps.aiter]
# commit = "{OLD}"  (before the FP8 fix)
commit = "{NEW}"
notes = '''
commit = "{OLD}"
'''
"""
    )


def test_set_pin_dotted_key_form() -> None:
    before = f'[deps]\naiter.path = "3rdparty/aiter"\naiter.commit = "{OLD}"\n'
    assert set_pin(before, "deps.aiter.commit", NEW) == (
        f'[deps]\naiter.path = "3rdparty/aiter"\naiter.commit = "{NEW}"\n'
    )


def test_set_pin_inline_table_form() -> None:
    before = f'[deps]\naiter = {{ path = "3rdparty/aiter", commit = "{OLD}" }}  # AITER\n'
    assert set_pin(before, "deps.aiter.commit", NEW) == (
        f'[deps]\naiter = {{ path = "3rdparty/aiter", commit = "{NEW}" }}  # AITER\n'
    )


def test_set_pin_quoted_keys() -> None:
    before = f'[deps."aiter"]\n"commit" = "{OLD}"\n'
    assert set_pin(before, "deps.aiter.commit", NEW) == f'[deps."aiter"]\n"commit" = "{NEW}"\n'


def test_set_pin_refuses_when_key_missing() -> None:
    text = f'[deps.aiter]\ncommit = "{OLD}"\n'
    assert _refusal(text, "deps.ck.commit") == (
        "qola: qola.toml: deps.ck.commit: no such pin in the manifest\n"
        "hint: re-run the command; the manifest may have changed since qola read it"
    )


def test_set_pin_refuses_when_ambiguous() -> None:
    # A merge that kept both sides of a conflict: two tables set the same pin.
    text = f"""[deps.aiter]
commit = "{OLD}"

[deps.aiter]
commit = "{NEW}"
"""
    assert _refusal(text, "deps.aiter.commit", OLD) == (
        "qola: qola.toml: deps.aiter.commit: set 2 times (lines 2, 5); "
        "qola will not guess which to change\n"
        "hint: keep one of them (a merge may have doubled it) and re-run"
    )


def test_set_pin_refuses_multiline_string() -> None:
    text = f'[deps.aiter]\npath = "a"\ncommit = """{OLD}"""\n'
    assert _refusal(text, "deps.aiter.commit") == (
        "qola: qola.toml:3: deps.aiter.commit: is a multi-line string, "
        "which qola does not rewrite\n"
        'hint: write the pin on one line: commit = "<sha>"'
    )


def test_set_pin_refuses_value_that_is_not_a_string() -> None:
    text = "[qola]\naiter_commit = 1234567\n"
    assert _refusal(text, "qola.aiter_commit") == (
        "qola: qola.toml: qola.aiter_commit: is int 1234567, not a string\n"
        'hint: write the pin as a string: aiter_commit = "<sha>"'
    )


def test_set_pin_refuses_new_value_that_is_not_a_full_sha() -> None:
    text = f'[deps.aiter]\ncommit = "{OLD}"\n'
    assert _refusal(text, "deps.aiter.commit", "main") == (
        "qola: qola.toml: deps.aiter.commit: 'main' is not a full commit SHA "
        "(40 or 64 lower-case hex)"
    )


def test_set_pin_refuses_key_that_is_not_a_pin() -> None:
    text = "[build]\njobs = 16\n"
    assert _refusal(text, "build.jobs") == (
        "qola: qola.toml: build.jobs: not a pin qola can rewrite\n"
        "hint: pins are deps.<name>.commit or qola.<name>_commit"
    )


def test_set_pin_refuses_invalid_toml() -> None:
    text = f'[deps.aiter]\ncommit = "{OLD}"\npath = \n'
    assert _refusal(text, "deps.aiter.commit") == (
        "qola: qola.toml: invalid TOML: Invalid value (at line 3, column 8)"
    )


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    path = tmp_path / "qola.toml"
    path.write_bytes(f'[deps.aiter]\r\ncommit = "{OLD}"\r\n'.encode())
    return path


def test_write_atomically_writes_exact_bytes(manifest: Path) -> None:
    old = manifest.read_bytes()
    write_atomically(manifest, set_pin(old.decode("utf-8"), "deps.aiter.commit", NEW), old)
    assert manifest.read_bytes() == f'[deps.aiter]\r\ncommit = "{NEW}"\r\n'.encode()
    assert sorted(p.name for p in manifest.parent.iterdir()) == ["qola.toml"]


def test_write_atomically_refuses_when_file_changed(manifest: Path) -> None:
    old = manifest.read_bytes()
    changed = old + b"# someone's edit\r\n"
    manifest.write_bytes(changed)
    with pytest.raises(ManifestError) as caught:
        write_atomically(manifest, old.decode().replace(OLD, NEW), old)
    assert caught.value.render(cmake_build=None) == (
        f"qola: {manifest}: changed on disk since qola read it; nothing was written\n"
        "hint: re-run the command"
    )
    assert manifest.read_bytes() == changed
    assert sorted(p.name for p in manifest.parent.iterdir()) == ["qola.toml"]


def test_write_atomically_failure_leaves_file_and_folder_as_they_were(
    manifest: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full_disk)
    old = manifest.read_bytes()
    with pytest.raises(ManifestError) as caught:
        write_atomically(manifest, old.decode().replace(OLD, NEW), old)
    assert caught.value.render(cmake_build=None) == (
        f"qola: {manifest}: cannot write the manifest: No space left on device"
    )
    assert manifest.read_bytes() == old
    assert sorted(p.name for p in manifest.parent.iterdir()) == ["qola.toml"]


def test_write_atomically_keeps_mode(manifest: Path) -> None:
    manifest.chmod(0o640)
    old = manifest.read_bytes()
    write_atomically(manifest, old.decode().replace(OLD, NEW), old)
    assert stat.S_IMODE(manifest.stat().st_mode) == 0o640


def test_write_atomically_keeps_symlink(manifest: Path) -> None:
    link = manifest.parent / "link.toml"
    link.symlink_to(manifest.name)
    old = link.read_bytes()
    write_atomically(link, old.decode().replace(OLD, NEW), old)
    assert os.readlink(link) == manifest.name
    assert manifest.read_bytes() == f'[deps.aiter]\r\ncommit = "{NEW}"\r\n'.encode()
