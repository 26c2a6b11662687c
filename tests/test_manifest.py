"""The manifest: the examples load, and every rule of docs/manifest.md holds, as users see it."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from repos import git, init_repo, snapshot
from shell import SOURCE

from qola.manifest import Dep, load

EXAMPLES = Path(__file__).resolve().parent.parent / "manifests"
PIN = "d32b0cb62ecc32bb1a858e8437d58eb9b3856af6"
CK_PIN = "4c1e3a7b9f02d85e6a1b7c3d9e0f2a4b6c8d0e1f"
AITER_URL = "https://github.com/ROCm/aiter.git"
CK_URL = "https://github.com/ROCm/composable_kernel.git"
FORK_URL = "https://github.com/someone/aiter.git"
GTEST_URL = "https://github.com/google/googletest.git"
URL_HINT = "hint: use https://, http://, ssh://, git://, file://, user@host:path or a local path\n"
PATH_HINT = 'hint: write a relative path such as "3rdparty/aiter"\n'

RunQola = Callable[..., Any]


@dataclass(frozen=True)
class Root:
    """A git repository, the root, that holds the manifest qola.toml."""

    path: Path

    @property
    def manifest(self) -> Path:
        return self.path / "qola.toml"

    def write(self, text: str) -> Path:
        self.manifest.write_text(text)
        return self.manifest

    def copy_example(self, name: str) -> Path:
        shutil.copy(EXAMPLES / name, self.manifest)
        return self.manifest

    def declare_submodules(self, *modules: tuple[str, str, str]) -> None:
        """Write a .gitmodules declaring (name, path, url) submodules."""
        (self.path / ".gitmodules").write_text(
            "".join(f'[submodule "{n}"]\n\tpath = {p}\n\turl = {u}\n' for n, p, u in modules)
        )


@pytest.fixture
def empty_root(tmp_path: Path) -> Root:
    """A new git repository with nothing in it yet."""
    return Root(init_repo(tmp_path / "project"))


def toml_str(value: str) -> str:
    """value as a TOML basic string (JSON's escapes are valid TOML)."""
    return json.dumps(value)


def aiter(**keys: str | None) -> str:
    """A [deps.aiter] table: header on line 1, path on 2, url on 3, commit on 4, then extras.

    A key given as None is left out.
    """
    values = {"path": "3rdparty/aiter", "url": AITER_URL, "commit": PIN, **keys}
    lines = ["[deps.aiter]"] + [f"{k} = {toml_str(v)}" for k, v in values.items() if v is not None]
    return "\n".join(lines) + "\n"


def line_of(path: Path, start: str) -> int:
    """The number of the first line of path that starts with start."""
    lines = path.read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.startswith(start))


def rejected(
    run_qola: RunQola, manifest: Path, folder: Path, *args: str, command: str = "verify"
) -> str:
    """Run a command on an invalid manifest; check exit 2, no stdout, nothing changed on disk.

    Returns stderr, for the caller to compare whole.
    """
    before = snapshot(folder)
    res = run_qola(command, "-m", str(manifest), *args)
    assert res.exit_code == 2, res.stderr
    assert res.stdout == ""
    assert snapshot(folder) == before
    return str(res.stderr)


def accepted(
    run_qola: RunQola, manifest: Path, *args: str, kinds: frozenset[str] = frozenset({"missing"})
) -> dict[str, Any]:
    """Run `verify --format json` on a valid manifest whose deps are not checked out."""
    res = run_qola("verify", "--format", "json", "-m", str(manifest), *args)
    assert res.exit_code == 1, res.stderr  # valid, but the deps are missing: not 2
    assert res.stderr == ""
    report: dict[str, Any] = json.loads(res.stdout)
    assert {p["kind"] for d in report["deps"] for p in d["problems"]} == kinds
    return report


# --- the examples in manifests/ ---------------------------------------------------


def test_full_example_loads_every_key_as_written(empty_root: Root, run_qola: RunQola) -> None:
    empty_root.declare_submodules(("3rdparty/aiter", "3rdparty/aiter", AITER_URL))
    manifest = empty_root.copy_example("full.toml")
    loaded = load(manifest)
    assert loaded.path == manifest
    assert loaded.root == empty_root.path
    assert loaded.warnings == ()
    assert loaded.deps == (
        Dep(
            name="aiter",
            path="3rdparty/aiter",
            url=AITER_URL,
            commit=PIN,
            track="main",
            submodules=True,
            patches="patches/aiter",
            submodule_name="3rdparty/aiter",
            key="deps.aiter.commit",
            line=line_of(manifest, f'commit = "{PIN}"'),
        ),
        Dep(
            name="composable_kernel",
            path="3rdparty/composable_kernel",
            url=CK_URL,
            commit=CK_PIN,
            track="develop",
            submodules=False,
            patches=None,
            submodule_name=None,
            key="deps.composable_kernel.commit",
            line=line_of(manifest, f'commit = "{CK_PIN}"'),
        ),
    )
    # Patch series are not supported yet: verify says so instead of passing.
    report = accepted(run_qola, manifest, kinds=frozenset({"missing", "patches"}))
    assert [(d["name"], d["pinned"]) for d in report["deps"]] == [
        ("aiter", PIN),
        ("composable_kernel", CK_PIN),
    ]


