"""Where a fetch goes and how it is secured is the manifest's and the user's own config's
to say, never a dependency's.

A dependency's config could send qola's fetch to a proxy of its own, resolve the
manifest's host to another address, rewrite the manifest's URL (`url.<x>.insteadOf`) or
secure the connection with a CA file of its own: the user's credential helper would give
each the user's token. The dependency belongs to another uid and qola runs as root under
the default `scoped` shim; a loopback listener records every connection it gets, and
plain git (trusting the tree) connects to it, so each test can fail.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import procs
import pytest
from repos import commit_file, git, head, init_repo, snapshot
from servers import free_port

FOREIGN_UID = 12345

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: chown to another uid")


def chown_tree(path: Path) -> None:
    subprocess.run(["chown", "-R", f"{FOREIGN_UID}:{FOREIGN_UID}", str(path)], check=True)


class Listener:
    """A loopback port that counts the connections it gets and closes each at once."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = int(self.sock.getsockname()[1])
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.sock.close()


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


def served_at(project, upstream, url: str) -> None:
    """The manifest names lib by url (nothing serves it): a fetch there fails."""
    project.manifest.write_text(project.manifest.read_text().replace(
        f'url = "{upstream.lib}"', f'url = "{url}"'))  # fmt: skip


@pytest.mark.parametrize("key", ["http.proxy", "http.{url}.proxy", "remote.origin.proxy"])
def test_a_proxy_a_dependencys_config_names_never_gets_the_fetch(
    behind_pin, upstream, listener, private_tmp, key
):
    project = behind_pin
    url = f"http://127.0.0.1:{free_port()}/lib"
    served_at(project, upstream, url)
    git(project.lib, "remote", "set-url", "origin", url)
    git(project.lib, "config", key.format(url=url), f"http://127.0.0.1:{listener.port}")
    chown_tree(project.root)
    for command in (["checkout"], ["bump", "lib", "--dry-run"]):
        procs.run(*command, "-m", str(project.manifest))  # nothing serves url: it fails
    assert listener.connections == 0
    as_root(project.lib, "fetch", "-q", "origin")
    assert listener.connections > 0  # the proxy is real: plain git goes through it


def test_a_resolve_list_a_dependencys_config_gives_never_sends_the_host_elsewhere(
    behind_pin, upstream, listener, private_tmp
):
    """A host name of the manifest's resolves as the user's system has it (here:
    `.invalid` never does), not to the address the dependency's config gives."""
    project = behind_pin
    url = f"http://qola-test.invalid:{listener.port}/lib"
    served_at(project, upstream, url)
    git(project.lib, "config", "http.curloptResolve",
        f"qola-test.invalid:{listener.port}:127.0.0.1")  # fmt: skip
    chown_tree(project.root)
    procs.run("checkout", "-m", str(project.manifest))
    assert listener.connections == 0
    as_root(project.lib, "fetch", "-q", url)
    assert listener.connections > 0


@pytest.mark.parametrize("command", [["checkout"], ["bump", "lib", "--dry-run"]])
def test_an_insteadof_in_a_dependencys_config_stops_the_fetch(
    behind_pin, upstream, listener, private_tmp, command
):
    project = behind_pin
    elsewhere = f"http://127.0.0.1:{listener.port}/steal"
    git(project.lib, "config", f"url.{elsewhere}.insteadOf", str(upstream.lib))
    chown_tree(project.root)
    before = snapshot(project.root)
    proc = procs.run(*command, "-m", str(project.manifest))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"sets url.{elsewhere}.insteadof = {str(upstream.lib)!r}" in proc.stderr
    assert f"which sends git's requests for {upstream.lib} to {elsewhere}" in proc.stderr
    assert "hint: if you trust it, put the mirror in your own config" in proc.stderr
    assert listener.connections == 0
    assert snapshot(project.root) == before
    as_root(project.lib, "fetch", "-q", str(upstream.lib))
    assert listener.connections > 0


def test_the_users_own_insteadof_for_the_same_url_is_not_the_dependencys(
    behind_pin, upstream, private_tmp, tmp_path, monkeypatch
):
    """The user's own mirror, which the dependency's config repeats: the fetch goes
    where the user's config alone sends it."""
    project = behind_pin
    mirror = tmp_path / "mirror"
    git(tmp_path, "clone", "-q", "--mirror", str(upstream.lib), str(mirror))
    config = tmp_path / "user.gitconfig"
    config.write_text(Path(os.environ["GIT_CONFIG_GLOBAL"]).read_text()
                      + f'[url "file://{mirror}"]\n\tinsteadOf = {upstream.lib}\n')  # fmt: skip
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    git(project.lib, "config", f"url.file://{mirror}.insteadOf", str(upstream.lib))
    chown_tree(project.root)
    proc = procs.run("checkout", "-m", str(project.manifest))
    assert proc.returncode == 0, proc.stderr
    assert git(project.lib, "-c", "safe.directory=*", "rev-parse", "HEAD") == upstream.lib_tip


