"""End-to-end: the first checkout clones, the second touches nothing."""

from __future__ import annotations

from pathlib import Path

from repos import git, head, init_repo, snapshot


def write_manifest(project: Path, body: str) -> Path:
    path = project / "qola.toml"
    path.write_text(body)
    return path


def test_checkout_then_noop(tmp_path, upstream, run_qola):
    project = init_repo(tmp_path / "project")
    manifest = write_manifest(
        project,
        f'[deps.lib]\npath = "3rdparty/lib"\nurl = "{upstream.lib}"\n'
        f'commit = "{upstream.lib_v2}"\n',
    )
    res = run_qola("checkout", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    lib = project / "3rdparty/lib"
    assert head(lib) == upstream.lib_v2
    assert head(lib / "extern/nested") == upstream.nested_v2
    before = snapshot(project)
    res = run_qola("checkout", "-m", str(manifest))
    assert res.exit_code == 0
    assert "up to date" in res.stdout
    assert snapshot(project) == before
    assert git(lib, "status", "--porcelain") == ""