def test_te_legacy_example_resolves_aiter_through_gitmodules_and_ignores_other_tools_keys(
    empty_root: Root, run_qola: RunQola
) -> None:
    empty_root.declare_submodules(
        ("3rdparty/googletest", "3rdparty/googletest", GTEST_URL),
        ("3rdparty/aiter", "3rdparty/aiter", AITER_URL),
    )
    manifest = empty_root.copy_example("te-legacy.toml")
    loaded = load(manifest)
    assert loaded.root == empty_root.path
    assert loaded.warnings == ()
    assert loaded.deps == (
        Dep(
            name="aiter",
            path="3rdparty/aiter",
            url=AITER_URL,
            commit=PIN,
            track="zain/test",  # aiter_track: TE's pin is on an AITER branch, not on main
            submodules=True,
            patches="patches",
            submodule_name="3rdparty/aiter",
            key="qola.aiter_commit",
            line=line_of(manifest, "aiter_commit ="),
        ),
    )
    # stderr empty: no word about [build], [[modules]]; patches_dir is reported, not applied.
    report = accepted(run_qola, manifest, kinds=frozenset({"missing", "patches"}))
    assert [(d["name"], d["pinned"]) for d in report["deps"]] == [("aiter", PIN)]


# --- TOML and schema --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            '[deps.aiter\npath = "x"\n',
            "1:12: invalid TOML: Expected ']' at the end of a table declaration",
        ),
        ('[deps.aiter]\ncommit = "d32b0cb\n', "2:18: invalid TOML: Illegal character '\\n'"),
        (
            '[deps.aiter]\ncommit = "d32b0cb',
            "2:18: invalid TOML: Unterminated string at the end of the file",
        ),
    ],
    ids=["table-header", "newline-in-string", "end-of-file"],
)
def test_malformed_toml_reports_line_and_column(
    empty_root: Root, run_qola: RunQola, text: str, error: str
) -> None:
    manifest = empty_root.write(text)
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:{error}\n"
        "hint: fix the syntax there; the manifest is TOML (https://toml.io)\n"
    )


def test_newer_schema_is_reported_before_any_other_problem(
    empty_root: Root, run_qola: RunQola
) -> None:
    manifest = empty_root.write(
        '[qola]\nschema = 2\nroot = "no/such/folder"\n\n'
        '[deps.aiter]\npath = "/abs"\ncomit = "main"\n'
    )
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:2: qola.schema: schema 2 is newer than this qola understands "
        "(schema 1)\n"
        f"hint: upgrade qola: this one runs from {SOURCE}; move that checkout to a newer qola\n"
    )


# --- keys and commits -------------------------------------------------------------


def test_unknown_dep_key_is_rejected_with_did_you_mean(empty_root: Root, run_qola: RunQola) -> None:
    manifest = empty_root.write(aiter(commit=None, comit=PIN))
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:4: deps.aiter.comit: unknown key\nhint: did you mean 'commit'?\n"
    )


def test_unknown_dep_key_unlike_any_lists_the_known_keys(
    empty_root: Root, run_qola: RunQola
) -> None:
    manifest = empty_root.write(aiter(colour="red"))
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:5: deps.aiter.colour: unknown key\n"
        "hint: known keys: path, url, commit, tag, track, submodules, patches, groups, "
        "allowed-signers, keyring\n"
    )


@pytest.mark.parametrize("ref", ["main", "v0.1.2", "release/rocm-7.0"])
def test_commit_that_is_a_branch_or_tag_is_rejected_with_bump_hint(
    empty_root: Root, run_qola: RunQola, ref: str
) -> None:
    manifest = empty_root.write(aiter(commit=ref))
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:4: deps.aiter.commit: '{ref}' is a branch or tag name, "
        "not a commit SHA\n"
        f"hint: qola bump aiter --to {ref}\n"
    )


@pytest.mark.parametrize("short", ["d32b0cb", PIN[:39], PIN + "0"])
def test_commit_that_is_not_a_full_sha_is_rejected_in_deps_form(
    empty_root: Root, run_qola: RunQola, short: str
) -> None:
    manifest = empty_root.write(aiter(commit=short))
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:4: deps.aiter.commit: '{short}' is not a full commit SHA "
        "(40 hex digits, or 64 for sha256)\n"
        "hint: write the full 40-hex SHA in its place\n"
    )


def test_commit_in_upper_case_is_normalised_to_lower_case(empty_root: Root) -> None:
    sha256 = "AB" * 32
    manifest = empty_root.write(
        aiter(commit=PIN.upper())
        + f'\n[deps.ck]\npath = "3rdparty/ck"\nurl = "{CK_URL}"\ncommit = "{sha256}"\n'
    )
    assert [dep.commit for dep in load(manifest).deps] == [PIN, sha256.lower()]


