"""Every option that takes a file or folder takes it relative to the current folder, as typed.

(`qola demo ./d` is in test_demo.py.)
"""

from __future__ import annotations

from pathlib import Path

from repos import head


def test_checkout_with_relative_manifest_cache_and_cmake_out_uses_them(
    tmp_path: Path, make_project, upstream, run_qola
) -> None:
    project = make_project()

    res = run_qola(
        "checkout",
        "-m",
        "project/qola.toml",
        "--cache",
        "./cache",
        "--cmake-out",
        "out/qola.cmake",
        cwd=tmp_path,
    )

    assert res.exit_code == 0, res.stderr
    assert head(project.lib) == upstream.lib_v2
    # One mirror per URL: lib's and its nested submodule's.
    assert [p.suffix for p in (tmp_path / "cache").iterdir()].count(".git") == 2
    assert (tmp_path / "out" / "qola.cmake").is_file()


def test_verify_with_relative_root_and_source_dir_override_reads_them(
    tmp_path: Path, make_project, run_qola
) -> None:
    project = make_project()
    assert run_qola("checkout", "-q", "-m", str(project.manifest)).exit_code == 0

    at_root = run_qola("verify", "-m", "project/qola.toml", "--root", "project", cwd=tmp_path)
    overridden = run_qola(
        "verify",
        "-m",
        "project/qola.toml",
        cwd=tmp_path,
        env={"QOLA_SOURCE_DIR_LIB": "project/3rdparty/lib"},
    )

    assert at_root.exit_code == 0, at_root.stderr
    assert overridden.exit_code == 0, overridden.stderr
    assert f"using {project.lib} as is" in overridden.stdout
