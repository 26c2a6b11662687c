"""The results file that `checkout --cmake-out` writes, read back by real CMake."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import Upstream
from repos import git

from qola import manifest
from qola.base.errors import ManifestError
from qola.gitrun.git import Runner
from qola.output.cmake_results import CMakeResult, cmake_name, render, write_results
from qola.repo import commitcache
from qola.sync import at_pin
from qola.sync.observe import observe

SHA = "d32b0cb62ecc32bb1a858e8437d58eb9b3856af6"


def cmake_values(results: Path, *variables: str) -> dict[str, str]:
    """Include the file in `cmake -P` and return each variable's value, byte for byte."""
    script = results.parent / "read.cmake"
    out = results.parent / "values"
    lines = [f'include("{results.as_posix()}")', f'file(WRITE "{out.as_posix()}" "")']
    for variable in variables:
        lines.append(f'file(APPEND "{out.as_posix()}" "{variable}=${{{variable}}}\\n---\\n")')
    script.write_text("\n".join(lines) + "\n")
    cmake = shutil.which("cmake")
    assert cmake is not None
    subprocess.run([cmake, "-P", str(script)], check=True, capture_output=True)
    values = {}
    for chunk in out.read_text().split("\n---\n")[:-1]:
        name, _, value = chunk.partition("=")
        values[name] = value
    return values


def test_cmake_name_upper_cases_and_replaces_other_characters() -> None:
    assert cmake_name("aiter") == "AITER"
    assert cmake_name("ck-tile.v2") == "CK_TILE_V2"
    assert cmake_name("Lib_3") == "LIB_3"


def test_results_read_back_exactly_by_cmake_even_with_special_characters(tmp_path: Path) -> None:
    odd = tmp_path / 'a "quoted" $dollar ${HOME} back\\slash;semi #hash'
    results = tmp_path / "out" / "results.cmake"

    wrote = write_results(
        results, [CMakeResult("lib", SHA, odd), CMakeResult("ck-tile", SHA, tmp_path)]
    )

    assert wrote
    assert cmake_values(
        results,
        "QOLA_LIB_SHA",
        "QOLA_LIB_SOURCE_DIR",
        "QOLA_CK_TILE_SOURCE_DIR",
        "QOLA_DEPENDENCIES",
    ) == {
        "QOLA_LIB_SHA": SHA,
        "QOLA_LIB_SOURCE_DIR": odd.as_posix(),
        "QOLA_CK_TILE_SOURCE_DIR": tmp_path.as_posix(),
        "QOLA_DEPENDENCIES": "lib;ck-tile",
    }


def test_unchanged_results_are_not_rewritten(tmp_path: Path) -> None:
    results = tmp_path / "results.cmake"
    deps = [CMakeResult("lib", SHA, tmp_path / "lib")]
    assert write_results(results, deps)
    before = results.stat()

    wrote = write_results(results, deps)

    assert not wrote
    after = results.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_changed_results_replace_the_file_and_leave_no_temporary_file(tmp_path: Path) -> None:
    results = tmp_path / "results.cmake"
    write_results(results, [CMakeResult("lib", SHA, tmp_path / "lib")])
    other = "9f1e2aa" + SHA[7:]

    wrote = write_results(results, [CMakeResult("lib", other, tmp_path / "lib")])

    assert wrote
    assert f'set(QOLA_LIB_SHA "{other}")' in results.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["results.cmake"]


def test_names_that_become_the_same_cmake_variable_are_rejected(tmp_path: Path) -> None:
    deps = [CMakeResult("foo-bar", SHA, tmp_path), CMakeResult("foo_bar", SHA, tmp_path)]

    with pytest.raises(ManifestError) as info:
        write_results(tmp_path / "results.cmake", deps)

    assert info.value.render(cmake_build=None) == (
        "qola: cmake: dependencies 'foo-bar' and 'foo_bar' both become QOLA_FOO_BAR_* in CMake\n"
        "hint: rename one of them"
    )
    assert not (tmp_path / "results.cmake").exists()


def _pinned_checkout(tmp_path: Path, upstream: Upstream) -> manifest.Manifest:
    root = tmp_path / "root"
    root.mkdir()
    (root / "qola.toml").write_text(
        f'[deps.lib]\npath = "lib"\nurl = "{upstream.lib}"\ncommit = "{upstream.lib_v2}"\n'
    )
    git(root, "clone", "-q", "--recurse-submodules", str(upstream.lib), "lib")
    git(root / "lib", "checkout", "-q", "--detach", upstream.lib_v2)
    git(root / "lib", "submodule", "update", "-q")
    loaded = manifest.load(root / "qola.toml")
    # What qola's checkout leaves behind: each commit's gitlinks remembered (the stamp lists
    # the nested submodules HEAD's commit records, and proves nothing without them).
    observe(loaded, loaded.deps[0], Runner(), write_cache=True)
    return loaded