def test_a_ca_file_a_dependencys_config_names_stops_the_fetch(
    behind_pin, upstream, private_tmp, tmp_path
):
    """git has no value meaning "the default CA bundle": the fetch is refused."""
    project = behind_pin
    git(project.lib, "config", "http.sslCAInfo", str(tmp_path / "their-ca.pem"))
    chown_tree(project.root)
    before = snapshot(project.root)
    proc = procs.run("checkout", "-m", str(project.manifest))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "sets http.sslcainfo = " in proc.stderr
    assert "which decides how git's requests are secured" in proc.stderr
    assert "hint: if you trust it, set it in your own config" in proc.stderr
    assert snapshot(project.root) == before


def test_a_dependencys_transport_settings_are_the_users_under_exec(pinned_by_qola, private_tmp):
    """What git reads, under qola exec, for what the dependency's config sets: the user's
    (here: none) or git's default; a resolve list emptied; no LFS endpoint of its own."""
    project = pinned_by_qola
    for key, value in (("http.sslVerify", "false"), ("http.curloptResolve", "a:1:127.0.0.1"),
                       ("http.followRedirects", "true"), ("lfs.url", "http://127.0.0.1:1/x"),
                       ("remote.origin.lfsurl", "http://127.0.0.1:1/x"),
                       ("http.delegation", "always")):  # fmt: skip
        git(project.lib, "config", key, value)
    chown_tree(project.root)
    script = (f"cd {project.lib} && for k in http.sslverify http.followredirects lfs.url "
              "remote.origin.lfsurl http.delegation; do git config --get $k; done; "
              "git config --get-all http.curloptresolve")
    proc = procs.run("exec", "-m", str(project.manifest), "--", "sh", "-c", script)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n") == ["true", "initial", "", "", "none", "a:1:127.0.0.1", "",
                                       ""]  # fmt: skip


def test_a_relative_nested_url_resolves_against_the_manifests_url(
    tmp_path, listener, private_tmp
):
    """`../nested` in the dependency's .gitmodules is the manifest URL's sibling, as the
    upstream meant it, not that of the remote.origin.url the dependency's config gives."""
    nested = init_repo(tmp_path / "nested")
    commit_file(nested, "n.txt", "n1\n")
    up = init_repo(tmp_path / "up")
    commit_file(up, "lib.txt", "v1\n")
    git(up, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "../nested",
        "extern/nested")  # fmt: skip
    git(up, "commit", "-q", "-m", "nested at n1")
    v1 = head(up)
    n2 = commit_file(nested, "n.txt", "n2\n")
    git(up / "extern" / "nested", "fetch", "-q")
    git(up / "extern" / "nested", "checkout", "-q", n2)
    git(up, "commit", "-q", "-am", "nested at n2")
    v2 = head(up)
    root = init_repo(tmp_path / "project")
    manifest = root / "qola.toml"
    manifest.write_text(f'[deps.lib]\npath = "3rdparty/lib"\nurl = "{up}"\ncommit = "{v1}"\n')
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "pins")
    assert procs.run("checkout", "-q", "-m", str(manifest)).returncode == 0
    lib = root / "3rdparty" / "lib"
    git(lib, "config", "remote.origin.url", f"http://127.0.0.1:{listener.port}/evil/lib")
    manifest.write_text(manifest.read_text().replace(v1, v2))
    chown_tree(root)
    proc = procs.run("checkout", "-m", str(manifest))
    assert proc.returncode == 0, proc.stderr
    assert listener.connections == 0
    assert (lib / "extern" / "nested" / "n.txt").read_text() == "n2\n"
    verified = procs.run("verify", "-m", str(manifest))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_a_partial_clone_whose_promisor_is_not_the_manifests_fetches_nothing_lazily(
    pinned_by_qola, upstream, listener, private_tmp
):
    """Its missing objects would be fetched, in any git command, from wherever its own
    config's promisor remote says: refused where transports are allowed."""
    project = pinned_by_qola
    lib = project.lib
    pack_folder = lib / ".git" / "objects" / "pack"
    for pack in sorted(pack_folder.glob("*.pack")):
        moved = pack.with_suffix(".moved")
        pack.rename(moved)
        pack.with_suffix(".idx").unlink()
        with moved.open("rb") as data:
            subprocess.run(["git", "-C", str(lib), "unpack-objects", "-q"], stdin=data,
                           check=True)  # fmt: skip
        moved.unlink()
    tree = git(lib, "rev-parse", "HEAD^{tree}")
    (lib / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    evil = f"http://127.0.0.1:{listener.port}/steal"
    for key, value in (("core.repositoryformatversion", "1"), ("extensions.partialClone",
                       "origin"), ("remote.origin.promisor", "true"),
                       ("remote.origin.url", evil)):  # fmt: skip
        git(lib, "config", key, value)
    project.set_pin(upstream.lib_v2, upstream.lib_tip)
    chown_tree(project.root)
    before = snapshot(project.root)
    proc = procs.run("checkout", "-m", str(project.manifest))
    assert proc.returncode == 3, proc.stderr
    assert f"whose promisor remote 'origin' is {evil}, which no manifest URL names" in proc.stderr
    assert listener.connections == 0
    assert snapshot(project.root) == before
    as_root(lib, "status", "--porcelain")
    assert listener.connections > 0


_PROTOCOL_V0 = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "protocol.version",
                "GIT_CONFIG_VALUE_0": "0"}  # fmt: skip


