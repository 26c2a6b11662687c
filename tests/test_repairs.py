"""Pins that name no commit, and their repairs run exactly as printed: a branch or tag name
written as the pin (refused at load; `bump NAME --to REF` rewrites it), and an annotated
tag's own object (refused by checkout before anything moves; verify says what it is)."""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from repos import commit_file, git, head, init_repo, snapshot
from superprojects import legacy_superproject


@dataclass(frozen=True)
class Greet:
    """An upstream with c1 < c2 < c3 on main: c2 carries the annotated tag v1.0 (object
    `tag`) and the lightweight tag light; `side` branches from c1 (c1 < s1)."""

    url: Path
    c1: str
    c2: str
    c3: str
    s1: str
    tag: str  # the annotated tag v1.0's own object


@pytest.fixture(scope="module")
def greet(tmp_path_factory: pytest.TempPathFactory) -> Greet:
    repo = init_repo(tmp_path_factory.mktemp("greet") / "greet")
    c1 = commit_file(repo, "greet.txt", "hello 1\n")
    c2 = commit_file(repo, "greet.txt", "hello 2\n")
    git(repo, "tag", "-a", "-m", "release 1.0", "v1.0", c2)
    git(repo, "tag", "light", c2)
    c3 = commit_file(repo, "greet.txt", "hello 3\n")
    git(repo, "checkout", "-q", "-b", "side", c1)
    s1 = commit_file(repo, "side.txt", "side\n")
    git(repo, "checkout", "-q", "main")
    tag = git(repo, "rev-parse", "refs/tags/v1.0")
    assert git(repo, "cat-file", "-t", tag) == "tag"
    return Greet(repo, c1, c2, c3, s1, tag)


def project(base: Path, greet: Greet, pin: str, comment: str = "  # greet 1.0") -> Path:
    """A root (committed) whose qola.toml pins greet at `pin`, as written."""
    root = init_repo(base / "project")
    (root / "qola.toml").write_text(
        "# pins\n[deps.greet]\n"
        f'path = "3rdparty/greet"\nurl = "{greet.url}"\ncommit = "{pin}"{comment}\n'
        'track = "main"\n'
    )
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", "qola.toml", ".gitignore")
    git(root, "commit", "-q", "-m", "pins")
    return root


def hint_commands(stderr: str) -> list[list[str]]:
    """The qola commands a hint prints: in backticks, else after the hint's last colon."""
    [hint] = [line for line in stderr.splitlines() if line.startswith("hint: ")]
    quoted = re.findall(r"`(qola [^`]+)`", hint)
    commands = quoted or [hint.rsplit(": ", 1)[1]]
    return [shlex.split(command)[1:] for command in commands]


# A branch or tag name written as the pin


@pytest.mark.parametrize(
    ("written", "pinned"), [("main", "c3"), ("v1.0", "c2"), ("light", "c2"), ("side", "s1")]
)
def test_a_ref_name_pin_is_repaired_by_the_hint_as_printed(
    tmp_path, greet, run_qola, written, pinned
):
    root = project(tmp_path, greet, written)
    before = (root / "qola.toml").read_bytes()
    state = snapshot(root)
    res = run_qola("checkout", cwd=root)
    assert res.exit_code == 2
    assert f"deps.greet.commit: '{written}' is a branch or tag name, not a commit SHA" in (
        res.stderr
    )
    assert snapshot(root) == state
    [command] = hint_commands(res.stderr)
    assert command == ["bump", "greet", "--to", written]

    res = run_qola(*command, cwd=root)
    assert res.exit_code == 0, res.stderr
    sha = getattr(greet, pinned)
    # No old commit to count from: what it was, what it is now, why.
    assert res.stdout.splitlines() == [f"greet: {written} → {sha[:7]} (the pin was a ref name)"]
    # A tag given is the label beside the pin.
    label = f'tag = "{written}"\n' if written in ("v1.0", "light") else ""
    assert (root / "qola.toml").read_bytes() == labelled(
        before.replace(f'commit = "{written}"'.encode(), f'commit = "{sha}"'.encode()), label
    )
    assert head(root / "3rdparty" / "greet") == sha
    assert run_qola("verify", cwd=root).exit_code == 0
    assert run_qola("checkout", cwd=root).exit_code == 0