def stamp_of(loaded: manifest.Manifest, sha: str, source: Path) -> list[str]:
    """The stamp the results file carries for lib at source, with what proves it."""
    proof = at_pin.proven(loaded, loaded.deps)
    return _stamp(render([CMakeResult("lib", sha, source)], loaded, proof))


def _stamp(text: str) -> list[str]:
    """The stamp of a results file as [path, expectation, ...], from its lists by kind."""
    lists = {}
    for line in text.splitlines():
        if line.startswith("set(_QOLA_STAMP_"):
            name, _, value = line[len("set(") : -len('")')].partition(' "')
            lists[name] = value.split(";") if value else []
    flat = []
    for kind, paths, digests in (
        ("missing", "MISSING", None),
        ("dir", "DIRS", None),
        ("file", "PRESENT", None),
        ("sha256", "FILES", "SHA256"),
        ("realpath", "REALPATHS", "REALPATH_SHA256"),
        ("glob", "GLOBS", "GLOB_SHA256"),
    ):
        found = lists.get(f"_QOLA_STAMP_{paths}", [])
        values = lists.get(f"_QOLA_STAMP_{digests}", []) if digests else [""] * len(found)
        for path, digest in zip(found, values, strict=True):
            flat += [path, f"{kind}:{digest}" if digests else kind]
    return flat


def test_stamp_lists_manifest_and_every_head_of_a_detached_checkout(
    tmp_path: Path, upstream: Upstream
) -> None:
    loaded = _pinned_checkout(tmp_path, upstream)
    lib = loaded.root / "lib"

    stamp = stamp_of(loaded, upstream.lib_v2, lib)

    paths = stamp[0::2]
    assert loaded.path.as_posix() in paths
    assert (lib / ".git" / "HEAD").as_posix() in paths
    assert (lib / ".git" / "modules" / "extern" / "nested" / "HEAD").as_posix() in paths
    assert (lib / "extern" / "nested" / ".git").as_posix() in paths


def test_stamp_watches_the_branch_a_head_is_on(tmp_path: Path, upstream: Upstream) -> None:
    loaded = _pinned_checkout(tmp_path, upstream)
    lib = loaded.root / "lib"
    # A branch HEAD moves without the HEAD file changing: the branch's ref proves it.
    git(lib, "checkout", "-q", "-B", "work", upstream.lib_v2)

    stamp = stamp_of(loaded, upstream.lib_v2, lib)

    paths = stamp[0::2]
    assert (lib / ".git" / "HEAD").as_posix() in paths
    assert (lib / ".git" / "refs" / "heads" / "work").as_posix() in paths


def test_stamp_skips_an_overridden_dependency(
    tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = _pinned_checkout(tmp_path, upstream)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("QOLA_SOURCE_DIR_LIB", str(elsewhere))

    stamp = stamp_of(loaded, upstream.lib_v2, elsewhere)

    paths = stamp[0::2]
    assert loaded.path.as_posix() in paths
    assert not [p for p in paths if p.startswith(elsewhere.as_posix())]
    # Of its own folder in the project: where it leads, that it is no git dir (the
    # manifest checks both of every dependency), and that the repository there is one
    # qola takes (git in the root reaches it): what that look read, not its commits.
    lib = (loaded.root / "lib").as_posix()
    pairs = list(zip(stamp[0::2], stamp[1::2], strict=True))
    under = {(p, e.split(":")[0]) for p, e in pairs if p.startswith(lib)}
    assert {(lib, "realpath"), (f"{lib}/HEAD", "missing"), (f"{lib}/.git", "dir"),
            (f"{lib}/.git/config", "sha256")} <= under  # fmt: skip
    assert not [p for p, _ in under if p.startswith(f"{lib}/.git/modules")]  # no nested look


def test_stamp_is_empty_when_the_commits_gitlinks_are_not_remembered(
    tmp_path: Path, upstream: Upstream
) -> None:
    loaded = _pinned_checkout(tmp_path, upstream)
    lib = loaded.root / "lib"
    shutil.rmtree(commitcache.record_file(lib / ".git", "commits", "any").parent)

    assert stamp_of(loaded, upstream.lib_v2, lib) == []
