"""Remotes that refuse, vanish, hang or drop mid-transfer: exit 3 naming dep, URL, git's error."""

from __future__ import annotations

import shutil
import time

import procs
import servers
from repos import (
    PROTOCOL_V0,
    commit_file,
    git,
    head,
    large_project,
    ran,
    snapshot,
    temp_clones,
)

from qola.repo import store

# The first fetch of a pin (the error shown when it fails): by SHA, one commit deep.
FETCH = "git fetch -q --no-tags --no-recurse-submodules --depth 1 --end-of-options"


def point_at(project, url: str) -> None:
    text = project.manifest.read_text()
    old = text.split('url = "')[1].split('"')[0]
    project.manifest.write_text(text.replace(old, url))


def project_pin(project) -> str:
    return project.manifest.read_text().split('commit = "')[1].split('"')[0]


def has_line(stderr: str, prefix: str) -> bool:
    """stderr has a line starting with prefix (progress lines may come first)."""
    return any(line.startswith(prefix) for line in stderr.splitlines())


def assert_nothing_half_done(project) -> None:
    assert not project.lib.exists()
    assert not list((project.root / "3rdparty").glob(".*qola-clone*"))


def test_refused_connection_exits_3_naming_dep_url_and_git_error(make_project, run_qola):
    project = make_project()
    url = f"git://127.0.0.1:{servers.free_port()}/lib.git"
    point_at(project, url)
    res = run_qola("checkout", "-m", str(project.manifest))
    assert res.exit_code == 3
    assert has_line(res.stderr, f"qola: lib: `{FETCH} {url}")
    assert "Connection refused" in res.stderr
    assert res.stderr.endswith("qola: 1 of 1 dependency failed: lib\n")
    assert_nothing_half_done(project)


def test_remote_that_disappeared_exits_3_and_leaves_nothing(make_project, upstream, tmp_path):
    gone = tmp_path / "gone.git"
    shutil.copytree(upstream.lib / ".git", gone)
    project = make_project()
    point_at(project, str(gone))
    shutil.rmtree(gone)
    proc = procs.run("checkout", "-m", str(project.manifest))
    assert proc.returncode == 3
    assert has_line(proc.stderr, f"qola: lib: `{FETCH} {gone} ")
    assert f"'{gone}' does not appear to be a git repository" in proc.stderr
    assert_nothing_half_done(project)


def test_hanging_remote_times_out_with_exit_3_and_no_temp_clone(make_project):
    project = make_project()
    with servers.silent_server() as port:
        url = f"git://127.0.0.1:{port}/lib.git"
        point_at(project, url)
        started = time.monotonic()
        proc = procs.run("checkout", "--fetch-timeout", "2", "-m", str(project.manifest))
        took = time.monotonic() - started
    assert proc.returncode == 3, proc.stderr
    assert has_line(
        proc.stderr,
        f"qola: lib: `{FETCH} {url} "
        f"{project_pin(project)}`",
    )
    assert (
        "` did not finish within 2 s and was stopped; the remote may be unreachable or hanging\n"
        "hint: check the URL and the network, or raise --fetch-timeout (env QOLA_FETCH_TIMEOUT)\n"
    ) in proc.stderr
    assert took < 30  # one timeout, not one per fallback; the bound is loose for slow machines
    assert_nothing_half_done(project)


def test_fetch_timeout_from_environment(make_project):
    project = make_project()
    with servers.silent_server() as port:
        point_at(project, f"git://127.0.0.1:{port}/lib.git")
        proc = procs.run("checkout", "-m", str(project.manifest), env={"QOLA_FETCH_TIMEOUT": "1"})
    assert proc.returncode == 3
    assert "did not finish within 1 s" in proc.stderr