def test_legacy_abbreviated_commit_warns_and_is_expanded_from_the_root_gitlink(
    empty_root: Root, run_qola: RunQola
) -> None:
    empty_root.declare_submodules(("aiter", "3rdparty/aiter", AITER_URL))
    git(empty_root.path, "update-index", "--add", "--cacheinfo", f"160000,{PIN},3rdparty/aiter")
    manifest = empty_root.write('[qola]\naiter_commit = "D32B0CB"\n')
    res = run_qola("verify", "--format", "json", "-m", str(manifest))
    assert res.exit_code == 1  # accepted; aiter is just not checked out
    assert res.stderr == (  # the warning, and the fix: the SHA to write
        f"qola: warning: {manifest}:2: qola.aiter_commit: abbreviated SHA 'd32b0cb'; "
        "write the full 40-hex SHA in its place\n"
        f"qola: {manifest}:2: qola.aiter_commit: 'd32b0cb' is {PIN} (expanded from the "
        "root's gitlink or the checkout)\n"
    )
    assert json.loads(res.stdout)["deps"][0]["pinned"] == PIN


def test_legacy_abbreviated_commit_that_cannot_be_expanded_is_rejected(
    empty_root: Root, run_qola: RunQola
) -> None:
    empty_root.declare_submodules(("aiter", "3rdparty/aiter", AITER_URL))
    manifest = empty_root.write('[qola]\naiter_commit = "d32b0cb"\n')
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: warning: {manifest}:2: qola.aiter_commit: abbreviated SHA 'd32b0cb'; "
        "write the full 40-hex SHA in its place\n"
        f"qola: {manifest}:2: qola.aiter_commit: cannot expand the abbreviated SHA 'd32b0cb' "
        "locally (not in the root's gitlink nor in the checkout)\n"
        "hint: write the full 40-hex SHA in its place\n"
    )


def test_legacy_commit_shorter_than_seven_hex_is_rejected(
    empty_root: Root, run_qola: RunQola
) -> None:
    empty_root.declare_submodules(("aiter", "3rdparty/aiter", AITER_URL))
    manifest = empty_root.write('[qola]\naiter_commit = "d32b0c"\n')
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:2: qola.aiter_commit: 'd32b0c' is not a full commit SHA "
        "(40 hex digits, or 64 for sha256)\n"
        "hint: write the full 40-hex SHA in its place\n"
    )


# --- paths ------------------------------------------------------------------------

_ABSOLUTE = "hint: paths are relative to the root, {root}\n"
_DOTDOT = "hint: paths must stay inside the root\n"
_DOTGIT = "hint: git's own folders are off limits\n"


@pytest.mark.parametrize(
    ("path", "problem", "hint"),
    [
        ("/opt/aiter", "'/opt/aiter' is absolute", _ABSOLUTE),
        ("C:/aiter", "'C:/aiter' is absolute", _ABSOLUTE),
        ("../aiter", "'../aiter' contains '..'", _DOTDOT),
        ("3rdparty/../../aiter", "'3rdparty/../../aiter' contains '..'", _DOTDOT),
        (".git/modules/aiter", "'.git/modules/aiter' has a .git component", _DOTGIT),
        ("3rdparty/aiter/.git", "'3rdparty/aiter/.git' has a .git component", _DOTGIT),
        ("3rdparty/.GIT/aiter", "'3rdparty/.GIT/aiter' has a .git component", _DOTGIT),
        ("3rdparty/ai\nter", "'3rdparty/ai\\nter' contains control characters", PATH_HINT),
        (
            "3rdparty/\x1b[2Jaiter",
            "'3rdparty/\\x1b[2Jaiter' contains control characters",
            PATH_HINT,
        ),
        ("3rdparty/aiter\x7f", "'3rdparty/aiter\\x7f' contains control characters", PATH_HINT),
        # C1 controls (a CSI) and bidirectional overrides: the no-op prints paths as they are
        ("3rdparty/\x9b2Jaiter", "'3rdparty/\\x9b2Jaiter' contains control characters", PATH_HINT),
        (
            "3rdparty/\u202egnp.exe",
            "'3rdparty/\\u202egnp.exe' contains control characters",
            PATH_HINT,
        ),
        ("", "is empty", PATH_HINT),
        (
            "3rdparty\\aiter",
            "'3rdparty\\\\aiter' contains '\\'",
            "hint: separate folders with '/'\n",
        ),
        ("./", "'./' is the root itself", "hint: give it a folder below the root\n"),
    ],
)
def test_unsafe_path_is_rejected(
    empty_root: Root, run_qola: RunQola, path: str, problem: str, hint: str
) -> None:
    manifest = empty_root.write(aiter(path=path))
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:2: deps.aiter.path: {problem}\n" + hint.format(root=empty_root.path)
    )


