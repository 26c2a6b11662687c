"""The no-op answered before click loads (qola/noop.py): the same answer, or none at all."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from procs import environment
from procs import noop_declined as declined
from repos import git, head, ran, snapshot, without_noop_stamps

from qola.repo import store

# Runs `python -m qola.cli ARGS` exactly as CMake does, and reports at exit which of the
# heavy modules the process loaded: the no-op must have loaded neither.
PROBE = """
import atexit, runpy, sys
def report():
    # (qola.gitrun.git, the runner, too: the no-op's look reads files and runs no git)
    heavy = (
        "click", "git", "qola.gitrun.git", "qola.sync.apply", "qola.gitrun.shim", "qola.manifest",
    )
    loaded = [m for m in heavy if m in sys.modules]
    sys.stderr.write("loaded: " + ",".join(loaded) + "\\n")
atexit.register(report)
sys.argv = ["qola.cli", *sys.argv[1:]]
runpy.run_module("qola.cli", run_name="__main__", alter_sys=True)
"""


def as_cmake_runs_it(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # environment(): this checkout's qola, not whichever one the interpreter has installed.
    return subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=cwd, capture_output=True, text=True,
        check=False, env=environment(),
    )  # fmt: skip


def split_probe(stderr: str) -> tuple[str, str]:
    """(qola's own stderr, the probe's list of loaded modules)."""
    body, _, loaded = stderr.rpartition("loaded: ")
    return body, loaded.strip()


@pytest.fixture
def pinned_clean(pinned_by_qola):
    """The no-op after qola's own checkout, as every configure after the first meets it (a
    tree git made is answered once by the full command: test_noop_on_a_tree_git_made)."""
    return pinned_by_qola


@pytest.mark.parametrize(
    "args",
    [
        ["checkout"],
        ["checkout", "-q"],
        ["checkout", "-v", "--offline", "--force", "--jobs", "3", "lib"],
        ["checkout", "--safe-directory=ALL", "--lock-timeout", "0", "--fetch-timeout=inf"],
        ["checkout", "-m", "qola.toml", "--root", "."],
        ["checkout", "-q", "--", "lib"],
    ],
    ids=["plain", "quiet", "flags-and-name", "equals-forms", "manifest-and-root", "dashdash"],
)
def test_noop_answers_like_the_full_command_without_click(pinned_clean, run_qola, args):
    before = snapshot(pinned_clean.root)
    fast = as_cmake_runs_it(*args, cwd=pinned_clean.root)
    stderr, loaded = split_probe(fast.stderr)
    full = run_qola(*args, cwd=pinned_clean.root)
    assert (fast.returncode, fast.stdout, stderr) == (full.exit_code, full.stdout, full.stderr)
    assert fast.stdout.endswith("up to date\n")
    assert loaded == "qola.manifest"  # not click, GitPython, the apply engine nor the shim
    # Only the no-op's stamp was added (in the root's .git/qola/noop/).
    assert without_noop_stamps(snapshot(pinned_clean.root)) == without_noop_stamps(before)


def test_noop_writes_the_same_cmake_file(pinned_clean, run_qola, tmp_path):
    fast_out, full_out = tmp_path / "fast.cmake", tmp_path / "full.cmake"
    fast = as_cmake_runs_it("checkout", "--cmake-out", str(fast_out), cwd=pinned_clean.root)
    full = run_qola("checkout", "--cmake-out", str(full_out), cwd=pinned_clean.root)
    assert fast.returncode == full.exit_code == 0
    assert split_probe(fast.stderr)[1] == "qola.manifest"
    assert fast_out.read_text() == full_out.read_text()
    assert "QOLA_LIB_SHA" in fast_out.read_text()


def test_noop_reports_an_override_like_the_full_command(pinned_clean, run_qola, tmp_path):
    elsewhere = tmp_path / "my-lib"
    elsewhere.mkdir()
    env = environment({"QOLA_SOURCE_DIR_LIB": str(elsewhere)})
    fast = subprocess.run(
        [sys.executable, "-c", PROBE, "checkout"],
        cwd=pinned_clean.root, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    full = run_qola("checkout", cwd=pinned_clean.root, env={"QOLA_SOURCE_DIR_LIB": str(elsewhere)})
    assert (fast.returncode, fast.stdout) == (full.exit_code, full.stdout)
    assert f"overridden by {elsewhere}" in fast.stdout
    assert split_probe(fast.stderr)[1] == "qola.manifest"


@pytest.mark.parametrize(
    "argv",
    [
        ["verify"],
        ["checkout", "--help"],
        ["checkout", "--no-such-option"],
        ["checkout", "-qv"],
        ["checkout", "-j0"],
        ["checkout", "--jobs", "0"],
        ["checkout", "--jobs", "two"],
        ["checkout", "--safe-directory", "everything"],
        ["checkout", "--lock-timeout", "-1"],
        ["checkout", "--fetch-timeout", "0"],
        ["checkout", "--fetch-timeout", "nan"],
        ["checkout", "--manifest"],
        ["checkout", "--manifest", "."],
        ["checkout", "--root", "qola.toml"],
        ["checkout", "--cmake-out", "."],
        ["checkout", "--offline=1"],
        ["checkout", "nosuchdep"],
        ["checkout", "-m", "missing.toml"],
    ],
)
def test_noop_steps_aside_for_what_only_the_full_command_may_answer(pinned_clean, argv):
    before = snapshot(pinned_clean.root)
    assert declined(argv, pinned_clean.root)
    assert snapshot(pinned_clean.root) == before


@pytest.mark.parametrize(
    ("variable", "value"),
    [("QOLA_JOBS", "0"), ("QOLA_OFFLINE", "maybe"), ("QOLA_SAFE_DIRECTORY", "x")],
)
def test_noop_steps_aside_for_environment_values_click_would_refuse(
    pinned_clean, monkeypatch, variable, value
):
    monkeypatch.setenv(variable, value)
    assert declined(["checkout"], pinned_clean.root)


def test_noop_on_a_tree_git_made_reads_it_once_then_answers_from_files(
    tmp_path, _synced_template, run_qola
):
    """A checkout git made (no memory of qola's): the first checkout reads it with git,
    moves and fetches nothing, and from then on the no-op needs no git."""
    root = tmp_path / "project"
    shutil.copytree(_synced_template, root, symlinks=True)
    lib = root / "3rdparty" / "lib"
    assert declined(["checkout"], root)
    def memory(key: str) -> bool:  # what qola remembers of a commit's gitlinks
        return "/qola/commits/" in key or key.endswith(("/qola/", "/qola/commits/"))

    before = {k: v for k, v in snapshot(lib).items() if not memory(k)}
    first = run_qola("checkout", "-v", cwd=root)
    assert first.exit_code == 0, first.stderr
    assert first.stdout.endswith(" up to date\n")
    commands = [f" {command} " for command in ran(first.stderr)]
    assert commands
    assert not [c for c in commands if " fetch " in c or " checkout " in c], commands
    after = {k: v for k, v in snapshot(lib).items() if not memory(k)}
    assert after == before
    assert not declined(["checkout"], root)


def test_noop_steps_aside_when_a_dependency_needs_work(behind_pin):
    before = snapshot(behind_pin.root)
    assert declined(["checkout"], behind_pin.root)
    assert snapshot(behind_pin.root) == before


def test_noop_steps_aside_when_a_nested_submodule_moved(pinned_clean, upstream):
    git(pinned_clean.nested, "fetch", "-q", str(upstream.nested), upstream.nested_v1)
    git(pinned_clean.nested, "checkout", "-q", "--detach", upstream.nested_v1)
    assert declined(["checkout"], pinned_clean.root)


def test_noop_steps_aside_for_an_abbreviated_legacy_pin(pinned_clean):
    text = pinned_clean.manifest.read_text()
    sha = git(pinned_clean.lib, "rev-parse", "HEAD")
    pinned_clean.manifest.write_text(text.replace(sha, sha[:10]))
    assert declined(["checkout"], pinned_clean.root)


def test_console_script_and_module_answer_the_noop(pinned_clean):
    for command in ([sys.executable, "-m", "qola", "checkout"],):
        proc = subprocess.run(
            command, cwd=pinned_clean.root, capture_output=True, text=True, check=False,
            env=environment(),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.endswith("up to date\n")


# -- the no-op's stamp: the second no-op reads neither the manifest nor the dependencies' files
# -- beyond what the stamp lists, and any change to those makes it look again.


def stamps(project) -> list[Path]:
    return sorted(store.noop_stamps(project.root / ".git").glob("*.stamp"))


def test_second_noop_answers_from_its_stamp_without_loading_the_manifest(pinned_clean, run_qola):
    first = as_cmake_runs_it("checkout", cwd=pinned_clean.root)
    assert split_probe(first.stderr)[1] == "qola.manifest"
    assert len(stamps(pinned_clean)) == 1
    second = as_cmake_runs_it("checkout", cwd=pinned_clean.root)
    assert split_probe(second.stderr) == ("", "")  # nothing heavy loaded at all
    full = run_qola("checkout", cwd=pinned_clean.root)
    assert first.stdout == second.stdout == full.stdout
    assert second.returncode == 0


def _move_lib(p, u):
    git(p.lib, "commit", "-q", "--allow-empty", "-m", "a commit of my own")


def _move_nested(p, u):
    git(p.nested, "fetch", "-q", str(u.nested), u.nested_v1)
    git(p.nested, "checkout", "-q", "--detach", u.nested_v1)


def _repin(p, u):
    p.set_pin(u.lib_v2, u.lib_tip)


def _add_patches(p, u):
    (p.root / "patches").mkdir()
    (p.root / "patches" / "0001-x.patch").write_text("not applied yet\n")
    p.manifest.write_text(p.manifest.read_text() + 'patches = "patches"\n')


def _remove_nested(p, u):
    shutil.rmtree(p.nested)
    p.nested.mkdir()


def _remove_index(p, u):
    (p.lib / ".git" / "index").unlink()  # `rm .git/index`, the usual cure for a corrupt one


def _remove_nested_index(p, u):
    (p.lib / ".git" / "modules" / "extern" / "nested" / "index").unlink()


def _branch_checkout(p, u):
    git(p.lib, "checkout", "-q", "-B", "work")  # at the pin, but on a branch now


@pytest.mark.parametrize(
    "change",
    [_move_lib, _move_nested, _repin, _add_patches, _remove_nested, _remove_index,
     _remove_nested_index],
    ids=["dependency-moved", "nested-moved", "manifest-repinned", "patches-added",
         "nested-emptied", "index-removed", "nested-index-removed"],
)  # fmt: skip
def test_a_stamp_never_answers_for_a_changed_tree(pinned_clean, upstream, change):
    assert not declined(["checkout"], pinned_clean.root)  # answered, and stamped
    assert stamps(pinned_clean)
    change(pinned_clean, upstream)
    before = snapshot(pinned_clean.root)
    assert declined(["checkout"], pinned_clean.root)
    assert snapshot(pinned_clean.root) == before


def test_a_branch_at_the_pin_is_answered_and_stamped_until_the_branch_moves(
    pinned_clean, upstream, run_qola
):
    """A tree `git submodule add` or `update` made sits on a branch at the pin: its stamp
    watches the branch's ref, so a commit on the branch (HEAD's file unchanged) voids it."""
    _branch_checkout(pinned_clean, upstream)
    fast = as_cmake_runs_it("checkout", cwd=pinned_clean.root)
    assert fast.stdout == run_qola("checkout", cwd=pinned_clean.root).stdout
    assert stamps(pinned_clean)
    assert split_probe(as_cmake_runs_it("checkout", cwd=pinned_clean.root).stderr)[1] == ""
    head = (pinned_clean.lib / ".git" / "HEAD").read_bytes()
    git(pinned_clean.lib, "commit", "-q", "--allow-empty", "-m", "a commit on the branch")
    assert (pinned_clean.lib / ".git" / "HEAD").read_bytes() == head
    before = snapshot(pinned_clean.root)
    assert declined(["checkout"], pinned_clean.root)
    assert snapshot(pinned_clean.root) == before


def test_a_branch_moved_by_pack_refs_or_a_loose_ref_is_seen(pinned_clean, upstream):
    """The branch's SHA moves from its loose file to packed-refs and back: each read is
    noted, so a stamp holds only while the branch names the pin."""
    _branch_checkout(pinned_clean, upstream)
    git(pinned_clean.lib, "pack-refs", "--all")
    assert not declined(["checkout"], pinned_clean.root)
    assert stamps(pinned_clean)
    other = git(pinned_clean.lib, "commit-tree", "-m", "another", "HEAD^{tree}")
    git(pinned_clean.lib, "update-ref", "refs/heads/work", other)  # a loose ref again
    assert declined(["checkout"], pinned_clean.root)


def test_a_stamp_follows_overrides_and_the_cmake_file(pinned_clean, tmp_path, monkeypatch):
    out = tmp_path / "results.cmake"
    assert not declined(["checkout", "--cmake-out", str(out)], pinned_clean.root)
    written = out.read_text()
    out.unlink()  # the stamp lists the CMake file: gone, it is written again, the same
    assert not declined(["checkout", "--cmake-out", str(out)], pinned_clean.root)
    assert out.read_text() == written
    elsewhere = tmp_path / "my-lib"
    elsewhere.mkdir()
    monkeypatch.setenv("QOLA_SOURCE_DIR_LIB", str(elsewhere))
    fast = as_cmake_runs_it("checkout", "--cmake-out", str(out), cwd=pinned_clean.root)
    assert f"overridden by {elsewhere}" in fast.stdout
    assert str(elsewhere) in out.read_text()


def test_a_broken_or_unwritable_stamp_is_only_slower(pinned_clean, run_qola):
    full = run_qola("checkout", cwd=pinned_clean.root).stdout
    assert as_cmake_runs_it("checkout", cwd=pinned_clean.root).stdout == full
    [stamp] = stamps(pinned_clean)
    stamp.write_text("{not a stamp")
    answer = as_cmake_runs_it("checkout", cwd=pinned_clean.root)
    assert (answer.stdout, split_probe(answer.stderr)[1]) == (full, "qola.manifest")
    stamp.unlink()
    stamp.parent.rmdir()
    # A file where the stamp folder should be (root ignores permissions, so not a chmod).
    stamp.parent.write_text("a file where the stamp folder should be\n")
    answer = as_cmake_runs_it("checkout", cwd=pinned_clean.root)
    assert (answer.returncode, answer.stdout) == (0, full)
    assert stamp.parent.read_text().startswith("a file")


def test_a_relative_override_is_resolved_before_the_stamp_compares_it(pinned_clean, tmp_path):
    for where in ("one", "two"):
        (tmp_path / where / "my-lib").mkdir(parents=True)
    env = environment({"QOLA_SOURCE_DIR_LIB": "my-lib"})
    manifest = str(pinned_clean.manifest)
    for where in ("one", "two", "one"):
        proc = subprocess.run(
            [sys.executable, "-m", "qola.cli", "checkout", "-m", manifest],
            cwd=tmp_path / where, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert proc.stdout.endswith(f"overridden by {tmp_path / where / 'my-lib'}\n")


def test_a_stamp_follows_the_commits_submodules_not_an_edited_gitmodules(pinned_clean, upstream):
    # The work tree's .gitmodules no longer names the nested submodule (an uncommitted edit):
    # the commit still records it, so the no-op must keep watching it.
    (pinned_clean.lib / ".gitmodules").write_text("")
    assert not declined(["checkout"], pinned_clean.root)  # answered, and stamped
    git(pinned_clean.nested, "commit", "-q", "--allow-empty", "-m", "moved")
    assert declined(["checkout"], pinned_clean.root)


def test_a_dependency_moved_while_the_noop_looks_gets_no_stamp(
    pinned_clean, upstream, run_qola, monkeypatch
):
    """Another build folder's checkout lands between the stamp's first read and the look."""
    from qola.sync import observe as observe_module

    git(pinned_clean.lib, "commit", "-q", "--allow-empty", "-m", "Y")
    moved = head(pinned_clean.lib)
    pinned_clean.set_pin(upstream.lib_v2, moved)
    assert run_qola("checkout", cwd=pinned_clean.root).exit_code == 0  # remembers Y's gitlinks
    git(pinned_clean.lib, "checkout", "-q", "--detach", upstream.lib_v2)  # back at X

    real = observe_module.observe

    def other_run_lands_first(*args, **kwargs):
        git(pinned_clean.lib, "checkout", "-q", "--detach", moved)
        monkeypatch.setattr(observe_module, "observe", real)
        return real(*args, **kwargs)

    monkeypatch.setattr(observe_module, "observe", other_run_lands_first)
    assert not declined(["checkout"], pinned_clean.root)  # at the pin when looked at
    monkeypatch.setattr(observe_module, "observe", real)
    git(pinned_clean.lib, "checkout", "-q", "--detach", upstream.lib_v2)  # X again
    assert declined(["checkout"], pinned_clean.root)  # no stamp may vouch for X


def test_a_dependency_folder_turned_into_a_symlink_out_of_the_root_is_seen(pinned_clean, tmp_path):
    assert not declined(["checkout"], pinned_clean.root)  # answered, and stamped
    outside = tmp_path / "outside"
    outside.mkdir()
    (pinned_clean.root / "3rdparty").rename(outside / "3rdparty")
    (pinned_clean.root / "3rdparty").symlink_to(outside / "3rdparty")
    assert declined(["checkout"], pinned_clean.root)  # the full command refuses it (exit 2)


def test_another_qola_never_answers_from_this_ones_stamp(pinned_clean, tmp_path):
    import qola

    copy = tmp_path / "other" / "qola"
    shutil.copytree(Path(qola.__file__).parent, copy)
    assert split_probe(as_cmake_runs_it("checkout", cwd=pinned_clean.root).stderr)[1] == (
        "qola.manifest"
    )
    assert split_probe(as_cmake_runs_it("checkout", cwd=pinned_clean.root).stderr)[1] == ""
    other = subprocess.run(
        [sys.executable, "-c", PROBE, "checkout"],
        cwd=pinned_clean.root, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(copy.parent)},
    )  # fmt: skip
    assert other.returncode == 0 and other.stdout.endswith("up to date\n")
    assert split_probe(other.stderr)[1] == "qola.manifest"  # it looked for itself


def test_the_root_git_config_is_part_of_the_stamp_when_gitmodules_needs_it(pinned_clean):
    # Relative submodule URLs are resolved against the root's remote.origin.url.
    (pinned_clean.root / ".gitmodules").write_text(
        '[submodule "other"]\n\tpath = other\n\turl = ../other.git\n'
    )
    as_cmake_runs_it("checkout", cwd=pinned_clean.root)
    assert split_probe(as_cmake_runs_it("checkout", cwd=pinned_clean.root).stderr)[1] == ""
    git(pinned_clean.root, "remote", "add", "origin", "https://example.invalid/org/root.git")
    again = as_cmake_runs_it("checkout", cwd=pinned_clean.root)
    assert split_probe(again.stderr)[1] == "qola.manifest"


def test_the_stamp_lists_only_what_the_look_read(pinned_clean):
    # Without a .gitmodules nothing reads the root's remote URL: changing it changes nothing.
    as_cmake_runs_it("checkout", cwd=pinned_clean.root)
    git(pinned_clean.root, "remote", "add", "origin", "https://example.invalid/org/root.git")
    assert split_probe(as_cmake_runs_it("checkout", cwd=pinned_clean.root).stderr)[1] == ""


def test_shell_completion_is_left_to_click(pinned_clean, monkeypatch):
    monkeypatch.setenv("_QOLA_COMPLETE", "bash_complete")
    assert declined(["checkout"], pinned_clean.root)


def test_a_commit_in_the_root_leaves_the_stamp_alone(pinned_clean):
    """The root's remote URL is read for relative submodule URLs, not its HEAD or branch:
    committing in the project is no change to the dependencies."""
    (pinned_clean.root / ".gitmodules").write_text(
        '[submodule "other"]\n\tpath = other\n\turl = ../other.git\n'
    )
    git(pinned_clean.root, "add", ".gitmodules")
    git(pinned_clean.root, "commit", "-q", "-m", "gitmodules")
    as_cmake_runs_it("checkout", cwd=pinned_clean.root)
    git(pinned_clean.root, "commit", "-q", "--allow-empty", "-m", "work in the project")
    again = as_cmake_runs_it("checkout", cwd=pinned_clean.root)
    assert (again.returncode, split_probe(again.stderr)[1]) == (0, "")


def test_an_edited_module_in_a_sub_package_never_answers_from_an_older_stamp(
    pinned_clean, tmp_path
):
    import qola

    copy = tmp_path / "edited" / "qola"
    shutil.copytree(Path(qola.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))

    def probe() -> str:
        ran_ = subprocess.run(
            [sys.executable, "-c", PROBE, "checkout"],
            cwd=pinned_clean.root, capture_output=True, text=True, check=False,
            env={**os.environ, "PYTHONPATH": str(copy.parent)},
        )  # fmt: skip
        assert ran_.returncode == 0 and ran_.stdout.endswith("up to date\n"), ran_.stderr
        return split_probe(ran_.stderr)[1]

    assert probe() == "qola.manifest"
    assert probe() == ""  # answered from the stamp
    module = copy / "commands" / "checkout.py"
    module.write_text(module.read_text() + "\n# an edit\n")
    assert probe() == "qola.manifest"  # it looked for itself again


@pytest.mark.parametrize("where", ["lib", "nested"])
def test_a_lfsconfig_in_a_dependency_sends_every_fast_path_to_the_full_command(
    pinned_clean, where
):
    """Whether git-lfs may read a .lfsconfig (the pinned commit's own, and your config
    running git-lfs) only git can tell: neither the no-op nor a stamp answers then."""
    assert not declined(["checkout"], pinned_clean.root)
    assert stamps(pinned_clean)
    tree = pinned_clean.lib if where == "lib" else pinned_clean.lib / "extern" / "nested"
    (tree / ".lfsconfig").write_text('[lfs]\n\turl = "http://127.0.0.1:9/lfs"\n')
    before = snapshot(pinned_clean.root)
    assert declined(["checkout"], pinned_clean.root)  # the stamp no longer holds
    assert snapshot(pinned_clean.root) == before
    for stamp_file in stamps(pinned_clean):
        stamp_file.unlink()
    before = snapshot(pinned_clean.root)
    assert declined(["checkout"], pinned_clean.root)  # nor does a fresh look answer
    assert snapshot(pinned_clean.root) == before


@pytest.mark.parametrize("override", [False, True])
def test_the_noop_colours_its_lines_as_the_full_command_does(
    pinned_clean, run_qola, tmp_path, override
):
    """The line's words and colour have one home (qola/sync/report.py): the no-op from files and
    from its stamp print exactly what the full command prints, colours included."""
    extra = {"FORCE_COLOR": "1"}
    if override:  # the folder's name would fool a reader of the printed line
        (tmp_path / "x up to date").mkdir()
        extra["QOLA_SOURCE_DIR_LIB"] = str(tmp_path / "x up to date")
    full = run_qola("checkout", cwd=pinned_clean.root, env=extra).stdout
    colour = "\x1b[33m" if override else "\x1b[32m"
    assert colour in full
    for _ in ("from files", "from its stamp"):
        proc = subprocess.run(
            [sys.executable, "-m", "qola", "checkout"], cwd=pinned_clean.root,
            env=environment(extra), capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert (proc.returncode, proc.stdout) == (0, full)
    assert stamps(pinned_clean)  # the second one answered from the stamp


# What a stamped no-op may import beyond what `python -S -m` itself loads: os and sys come
# with the interpreter; these few modules of qola's and of the standard library do the work.
# typing, pathlib, re (and so json and enum), hashlib, threading: each alone would cost the
# no-op more than its own work does.
STAMPED_NOOP_IMPORTS = {
    "__future__", "_contextvars", "contextvars", "math", "_sha256", "_sha2",
    "qola", "qola.base", "qola.base.colour", "qola.base.digest", "qola.base.platforms",
    "qola.commands", "qola.commands.options", "qola.noop", "qola.repo", "qola.repo.gitpaths",
    "qola.repo.noop_stamp", "qola.repo.trail", "qola.sync", "qola.sync.report",
}  # fmt: skip

LOADED = """
import atexit, runpy, sys
floor = set(sys.modules)
atexit.register(lambda: sys.stderr.write("loaded: " + " ".join(sorted(set(sys.modules) - floor))))
sys.argv = ["qola.cli", *sys.argv[1:]]
if sys.argv[1:]:
    runpy.run_module("qola.cli", run_name="__main__", alter_sys=True)