def test_a_root_cloned_partially_fetches_from_its_own_origin(make_project, upstream, tmp_path):
    """The root's remotes are the user's own: a root cloned without its files' contents
    (`--filter=blob:none`, as Renovate clones), whose promisor remote is its own origin
    that no manifest URL names, checks out, bumps and verifies. A dependency's partial
    clone is still refused (above)."""
    project = make_project()
    bare = tmp_path / "project.git"
    git(tmp_path, "clone", "-q", "--bare", str(project.root), str(bare))
    git(bare, "config", "uploadpack.allowFilter", "true")
    root = tmp_path / "partial"
    git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{bare}", str(root))
    assert git(root, "config", "remote.origin.promisor") == "true"
    manifest = root / "qola.toml"
    for args in (("checkout",), ("bump", "lib", "--to", upstream.lib_tip), ("verify",)):
        proc = procs.run(*args, "-m", str(manifest))
        assert proc.returncode == 0, (args, proc.stderr)
    assert f'commit = "{upstream.lib_tip}"' in manifest.read_text()
    assert head(root / "3rdparty" / "lib") == upstream.lib_tip


def test_a_second_url_of_origin_never_gets_the_search_for_a_commit(
    pinned_by_qola, upstream, listener, private_tmp, tmp_path
):
    """The user speaks protocol v0 (their own config), so a commit no branch tip names is
    refused by SHA and searched for by branch. The dependency's config gives origin two
    URLs, its own first (which git fetches from) and the manifest's last: the search goes
    by the manifest's URL, never to the first."""
    project = pinned_by_qola
    lib = project.lib
    up = tmp_path / "up"  # main: ... lib_v2, lib_tip, then `wanted` (which the pin names)
    git(tmp_path, "clone", "-q", str(upstream.lib), str(up))
    wanted = commit_file(up, "lib.txt", "wanted\n")
    commit_file(up, "lib.txt", "after\n")
    served_at(project, upstream, str(up))
    evil = f"http://127.0.0.1:{listener.port}/steal"
    git(lib, "config", "--unset-all", "remote.origin.url")
    git(lib, "config", "--add", "remote.origin.url", evil)
    git(lib, "config", "--add", "remote.origin.url", str(up))
    project.set_pin(upstream.lib_v2, wanted)
    chown_tree(project.root)
    proc = procs.run("checkout", "-m", str(project.manifest), env=_PROTOCOL_V0)
    assert proc.returncode == 0, proc.stderr
    assert listener.connections == 0
    assert git(lib, "-c", "safe.directory=*", "rev-parse", "HEAD") == wanted
    as_root(lib, "fetch", "-q", "origin")
    assert listener.connections > 0  # plain git fetches origin from the first URL


def test_a_dependencys_protocol_version_is_not_the_one_qola_fetches_with(
    pinned_by_qola, upstream, private_tmp, tmp_path
):
    """qola asks for a commit by SHA, which protocol v2 (git's default) serves whatever it
    is; a dependency's `protocol.version = 0` would make it search branches instead, and
    miss a commit on another one. (The user's own version stays theirs: the test above.)"""
    project = pinned_by_qola
    up = tmp_path / "up"  # `other`: lib_v2, `wanted` (which the pin names), a later commit
    git(tmp_path, "clone", "-q", str(upstream.lib), str(up))
    git(up, "checkout", "-q", "-b", "other", upstream.lib_v2)
    wanted = commit_file(up, "lib.txt", "wanted\n")
    commit_file(up, "lib.txt", "after\n")
    served_at(project, upstream, str(up))
    git(project.lib, "config", "protocol.version", "0")
    project.set_pin(upstream.lib_v2, wanted)  # the manifest tracks main, which lacks it
    chown_tree(project.root)
    proc = procs.run("checkout", "-m", str(project.manifest))
    assert proc.returncode == 0, proc.stderr
    assert git(project.lib, "-c", "safe.directory=*", "rev-parse", "HEAD") == wanted
