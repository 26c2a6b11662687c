"""Following releases (`track = "refs/tags/v*"`) and the label every pin-writing command
keeps true: real repositories with annotated and lightweight tags and pre-releases."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from repos import commit_file, git, init_repo, snapshot

from qola.history import releases


@dataclass(frozen=True)
class Tagged:
    """A library with releases v1.0 (annotated), v1.1 (lightweight), v1.2-rc1, v1.10
    (annotated, the newest) and an untagged tip on main."""

    repo: Path
    v1_0: str
    v1_1: str
    rc: str
    v1_10: str
    tip: str


@pytest.fixture(scope="module")
def tagged(tmp_path_factory: pytest.TempPathFactory) -> Tagged:
    repo = init_repo(tmp_path_factory.mktemp("tagged") / "rel")
    shas = []
    for tag, annotated in (("v1.0", True), ("v1.1", False), ("v1.2-rc1", True), ("v1.10", True)):
        shas.append(commit_file(repo, "version.txt", f"{tag}\n", f"release {tag}"))
        git(repo, "tag", *(["-a", "-m", f"release {tag}"] if annotated else []), tag)
    tip = commit_file(repo, "version.txt", "after\n", "work after v1.10")
    return Tagged(repo, *shas, tip)


def project(tmp_path: Path, tagged: Tagged, pin: str, extra: str = "") -> Path:
    """A root (a git repository) pinning rel at pin, following releases; checked out."""
    root = init_repo(tmp_path / "project")
    (root / "qola.toml").write_text(
        "[deps.rel]\n"
        'path = "3rdparty/rel"\n'
        f'url = "{tagged.repo}"\n'
        f'commit = "{pin}"\n'
        f"{extra}"
        'track = "refs/tags/v*"\n'
    )
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "pins")
    return root


def test_version_order_and_pre_releases_on_real_tag_histories() -> None:
    """Tags as fmt, LLVM, googletest and nlohmann/json name them."""

    def refs(*tags: str) -> dict[str, str]:
        return {f"refs/tags/{tag}": f"{n:040x}" for n, tag in enumerate(tags)}

    fmt = refs("5.3.0", "10.2.1", "11.0.2", "9.1.0", "11.1.4", "11.0.0", "v0.11.0")
    assert [tag for tag, _ in releases.releases(fmt, "refs/tags/*")] == [
        "v0.11.0", "5.3.0", "9.1.0", "10.2.1", "11.0.0", "11.0.2", "11.1.4"
    ]
    llvm = refs("llvmorg-17.0.6", "llvmorg-18.1.0-rc1", "llvmorg-18.1.8", "llvmorg-19.1.0-rc3")
    assert releases.newest(llvm, "refs/tags/llvmorg-*") == ("llvmorg-18.1.8", f"{2:040x}")
    assert releases.newest(llvm, "refs/tags/llvmorg-*-rc*") == ("llvmorg-19.1.0-rc3", f"{3:040x}")
    gtest = refs("release-1.8.1", "release-1.12.1", "v1.13.0", "v1.14.0", "latest")
    assert releases.newest(gtest, "refs/tags/release-*") == ("release-1.12.1", f"{1:040x}")
    assert releases.newest(gtest, "refs/tags/*")[0] == "v1.14.0"  # type: ignore[index]
    json = refs("v3.11.2", "v3.11.3", "v3.9.1", "v3.10.5", "v3.12.0-beta")
    assert releases.newest(json, "refs/tags/v*")[0] == "v3.11.3"  # type: ignore[index]
    assert releases.behind(json, "refs/tags/v*", f"{2:040x}", "v3.9.1") == 3
    assert releases.behind(json, "refs/tags/v*", f"{9:040x}", None) is None
    # A letter that ends a version is a release (OpenSSL, tzdata, ntp); words of
    # pre-release anywhere, PEP 440's letters between numbers, mark one.
    openssl = refs("OpenSSL_1_1_1v", "openssl-3.1.0", "OpenSSL_1_1_1w", "openssl-3.2.0-alpha1",
                   "OpenSSL_1_1_1", "openssl-3.2.0")  # fmt: skip
    assert [tag for tag, _ in releases.releases(openssl, "refs/tags/OpenSSL_1_1_1*")] == [
        "OpenSSL_1_1_1", "OpenSSL_1_1_1v", "OpenSSL_1_1_1w"
    ]
    assert releases.newest(openssl, "refs/tags/*")[0] == "openssl-3.2.0"  # type: ignore[index]
    for pre in ("v1.2-rc1", "2.0.0b1", "prerelease-3.1.0", "v3.12.0-beta", "1.0.0-dev.3",
                "llvmorg-18.1.0-rc1", "3.0.0a2", "v4.0-preview1"):  # fmt: skip
        assert releases.is_pre_release(pre), pre
    for release in ("OpenSSL_1_1_1w", "2024a", "4.2.8p17", "release-1.8.0", "v1.0", "20240116.1"):
        assert not releases.is_pre_release(release), release
    # In an order that holds pre-releases, each comes before the release it leads to.
    candidates = refs("v2.0", "v2.0-rc2", "v1.9", "v2.0-rc1", "v2.0.1", "v2.0-beta")
    assert [tag for tag, _ in releases.releases(candidates, "refs/tags/v*-rc*")] == [
        "v2.0-rc1", "v2.0-rc2"
    ]
    ordered = sorted(["v2.0", "v2.0-rc2", "v1.9", "v2.0-rc1", "v2.0.1"], key=releases.version_key)
    assert ordered == ["v1.9", "v2.0-rc1", "v2.0-rc2", "v2.0", "v2.0.1"]
    # Behind counts releases, not tags: protobuf names one commit v21.12 and v3.21.12.
    protobuf = {"refs/tags/v21.11": "a" * 40, "refs/tags/v21.12": "b" * 40,
                "refs/tags/v3.21.12": "b" * 40}  # fmt: skip
    assert releases.behind(protobuf, "refs/tags/v*", "a" * 40, "v21.11") == 1
    # The label of a commit two tags name: the release, not the candidate.
    same = {"refs/tags/v2.0-rc2": "a" * 40, "refs/tags/v2.0": "a" * 40, "refs/tags/v1": "b" * 40}
    assert releases.label_for(same, "a" * 40) == "v2.0"
    assert releases.label_for(same, "a" * 40, prefer="v2.0-rc2") == "v2.0-rc2"
    assert releases.label_for(same, "c" * 40) is None
    # A tag upstream spelt like a ref (refs/tags/refs/heads/v8) can be no label: none is
    # written that the next load would refuse.
    assert releases.label_for({"refs/tags/refs/heads/v8": "d" * 40}, "d" * 40) is None


def test_outdated_counts_releases_behind_and_names_the_newest(
    tmp_path: Path, tagged: Tagged, run_qola
) -> None:
    root = project(tmp_path, tagged, tagged.v1_0, 'tag = "v1.0"\n')
    res = run_qola("outdated", "-m", str(root / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    _, row, *notes = res.stdout.splitlines()
    assert row.split()[:2] == ["rel", "v1.0"]
    assert f"releases refs/tags/v*  v1.10 ({tagged.v1_10[:7]})  3" in row  # 3 commits
    assert notes == ["rel: 2 releases behind; the newest is v1.10"]
    res = run_qola("outdated", "--format", "json", "-m", str(root / "qola.toml"))
    import json

    [dep] = json.loads(res.stdout)["deps"]
    assert (dep["tag"], dep["tip_tag"], dep["releases_behind"], dep["tip"]) == (
        "v1.0", "v1.10", 2, tagged.v1_10
    )


def test_bump_follows_releases_and_writes_the_label(tmp_path: Path, tagged: Tagged, run_qola):
    root = project(tmp_path, tagged, tagged.v1_0, 'tag = "v1.0"\n')
    manifest = root / "qola.toml"
    assert run_qola("checkout", "-m", str(manifest)).exit_code == 0
    before = manifest.read_text()
    res = run_qola("bump", "rel", "--commit", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[0] == (
        f"rel v1.0..v1.10 ({tagged.v1_0[:7]}..{tagged.v1_10[:7]}, 3 commits)"
    )
    assert manifest.read_text() == before.replace(tagged.v1_0, tagged.v1_10).replace(
        'tag = "v1.0"', 'tag = "v1.10"'
    )
    assert git(root, "log", "-1", "--format=%s") == "Bump rel from v1.0 to v1.10"
    assert git(root / "3rdparty/rel", "rev-parse", "HEAD") == tagged.v1_10
    assert run_qola("verify", "-m", str(manifest)).exit_code == 0
    again = run_qola("bump", "rel", "-m", str(manifest))
    assert again.stdout == f"rel is already at {tagged.v1_10[:12]} (releases refs/tags/v*)\n"


def test_bump_all_follows_releases_and_a_pattern_can_name_pre_releases(
    tmp_path: Path, tagged: Tagged, run_qola
):
    root = project(tmp_path, tagged, tagged.v1_0)
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace("refs/tags/v*", "refs/tags/v*-rc*"))
    res = run_qola("bump", "--all", "--no-checkout", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert f'commit = "{tagged.rc}"\ntag = "v1.2-rc1"\n' in manifest.read_text()


def test_a_move_to_an_untagged_commit_removes_the_label_and_a_tag_adds_it(
    tmp_path: Path, tagged: Tagged, run_qola
):
    root = project(tmp_path, tagged, tagged.v1_1, 'tag = "v1.1"\n')
    manifest = root / "qola.toml"
    original = manifest.read_text()
    res = run_qola("bump", "rel", "--to", tagged.tip, "--no-checkout", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert manifest.read_text() == original.replace(tagged.v1_1, tagged.tip).replace(
        'tag = "v1.1"\n', ""
    )
    # Back to a release by its SHA: the tag that names it upstream is written.
    res = run_qola("bump", "rel", "--to", tagged.v1_1, "--allow-downgrade", "--no-checkout",
                   "-m", str(manifest))  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert manifest.read_text() == original


def test_bump_to_the_pinned_commit_by_its_tag_writes_only_the_label(
    tmp_path: Path, tagged: Tagged, run_qola
):
    root = project(tmp_path, tagged, tagged.v1_10)
    manifest = root / "qola.toml"
    original = manifest.read_text()
    res = run_qola("bump", "rel", "--to", "v1.10", "--no-checkout", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[0] == (
        f"rel is already at {tagged.v1_10[:12]} (v1.10); labelling it v1.10"
    )
    assert manifest.read_text() == original.replace(
        f'{tagged.v1_10}"\n', f'{tagged.v1_10}"\ntag = "v1.10"\n'
    )


def test_bump_commit_of_a_pin_moved_by_hand_names_the_label_as_the_new_pins(
    tmp_path: Path, tagged: Tagged, run_qola
):
    """The manifest already pins v1.10 (edited by hand), HEAD v1.0: bump --commit commits
    it, and the label in the manifest is the new pin's, never the old one's."""
    root = project(tmp_path, tagged, tagged.v1_0, 'tag = "v1.0"\n')
    manifest = root / "qola.toml"
    edited = manifest.read_text().replace(tagged.v1_0, tagged.v1_10).replace("v1.0", "v1.10")
    manifest.write_text(edited)
    res = run_qola("bump", "rel", "--commit", "--no-checkout", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    subject = f"Bump rel from {tagged.v1_0[:7]} to v1.10"
    assert res.stdout == (
        f"rel is already at {tagged.v1_10[:12]} (releases refs/tags/v*)\n"
        f"committed {git(root, 'rev-parse', 'HEAD')[:12]}: {subject}\n"
    )
    assert git(root, "log", "-1", "--format=%s") == subject
    assert git(root, "show", "HEAD:qola.toml") + "\n" == edited == manifest.read_text()
    assert git(root, "status", "--porcelain") == ""


def test_freeze_writes_the_label_of_what_is_checked_out(tmp_path: Path, tagged: Tagged, run_qola):
    root = project(tmp_path, tagged, tagged.v1_0, 'tag = "v1.0"\n')
    manifest = root / "qola.toml"
    assert run_qola("checkout", "-m", str(manifest)).exit_code == 0
    clone = root / "3rdparty/rel"
    git(clone, "fetch", "-q", "--tags", str(tagged.repo))
    git(clone, "checkout", "-q", "v1.1")
    res = run_qola("freeze", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[0] == f"rel {tagged.v1_0[:12]} -> {tagged.v1_1[:12]} (v1.1)"
    assert f'commit = "{tagged.v1_1}"\ntag = "v1.1"\n' in manifest.read_text()
    git(clone, "checkout", "-q", tagged.tip)
    assert run_qola("freeze", "-m", str(manifest)).exit_code == 0
    assert "tag =" not in manifest.read_text()
    assert run_qola("verify", "-m", str(manifest)).exit_code == 0


def test_freeze_labels_a_commit_named_by_a_tag_of_a_tag(tmp_path: Path, tagged: Tagged, run_qola):
    root = project(tmp_path, tagged, tagged.v1_0, 'tag = "v1.0"\n')
    manifest = root / "qola.toml"
    assert run_qola("checkout", "-m", str(manifest)).exit_code == 0
    clone = root / "3rdparty/rel"
    git(clone, "fetch", "-q", "--tags", str(tagged.repo))
    git(clone, "tag", "-d", "v1.10")
    git(clone, "tag", "-a", "-m", "signed over", "v1.10-inner", tagged.v1_10)
    git(clone, "tag", "-a", "-m", "a tag of a tag", "v1.10", "v1.10-inner")  # git warns; it is made
    git(clone, "tag", "-d", "v1.10-inner")
    git(clone, "checkout", "-q", tagged.v1_10)
    res = run_qola("freeze", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert f'commit = "{tagged.v1_10}"\ntag = "v1.10"\n' in manifest.read_text()


def test_verify_remote_judges_a_release_pin_against_the_newest_release(
    tmp_path: Path, tagged: Tagged, run_qola
):
    root = project(tmp_path, tagged, tagged.v1_1, 'tag = "v1.1"\n')
    assert run_qola("checkout", "-m", str(root / "qola.toml")).exit_code == 0
    res = run_qola("verify", "--remote", "-m", str(root / "qola.toml"))
    assert res.exit_code == 0, res.stdout + res.stderr


@pytest.mark.parametrize(
    ("track", "error", "hint"),
    [
        ("refs/heads/*", "'refs/heads/*' is a pattern, and only tags can be followed by one",
         'follow releases with a pattern of tags: track = "refs/tags/v*"'),
        ("refs/tags/v?*", "'refs/tags/v?*' is not a pattern of tags qola follows (it holds '?')",
         "give the tags' common start and a *, e.g. track = \"refs/tags/v*\""),
        ("refs/tags/v*..", "'refs/tags/v*..' is not a pattern of tags qola follows (it holds "
         "'..')", "give the tags' common start and a *, e.g. track = \"refs/tags/v*\""),
    ],
    ids=["branches", "question-mark", "dots"],
)
def test_a_pattern_that_is_not_one_of_tags_is_refused(
    tmp_path: Path, tagged: Tagged, run_qola, track: str, error: str, hint: str
):
    root = project(tmp_path, tagged, tagged.v1_0)
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace("refs/tags/v*", track))
    before = snapshot(root)
    res = run_qola("outdated", "-m", str(manifest))
    assert res.exit_code == 2
    assert res.stderr == f"qola: {manifest}:5: deps.rel.track: {error}\nhint: {hint}\n"
    assert snapshot(root) == before


def test_a_pattern_no_release_matches_is_an_error_that_says_so(
    tmp_path: Path, tagged: Tagged, run_qola
):
    root = project(tmp_path, tagged, tagged.v1_0)
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace("refs/tags/v*", "refs/tags/release-*"))
    before = snapshot(root)
    res = run_qola("bump", "rel", "-m", str(manifest))
    assert res.exit_code == 3
    assert res.stderr == (
        f"qola: rel: no release of {tagged.repo} matches track 'refs/tags/release-*'\n"
        "hint: point track at the remote's tags, e.g. refs/tags/v*\n"
    )
    assert snapshot(root) == before


def test_verify_remote_catches_a_release_retagged_or_deleted_upstream(
    tmp_path: Path, tagged: Tagged, run_qola
):
    """A retagged release is what a supply-chain check exists to catch: its own kind."""
    served = tmp_path / "served.git"
    git(tmp_path, "clone", "-q", "--bare", str(tagged.repo), str(served))
    root = project(tmp_path, tagged, tagged.v1_1, 'tag = "v1.1"\n')
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace(str(tagged.repo), str(served)))
    assert run_qola("checkout", "-m", str(manifest)).exit_code == 0
    assert run_qola("verify", "--remote", "-m", str(manifest)).exit_code == 0
    git(served, "tag", "-f", "v1.1", tagged.rc)  # retagged
    before = snapshot(root)
    res = run_qola("verify", "--remote", "--format", "json", "-m", str(manifest))
    assert res.exit_code == 1
    import json

    [dep] = json.loads(res.stdout)["deps"]
    assert [(p["kind"], p["failure"]) for p in dep["problems"]] == [("tag-moved", True)]
    message = dep["problems"][0]["message"]
    assert message.startswith(
        f"tag v1.1 at {served} names {tagged.rc[:12]} now, not the pin {tagged.v1_1[:12]}: "
        "it was moved (retagged) upstream; compare the two commits before trusting it ("
    )  # the rest, the commands that compare them, is run in test_verify_labels.py
    assert message.endswith(
        "move the pin (qola bump rel --to v1.1 --allow-downgrade, as a retag may move it back) "
        "only if the new one is trusted"
    )
    assert snapshot(root) == before  # verify writes nothing
    git(served, "tag", "-d", "v1.1")
    res = run_qola("verify", "--remote", "-m", str(manifest))
    assert res.exit_code == 1
    assert f"tag v1.1 at {served} no longer exists, not the pin" in res.stdout + res.stderr
    assert "it was deleted upstream; the pin itself is unchanged" in res.stdout + res.stderr


def test_status_shows_the_label_beside_the_pin(tmp_path: Path, tagged: Tagged, run_qola):
    root = project(tmp_path, tagged, tagged.v1_1, 'tag = "v1.1"\n')
    manifest = root / "qola.toml"
    assert run_qola("checkout", "-m", str(manifest)).exit_code == 0
    res = run_qola("status", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[1].split()[:4] == [
        "rel", "3rdparty/rel", "v1.1", f"({tagged.v1_1[:7]})"
    ]
    import json

    res = run_qola("status", "--format", "json", "-m", str(manifest))
    [dep] = json.loads(res.stdout)["deps"]
    assert (dep["pinned"], dep["tag"]) == (tagged.v1_1, "v1.1")


def test_verify_remote_passes_a_pin_labelled_by_an_annotated_tag(
    tmp_path: Path, tagged: Tagged, run_qola
):
    """git lists an annotated tag's commit (`^{}`) only where asked for it: the check must
    compare the commit, not the tag object."""
    root = project(tmp_path, tagged, tagged.v1_0, 'tag = "v1.0"\n')
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace('track = "refs/tags/v*"', 'track = "v1.0"'))
    assert git(tagged.repo, "cat-file", "-t", "v1.0") == "tag"
    assert run_qola("checkout", "-m", str(manifest)).exit_code == 0
    res = run_qola("verify", "--remote", "-m", str(manifest))
    assert res.exit_code == 0, res.stdout + res.stderr
