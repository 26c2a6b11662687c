"""Releases that are not one line of history, as real projects make them: a maintenance
release beside newer ones (Catch2's v2.13.10 after v3.0.1), a pin on a pre-release ahead
of the newest release, and a release retagged upstream, which no bump may follow unasked."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from repos import commit_file, git, init_repo, snapshot


@dataclass(frozen=True)
class Lines:
    """main: v2.13.0, v3.0.1, v3.5.0, v4.0-rc1; the branch v2.x, off v2.13.0: v2.13.10."""

    repo: Path
    v2_13_0: str
    v2_13_10: str
    v3_0_1: str
    v3_5_0: str
    v4_rc1: str


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> Lines:
    repo = init_repo(tmp_path_factory.mktemp("lines") / "catch")
    v2_13_0 = commit_file(repo, "v.txt", "2.13.0\n", "release 2.13.0")
    git(repo, "tag", "-a", "-m", "2.13.0", "v2.13.0")
    v3_0_1 = commit_file(repo, "v.txt", "3.0.1\n", "release 3.0.1")
    git(repo, "tag", "v3.0.1")
    v3_5_0 = commit_file(repo, "v.txt", "3.5.0\n", "release 3.5.0")
    git(repo, "tag", "-a", "-m", "3.5.0", "v3.5.0")
    v4_rc1 = commit_file(repo, "v.txt", "4.0-rc1\n", "candidate 4.0-rc1")
    git(repo, "tag", "-a", "-m", "4.0-rc1", "v4.0-rc1")
    git(repo, "checkout", "-q", "-b", "v2.x", "v2.13.0")
    v2_13_10 = commit_file(repo, "v.txt", "2.13.10\n", "release 2.13.10")
    git(repo, "tag", "-a", "-m", "2.13.10", "v2.13.10")
    git(repo, "checkout", "-q", "main")
    return Lines(repo, v2_13_0, v2_13_10, v3_0_1, v3_5_0, v4_rc1)


def served(tmp_path: Path, lines: Lines) -> Path:
    """A copy of the library each test may retag."""
    bare = tmp_path / "catch.git"
    git(tmp_path, "clone", "-q", "--bare", str(lines.repo), str(bare))
    return bare


def project(tmp_path: Path, url: Path, pin: str, label: str) -> Path:
    root = init_repo(tmp_path / "project")
    (root / "qola.toml").write_text(
        f'[deps.catch]\npath = "3rdparty/catch"\nurl = "{url}"\ncommit = "{pin}"\n'
        f'tag = "{label}"\ntrack = "refs/tags/v*"\n'
    )
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "pins")
    return root


def test_a_maintenance_release_is_upstream_and_moves_forward_by_version(
    tmp_path: Path, lines: Lines, run_qola
) -> None:
    root = project(tmp_path, served(tmp_path, lines), lines.v2_13_10, "v2.13.10")
    manifest = str(root / "qola.toml")
    assert run_qola("checkout", "-m", manifest).exit_code == 0
    res = run_qola("verify", "--remote", "-m", manifest)
    assert res.exit_code == 0, res.stdout  # v2.13.10 is in no newer release's history
    res = run_qola("outdated", "-m", manifest)
    assert "catch: 2 releases behind; the newest is v3.5.0\n" in res.stdout
    assert "not in the history" not in res.stdout
    res = run_qola("bump", "catch", "-m", manifest)  # no --allow-downgrade: it is newer
    assert res.exit_code == 0, res.stdout + res.stderr
    assert res.stdout.splitlines()[0].startswith(
        f"catch v2.13.10..v3.5.0 ({lines.v2_13_10[:7]}..{lines.v3_5_0[:7]}, "
    )
    assert f'commit = "{lines.v3_5_0}"\ntag = "v3.5.0"\n' in (root / "qola.toml").read_text()
    assert run_qola("verify", "--remote", "-m", manifest).exit_code == 0


def test_a_pin_ahead_of_the_newest_release_stays(tmp_path: Path, lines: Lines, run_qola) -> None:
    """A pre-release of the next version under a pattern that skips pre-releases."""
    root = project(tmp_path, served(tmp_path, lines), lines.v4_rc1, "v4.0-rc1")
    manifest = str(root / "qola.toml")
    assert run_qola("checkout", "-m", manifest).exit_code == 0
    assert run_qola("verify", "--remote", "-m", manifest).exit_code == 0
    res = run_qola("outdated", "--format", "json", "-m", manifest)
    [dep] = json.loads(res.stdout)["deps"]
    assert dep["releases_behind"] == 0
    res = run_qola("outdated", "-m", manifest)
    assert ("catch: the pin, v4.0-rc1, is not older than the newest release, v3.5.0: nothing "
            "newer to move to\n") in res.stdout  # fmt: skip
    before = snapshot(root)
    for command in (["bump", "catch"], ["bump", "--all"]):
        res = run_qola(*command, "-m", manifest)
        assert res.exit_code == 0, res.stdout + res.stderr
        assert snapshot(root) == before


def test_a_release_retagged_upstream_is_never_followed_unasked(
    tmp_path: Path, lines: Lines, run_qola
) -> None:
    url = served(tmp_path, lines)
    root = project(tmp_path, url, lines.v3_0_1, "v3.0.1")
    manifest = str(root / "qola.toml")
    # Only v3.0.1 is a release the pattern follows: the newest is v3.0.1 itself.
    (root / "qola.toml").write_text(
        (root / "qola.toml").read_text().replace("refs/tags/v*", "refs/tags/v3.0.*")
    )
    git(root, "commit", "-q", "-am", "follow 3.0.x")
    assert run_qola("checkout", "-m", manifest).exit_code == 0
    git(url, "tag", "-f", "v3.0.1", lines.v3_5_0)  # retagged upstream
    before = snapshot(root)
    hint = "qola bump catch --to v3.0.1 --allow-downgrade"
    for command in (["bump", "catch"], ["bump", "--all"], ["bump", "catch", "--dry-run"]):
        res = run_qola(*command, "-m", manifest)
        assert res.exit_code == 4, (command, res.stdout, res.stderr)
        assert res.stderr.endswith(
            f"qola: catch: tag v3.0.1 at {url} names {lines.v3_5_0[:12]} now, not the pin "
            f"{lines.v3_0_1[:12]}: it was moved (retagged) upstream, and a bump would take that "
            "unasked; nothing was changed\nhint: qola verify --remote shows how to compare the "
            f"two commits; to pin what it names now: {hint}\n"
        ), command
        assert snapshot(root) == before
    res = run_qola(*hint.split()[1:], "-m", manifest)  # asked: deliberate
    assert res.exit_code == 0, res.stdout + res.stderr
    assert f'commit = "{lines.v3_5_0}"\ntag = "v3.0.1"\n' in (root / "qola.toml").read_text()
    assert run_qola("verify", "--remote", "-m", manifest).exit_code == 0


def test_an_untagged_pin_ahead_of_the_newest_release_stays(
    tmp_path: Path, lines: Lines, run_qola
) -> None:
    url = served(tmp_path, lines)
    ahead = git(url, "commit-tree", f"{lines.v3_5_0}^{{tree}}", "-p", lines.v3_5_0,
                "-m", "work after 3.5.0").strip()  # fmt: skip
    git(url, "update-ref", "refs/heads/main", ahead)
    root = project(tmp_path, url, ahead, "")
    (root / "qola.toml").write_text((root / "qola.toml").read_text().replace('tag = ""\n', ""))
    git(root, "commit", "-q", "-am", "no label")
    manifest = str(root / "qola.toml")
    assert run_qola("checkout", "-m", manifest).exit_code == 0
    res = run_qola("outdated", "-m", manifest)
    assert ("catch: the pin is ahead of releases refs/tags/v*: its tip is in the pin's "
            "history, nothing newer to move to\n") in res.stdout  # fmt: skip
    before = snapshot(root)
    for command in (["bump", "catch"], ["bump", "--all"]):
        res = run_qola(*command, "-m", manifest)
        assert res.exit_code == 0, res.stdout + res.stderr
        assert snapshot(root) == before


def test_a_release_pin_spelt_two_ways_counts_releases_by_its_newest_name() -> None:
    from qola.history import releases

    refs = {}
    for minor in range(13):  # protobuf names each 3.21.x release v21.x too
        refs[f"refs/tags/v3.21.{minor}"] = refs[f"refs/tags/v21.{minor}"] = f"{minor:040x}"
    refs["refs/tags/v22.0"] = "f" * 40
    assert releases.behind(refs, "refs/tags/v*", f"{12:040x}", "v3.21.12") == 1
    llvm = {"refs/tags/llvmorg-20.1.8": "a" * 40, "refs/tags/llvmorg-21-init": "b" * 40}
    assert releases.newest(llvm, "refs/tags/llvmorg-*") == ("llvmorg-20.1.8", "a" * 40)
