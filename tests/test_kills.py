"""SIGKILL between any two git commands of a move, a bump and a patch series; then a rerun.

A `git` wrapper on PATH (tests/gitpause.py) stops the run before the Nth git call, so
each kill lands at the same step on every machine. After each kill the next run must
finish, and everything the user had (edits, unsaved commits, untracked files, staged
changes) must still be there or be recoverable from refs/qola/backup.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import gitpause
import pytest
from conftest import Upstream, manifest_text
from repos import commit_file, git, head

from qola.repo import store

MY_EDIT = "my edit\n"
MY_NESTED_EDIT = "my nested edit\n"
UNTRACKED = "notes of mine\n"


@pytest.fixture(scope="session")
def wrapper(tmp_path_factory: pytest.TempPathFactory) -> gitpause.Wrapper:
    return gitpause.make(tmp_path_factory.mktemp("git-wrapper"))


def nth_call(calls: list[str], step: str, occurrence: int) -> int:
    """The 1-based number of the git call that is the occurrence-th one containing step."""
    found = [i for i, call in enumerate(calls, 1) if step in call]
    assert len(found) >= occurrence, f"no git call #{occurrence} with {step!r} in:\n" + "\n".join(
        calls
    )
    return found[occurrence - 1]


def calls_of(wrapper: gitpause.Wrapper, template: Path, copy: Path, *args: str) -> list[str]:
    """Every git call `qola ARGS -m <manifest>` makes on a copy of template, run to the end."""
    shutil.copytree(template, copy, symlinks=True)
    proc, calls = gitpause.count_calls(wrapper, *args, "-m", str(copy / "qola.toml"))
    assert proc.returncode == 0, proc.stderr
    return calls


def killed_copy(
    wrapper: gitpause.Wrapper, template: Path, copy: Path, calls: list[str], step: str,
    occurrence: int, *args: str,
) -> Path:
    """A copy of template in which `qola ARGS` was killed just before its git step; its
    manifest."""
    shutil.copytree(template, copy, symlinks=True)
    manifest = copy / "qola.toml"
    at = nth_call(calls, step, occurrence)
    killed, paused = gitpause.run_until(wrapper, at, *args, "-m", str(manifest))
    assert killed and step in paused
    return manifest


def backups_holding(repo: Path, prefix: str, path: str, text: str) -> list[str]:
    """The backup refs below prefix whose tree has path with exactly text."""
    refs = git(repo, "for-each-ref", "--format=%(refname)", prefix).split()
    return [ref for ref in refs if git(repo, "show", f"{ref}:{path}", check=False) + "\n" == text]


# ------------------------------------------------------------------- checkout --force


@pytest.fixture(scope="session")
def _force_template(
    tmp_path_factory: pytest.TempPathFactory, _synced_template: Path, upstream: Upstream
) -> Path:
    """lib at v2 with an unsaved commit, an edit, an untracked file and an edit in nested;
    the manifest pins main's tip (not fetched yet)."""
    root = tmp_path_factory.mktemp("force") / "project"
    shutil.copytree(_synced_template, root, symlinks=True)
    (root / "qola.toml").write_text(manifest_text(upstream, upstream.lib_tip))
    lib = root / "3rdparty" / "lib"
    commit_file(lib, "mine.txt", "mine\n", "my unsaved work")
    (lib / "README").write_text(MY_EDIT)
    (lib / "notes.txt").write_text(UNTRACKED)
    (lib / "extern" / "nested" / "nested.txt").write_text(MY_NESTED_EDIT)
    return root


@pytest.fixture(scope="session")
def force_calls(wrapper, _force_template, tmp_path_factory) -> list[str]:
    copy = tmp_path_factory.mktemp("force-count") / "project"
    return calls_of(wrapper, _force_template, copy, "checkout", "--force")


FORCE_STEPS = [
    ("status", 1),
    ("stash create", 1),
    ("update-ref --no-deref refs/qola/backup", 1),
    ("reset -q --hard", 1),
    ("stash create", 2),
    ("update-ref --no-deref refs/qola/backup", 2),
    ("reset -q --hard", 2),
    ("fetch", 1),
    ("checkout -q --detach", 1),
    ("update-ref --no-deref refs/qola/pins/", 1),
    ("ls-tree", 1),
]