def test_path_leaving_the_root_through_a_symlink_is_rejected(
    empty_root: Root, tmp_path: Path, run_qola: RunQola
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (empty_root.path / "3rdparty").symlink_to(outside)
    manifest = empty_root.write(aiter())
    assert rejected(run_qola, manifest, tmp_path) == (
        f"qola: {manifest}:2: deps.aiter.path: '3rdparty/aiter' leaves the root through a "
        f"symlink (to {outside.resolve()}/aiter)\n"
        f"hint: paths must stay inside the root, {empty_root.path.resolve()}\n"
    )


def test_path_through_a_symlink_that_stays_inside_the_root_is_accepted(
    empty_root: Root,
) -> None:
    (empty_root.path / "3rdparty").mkdir()
    (empty_root.path / "vendor").symlink_to("3rdparty")
    manifest = empty_root.write(aiter(path="vendor/aiter"))
    assert [dep.path for dep in load(manifest).deps] == ["vendor/aiter"]


def test_patches_folder_follows_the_path_rules(empty_root: Root, run_qola: RunQola) -> None:
    manifest = empty_root.write(aiter(patches="../patches"))
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:5: deps.aiter.patches: '../patches' contains '..'\n{_DOTDOT}"
    )


def test_two_deps_with_the_same_path_are_rejected(empty_root: Root, run_qola: RunQola) -> None:
    manifest = empty_root.write(
        aiter() + f'\n[deps.aiter_fork]\npath = "./3rdparty/aiter/"\nurl = "{FORK_URL}"\n'
        f'commit = "{PIN}"\n'
    )
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:7: deps.aiter_fork.path: aiter_fork and aiter have the same path "
        "'3rdparty/aiter'\n"
        "hint: give each dependency its own folder\n"
    )


def test_dep_nested_inside_another_dep_is_rejected(empty_root: Root, run_qola: RunQola) -> None:
    nested = "3rdparty/aiter/3rdparty/composable_kernel"
    manifest = empty_root.write(
        aiter() + f'\n[deps.composable_kernel]\npath = "{nested}"\nurl = "{CK_URL}"\n'
        f'commit = "{CK_PIN}"\n'
    )
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:7: deps.composable_kernel.path: composable_kernel at '{nested}' is "
        "inside aiter at '3rdparty/aiter'\n"
        "hint: give each dependency its own folder; a dependency's own submodules follow its "
        "pin and need no entry\n"
    )


def test_deps_whose_paths_only_share_a_prefix_are_accepted(empty_root: Root) -> None:
    manifest = empty_root.write(
        aiter() + f'\n[deps.aiter_fork]\npath = "3rdparty/aiter-fork"\nurl = "{FORK_URL}"\n'
        f'commit = "{PIN}"\n'
    )
    assert [dep.path for dep in load(manifest).deps] == ["3rdparty/aiter", "3rdparty/aiter-fork"]


# --- URLs -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option", ["--upload-pack=touch {marker}", "-oProxyCommand=touch {marker}"]
)
@pytest.mark.parametrize("command", ["verify", "checkout"])
def test_url_starting_with_a_dash_is_rejected_and_runs_nothing(
    empty_root: Root, tmp_path: Path, run_qola: RunQola, option: str, command: str
) -> None:
    marker = tmp_path / "marker"
    url = option.format(marker=marker)
    manifest = empty_root.write(aiter(url=url))
    assert rejected(run_qola, manifest, empty_root.path, command=command) == (
        f"qola: {manifest}:3: deps.aiter.url: '{url}' starts with '-', which git would read as "
        f"an option\n{URL_HINT}"
    )
    assert not marker.exists()


@pytest.mark.parametrize("url", ["ext::sh -c touch% {marker}", "fd::3", "fd::3,4/aiter"])
@pytest.mark.parametrize("command", ["verify", "checkout"])
def test_url_with_a_helper_transport_is_rejected_and_runs_nothing(
    empty_root: Root, tmp_path: Path, run_qola: RunQola, url: str, command: str
) -> None:
    marker = tmp_path / "marker"
    url = url.format(marker=marker)
    manifest = empty_root.write(aiter(url=url))
    assert rejected(run_qola, manifest, empty_root.path, command=command) == (
        f"qola: {manifest}:3: deps.aiter.url: '{url}' uses a '<helper>::' transport, which can "
        f"run commands\n{URL_HINT}"
    )
    assert not marker.exists()


def test_gitmodules_url_with_a_helper_transport_is_rejected(
    empty_root: Root, tmp_path: Path, run_qola: RunQola
) -> None:
    marker = tmp_path / "marker"
    empty_root.declare_submodules(("aiter", "3rdparty/aiter", f"ext::sh -c touch% {marker}"))
    manifest = empty_root.write(f'[qola]\naiter_commit = "{PIN}"\n')
    assert rejected(run_qola, manifest, empty_root.path, command="checkout") == (
        f"qola: {manifest}:2: qola.aiter_commit: 'ext::sh -c touch% {marker}' uses a "
        f"'<helper>::' transport, which can run commands\n{URL_HINT}"
    )
    assert not marker.exists()


@pytest.mark.parametrize(
    ("url", "scheme"),
    [("ftp://mirror.example/aiter.git", "ftp"), ("rsync://mirror.example/aiter", "rsync")],
)
def test_url_with_another_scheme_is_rejected(
    empty_root: Root, run_qola: RunQola, url: str, scheme: str
) -> None:
    manifest = empty_root.write(aiter(url=url))
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:3: deps.aiter.url: '{url}': scheme '{scheme}' is not allowed\n{URL_HINT}"
    )


