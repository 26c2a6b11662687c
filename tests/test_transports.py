"""Every git qola runs uses only the transports a user would expect, and none offline.

A dependency's own config can turn its URL into a remote helper (`url.<x>.insteadOf`),
which git runs as `git remote-<helper>` and, failing that, as the alias of that name; or
make it a partial clone whose missing objects git fetches lazily, from any command. The
tree belongs to another uid and qola runs as root under the default shim; each hostile
command would leave a file in `marks`, and plain git (trusting the tree) runs it, so the
test can fail. The user's own insteadOf mirrors keep working.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import procs
import pytest
from repos import git, snapshot
from servers import git_daemon

FOREIGN_UID = 12345

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: chown to another uid")


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


def as_root(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Plain git in the tree another user owns, trusting it: what the config does."""
    return subprocess.run(["git", "-c", "safe.directory=*", "-C", str(repo), *args],
                          capture_output=True, text=True, check=False)  # fmt: skip


def configure(repo: Path, *pairs: tuple[str, str]) -> None:
    for key, value in pairs:
        git(repo, "config", "--add", key, value)


def helper_transport(repo: Path, url: str, marks: Path, kind: str) -> None:
    """The repository's config turns url into a transport that runs a command."""
    mark = shlex.quote(str(marks / kind))
    if kind == "helper":  # pwn::... runs `git remote-pwn`, which falls back on the alias
        configure(repo, ("url.pwn::x.insteadOf", url), ("protocol.pwn.allow", "always"),
                  ("alias.remote-pwn", f"!touch {mark}; false"))  # fmt: skip
    elif kind == "scheme":  # pwn://... is passed to the external helper `pwn`
        configure(repo, ("url.pwn://x.insteadOf", url),
                  ("alias.remote-pwn", f"!touch {mark}; false"))  # fmt: skip
    else:  # ext:: runs its command
        configure(repo, ("url.ext::sh -c touch% " + str(marks / kind) + "% #.insteadOf", url),
                  ("protocol.ext.allow", "always"))  # fmt: skip