@pytest.mark.parametrize(("written", "to"), [("origin/main", "main"), ("v1.0^{}", "v1.0")])
def test_a_remote_tracking_name_pin_is_repaired_as_the_remote_branch(
    tmp_path, greet, run_qola, written, to
):
    """origin/main is the remote's main; v1.0^{} (ls-remote's peeled line) the tag v1.0."""
    root = project(tmp_path, greet, written)
    res = run_qola("checkout", cwd=root)
    assert res.exit_code == 2
    [command] = hint_commands(res.stderr)
    assert command == ["bump", "greet", "--to", to]
    res = run_qola(*command, cwd=root)
    assert res.exit_code == 0, res.stderr
    sha = greet.c3 if to == "main" else greet.c2
    assert f'commit = "{sha}"' in (root / "qola.toml").read_text()
    assert run_qola("verify", cwd=root).exit_code == 0


@pytest.mark.parametrize("written", ["main~1", "main@{1}", "HEAD:greet.txt"])
def test_a_revision_pin_gets_the_command_that_prints_its_sha(tmp_path, greet, run_qola, written):
    """No remote resolves main~1: the hint says how to get the SHA, and the bump it names
    takes that SHA in place of the revision."""
    root = project(tmp_path, greet, written)
    state = snapshot(root)
    res = run_qola("checkout", cwd=root)
    assert res.exit_code == 2
    assert res.stderr.endswith(
        f"deps.greet.commit: {written!r} is a revision, not a commit SHA, and no remote "
        f"resolves it\nhint: in a full clone of the dependency, `git rev-parse "
        f"{shlex.quote(written)}` prints its SHA; then: qola bump greet --to <that SHA>\n"
    )
    assert snapshot(root) == state
    if written == "main~1":
        sha = git(greet.url, "rev-parse", written).strip()  # in a clone, as the hint says
        res = run_qola("bump", "greet", "--to", sha, cwd=root)
        assert res.exit_code == 0, res.stderr
        assert f'commit = "{greet.c2}"' in (root / "qola.toml").read_text()


def test_a_ref_name_pin_is_repaired_by_a_full_sha_and_committed(tmp_path, greet, run_qola):
    root = project(tmp_path, greet, "main")
    before = (root / "qola.toml").read_bytes()
    res = run_qola("bump", "greet", "--to", greet.c1, "--commit", cwd=root)
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[0] == f"greet: main → {greet.c1[:7]} (the pin was a ref name)"
    assert (root / "qola.toml").read_bytes() == before.replace(
        b'commit = "main"', f'commit = "{greet.c1}"'.encode()
    )
    assert git(root, "log", "-1", "--format=%s") == (
        f"Pin greet at {greet.c1[:7]} (the pin was the ref name main)"
    )
    assert git(root, "status", "--porcelain") == ""
    assert run_qola("verify", cwd=root).exit_code == 0


def test_a_legacy_ref_name_pin_is_repaired_with_its_gitlink(tmp_path, greet, run_qola):
    root = legacy_superproject(tmp_path / "te", greet.url, greet.c1, written="main")
    manifest = root / "qola.toml"
    before = manifest.read_bytes()
    res = run_qola("verify", cwd=root)
    assert res.exit_code == 2
    assert "qola.lib_commit: 'main' is a branch or tag name, not a commit SHA" in res.stderr
    [command] = hint_commands(res.stderr)
    res = run_qola(*command, cwd=root)
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[0] == f"lib: main → {greet.c3[:7]} (the pin was a ref name)"
    assert manifest.read_bytes() == before.replace(b'"main"', f'"{greet.c3}"'.encode())
    staged = git(root, "ls-files", "-s", "--", "3rdparty/lib").split()
    assert staged[:2] == ["160000", greet.c3]  # the gitlink moved with the pin
    assert run_qola("verify", cwd=root).exit_code == 0


