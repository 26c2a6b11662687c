"""Values that would load and then make every command fail later are refused at load:
exit 2, `file:line`, a hint, nothing written. Names and paths longer than a file system
holds (in bytes of its encoding), names that are one variable to CMake, tracks that are no
ref name."""

from __future__ import annotations

from pathlib import Path

import pytest
from repos import git, init_repo, snapshot

from qola.repo import fslimits

SHA = "d32b0cb62ecc32bb1a858e8437d58eb9b3856af6"
URL = "/nonexistent/qola-test/lib.git"  # never reached: the load refuses first
LONG = "a" * 256  # one byte more than a name may have
CLONE_ROOM = fslimits.NAME_MAX - fslimits.CLONE_NAME  # 235: the last part of a dep's path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "project")
    git(root, "commit", "-q", "--allow-empty", "-m", "empty")
    return root


def refused(run_qola, root: Path, text: str, message: str, hint: str, *args: str) -> None:
    """checkout and verify exit 2 with message and hint, and leave every byte as it was."""
    manifest = root / "qola.toml"
    manifest.write_text(text)
    before = snapshot(root)
    for command in (["checkout"], ["verify"], ["bump", "lib", "--to", SHA]):
        res = run_qola(*command, "-m", str(manifest), *args)
        assert res.exit_code == 2, (command, res.stderr)
        assert res.stderr == f"qola: {message}\nhint: {hint}\n", command
        assert snapshot(root) == before


def dep(path: str = "3rdparty/lib", extra: str = "", name: str = "lib", url: str = URL) -> str:
    return f'[deps.{name}]\npath = "{path}"\nurl = "{url}"\ncommit = "{SHA}"\n{extra}'


SHORTEN = "shorten that folder name (bytes count: a UTF-8 letter such as é is two)"


@pytest.mark.parametrize(
    ("path", "size", "allowed"),
    [
        (f"3rdparty/{LONG}", 256, CLONE_ROOM),  # the case
        ("3rdparty/" + "é" * 118, 236, CLONE_ROOM),  # 118 characters, 236 bytes
        ("3rdparty/" + "b" * 236, 236, CLONE_ROOM),  # fits a file system, not the clone
        (f"{LONG}/lib", 256, 255),  # a folder on the way
    ],
    ids=["256-bytes", "utf-8-236-bytes", "236-bytes-last", "256-bytes-above"],
)
def test_a_dependency_folder_name_too_long_is_refused_at_load(
    path, size, allowed, root, run_qola
):
    part = next(p for p in path.split("/") if len(p.encode()) == size)
    shown = repr(part[:28] + "…" + part[-28:])
    why = (
        "255 bytes less the 20 of the temporary clone qola makes beside it"
        if allowed < 255
        else "what a file system allows"
    )
    refused(
        run_qola, root, dep(path),
        f"{root / 'qola.toml'}:2: deps.lib.path: the name {shown} is {size} bytes long; a "
        f"name may have {allowed} ({why})",
        SHORTEN,
    )  # fmt: skip


def test_the_longest_names_that_fit_load(root, run_qola):
    (root / "qola.toml").write_text(dep("é" * 127 + "/" + "é" * 117, 'patches = "' + "p" * 255
                                        + '"\n'))  # fmt: skip
    res = run_qola("verify", "--manifest-only", "-m", str(root / "qola.toml"))
    assert res.exit_code == 0, res.stderr


def test_a_dependency_path_longer_than_path_max_is_refused(root, run_qola):
    path = "/".join(["d" * 200] * 20)  # 4019 bytes below the root
    full = str(root / path)
    shown = repr(full[:28] + "…" + full[-28:])
    room = fslimits.CLONE_NAME + fslimits.GIT_ROOM
    refused(
        run_qola, root, dep(path),
        f"{root / 'qola.toml'}:2: deps.lib.path: its full path {shown} is "
        f"{len(full.encode())} bytes long; with {room} bytes more for the temporary clone "
        "beside it and git's own files in it, that is more than the 4095 bytes a path may "
        "have on this system (PATH_MAX)",
        "use a shorter path, or move the project to a folder with a shorter path",
    )  # fmt: skip


def test_a_patch_folder_name_too_long_is_refused(root, run_qola):
    shown = repr(LONG[:28] + "…" + LONG[-28:])
    refused(
        run_qola, root, dep(extra=f'patches = "patches/{LONG}"\n'),
        f"{root / 'qola.toml'}:5: deps.lib.patches: the name {shown} is 256 bytes long; a "
        "name may have 255 (what a file system allows)",
        SHORTEN,
    )  # fmt: skip


def test_the_legacy_forms_paths_are_measured_too(root, run_qola):
    """The path comes from .gitmodules, the patch folder from `<name>_patches`."""
    (root / ".gitmodules").write_text(
        f'[submodule "lib"]\n\tpath = 3rdparty/{LONG}\n\turl = {URL}\n'
    )
    shown = repr(LONG[:28] + "…" + LONG[-28:])
    refused(
        run_qola, root, f'[qola]\nlib_commit = "{SHA}"\n',
        f"{root / 'qola.toml'}:2: qola.lib_commit: the name {shown} is 256 bytes long; a "
        f"name may have {CLONE_ROOM} (255 bytes less the 20 of the temporary clone qola "
        "makes beside it)",
        SHORTEN,
    )  # fmt: skip
    (root / ".gitmodules").write_text(f'[submodule "lib"]\n\tpath = 3rdparty/lib\n\turl = {URL}\n')
    refused(
        run_qola, root, f'[qola]\nlib_commit = "{SHA}"\nlib_patches = "{LONG}"\n',
        f"{root / 'qola.toml'}:3: qola.lib_patches: the name {shown} is 256 bytes long; a "
        "name may have 255 (what a file system allows)",
        SHORTEN,
    )  # fmt: skip