def test_existing_dep_whose_remote_is_gone_changes_nothing(behind_pin, upstream, tmp_path):
    """A clean git failure is not a kill: nothing changes and no unfinished move is recorded."""
    point_at(behind_pin, str(tmp_path / "gone.git"))
    fetch_head = "3rdparty/lib/.git/FETCH_HEAD"  # git's record of its last fetch, emptied
    before = snapshot(behind_pin.root)
    proc = procs.run("checkout", "-m", str(behind_pin.manifest))
    assert proc.returncode == 3, proc.stderr
    assert f"{tmp_path / 'gone.git'}" in proc.stderr
    after = snapshot(behind_pin.root)
    assert {k: v for k, v in after.items() if k != fetch_head} == {
        k: v for k, v in before.items() if k != fetch_head
    }
    assert head(behind_pin.lib) == upstream.lib_v2
    assert not store.moving_marker(behind_pin.lib / ".git").exists()


def test_one_failing_remote_does_not_stop_or_spoil_the_other(make_project, upstream):
    project = make_project(
        extra=(
            "[deps.other]\n"
            'path = "3rdparty/other"\n'
            f'url = "git://127.0.0.1:{servers.free_port()}/other.git"\n'
            f'commit = "{upstream.lib_v2}"\n'
        )
    )
    proc = procs.run("checkout", "-m", str(project.manifest))
    assert proc.returncode == 3
    assert "qola: other: `git fetch" in proc.stderr
    assert "qola: 1 of 2 dependencies failed: other" in proc.stderr
    assert head(project.lib) == upstream.lib_v2
    assert procs.run("verify", "-m", str(project.manifest), "lib").returncode == 0
    assert not (project.root / "3rdparty" / "other").exists()
    assert not list((project.root / "3rdparty").glob(".*qola-clone*"))


def test_remote_dropping_mid_clone_exits_3_then_rerun_succeeds(tmp_path, large_upstream):
    """A git daemon behind a proxy that cuts the connection after 2 MB of the pack."""
    with servers.git_daemon(large_upstream.path.parent) as daemon:
        proxy = servers.CuttingProxy(daemon, limit=2_000_000)
        try:
            url = f"git://127.0.0.1:{proxy.port}/{large_upstream.path.name}"
            root = tmp_path / "project"
            manifest = large_project(root, url, large_upstream.big_a)
            proc = procs.run("checkout", "-m", str(manifest))
            assert proxy.cut.is_set()
            assert proc.returncode == 3, proc.stderr
            assert has_line(proc.stderr, f"qola: big: `{FETCH} {url} ")
            assert "fatal:" in proc.stderr  # git's own words about the lost connection
            assert not (root / "3rdparty" / "big").exists()
            assert temp_clones(root) == []
            proxy.limit = None  # the network is back
            rerun = procs.run("checkout", "-m", str(manifest))
            assert rerun.returncode == 0, rerun.stderr
            assert head(root / "3rdparty" / "big") == large_upstream.big_a
            assert procs.run("verify", "--strict", "-m", str(manifest)).returncode == 0
        finally:
            proxy.close()


