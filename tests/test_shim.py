"""The safe.directory shim against real git and real file ownership."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote as url_quote

import procs
import pytest
from repos import commit_file, git, init_repo

import qola
from qola.base.errors import UsageError
from qola.gitrun.shim import (
    check_mode,
    install_signal_handlers,
    local_path,
    remove_all,
    render,
    shim,
    trust_paths_for_url,
)

if TYPE_CHECKING:
    from conftest import Upstream

FOREIGN_UID = 12345
DUBIOUS = "detected dubious ownership"

requires_root = pytest.mark.skipif(
    os.geteuid() != 0,
    reason="needs root: git's ownership check is tested by chown-ing repositories to another uid",
)


@pytest.fixture(autouse=True)
def shim_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder where shims are created, so a test can see that none is left behind."""
    # As root, git also trusts $SUDO_UID's repositories; a sudo session must not change results.
    monkeypatch.delenv("SUDO_UID", raising=False)
    folder = tmp_path / "shim-tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def run_git(env: Mapping[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run git in cwd with the shim's variables over the test environment."""
    return subprocess.run(
        ["git", "-C", str(cwd), *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def chown_foreign(path: Path) -> None:
    subprocess.run(["chown", "-R", f"{FOREIGN_UID}:{FOREIGN_UID}", str(path)], check=True)


@pytest.fixture
def foreign_owned(tmp_path: Path) -> Path:
    """A repository with one commit, owned by another uid."""
    repo = init_repo(tmp_path / "foreign")
    commit_file(repo, "README", "foreign\n")
    chown_foreign(repo)
    return repo


@pytest.fixture
def other_foreign_owned(tmp_path: Path) -> Path:
    """A second repository owned by another uid, which nobody asked qola to trust."""
    repo = init_repo(tmp_path / "other")
    commit_file(repo, "README", "other\n")
    chown_foreign(repo)
    return repo


@dataclass(frozen=True)
class HostileParent:
    repo: Path  # owned by another uid, core.fsmonitor set to a command
    inner: Path  # a plain folder inside it, where a dependency could be checked out
    marker: Path  # created by the fsmonitor command if git ever runs it


@pytest.fixture
def hostile_parent(tmp_path: Path) -> HostileParent:
    repo = init_repo(tmp_path / "hostile")
    commit_file(repo, "README", "hostile\n")
    marker = tmp_path / "PWNED"
    # git runs a non-boolean core.fsmonitor through the shell with arguments
    # appended; the trailing `#` turns them into a comment.
    git(repo, "config", "core.fsmonitor", f"touch {shlex.quote(str(marker))} #")
    inner = repo / "inner"
    inner.mkdir()
    chown_foreign(repo)
    return HostileParent(repo, inner, marker)


def test_check_mode_accepts_cmake_spelling_and_rejects_unknown() -> None:
    assert check_mode("SCOPED") == "scoped"
    with pytest.raises(UsageError) as info:
        check_mode("some")
    assert info.value.render(cmake_build=None) == (
        "qola: --safe-directory: unknown mode 'some'\nhint: use one of scoped, all, off"
    )


def test_shim_off_yields_an_empty_environment_and_writes_nothing(shim_tmp: Path) -> None:
    with shim("off", [shim_tmp]) as env:
        assert dict(env) == {}
        env.add(shim_tmp)
        assert list(shim_tmp.iterdir()) == []


def test_shim_file_is_0600_in_a_private_0700_folder(tmp_path: Path) -> None:
    with shim("scoped", [tmp_path]) as env:
        assert env.config is not None and env.folder is not None
        assert env["GIT_CONFIG_GLOBAL"] == str(env.config)
        assert env.folder.stat().st_mode & 0o777 == 0o700
        assert env.config.stat().st_mode & 0o777 == 0o600
        env.add(tmp_path / "later")  # rewritten files keep the mode
        assert env.config.stat().st_mode & 0o777 == 0o600


def test_shim_removed_after_normal_exit(tmp_path: Path, shim_tmp: Path) -> None:
    with shim("scoped", [tmp_path]) as env:
        assert env.config is not None and env.config.exists()
    assert list(shim_tmp.iterdir()) == []


def test_shim_removed_after_an_exception(tmp_path: Path, shim_tmp: Path) -> None:
    with pytest.raises(RuntimeError), shim("all", [tmp_path]) as env:
        assert env.config is not None and env.config.exists()
        raise RuntimeError("boom")
    assert list(shim_tmp.iterdir()) == []


_CHILD = textwrap.dedent(
    """
    import subprocess, sys
    from qola.gitrun.shim import install_signal_handlers, shim

    if sys.argv[1] == "handlers":
        install_signal_handlers()
    try:
        with shim("scoped", [sys.argv[2]]) as env:
            print(env["GIT_CONFIG_GLOBAL"], flush=True)
            subprocess.run(["sleep", "60"])  # stands for a long git clone
    except KeyboardInterrupt:
        sys.exit(130)  # what the command line does
    """
)


@pytest.mark.parametrize(
    ("handlers", "signum", "exit_code"),
    [
        ("handlers", signal.SIGINT, 130),
        ("handlers", signal.SIGTERM, 143),
        ("handlers", signal.SIGHUP, 129),
        ("none", signal.SIGINT, 130),  # Python's own KeyboardInterrupt unwinds too
    ],
    ids=["SIGINT", "SIGTERM", "SIGHUP", "SIGINT-without-handlers"],
)
def test_shim_removed_when_a_signal_arrives_during_a_child_process(
    tmp_path: Path, shim_tmp: Path, handlers: str, signum: int, exit_code: int
) -> None:
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(qola.__file__).resolve().parents[1]),
        "TMPDIR": str(shim_tmp),
    }
    proc = subprocess.Popen(
        [sys.executable, str(script), handlers, str(tmp_path)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=procs.default_sigint,
    )
    try:
        assert proc.stdout is not None
        config = Path(proc.stdout.readline().strip())
        assert config.parent.parent == shim_tmp and config.exists()
        time.sleep(0.2)  # let it block in the wait for `sleep`
        proc.send_signal(signum)
        assert proc.wait(timeout=30) == exit_code, proc.stderr.read() if proc.stderr else ""
    finally:
        proc.kill()
        proc.wait()
    assert not config.exists()
    assert list(shim_tmp.iterdir()) == []


def test_install_signal_handlers_leaves_ignored_signals_ignored_and_restores() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        restore = install_signal_handlers()
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
        restore()
        assert signal.getsignal(signal.SIGTERM) is before[signal.SIGTERM]
        assert signal.getsignal(signal.SIGINT) is before[signal.SIGINT]
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def test_shim_worker_process_adds_are_kept_and_its_exit_removes_nothing(tmp_path: Path) -> None:
    first, second, third = (tmp_path / name for name in ("first", "second", "third"))
    with shim("scoped", [first]) as env:
        assert env.config is not None
        pid = os.fork()
        if pid == 0:  # a --jobs worker: trusts what it found, then exits
            try:
                env.add(second)
                remove_all()
                env.close()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        assert env.config.exists()
        env.add(third)  # must not drop the worker's entry
        listed = git(tmp_path, "config", "-f", str(env.config), "--get-all", "safe.directory")
        assert listed.splitlines() == [str(first), str(second), str(third)]


def test_render_quotes_values_that_git_reads_back_exactly(tmp_path: Path) -> None:
    values = [
        "/with space/x",
        '/with "quotes"',
        "/back\\slash\\n",
        "/hash#and;semicolon",
        "/tab\tnewline\nbackspace\b",
        " /leading and trailing ",
        "/ünïcödé",
        "/not-utf8-\udcff",  # a byte that is not UTF-8, as os.fsdecode gives it
    ]
    config = tmp_path / "config"
    config.write_bytes(os.fsencode(render(["/inc/a b"], values)))
    out = subprocess.run(
        ["git", "config", "-f", str(config), "-z", "--get-all", "safe.directory"],
        capture_output=True,
        check=True,
    ).stdout
    assert [os.fsdecode(v) for v in out.split(b"\0")[:-1]] == values


def test_shim_add_after_exit_raises_instead_of_trusting_nothing(tmp_path: Path) -> None:
    with shim("scoped", []) as env:
        pass
    with pytest.raises(RuntimeError, match="already removed"):
        env.add(tmp_path)


def test_shim_add_writes_each_real_path_once_without_trailing_slash(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    with shim("scoped", [f"{link}/"]) as env:
        env.add(real, f"{real}/", link)
        assert env.trusted == (str(real),)


# Ownership: these need root.


@requires_root
def test_foreign_owned_repo_without_the_shim_is_refused(foreign_owned: Path) -> None:
    out = run_git({}, foreign_owned, "status")
    assert out.returncode == 128
    assert f"{DUBIOUS} in repository at '{foreign_owned}'" in out.stderr


@requires_root
def test_shim_off_leaves_git_refusing(foreign_owned: Path) -> None:
    with shim("off", [foreign_owned]) as env:
        assert DUBIOUS in run_git(env, foreign_owned, "status").stderr


@requires_root
def test_shim_scoped_trusts_only_listed_repos(
    foreign_owned: Path, other_foreign_owned: Path
) -> None:
    with shim("scoped", [foreign_owned]) as env:
        assert run_git(env, foreign_owned, "status", "--short").returncode == 0
        refused = run_git(env, other_foreign_owned, "status")
        assert refused.returncode == 128
        assert DUBIOUS in refused.stderr


@requires_root
def test_shim_scoped_refuses_hostile_parent_of_a_trusted_folder_and_never_runs_its_fsmonitor(
    hostile_parent: HostileParent,
) -> None:
    with shim("scoped", [hostile_parent.inner]) as env:
        out = run_git(env, hostile_parent.inner, "status")
        assert out.returncode == 128
        assert f"{DUBIOUS} in repository at '{hostile_parent.repo}'" in out.stderr
    assert not hostile_parent.marker.exists()


@requires_root
def test_shim_all_trusts_every_repo_even_a_hostile_one(
    hostile_parent: HostileParent, other_foreign_owned: Path
) -> None:
    # Why `all` is opt-in: it lets the hostile repository's command run.
    with shim("all", []) as env:
        assert env.trusted == ()
        assert run_git(env, other_foreign_owned, "status").returncode == 0
        assert run_git(env, hostile_parent.inner, "status").returncode == 0
    assert hostile_parent.marker.exists()


@requires_root
def test_shim_add_trusts_a_repo_found_later(foreign_owned: Path, other_foreign_owned: Path) -> None:
    with shim("scoped", [foreign_owned]) as env:
        assert DUBIOUS in run_git(env, other_foreign_owned, "status").stderr
        env.add(other_foreign_owned)
        assert run_git(env, other_foreign_owned, "status").returncode == 0
        assert run_git(env, foreign_owned, "status").returncode == 0


@requires_root
def test_shim_trusts_a_repo_reached_through_a_symlink_by_its_real_path(
    foreign_owned: Path, tmp_path: Path
) -> None:
    link = tmp_path / "link"
    link.symlink_to(foreign_owned)
    with shim("scoped", [link]) as env:
        assert env.trusted == (str(foreign_owned),)
        assert run_git(env, link, "status").returncode == 0


@requires_root
def test_shim_trusts_paths_with_spaces_quotes_and_backslashes(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / 'a "quoted" dir' / "back\\slash #x; y")
    commit_file(repo, "README", "odd\n")
    chown_foreign(tmp_path / 'a "quoted" dir')
    with shim("scoped", [repo]) as env:
        out = run_git(env, repo, "status", "--short")
        assert out.returncode == 0, out.stderr


@requires_root
def test_shim_nested_in_another_shim_keeps_both_trust_lists(
    foreign_owned: Path, other_foreign_owned: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `qola exec -- cmake …` whose configure runs qola again.
    with shim("scoped", [foreign_owned]) as outer:
        monkeypatch.setenv("GIT_CONFIG_GLOBAL", outer["GIT_CONFIG_GLOBAL"])
        with shim("scoped", [other_foreign_owned]) as inner:
            assert run_git(inner, foreign_owned, "status").returncode == 0
            assert run_git(inner, other_foreign_owned, "status").returncode == 0


# Which path git compares (observed with git 2.39.5).


@pytest.fixture
def foreign_superproject(tmp_path: Path, upstream: Upstream) -> Path:
    """A clone of lib with its submodule at nested_v1 instead of the gitlink, another uid's."""
    super_ = tmp_path / "super"
    git(tmp_path, "clone", "-q", "--recurse-submodules", str(upstream.lib), str(super_))
    git(super_ / "extern" / "nested", "checkout", "-q", upstream.nested_v1)
    chown_foreign(super_)
    return super_


@requires_root
@pytest.mark.parametrize(
    ("trusted", "works"),
    [
        ([""], False),
        ([".git/modules/extern/nested"], False),
        (["extern/nested/.git"], False),
        (["extern/nested"], True),
    ],
    ids=["superproject", "modules-git-dir", "gitfile", "submodule-work-tree"],
)
def test_git_compares_a_submodules_own_work_tree(
    foreign_superproject: Path, trusted: list[str], works: bool
) -> None:
    paths = [foreign_superproject / path if path else foreign_superproject for path in trusted]
    with shim("scoped", paths) as env:
        out = run_git(env, foreign_superproject / "extern" / "nested", "rev-parse", "HEAD")
        assert (out.returncode == 0) is works, out.stderr


@requires_root
def test_git_submodule_update_in_a_foreign_superproject_needs_only_the_superproject(
    foreign_superproject: Path, upstream: Upstream
) -> None:
    # submodule--helper runs its children with GIT_DIR=.git (prepare_submodule_repo_env),
    # which skips discovery and with it the ownership check of the submodule.
    with shim("scoped", [foreign_superproject]) as env:
        out = run_git(env, foreign_superproject, "submodule", "update", "--checkout", "-q")
        assert out.returncode == 0, out.stderr
    head = foreign_superproject / ".git" / "modules" / "extern" / "nested" / "HEAD"
    assert head.read_text().strip() == upstream.nested_v2


# Local clone and fetch sources: trust_paths_for_url.


@dataclass(frozen=True)
class Sources:
    base: Path  # all owned by another uid
    src: Path  # non-bare, with the submodule checked out (extern/nested has a .git file)
    bare: Path
    spaced: Path  # non-bare, in a folder whose name has a space
    nested: Path
    link: Path  # a symlink to base


@pytest.fixture(scope="module")
def foreign_sources(tmp_path_factory: pytest.TempPathFactory, upstream: Upstream) -> Sources:
    base = tmp_path_factory.mktemp("sources")
    src = base / "src"
    git(base, "clone", "-q", "--recurse-submodules", str(upstream.lib), str(src))
    bare = base / "src.git"
    git(base, "clone", "-q", "--bare", str(upstream.lib), str(bare))
    spaced = base / "with space" / "src"
    git(base, "clone", "-q", str(upstream.lib), str(spaced))
    nested = base / "nested"
    git(base, "clone", "-q", str(upstream.nested), str(nested))
    link = tmp_path_factory.mktemp("links") / "sources"
    link.symlink_to(base)
    if os.geteuid() == 0:
        chown_foreign(base)
    return Sources(base, src, bare, spaced, nested, link)


def _gitfile_source(s: Sources) -> Path:
    return s.src / "extern" / "nested"


# (command, url, cwd) for each spelling git 2.39.5 compares differently.
_SOURCE_CASES: dict[str, Callable[[Sources, Path], tuple[str, str, Path]]] = {
    "clone-path": lambda s, own: ("clone", str(s.src), own),
    "clone-trailing-slash": lambda s, own: ("clone", f"{s.src}/", own),
    "fetch-trailing-slash": lambda s, own: ("fetch", f"{s.src}/", own),
    "clone-file-url": lambda s, own: ("clone", f"file://{s.src}", own),
    "clone-file-url-percent-encoded": lambda s, own: (
        "clone",
        "file://" + url_quote(str(s.spaced)),
        own,
    ),
    "clone-bare-trailing-slash": lambda s, own: ("clone", f"{s.bare}/", own),
    "fetch-bare-trailing-slash": lambda s, own: ("fetch", f"{s.bare}/", own),
    "clone-relative": lambda s, own: ("clone", "./src", s.base),
    "fetch-relative-dotdot": lambda s, own: ("fetch", os.path.relpath(s.src, own), own),
    "ls-remote-relative": lambda s, own: ("ls-remote", "./src.git", s.base),
    "clone-through-symlink": lambda s, own: ("clone", f"{s.link}/src", own),
    "clone-gitfile-source": lambda s, own: ("clone", str(_gitfile_source(s)), own),
    "clone-gitfile-source-file-url": lambda s, own: ("clone", f"file://{_gitfile_source(s)}", own),
}


def _run_source_command(
    env: Mapping[str, str], command: str, url: str, cwd: Path, own: Path
) -> subprocess.CompletedProcess[str]:
    if command == "clone":
        return run_git(env, cwd, "clone", "-q", "--no-checkout", url, str(own / "clone"))
    if command == "fetch":
        return run_git(env, cwd, "fetch", "-q", url)
    return run_git(env, cwd, "ls-remote", url)


@requires_root
@pytest.mark.parametrize("case", list(_SOURCE_CASES))
def test_shim_add_clone_source_trusts_the_spelling_git_compares(
    foreign_sources: Sources, tmp_path: Path, case: str
) -> None:
    own = init_repo(tmp_path / "own")  # ours: fetches land here, clones beside it
    command, url, cwd = _SOURCE_CASES[case](foreign_sources, own)
    with shim("scoped", [own]) as env:
        refused = _run_source_command(env, command, url, cwd, own)
        assert refused.returncode != 0 and DUBIOUS in refused.stderr
        env.add_clone_source(url, cwd=cwd)
        out = _run_source_command(env, command, url, cwd, own)
        assert out.returncode == 0, f"{env.trusted}\n{out.stderr}"


@requires_root
def test_shim_add_clone_source_uses_a_logical_pwd_like_git(
    foreign_sources: Sources, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git makes "./src" absolute with $PWD when $PWD names the same folder as getcwd().
    monkeypatch.setenv("PWD", str(foreign_sources.link))
    with shim("scoped", []) as env:
        env.add_clone_source("./src", cwd=foreign_sources.link)
        assert f"{foreign_sources.link}/./src/.git" in env.trusted
        out = run_git(
            env,
            foreign_sources.link,
            "clone",
            "-q",
            "--no-checkout",
            "./src",
            str(tmp_path / "clone"),
        )
        assert out.returncode == 0, out.stderr


@requires_root
def test_shim_add_clone_source_lets_submodule_update_clone_a_foreign_source(
    foreign_sources: Sources, tmp_path: Path, upstream: Upstream
) -> None:
    super_ = tmp_path / "super"
    git(tmp_path, "clone", "-q", str(upstream.lib), str(super_))
    git(super_, "submodule", "init", "-q")
    git(super_, "config", "submodule.extern/nested.url", str(foreign_sources.nested))
    with shim("scoped", [super_]) as env:
        refused = run_git(env, super_, "submodule", "update", "-q")
        assert DUBIOUS in refused.stderr
        env.add_clone_source(str(foreign_sources.nested), cwd=super_)
        out = run_git(env, super_, "submodule", "update", "-q")
        assert out.returncode == 0, out.stderr


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/ROCm/aiter.git",
        "ssh://git@example.com/x.git",
        "git://example.com/x.git",
        "git@github.com:ROCm/aiter.git",
        "host:path/with/slash",
    ],
)
def test_trust_paths_for_url_is_empty_for_network_urls(url: str) -> None:
    assert local_path(url) is None
    assert trust_paths_for_url(url) == []


def test_trust_paths_for_url_is_empty_for_a_folder_that_is_no_repository(tmp_path: Path) -> None:
    assert local_path(str(tmp_path)) == str(tmp_path)
    assert trust_paths_for_url(str(tmp_path)) == []


# The user's own configuration keeps working under the shim.


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$HOME and $XDG_CONFIG_HOME in tmp_path, and no $GIT_CONFIG_GLOBAL."""
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL")
    return home


def _file_state(path: Path) -> tuple[bytes, int, int]:
    st = path.stat()
    return path.read_bytes(), st.st_mtime_ns, st.st_mode


def test_shim_keeps_insteadof_proxy_and_credential_helper_from_home_gitconfig(
    fake_home: Path, upstream: Upstream, tmp_path: Path
) -> None:
    gitconfig = fake_home / ".gitconfig"
    gitconfig.write_text(
        f'[url "{upstream.lib.parent}/"]\n\tinsteadOf = https://mirror.invalid/\n'
        '[http "https://mirror.invalid"]\n\tproxy = http://proxy.invalid:3128\n'
        "[credential]\n\thelper = store --file=/nonexistent/creds\n"
    )
    before = _file_state(gitconfig)
    with shim("scoped", [tmp_path]) as env:
        ls = run_git(env, tmp_path, "ls-remote", "https://mirror.invalid/lib", "refs/heads/main")
        assert ls.returncode == 0, ls.stderr
        assert ls.stdout.split()[0] == upstream.lib_tip
        proxy = run_git(
            env,
            tmp_path,
            "config",
            "--get-urlmatch",
            "http.proxy",
            "https://mirror.invalid/lib.git",
        )
        assert proxy.stdout.strip() == "http://proxy.invalid:3128"
        helper = run_git(env, tmp_path, "config", "--get", "credential.helper")
        assert helper.stdout.strip() == "store --file=/nonexistent/creds"
    assert _file_state(gitconfig) == before


def test_shim_reads_xdg_config_first_and_home_gitconfig_second(
    fake_home: Path, tmp_path: Path
) -> None:
    xdg = fake_home / ".config" / "git" / "config"
    xdg.write_text("[user]\n\tname = from xdg\n\temail = xdg@example.invalid\n")
    (fake_home / ".gitconfig").write_text("[user]\n\tname = from home\n")
    with shim("scoped", [tmp_path]) as env:
        assert run_git(env, tmp_path, "config", "user.name").stdout.strip() == "from home"
        assert run_git(env, tmp_path, "config", "user.email").stdout.strip() == (
            "xdg@example.invalid"
        )


def test_shim_includes_only_git_config_global_when_it_is_set(
    fake_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (fake_home / ".gitconfig").write_text("[user]\n\tname = from home\n")
    chosen = tmp_path / "chosen.gitconfig"
    chosen.write_text("[core]\n\tabbrev = 12\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(chosen))
    with shim("scoped", [tmp_path]) as env:
        assert run_git(env, tmp_path, "config", "core.abbrev").stdout.strip() == "12"
        assert run_git(env, tmp_path, "config", "user.name").returncode == 1


def test_shim_global_config_writes_land_in_the_temp_file_not_the_users(
    fake_home: Path, tmp_path: Path, shim_tmp: Path
) -> None:
    gitconfig = fake_home / ".gitconfig"
    gitconfig.write_text("[user]\n\tname = from home\n")
    xdg = fake_home / ".config" / "git" / "config"
    xdg.write_text("[core]\n\tabbrev = 9\n")
    before = {path: _file_state(path) for path in (gitconfig, xdg)}
    with shim("all", [tmp_path]) as env:
        assert run_git(env, tmp_path, "config", "--global", "qola.written", "yes").returncode == 0
        assert run_git(env, tmp_path, "config", "qola.written").stdout.strip() == "yes"
    assert {path: _file_state(path) for path in (gitconfig, xdg)} == before
    assert run_git({}, tmp_path, "config", "qola.written").returncode == 1
    assert list(shim_tmp.iterdir()) == []
