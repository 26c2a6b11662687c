"""A pull in the root leaves the dependencies qola manages to qola: git's own fetch, which
recurses into a submodule whose gitlink the pulled commits move, fetches nothing for them."""

from __future__ import annotations

from pathlib import Path

from repos import commit_file, git, init_repo
from superprojects import legacy_superproject


def _objects(repo: Path) -> set[str]:
    out = git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(out.split())


def test_a_pull_that_brings_a_bump_fetches_nothing_for_the_dependency(tmp_path: Path, run_qola):
    lib = init_repo(tmp_path / "lib")
    v1 = commit_file(lib, "lib.txt", "v1\n")
    v2 = commit_file(lib, "lib.txt", "v2\n")
    git(lib, "checkout", "-q", "-b", "side")  # a branch the root's pin never needs
    commit_file(lib, "side.txt", "side work\n")
    git(lib, "checkout", "-q", "main")
    origin = legacy_superproject(tmp_path / "origin", lib, v1)
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    assert run_qola("checkout", cwd=work).exit_code == 0
    modules = work / ".git" / "modules" / "3rdparty" / "lib"
    assert git(work, "config", "submodule.3rdparty/lib.fetchRecurseSubmodules") == "false"
    # Upstream, someone bumps lib: the manifest and the gitlink move together.
    git(origin, "update-index", "--cacheinfo", f"160000,{v2},3rdparty/lib")
    (origin / "qola.toml").write_text(f'[qola]\nnamespace = "te"\nlib_commit = "{v2}"\n')
    git(origin, "commit", "-qam", "bump lib")
    fetch_head = modules / "FETCH_HEAD"
    objects, refs, fetched = _objects(modules), git(modules, "for-each-ref"), fetch_head.stat()

    git(work, "pull", "-q")

    assert _objects(modules) == objects  # without the setting: v2 and the side branch
    assert git(modules, "for-each-ref") == refs
    assert fetch_head.stat().st_mtime_ns == fetched.st_mtime_ns  # no fetch ran there
    # qola's own checkout then fetches the pin, and no more.
    res = run_qola("checkout", cwd=work)
    assert res.exit_code == 0, res.stderr
    assert git(work / "3rdparty" / "lib", "rev-parse", "HEAD") == v2
    assert "side work" not in git(modules, "log", "--all", "--format=%s")


def test_a_setting_someone_made_is_theirs(tmp_path: Path, run_qola):
    lib = init_repo(tmp_path / "lib")
    v1 = commit_file(lib, "lib.txt", "v1\n")
    origin = legacy_superproject(tmp_path / "origin", lib, v1)
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    git(work, "config", "submodule.3rdparty/lib.fetchRecurseSubmodules", "on-demand")
    res = run_qola("checkout", cwd=work)
    assert res.exit_code == 0, res.stderr
    assert git(work, "config", "submodule.3rdparty/lib.fetchRecurseSubmodules") == "on-demand"
    assert run_qola("checkout", cwd=work).stdout.endswith("up to date\n")