KINDS = ["helper", "scheme", "ext"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_transport_a_dependencys_config_introduces_never_runs_in_checkout_or_bump(
    behind_pin, upstream, marks, private_tmp, kind
):
    project = behind_pin
    helper_transport(project.lib, str(upstream.lib), marks, kind)
    chown_tree(project.root)
    before = snapshot(project.root)
    checkout = procs.run("checkout", "-m", str(project.manifest))
    assert checkout.returncode == 3, checkout.stderr
    # The insteadOf rewriting the manifest's URL is refused before git runs (what the
    # transport pins would stop otherwise: tests/test_fetch_target.py).
    assert f"which sends git's requests for {upstream.lib} to " in checkout.stderr
    bump = procs.run("bump", "lib", "--dry-run", "-m", str(project.manifest))
    assert bump.returncode == 3, bump.stderr
    assert list(marks.iterdir()) == []
    assert snapshot(project.root) == before
    # The transport is real: plain git fetching the URL runs it.
    as_root(project.lib, "fetch", "-q", str(upstream.lib), upstream.lib_tip)
    assert [p.name for p in marks.iterdir()] == [kind]


@pytest.mark.parametrize("through", ["file", "git"])
def test_the_users_own_insteadof_mirror_keeps_working(
    make_project, upstream, tmp_path, monkeypatch, private_tmp, through
):
    """The manifest names https://mirror.invalid/; the user's global config sends it to a
    mirror of their own: a local one (file://), or a git daemon on loopback."""
    base = tmp_path / "mirrors"
    base.mkdir()
    git(tmp_path, "clone", "-q", "--mirror", str(upstream.lib), str(base / "lib.git"))
    project = make_project()
    project.manifest.write_text(project.manifest.read_text().replace(
        f'url = "{upstream.lib}"', 'url = "https://mirror.invalid/lib.git"'))  # fmt: skip
    chown_tree(project.root)
    user = tmp_path / "user.gitconfig"

    def checkout(mirror: str) -> subprocess.CompletedProcess[str]:
        user.write_text(f"[include]\n\tpath = {os.environ['GIT_CONFIG_GLOBAL']}\n"
                        f'[url "{mirror}"]\n\tinsteadOf = https://mirror.invalid/\n')  # fmt: skip
        return procs.run("checkout", "-m", str(project.manifest),
                         env={"GIT_CONFIG_GLOBAL": str(user)})  # fmt: skip

    if through == "file":
        proc = checkout(f"file://{base}/")
    else:
        with git_daemon(base) as port:
            proc = checkout(f"git://127.0.0.1:{port}/")
    assert proc.returncode == 0, proc.stderr
    assert as_root(project.lib, "rev-parse", "HEAD").stdout.strip() == upstream.lib_v2
    assert (project.lib / "lib.txt").read_text() == "lib v2\n"


def _lazy(project, upstream, marks: Path, how: str) -> str:
    """lib made a partial clone of its origin with one tree object gone: any git that needs
    it fetches it lazily, which runs the command the config names. Returns the tree."""
    lib = project.lib
    tree = git(lib, "rev-parse", "HEAD^{tree}")
    pack_folder = lib / ".git" / "objects" / "pack"
    for pack in sorted(pack_folder.glob("*.pack")):
        moved = pack.with_suffix(".moved")
        pack.rename(moved)
        pack.with_suffix(".idx").unlink()
        with moved.open("rb") as data:
            subprocess.run(["git", "-C", str(lib), "unpack-objects", "-q"], stdin=data,
                           check=True)  # fmt: skip
        moved.unlink()
    (lib / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    url = f"file://{upstream.lib}"
    configure(lib, ("core.repositoryformatversion", "1"),
              ("extensions.partialClone", "origin"), ("remote.origin.promisor", "true"))
    git(lib, "config", "remote.origin.url", url)
    mark = shlex.quote(str(marks / "lazy"))
    if how == "upload-pack":
        configure(lib, ("remote.origin.uploadpack", f"touch {mark}; git-upload-pack"))
    elif how == "ext":
        configure(lib, (f"url.ext::sh -c touch% {marks / 'lazy'}% #.insteadOf", url))
    else:
        configure(lib, ("url.pwn::x.insteadOf", url), ("alias.remote-pwn", f"!touch {mark}"))
    os.utime(lib / "README", (1, 1))
    return tree


@pytest.mark.parametrize("how", ["upload-pack", "helper"])
def test_verify_fetches_nothing_lazily_and_checkout_runs_nothing_for_it(
    pinned_by_qola, upstream, marks, private_tmp, how
):
    project = pinned_by_qola
    tree = _lazy(project, upstream, marks, how)
    chown_tree(project.root)
    before = snapshot(project.root)
    verified = procs.run("verify", "-m", str(project.manifest))
    assert verified.returncode != 0, verified.stdout  # a tree object is missing: not clean
    status = procs.run("status", "-m", str(project.manifest))
    assert status.returncode != 0
    assert list(marks.iterdir()) == []
    assert snapshot(project.root) == before  # nothing fetched
    checkout = procs.run("checkout", "-m", str(project.manifest))
    assert list(marks.iterdir()) == [], checkout.stderr
    # And it is real: plain git status fetches the tree, running the command.
    as_root(project.lib, "status", "--porcelain")
    assert [p.name for p in marks.iterdir()] == ["lazy"]
    assert tree


def test_the_command_scope_a_caller_gives_the_runner_is_kept_under_the_pins(tmp_path: Path):
    """A caller's own GIT_CONFIG_COUNT settings (the demo's `protocol.file.allow`, a
    wrapper's) are the user's: qola's pins come after them and change none."""
    from qola.gitrun.git import Runner

    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    runner = Runner(env={"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "protocol.file.allow",
                         "GIT_CONFIG_VALUE_0": "always", "GIT_CONFIG_KEY_1": "qola.test",
                         "GIT_CONFIG_VALUE_1": "kept"})  # fmt: skip

    assert runner.run(repo, "config", "qola.test").stdout.strip() == "kept"
    assert runner.run(repo, "config", "protocol.file.allow").stdout.strip() == "always"
    assert runner.run(repo, "config", "protocol.allow").stdout.strip() == "never"


def test_the_users_git_c_settings_are_kept_and_never_outrank_the_pins(tmp_path: Path):
    """git reads GIT_CONFIG_PARAMETERS (what `git -c` hands down) after GIT_CONFIG_COUNT:
    a caller's `-c protocol.allow=always` would beat the pins. They come after it there
    too; the caller's other settings stay."""
    from qola.gitrun.git import Runner

    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    runner = Runner(env={"GIT_CONFIG_PARAMETERS":
                         "'protocol.allow'='always' 'qola.test'='it'\\''s kept'"})  # fmt: skip
    assert runner.run(repo, "config", "qola.test").stdout.strip() == "it's kept"
    assert runner.run(repo, "config", "protocol.allow").stdout.strip() == "never"


def test_the_users_git_c_protocol_allow_opens_no_lazy_fetch_by_ext(
    pinned_by_qola, upstream, marks, private_tmp
):
    """The same, end to end: a partial clone whose promisor URL the dependency's config
    turns into `ext::`, during checkout under `git -c protocol.allow=always`."""
    project = pinned_by_qola
    _lazy(project, upstream, marks, "ext")
    project.set_pin(upstream.lib_v2, upstream.lib_tip)  # a move: git looks at the tree
    chown_tree(project.root)
    proc = procs.run("checkout", "-m", str(project.manifest),
                     env={"GIT_CONFIG_PARAMETERS": "'protocol.allow'='always'"})  # fmt: skip
    assert list(marks.iterdir()) == [], proc.stderr
    subprocess.run(["git", "-c", "protocol.allow=always", "-c", "safe.directory=*", "-C",
                    str(project.lib), "status", "--porcelain"], capture_output=True,
                   check=False)  # fmt: skip
    assert [p.name for p in marks.iterdir()] == ["lazy"]