@pytest.mark.parametrize(("step", "occurrence"), FORCE_STEPS, ids=lambda v: str(v))
def test_checkout_force_killed_before_a_git_step_is_finished_by_the_next_run(
    step, occurrence, wrapper, force_calls, _force_template, tmp_path, upstream, run_qola
):
    mine = head(_force_template / "3rdparty" / "lib")  # the unsaved commit
    manifest = killed_copy(wrapper, _force_template, tmp_path / "project", force_calls, step,
                           occurrence, "checkout", "--force")  # fmt: skip
    lib = manifest.parent / "3rdparty" / "lib"

    rerun = run_qola("checkout", "--force", "-m", str(manifest))
    assert rerun.exit_code == 0, rerun.stderr
    assert head(lib) == upstream.lib_tip
    assert run_qola("verify", "-m", str(manifest)).exit_code == 0
    # Nothing the user had is lost.
    assert (lib / "notes.txt").read_text() == UNTRACKED
    assert backups_holding(lib, store.backup_prefix("lib"), "README", MY_EDIT)
    assert git(lib, "for-each-ref", "--contains", mine, store.backup_prefix("lib"))
    nested = lib / "extern" / "nested"
    assert backups_holding(nested, store.backup_prefix("lib") + "extern/nested/", "nested.txt",
                           MY_NESTED_EDIT)  # fmt: skip


# ------------------------------------------------------------------- patch application


@pytest.fixture(scope="session")
def _patched_template(
    tmp_path_factory: pytest.TempPathFactory, _synced_template: Path, upstream: Upstream
) -> Path:
    """lib at v2, no patches; the manifest now pins the tip plus a series for lib and one
    for its nested submodule."""
    root = tmp_path_factory.mktemp("patched") / "project"
    shutil.copytree(_synced_template, root, symlinks=True)
    series = root / "patches" / "lib"
    (series / "extern" / "nested").mkdir(parents=True)
    (series / "0001-readme.patch").write_text(
        "--- a/README\n+++ b/README\n@@ -1 +1 @@\n-lib\n+lib, patched\n"
    )
    (series / "extern" / "nested" / "0001-nested.patch").write_text(
        "--- a/nested.txt\n+++ b/nested.txt\n@@ -1 +1 @@\n-nested v2\n+nested v2, patched\n"
    )
    (root / "qola.toml").write_text(
        manifest_text(upstream, upstream.lib_tip, 'patches = "patches/lib"\n')
    )
    (root / "3rdparty" / "lib" / "notes.txt").write_text(UNTRACKED)
    return root


@pytest.fixture(scope="session")
def patch_calls(wrapper, _patched_template, tmp_path_factory) -> list[str]:
    copy = tmp_path_factory.mktemp("patched-count") / "project"
    return calls_of(wrapper, _patched_template, copy, "checkout")


PATCH_STEPS = [
    ("fetch", 1),
    ("apply --cached", 1),
    ("commit-tree", 1),
    ("checkout -q --detach", 1),
    ("update-ref --no-deref refs/qola/pins/", 1),
    ("read-tree", 2),  # the nested submodule's series
    ("apply --cached", 2),
    ("checkout -q --detach", 2),
    ("update-ref --no-deref refs/qola/pins/", 2),
]


@pytest.mark.parametrize(("step", "occurrence"), PATCH_STEPS, ids=lambda v: str(v))
def test_patch_series_killed_before_a_git_step_is_finished_by_the_next_run(
    step, occurrence, wrapper, patch_calls, _patched_template, tmp_path, run_qola
):
    manifest = killed_copy(wrapper, _patched_template, tmp_path / "project", patch_calls, step,
                           occurrence, "checkout")  # fmt: skip
    lib = manifest.parent / "3rdparty" / "lib"

    rerun = run_qola("checkout", "-m", str(manifest))
    assert rerun.exit_code == 0, rerun.stderr
    check = run_qola("verify", "--strict", "-m", str(manifest))
    assert check.exit_code == 1  # only notes.txt: untracked, and still there
    assert "notes.txt" in check.stdout and "patches" not in check.stdout
    assert run_qola("verify", "-m", str(manifest)).exit_code == 0
    assert (lib / "README").read_text() == "lib, patched\n"
    assert (lib / "extern" / "nested" / "nested.txt").read_text() == "nested v2, patched\n"
    assert (lib / "notes.txt").read_text() == UNTRACKED


# ------------------------------------------------------------------- bump --commit


@pytest.fixture(scope="session")
def _bump_template(tmp_path_factory: pytest.TempPathFactory, upstream: Upstream) -> Path:
    """lib is a submodule of the root at v1, pinned by the manifest; the user has a change
    of their own staged."""
    from click.testing import CliRunner
    from superprojects import legacy_superproject

    from qola.cli import cli

    folder = tmp_path_factory.mktemp("bump") / "te"
    root = legacy_superproject(folder, upstream.lib, upstream.lib_v1)
    res = CliRunner().invoke(cli, ["checkout", "-q", "-m", str(root / "qola.toml")])
    assert res.exit_code == 0, res.output
    (root / "unrelated.txt").write_text("staged by the user\n")
    git(root, "add", "unrelated.txt")
    return root


