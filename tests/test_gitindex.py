"""Reading assume-unchanged / skip-worktree flags from index files, against `git ls-files -v`.

Every repository is built with the git CLI; what the reader finds is compared with
what git itself lists, and every index it cannot fully understand must be declined
(None), so that verify asks git instead of calling a tree clean.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from repos import commit_file, git, init_repo

from qola.gitrun.flagged import flagged_files
from qola.gitrun.git import Runner
from qola.repo import index

# A path longer than the 12-bit name length field holds (git then stores 0xFFF).
LONG_PATH = "/".join(["d" * 200] * 21) + "/long.txt"
NON_UTF8 = os.fsdecode(b"caf\xe9.txt")


def ls_files(repo: Path, *args: str) -> list[tuple[str, str, str, str]]:
    """(tag, mode, sha, path) of each `git ls-files -v -s -z` record, paths as os.fsdecode."""
    out = subprocess.run(
        ["git", "ls-files", "-v", "-s", "-z", *args], cwd=repo, capture_output=True, check=True
    ).stdout
    records = []
    for record in out.split(b"\0"):
        if record:
            meta, _, path = record.partition(b"\t")
            tag, mode, sha, _stage = meta.decode().split()
            records.append((tag, mode, sha, os.fsdecode(path)))
    return records


def git_flagged(repo: Path, *args: str) -> list[tuple[str, str, str, str]]:
    """What `ls-files -v` marks as hidden: (path, mode, sha, flag), gitlinks left out."""
    found = []
    for tag, mode, sha, path in ls_files(repo, *args):
        if mode != "160000" and (tag.islower() or tag == "S"):
            flag = "skip-worktree" if tag in "Ss" else "assume-unchanged"
            found.append((path, mode, sha, flag))
    return found


def read_flagged(repo: Path) -> list[tuple[str, str, str, str | None]] | None:
    entries = index.flagged_entries(repo / ".git")
    if entries is None:
        return None
    return [(e.path, e.mode, e.sha, e.flag) for e in entries if not e.is_gitlink]


def index_version(repo: Path) -> int:
    return int.from_bytes((repo / ".git" / "index").read_bytes()[4:8], "big")


def rehashed(body: bytes, hash_size: int) -> bytes:
    """Index bytes (without checksum) with a correct checksum appended."""
    algorithm = hashlib.sha1 if hash_size == 20 else hashlib.sha256
    return body + algorithm(body).digest()


def flagged_repo(path: Path, version: int, object_format: str) -> Path:
    """A repository whose index (at `version`) has files with every combination of flags.

    Version 2 cannot hold skip-worktree (git writes 3 as soon as one is set).
    """
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main", f"--object-format={object_format}")
    for name in ("plain.txt", "assumed.txt", "skipped.txt", "both.txt", "dir/sub/deep-assumed.c",
                 "dir/sub/deep-plain.c", "dir/subway.c", "run.sh", NON_UTF8):  # fmt: skip
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(os.fsencode(f"{name}\n"))
    (path / "run.sh").chmod(0o755)
    (path / "link").symlink_to("plain.txt")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "files")
    blob = git(path, "rev-parse", ":plain.txt")
    # Entries that exist only in the index: a long path, and a gitlink with no submodule.
    git(path, "update-index", "--add", "--cacheinfo", f"100644,{blob},{LONG_PATH}")
    git(path, "update-index", "--add", "--cacheinfo", f"160000,{git(path, 'rev-parse', 'HEAD')},vendored")  # noqa: E501
    assumed = ["assumed.txt", "dir/sub/deep-assumed.c", "run.sh", NON_UTF8, LONG_PATH]
    git(path, "update-index", "--assume-unchanged", "--", *assumed, "vendored")
    if version >= 3:
        git(path, "update-index", "--skip-worktree", "--", "skipped.txt", "both.txt", "link")
        git(path, "update-index", "--assume-unchanged", "--", "both.txt")
        (path / "intent.txt").write_text("intent-to-add: the other extended flag\n")
        git(path, "add", "-N", "intent.txt")
    git(path, "update-index", "--index-version", str(version))
    return path


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
@pytest.mark.parametrize("version", [2, 3, 4])
def test_reader_finds_exactly_the_entries_ls_files_flags(tmp_path, version, object_format):
    repo = flagged_repo(tmp_path / "repo", version, object_format)
    assert index_version(repo) == version
    expected = git_flagged(repo)
    assert len(expected) == (5 if version == 2 else 8)  # the fixture flags what it says
    assert read_flagged(repo) == expected
    entries = index.flagged_entries(repo / ".git")
    assert entries is not None
    assert [e.path for e in entries if e.is_gitlink] == ["vendored"]
    hash_size = 20 if object_format == "sha1" else 32
    assert {len(e.sha) for e in entries} == {2 * hash_size}


def test_reader_keeps_index_order_across_prefix_compression(tmp_path):
    repo = flagged_repo(tmp_path / "repo", 4, "sha1")
    git(repo, "update-index", "--assume-unchanged", "--", "dir/subway.c", "plain.txt")
    flagged = read_flagged(repo)
    assert flagged == git_flagged(repo)
    assert flagged is not None and "dir/subway.c" in [path for path, *_ in flagged]


def test_reader_finds_nothing_in_an_unflagged_index(tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit_file(repo, "a.txt", "a\n")
    assert read_flagged(repo) == []


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_every_truncation_is_declined_or_reads_the_same(tmp_path, object_format):
    repo = flagged_repo(tmp_path / "repo", 4, object_format)
    hash_size = 20 if object_format == "sha1" else 32
    data = (repo / ".git" / "index").read_bytes()
    full = index.parse(data, hash_size)
    assert full is not None
    for cut in range(len(data)):
        assert index.parse(data[:cut], hash_size) is None, cut
    # Without the checksum to catch it (index.skipHash writes zeros), the structure must:
    # a cut at an optional extension's edge may still read, and then reads the same.
    body = data[:-hash_size]
    assert index.parse(body + bytes(hash_size), hash_size) == full
    for cut in range(len(body)):
        assert index.parse(body[:cut] + bytes(hash_size), hash_size) in (None, full), cut


def test_corrupt_index_is_declined(tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit_file(repo, "ab", "x\n")
    git(repo, "update-index", "--skip-worktree", "ab")
    data = (repo / ".git" / "index").read_bytes()
    assert index_version(repo) == 3 and index.parse(data, 20) is not None
    body = data[:-20]
    flags_at = 12 + 40 + 20  # the only entry's flags, then its extended flags
    # Any changed byte: the checksum no longer matches.
    for at in (0, 9, flags_at, len(body) - 1):
        flipped = bytearray(data)
        flipped[at] ^= 0x01
        assert index.parse(bytes(flipped), 20) is None, at
    # Well-hashed, but not what the format allows.
    unknown_bit = bytearray(body)
    unknown_bit[flags_at + 2] |= 0x10  # an extended flag git does not know
    assert index.parse(rehashed(bytes(unknown_bit), 20), 20) is None
    as_v2 = bytearray(body)
    as_v2[7] = 2  # version 2 cannot have extended flags
    assert index.parse(rehashed(bytes(as_v2), 20), 20) is None
    for version in (1, 5):
        other = bytearray(body)
        other[7] = version
        assert index.parse(rehashed(bytes(other), 20), 20) is None
    wrong_signature = b"DIRX" + body[4:]
    assert index.parse(rehashed(wrong_signature, 20), 20) is None
    assert index.parse(data, 32) is None  # read as SHA-256, it does not add up


def test_padding_that_is_not_nul_is_declined(tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit_file(repo, "ab", "x\n")  # 40 + 20 + 2 + 2 bytes: padded with 8 NULs
    body = (repo / ".git" / "index").read_bytes()[:-20]
    assert index_version(repo) == 2 and index.parse(rehashed(body, 20), 20) == ()
    padded = bytearray(body)
    padded[12 + 40 + 20 + 2 + 2 + 7] = ord("x")
    assert index.parse(rehashed(bytes(padded), 20), 20) is None


def test_required_extension_is_declined(tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit_file(repo, "a.txt", "a\n")
    body = (repo / ".git" / "index").read_bytes()[:-20]
    assert index.parse(rehashed(body + b"ZZZZ\0\0\0\0", 20), 20) == ()  # optional: ignored
    assert index.parse(rehashed(body + b"zzzz\0\0\0\0", 20), 20) is None
    assert index.parse(rehashed(body + b"ZZZZ\0\0\0\x09", 20), 20) is None  # runs past the end


def test_split_index_is_declined(tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit_file(repo, "a.txt", "a\n")
    git(repo, "update-index", "--assume-unchanged", "a.txt")
    git(repo, "update-index", "--split-index")
    assert b"link" in (repo / ".git" / "index").read_bytes()
    assert git_flagged(repo) != []
    assert read_flagged(repo) is None


def test_sparse_index_is_declined(tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit_file(repo, "in/a.txt", "a\n")
    commit_file(repo, "out/b.txt", "b\n")
    git(repo, "sparse-checkout", "init", "--cone", "--sparse-index")
    git(repo, "sparse-checkout", "set", "in")
    data = (repo / ".git" / "index").read_bytes()
    assert b"sdir" in data and ("S", "040000") in [r[:2] for r in ls_files(repo, "--sparse")]
    assert read_flagged(repo) is None
    assert index.parse(data, 20) is None  # the index itself, whatever the config says


def test_sparse_checkout_without_sparse_index_is_declined(tmp_path):
    # git clears skip-worktree from files that are present when it reads such an
    # index (2.37+): the bits on disk are not what git acts on.
    repo = init_repo(tmp_path / "repo")
    commit_file(repo, "in/a.txt", "a\n")
    commit_file(repo, "out/b.txt", "b\n")
    git(repo, "sparse-checkout", "set", "--cone", "in")
    assert index.parse((repo / ".git" / "index").read_bytes(), 20) is not None
    assert read_flagged(repo) is None


def test_missing_index_or_config_is_declined(tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit_file(repo, "a.txt", "a\n")
    (repo / ".git" / "config").rename(repo / ".git" / "config.away")
    assert read_flagged(repo) is None
    (repo / ".git" / "config.away").rename(repo / ".git" / "config")
    assert read_flagged(repo) == []
    (repo / ".git" / "index").unlink()
    assert read_flagged(repo) is None


def test_unknown_object_format_is_declined(tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit_file(repo, "a.txt", "a\n")
    with (repo / ".git" / "config").open("a") as config:
        config.write("[extensions]\n\tobjectFormat = sha3\n")
    assert read_flagged(repo) is None


# Nested submodules: paths from the dependency, as `ls-files --recurse-submodules` gives them.


@pytest.fixture
def with_nested(tmp_path) -> Path:
    """A repository with a nested submodule at extern/nested, flagged files in both."""
    nested = init_repo(tmp_path / "upstream-nested")
    commit_file(nested, "nested.txt", "nested\n")
    commit_file(nested, "other.txt", "other\n")
    top = init_repo(tmp_path / "top")
    commit_file(top, "a.txt", "a\n")
    git(top, "submodule", "add", "-q", str(nested), "extern/nested")
    commit_file(top, "z.txt", "z\n")
    git(top, "update-index", "--skip-worktree", "a.txt")
    git(top, "update-index", "--assume-unchanged", "z.txt")
    git(top / "extern" / "nested", "update-index", "--assume-unchanged", "nested.txt")
    return top


def recursive(flagged: list[index.Entry]) -> list[tuple[str, str, str, str | None]]:
    return [(e.path, e.mode, e.sha, e.flag) for e in flagged]


def test_nested_submodule_flags_read_with_paths_from_the_dependency(with_nested):
    runner = Runner()
    found = recursive(flagged_files(runner, with_nested, "top"))
    assert found == git_flagged(with_nested, "--recurse-submodules")
    assert [path for path, *_ in found] == ["a.txt", "extern/nested/nested.txt", "z.txt"]
    assert runner.log == []  # no git at all


def test_nested_submodule_with_split_index_asks_git_for_that_repository_only(with_nested):
    git(with_nested / "extern" / "nested", "update-index", "--split-index")
    runner = Runner()
    found = recursive(flagged_files(runner, with_nested, "top"))
    assert found == git_flagged(with_nested, "--recurse-submodules")
    assert runner.log == ["git --no-optional-locks ls-files -v -s -z --recurse-submodules"]


def test_top_with_split_index_asks_git_once_for_everything(with_nested):
    git(with_nested, "update-index", "--split-index")
    runner = Runner()
    found = recursive(flagged_files(runner, with_nested, "top"))
    assert found == git_flagged(with_nested, "--recurse-submodules")
    assert len(runner.log) == 1


def test_emptied_submodule_asks_git_which_still_reads_its_git_dir(with_nested):
    # git lists an active submodule whose folder was emptied from .git/modules/<name>.
    shutil.rmtree(with_nested / "extern" / "nested")
    (with_nested / "extern" / "nested").mkdir()
    runner = Runner()
    found = recursive(flagged_files(runner, with_nested, "top"))
    assert found == git_flagged(with_nested, "--recurse-submodules")
    assert [path for path, *_ in found] == ["a.txt", "extern/nested/nested.txt", "z.txt"]
    assert len(runner.log) == 1


def test_gitlink_without_any_submodule_is_not_entered(tmp_path):
    repo = init_repo(tmp_path / "repo")
    sha = commit_file(repo, "a.txt", "a\n")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sha},vendored")
    git(repo, "update-index", "--assume-unchanged", "a.txt")
    runner = Runner()
    found = recursive(flagged_files(runner, repo, "repo"))
    assert found == git_flagged(repo, "--recurse-submodules") != []
    assert runner.log == []


def test_submodule_loop_is_left_to_git(tmp_path):
    # A gitlink whose folder links back to the repository itself: the walk would not end.
    repo = init_repo(tmp_path / "repo")
    sha = commit_file(repo, "a.txt", "a\n")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sha},loop")
    (repo / "loop").symlink_to(".")
    runner = Runner()
    flagged_files(runner, repo, "repo")
    assert runner.log == ["git --no-optional-locks ls-files -v -s -z --recurse-submodules"]


@pytest.mark.parametrize("version", [2, 3, 4])
def test_conflicted_index_reads_like_git(tmp_path, version):
    """Unmerged stages share a path (an empty suffix in version 4); git tags them M/m."""
    repo = init_repo(tmp_path / "repo")
    commit_file(repo, "both.txt", "base\n")
    commit_file(repo, "flagged.txt", "flagged\n")
    git(repo, "switch", "-q", "-c", "other")
    commit_file(repo, "both.txt", "other\n")
    git(repo, "switch", "-q", "main")
    commit_file(repo, "both.txt", "main\n")
    git(repo, "merge", "-q", "other", check=False)
    git(repo, "update-index", "--assume-unchanged", "flagged.txt")
    if version >= 3:
        git(repo, "update-index", "--skip-worktree", "flagged.txt")
    git(repo, "update-index", "--index-version", str(version))
    assert index_version(repo) == version
    assert [tag for tag, *_ in ls_files(repo)].count("M") == 3
    assert read_flagged(repo) == git_flagged(repo) != []


def test_gitlink_paths_lists_every_gitlink_listed_in_gitmodules_or_not(tmp_path):
    repo = init_repo(tmp_path / "repo")
    sha = commit_file(repo, "a.txt", "a\n")
    for path in ("x/listed", "unlisted"):
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sha},{path}")
    git(repo, "update-index", "--skip-worktree", "unlisted")
    (repo / ".gitmodules").write_text('[submodule "l"]\n\tpath = x/listed\n\turl = ./l\n')
    assert index.gitlink_paths(repo / ".git") == ["unlisted", "x/listed"]
    git(repo, "sparse-checkout", "set", "--no-cone", "/*")  # flags git acts on differently
    assert index.gitlink_paths(repo / ".git") == ["unlisted", "x/listed"]
    (repo / ".git" / "index").unlink()
    assert index.gitlink_paths(repo / ".git") == []  # to git, no index is an empty one


def test_a_fifo_at_the_index_is_declined_without_waiting(tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit_file(repo, "a.txt", "a\n")
    (repo / ".git" / "index").unlink()
    os.mkfifo(repo / ".git" / "index")
    assert index.gitlink_paths(repo / ".git") is None
    assert read_flagged(repo) is None