@pytest.mark.parametrize(
    ("url", "resolved"),
    [
        (AITER_URL, AITER_URL),
        ("http://mirror.example/aiter.git", "http://mirror.example/aiter.git"),
        ("ssh://git@github.com/ROCm/aiter.git", "ssh://git@github.com/ROCm/aiter.git"),
        ("git://mirror.example/aiter.git", "git://mirror.example/aiter.git"),
        ("file:///srv/git/aiter.git", "file:///srv/git/aiter.git"),
        ("git@github.com:ROCm/aiter.git", "git@github.com:ROCm/aiter.git"),
        ("/srv/git/aiter.git", "/srv/git/aiter.git"),
        ("mirrors/aiter.git", "{root}/mirrors/aiter.git"),
        ("./mirrors/aiter.git", "{root}/mirrors/aiter.git"),
        ("../mirrors/aiter.git", "{root.parent}/mirrors/aiter.git"),
    ],
)
def test_allowed_url_forms_are_accepted(empty_root: Root, url: str, resolved: str) -> None:
    manifest = empty_root.write(aiter(url=url))
    assert [dep.url for dep in load(manifest).deps] == [resolved.format(root=empty_root.path)]


# --- .gitmodules ------------------------------------------------------------------


def test_dep_without_url_and_path_is_found_by_submodule_name_first(empty_root: Root) -> None:
    empty_root.declare_submodules(
        ("fork", "vendor/aiter", FORK_URL),  # its last path component is "aiter" too
        ("aiter", "3rdparty/aiter-upstream", AITER_URL),
    )
    manifest = empty_root.write(f'[deps.aiter]\ncommit = "{PIN}"\n')
    (dep,) = load(manifest).deps
    assert (dep.path, dep.url, dep.submodule_name) == (
        "3rdparty/aiter-upstream",
        AITER_URL,
        "aiter",
    )


def test_dep_without_url_and_path_is_found_by_last_path_component(empty_root: Root) -> None:
    empty_root.declare_submodules(
        ("3rdparty/googletest", "3rdparty/googletest", GTEST_URL),
        ("3rdparty/aiter", "3rdparty/aiter", AITER_URL),
    )
    manifest = empty_root.write(f'[deps.aiter]\ncommit = "{PIN}"\n')
    (dep,) = load(manifest).deps
    assert (dep.path, dep.url, dep.submodule_name) == (
        "3rdparty/aiter",
        AITER_URL,
        "3rdparty/aiter",
    )


# The expected URLs are what `git submodule init` writes for the same remote and .gitmodules.
@pytest.mark.parametrize(
    ("origin", "resolved"),
    [
        ("https://github.com/ROCm/TransformerEngine.git", AITER_URL),
        ("git@github.com:ROCm/TransformerEngine.git", "git@github.com:ROCm/aiter.git"),
        ("git@gitlab.example:te.git", "git@gitlab.example:aiter.git"),
        ("/srv/git/te.git", "/srv/git/aiter.git"),
        (None, "{root.parent}/aiter.git"),
    ],
)
def test_relative_gitmodules_url_is_resolved_like_git_does(
    empty_root: Root, origin: str | None, resolved: str
) -> None:
    if origin:
        git(empty_root.path, "remote", "add", "origin", origin)
    empty_root.declare_submodules(("3rdparty/aiter", "3rdparty/aiter", "../aiter.git"))
    manifest = empty_root.write(f'[qola]\naiter_commit = "{PIN}"\n')
    assert [dep.url for dep in load(manifest).deps] == [resolved.format(root=empty_root.path)]


def test_dep_with_path_but_no_url_takes_the_url_of_the_submodule_there(empty_root: Root) -> None:
    empty_root.declare_submodules(("upstream", "3rdparty/aiter", AITER_URL))
    manifest = empty_root.write(f'[deps.ai]\npath = "3rdparty/aiter"\ncommit = "{PIN}"\n')
    (dep,) = load(manifest).deps
    assert (dep.path, dep.url, dep.submodule_name) == ("3rdparty/aiter", AITER_URL, "upstream")


def test_dep_with_url_but_no_path_takes_the_submodule_path(empty_root: Root) -> None:
    empty_root.declare_submodules(("aiter", "3rdparty/aiter", AITER_URL))
    manifest = empty_root.write(f'[deps.aiter]\nurl = "{FORK_URL}"\ncommit = "{PIN}"\n')
    (dep,) = load(manifest).deps
    assert (dep.path, dep.url, dep.submodule_name) == ("3rdparty/aiter", FORK_URL, "aiter")


def test_dep_with_path_but_no_url_and_no_submodule_there_is_rejected(
    empty_root: Root, run_qola: RunQola
) -> None:
    empty_root.declare_submodules(("aiter", "vendor/aiter", AITER_URL))
    manifest = empty_root.write(aiter(url=None))
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:1: deps.aiter: has no url and no submodule of the root is at "
        "'3rdparty/aiter'\n"
        'hint: add url = "…" or declare the submodule in .gitmodules\n'
    )