"""


def test_a_stamped_noop_imports_only_what_answering_needs(pinned_clean, run_qola):
    """Run without site (-S): an editable install's import hook would load pathlib and re
    before qola starts, hiding what qola itself imports."""
    full = run_qola("checkout", cwd=pinned_clean.root).stdout

    def modules(*args: str) -> tuple[str, set[str]]:
        proc = subprocess.run(
            [sys.executable, "-S", "-c", LOADED, *args], cwd=pinned_clean.root,
            capture_output=True, text=True, check=False, env=environment(),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return proc.stdout, set(proc.stderr.rpartition("loaded: ")[2].split())

    # The stamp written by a run with site-packages (on Python 3.10 the manifest needs
    # tomli from there); the stamped run needs none of them.
    assert as_cmake_runs_it("checkout", cwd=pinned_clean.root).stdout == full
    out, loaded = modules("checkout")
    assert out == full
    assert loaded - modules()[1] <= STAMPED_NOOP_IMPORTS, sorted(loaded - STAMPED_NOOP_IMPORTS)
    assert "qola.repo.trail" in loaded  # it did answer from its stamp, not step aside early


def test_a_fifo_in_place_of_the_stamp_is_only_slower(pinned_clean, run_qola):
    """Opened without blocking and read only when it is a plain file: a FIFO planted where
    the stamp goes does not stop the configure."""
    full = run_qola("checkout", cwd=pinned_clean.root).stdout
    assert as_cmake_runs_it("checkout", cwd=pinned_clean.root).stdout == full
    [stamp] = stamps(pinned_clean)
    stamp.unlink()
    os.mkfifo(stamp)
    answer = subprocess.run(
        [sys.executable, "-m", "qola.cli", "checkout"], cwd=pinned_clean.root,
        capture_output=True, text=True, check=False, env=environment(), timeout=60,
    )  # fmt: skip
    assert (answer.returncode, answer.stdout) == (0, full)

