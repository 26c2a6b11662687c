"""`verify` and the label beside a pin: offline, a tag of the clone's own that names another
commit fails (kind `tag`); with --remote, a tag moved or deleted upstream fails
(`tag-moved`), in the same ls-remote as the track; a bump refuses a label it cannot
remove before anything moves. Every hint is run as printed."""

from __future__ import annotations

import json
import shlex
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from repos import commit_file, git, init_repo, snapshot


@dataclass(frozen=True)
class Lib:
    """A served bare library: v1.0 (annotated), v1.1 (lightweight), then an untagged tip."""

    served: Path
    v1_0: str
    v1_1: str
    tip: str


@pytest.fixture(scope="module")
def lib_template(tmp_path_factory: pytest.TempPathFactory) -> Lib:
    base = tmp_path_factory.mktemp("labels")
    repo = init_repo(base / "lib")
    v1_0 = commit_file(repo, "v.txt", "1.0\n", "release 1.0")
    git(repo, "tag", "-a", "-m", "release 1.0", "v1.0")
    v1_1 = commit_file(repo, "v.txt", "1.1\n", "release 1.1")
    git(repo, "tag", "v1.1")
    tip = commit_file(repo, "v.txt", "after\n", "work after 1.1")
    served = base / "lib.git"
    git(base, "clone", "-q", "--bare", str(repo), str(served))
    return Lib(served, v1_0, v1_1, tip)


@pytest.fixture
def lib(tmp_path: Path, lib_template: Lib) -> Lib:
    """A copy of the served library each test may retag."""
    served = tmp_path / "lib.git"
    git(tmp_path, "clone", "-q", "--bare", str(lib_template.served), str(served))
    return Lib(served, lib_template.v1_0, lib_template.v1_1, lib_template.tip)


def project(tmp_path: Path, lib: Lib, pin: str, label: str | None, track: str = "") -> Path:
    root = init_repo(tmp_path / "project")
    (root / "qola.toml").write_text(
        "[deps.lib]\n"
        'path = "3rdparty/lib"\n'
        f'url = "{lib.served}"\n'
        f'commit = "{pin}"\n'
        + (f'tag = "{label}"\n' if label else "")
        + (f'track = "{track}"\n' if track else "")
    )
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "pins")
    return root