def test_daemon_refusing_sha_over_protocol_v0_falls_back_to_branches(
    make_project, upstream, run_qola, monkeypatch
):
    """A real git:// server speaking v0 without allowAnySHA1InWant: the depth-1 fetch of a
    pin that is no branch tip is refused, and the fallback fetches the branches."""
    for key, value in PROTOCOL_V0.items():
        monkeypatch.setenv(key, value)
    with servers.git_daemon(upstream.lib.parent) as port:
        project = make_project(pin=upstream.lib_v1)
        point_at(project, f"git://127.0.0.1:{port}/{upstream.lib.name}")
        res = run_qola("checkout", "-v", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(project.lib) == upstream.lib_v1
    assert head(project.nested) == upstream.nested_v1
    assert "the server refused to send" in res.stderr


def test_a_cache_filled_from_a_server_refusing_sha_over_protocol_v0_falls_back_to_track(
    make_project, upstream, run_qola, monkeypatch, tmp_path
):
    """The mirror fetches the pin as a checkout without the cache does: by SHA, then (the
    server refusing it) the tracked branch, and says so under -v; a second folder then
    checks out from the cache alone."""
    for key, value in PROTOCOL_V0.items():
        monkeypatch.setenv(key, value)
    cache = tmp_path / "cache"
    with servers.git_daemon(upstream.lib.parent) as port:
        url = f"git://127.0.0.1:{port}/{upstream.lib.name}"
        project = make_project(pin=upstream.lib_v1)
        point_at(project, url)
        res = run_qola("checkout", "-v", "--cache", str(cache), "-m", str(project.manifest))
        assert res.exit_code == 0, res.stderr
        mirror = store.mirror_path(cache, url)
        assert (
            f"qola: lib: into the cache {mirror}: the server refused to send "
            f"{upstream.lib_v1[:12]} by SHA; found it in 'main'\n"
        ) in res.stderr
    assert head(project.lib) == upstream.lib_v1
    assert git(mirror, "rev-parse", store.pin_ref(upstream.lib_v1)) == upstream.lib_v1
    second = make_project(pin=upstream.lib_v1, name="second")
    point_at(second, url)  # the server is gone
    res = run_qola("checkout", "--cache", str(cache), "-m", str(second.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(second.lib) == upstream.lib_v1
    assert head(second.nested) == upstream.nested_v1


def test_server_refusing_sha_searches_track_and_tags_and_no_further(
    make_project, upstream, run_qola, monkeypatch, tmp_path
):
    """A pin on a branch `feature`, below its tip: a v0 server refuses it by SHA. With
    track = "main" it is found nowhere, and nothing but main and the tags was fetched;
    naming its branch as track finds it."""
    served = tmp_path / "served"
    lib = served / "lib"
    shutil.copytree(upstream.lib, lib, symlinks=True)
    git(lib, "checkout", "-q", "-b", "feature", upstream.lib_v1)
    pin = commit_file(lib, "feature.txt", "one\n")
    commit_file(lib, "feature.txt", "two\n")
    git(lib, "checkout", "-q", "main")
    for key, value in PROTOCOL_V0.items():
        monkeypatch.setenv(key, value)
    with servers.git_daemon(served) as port:
        url = f"git://127.0.0.1:{port}/lib"
        project = make_project(pin=pin)
        point_at(project, url)
        before = snapshot(project.root)
        res = run_qola("checkout", "-v", "-m", str(project.manifest))
        assert res.exit_code == 3
        first = f"  `{FETCH} {url} {pin}` failed with exit code 1:\n"
        assert (
            f"qola: lib: commit {pin} is not in {url}: the server would not send it by SHA, "
            "and neither 'main' nor the tags contain it (nothing else was fetched); the first "
            f"error was:\n{first}"
            f"      error: Server does not allow request for unadvertised object {pin}\n"
        ) in res.stderr
        fetched = [c.rsplit(" ", 1)[-1] for c in ran(res.stderr) if c.startswith("fetch")]
        assert fetched == [pin, "main", "+refs/tags/*:refs/tags/*"]
        assert snapshot(project.root) == before
        project.manifest.write_text(project.manifest.read_text().replace('"main"', '"feature"'))
        res = run_qola("checkout", "-v", "-m", str(project.manifest))
    assert res.exit_code == 0, res.stderr
    assert f"the server refused to send {pin[:12]} by SHA; found it in 'feature'" in res.stderr
    assert head(project.lib) == pin


def test_missing_repository_is_the_first_error_and_no_fallback_is_tried(
    make_project, upstream, run_qola
):
    with servers.git_daemon(upstream.lib.parent) as port:
        url = f"git://127.0.0.1:{port}/no-such-repo.git"
        project = make_project()
        point_at(project, url)
        res = run_qola("checkout", "-v", "-m", str(project.manifest))
    assert res.exit_code == 3
    assert has_line(res.stderr, f"qola: lib: `{FETCH} {url} {upstream.lib_v2}` failed")
    assert "no such repository" in res.stderr
    assert len([c for c in ran(res.stderr) if c.startswith("fetch")]) == 1