@pytest.mark.parametrize(
    "args",
    [
        ("checkout",),
        ("verify",),
        ("status",),
        ("freeze",),
        ("bump", "greet"),  # without --to there is nothing to repair it with
        ("bump", "--all"),
        ("bump", "other", "--to", "main"),  # another dependency's bump sees it too
        ("diff",),
    ],
)
def test_every_other_command_still_refuses_a_ref_name_pin(tmp_path, greet, run_qola, args):
    root = project(tmp_path, greet, "main")
    with (root / "qola.toml").open("a") as manifest:
        manifest.write(f'\n[deps.other]\npath = "3rdparty/other"\nurl = "{greet.url}"\n'
                       f'commit = "{greet.c1}"\n')  # fmt: skip
    git(root, "commit", "-q", "-am", "other")
    state = snapshot(root)
    res = run_qola(*args, cwd=root)
    assert res.exit_code == 2, res.stdout
    assert "deps.greet.commit: 'main' is a branch or tag name, not a commit SHA" in res.stderr
    assert snapshot(root) == state


def test_a_ref_name_the_remote_lacks_is_refused_with_nothing_written(tmp_path, greet, run_qola):
    root = project(tmp_path, greet, "mian")
    state = snapshot(root)
    res = run_qola("bump", "greet", "--to", "mian", cwd=root)
    assert res.exit_code == 2
    assert "'mian' is neither a branch nor a tag of" in res.stderr
    assert snapshot(root) == state


# An annotated tag's own object as the pin


def test_a_tag_object_pin_is_refused_before_the_clone_and_its_hints_run(
    tmp_path, greet, run_qola
):
    root = project(tmp_path, greet, greet.tag)
    before = (root / "qola.toml").read_bytes()
    state = snapshot(root)
    said = f"`{greet.tag[:7]}` is tag `v1.0`'s object; its commit is `{greet.c2[:7]}`"
    for _ in range(2):  # and again: no fast path takes it for up to date
        res = run_qola("checkout", cwd=root)
        assert res.exit_code == 2
        assert said in res.stderr
        assert "up to date" not in res.stdout + res.stderr
        assert snapshot(root) == state  # no clone, no empty 3rdparty/ left behind
    by_tag, by_sha = hint_commands(res.stderr)
    assert by_tag == ["bump", "greet", "--to", "v1.0"]
    assert by_sha == ["bump", "greet", "--to", greet.c2]

    res = run_qola(*by_tag, cwd=root)
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines() == [
        f"greet: {greet.tag[:7]} → {greet.c2[:7]} (the pin was a tag object; this is its commit)"
    ]
    assert (root / "qola.toml").read_bytes() == labelled(
        before.replace(greet.tag.encode(), greet.c2.encode()), 'tag = "v1.0"\n'
    )
    assert run_qola("checkout", cwd=root).exit_code == 0
    assert run_qola("verify", cwd=root).exit_code == 0


def labelled(manifest: bytes, line: str) -> bytes:
    """manifest with line (a label, or nothing) after its commit's line."""
    head, commit, rest = manifest.partition(b"commit = ")
    pin, newline, tail = rest.partition(b"\n")
    return head + commit + pin + newline + line.encode() + tail