def run_hint(hint: str, cwd: Path) -> None:
    """A shell command a message printed, run as a user would paste it."""
    done = subprocess.run(hint, shell=True, cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_verify_shows_the_label_in_every_format(tmp_path: Path, lib: Lib, run_qola) -> None:
    root = project(tmp_path, lib, lib.v1_1, "v1.1")
    manifest = str(root / "qola.toml")
    assert run_qola("checkout", "-m", manifest).exit_code == 0
    res = run_qola("verify", "-m", manifest)
    assert res.exit_code == 0, res.stdout + res.stderr
    assert res.stdout.splitlines()[0] == (
        f"ok   lib 3rdparty/lib pinned {lib.v1_1[:12]} (tag v1.1) head {lib.v1_1[:12]}"
    )
    [dep] = json.loads(run_qola("verify", "--format", "json", "-m", manifest).stdout)["deps"]
    assert (dep["pinned"], dep["tag"]) == (lib.v1_1, "v1.1")
    junit = ET.fromstring(run_qola("verify", "--format", "junit", "-m", manifest).stdout)
    out = junit.find("testsuite/testcase/system-out")
    assert out is not None and out.text is not None
    assert out.text.strip() == f"lib 3rdparty/lib pinned {lib.v1_1} tag v1.1 head {lib.v1_1}"


def test_offline_a_clone_tag_naming_another_commit_fails(
    tmp_path: Path, lib: Lib, run_qola
) -> None:
    """A checkout by SHA fetches no tag: nothing to compare, verify passes. Once the clone
    has the tag (fetched, or made by hand) it must name the pin."""
    # The label is wrong: v1.0 names another commit upstream than the pin.
    root = project(tmp_path, lib, lib.v1_1, "v1.0")
    manifest = str(root / "qola.toml")
    assert run_qola("checkout", "-m", manifest).exit_code == 0
    clone = root / "3rdparty/lib"
    assert git(clone, "tag", "--list").strip() == ""
    assert run_qola("verify", "-m", manifest).exit_code == 0  # no local tag: nothing to check
    git(clone, "fetch", "-q", "--tags", str(lib.served))
    before = snapshot(root)
    res = run_qola("verify", "--format", "json", "-m", manifest)
    assert res.exit_code == 1
    [dep] = json.loads(res.stdout)["deps"]
    [problem] = dep["problems"]
    assert (problem["kind"], problem["failure"]) == ("tag", True)
    hint = f"qola bump lib --to {lib.v1_1}"
    clone = root / "3rdparty/lib"
    assert problem["message"] == (
        f"the clone's tag v1.0 names {lib.v1_0[:12]}, not the pin {lib.v1_1[:12]}: the label "
        "and the pin disagree. qola verify --remote says what the tag names upstream; where it "
        f"names the pin, the clone's tag is stale (`git -C {clone} fetch -q --force --no-tags "
        f"{lib.served} refs/tags/v1.0:refs/tags/v1.0` takes upstream's), else the label is "
        f"wrong (`{hint}` relabels it)"
    )
    assert snapshot(root) == before  # verify writes nothing
    res = run_qola("verify", "--remote", "-m", manifest)
    assert res.exit_code == 1
    assert f"tag v1.0 at {lib.served} names {lib.v1_0[:12]} now, not the pin" in res.stdout
    # The hint, as printed: the pin stays, the label becomes the tag that names it.
    res = run_qola(*shlex.split(hint)[1:], "-m", manifest)
    assert res.exit_code == 0, res.stdout + res.stderr
    text = (root / "qola.toml").read_text()
    assert f'commit = "{lib.v1_1}"\ntag = "v1.1"\n' in text
    assert run_qola("verify", "-m", manifest).exit_code == 0
    assert run_qola("verify", "--remote", "-m", manifest).exit_code == 0


def test_an_annotated_clone_tag_is_peeled(tmp_path: Path, lib: Lib, run_qola) -> None:
    root = project(tmp_path, lib, lib.v1_0, "v1.0")
    manifest = str(root / "qola.toml")
    assert run_qola("checkout", "-m", manifest).exit_code == 0
    git(root / "3rdparty/lib", "fetch", "-q", "--tags", str(lib.served))
    assert run_qola("verify", "-m", manifest).exit_code == 0


def test_retagged_upstream_the_compare_hint_runs_as_printed(
    tmp_path: Path, lib: Lib, run_qola, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tag and track come from one ls-remote; the printed commands show both sides."""
    root = project(tmp_path, lib, lib.v1_1, "v1.1", track="refs/tags/v*")
    manifest = str(root / "qola.toml")
    assert run_qola("checkout", "-m", manifest).exit_code == 0
    assert run_qola("verify", "--remote", "-m", manifest).exit_code == 0
    git(lib.served, "tag", "-f", "v1.1", lib.tip)  # retagged upstream
    before = snapshot(root)
    monkeypatch.chdir(root)
    res = run_qola("verify", "--remote", "--format", "json")
    assert res.exit_code == 1
    [dep] = json.loads(res.stdout)["deps"]
    [problem] = dep["problems"]
    assert problem["kind"] == "tag-moved"
    compare = (
        f"git -C 3rdparty/lib fetch -q --no-tags --depth=1 {lib.served} refs/tags/v1.1 && "
        f"git -C 3rdparty/lib diff --stat {lib.v1_1[:12]} FETCH_HEAD"
    )
    assert problem["message"] == (
        f"tag v1.1 at {lib.served} names {lib.tip[:12]} now, not the pin {lib.v1_1[:12]}: it "
        f"was moved (retagged) upstream; compare the two commits before trusting it ({compare}), "
        "and move the pin (qola bump lib --to v1.1 --allow-downgrade, as a retag may move it "
        "back) only if the new one is trusted"
    )
    assert snapshot(root) == before
    done = subprocess.run(compare, shell=True, cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["v.txt", "|", "2", "+-", "1", "file", "changed,", "1",
                                   "insertion(+),", "1", "deletion(-)"]  # fmt: skip
    # Trusted: the second hint moves the pin to what the tag names now.
    res = run_qola("bump", "lib", "--to", "v1.1", "--allow-downgrade", "--no-checkout")
    assert res.exit_code == 0, res.stdout + res.stderr
    assert f'commit = "{lib.tip}"\ntag = "v1.1"\n' in (root / "qola.toml").read_text()


def test_deleted_upstream_the_hint_keeps_the_pin_and_drops_the_label(
    tmp_path: Path, lib: Lib, run_qola
) -> None:
    root = project(tmp_path, lib, lib.v1_1, "v1.1")
    manifest = str(root / "qola.toml")
    assert run_qola("checkout", "-m", manifest).exit_code == 0
    git(lib.served, "tag", "-d", "v1.1")
    before = snapshot(root)
    res = run_qola("verify", "--remote", "-m", manifest)
    assert res.exit_code == 1
    hint = f"qola bump lib --to {lib.v1_1}"
    assert (
        f"     tag-moved: tag v1.1 at {lib.served} no longer exists, not the pin "
        f"{lib.v1_1[:12]}: it was deleted upstream; the pin itself is unchanged. Keep the "
        f"commit and drop the label with: {hint}\n"
    ) in res.stdout
    assert snapshot(root) == before
    res = run_qola(*shlex.split(hint)[1:], "-m", manifest)
    assert res.exit_code == 0, res.stdout + res.stderr
    text = (root / "qola.toml").read_text()
    assert f'commit = "{lib.v1_1}"\n' in text and "tag =" not in text
    assert run_qola("verify", "--remote", "-m", manifest).exit_code == 0


def test_bump_refuses_a_label_it_cannot_remove_before_anything_moves(
    tmp_path: Path, lib: Lib, run_qola
) -> None:
    """Moving to an untagged commit must drop the label; a layout that keeps qola from
    dropping it alone (a quoted key) is refused, the pin and the clone left as they were."""
    root = project(tmp_path, lib, lib.v1_1, None)
    manifest = root / "qola.toml"
    manifest.write_text(
        f'[deps]\nlib = {{ path = "3rdparty/lib", url = "{lib.served}", commit = "{lib.v1_1}", '
        '"tag" = "v1.1" }\n'
    )
    git(root, "commit", "-q", "-am", "inline")
    assert run_qola("checkout", "-m", str(manifest)).exit_code == 0
    before = snapshot(root)
    res = run_qola("bump", "lib", "--to", lib.tip, "-m", str(manifest))
    assert res.exit_code == 2, res.stdout + res.stderr
    assert res.stderr.endswith(
        f"qola: {manifest}: deps.lib.tag: it shares its line with other keys, so qola cannot "
        "remove it alone\nhint: remove it by hand\n"
    )
    assert snapshot(root) == before


def test_bump_to_a_misspelt_tag_says_which_it_may_mean(tmp_path: Path, lib: Lib, run_qola) -> None:
    root = project(tmp_path, lib, lib.v1_0, "v1.0")
    manifest = str(root / "qola.toml")
    before = snapshot(root)
    res = run_qola("bump", "lib", "--to", "v1.01", "--no-checkout", "-m", manifest)
    assert res.exit_code == 2
    assert res.stderr.endswith(
        f"qola: lib: 'v1.01' is neither a branch nor a tag of {lib.served}; nothing was changed\n"
        "hint: did you mean the tag v1.0? qola bump lib --to v1.0\n"
    ) or res.stderr.endswith("hint: did you mean the tag v1.1? qola bump lib --to v1.1\n")
    assert snapshot(root) == before
    hint = res.stderr.rsplit("? ", 1)[1].split()
    res = run_qola(*hint[1:], "--no-checkout", "-m", manifest)
    assert res.exit_code == 0, res.stdout + res.stderr


def test_a_stale_clone_tag_is_refreshed_by_the_hint(tmp_path: Path, lib: Lib, run_qola) -> None:
    """Re-pinned to a retagged release on purpose, the clone still has the old tag (a plain
    fetch never overwrites one): the hint's fetch takes upstream's, and verify passes."""
    root = project(tmp_path, lib, lib.v1_1, "v1.1")
    manifest = str(root / "qola.toml")
    assert run_qola("checkout", "-m", manifest).exit_code == 0
    clone = root / "3rdparty/lib"
    git(clone, "fetch", "-q", "--tags", str(lib.served))
    git(lib.served, "tag", "-f", "v1.1", lib.tip)  # retagged, and taken deliberately
    assert run_qola("bump", "lib", "--to", "v1.1", "-m", manifest).exit_code == 0
    res = run_qola("verify", "-m", manifest)
    assert res.exit_code == 1
    stale = res.stdout.split("the clone's tag is stale (`", 1)[1].split("`", 1)[0]
    run_hint(stale, root)
    assert run_qola("verify", "-m", manifest).exit_code == 0