def test_dep_matching_no_submodule_lists_the_candidates(
    empty_root: Root, run_qola: RunQola
) -> None:
    empty_root.declare_submodules(
        ("3rdparty/googletest", "3rdparty/googletest", GTEST_URL),
        ("hipify", "3rdparty/hipify_torch", "https://github.com/ROCm/hipify_torch.git"),
    )
    manifest = empty_root.write(f'[deps.aiter]\ncommit = "{PIN}"\n')
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:1: deps.aiter: no submodule of the root matches 'aiter' "
        "(candidates: 3rdparty/googletest (3rdparty/googletest), hipify (3rdparty/hipify_torch))\n"
        'hint: give path = "…" (and url = "…") explicitly\n'
    )


def test_dep_matching_no_submodule_in_a_root_without_gitmodules_says_none(
    empty_root: Root, run_qola: RunQola
) -> None:
    manifest = empty_root.write(f'[deps.aiter]\ncommit = "{PIN}"\n')
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:1: deps.aiter: no submodule of the root matches 'aiter' "
        "(candidates: none)\n"
        'hint: give path = "…" (and url = "…") explicitly\n'
    )


def test_dep_matching_two_submodules_lists_both(empty_root: Root, run_qola: RunQola) -> None:
    empty_root.declare_submodules(
        ("upstream", "3rdparty/aiter", AITER_URL), ("fork", "vendor/aiter", FORK_URL)
    )
    manifest = empty_root.write(f'[deps.aiter]\ncommit = "{PIN}"\n')
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:1: deps.aiter: more than one submodule matches 'aiter' "
        "(candidates: upstream (3rdparty/aiter), fork (vendor/aiter))\n"
        'hint: give path = "…" (and url = "…") explicitly\n'
    )


def test_legacy_commit_matching_no_submodule_points_to_the_deps_form(
    empty_root: Root, run_qola: RunQola
) -> None:
    empty_root.declare_submodules(("3rdparty/googletest", "3rdparty/googletest", GTEST_URL))
    manifest = empty_root.write(f'[qola]\nnamespace = "te"\naiter_commit = "{PIN}"\n')
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:3: qola.aiter_commit: no submodule of the root matches 'aiter' "
        "(candidates: 3rdparty/googletest (3rdparty/googletest))\n"
        'hint: declare it as a [deps.aiter] table with path = "…" and url = "…"\n'
    )


# --- the root ---------------------------------------------------------------------


def test_root_is_the_top_of_the_repository_holding_the_manifest(
    empty_root: Root, run_qola: RunQola
) -> None:
    (empty_root.path / "cmake").mkdir()
    manifest = empty_root.path / "cmake" / "qola.toml"
    manifest.write_text(aiter(url="mirrors/aiter.git"))
    loaded = load(manifest)
    assert loaded.root == empty_root.path
    assert [dep.url for dep in loaded.deps] == [f"{empty_root.path}/mirrors/aiter.git"]
    assert accepted(run_qola, manifest)["root"] == str(empty_root.path)


def test_root_outside_any_repository_is_the_manifest_folder(tmp_path: Path) -> None:
    folder = tmp_path / "loose"
    folder.mkdir()
    manifest = folder / "qola.toml"
    manifest.write_text(aiter())
    assert load(manifest).root == folder


def test_qola_root_is_relative_to_the_manifest_folder(empty_root: Root, run_qola: RunQola) -> None:
    (empty_root.path / "src").mkdir()
    (empty_root.path / "build" / "deps").mkdir(parents=True)
    manifest = empty_root.path / "build" / "deps" / "qola.toml"
    manifest.write_text('[qola]\nroot = "../../src"\n\n' + aiter(url="mirrors/aiter.git"))
    loaded = load(manifest)
    assert loaded.root == empty_root.path / "src"
    assert [dep.url for dep in loaded.deps] == [f"{empty_root.path}/src/mirrors/aiter.git"]
    assert accepted(run_qola, manifest)["root"] == str(empty_root.path / "src")


def test_root_option_and_env_override_qola_root(
    empty_root: Root, tmp_path: Path, run_qola: RunQola
) -> None:
    (empty_root.path / "src").mkdir()
    other = tmp_path / "other"
    other.mkdir()
    manifest = empty_root.write('[qola]\nroot = "src"\n\n' + aiter())
    assert accepted(run_qola, manifest, "--root", str(other))["root"] == str(other)
    res = run_qola("verify", "--format", "json", "-m", str(manifest), env={"QOLA_ROOT": str(other)})
    assert res.exit_code == 1
    assert json.loads(res.stdout)["root"] == str(other)


def test_root_option_naming_no_folder_is_rejected(
    empty_root: Root, tmp_path: Path, run_qola: RunQola
) -> None:
    manifest = empty_root.write(aiter())
    missing = tmp_path / "no-such-root"
    assert rejected(run_qola, manifest, empty_root.path, "--root", str(missing)) == (
        f"qola: {missing}: the root folder does not exist\nhint: check --root (or QOLA_ROOT)\n"
    )