def test_a_tag_object_pin_leaves_a_checkout_where_it_was(tmp_path, greet, run_qola):
    """A dependency checked out at c3 is neither moved nor touched (the objects fetched
    into it are all that changes); verify names the tag; the full-SHA hint repairs it."""
    root = project(tmp_path, greet, greet.c3)
    assert run_qola("checkout", cwd=root).exit_code == 0
    lib = root / "3rdparty" / "greet"
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace(greet.c3, greet.tag))
    (lib / "greet.txt").write_text("my edit\n")  # local work, which --force would save
    files = {p: p.read_bytes() for p in lib.rglob("*") if p.is_file() and ".git" not in p.parts}
    # --force first, while the tag object is not here: it is fetched before any work is
    # saved and reset; then without the edit.
    for args in (("checkout", "--force"), ("checkout",)):
        if args == ("checkout",):
            (lib / "greet.txt").write_text("hello 3\n")
            files = {p: p.read_bytes() for p in lib.rglob("*")
                     if p.is_file() and ".git" not in p.parts}  # fmt: skip
        res = run_qola(*args, cwd=root)
        assert res.exit_code == 2, res.stderr
        assert f"`{greet.tag[:7]}` is tag `v1.0`'s object; its commit is `{greet.c2[:7]}`" in (
            res.stderr
        )
        assert head(lib) == greet.c3
        now = {p: p.read_bytes() for p in lib.rglob("*") if p.is_file() and ".git" not in p.parts}
        assert now == files
        assert git(lib, "for-each-ref", "refs/qola/backup") == ""  # nothing saved, nothing reset
    res = run_qola("verify", cwd=root)
    assert res.exit_code == 1
    assert (f"the pin is {greet.tag[:12]}: `{greet.tag[:7]}` is tag `v1.0`'s object; its commit "
            f"is `{greet.c2[:7]}`") in res.stdout  # fmt: skip
    _, by_sha = hint_commands(run_qola("checkout", cwd=root).stderr)
    res = run_qola(*by_sha, cwd=root)
    assert res.exit_code == 0, res.stderr
    assert f'commit = "{greet.c2}"' in manifest.read_text()
    assert head(lib) == greet.c2
    assert run_qola("verify", cwd=root).exit_code == 0


def test_bump_to_a_tag_object_pins_the_commit_it_names(tmp_path, greet, run_qola):
    """The SHA `git ls-remote` prints for refs/tags/v1.0 is peeled, and said so."""
    root = project(tmp_path, greet, greet.c1)
    res = run_qola("bump", "greet", "--to", greet.tag, cwd=root)
    assert res.exit_code == 0, res.stderr
    assert (f"greet: {greet.tag[:12]} is a tag object, not a commit: pinning the commit it "
            f"names, {greet.c2[:12]}") in res.stderr  # fmt: skip
    # Its label is the tag whose object it was, as for the commit's own SHA.
    assert res.stdout.splitlines()[0] == (
        f"greet {greet.c1[:7]}..v1.0 ({greet.c1[:7]}..{greet.c2[:7]}, 1 commit)"
    )
    assert f'commit = "{greet.c2}"  # greet 1.0\ntag = "v1.0"\n' in (root / "qola.toml").read_text()
    assert run_qola("verify", cwd=root).exit_code == 0


# Moves backwards and sideways are counted as such


def test_a_downgrade_counts_back(tmp_path, greet, run_qola):
    root = project(tmp_path, greet, greet.c3)
    res = run_qola("bump", "greet", "--to", greet.c1, cwd=root)
    assert res.exit_code == 2  # refused without --allow-downgrade
    res = run_qola("bump", "greet", "--to", greet.c1, "--allow-downgrade", "--commit", cwd=root)
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[0] == f"greet {greet.c3[:7]}..{greet.c1[:7]} (back 2 commits)"
    assert git(root, "log", "-1", "--format=%B").splitlines() == [
        f"Bump greet from {greet.c3[:7]} to {greet.c1[:7]}", "", "(back 2 commits)"
    ]


def test_a_sideways_move_counts_both_ways(tmp_path, greet, run_qola):
    root = project(tmp_path, greet, greet.c3)
    res = run_qola("bump", "greet", "--to", "side", "--allow-downgrade", "--dry-run", cwd=root)
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[:2] == [
        f"greet {greet.c3[:7]}..{greet.s1[:7]} (2 commits back, 1 forward)",
        f"  {greet.s1[:7]} update side.txt",
    ]
    res = run_qola("bump", "greet", "--to", "side", "--allow-downgrade", "--dry-run",
                   "--format", "json", cwd=root)  # fmt: skip
    assert '"back": 2' in res.stdout and '"count": 1' in res.stdout


def test_bump_all_counts_a_pin_ahead_of_its_track_back(tmp_path, greet, run_qola):
    root = project(tmp_path, greet, greet.s1)
    res = run_qola("bump", "--all", "--allow-downgrade", "--dry-run", cwd=root)
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[0] == (
        f"greet {greet.s1[:7]}..{greet.c3[:7]} (1 commit back, 2 forward)"
    )


# freeze and a nested submodule off its gitlink


