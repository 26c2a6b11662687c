"""`qola add NAME URL`: a new pin resolved with ls-remote, written into the manifest with
every other byte kept, its folder ignored, checked out; nothing written on any refusal."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from repos import commit_file, git, init_repo, ran, snapshot
from servers import free_port, git_daemon

from qola import manifest as manifests


class Remote:
    """A bare copy of the upstream lib with every branch, and tags of each kind: v2.0
    annotated (lib_v2), v1.0 lightweight (lib_v1), v2.0-rc1 annotated at lib_v2 too."""

    def __init__(self, path: Path, upstream) -> None:
        self.path = path
        self.url = str(path)
        self.up = upstream
        self.v2_object = git(path, "rev-parse", "refs/tags/v2.0")


@pytest.fixture(scope="module")
def remote(tmp_path_factory, upstream) -> Remote:
    base = tmp_path_factory.mktemp("remote")
    path = base / "lib.git"
    git(base, "clone", "-q", "--mirror", str(upstream.lib), str(path))
    git(path, "tag", "v1.0", upstream.lib_v1)
    git(path, "tag", "-a", "-m", "rc", "v2.0-rc1", upstream.lib_v2)
    return Remote(path, upstream)


@pytest.fixture
def project(tmp_path) -> Path:
    root = init_repo(tmp_path / "project")
    commit_file(root, "CMakeLists.txt", "project(p)\n")
    return root


def hint_of(stderr: str) -> str:
    """The last hint printed."""
    lines = [line for line in stderr.splitlines() if line.startswith("hint: ")]
    return lines[-1].removeprefix("hint: ")


def qola_words(text: str) -> list[str]:
    """The arguments of the `qola ...` command line a hint ends with."""
    words = shlex.split(text[text.rindex("qola ") :])
    assert words[0] == "qola"
    return words[1:]


def table(name: str, path: str, url: str, commit: str, *extra: str) -> str:
    lines = [f"[deps.{name}]", f'path = "{path}"', f'url = "{url}"', f'commit = "{commit}"']
    return "\n".join([*lines, *extra]) + "\n"


# -- what it pins


def test_annotated_tag_is_peeled_written_with_its_label_and_checked_out(
    project, remote, run_qola
):
    res = run_qola("add", "lib", remote.url, "--tag", "v2.0", cwd=project)
    assert res.exit_code == 0, res.stderr
    up = remote.up
    assert (project / "qola.toml").read_text() == table(
        "lib", "3rdparty/lib", remote.url, up.lib_v2, 'tag = "v2.0"'
    )
    assert remote.v2_object != up.lib_v2
    assert remote.v2_object not in (project / "qola.toml").read_text()
    assert (project / ".gitignore").read_text() == "/3rdparty/lib/\n"
    assert res.stdout.splitlines()[0] == (
        f"added lib: {up.lib_v2[:12]} (tag v2.0) at 3rdparty/lib, in {project / 'qola.toml'}"
    )
    lib = project / "3rdparty/lib"
    assert git(lib, "rev-parse", "HEAD") == up.lib_v2
    assert git(lib / "extern/nested", "rev-parse", "HEAD") == up.nested_v2
    assert git(project, "status", "--porcelain") == "?? .gitignore\n?? qola.toml".strip()
    [dep] = manifests.load(project / "qola.toml").deps
    assert (dep.commit, dep.tag, dep.track) == (up.lib_v2, "v2.0", None)
    assert run_qola("verify", cwd=project).exit_code == 0


def test_lightweight_tag_by_its_full_ref_without_checkout(project, remote, run_qola):
    res = run_qola("add", "lib", remote.url, "--tag", "refs/tags/v1.0", "--no-checkout",
                   cwd=project)  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert (project / "qola.toml").read_text() == table(
        "lib", "3rdparty/lib", remote.url, remote.up.lib_v1, 'tag = "v1.0"'
    )
    assert not (project / "3rdparty").exists()
    assert (project / ".gitignore").read_text() == "/3rdparty/lib/\n"


def test_branch_is_tracked(project, remote, run_qola):
    res = run_qola("add", "-v", "lib", remote.url, "--branch", "side", "--no-checkout",
                   cwd=project)  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert f"ls-remote --heads --tags --end-of-options {remote.url}" in ran(res.stderr)
    assert (project / "qola.toml").read_text() == table(
        "lib", "3rdparty/lib", remote.url, remote.up.lib_v3, 'track = "side"'
    )


def test_default_branch_without_a_ref(project, remote, run_qola):
    res = run_qola("add", "lib", remote.url, "--path", "ext/lib", cwd=project)
    assert res.exit_code == 0, res.stderr
    assert (project / "qola.toml").read_text() == table(
        "lib", "ext/lib", remote.url, remote.up.lib_tip
    )
    assert git(project / "ext/lib", "rev-parse", "HEAD") == remote.up.lib_tip
    assert (project / ".gitignore").read_text() == "/ext/lib/\n"


@pytest.mark.parametrize("which", ["lib_v1", "lib_tip"])
def test_full_commit_is_taken_as_is_with_the_tag_that_names_it(
    project, remote, run_qola, which
):
    sha = getattr(remote.up, which)
    res = run_qola("add", "lib", remote.url, "--commit", sha.upper(), "--no-checkout",
                   cwd=project)  # fmt: skip
    assert res.exit_code == 0, res.stderr
    label = ['tag = "v1.0"'] if which == "lib_v1" else []
    assert (project / "qola.toml").read_text() == table(
        "lib", "3rdparty/lib", remote.url, sha, *label
    )


def test_commit_named_by_a_release_and_its_candidate_gets_the_release(
    project, remote, run_qola
):
    """v2.0 and v2.0-rc1 name lib_v2: the label is the release."""
    res = run_qola("add", "lib", remote.url, "--commit", remote.up.lib_v2, "--no-checkout",
                   cwd=project)  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert 'tag = "v2.0"\n' in (project / "qola.toml").read_text()
    assert "rc1" not in (project / "qola.toml").read_text()


@pytest.mark.parametrize(("tags", "label"), [
    (["v2.9", "v2.10"], "v2.10"),
    (["11.1.4", "11.0.2"], "11.1.4"),
    (["v3.0.0-beta.2", "v3.0.0"], "v3.0.0"),
    (["1.0rc1", "1.0a1"], "1.0rc1"),
])  # fmt: skip
def test_label_among_several_tags(tags, label):
    from qola.history.add import tag_naming

    sha = "a" * 40
    refs = {f"refs/tags/{tag}": "b" * 40 for tag in tags}
    refs.update({f"refs/tags/{tag}^{{}}": sha for tag in tags})
    refs["refs/tags/other"] = "c" * 40
    assert tag_naming(refs, sha) == label


def test_no_submodules_is_written_and_checkout_leaves_them_out(project, remote, run_qola):
    res = run_qola("add", "lib", remote.url, "--tag", "v2.0", "--no-submodules", cwd=project)
    assert res.exit_code == 0, res.stderr
    assert (project / "qola.toml").read_text() == table(
        "lib", "3rdparty/lib", remote.url, remote.up.lib_v2, 'tag = "v2.0"',
        "submodules = false",
    )  # fmt: skip
    assert git(project / "3rdparty/lib", "rev-parse", "HEAD") == remote.up.lib_v2
    assert not (project / "3rdparty/lib/extern/nested/nested.txt").exists()


def test_over_git_daemon_on_loopback(project, remote, run_qola):
    with git_daemon(remote.path.parent) as port:
        url = f"git://127.0.0.1:{port}/lib.git"
        res = run_qola("add", "lib", url, "--tag", "v2.0", cwd=project)
        assert res.exit_code == 0, res.stderr
    assert (project / "qola.toml").read_text() == table(
        "lib", "3rdparty/lib", url, remote.up.lib_v2, 'tag = "v2.0"'
    )
    assert git(project / "3rdparty/lib", "rev-parse", "HEAD") == remote.up.lib_v2


# -- the manifest and .gitignore it adds to


def test_appends_to_an_existing_manifest_keeping_every_byte(project, remote, run_qola):
    manifest = project / "qola.toml"
    before = (
        "\ufeff# the project's pins\r\n[qola]\r\nnamespace = 'te'   # other tools' key\r\n\r\n"
        f'[deps.other]\r\npath = "3rdparty/other"\r\nurl = "{remote.url}"\r\n'
        f'commit = "{remote.up.lib_v1}"  # v1'
    )
    manifest.write_bytes(before.encode())
    res = run_qola("add", "lib", remote.url, "--tag", "v2.0", "--no-checkout", cwd=project)
    assert res.exit_code == 0, res.stderr
    added = table("lib", "3rdparty/lib", remote.url, remote.up.lib_v2, 'tag = "v2.0"')
    assert manifest.read_bytes() == (before + "\r\n\r\n" + added.replace("\n", "\r\n")).encode()
    assert [d.name for d in manifests.load(manifest).deps] == ["other", "lib"]


def test_manifest_found_above_and_gitignore_without_final_newline(project, remote, run_qola):
    (project / "qola.toml").write_text("[deps]\n")
    (project / ".gitignore").write_bytes(b"build\n*.o")
    sub = project / "src"
    sub.mkdir()
    res = run_qola("add", "lib", remote.url, "--branch", "main", "--no-checkout", cwd=sub)
    assert res.exit_code == 0, res.stderr
    assert (project / "qola.toml").read_text().startswith("[deps]\n\n[deps.lib]\n")
    assert (project / ".gitignore").read_bytes() == b"build\n*.o\n/3rdparty/lib/\n"
    assert not (sub / "qola.toml").exists()


@pytest.mark.parametrize("rule", ["/3rdparty/\n", "3rdparty/lib\n", "lib/\n"])
def test_folder_git_already_ignores_leaves_gitignore_alone(project, remote, run_qola, rule):
    (project / ".gitignore").write_text("# mine\n" + rule)
    res = run_qola("add", "lib", remote.url, "--no-checkout", cwd=project)
    assert res.exit_code == 0, res.stderr
    assert (project / ".gitignore").read_text() == "# mine\n" + rule
    assert "gitignore" not in res.stdout


def test_submodule_of_the_root_is_not_ignored(project, remote, run_qola):
    git(project, "submodule", "add", "-q", remote.url, "3rdparty/lib")
    git(project, "commit", "-q", "-m", "sub")
    res = run_qola("add", "lib", remote.url, "--tag", "v1.0", "--no-checkout", cwd=project)
    assert res.exit_code == 0, res.stderr
    assert not (project / ".gitignore").exists()
    assert manifests.load(project / "qola.toml").deps[0].submodule_name == "3rdparty/lib"


def test_outside_a_repository_no_gitignore(tmp_path, remote, run_qola):
    folder = tmp_path / "plain"
    folder.mkdir()
    res = run_qola("add", "lib", remote.url, "--tag", "v1.0", "--no-checkout", cwd=folder)
    assert res.exit_code == 0, res.stderr
    assert (folder / "qola.toml").is_file()
    assert not (folder / ".gitignore").exists()


def test_explicit_manifest_is_created_there(project, remote, run_qola):
    manifest = project / "deps" / "pins.toml"
    manifest.parent.mkdir()
    res = run_qola("add", "lib", remote.url, "-m", str(manifest), "--tag", "v1.0",
                   "--no-checkout", cwd=project)  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert manifests.load(manifest).deps[0].path == "deps/3rdparty/lib"  # beside it
    assert not (project / "qola.toml").exists()


# -- refusals: exit code, message, and nothing on disk changed


@pytest.fixture
def pinned(project, remote) -> Path:
    """The project with a manifest pinning `other` at 3rdparty/other, and a .gitignore."""
    (project / "qola.toml").write_text(
        "# pins\n" + table("other", "3rdparty/other", remote.url, remote.up.lib_v1)
    )
    (project / ".gitignore").write_text("build/\n")
    return project


def refused(run_qola, root: Path, *args: str, code: int = 2):
    before = snapshot(root)
    res = run_qola("add", *args, cwd=root)
    assert res.exit_code == code, res.stderr
    assert res.stdout == ""
    assert snapshot(root) == before
    return res


def test_unknown_tag_says_so_with_did_you_mean_and_its_hint_works(pinned, remote, run_qola):
    res = refused(run_qola, pinned, "lib", remote.url, "--tag", "v2.1")
    assert res.stderr == (
        f"qola: lib: 'v2.1' is not a tag of {remote.url}; nothing was written\n"
        f"hint: did you mean the tag v2.0? qola add lib {remote.url} --tag v2.0\n"
    )
    assert not (pinned / "3rdparty/lib").exists()
    again = run_qola(*qola_words(hint_of(res.stderr)), cwd=pinned)
    assert again.exit_code == 0, again.stderr
    assert git(pinned / "3rdparty/lib", "rev-parse", "HEAD") == remote.up.lib_v2


def test_unknown_branch_did_you_mean_keeps_the_other_options(pinned, remote, run_qola):
    res = refused(run_qola, pinned, "lib", remote.url, "--branch", "sied", "--path", "x/lib",
                  "--no-submodules", "--no-checkout")  # fmt: skip
    hint = hint_of(res.stderr)
    assert hint == (f"did you mean the branch side? qola add lib {remote.url} --branch side "
                    "--path x/lib --no-submodules --no-checkout")  # fmt: skip
    assert run_qola(*qola_words(hint), cwd=pinned).exit_code == 0
    assert 'track = "side"' in (pinned / "qola.toml").read_text()
    assert "submodules = false" in (pinned / "qola.toml").read_text()


@pytest.mark.parametrize(("given", "kind", "other", "flag"),
                         [("--tag", "tag", "branch", "--branch"),
                          ("--branch", "branch", "tag", "--tag")])  # fmt: skip
def test_a_branch_given_as_tag_and_back(pinned, remote, run_qola, given, kind, other, flag):
    ref = "side" if given == "--tag" else "v1.0"
    res = refused(run_qola, pinned, "lib", remote.url, given, ref, "--no-checkout")
    assert res.stderr == (
        f"qola: lib: {ref!r} is a {other} of {remote.url}, not a {kind}; nothing was written\n"
        f"hint: qola add lib {remote.url} {flag} {ref} --no-checkout\n"
    )
    assert run_qola(*qola_words(hint_of(res.stderr)), cwd=pinned).exit_code == 0


def test_unknown_ref_with_nothing_close_lists_some_and_how_to_see_all(pinned, remote, run_qola):
    res = refused(run_qola, pinned, "lib", remote.url, "--tag", "zzzzzz")
    assert res.stderr.startswith(
        f"qola: lib: 'zzzzzz' is not a tag of {remote.url}; nothing was written; it has "
        "3 tags and 2 branches (such as v2.0, v2.0-rc1, v1.0, main, side)\n"
    )
    hint = hint_of(res.stderr)
    command = hint.removeprefix("`").split("`")[0]
    listed = subprocess.run(command, shell=True, capture_output=True, text=True, check=True)
    assert "refs/tags/v2.0^{}" in listed.stdout and "refs/heads/side" in listed.stdout


def test_remote_without_refs(pinned, tmp_path, run_qola):
    empty = init_repo(tmp_path / "empty")
    res = refused(run_qola, pinned, "lib", str(empty), "--tag", "v1")
    assert res.stderr == (
        f"qola: lib: 'v1' is not a tag of {empty}; nothing was written: it has no branches "
        "or tags\nhint: check the URL; give --commit SHA for a commit no ref names\n"
    )
    res = refused(run_qola, pinned, "lib", str(empty), code=3)
    assert "has no default branch" in res.stderr


def test_existing_name_is_refused_and_bump_is_named(pinned, remote, run_qola):
    res = refused(run_qola, pinned, "other", remote.url, "--tag", "v2.0")
    assert res.stderr == (
        f"qola: other: is already a dependency in {pinned / 'qola.toml'} (at 3rdparty/other); "
        "nothing was written\n"
        "hint: give the new one another name; `qola bump other --to REF` moves the existing "
        "pin\n"
    )
    bump = hint_of(res.stderr).split("`")[1].replace("REF", "v2.0")
    assert run_qola(*qola_words(bump), "--no-checkout", cwd=pinned).exit_code == 0
    assert remote.up.lib_v2 in (pinned / "qola.toml").read_text()


def test_name_that_is_the_same_to_cmake_is_refused(pinned, remote, run_qola):
    res = refused(run_qola, pinned, "OTHER", remote.url)
    assert res.stderr.startswith(
        "qola: OTHER: is one name to CMake with 'other', which is already a dependency in "
    )


@pytest.mark.parametrize(("path", "how"), [("3rdparty/other", "is"),
                                           ("3rdparty/other/sub", "is inside"),
                                           ("3rdparty", "holds"),
                                           ("./3rdparty/other/", "is")])  # fmt: skip
def test_taken_folder_is_refused_and_the_hint_works(pinned, remote, run_qola, path, how):
    res = refused(run_qola, pinned, "lib", remote.url, "--path", path)
    shown = path.strip("./").rstrip("/") if path.startswith("./") else path
    assert res.stderr == (
        f"qola: lib: its folder {shown} {how} the folder of other, 3rdparty/other; nothing "
        "was written\nhint: give it a folder of its own: --path P\n"
    )
    again = run_qola("add", "lib", remote.url, "--path", "ext/lib", "--no-checkout",
                     cwd=pinned)  # fmt: skip
    assert again.exit_code == 0, again.stderr


@pytest.mark.parametrize(("url", "why"), [
    ("-uupload-pack=touch MARKER", "starts with '-', which git would read as an option"),
    ("ext::sh -c touch% MARKER", "uses a '<helper>::' transport, which can run commands"),
])  # fmt: skip
def test_dangerous_url_is_refused_before_git_runs(pinned, run_qola, url, why, tmp_path):
    marker = tmp_path / "marker"
    url = url.replace("MARKER", str(marker))
    res = refused(run_qola, pinned, "-v", "--tag", "v1.0", "--", "lib", url)
    assert res.stderr.splitlines()[-2:] == [
        f"qola: lib: deps.lib.url: {url!r} {why}; nothing was written",
        "hint: use https://, http://, ssh://, git://, file://, user@host:path or a local path",
    ]
    assert "qola: run: git" not in res.stderr
    assert not marker.exists()


@pytest.mark.parametrize("path", ["/abs/lib", "../lib", "3rdparty/.git/lib"])
def test_bad_path_is_refused(pinned, remote, run_qola, path):
    res = refused(run_qola, pinned, "lib", remote.url, "--path", path)
    assert res.stderr.startswith(f"qola: lib: deps.lib.path: {path!r} ")
    assert "nothing was written" in res.stderr


def test_abbreviated_commit_is_refused_and_the_hint_works(pinned, remote, run_qola):
    short = remote.up.lib_v1[:9]
    res = refused(run_qola, pinned, "lib", remote.url, "--commit", short)
    assert res.stderr == (
        f"qola: qola add: --commit {short!r} is abbreviated: a remote resolves no "
        "abbreviation\nhint: give all 40 hex digits (64 in a sha256 repository); "
        f"`git rev-parse {short}` in a clone prints them\n"
    )
    full = git(remote.path, *shlex.split(hint_of(res.stderr).split("`")[1])[1:])
    assert full == remote.up.lib_v1
    assert run_qola("add", "lib", remote.url, "--commit", full, "--no-checkout",
                    cwd=pinned).exit_code == 0  # fmt: skip


def test_a_name_given_as_commit_is_refused_and_the_hint_works(pinned, remote, run_qola):
    res = refused(run_qola, pinned, "lib", remote.url, "--commit", "main")
    assert res.stderr == (
        "qola: qola add: --commit 'main' is not a commit SHA\n"
        "hint: for a tag or a branch give --tag main or --branch main\n"
    )
    again = run_qola("add", "lib", remote.url, "--branch", "main", "--no-checkout", cwd=pinned)
    assert again.exit_code == 0


def test_two_refs_are_refused(pinned, remote, run_qola):
    res = refused(run_qola, pinned, "lib", remote.url, "--tag", "v1.0", "--branch", "main")
    assert res.stderr == (
        "qola: qola add: --tag and --branch each choose the pin: give one\n"
        "hint: give one of --tag T, --branch B, --commit SHA (or none: the remote's default "
        "branch)\n"
    )


def test_unreachable_remote_is_exit_3(pinned, run_qola, tmp_path):
    url = f"git://127.0.0.1:{free_port()}/lib.git"
    res = refused(run_qola, pinned, "lib", url, "--tag", "v1.0", code=3)
    assert res.stderr.startswith(f"qola: lib: `git ls-remote --heads --tags {url}` failed")
    res = refused(run_qola, pinned, "lib", str(tmp_path / "nowhere"), code=3)
    assert "ls-remote" in res.stderr


def test_invalid_manifest_is_refused_as_it_is(pinned, remote, run_qola):
    (pinned / "qola.toml").write_text("[deps.x]\npath = 1\n")
    res = refused(run_qola, pinned, "lib", remote.url)
    assert res.stderr.startswith(f"qola: {pinned / 'qola.toml'}:2: deps.x.path: must be a string")


def test_inline_deps_table_is_refused_not_rewritten(pinned, remote, run_qola):
    (pinned / "qola.toml").write_text(
        f'deps = {{ other = {{ path = "o", url = "{remote.url}", '
        f'commit = "{remote.up.lib_v1}" }} }}\n'
    )
    res = refused(run_qola, pinned, "lib", remote.url)
    assert "adding its table would change more of the manifest than the table" in res.stderr


# -- a checkout that fails after the pin is written


def test_a_folder_in_the_way_is_refused_before_anything_is_written(pinned, remote, run_qola):
    """A vendored copy where the pin would go: the checkout would refuse it after the pin
    and the ignore line (which would hide the project's own files) were written."""
    (pinned / "3rdparty/lib").mkdir(parents=True)
    (pinned / "3rdparty/lib/mine.txt").write_text("my work\n")
    before = snapshot(pinned)
    res = run_qola("add", "lib", remote.url, "--tag", "v2.0", cwd=pinned)
    assert res.exit_code == 4, res.stderr
    assert res.stderr == (
        f"qola: lib: {pinned / '3rdparty/lib'} holds files and is not a git repository: the "
        "checkout would not put lib there; nothing was written\n"
        "hint: choose another folder with --path P\n"
    )
    assert snapshot(pinned) == before
    again = run_qola("add", "lib", remote.url, "--tag", "v2.0", "--path", "ext/lib", cwd=pinned)
    assert again.exit_code == 0, again.stderr
    assert git(pinned / "ext/lib", "rev-parse", "HEAD") == remote.up.lib_v2


def test_a_file_in_the_way_is_refused_too(pinned, remote, run_qola):
    (pinned / "3rdparty").mkdir(exist_ok=True)
    (pinned / "3rdparty/lib").write_text("a file\n")
    before = snapshot(pinned)
    res = run_qola("add", "lib", remote.url, "--path", "3rdparty/lib", cwd=pinned)
    assert res.exit_code == 4, res.stderr
    assert res.stderr == (
        f"qola: lib: {pinned / '3rdparty/lib'} is a file: the checkout would not put lib "
        "there; nothing was written\nhint: choose another folder with --path P, or move what "
        "is there away\n"
    )
    assert snapshot(pinned) == before


def _another_repository(where: Path) -> None:
    """A git repository of someone's own where the pin goes, with uncommitted work: the
    checkout refuses to move it."""
    where.mkdir(parents=True)
    init_repo(where)
    commit_file(where, "mine.txt", "my work, committed\n", "my own work")
    (where / "mine.txt").write_text("my work\n")  # and changed since: qola keeps it


def test_failed_checkout_leaves_the_pin_written_and_says_what_to_run(pinned, remote, run_qola):
    _another_repository(pinned / "3rdparty/lib")
    res = run_qola("add", "lib", remote.url, "--tag", "v2.0", cwd=pinned)
    assert res.exit_code == 4, res.stderr
    assert res.stderr.endswith(
        f"qola: lib: its pin is written in {pinned / 'qola.toml'}, but the checkout failed "
        "(above); the pin stays: it is what the remote named\n"
        "hint: once the cause is fixed, check it out: qola checkout lib\n"
    )
    assert remote.up.lib_v2 in (pinned / "qola.toml").read_text()
    assert (pinned / "3rdparty/lib/mine.txt").read_text() == "my work\n"
    (pinned / "3rdparty/lib").rename(pinned / "mine")
    again = run_qola(*qola_words(hint_of(res.stderr)), cwd=pinned)
    assert again.exit_code == 0, again.stderr
    assert git(pinned / "3rdparty/lib", "rev-parse", "HEAD") == remote.up.lib_v2


def test_failed_checkout_hint_names_the_manifest_given(pinned, remote, run_qola, tmp_path):
    _another_repository(pinned / "3rdparty/lib")
    manifest = pinned / "qola.toml"
    res = run_qola("add", "lib", remote.url, "-m", str(manifest), cwd=tmp_path)
    assert res.exit_code == 4
    hint = hint_of(res.stderr)
    assert hint.endswith(f"qola checkout -m {manifest} lib")
    (pinned / "3rdparty/lib").rename(pinned / "mine")
    assert run_qola(*qola_words(hint), cwd=tmp_path).exit_code == 0


def test_tag_no_label_can_hold_pins_its_commit_without_one(project, remote, run_qola, tmp_path):
    quoted = tmp_path / "quoted.git"
    git(tmp_path, "clone", "-q", "--mirror", remote.url, str(quoted))
    git(quoted, "tag", 'say-"hi"', remote.up.lib_tip)
    res = run_qola("add", "lib", str(quoted), "--tag", 'say-"hi"', "--no-checkout", cwd=project)
    assert res.exit_code == 0, res.stderr
    assert (project / "qola.toml").read_text() == table(
        "lib", "3rdparty/lib", str(quoted), remote.up.lib_tip
    )


# -- pins that are not what they seem (found by review)


def test_a_submodule_of_the_root_gets_its_gitlink_staged(project, remote, run_qola):
    """The root records what the manifest pins, as after a bump: verify passes at once."""
    git(project, "submodule", "add", "-q", remote.url, "3rdparty/lib")
    git(project, "commit", "-q", "-m", "sub")
    res = run_qola("add", "lib", remote.url, "--tag", "v1.0", cwd=project)
    assert res.exit_code == 0, res.stderr
    assert (f"staged the gitlink of 3rdparty/lib at {remote.up.lib_v1[:12]}, the pin: commit it "
            "with the manifest\n") in res.stdout  # fmt: skip
    staged = git(project, "ls-files", "-s", "3rdparty/lib").split()
    assert staged[:2] == ["160000", remote.up.lib_v1]
    res = run_qola("verify", cwd=project)
    assert res.exit_code == 0, res.stdout


def test_a_commit_given_as_a_tag_object_is_the_commit_it_names(project, remote, run_qola):
    """The SHA ls-remote prints for refs/tags/v2.0 (no ^{}): git checks out its commit."""
    res = run_qola("add", "lib", remote.url, "--commit", remote.v2_object, cwd=project)
    assert res.exit_code == 0, res.stderr
    text = (project / "qola.toml").read_text()
    assert f'commit = "{remote.up.lib_v2}"\ntag = "v2.0"\n' in text
    assert f"(tag v2.0, whose object {remote.v2_object[:12]} was given) at" in res.stdout
    assert run_qola("verify", cwd=project).exit_code == 0


def test_a_branch_named_as_a_tag_is_followed_by_its_full_name(
    tmp_path, project, remote, run_qola
):
    """A tag wins where a track is read, so the branch v1.0 is written refs/heads/v1.0."""
    served = tmp_path / "same-names.git"
    git(tmp_path, "clone", "-q", "--mirror", remote.url, str(served))
    git(served, "branch", "v1.0", remote.up.lib_v2)  # beside the tag v1.0 (lib_v1)
    res = run_qola("add", "lib", str(served), "--branch", "v1.0", cwd=project)
    assert res.exit_code == 0, res.stderr
    text = (project / "qola.toml").read_text()
    assert f'commit = "{remote.up.lib_v2}"\n' in text and 'track = "refs/heads/v1.0"\n' in text
    assert run_qola("verify", "--remote", cwd=project).exit_code == 0
    tree = f"{remote.up.lib_v2}^{{tree}}"
    after = git(served, "commit-tree", tree, "-p", remote.up.lib_v2, "-m", "next").strip()
    git(served, "branch", "-f", "v1.0", after)
    res = run_qola("bump", "lib", "--no-checkout", cwd=project)
    assert res.exit_code == 0, res.stderr
    assert f'commit = "{after}"' in (project / "qola.toml").read_text()


def test_a_tag_of_a_tree_is_taken_back_whole(tmp_path, project, remote, run_qola):
    """ls-remote cannot tell a tree from a commit; the checkout can, and then nothing stays
    written (checking it out again would fail again)."""
    served = tmp_path / "odd.git"
    git(tmp_path, "clone", "-q", "--mirror", remote.url, str(served))
    tree = git(served, "rev-parse", f"{remote.up.lib_v2}^{{tree}}").strip()
    git(served, "tag", "v9.0", tree)
    before = snapshot(project)
    res = run_qola("add", "lib", str(served), "--tag", "v9.0", cwd=project)
    assert res.exit_code == 2, res.stderr
    assert res.stderr.endswith(
        f"qola: lib: {tree[:12]} is no commit to check out (above); {project / 'qola.toml'} is "
        "as it was: nothing was written\nhint: give --tag, --branch or --commit naming a commit\n"
    )
    assert f"the pin `{tree[:7]}` is a tree, not a commit" in res.stderr
    assert snapshot(project) == before


def test_a_path_with_glob_characters_is_ignored_as_itself(project, remote, run_qola):
    res = run_qola("add", "lib", remote.url, "--tag", "v1.0", "--path", "ext/lib[1]", cwd=project)
    assert res.exit_code == 0, res.stderr
    assert (project / ".gitignore").read_text() == "/ext/lib\\[1]/\n"
    assert "added /ext/lib\\[1]/ to" in res.stdout
    assert git(project, "status", "--porcelain").split() == ["??", ".gitignore", "??", "qola.toml"]