def test_qola_root_naming_no_folder_is_rejected(empty_root: Root, run_qola: RunQola) -> None:
    manifest = empty_root.write('[qola]\nroot = "nowhere"\n\n' + aiter())
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:2: qola.root: {empty_root.path / 'nowhere'} is not a folder\n"
        f"hint: [qola] root is relative to the manifest's folder, {empty_root.path}\n"
    )


# --- the command line -------------------------------------------------------------


def test_unknown_dep_name_on_the_command_line_suggests_a_known_one(
    empty_root: Root, run_qola: RunQola
) -> None:
    manifest = empty_root.write(aiter())
    assert rejected(run_qola, manifest, empty_root.path, "aitr") == (
        f"qola: {manifest}: no dependency named 'aitr'\nhint: did you mean 'aiter'?\n"
    )


def test_missing_manifest_is_rejected_with_a_hint(
    empty_root: Root, tmp_path: Path, run_qola: RunQola
) -> None:
    missing = tmp_path / "nope.toml"
    assert rejected(run_qola, missing, tmp_path) == (
        f"qola: {missing}: no such manifest\nhint: pass --manifest PATH or set QOLA_MANIFEST\n"
    )
    before = snapshot(empty_root.path)
    res = run_qola("verify", cwd=empty_root.path)  # default: qola.toml in the current folder
    assert (res.exit_code, res.stdout) == (2, "")
    assert res.stderr == (
        f"qola: {os.path.realpath(empty_root.path)}: no qola.toml here (the top of its "
        "repository), nor does its index track a manifest (qola.toml or *qola*manifest*.toml)"
        "\nhint: create one with `qola init`, or pass --manifest PATH (or set "
        "QOLA_MANIFEST)\n"
    )
    assert snapshot(empty_root.path) == before


def test_qola_manifest_env_picks_the_manifest_and_the_option_wins(
    empty_root: Root, tmp_path: Path, run_qola: RunQola
) -> None:
    manifest = empty_root.write(aiter())
    res = run_qola("verify", "--format", "json", cwd=tmp_path, env={"QOLA_MANIFEST": str(manifest)})
    assert res.exit_code == 1
    assert json.loads(res.stdout)["manifest"] == str(manifest)
    other = empty_root.path / "other.toml"
    other.write_text(aiter(path="vendor/aiter"))
    res = run_qola(
        "verify", "--format", "json", "-m", str(other), env={"QOLA_MANIFEST": str(manifest)}
    )
    assert json.loads(res.stdout)["manifest"] == str(other)


# --- shapes of tables -------------------------------------------------------------


def test_deps_that_is_not_a_table_is_rejected(empty_root: Root, run_qola: RunQola) -> None:
    manifest = empty_root.write('deps = ["aiter"]\n')
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:1: deps: must be a table of [deps.<name>] tables\n"
        "hint: write each dependency as a [deps.<name>] table with path, url and commit\n"
    )


def test_dep_that_is_not_a_table_is_rejected(empty_root: Root, run_qola: RunQola) -> None:
    manifest = empty_root.write(f'[deps]\naiter = "{PIN}"\n')
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:2: deps.aiter: must be a table\nhint: write it as [deps.aiter]\n"
    )


def test_dep_declared_in_both_forms_is_rejected(empty_root: Root, run_qola: RunQola) -> None:
    empty_root.declare_submodules(("aiter", "3rdparty/aiter", AITER_URL))
    manifest = empty_root.write(f'[qola]\naiter_commit = "{PIN}"\n\n' + aiter())
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:2: qola.aiter_commit: dependency 'aiter' is also declared as "
        "[deps.aiter]\n"
        "hint: keep one: remove aiter_commit or the [deps.aiter] table\n"
    )


def test_legacy_patches_dir_shared_by_two_pins_is_rejected(
    empty_root: Root, run_qola: RunQola
) -> None:
    empty_root.declare_submodules(
        ("aiter", "3rdparty/aiter", AITER_URL), ("ck", "3rdparty/ck", CK_URL)
    )
    manifest = empty_root.write(
        f'[qola]\naiter_commit = "{PIN}"\nck_commit = "{CK_PIN}"\npatches_dir = "patches"\n'
    )
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:4: qola.patches_dir: is one patch folder but [qola] pins 2 "
        "dependencies (aiter, ck)\n"
        'hint: give each its own: aiter_patches = "…" (or a [deps.<name>] table)\n'
    )


def test_legacy_keys_beside_commit_give_track_url_submodules_and_patches(
    empty_root: Root, run_qola: RunQola
) -> None:
    """TE's form can say what TE needs, and every key not beside a `<name>_commit` stays
    other tools' (even one spelled like ours)."""
    empty_root.declare_submodules(
        ("aiter", "3rdparty/aiter", AITER_URL), ("ck", "3rdparty/ck", CK_URL)
    )
    manifest = empty_root.write(
        "[qola]\n"
        f'aiter_commit = "{PIN}"\n'
        'aiter_track = "te/release"\n'
        f'aiter_url = "{FORK_URL}"\n'
        "aiter_submodules = false\n"
        'aiter_patches = "patches/aiter"\n'
        f'ck_commit = "{CK_PIN}"\n'
        "ck_track = 3\n"
        'other_track = ["not", "ours"]\n'  # no other_commit: another tool's key
        'patches_dir = "patches/ck"\n'
    )
    res = run_qola("verify", "-m", str(manifest))
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: {manifest}:8: qola.ck_track: must be a string, not 3\n"
        'hint: write it in quotes, e.g. ck_track = "main"\n'
    )
    manifest.write_text(manifest.read_text().replace("ck_track = 3", 'ck_track = "develop"'))
    aiter, ck = load(manifest).deps
    assert (aiter.track, aiter.url, aiter.submodules, aiter.patches, aiter.path) == (
        "te/release", FORK_URL, False, "patches/aiter", "3rdparty/aiter"
    )
    assert (ck.track, ck.url, ck.submodules, ck.patches) == ("develop", CK_URL, True, "patches/ck")