def test_freeze_warns_of_a_nested_submodule_off_its_gitlink_and_its_hint_runs(
    pinned_by_qola, upstream, run_qola
):
    """freeze pins the dependency's commit, which records nested_v2; nested_v1 checked out
    there is no part of it: said, with how to pin it too (run here as printed)."""
    project = pinned_by_qola
    git(project.nested, "fetch", "-q", "origin", upstream.nested_v1)
    git(project.nested, "checkout", "-q", "--detach", upstream.nested_v1)
    before = project.manifest.read_bytes()
    res = run_qola("freeze", cwd=project.root)
    assert res.exit_code == 0, res.stderr
    assert res.stdout == "every pin already matches what is checked out\n"
    assert project.manifest.read_bytes() == before
    assert (f"qola: warning: lib: the nested submodule extern/nested is checked out at "
            f"{upstream.nested_v1[:12]}, but {upstream.lib_v2[:12]}, the commit pinned, records "
            f"{upstream.nested_v2[:12]}: a checkout puts it back there, and `qola verify` "
            "fails until then") in res.stderr  # fmt: skip
    assert run_qola("verify", cwd=project.root).exit_code == 1  # what the warning foretells
    [hint] = [line for line in res.stderr.splitlines() if line.startswith("hint: to pin")]
    commands = re.search(r"\((git .*)\), then run `(qola [^`]+)`", hint)
    assert commands is not None, hint
    subprocess.run(commands.group(1), shell=True, check=True, cwd=project.root)
    res = run_qola(*shlex.split(commands.group(2))[1:], cwd=project.root)
    assert res.exit_code == 0, res.stderr
    assert "nested submodule" not in res.stderr
    pinned = head(project.lib)
    assert pinned != upstream.lib_v2
    assert f'commit = "{pinned}"' in project.manifest.read_text()
    assert run_qola("verify", cwd=project.root).exit_code == 0


def test_freeze_says_nothing_of_nested_submodules_it_does_not_follow(
    pinned_by_qola, upstream, run_qola
):
    project = pinned_by_qola
    project.manifest.write_text(project.manifest.read_text() + "submodules = false\n")
    git(project.nested, "fetch", "-q", "origin", upstream.nested_v1)
    git(project.nested, "checkout", "-q", "--detach", upstream.nested_v1)
    res = run_qola("freeze", cwd=project.root)
    assert res.exit_code == 0, res.stderr
    assert "nested submodule" not in res.stderr


def test_freeze_names_a_submodule_two_levels_down_and_the_commit_recording_it(
    tmp_path, deep, run_qola
):
    from superprojects import fresh_clone

    root = fresh_clone(deep, tmp_path / "root")
    assert run_qola("checkout", cwd=root).exit_code == 0
    inner = root / "3rdparty" / "top" / "extern" / "mid" / "extern" / "deep"
    git(inner, "fetch", "-q", "origin", "main")
    moved = git(inner, "rev-parse", "FETCH_HEAD")
    git(inner, "checkout", "-q", "--detach", moved)
    res = run_qola("freeze", cwd=root)
    assert res.exit_code == 0, res.stderr
    assert (f"top: the nested submodule extern/mid/extern/deep is checked out at {moved[:12]}, "
            f"but {deep.mid_v1[:12]}, the commit extern/mid is at, records "
            f"{deep.deep_v1[:12]}") in res.stderr  # fmt: skip
    assert f"git -C {root / '3rdparty' / 'top' / 'extern' / 'mid'} add -- extern/deep" in (
        res.stderr
    )


def test_a_bump_from_a_tag_object_pin_counts_from_its_commit(tmp_path, greet, run_qola):
    root = project(tmp_path, greet, greet.tag)
    res = run_qola("bump", "greet", "--to", "main", cwd=root)
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[0] == (
        f"greet {greet.tag[:7]}..{greet.c3[:7]} (1 commit from {greet.c2[:7]}, the commit of "
        "the tag object pinned)"
    )
    assert f'commit = "{greet.c3}"' in (root / "qola.toml").read_text()
    assert run_qola("verify", cwd=root).exit_code == 0
