"""Commands named by a repository's own config never run; the user's own config still does.

The dependency (and its nested submodule) belong to another uid and qola runs as root
under the default `scoped` shim: exactly the case git's ownership check exists for.
Each hostile command would leave a file named after it in `marks`.
"""

from __future__ import annotations

import http.server
import json
import os
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import procs
import pytest
from repos import commit_file, git, init_repo, snapshot

from qola.gitrun.git import Runner

FOREIGN_UID = 12345

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: chown to another uid")


def head(repo: Path) -> str:
    """HEAD of a repository another uid owns (read as its owner would)."""
    return git(repo, "-c", "safe.directory=*", "rev-parse", "HEAD")


def chown_tree(path: Path) -> None:
    subprocess.run(["chown", "-R", f"{FOREIGN_UID}:{FOREIGN_UID}", str(path)], check=True)


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    folder = tmp_path / "marks"
    folder.mkdir()
    return folder


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.delenv("SUDO_UID", raising=False)
    return folder


def leave(marks: Path, name: str, then: str = "cat") -> str:
    """A shell command that leaves marks/name, then does `then`."""
    return f"touch {shlex.quote(str(marks / name))}; {then}"


def configure(repo_gitdir: Path, settings: dict[str, str]) -> None:
    for key, value in settings.items():
        git(repo_gitdir, "config", "--file", str(repo_gitdir / "config"), key, value)


def hostile(gitdir: Path, marks: Path, prefix: str) -> None:
    """Commands of every kind in a repository's own config, and attributes that use them."""
    configure(
        gitdir,
        {
            "filter.evil.clean": leave(marks, f"{prefix}-clean"),
            "filter.evil.smudge": leave(marks, f"{prefix}-smudge"),
            "filter.evil.required": "true",
            "filter.evilproc.process": leave(marks, f"{prefix}-process", "exit 1"),
            "diff.evil.textconv": leave(marks, f"{prefix}-textconv"),
            "credential.helper": "!" + leave(marks, f"{prefix}-credential", "true"),
            "core.pager": leave(marks, f"{prefix}-pager"),
            "core.alternateRefsCommand": leave(marks, f"{prefix}-alternates", "true"),
            "protocol.ext.allow": "always",
        },
    )
    (gitdir / "info").mkdir(exist_ok=True)
    (gitdir / "info" / "attributes").write_text(
        "*.txt filter=evil diff=evil\nREADME filter=evilproc\n"
    )


@pytest.fixture
def hostile_at_v1(pinned_clean, upstream, marks, run_qola):
    """lib and its nested submodule at v1, their configs full of commands, owned by another
    uid; the manifest pins v2, where lib.txt appears and the nested submodule moves."""
    pinned_clean.set_pin(upstream.lib_v2, upstream.lib_v1)
    assert run_qola("checkout", "-m", str(pinned_clean.manifest)).exit_code == 0
    pinned_clean.set_pin(upstream.lib_v1, upstream.lib_v2)
    lib_gitdir = pinned_clean.lib / ".git"
    hostile(lib_gitdir, marks, "lib")
    hostile(lib_gitdir / "modules" / "extern" / "nested", marks, "nested")
    configure(lib_gitdir, {"submodule.extern/nested.update": "!" + leave(marks, "update", "true")})
    chown_tree(pinned_clean.root)
    return pinned_clean


def test_checkout_and_verify_run_no_command_from_a_dependencys_config(
    hostile_at_v1, upstream, marks, private_tmp
):
    project = hostile_at_v1
    proc = procs.run("checkout", "-m", str(project.manifest))
    assert proc.returncode == 0, proc.stderr
    assert head(project.lib) == upstream.lib_v2
    assert head(project.nested) == upstream.nested_v2  # checked out, not the update command
    # Every file's stat changes, so that status has to read (and clean) them again.
    for folder, _dirs, files in os.walk(project.lib):
        for name in files:
            os.utime(os.path.join(folder, name), (1, 1))
    proc = procs.run("verify", "-m", str(project.manifest))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in marks.iterdir()) == []
    assert list(private_tmp.iterdir()) == []