BUMP = ("bump", "lib", "--to", "v2.0", "--commit")


@pytest.fixture(scope="session")
def bump_calls(wrapper, _bump_template, tmp_path_factory) -> list[str]:
    return calls_of(wrapper, _bump_template, tmp_path_factory.mktemp("bump-count") / "te", *BUMP)


BUMP_STEPS = [
    ("checkout -q --detach", 1),
    ("fetch --no-tags --no-recurse-submodules", 1),  # the nested submodule's gitlink
    ("checkout -q --detach", 2),  # the nested submodule
    ("ls-files -s -z", 1),  # the root's gitlink, read just before the manifest is written
    ("cat-file blob --end-of-options HEAD:qola.toml", 2),  # the first after it is written
    ("read-tree HEAD", 1),
    ("hash-object", 1),
    ("write-tree", 1),
    ("commit-tree", 1),
    ("update-index --add", 2),  # the real index
    ("update-ref -m qola bump", 1),
]


def pins_at(root: Path, rev: str) -> tuple[str, str]:
    """(the manifest's pin, the gitlink) in HEAD ("HEAD") or in the index ("")."""
    text = git(root, "show", f"{rev}:qola.toml")
    pin = text.split('lib_commit = "', 1)[1].split('"', 1)[0]
    if rev:
        link = git(root, "rev-parse", f"{rev}:3rdparty/lib")
    else:
        link = git(root, "ls-files", "-s", "3rdparty/lib").split()[1]
    return pin, link


@pytest.mark.parametrize(("step", "occurrence"), BUMP_STEPS, ids=lambda v: str(v))
def test_bump_commit_killed_before_a_git_step_never_stages_a_revert(
    step, occurrence, wrapper, bump_calls, _bump_template, tmp_path, upstream, run_qola
):
    manifest = killed_copy(wrapper, _bump_template, tmp_path / "te", bump_calls, step,
                           occurrence, *BUMP)  # fmt: skip
    root = manifest.parent
    old, new = upstream.lib_v1, upstream.lib_v2
    # What the kill left: HEAD and the index each at one pin, never a staged revert.
    head_pins, index_pins = pins_at(root, "HEAD"), pins_at(root, "")
    assert head_pins in ((old, old), (new, new))
    assert index_pins in ((old, old), (new, new))
    assert not (head_pins == (new, new) and index_pins == (old, old))

    rerun = run_qola(*BUMP, "-m", str(manifest))
    assert rerun.exit_code == 0, rerun.stderr
    assert pins_at(root, "HEAD") == pins_at(root, "") == (new, new)  # the rerun committed
    # new is the release v2.0, which labels it
    assert git(root, "log", "-1", "--format=%s") == f"Bump lib from {old[:7]} to v2.0"
    assert git(root, "rev-list", "--count", "HEAD") == "2"  # one bump commit, not two
    assert f'lib_commit = "{new}"' in manifest.read_text()
    assert git(root, "diff", "--cached", "--name-only", "--", "unrelated.txt") == "unrelated.txt"
    assert run_qola("verify", "-m", str(manifest)).exit_code == 0


# ------------------------------------------------------------------- inside a git command


@pytest.fixture(scope="module")
def _large_edited(tmp_path_factory, large_upstream) -> Path:
    """big checked out at A with every file edited; the manifest pins B."""
    import procs
    from repos import large_project

    root = tmp_path_factory.mktemp("large-edited") / "project"
    manifest = large_project(root, large_upstream.path, large_upstream.big_a)
    assert procs.run("checkout", "-m", str(manifest)).returncode == 0
    for path in (root / "3rdparty" / "big" / "data").iterdir():
        path.write_bytes(b"my edit of " + path.name.encode() + b"\n")
    manifest.write_text(manifest.read_text().replace(large_upstream.big_a, large_upstream.big_b))
    return root


