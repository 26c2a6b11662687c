"""Pathological manifests reach every command that reads one: always exit 2 with a `qola:`
message, never a traceback; and a byte order mark is accepted and kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import procs
import pytest
from repos import git, snapshot

BOM = b"\xef\xbb\xbf"
DEEP = 600  # tomllib recurses per level: well past what the stack allows


def _dep(extra: str = "") -> str:
    sha = "d32b0cb62ecc32bb1a858e8437d58eb9b3856af6"
    url = "https://example.invalid/lib.git"
    return f'[deps.lib]\npath = "3rdparty/lib"\nurl = "{url}"\ncommit = "{sha}"\n{extra}'


DOCUMENTS = {
    "deep-arrays": ("x = " + "[" * DEEP + "]" * DEEP + "\n").encode(),
    "deep-inline-tables": ("x = " + "{a=" * DEEP + "1" + "}" * DEEP + "\n").encode(),
    "deep-arrays-in-a-dep": (_dep("x = " + "[" * DEEP + "]" * DEEP + "\n")).encode(),
    "10-mb-string": ('[qola]\nnote = "' + "a" * 10_000_000 + '"\n' + _dep("bad = \n")).encode(),
    "nul": b"[deps.lib]\x00\npath = 'x'\n",
    "invalid-utf-8": b"[deps.lib]\npath = '\xff\xfe'\n",
    "bom-inside": _dep().encode().replace(b"path", BOM + b"path"),
    "two-boms": BOM + BOM + _dep().encode(),
    "bom-then-garbage": BOM + b"= = =\n",
}
# Slower to parse: given to verify and to the no-op only.
HUGE = {
    "10-mb-path": ('[deps.lib]\npath = "' + "a" * 10_000_000 + '"\n').encode(),
    "10-mb-key": ("[deps.lib]\n" + "k" * 10_000_000 + " = 1\n").encode(),
}

COMMANDS = {
    "checkout": ["checkout"],
    "verify": ["verify"],
    "verify-manifest-only": ["verify", "--manifest-only"],
    "status": ["status"],
    "bump": ["bump", "lib", "--to", "d32b0cb62ecc32bb1a858e8437d58eb9b3856af6"],
    "bump-commit": ["bump", "lib", "--commit"],
    "freeze": ["freeze"],
    "exec": ["exec", "--", "true"],
}


@pytest.fixture(scope="module")
def manifests(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("pathological")
    found = {}
    for name, data in {**DOCUMENTS, **HUGE}.items():
        folder = base / name
        folder.mkdir()
        git(folder, "init", "-q")
        (folder / "qola.toml").write_bytes(data)
        found[name] = folder / "qola.toml"
    return found


@pytest.mark.parametrize("document", sorted(DOCUMENTS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_turns_a_pathological_manifest_into_exit_2(
    command, document, manifests, run_qola
):
    manifest = manifests[document]
    before = snapshot(manifest.parent)
    first, *rest = COMMANDS[command]
    res = run_qola(first, "-m", str(manifest), *rest)
    assert res.exit_code == 2, (res.exit_code, res.stderr[-500:])
    assert res.stderr.startswith(f"qola: {manifest}"), res.stderr[:500]
    assert "Traceback" not in res.stderr
    assert snapshot(manifest.parent) == before


@pytest.mark.parametrize("document", sorted(HUGE))
def test_verify_turns_a_huge_manifest_into_exit_2(document, manifests, run_qola):
    manifest = manifests[document]
    res = run_qola("verify", "-m", str(manifest))
    assert res.exit_code == 2, (res.exit_code, res.stderr[-500:])
    assert res.stderr.startswith(f"qola: {manifest}"), res.stderr[:500]


@pytest.mark.parametrize("document", ["deep-arrays", "10-mb-path", "nul"])
def test_the_noop_path_steps_aside_and_the_full_command_reports(document, manifests):
    """`python -m qola.cli checkout` (what CMake runs) answers a no-op before click loads; on
    a manifest it cannot read it must leave the answer to the full command: exit 2."""
    manifest = manifests[document]
    proc = subprocess.run(
        [sys.executable, "-m", "qola.cli", "checkout", "-m", str(manifest)],
        capture_output=True, text=True, env=procs.environment(), check=False,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-500:]
    assert proc.stderr.startswith(f"qola: {manifest}"), proc.stderr[:500]
    assert "Traceback" not in proc.stderr


def test_deep_nesting_says_what_is_wrong(manifests, run_qola):
    manifest = manifests["deep-arrays"]
    res = run_qola("verify", "-m", str(manifest))
    assert res.stderr == (
        f"qola: {manifest}: cannot parse the manifest: it is nested too deeply\n"
        "hint: a manifest is a short TOML file; check that this is the file you meant\n"
    )


# --------------------------------------------------------------------- the byte order mark


def test_a_manifest_starting_with_a_bom_loads_and_bump_and_freeze_keep_it(
    pinned_clean, upstream, run_qola
):
    manifest = pinned_clean.manifest
    original = BOM + manifest.read_bytes().replace(b"\n", b"\r\n")
    manifest.write_bytes(original)
    res = run_qola("verify", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    res = run_qola("bump", "lib", "--to", "main", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    bumped = manifest.read_bytes()
    assert bumped == original.replace(upstream.lib_v2.encode(), upstream.lib_tip.encode())
    # freeze back to what is checked out after moving the dependency by hand
    git(pinned_clean.lib, "checkout", "-q", "--detach", upstream.lib_v2)
    git(pinned_clean.lib, "submodule", "update", "-q")
    res = run_qola("freeze", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert manifest.read_bytes() == original


def test_the_noop_answers_a_manifest_with_a_bom(pinned_clean):
    manifest = pinned_clean.manifest
    manifest.write_bytes(BOM + manifest.read_bytes())
    proc = procs.run("checkout", "-m", str(manifest))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("up to date\n")
