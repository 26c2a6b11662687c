"""A command without -m takes the one manifest the repository's index tracks, when no
qola.toml is found upward: TransformerEngine keeps its legacy manifest deep in the tree
(transformer_engine/common/ck_fused_attn/qola_manifest.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from procs import environment
from procs import noop_declined as declined
from repos import git, head, init_repo, snapshot

DEEP = "transformer_engine/common/ck_fused_attn/qola_manifest.toml"
NOT_FOUND_HINT = (
    "hint: create one with `qola init`, or pass --manifest PATH (or set QOLA_MANIFEST)\n"
)


@pytest.fixture
def te_tree(tmp_path, upstream) -> Path:
    """TE's shape: aiter a submodule of the root (its gitlink at lib v2, not checked out),
    pinned by the legacy `[qola] aiter_commit` in a manifest three folders down, committed;
    no qola.toml anywhere."""
    root = init_repo(tmp_path / "te")
    (root / ".gitmodules").write_text(
        f'[submodule "aiter"]\n\tpath = 3rdparty/aiter\n\turl = {upstream.lib}\n'
    )
    git(root, "add", ".gitmodules")
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{upstream.lib_v2},3rdparty/aiter")
    manifest = root / DEEP
    manifest.parent.mkdir(parents=True)
    manifest.write_text(f'[qola]\nnamespace = "te"\naiter_commit = "{upstream.lib_v2}"\n')
    (root / "transformer_engine" / "pytorch").mkdir()
    (root / "transformer_engine" / "pytorch" / "setup.py").write_text("# the build\n")
    git(root, "add", DEEP, "transformer_engine/pytorch/setup.py")
    git(root, "commit", "-q", "-m", "pin aiter")
    return root


def test_the_manifest_the_index_tracks_serves_every_command_from_the_top_and_below(
    te_tree, upstream, run_qola
):
    sub = te_tree / "transformer_engine" / "pytorch"
    res = run_qola("-v", "checkout", cwd=sub)
    assert res.exit_code == 0, res.stderr
    assert (
        f"qola: manifest: {te_tree / DEEP} (none found upward from {sub}; the one the index "
        f"of {te_tree} tracks)\n"
    ) in res.stderr
    assert head(te_tree / "3rdparty" / "aiter") == upstream.lib_v2
    for cwd in (te_tree, sub):
        for command in ("status", "verify", "checkout"):
            res = run_qola(command, cwd=cwd)
            assert res.exit_code == 0, (cwd, command, res.stderr)
            assert "aiter" in res.stdout
    # The fast path (which never reads the index) leaves it to the full command, whose
    # answer is the same.
    assert declined(["checkout"], sub)
    fast = subprocess.run(
        [sys.executable, "-m", "qola", "checkout"],
        cwd=sub, capture_output=True, text=True, env=environment(), check=False,
    )  # fmt: skip
    assert (fast.returncode, fast.stdout) == (0, run_qola("checkout", cwd=sub).stdout)


def test_a_manifest_named_on_the_command_line_or_in_qola_manifest_wins(
    te_tree, upstream, run_qola
):
    other = te_tree / "other.toml"
    other.write_text(f'[qola]\naiter_commit = "{upstream.lib_v1}"\n')
    git(te_tree, "add", "other.toml")  # tracked, but not a manifest's name: not taken
    assert run_qola("checkout", "-q", cwd=te_tree).exit_code == 0  # the tracked one: v2
    assert head(te_tree / "3rdparty" / "aiter") == upstream.lib_v2
    res = run_qola("status", "-m", str(other), cwd=te_tree)
    assert res.exit_code == 1  # other's pin (v1) is not what the tree has: it was read
    assert upstream.lib_v1[:12] in res.stdout
    res = run_qola("status", cwd=te_tree, env={"QOLA_MANIFEST": str(other)})
    assert res.exit_code == 1
    assert upstream.lib_v1[:12] in res.stdout


def test_a_qola_toml_found_upward_wins_over_the_tracked_manifest(te_tree, upstream, run_qola):
    sub = te_tree / "transformer_engine" / "pytorch"
    assert run_qola("checkout", "-q", cwd=sub).exit_code == 0  # the tracked one: v2
    (te_tree / "transformer_engine" / "qola.toml").write_text(
        f'[qola]\naiter_commit = "{upstream.lib_v1}"\n'
    )
    res = run_qola("status", cwd=sub)
    assert res.exit_code == 1
    assert upstream.lib_v1[:12] in res.stdout


def test_two_tracked_manifests_are_refused_listing_both_and_nothing_changes(
    te_tree, upstream, run_qola
):
    second = te_tree / "tools" / "qola.toml"
    second.parent.mkdir()
    second.write_text(f'[qola]\naiter_commit = "{upstream.lib_v1}"\n')
    git(te_tree, "add", "tools/qola.toml")
    sub = te_tree / "transformer_engine" / "pytorch"
    before = snapshot(te_tree)
    for command in ("checkout", "status", "verify"):
        res = run_qola(command, cwd=sub)
        assert (res.exit_code, res.stdout) == (2, ""), (command, res.stderr)
        assert res.stderr == (
            f"qola: {sub}: no qola.toml here or in a folder above, up to {te_tree} (its "
            f"repository's top), and its index tracks 2 manifests: tools/qola.toml, {DEEP}\n"
            "hint: pass --manifest PATH (or set QOLA_MANIFEST) to choose one\n"
        )
        assert snapshot(te_tree) == before
    res = run_qola("checkout", "-q", "-m", str(te_tree / DEEP), cwd=sub)
    assert res.exit_code == 0, res.stderr


def test_an_untracked_manifest_is_not_found(te_tree, run_qola):
    git(te_tree, "rm", "-q", "--cached", DEEP)
    assert (te_tree / DEEP).is_file()
    before = snapshot(te_tree)
    res = run_qola("checkout", cwd=te_tree)
    assert (res.exit_code, res.stdout) == (2, "")
    assert res.stderr == (
        f"qola: {te_tree}: no qola.toml here (the top of its repository), nor does its index "
        "track a manifest (qola.toml or *qola*manifest*.toml)\n" + NOT_FOUND_HINT
    )
    assert snapshot(te_tree) == before


@pytest.mark.parametrize(
    ("name", "taken"),
    [("qola.toml", True), ("qola_manifest.toml", True), ("my-qola-manifest.v2.toml", True),
     ("manifest_qola.toml", False), ("qola_manifest.toml.bak", False), ("QOLA.toml", False)],
)  # fmt: skip
def test_which_tracked_names_are_manifests(name, taken):
    from qola.commands import options

    assert options.is_manifest_name(f"a/b/{name}") is taken