def test_sigkill_inside_force_reset_is_repaired_by_the_next_plain_run(
    tmp_path, _large_edited, large_upstream, run_qola
):
    """The issue's case: killed while `reset --hard` (after --force saved the edits) holds
    index.lock. The next run, without --force, removes the lock and finishes the move."""
    import os
    import signal

    import procs

    root = tmp_path / "project"
    shutil.copytree(_large_edited, root, symlinks=True)
    manifest = root / "qola.toml"
    lib = root / "3rdparty" / "big"
    saved = lib / ".git" / "refs" / "qola" / "backup" / "big"

    def resetting() -> bool:
        return saved.is_dir() and any(saved.iterdir()) and (lib / ".git" / "index.lock").exists()

    proc = procs.start("checkout", "--force", "-m", str(manifest))
    try:
        procs.wait_for(lambda: resetting() or proc.poll() is not None, what="the reset")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL, "the run ended before its reset"
    assert (lib / ".git" / "index.lock").exists()

    rerun = run_qola("checkout", "-m", str(manifest))
    assert rerun.exit_code == 0, rerun.stderr
    assert f"removed {lib / '.git' / 'index.lock'}, left by that run" in rerun.stderr
    assert head(lib) == large_upstream.big_b
    assert run_qola("verify", "-m", str(manifest)).exit_code == 0
    [first, *_] = sorted(git(lib, "for-each-ref", "--format=%(refname)", "refs/qola/backup/big"
                             ).split())  # fmt: skip
    assert git(lib, "show", f"{first}:data/0100.bin") == "my edit of 0100.bin"


@pytest.mark.parametrize("content", [b"not json\n", b"", b'{"pid": 1}\n', b'{"started": "nan"}\n'])
def test_a_move_record_qola_cannot_read_stops_the_run_and_removes_nothing(
    content, behind_pin, run_qola
):
    from repos import snapshot

    from qola.repo import gitfiles

    gitdir = gitfiles.git_dir(behind_pin.lib)
    assert gitdir is not None
    marker = store.moving_marker(gitdir)
    marker.parent.mkdir(exist_ok=True)
    marker.write_bytes(content)
    (gitdir / "index.lock").write_text("")  # someone's git may be running: not qola's to remove
    before = snapshot(behind_pin.root)
    res = run_qola("checkout", "-m", str(behind_pin.manifest))
    assert res.exit_code == 3
    assert f"qola: {behind_pin.lib}: found {marker}, but " in res.stderr
    assert "qola will not guess what the run that left it was doing, so it removes nothing\n" in (
        res.stderr
    )
    assert f"hint: check the repository (git -C {behind_pin.lib} status), remove {marker}, " in (
        res.stderr
    )
    assert snapshot(behind_pin.root) == before


def test_a_kill_after_the_checkout_finished_never_licenses_resetting_later_edits(
    wrapper, behind_pin, upstream, tmp_path, run_qola
):
    """Killed after git's checkout but before qola recorded the pin as its own: the user
    edits the dependency afterwards. The next move repairs the record and refuses (exit 4),
    as for any local work, instead of resetting the edit as the dying git's."""
    calls = calls_of(wrapper, behind_pin.root, tmp_path / "counting", "checkout")
    n = nth_call(calls, "update-ref --no-deref refs/qola/pin", 1)
    killed, _ = gitpause.run_until(wrapper, n, "checkout", "-m", str(behind_pin.manifest))
    assert killed and head(behind_pin.lib) == upstream.lib_tip
    (behind_pin.lib / "README").write_text(MY_EDIT)
    behind_pin.set_pin(upstream.lib_tip, upstream.lib_v2)
    res = run_qola("checkout", "-m", str(behind_pin.manifest))
    assert res.exit_code == 4, res.stderr
    assert "an earlier run did not finish moving 3rdparty/lib; finishing its work" in res.stderr
    assert "would lose local work:\n  uncommitted: 3rdparty/lib/README (modified)" in res.stderr
    assert (behind_pin.lib / "README").read_text() == MY_EDIT
    assert git(behind_pin.lib, "rev-parse", store.pin_ref(upstream.lib_tip)) == upstream.lib_tip


# ------------------------------------------------------------------- a file in the way


@pytest.fixture
def one_behind(make_project, upstream, run_qola):
    """lib checked out by qola at v1; the manifest now pins v2, which adds lib.txt."""
    project = make_project(pin=upstream.lib_v1)
    assert run_qola("checkout", "-m", str(project.manifest)).exit_code == 0
    project.set_pin(upstream.lib_v1, upstream.lib_v2)
    return project


