"""A dependency's move that moves its own nested submodule says so, wherever it is shown.

TransformerEngine's layout: the root pins aiter (a submodule of the root, by the legacy
`[qola] aiter_commit`), and aiter pins composable_kernel as a submodule of its own. For
TE the line that matters most in a bump of aiter is composable_kernel's move: `bump`
prints it and writes it into the commit message, `diff` and `outdated` show it in every
format.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from repos import commit_file, git, head, init_repo, snapshot

CK = "3rdparty/composable_kernel"


@dataclass(frozen=True)
class Upstreams:
    """aiter, whose submodule composable_kernel moves from ck_v1 to ck_v3 in aiter_v2."""

    ck: Path
    aiter: Path
    ck_v1: str
    ck_v3: str  # two commits after ck_v1
    aiter_v1: str  # composable_kernel at ck_v1
    aiter_v2: str  # composable_kernel at ck_v3
    aiter_tip: str  # main's tip: aiter_v2 and one more commit


@pytest.fixture(scope="module")
def upstreams(tmp_path_factory: pytest.TempPathFactory) -> Upstreams:
    base = tmp_path_factory.mktemp("te-upstreams")
    ck = init_repo(base / "composable_kernel")
    ck_v1 = commit_file(ck, "ck.txt", "ck 1\n", "ck 1")
    commit_file(ck, "ck.txt", "ck 2\n", "ck 2")
    ck_v3 = commit_file(ck, "ck.txt", "ck 3\n", "ck 3")
    aiter = init_repo(base / "aiter")
    commit_file(aiter, "README", "aiter\n")
    git(aiter, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(ck), CK)
    git(aiter, "-C", CK, "checkout", "-q", ck_v1)
    git(aiter, "add", CK)
    git(aiter, "commit", "-q", "-m", "composable_kernel at 1")
    aiter_v1 = head(aiter)
    git(aiter, "-C", CK, "checkout", "-q", ck_v3)
    git(aiter, "add", CK)
    git(aiter, "commit", "-q", "-m", "Bump composable_kernel")
    aiter_v2 = head(aiter)
    aiter_tip = commit_file(aiter, "aiter.txt", "more\n", "more aiter")
    return Upstreams(ck, aiter, ck_v1, ck_v3, aiter_v1, aiter_v2, aiter_tip)


@pytest.fixture
def te(tmp_path, upstreams, run_qola) -> Path:
    """The root: aiter a submodule at 3rdparty/aiter, pinned at aiter_v1 by `[qola]
    aiter_commit`, checked out by qola (composable_kernel one commit deep)."""
    root = init_repo(tmp_path / "te")
    git(root, "submodule", "add", "-q", str(upstreams.aiter), "3rdparty/aiter")
    git(root, "-C", "3rdparty/aiter", "checkout", "-q", upstreams.aiter_v1)
    git(root, "add", "3rdparty/aiter")
    (root / "qola.toml").write_text(
        f'[qola]\nnamespace = "te"\naiter_commit = "{upstreams.aiter_v1}"\n'
    )
    git(root, "add", "qola.toml")
    git(root, "commit", "-q", "-m", "pin aiter")
    res = run_qola("checkout", "-m", str(root / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    return root


def ck_line(upstreams: Upstreams) -> str:
    return f"submodule {CK}: {upstreams.ck_v1[:7]}..{upstreams.ck_v3[:7]}"


def test_bump_of_aiter_names_composable_kernels_move_in_its_output_and_commit_message(
    te, upstreams, run_qola
):
    manifest = te / "qola.toml"
    res = run_qola("bump", "aiter", "--to", upstreams.aiter_v2, "--commit", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    v1, v2 = upstreams.aiter_v1, upstreams.aiter_v2
    assert res.stdout.splitlines()[:3] == [
        f"aiter {v1[:7]}..{v2[:7]} (1 commit)",
        f"  {ck_line(upstreams)}",
        f"  {v2[:7]} Bump composable_kernel",
    ]
    assert git(te, "log", "-1", "--format=%B") == (
        f"Bump aiter from {v1[:7]} to {v2[:7]}\n\n"
        f"{ck_line(upstreams)}\n{v2[:7]} Bump composable_kernel"
    )
    assert head(te / "3rdparty" / "aiter" / CK) == upstreams.ck_v3


def test_bump_all_commit_message_names_composable_kernels_move(te, upstreams, run_qola):
    manifest = te / "qola.toml"
    manifest.write_text(manifest.read_text() + 'aiter_track = "main"\n')  # what --all follows
    res = run_qola("bump", "--all", "--commit", "--no-checkout", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    v1, tip = upstreams.aiter_v1, upstreams.aiter_tip
    assert f"aiter {v1[:7]}..{tip[:7]} (2 commits)\n  {ck_line(upstreams)}\n" in res.stdout
    assert git(te, "log", "-1", "--format=%B").splitlines()[2:4] == [
        f"aiter {v1[:7]}..{tip[:7]} (2 commits)",
        f"  {ck_line(upstreams)}",
    ]


def test_bump_counts_the_nested_commits_when_its_checkout_holds_their_history(
    te, upstreams, run_qola
):
    """A full clone of composable_kernel (as `git submodule update` makes): its commits
    between are counted there, nothing fetched for them."""
    nested = te / "3rdparty" / "aiter" / CK
    git(nested, "fetch", "-q", "--unshallow", "origin")
    git(nested, "fetch", "-q", "origin", upstreams.ck_v3)
    before = snapshot(te)
    res = run_qola("bump", "aiter", "--to", upstreams.aiter_v2, "--dry-run", "-m",
                   str(te / "qola.toml"))  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[1] == f"  {ck_line(upstreams)} (2 commits)"
    assert snapshot(te) == before


@pytest.fixture
def moved(te, upstreams) -> Path:
    """The work tree's manifest pins aiter_v2; HEAD's pins aiter_v1."""
    manifest = te / "qola.toml"
    manifest.write_text(manifest.read_text().replace(upstreams.aiter_v1, upstreams.aiter_v2))
    return manifest


def test_diff_names_composable_kernels_move_in_text_markdown_and_json(
    moved, upstreams, run_qola
):
    v1, v2 = upstreams.aiter_v1, upstreams.aiter_v2
    text = run_qola("diff", "-m", str(moved))
    assert text.exit_code == 0, text.stderr
    assert text.stdout.splitlines()[:2] == [
        f"aiter {v1[:7]}..{v2[:7]} (1 commit)",
        f"  {ck_line(upstreams)}",
    ]
    markdown = run_qola("diff", "-m", str(moved), "--format", "markdown")
    assert markdown.exit_code == 0, markdown.stderr
    assert markdown.stdout.splitlines()[2:6] == [
        "| dependency | change | from | to | commits |",
        "|---|---|---|---|---|",
        f"| `aiter` | forward | `{v1[:12]}` | `{v2[:12]}` | +1 |",
        f"| ↳ `{CK}` | nested submodule moved | `{upstreams.ck_v1[:12]}` | "
        f"`{upstreams.ck_v3[:12]}` |  |",
    ]
    document = json.loads(run_qola("diff", "-m", str(moved), "--format", "json").stdout)
    assert document["changes"][0]["submodules"] == [
        {"path": CK, "old": upstreams.ck_v1, "new": upstreams.ck_v3, "count": None,
         "back": None}
    ]


def test_outdated_names_the_nested_move_the_tip_would_bring_in_every_format(
    te, upstreams, run_qola
):
    manifest = str(te / "qola.toml")
    v1, tip = upstreams.aiter_v1, upstreams.aiter_tip
    before = snapshot(te)
    text = run_qola("outdated", "-m", manifest)
    assert text.exit_code == 0, text.stderr
    assert text.stdout.splitlines()[-1] == f"aiter: at the tip, {ck_line(upstreams)}"
    markdown = run_qola("outdated", "-m", manifest, "--format", "markdown")
    assert markdown.exit_code == 0, markdown.stderr
    lines = markdown.stdout.splitlines()
    assert lines[:4] == [
        "### qola: how far each pin is behind",
        "",
        "| dependency | pin | pinned | follows | tip | behind | days |",
        "|---|---|---|---|---|---|---|",
    ]
    assert lines[4].startswith(
        f"| `aiter` | `{v1[:12]}` | 2024-01-01 | the default branch | `{tip[:12]}` | 2 | "
    )
    assert lines[5] == (
        f"| ↳ `{CK}` | `{upstreams.ck_v1[:12]}` | | nested submodule | "
        f"`{upstreams.ck_v3[:12]}` |  | |"
    )
    assert lines[6:9] == [
        "",
        "<details><summary><code>aiter</code>: 2 commits on the default branch that the pin "
        "lacks</summary>",
        "",
    ]
    assert lines[9:] == [
        f"- `{tip[:7]}` more aiter (qola tests, 2024-01-01)",
        f"- `{upstreams.aiter_v2[:7]}` Bump composable\\_kernel (qola tests, 2024-01-01)",
        "",
        "</details>",
    ]
    document = json.loads(run_qola("outdated", "-m", manifest, "--format", "json").stdout)
    assert document["deps"][0]["submodules"] == [
        {"path": CK, "old": upstreams.ck_v1, "new": upstreams.ck_v3, "count": None,
         "back": None}
    ]
    assert snapshot(te) == before


def test_outdated_markdown_of_a_pin_at_its_tip_shows_no_nested_row(te, upstreams, run_qola):
    manifest = te / "qola.toml"
    manifest.write_text(manifest.read_text().replace(upstreams.aiter_v1, upstreams.aiter_tip))
    res = run_qola("outdated", "-m", str(manifest), "--format", "markdown")
    assert res.exit_code == 0, res.stderr
    assert len(res.stdout.splitlines()) == 5
    assert "↳" not in res.stdout


LFS = ('[filter "lfs"]\n\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge -- %f\n'
       "\tprocess = git-lfs filter-process\n\trequired = true\n")  # fmt: skip


def test_bump_shows_the_nested_move_where_git_may_not_run_in_the_nested_checkout(
    te, upstreams, run_qola, tmp_path, monkeypatch
):
    """Your config runs git-lfs, and composable_kernel's remote is no manifest URL: qola
    runs no git there, so its commits are not counted; the move is shown all the same."""
    config = tmp_path / "user.gitconfig"
    config.write_text(Path(os.environ["GIT_CONFIG_GLOBAL"]).read_text() + LFS)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    nested = te / "3rdparty" / "aiter" / CK
    git(nested, "fetch", "-q", "--unshallow", "origin")
    git(nested, "fetch", "-q", "origin", upstreams.ck_v3)  # it holds the history between
    res = run_qola("bump", "aiter", "--to", upstreams.aiter_v2, "--dry-run", "-m",
                   str(te / "qola.toml"))  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[1] == f"  {ck_line(upstreams)}"


def test_diff_reads_the_nested_move_from_trees_fetched_lazily_into_the_scratch_repository(
    tmp_path, upstreams, run_qola
):
    """A server that filters: the scratch repository gets commits only, then git fetches
    the two pins' trees (no file) for the gitlinks; nothing is checked out."""
    server = tmp_path / "aiter.git"
    git(tmp_path, "clone", "-q", "--bare", str(upstreams.aiter), str(server))
    git(server, "config", "uploadpack.allowFilter", "true")
    root = init_repo(tmp_path / "project")
    manifest = root / "qola.toml"
    manifest.write_text(f'[deps.aiter]\npath = "3rdparty/aiter"\nurl = "file://{server}"\n'
                        f'commit = "{upstreams.aiter_v1}"\n')  # fmt: skip
    git(root, "add", "qola.toml")
    git(root, "commit", "-q", "-m", "pin aiter")
    manifest.write_text(manifest.read_text().replace(upstreams.aiter_v1, upstreams.aiter_v2))
    before = snapshot(root)
    res = run_qola("diff", "-m", str(manifest), "-v")
    assert res.exit_code == 0, res.stderr
    assert "warning: filtering not recognized" not in res.stderr
    assert res.stdout.splitlines()[:2] == [
        f"aiter {upstreams.aiter_v1[:7]}..{upstreams.aiter_v2[:7]} (1 commit)",
        f"  {ck_line(upstreams)}",
    ]
    assert snapshot(root) == before