@pytest.mark.parametrize(
    ("line", "error", "hint"),
    [
        ('aiter_submodules = "yes"', "qola.aiter_submodules: must be true or false", None),
        ('aiter_track = "-x"', "qola.aiter_track: '-x' is not a branch or tag name", None),
        (
            'aiter_url = "ext::sh"',
            "qola.aiter_url: 'ext::sh' uses a '<helper>::' transport, which can run commands",
            URL_HINT.removeprefix("hint: ").rstrip(),
        ),
    ],
    ids=["submodules-not-bool", "track-option", "url-helper"],
)
def test_legacy_keys_are_validated_like_the_table_form(
    empty_root: Root, run_qola: RunQola, line: str, error: str, hint: str | None
) -> None:
    empty_root.declare_submodules(("aiter", "3rdparty/aiter", AITER_URL))
    manifest = empty_root.write(f'[qola]\naiter_commit = "{PIN}"\n{line}\n')
    expected = f"qola: {manifest}:3: {error}\n" + (f"hint: {hint}\n" if hint else "")
    assert rejected(run_qola, manifest, empty_root.path) == expected


def test_legacy_patches_dir_beside_the_pins_own_patches_key_is_rejected(
    empty_root: Root, run_qola: RunQola
) -> None:
    empty_root.declare_submodules(("aiter", "3rdparty/aiter", AITER_URL))
    manifest = empty_root.write(
        f'[qola]\naiter_commit = "{PIN}"\naiter_patches = "p"\npatches_dir = "q"\n'
    )
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}:4: qola.patches_dir: is the patch folder of no dependency: each "
        "[qola] pin names its own (<name>_patches)\n"
        "hint: remove patches_dir, or the <name>_patches it stands for\n"
    )


def test_manifest_without_deps_is_rejected(empty_root: Root, run_qola: RunQola) -> None:
    manifest = empty_root.write('[qola]\nnamespace = "te"\n')
    assert rejected(run_qola, manifest, empty_root.path) == (
        f"qola: {manifest}: declares no dependencies\n"
        "hint: add a [deps.<name>] table with path, url and commit\n"
    )


def test_unknown_qola_keys_and_tables_are_accepted_silently(
    empty_root: Root, run_qola: RunQola
) -> None:
    manifest = empty_root.write(
        '[qola]\nnamespace = "te"\nrocm_versions = ["6.4", "7.0"]\nflavour = { x = 1 }\n\n'
        '[tool.other]\nanything = true\n\n[[modules]]\nname = "m"\n\n' + aiter()
    )
    assert [dep.name for dep in load(manifest).deps] == ["aiter"]
    accepted(run_qola, manifest)  # exit 1 (missing), and not a word on stderr


@pytest.mark.parametrize(("key", "value", "hint"), [
    ("tag", '["v1.2"]', 'tag = "v1.2"'),
    ("track", "5", 'track = "main"'),
    ("url", "1", 'url = "https://github.com/ROCm/aiter.git"'),
])  # fmt: skip
# (the value as Python shows it: ['v1.2'], 5, 1)
def test_a_value_that_must_be_a_string_says_how_to_write_it(
    tmp_path: Path, run_qola, key: str, value: str, hint: str
) -> None:
    manifest = tmp_path / "qola.toml"
    manifest.write_text(f'[deps.aiter]\ncommit = "{PIN}"\n{key} = {value}\n')
    before = manifest.read_bytes()
    shown = value.replace('"', "'")
    res = run_qola("verify", "-m", str(manifest))
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: {manifest}:3: deps.aiter.{key}: must be a string, not {shown}\n"
        f"hint: write it in quotes, e.g. {hint}\n"
    )
    assert manifest.read_bytes() == before


def test_a_version_key_points_at_the_label(tmp_path: Path, run_qola) -> None:
    manifest = tmp_path / "qola.toml"
    manifest.write_text(f'[deps.fmt]\ncommit = "{PIN}"\nversion = "11.0.2"\n')
    before = snapshot(tmp_path)
    res = run_qola("verify", "-m", str(manifest))
    assert snapshot(tmp_path) == before
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: {manifest}:3: deps.fmt.version: unknown key\n"
        "hint: a pin's release is its label: write tag = \"v1.2\" in its place (a tag that "
        "names the pinned commit; qola keeps it true)\n"
    )