def test_a_global_filter_still_runs_even_where_the_repository_redefines_it(
    hostile_at_v1, upstream, marks, private_tmp, tmp_path, monkeypatch
):
    """The user's LFS-style filter (global config) keeps working; the repository's own
    definition of the same filter does not run."""
    project = hostile_at_v1
    lib_gitdir = project.lib / ".git"
    (lib_gitdir / "info" / "attributes").write_text("*.txt filter=lfs\n")
    configure(lib_gitdir, {"filter.lfs.smudge": leave(marks, "lib-lfs-smudge"),
                           "filter.lfs.required": "false"})  # fmt: skip
    chown_tree(lib_gitdir)
    user_config = tmp_path / "user.gitconfig"
    user_config.write_text(
        f"[include]\n\tpath = {os.environ['GIT_CONFIG_GLOBAL']}\n"
        '[filter "lfs"]\n'
        f"\tsmudge = \"{leave(marks, 'global-smudge')}\"\n"
        f"\tclean = \"{leave(marks, 'global-clean')}\"\n"
        "\trequired = true\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user_config))
    proc = procs.run("checkout", "-m", str(project.manifest))
    assert proc.returncode == 0, proc.stderr
    assert (project.lib / "lib.txt").read_text() == "lib v2\n"
    assert sorted(p.name for p in marks.iterdir()) == ["global-smudge"]


def test_a_repositorys_textconv_and_pager_never_run_under_the_runner(pinned_clean, marks):
    """What `git log -p` would run: overridden (an empty textconv runs nothing, and the
    diff that needed it fails instead)."""
    hostile(pinned_clean.lib / ".git", marks, "lib")
    out = Runner().run(pinned_clean.lib, "log", "-p", "-2", "--", "lib.txt", check=False)
    assert "unable to read files to diff" in out.stderr
    assert sorted(p.name for p in marks.iterdir()) == []


class _Unauthorized(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="test"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def asks_for_credentials() -> Iterator[str]:
    """A loopback HTTP server that answers every request with 401: git asks its helpers."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Unauthorized)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/lib.git"
    finally:
        server.shutdown()
        server.server_close()


def test_a_repositorys_credential_helper_never_runs_and_the_users_still_does(
    behind_pin, marks, asks_for_credentials, tmp_path, monkeypatch, private_tmp
):
    hostile(behind_pin.lib / ".git", marks, "lib")
    chown_tree(behind_pin.root)
    user_config = tmp_path / "user.gitconfig"
    user_config.write_text(
        f"[include]\n\tpath = {os.environ['GIT_CONFIG_GLOBAL']}\n"
        f"[credential]\n\thelper = \"!{leave(marks, 'global-credential', 'true')}\"\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user_config))
    text = behind_pin.manifest.read_text()
    url = text.split('url = "', 1)[1].split('"', 1)[0]
    behind_pin.manifest.write_text(text.replace(url, asks_for_credentials))
    proc = procs.run("checkout", "-m", str(behind_pin.manifest))
    assert proc.returncode == 3, proc.stderr  # the server never lets anyone in
    assert sorted(p.name for p in marks.iterdir()) == ["global-credential"]


def test_an_upload_pack_command_in_a_repositorys_config_stops_the_run(
    behind_pin, marks, private_tmp
):
    """git takes the first remote.<name>.uploadpack: the command line cannot override it."""
    config = behind_pin.lib / ".git" / "config"
    configure(behind_pin.lib / ".git", {"remote.origin.uploadpack": leave(marks, "upload-pack")})
    chown_tree(behind_pin.root)
    before = snapshot(behind_pin.root)
    proc = procs.run("checkout", "-m", str(behind_pin.manifest))
    assert proc.returncode == 3
    assert (
        f"qola: lib: qola: {behind_pin.lib}: {config} sets remote.origin.uploadpack"
        not in proc.stderr
    )
    assert f"{config} sets remote.origin.uploadpack = " in proc.stderr
    assert "a command git would run when it fetches; qola runs no command from a " in proc.stderr
    assert (f"hint: if you trust it, remove it (git config --file {config} --unset-all "
            "remote.origin.uploadpack) and run again") in proc.stderr
    assert snapshot(behind_pin.root) == before
    assert list(marks.iterdir()) == []


def test_a_work_tree_elsewhere_in_a_repositorys_config_stops_the_run(
    behind_pin, tmp_path, private_tmp
):
    """core.worktree would make a checkout write its files into another folder."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    configure(behind_pin.lib / ".git", {"core.worktree": str(elsewhere)})
    proc = procs.run("checkout", "-m", str(behind_pin.manifest))
    # Read from the files before any git runs: not a repository git would take for the
    # dependency's (its work tree is elsewhere), so nothing is changed.
    assert proc.returncode == 4, proc.stderr
    assert "exists and is not a repository git accepts" in proc.stderr
    assert "core.worktree" in proc.stderr
    assert list(elsewhere.iterdir()) == []


def test_included_config_files_are_read_too(pinned_clean, marks, tmp_path):
    included = tmp_path / "included.gitconfig"
    included.write_text(f'[diff "evil"]\n\ttextconv = "{leave(marks, "included-textconv")}"\n')
    # A condition that holds here (git includes it); qola follows every include anyway.
    configure(pinned_clean.lib / ".git", {"includeIf.gitdir:**.path": str(included)})
    (pinned_clean.lib / ".git" / "info" / "attributes").write_text("*.txt diff=evil\n")
    runner = Runner()
    runner.run(pinned_clean.lib, "log", "-p", "-2", "--", "lib.txt", check=False)
    assert list(marks.iterdir()) == []
    # And the same Runner notices an included file changed between two calls.
    included.write_text(f'[diff "evil2"]\n\ttextconv = "{leave(marks, "changed")}"\n')
    (pinned_clean.lib / ".git" / "info" / "attributes").write_text("*.txt diff=evil2\n")
    runner.run(pinned_clean.lib, "log", "-p", "-2", "--", "lib.txt", check=False)
    assert list(marks.iterdir()) == []


def test_no_git_process_is_added_per_repository(pinned_clean, marks):
    hostile(pinned_clean.lib / ".git", marks, "lib")
    runner = Runner()
    runner.run(pinned_clean.lib, "status", "--porcelain")
    runner.run(pinned_clean.nested, "status", "--porcelain")
    assert runner.log == ["git status --porcelain", "git status --porcelain"]
    assert sys.modules.get("qola.gitrun.guard") is not None


def test_exec_lets_a_build_step_into_the_tree_but_not_run_its_commands(
    pinned_clean, marks, private_tmp
):
    """`qola exec` trusts the foreign tree for the build step's git: that git must not run
    the commands the tree's own config names either."""
    hostile(pinned_clean.lib / ".git", marks, "lib")
    chown_tree(pinned_clean.root)
    proc = procs.run(
        "exec", "-m", str(pinned_clean.manifest), "--",
        "git", "-C", str(pinned_clean.lib), "log", "-p", "-2", "--", "lib.txt",
    )  # fmt: skip
    assert "unable to read files to diff" in proc.stderr  # the textconv was emptied
    assert list(marks.iterdir()) == []
    proc = procs.run(
        "exec", "-m", str(pinned_clean.manifest), "--",
        "git", "-C", str(pinned_clean.lib), "rev-parse", "HEAD",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == head(pinned_clean.lib)
    assert list(private_tmp.iterdir()) == []


def test_verify_runs_git_beside_an_upload_pack_command_it_cannot_start(pinned_by_qola, marks):
    """An upload-pack command in the dependency's own config concerns a fetch: verify, which
    lets git use no transport at all, runs git there and passes (checkout, which would
    fetch, refuses it: test_an_upload_pack_command_in_a_repositorys_config_stops_the_run)."""
    configure(pinned_by_qola.lib / ".git", {"remote.origin.uploadpack": leave(marks, "up")})
    before = snapshot(pinned_by_qola.root)
    proc = procs.run("verify", "--format", "json", "-m", str(pinned_by_qola.manifest))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(marks.iterdir()) == []
    assert snapshot(pinned_by_qola.root) == before


def test_verify_judges_a_repository_it_will_not_run_git_in_from_its_files(
    pinned_by_qola, marks, tmp_path
):
    """A config git cannot list (it includes a folder): verify runs no git there, says so
    (`unsafe`, exit 1), and still says from the files that HEAD is at its pin; the nested
    submodule, which git cannot see initialised in a config it cannot read, is a
    `submodule` problem."""
    folder = tmp_path / "a-folder"
    folder.mkdir()
    sha = git(pinned_by_qola.lib, "rev-parse", "HEAD")
    configure(pinned_by_qola.lib / ".git", {"include.path": str(folder)})
    before = snapshot(pinned_by_qola.root)
    proc = procs.run("verify", "--format", "json", "-m", str(pinned_by_qola.manifest))
    assert proc.returncode == 1, proc.stderr
    [dep] = json.loads(proc.stdout)["deps"]
    assert [p["kind"] for p in dep["problems"]] == ["submodule", "unsafe"], dep["problems"]
    assert "extern/nested is not initialised in its parent's config" in (
        dep["problems"][0]["message"]
    )
    assert "git cannot read the repository's config: fatal: bad config line " in (
        dep["problems"][1]["message"]
    )
    assert dep["head"] == sha
    assert list(marks.iterdir()) == []
    assert snapshot(pinned_by_qola.root) == before


def plant_hidden_repository(dep: Path, marks: Path, name: str = "evil") -> Path:
    """A repository inside dep that dep's index records as a gitlink and .gitmodules does
    not list, with a clean filter of its own and a file git status must clean again."""
    planted = dep / name
    init_repo(planted)
    commit_file(planted, "a.txt", "hi\n")
    (planted / ".gitattributes").write_text("*.txt filter=evil\n")
    git(planted, "add", ".gitattributes")
    git(planted, "commit", "-q", "-m", "attributes")
    configure(planted / ".git", {"filter.evil.clean": leave(marks, f"{name}-clean")})
    os.utime(planted / "a.txt", (1, 1))  # stat-dirty: status has to run the clean filter
    sha = git(planted, "rev-parse", "HEAD")
    git(dep, "update-index", "--add", "--cacheinfo", f"160000,{sha},{name}")
    return planted


def test_verify_and_checkout_run_no_filter_of_a_repository_only_the_index_records(
    pinned_by_qola, upstream, marks, private_tmp
):
    """git status looks into every gitlink of the index, listed in .gitmodules or not: the
    config of a repository planted that way is overridden too (as root, foreign tree)."""
    project = pinned_by_qola
    plant_hidden_repository(project.lib, marks)
    chown_tree(project.root)
    proc = procs.run("verify", "-m", str(project.manifest))
    assert proc.returncode == 1, proc.stdout + proc.stderr  # a gitlink the pin lacks: dirty
    assert list(marks.iterdir()) == []
    project.set_pin(upstream.lib_v2, upstream.lib_v1)
    proc = procs.run("checkout", "-m", str(project.manifest))
    assert proc.returncode == 4, proc.stderr  # its local-work check ran git status too
    assert "uncommitted: 3rdparty/lib/evil" in proc.stderr
    assert list(marks.iterdir()) == []
    # And the planted filter is real: plain git runs it.
    git(project.lib, "-c", "safe.directory=*", "status", "--porcelain", "--ignore-submodules=none")
    assert [p.name for p in marks.iterdir()] == ["evil-clean"]


def test_exec_and_foreach_run_no_hook_and_no_fsmonitor_of_the_tree(
    pinned_by_qola, marks, private_tmp
):
    """What qola's own git never runs (hooks, core.fsmonitor), the build step's git does not
    run either: in a dependency, or in the root (the user's own hooks included)."""
    project = pinned_by_qola
    for gitdir in (project.lib / ".git", project.root / ".git"):
        name = gitdir.parent.name
        configure(gitdir, {"core.fsmonitor": leave(marks, f"{name}-fsmonitor", "exit 1")})
        hook = gitdir / "hooks" / "post-checkout"
        hook.parent.mkdir(exist_ok=True)
        hook.write_text(f"#!/bin/sh\n{leave(marks, f'{name}-post-checkout', 'true')}\n")
        hook.chmod(0o755)
    chown_tree(project.root)
    for repo in (project.lib, project.root):
        for command in (["status", "--porcelain"], ["checkout", "-q", "--detach", "HEAD"]):
            proc = procs.run("exec", "-m", str(project.manifest), "--",
                             "git", "-C", str(repo), *command)  # fmt: skip
            assert proc.returncode == 0, proc.stderr
    # foreach runs CMD in each dependency under the same shim, with the same environment.
    proc = procs.run("foreach", "-m", str(project.manifest), "--",
                     "git", "checkout", "-q", "--detach", "HEAD")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert list(marks.iterdir()) == []
    # Both are real: git run by hand (trusting the tree) runs them.
    git(project.lib, "-c", "safe.directory=*", "checkout", "-q", "--detach", "HEAD")
    assert sorted(p.name for p in marks.iterdir()) == ["lib-fsmonitor", "lib-post-checkout"]