def test_a_root_named_too_long_is_refused_from_the_manifest_and_the_command_line(
    root, run_qola
):
    shown = repr(LONG[:28] + "…" + LONG[-28:])
    refused(
        run_qola, root, f'[qola]\nroot = "{LONG}"\n\n' + dep(),
        f"{root / 'qola.toml'}:2: qola.root: the name {shown} is 256 bytes long; a name may "
        "have 255 (what a file system allows)",
        SHORTEN,
    )  # fmt: skip
    given = root / LONG
    printed = str(given)[:28] + "…" + str(given)[-28:]
    refused(
        run_qola, root, dep(),
        f"{printed} (--root): the name {shown} is 256 bytes long; a name may have 255 (what "
        "a file system allows)",
        SHORTEN, "--root", str(given),
    )  # fmt: skip


def test_a_local_url_no_file_system_can_hold_is_refused(root, run_qola):
    shown = repr(LONG[:28] + "…" + LONG[-28:])
    refused(
        run_qola, root, dep(url=f"/srv/git/{LONG}"),
        f"{root / 'qola.toml'}:3: deps.lib.url: the name {shown} is 256 bytes long; a name "
        "may have 255 (what a file system allows)",
        SHORTEN,
    )  # fmt: skip


def test_a_manifest_path_too_long_to_open_says_so_with_a_hint(root, run_qola):
    path = root / LONG / "qola.toml"
    res = run_qola("checkout", "-m", str(path))
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: {path}: cannot read the manifest: File name too long\n"
        "hint: give a shorter path to the manifest (a relative one, from a folder nearer it)\n"
    )


def test_a_dependency_name_longer_than_a_ref_folder_may_be_is_refused(root, run_qola):
    name = "n" * 256
    refused(
        run_qola, root, dep(name=name),
        f"{root / 'qola.toml'}:1: deps.{name}: the name {'n' * 20}… is 256 characters long; "
        "a name may have 255 (it names a folder, refs/qola/backup/<name>/)",
        "give it a shorter name",
    )  # fmt: skip


@pytest.mark.parametrize("other", ["my_lib", "MY-LIB", "My_Lib"])
def test_two_names_cmake_spells_as_one_variable_are_refused(other, root, run_qola):
    """my-lib and my_lib would share QOLA_MY_LIB_SHA and QOLA_SOURCE_DIR_MY_LIB: an
    override meant for one would silently move the other too."""
    text = dep(name="my-lib") + "\n" + dep("3rdparty/other", name=other)
    refused(
        run_qola, root, text,
        f"{root / 'qola.toml'}:6: deps.{other}: {other} and my-lib are one name to CMake and "
        "to the source override: both become QOLA_MY_LIB_SHA and QOLA_SOURCE_DIR_MY_LIB",
        "give one of them a name that differs in more than case, '-' and '_'",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("track", "why"),
    [
        ("main:refs/heads/evil", "it holds ':'"),
        ("+main", "a leading '+' forces a fetch"),
        ("a b", "it holds ' '"),
        ("v1..v2", "it holds '..'"),
        ("main.lock", "its part 'main.lock' ends with '.lock'"),
        ("feature/.hidden", "its part '.hidden' starts with '.'"),
        ("main^", "it holds '^'"),
        ("@", "'@' alone names HEAD"),
        ("x@{1}", "it holds '@{'"),
        ("main/", "it starts or ends with '/'"),
    ],
)
def test_a_track_that_is_no_ref_name_is_refused(track, why, root, run_qola):
    """The track is asked of the remote and used as a refspec by the fallback fetch: `a:b`
    would write the ref b in the dependency, `a*` fetch every ref it matches."""
    refused(
        run_qola, root, dep(extra=f'track = "{track}"\n'),
        f"{root / 'qola.toml'}:5: deps.lib.track: {track!r} is not a branch or tag name git "
        f"accepts ({why})",
        "give the branch or tag as git names it, e.g. main, release/2.1 or v2.1.0",
    )  # fmt: skip


@pytest.mark.parametrize("track", ["main", "release/2.1", "v2.1.0", "refs/heads/main", "a-b_c"])
def test_ordinary_tracks_load(track, root, run_qola):
    (root / "qola.toml").write_text(dep(extra=f'track = "{track}"\n'))
    assert run_qola("verify", "--manifest-only", "-m", str(root / "qola.toml")).exit_code == 0


def test_a_submodule_name_too_long_for_its_repository_folder_is_refused(root, run_qola):
    """A dependency that is a submodule of the root keeps its repository in
    .git/modules/<its name in .gitmodules>."""
    (root / ".gitmodules").write_text(
        f'[submodule "{LONG}"]\n\tpath = 3rdparty/lib\n\turl = {URL}\n'
    )
    shown = repr(LONG[:28] + "…" + LONG[-28:])
    refused(
        run_qola, root, f'[deps.lib]\npath = "3rdparty/lib"\ncommit = "{SHA}"\n',
        f"{root / 'qola.toml'}:2: deps.lib.path: its submodule's name in .gitmodules, where "
        f"git keeps its repository (.git/modules/<name>): the name {shown} is 256 bytes "
        "long; a name may have 255 (what a file system allows)",
        "give the submodule a shorter name in .gitmodules",
    )  # fmt: skip