@pytest.mark.parametrize("when", ["before-the-run", "after-the-kill"])
def test_a_users_file_where_the_pin_adds_one_survives_a_kill_before_the_checkout(
    when, wrapper, one_behind, upstream, tmp_path, run_qola
):
    """Killed once the pin is fetched, before git's checkout: the next run finishes the
    move, and the user's file at lib.txt (a path the pin adds) is saved first, not
    overwritten: the printed command brings it back."""
    mine = one_behind.lib / "lib.txt"
    if when == "before-the-run":
        mine.write_text(UNTRACKED)
    # Paused at the checkout by name: with a file in the pin's way, git is asked first
    # whether it is ignored (one more call than without it).
    killed, paused = gitpause.run_until(wrapper, 0, "checkout", "-m", str(one_behind.manifest),
                                        pause_on="checkout -q --detach")  # fmt: skip
    assert killed and "checkout -q --detach" in paused
    if when == "after-the-kill":
        mine.write_text(UNTRACKED)
    rerun = run_qola("checkout", "-m", str(one_behind.manifest))
    assert rerun.exit_code == 0, rerun.stderr
    assert head(one_behind.lib) == upstream.lib_v2
    assert mine.read_text() == "lib v2\n"
    [ref] = backups_holding(one_behind.lib, store.backup_prefix("lib"), "lib.txt", UNTRACKED)
    assert ref.endswith("-in-the-way")
    restore = f"git -C {one_behind.lib} restore --source={ref} --worktree -- lib.txt"
    assert f"held in the way of {upstream.lib_v2[:12]} as {ref}; restore with: {restore}\n" in (
        rerun.stderr
    )
    git(one_behind.lib, "restore", f"--source={ref}", "--worktree", "--", "lib.txt")
    assert mine.read_text() == UNTRACKED


def test_a_file_the_killed_checkout_wrote_is_written_again_without_a_backup(
    wrapper, one_behind, upstream, tmp_path, run_qola
):
    """What the dying checkout wrote at a path the pin adds is the pin's own content:
    nobody's work, cleared and written again."""
    calls = calls_of(wrapper, one_behind.root, tmp_path / "counting" / "project", "checkout")
    at = nth_call(calls, "checkout -q --detach", 1)
    killed, _ = gitpause.run_until(wrapper, at, "checkout", "-m", str(one_behind.manifest))
    assert killed
    (one_behind.lib / "lib.txt").write_text("lib v2\n")  # as git's checkout writes it
    rerun = run_qola("checkout", "-m", str(one_behind.manifest))
    assert rerun.exit_code == 0, rerun.stderr
    assert head(one_behind.lib) == upstream.lib_v2
    assert git(one_behind.lib, "for-each-ref", store.backup_prefix("lib")) == ""
    assert git(one_behind.lib, "status", "--porcelain") == ""


@pytest.fixture
def nested_one_behind(pinned_by_qola, upstream):
    """lib and nested checked out by qola at v2; the manifest now pins a lib commit (made
    here, like the nested commit it records) whose nested gitlink adds added.txt."""
    lib, nested = pinned_by_qola.lib, pinned_by_qola.nested
    added = commit_file(nested, "added.txt", "added upstream\n", "nested adds a file")
    git(lib, "add", "extern/nested")
    pin = commit_file(lib, "lib.txt", "lib v5\n", "lib records the nested commit")
    git(lib, "checkout", "-q", "--detach", upstream.lib_v2)
    git(nested, "checkout", "-q", "--detach", upstream.nested_v2)
    git(lib, "update-ref", store.pin_ref(pin), pin)  # qola's own: not the user's alone
    git(nested, "update-ref", store.pin_ref(added), added)
    assert git(lib, "status", "--porcelain") == ""
    pinned_by_qola.set_pin(upstream.lib_v2, pin)
    return pinned_by_qola


@pytest.mark.parametrize("content", [UNTRACKED, "added upstream\n"])
def test_a_kill_before_a_nested_checkout_leaves_nothing_in_its_way(
    content, wrapper, nested_one_behind, tmp_path, run_qola
):
    """Killed before git's checkout of the nested submodule, the file it writes at a path
    the new gitlink adds there (or one of the user's) would make every later checkout
    refuse: the next run saves one that is not the gitlink's own, and clears it."""
    project = nested_one_behind
    calls = calls_of(wrapper, project.root, tmp_path / "counting" / "project", "checkout")
    at = nth_call(calls, "checkout -q --detach", 2)
    killed, paused = gitpause.run_until(wrapper, at, "checkout", "-m", str(project.manifest))
    assert killed and "checkout -q --detach" in paused
    mine = project.nested / "added.txt"
    mine.write_text(content)
    rerun = run_qola("checkout", "-m", str(project.manifest))
    assert rerun.exit_code == 0, rerun.stderr
    assert mine.read_text() == "added upstream\n"
    assert git(project.nested, "status", "--porcelain") == ""
    prefix = store.backup_prefix("lib") + "extern/nested/"
    saved = backups_holding(project.nested, prefix, "added.txt", content)
    assert len(saved) == (1 if content == UNTRACKED else 0)
    if saved:
        assert saved[0].endswith("-in-the-way")
        assert f"restore with: git -C {project.nested} restore --source={saved[0]}" in (
            rerun.stderr
        )
