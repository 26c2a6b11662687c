"""`qola lock NAME URL [GIT_TAG]`: a FetchContent declaration pinned as its GIT_TAG names it
(real upstream repositories, the command line run in-process); what it refuses changes
nothing on disk."""

from __future__ import annotations

import json
import os
import sys
from importlib import metadata
from pathlib import Path

import procs
import pytest
from conftest import Upstream
from repos import git, head, init_repo, snapshot


@pytest.fixture
def app(tmp_path: Path) -> Path:
    """A project root (a git repository) with no manifest yet."""
    root = init_repo(tmp_path / "app")
    (root / "CMakeLists.txt").write_text("project(app NONE)\n")
    git(root, "add", "CMakeLists.txt")
    git(root, "commit", "-q", "-m", "app")
    return root


def table(name: str, url: Path, commit: str, label: str = "") -> str:
    return f'[deps.{name}]\npath = "3rdparty/{name}"\nurl = "{url}"\ncommit = "{commit}"\n{label}'


@pytest.mark.parametrize(
    ("git_tag", "commit", "label"),
    [
        ("v2.0", "lib_v2", 'tag = "v2.0"\n'),  # an annotated tag: its commit
        ("refs/tags/v2.0", "lib_v2", 'tag = "v2.0"\n'),
        ("main", "lib_tip", 'track = "main"\n'),  # a branch: its tip, followed
        ("side", "lib_v3", 'track = "side"\n'),
        ("origin/side", "lib_v3", 'track = "side"\n'),  # as git checks out in FetchContent's clone
        ("LIB_V2", "lib_v2", 'tag = "v2.0"\n'),  # a commit SHA (upper case): the tag labels it
        ("LIB_TIP7", "lib_tip", ""),  # abbreviated, the tip of main
    ],
)
def test_lock_pins_git_tag_as_git_reads_it(app, upstream: Upstream, run_qola, git_tag, commit,
                                           label) -> None:  # fmt: skip
    sha = getattr(upstream, commit)
    if git_tag == "LIB_V2":
        git_tag = upstream.lib_v2.upper()
    elif git_tag == "LIB_TIP7":
        git_tag = upstream.lib_tip[:7]

    result = run_qola("lock", "lib", str(upstream.lib), git_tag, cwd=app)

    assert result.exit_code == 0, result.stderr
    assert (app / "qola.toml").read_text() == table("lib", upstream.lib, sha, label)
    assert head(app / "3rdparty" / "lib") == sha
    assert (app / ".gitignore").read_text() == "/3rdparty/lib/\n"


def test_lock_of_a_name_pinned_but_for_case_writes_nothing(app, upstream: Upstream,
                                                            run_qola) -> None:  # fmt: skip
    (app / "qola.toml").write_text(table("lib", upstream.lib, upstream.lib_v2, 'tag = "v2.0"\n'))
    before = snapshot(app)

    for extra in ((), ("--check",)):
        result = run_qola("lock", "LIB", str(upstream.lib), "main", *extra, cwd=app)

        assert result.exit_code == 0, result.stderr
        assert result.stdout == (f"LIB: pinned at {upstream.lib_v2[:12]} (tag v2.0) in "
                                 f"{app / 'qola.toml'} already; `qola bump lib --to REF` moves "
                                 "it\n")  # fmt: skip
        assert snapshot(app) == before


def test_lock_check_of_an_unpinned_declaration_fails_naming_it_and_the_lock_command(
    app, upstream: Upstream, run_qola
) -> None:
    (app / "qola.toml").write_text(table("other", upstream.lib, upstream.lib_v2))
    before = snapshot(app)

    result = run_qola("lock", "fmt", str(upstream.lib), "v2.0", "--check", cwd=app)

    assert result.exit_code == 2
    manifest = app / "qola.toml"
    assert result.stderr.startswith(
        f"qola: fmt: FetchContent_Declare(fmt GIT_REPOSITORY {upstream.lib} GIT_TAG v2.0) is "
        f"not pinned in {manifest}; nothing was written\nhint: pin it at the commit GIT_TAG "
        "v2.0 names now: "
    )
    assert result.stderr.rstrip().endswith(f"lock fmt {upstream.lib} v2.0 -m {manifest}")
    assert snapshot(app) == before


@pytest.mark.parametrize(
    ("git_tag", "problem", "hint"),
    [
        ("v2.1", "GIT_TAG v2.1 is no tag, branch or commit SHA of {url}; nothing was written",
         "did you mean the tag v2.0? Write it in GIT_TAG"),
        ("abcdef0", "GIT_TAG abcdef0 is an abbreviated commit SHA that no tag or branch of {url} "
         "begins with; a remote resolves no abbreviation; nothing was written",
         "write the commit's full SHA in GIT_TAG (`git rev-parse abcdef0` in a clone prints "
         "it), or lock that SHA"),
        (None, "declares no GIT_TAG, and FetchContent then checks out master, which {url} does "
         "not have; nothing was written",
         "give the declaration a GIT_TAG (a tag, a branch or a commit SHA)"),
    ],
)
def test_lock_of_a_git_tag_the_remote_lacks_writes_nothing(
    app, upstream: Upstream, run_qola, git_tag, problem, hint
) -> None:
    before = snapshot(app)

    result = run_qola("lock", "lib", str(upstream.lib), *([git_tag] if git_tag else []), cwd=app)

    assert result.exit_code == 2
    assert result.stderr == f"qola: lib: {problem.format(url=upstream.lib)}\nhint: {hint}\n"
    assert snapshot(app) == before


