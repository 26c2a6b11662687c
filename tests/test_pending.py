"""The record of an edit of the manifest under way (qola/history/edit_record.py): what a
killed `bump` or `freeze` left is finished by the same command, exactly, or refused with the
reason."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import gitpause
import pytest
from conftest import Upstream
from repos import commit_file, git, head, snapshot, without_noop_stamps
from superprojects import two_submodules
from test_kills import nth_call

from qola.repo import gitfiles, store

BUMP_ALL = ("bump", "--all", "--commit")
AFTER_THE_WRITE = ("cat-file blob --end-of-options HEAD:qola.toml", 2)  # the first call after it
# The first fetch into a dependency: the record is written, nothing is moved yet.
BEFORE_THE_MOVES = ("fetch -q --no-tags --no-recurse-submodules --depth 1 --end", 1)


@pytest.fixture(scope="module")
def wrapper(tmp_path_factory: pytest.TempPathFactory) -> gitpause.Wrapper:
    return gitpause.make(tmp_path_factory.mktemp("git-wrapper-pending"))


@pytest.fixture
def project(tmp_path: Path, upstream: Upstream) -> Path:
    """Two submodules at v1, both following main, in a root of their own; lib comes from a
    copy of the upstream that a test may add commits to."""
    lib = tmp_path / "lib.git"
    git(tmp_path, "clone", "-q", "--bare", str(upstream.lib), str(lib))
    return two_submodules(tmp_path / "project", lib, upstream.nested, upstream.lib_v1,
                          upstream.nested_v1)  # fmt: skip


def kill(wrapper: gitpause.Wrapper, root: Path, step: tuple[str, int], *args: str) -> None:
    """Run `qola ARGS` on root and kill it before the given git step (as a count of the
    same command on a copy of root finds it)."""
    counting = root.parent / "counting" / root.name
    shutil.copytree(root, counting, symlinks=True)
    done, calls = gitpause.count_calls(wrapper, *args, "-m", str(counting / "qola.toml"))
    assert done.returncode == 0, done.stderr
    shutil.rmtree(counting.parent)
    killed, paused = gitpause.run_until(wrapper, nth_call(calls, *step), *args, "-m",
                                        str(root / "qola.toml"))  # fmt: skip
    assert killed and step[0] in paused


def record(root: Path) -> Path:
    gitdir = gitfiles.git_dir(root)
    assert gitdir is not None
    return store.editing_record(gitdir)


def test_the_rerun_commits_the_pins_the_killed_run_chose_though_the_track_moved_on(
    wrapper, project, upstream, run_qola, tmp_path
):
    """Killed before any dependency moved; upstream gets a new commit meanwhile. The rerun
    finishes the killed bump, with its pins and message, and plans nothing new."""
    kill(wrapper, project, BEFORE_THE_MOVES, *BUMP_ALL)
    data = json.loads(record(project).read_text())
    assert data["command"] == "qola bump --all --commit"
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(tmp_path / "lib.git"), str(work))
    commit_file(work, "later.txt", "after the kill\n")
    git(work, "push", "-q", "origin", "HEAD:main")

    res = run_qola(*BUMP_ALL, "-m", str(project / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    assert (
        "qola: an earlier `qola bump --all --commit` did not finish; finishing it (the pins it "
        "chose, and nothing else)\n"
    ) in res.stderr
    assert git(project, "log", "-1", "--format=%B") + "\n" == data["message"]
    assert res.stdout.endswith(
        f"committed {head(project)[:12]}: Bump 2 dependencies: lib, other\n"
    )
    assert git(project, "rev-parse", "HEAD:3rdparty/lib") == upstream.lib_tip
    assert head(project / "3rdparty" / "lib") == upstream.lib_tip
    assert f'commit = "{upstream.lib_tip}"' in (project / "qola.toml").read_text()
    assert not record(project).exists()
    again = run_qola(*BUMP_ALL, "-m", str(project / "qola.toml"))  # now a new bump, planned
    assert again.exit_code == 0, again.stderr
    assert again.stdout.startswith(f"lib {upstream.lib_tip[:7]}..")


def test_a_plain_checkout_after_the_kill_warns_and_the_rerun_still_finishes(
    wrapper, project, upstream, run_qola
):
    kill(wrapper, project, AFTER_THE_WRITE, *BUMP_ALL)
    res = run_qola("checkout", "-m", str(project / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    assert (
        "qola: warning: an earlier `qola bump --all --commit` did not finish (it was killed or "
        "interrupted); run it again to finish it\n"
    ) in res.stderr
    assert run_qola(*BUMP_ALL, "-m", str(project / "qola.toml")).exit_code == 0
    assert git(project, "rev-parse", "HEAD:3rdparty/other") == upstream.nested_v2


def refused_and_unchanged(run_qola, root: Path, args: tuple[str, ...], message: str) -> None:
    before = without_noop_stamps(snapshot(root))
    res = run_qola(*args, "-m", str(root / "qola.toml"))
    assert res.exit_code == 4, res.stderr
    assert message in res.stderr
    assert f"remove {record(root)} to abandon it" in res.stderr
    assert without_noop_stamps(snapshot(root)) == before


def test_a_pin_put_back_by_hand_since_the_kill_is_refused_and_nothing_changes(
    wrapper, project, upstream, run_qola
):
    kill(wrapper, project, AFTER_THE_WRITE, *BUMP_ALL)
    manifest = project / "qola.toml"
    manifest.write_text(manifest.read_text().replace(upstream.nested_v2, upstream.nested_v1))
    refused_and_unchanged(
        run_qola, project, BUMP_ALL,
        f"qola: {manifest}: an earlier `qola bump --all --commit` did not finish, and the "
        "manifest holds the new pins of lib but the old ones of other; finishing it now would "
        "not be what that run meant, so nothing was changed\n",
    )  # fmt: skip


def test_a_commit_made_since_the_kill_is_refused_and_nothing_changes(
    wrapper, project, run_qola
):
    kill(wrapper, project, AFTER_THE_WRITE, *BUMP_ALL)
    before = head(project)
    commit_file(project, "mine.txt", "a commit of mine\n")
    refused_and_unchanged(
        run_qola, project, BUMP_ALL,
        f"did not finish, and HEAD moved since, from {before[:12]} to {head(project)[:12]}; "
        "finishing it now would not be what that run meant, so nothing was changed",
    )  # fmt: skip


def test_a_pin_set_elsewhere_by_hand_since_the_kill_is_refused(
    wrapper, project, upstream, run_qola
):
    kill(wrapper, project, BEFORE_THE_MOVES, *BUMP_ALL)
    manifest = project / "qola.toml"
    manifest.write_text(manifest.read_text().replace(upstream.lib_v1, upstream.lib_v2))
    refused_and_unchanged(
        run_qola, project, BUMP_ALL,
        f"did not finish, and lib is pinned at {upstream.lib_v2[:12]} now, neither at "
        f"{upstream.lib_v1[:12]}, where it moved from, nor at {upstream.lib_tip[:12]}; ",
    )  # fmt: skip


@pytest.mark.parametrize(
    "other", [("bump", "lib", "--commit"), ("bump", "--all"), ("freeze",)], ids=" ".join
)
def test_another_edit_of_the_manifest_is_refused_while_one_is_left_over(
    other, wrapper, project, run_qola
):
    kill(wrapper, project, AFTER_THE_WRITE, *BUMP_ALL)
    refused_and_unchanged(
        run_qola, project, other,
        f"an earlier `qola bump --all --commit` did not finish (it was killed or interrupted); "
        f"`qola {' '.join(other)}` would mix its own edit of the manifest into that one's",
    )  # fmt: skip


@pytest.mark.parametrize("content", [b"not json\n", b"{}\n", b'{"pid": 1, "started": 2}\n'])
def test_a_record_qola_cannot_read_stops_the_edit_and_removes_nothing(
    content, project, run_qola
):
    path = record(project)
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(content)
    before = without_noop_stamps(snapshot(project))
    res = run_qola(*BUMP_ALL, "-m", str(project / "qola.toml"))
    assert res.exit_code == 3, res.stderr
    assert f"qola: {project}: found {path}, but it is not qola's record of an edit" in res.stderr
    assert f"remove {path}, and run again" in res.stderr
    assert without_noop_stamps(snapshot(project)) == before


def test_a_bump_that_fails_leaves_no_record(project, run_qola):
    """A refusal (local work) ends the command: nothing to finish, nothing left."""
    (project / "3rdparty" / "other" / "nested.txt").write_text("my work\n")
    res = run_qola(*BUMP_ALL, "-m", str(project / "qola.toml"))
    assert res.exit_code == 4, res.stderr
    assert not record(project).exists()
    assert not record(project).parent.exists()


@pytest.mark.parametrize(
    "step", [("update-index --cacheinfo", 1), ("ls-files -s -z -- qola.toml", 1)]
)
def test_bump_without_commit_killed_while_it_stages_is_staged_by_the_rerun(
    step, wrapper, project, upstream, run_qola
):
    """Killed after the gitlink is staged and before the manifest is: the rerun said
    "already at" and left the manifest unstaged."""
    args = ("bump", "lib", "--to", "v2.0")
    kill(wrapper, project, step, *args)
    res = run_qola(*args, "-m", str(project / "qola.toml"))
    assert res.exit_code == 0, res.stderr
    staged = git(project, "show", ":qola.toml")
    assert f'commit = "{upstream.lib_v2}"' in staged
    assert git(project, "ls-files", "-s", "3rdparty/lib").split()[1] == upstream.lib_v2
    assert "qola: staged qola.toml\n" in res.stderr


def test_a_record_whose_pid_now_names_a_live_process_is_still_finished(
    wrapper, project, run_qola
):
    """pids are reused: the killed run's pid may be another process's by the time of the
    rerun. Only the lock tells a run under way; the rerun (no lock held by anyone) took
    the record for a live run's, planned afresh, found every pin "already at" its tip and
    committed nothing, with exit 0."""
    kill(wrapper, project, AFTER_THE_WRITE, *BUMP_ALL)
    path = record(project)
    data = json.loads(path.read_text())
    other = subprocess.Popen(["sleep", "120"])  # alive, and no qola
    try:
        data["pid"] = other.pid
        path.write_text(json.dumps(data) + "\n")
        res = run_qola(*BUMP_ALL, "-m", str(project / "qola.toml"))
    finally:
        other.kill()
        other.wait()
    assert res.exit_code == 0, res.stderr
    assert "did not finish; finishing it" in res.stderr
    assert git(project, "log", "-1", "--format=%B") + "\n" == data["message"]
    assert not path.exists()