def test_lock_of_a_name_no_manifest_can_hold_writes_nothing(app, upstream: Upstream,
                                                             run_qola) -> None:  # fmt: skip
    before = snapshot(app)

    result = run_qola("lock", "boost.cmake", str(upstream.lib), "v2.0", cwd=app)

    assert result.exit_code == 2
    assert "'boost.cmake' is not a usable dependency name" in result.stderr
    assert snapshot(app) == before


def test_a_project_of_its_own_in_a_repository_locks_beside_its_manifest(
    app, upstream: Upstream, run_qola
) -> None:
    """Two CMake projects of one repository, each with its qola.toml, pinning one library at
    different commits: each gets its own folder (at the root's top, each configure would move
    the other project's checkout)."""
    for project, tag, sha in (("one", "v2.0", upstream.lib_v2), ("two", "main", upstream.lib_tip)):
        (app / project).mkdir()
        manifest = app / project / "qola.toml"
        result = run_qola("lock", "lib", str(upstream.lib), tag, "-m", str(manifest), cwd=app)
        assert result.exit_code == 0, result.stderr
        assert f'path = "{project}/3rdparty/lib"\n' in manifest.read_text()
        assert head(app / project / "3rdparty" / "lib") == sha
    assert (app / ".gitignore").read_text() == "/one/3rdparty/lib/\n/two/3rdparty/lib/\n"
    for project in ("one", "two"):
        assert run_qola("verify", "-m", str(app / project / "qola.toml")).exit_code == 0


def test_locks_run_at_once_each_write_their_pin(app, upstream: Upstream) -> None:
    """Build folders configured at once (an IDE's Debug and Release), each locking: every
    lock reads the manifest again when another wrote it meanwhile."""
    names = [f"lib{n}" for n in range(4)]
    manifest = str(app / "qola.toml")
    started = [procs.start("lock", name, str(upstream.lib), "v2.0", "--no-checkout", "-m",
                           manifest) for name in names]  # fmt: skip
    for proc in started:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    text = (app / "qola.toml").read_text()
    for name in names:
        assert f'[deps.{name}]\npath = "3rdparty/{name}"\n' in text
    ignored = (app / ".gitignore").read_text().splitlines()
    assert sorted(ignored) == [f"/3rdparty/{name}/" for name in names]


def test_a_vendored_copy_in_the_way_is_refused_before_anything_is_written(
    app, upstream: Upstream, run_qola
) -> None:
    """The project keeps its own copy at 3rdparty/lib: a lock would write the pin, ignore the
    project's own files, and then fail to check out."""
    (app / "3rdparty" / "lib").mkdir(parents=True)
    (app / "3rdparty" / "lib" / "lib.c").write_text("/* vendored */\n")
    git(app, "add", "3rdparty")
    git(app, "commit", "-q", "-m", "vendored lib")
    before = snapshot(app)

    result = run_qola("lock", "lib", str(upstream.lib), "v2.0", cwd=app)

    assert result.exit_code == 4
    manifest = app / "qola.toml"
    problem, hint = result.stderr.splitlines()
    assert problem == (
        f"qola: lib: {app / '3rdparty' / 'lib'} holds files and is not a git repository: the "
        "checkout would not put lib there; nothing was written"
    )
    assert hint.startswith("hint: choose another folder for it, once: ")
    assert hint.endswith(f"lock lib {upstream.lib} v2.0 --path P -m {manifest} (P: a folder "
                         "below the root)")  # fmt: skip
    assert snapshot(app) == before
    hinted = ["lock", "lib", str(upstream.lib), "v2.0", "--path", "ext/lib", "-m", str(manifest)]
    again = run_qola(*hinted, cwd=app)
    assert again.exit_code == 0, again.stderr
    assert head(app / "ext" / "lib") == upstream.lib_v2


def test_the_lock_hint_of_an_editable_install_is_plain_qola(app, upstream: Upstream) -> None:
    """Under CMake, an editable install's qola runs with its checkout on PYTHONPATH (the
    module is the checkout's): the hint still spells the `qola` beside its Python, which
    runs the same code, not `PYTHONPATH=… python -m qola`."""
    source = str(procs.SOURCE)
    said = [json.loads(found.read_text("direct_url.json") or "{}")
            for found in metadata.distributions(name="qola")]  # fmt: skip
    assert {"dir_info": {"editable": True}, "url": Path(source).as_uri()} in said, (
        "the test command installs this checkout in editable mode")  # fmt: skip
    bin_dir = os.path.dirname(sys.executable)
    env = {"PYTHONPATH": source, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    manifest = app / "qola.toml"
    result = procs.run("lock", "lib", str(upstream.lib), "v2.0", "--check", "-m", str(manifest),
                       env=env)  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.rstrip().endswith(
        f"pin it at the commit GIT_TAG v2.0 names now: qola lock lib {upstream.lib} v2.0 -m "
        f"{manifest}"
    )


def test_a_lock_waits_for_the_roots_lock_as_checkout_does_and_times_out(app, upstream) -> None:
    """Another build folder's checkout holds the root's lock: the lock says it waits, and
    --lock-timeout (env QOLA_LOCK_TIMEOUT) bounds the wait; nothing is written."""
    holder = procs.hold_lock(app)
    try:
        before = snapshot(app)
        proc = procs.run("lock", "lib", str(upstream.lib), "v2.0", "--no-checkout", "-m",
                         str(app / "qola.toml"), env={"QOLA_LOCK_TIMEOUT": "0.5"})  # fmt: skip
    finally:
        holder.kill()
        holder.wait()
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0].startswith(f"qola: waiting for the lock on {app} (held by pid ")
    assert "could not take the lock" in lines[1] and "within 0.5 s" in lines[1]
    assert lines[2] == "hint: wait for that run to finish, or raise --lock-timeout (env " \
                       "QOLA_LOCK_TIMEOUT)"
    assert snapshot(app) == before
