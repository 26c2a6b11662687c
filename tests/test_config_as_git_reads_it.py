"""What git would run is decided from git's own reading of a repository's config.

Each variant here is config text that a second parser reads otherwise than git: a tab in
a section header, a comment ending in a backslash, an include of `~user/...`, bytes that
are not UTF-8, characters Python takes for line breaks. The dependency belongs to another
uid, qola runs as root under the default `scoped` shim, and each hostile command would
leave a file in `marks`; after qola, plain git (trusting the tree) runs it, so the test
can fail. And the other way round: a config git accepts is never called one it does not.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import procs
import pytest
from repos import commit_file, git, head, init_repo, snapshot, without_noop_stamps

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


def leave(marks: Path, name: str, then: str = "cat") -> bytes:
    """A shell command that leaves marks/name, then does `then`; quoted as a config value."""
    command = f"touch {shlex.quote(str(marks / name))}; {then}"
    return b'"' + command.replace("\\", "\\\\").replace('"', '\\"').encode() + b'"'


def append(config: Path, text: bytes) -> None:
    config.write_bytes(config.read_bytes() + b"\n" + text)


def stat_dirty(tree: Path) -> None:
    """Every tracked file's stat changes, so that git status has to clean each again."""
    for folder, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            os.utime(os.path.join(folder, name), (1, 1))


def git_as_root(repo: Path, *args: str) -> None:
    """Plain git in a tree another user owns: what the variant does without qola."""
    subprocess.run(["git", "-c", "safe.directory=*", "-C", str(repo), *args],
                   capture_output=True, check=False)  # fmt: skip


# (name, the config text that defines a clean filter `driver` running the command, the
# driver's name as .gitattributes gives it, where the text goes)
Variant = Callable[[Path, bytes], tuple[bytes, bytes]]


def _tab_in_header(tmp: Path, command: bytes) -> tuple[bytes, bytes]:
    return b'[filter\t"pwn"]\n\tclean = ' + command + b"\n", b"pwn"


def _comment_ending_in_a_backslash(tmp: Path, command: bytes) -> tuple[bytes, bytes]:
    # A second parser joined the next line to the comment; git ends a comment at the line.
    return b'[filter "pwn"]\n\tx = a ;\\\n\tclean = ' + command + b"\n", b"pwn"


def _include_of_another_users_home(tmp: Path, command: bytes) -> tuple[bytes, bytes]:
    included = tmp / "x.inc"
    included.write_bytes(b'[filter "pwn"]\n\tclean = ' + command + b"\n")
    # ~root/ is root's home; `..` leaves it again, so nothing is written there.
    return b"[include]\n\tpath = ~root/.." + os.fsencode(included) + b"\n", b"pwn"


def _subsection_not_utf8(tmp: Path, command: bytes) -> tuple[bytes, bytes]:
    return b'[filter "p\xffwn"]\n\tclean = ' + command + b"\n", b"p\xffwn"


def _line_separator_in_subsection(tmp: Path, command: bytes) -> tuple[bytes, bytes]:
    name = "p\u2028wn".encode()
    return b'[filter "' + name + b'"]\n\tclean = ' + command + b"\n", name


def _vertical_tab_in_subsection(tmp: Path, command: bytes) -> tuple[bytes, bytes]:
    return b'[filter "p\vwn"]\n\tclean = ' + command + b"\n", b"p\vwn"


def _file_separator_in_subsection(tmp: Path, command: bytes) -> tuple[bytes, bytes]:
    return b'[filter "p\x1cwn"]\n\tclean = ' + command + b"\n", b"p\x1cwn"


def _continued_header_line(tmp: Path, command: bytes) -> tuple[bytes, bytes]:
    # A value continued onto the next line: a second parser that does not join it reads
    # a section header there; git reads one value, and the filter after it.
    return (b'[x]\n\ty = a \\\n[z]\n[filter "pwn"]\n\tclean = ' + command + b"\n", b"pwn")


def _tab_between_key_and_value(tmp: Path, command: bytes) -> tuple[bytes, bytes]:
    return b'[filter "pwn"]clean\t=\t' + command + b"\n", b"pwn"


VARIANTS = [_tab_in_header, _comment_ending_in_a_backslash, _include_of_another_users_home,
            _subsection_not_utf8, _line_separator_in_subsection, _vertical_tab_in_subsection,
            _file_separator_in_subsection, _continued_header_line,
            _tab_between_key_and_value]  # fmt: skip


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.__name__[1:] for v in VARIANTS])
def test_a_clean_filter_git_reads_never_runs_during_verify_or_checkout(
    pinned_by_qola, marks, private_tmp, tmp_path, variant
):
    if variant is _include_of_another_users_home and not os.path.isdir(os.path.expanduser("~root")):
        pytest.skip("no home folder for root")
    project = pinned_by_qola
    text, driver = variant(tmp_path, leave(marks, "clean"))
    append(project.lib / ".git" / "config", text)
    (project.lib / ".git" / "info").mkdir(exist_ok=True)
    (project.lib / ".git" / "info" / "attributes").write_bytes(b"* filter=" + driver + b"\n")
    chown_tree(project.root)
    stat_dirty(project.lib)
    verified = procs.run("verify", "-m", str(project.manifest))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    stat_dirty(project.lib)
    checkout = procs.run("checkout", "-m", str(project.manifest))
    assert checkout.returncode == 0, checkout.stderr
    assert list(marks.iterdir()) == []
    assert list(private_tmp.iterdir()) == []
    # The filter is real: plain git, trusting the tree, runs it.
    stat_dirty(project.lib)
    git_as_root(project.lib, "status", "--porcelain")
    assert [p.name for p in marks.iterdir()] == ["clean"]


def test_a_smudge_filter_behind_a_tab_in_its_header_never_runs_during_checkout(
    pinned_clean, upstream, marks, private_tmp, run_qola
):
    project = pinned_clean
    project.set_pin(upstream.lib_v2, upstream.lib_v1)
    assert run_qola("checkout", "-m", str(project.manifest)).exit_code == 0
    project.set_pin(upstream.lib_v1, upstream.lib_v2)  # lib.txt appears: smudged on checkout
    append(project.lib / ".git" / "config",
           b'[filter\t"pwn"]\n\tsmudge = ' + leave(marks, "smudge") + b"\n")  # fmt: skip
    (project.lib / ".git" / "info").mkdir(exist_ok=True)
    (project.lib / ".git" / "info" / "attributes").write_text("*.txt filter=pwn\n")
    chown_tree(project.root)
    proc = procs.run("checkout", "-m", str(project.manifest))
    assert proc.returncode == 0, proc.stderr
    assert (project.lib / "lib.txt").read_text() == "lib v2\n"
    assert list(marks.iterdir()) == []
    git_as_root(project.lib, "checkout", "-q", "--detach", upstream.lib_v1)
    git_as_root(project.lib, "checkout", "-q", "--detach", upstream.lib_v2)
    assert [p.name for p in marks.iterdir()] == ["smudge"]


def test_an_upload_pack_behind_a_tab_in_its_header_stops_the_checkout(
    behind_pin, upstream, marks, private_tmp
):
    """remote.<url>.uploadpack applies to a fetch by URL: git takes the first value it
    reads, so no command line can override it; the fetch is refused, nothing is run."""
    project = behind_pin
    url = b"file://" + os.fsencode(str(upstream.lib))  # git takes no remote name starting with /
    project.manifest.write_text(project.manifest.read_text().replace(
        f'url = "{upstream.lib}"', f'url = "{url.decode()}"'))  # fmt: skip
    append(project.lib / ".git" / "config",
           b'[remote\t"' + url + b'"]\n\tuploadpack = '
           + leave(marks, "upload-pack", "git-upload-pack \"$@\"") + b"\n")  # fmt: skip
    chown_tree(project.root)
    before = snapshot(project.root)
    proc = procs.run("checkout", "-m", str(project.manifest))
    assert proc.returncode == 3, proc.stderr
    assert f"sets remote.{url.decode()}.uploadpack = " in proc.stderr
    assert "git lets no command line override this one" in proc.stderr
    assert list(marks.iterdir()) == []
    assert snapshot(project.root) == before
    git_as_root(project.lib, "fetch", "-q", url.decode(), upstream.lib_tip)
    assert [p.name for p in marks.iterdir()] == ["upload-pack"]


ACCEPTED = {  # a quoted value besides: no config "as git writes it" that is read line by line
    "byte-order-mark": lambda config: b"\xef\xbb\xbf" + config + b'[x]\n\tk = "1"\n',
    "file-separator": lambda config: config + b'[x "a\x1cb"]\n\tk = "1"\n',
    "line-separator": lambda config: config + '[x "a\u2028b"]\n\tk = "1"\n'.encode(),
    "vertical-tab": lambda config: config + b'[x "a\vb"]\n\tk = "1"\n',
    "next-line": lambda config: config + '[x "a\u0085b"]\n\tk = "1"\n'.encode(),
    "no-final-line-feed": lambda config: config + b'[x]\n\tk = "1"',
    "continued-value": lambda config: config + b'[x]\n\tk = "a" \\\n b\n',
    "tab-in-header": lambda config: config + b'[x\t"y"]\n\tk = "1"\n',
    "comment-ending-in-a-backslash": lambda config: config + b'[x]\n\tk = "1" ;\\\n',
}


@pytest.mark.parametrize("change", list(ACCEPTED.values()), ids=list(ACCEPTED))
def test_a_config_git_accepts_is_never_called_one_it_does_not(
    pinned_by_qola, private_tmp, change
):
    project = pinned_by_qola
    for config in (project.lib / ".git" / "config",
                   project.lib / ".git" / "modules" / "extern" / "nested" / "config"):  # fmt: skip
        config.write_bytes(change(config.read_bytes()))
    git_as_root(project.lib, "status")  # git accepts them (it would fail otherwise)
    out = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(project.nested), "status"],
                         capture_output=True, text=True, check=False)  # fmt: skip
    assert out.returncode == 0, out.stderr
    chown_tree(project.root)
    before = snapshot(project.root)
    verified = procs.run("verify", "--format", "json", "-m", str(project.manifest))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert json.loads(verified.stdout)["ok"] is True
    checkout = procs.run("checkout", "-m", str(project.manifest))
    assert checkout.returncode == 0, checkout.stderr
    assert "not a repository git accepts" not in checkout.stderr
    assert "up to date" in checkout.stdout
    assert without_noop_stamps(snapshot(project.root)) == before


# git-lfs, set up as its Debian package and docs/security.md have it (the user's filter.lfs),
# runs commands that its own config keys name: git-lfs-config(5).
_LFS_FILTER = (
    '[filter "lfs"]\n\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge -- %f\n'
    "\tprocess = git-lfs filter-process\n\trequired = true\n"
)
needs_lfs = pytest.mark.skipif(shutil.which("git-lfs") is None, reason="needs git-lfs")


@pytest.fixture
def lfs_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's global config, with LFS set up."""
    config = tmp_path / "lfs.gitconfig"
    config.write_text(Path(os.environ["GIT_CONFIG_GLOBAL"]).read_text() + _LFS_FILTER)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    return config


@pytest.fixture
def lfs_project(tmp_path: Path, lfs_user: Path) -> tuple[Path, Path, str, str]:
    """(project root, upstream, v1 without LFS, v2 tracking data.bin in LFS), lib at v1."""
    up = init_repo(tmp_path / "up")
    v1 = commit_file(up, "lib.txt", "v1\n")
    (up / ".gitattributes").write_text("*.bin filter=lfs diff=lfs merge=lfs -text\n")
    (up / "data.bin").write_bytes(os.urandom(100))
    git(up, "add", ".gitattributes", "data.bin")
    git(up, "commit", "-q", "-m", "v2: lfs")
    v2 = head(up)
    root = init_repo(tmp_path / "project")
    (root / "qola.toml").write_text(
        f'[deps.lib]\npath = "3rdparty/lib"\nurl = "{up}"\ncommit = "{v1}"\ntrack = "main"\n')
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "pins")
    assert procs.run("checkout", "-q", "-m", str(root / "qola.toml")).returncode == 0
    return root, up, v1, v2


@needs_lfs
def test_an_lfs_transfer_agent_a_dependencys_config_names_never_runs(lfs_project, marks,
                                                                    private_tmp):  # fmt: skip
    root, up, v1, v2 = lfs_project
    shutil.rmtree(up / ".git" / "lfs")  # the object must be transferred to be smudged
    lib = root / "3rdparty" / "lib"
    agent = lib / ".git" / "agent"
    agent.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(marks / 'agent'))}\nexit 1\n")
    agent.chmod(0o755)
    append(lib / ".git" / "config", b'[lfs]\n\tstandalonetransferagent = pwn\n'
           b'[lfs "customtransfer.pwn"]\n\tpath = ' + os.fsencode(str(agent)) + b"\n")
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace(v1, v2))
    chown_tree(root)
    procs.run("checkout", "-m", str(manifest))  # the object is gone: the smudge may fail
    procs.run("checkout", "--force", "-m", str(manifest))
    assert list(marks.iterdir()) == []
    # The agent is real: plain git, trusting the tree, has git-lfs run it.
    git_as_root(lib, "checkout", "-q", "-f", "--detach", v1)
    git_as_root(lib, "checkout", "-q", "-f", "--detach", v2)
    assert [p.name for p in marks.iterdir()] == ["agent"]


@needs_lfs
def test_lfs_storage_a_dependencys_config_names_is_never_written(lfs_project, tmp_path,
                                                                private_tmp):  # fmt: skip
    """git-lfs, run as root by the user's filter during the checkout, keeps its objects,
    logs and temporary files where lfs.storage says: its default (the git dir's `lfs`)
    instead, never a folder of the tree's owner's choosing."""
    root, up, v1, v2 = lfs_project
    lib = root / "3rdparty" / "lib"
    elsewhere = tmp_path / "their-storage"
    git(lib, "config", "lfs.storage", str(elsewhere))
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace(v1, v2))
    chown_tree(root)
    proc = procs.run("checkout", "-m", str(manifest))
    assert proc.returncode == 0, proc.stderr
    assert (lib / "data.bin").read_bytes() == (up / "data.bin").read_bytes()
    assert not elsewhere.exists()
    assert (lib / ".git" / "lfs" / "objects").is_dir()
    # The key is real: plain git, trusting the tree, has git-lfs write there.
    git_as_root(lib, "checkout", "-q", "-f", "--detach", v1)
    shutil.rmtree(lib / ".git" / "lfs")
    git_as_root(lib, "checkout", "-q", "-f", "--detach", v2)
    assert elsewhere.is_dir()


class _Listener:
    """A loopback port that counts the connections it gets and closes each at once."""

    def __init__(self) -> None:
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/steal"
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


@needs_lfs
def test_git_lfs_never_takes_its_endpoint_from_a_remote_url_no_manifest_names(
    lfs_project, private_tmp
):
    """git-lfs derives its endpoint from origin's URL (its last one): the dependency's
    config giving origin its own URL would get the LFS requests and the user's
    credentials. Refused (exit 3), nothing changed; plain git-lfs, trusting the tree,
    connects there."""
    root, up, v1, v2 = lfs_project
    shutil.rmtree(up / ".git" / "lfs")  # the object must be transferred to be smudged
    lib = root / "3rdparty" / "lib"
    listener = _Listener()
    git(lib, "config", "--add", "remote.origin.url", listener.url)  # after the manifest's
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace(v1, v2))
    chown_tree(root)
    before = snapshot(root)
    proc = procs.run("checkout", "-m", str(manifest))
    assert proc.returncode == 3, proc.stderr
    assert f"sets remote.origin.url = '{listener.url}', which no manifest URL names" in proc.stderr
    assert "hint: if you trust it, set lfs.url in your own config" in proc.stderr
    assert listener.connections == 0
    assert snapshot(root) == before
    git_as_root(lib, "fetch", "-q", str(up), "main")
    git_as_root(lib, "checkout", "-q", "-f", "--detach", v2)  # the smudge fails: no matter
    assert listener.connections > 0


@needs_lfs
def test_git_lfs_takes_no_remote_a_dependencys_config_names_for_its_endpoint(
    lfs_project, private_tmp
):
    """remote.lfsDefault naming a remote of the dependency's own: git-lfs takes origin's
    (the manifest's) URL instead, and the LFS file arrives."""
    root, up, v1, v2 = lfs_project
    lib = root / "3rdparty" / "lib"
    listener = _Listener()
    git(lib, "remote", "add", "theirs", listener.url)
    git(lib, "config", "remote.lfsdefault", "theirs")
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace(v1, v2))
    chown_tree(root)
    proc = procs.run("checkout", "-m", str(manifest))
    assert proc.returncode == 0, proc.stderr
    assert (lib / "data.bin").read_bytes() == (up / "data.bin").read_bytes()
    assert listener.connections == 0


@needs_lfs
def test_the_roots_own_remote_is_no_lfs_endpoint_qola_refuses(lfs_user, upstream, tmp_path,
                                                              private_tmp):  # fmt: skip
    """The project's own origin (the user's remote, named by no manifest) does not stop a
    checkout of a submodule dependency, where qola runs git in the root too."""
    from superprojects import add_gitlink

    root = init_repo(tmp_path / "te")
    add_gitlink(root, "lib", "3rdparty/lib", str(upstream.lib), upstream.lib_v2)
    (root / "qola.toml").write_text(f'[deps.lib]\npath = "3rdparty/lib"\n'
                                    f'commit = "{upstream.lib_v2}"\n')  # fmt: skip
    git(root, "remote", "add", "origin", "https://example.invalid/me/te.git")
    proc = procs.run("checkout", "-m", str(root / "qola.toml"))
    assert proc.returncode == 0, proc.stderr
    assert git(root / "3rdparty" / "lib", "rev-parse", "HEAD") == upstream.lib_v2


@needs_lfs
def test_an_lfs_extension_a_dependencys_config_names_never_runs(lfs_project, marks,
                                                               private_tmp):  # fmt: skip
    """Its clean command is emptied: git-lfs cannot clean the file, and says so (git
    failed, exit 3); nothing of the repository's runs."""
    root, _up, v1, v2 = lfs_project
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace(v1, v2))
    assert procs.run("checkout", "-q", "-m", str(manifest)).returncode == 0
    lib = root / "3rdparty" / "lib"
    append(lib / ".git" / "config", b'[lfs "extension.pwn"]\n\tclean = '
           + leave(marks, "clean") + b"\n\tsmudge = " + leave(marks, "smudge")
           + b"\n\tpriority = 0\n")  # fmt: skip
    chown_tree(root)
    manifest.write_text(manifest.read_text().replace(v2, v1))
    for command in ("verify", "status", "checkout"):
        os.utime(lib / "data.bin", (1, 1))  # stat-dirty: git status cleans it again
        before = snapshot(root)
        proc = procs.run(command, "-m", str(manifest))
        assert proc.returncode == 3, (command, proc.stdout + proc.stderr)
        assert "clean filter 'lfs' failed" in proc.stderr
        assert snapshot(root) == before
    assert list(marks.iterdir()) == []
    git_as_root(lib, "status", "--porcelain")
    assert [p.name for p in marks.iterdir()] == ["clean;"]  # git-lfs splits on spaces


# Keys of `git help --config` (every key git 2.39 knows, from its manual pages) and of
# other manual pages (that list omits them) whose name says they may name a program.
_COMMANDISH = re.compile(r"cmd|command|program|helper|path$|textconv|driver|editor|pager|"
                         r"askpass|hook|tool|browser|viewer|tunnel|httpd|proxy|server$|"
                         r"process|clean$|smudge|external|pack$|exec|vcs", re.I)  # fmt: skip
_OTHER_PAGES = ["trailer.<token>.cmd", "trailer.<token>.command",  # git-interpret-trailers(1)
                "tar.<format>.command",  # git-archive(1)
                "filter.<driver>.process", "filter.<driver>.required",  # gitattributes(5)
                "sendemail.headerCmd", "sendemail.sendmailCmd"]  # git-send-email(1)  # fmt: skip
# Reviewed: matching the pattern, but naming no program git (or a tool it runs) would run
# from a repository's config, or covered otherwise; with the reason.
_NOT_A_COMMAND = {
    "advice.ignoredhook": "advice", "advice.waitingforeditor": "advice",
    "advice.addemptypathspec": "advice", "advice.updatesparsepath": "advice",
    "clone.filtersubmodules": "a boolean", "color.pager": "a boolean",
    "column.clean": "a layout", "clean.requireforce": "a boolean",
    "commit.cleanup": "a mode", "commitgraph.maxnewfilters": "a number",
    "commitgraph.readchangedpaths": "a boolean", "completion.commands": "a list of names",
    "core.fsmonitorhookversion": "a number", "core.quotepath": "a boolean",
    "core.hookspath": "qola's own git and qola exec get core.hooksPath=/dev/null",
    "core.fsmonitor": "qola's own git and qola exec get core.fsmonitor=false",
    "credential.usehttppath": "a boolean",
    "diff.<driver>.binary": "a boolean", "diff.<driver>.cachetextconv": "a boolean",
    "diff.guitool": "a tool's name: its difftool.<tool>.cmd is overridden",
    "diff.tool": "a tool's name: its difftool.<tool>.cmd is overridden",
    "merge.guitool": "a tool's name: its mergetool.<tool>.cmd is overridden",
    "merge.tool": "a tool's name: its mergetool.<tool>.cmd is overridden",
    "merge.<driver>.name": "a description", "merge.<driver>.recursive": "a driver's name",
    "difftool.prompt": "a boolean", "difftool.trustexitcode": "a boolean",
    "mergetool.<tool>.hideresolved": "a boolean", "mergetool.<tool>.trustexitcode": "a boolean",
    "mergetool.hideresolved": "a boolean", "mergetool.keepbackup": "a boolean",
    "mergetool.keeptemporaries": "a boolean", "mergetool.meld.hasoutput": "a boolean",
    "mergetool.meld.useautomerge": "a boolean", "mergetool.vimdiff.layout": "a layout",
    "mergetool.prompt": "a boolean", "mergetool.writetotemp": "a boolean",
    "format.coverfromdescription": "a mode", "fsck.fullpathname": "a severity",
    "fsck.gitmodulespath": "a severity", "receive.fsck.fullpathname": "a severity",
    "receive.fsck.gitmodulespath": "a severity", "receive.updateserverinfo": "a boolean",
    "repack.updateserverinfo": "a boolean", "gitcvs.dbdriver": "a Perl DBI driver's name",
    "gitweb.description": "text", "branch.<name>.description": "text",
    "guitool.<name>.argprompt": "text", "guitool.<name>.confirm": "a boolean",
    "guitool.<name>.needsfile": "a boolean", "guitool.<name>.noconsole": "a boolean",
    "guitool.<name>.norescan": "a boolean", "guitool.<name>.prompt": "text",
    "guitool.<name>.revprompt": "text", "guitool.<name>.revunmerged": "a boolean",
    "guitool.<name>.title": "text",
    "help.htmlpath": "a folder of pages (help.browser, which opens them, is overridden)",
    "instaweb.modulepath": "a folder of modules (instaweb.httpd is overridden)",
    "include.path": "followed by git's listing: its settings are overridden like any",
    "includeif.<condition>.path": "followed by git's listing: its settings are overridden",
    "http.proxyauthmethod": "a method's name", "remote.<name>.proxyauthmethod": "a method",
    "http.proxysslcertpasswordprotected": "a boolean",
    "notes.rewrite.<command>": "a boolean per command", "pager.<cmd>": "overridden: below",
    "rebase.abbreviatecommands": "a boolean", "rebase.rescheduledfailedexec": "a boolean",
    "rebase.reschedulefailedexec": "a boolean", "status.relativepaths": "a boolean",
    "remote.<name>.partialclonefilter": "a filter spec: the lazy fetch is the transports'",
    "remote.<name>.uploadpack": "refused where git would run it (no override is possible)",
    "remote.<name>.receivepack": "refused where git would run it (no override is possible)",
    "remote.<name>.vcs": "a remote helper: a transport, pinned to never (Transports)",
    "sendemail.smtpserveroption": "options", "sendemail.smtpserverport": "a port",
    "sendemail.smtpsslcertpath": "a file of certificates",
    "uploadpack.allowanysha1inwant": "a boolean", "uploadpack.allowfilter": "a boolean",
    "uploadpack.allowreachablesha1inwant": "a boolean", "uploadpack.allowrefinwant": "a boolean",
    "uploadpack.allowtipsha1inwant": "a boolean", "uploadpack.hiderefs": "refs",
    "uploadpack.keepalive": "a number", "uploadpackfilter.<filter>.allow": "a boolean",
    "uploadpackfilter.allow": "a boolean", "uploadpackfilter.tree.maxdepth": "a number",
    "uploadpack.packobjectshook": "read only from the system, global and command-line config",
    "http.sslcapath": "refused where git may make a request (tests/test_fetch_target.py)",
    "http.proxysslcainfo": "refused where git may make a request",
    "http.proxysslcert": "refused where git may make a request",
    "http.proxysslkey": "refused where git may make a request",
    "bundle.*": "bundle lists: git 2.39 reads them only in git clone --bundle-uri",
    "bundle.<id>.*": "bundle lists: git 2.39 reads them only in git clone --bundle-uri",
    "feature.*": "booleans", "fetch.fsck.<msg-id>": "a severity",
    "pretty.<name>": "a format", "remotes.<group>": "remote names",
}


def _instance(key: str) -> str:
    """A key as a config would spell it: placeholders given a name."""
    key = key.replace("<format>", "openpgp")  # gpg.<format>.*: openpgp, x509 or ssh
    key = re.sub(r"<[^>]+>", "x", key)
    return key[:-1] + "x" if key.endswith("*") else key


def _overridden(name: str) -> bool:
    from qola.gitrun import fetchtarget, overrides
    from qola.repo.configfile import entry_of

    entry = entry_of(name.lower() if "." not in name[:-1] else name, "value")
    entry = entry._replace(section=entry.section.lower(), key=entry.key.lower())
    pairs, extra = overrides.settings([entry], [])
    more, env = fetchtarget.settings([entry], [])
    names = {key.lower() for key, _ in [*pairs, *more]}
    if (entry.section, entry.key) == ("credential", "helper"):
        return ("credential.helper", "") in pairs  # the list emptied, then the user's
    return entry.name.lower() in names or bool(extra) or bool(env)


def test_every_key_git_documents_as_naming_a_program_is_overridden_or_reviewed():
    listed = subprocess.run(["git", "help", "--config"], capture_output=True, text=True,
                            check=True).stdout.split()  # fmt: skip
    assert "core.sshCommand" in listed and len(listed) > 500
    keys = [k for k in [*listed, *_OTHER_PAGES] if _COMMANDISH.search(k.rsplit(".", 1)[-1])
            or k.endswith((".*", ">"))]  # fmt: skip
    missing = []
    for key in keys:
        if key.lower() in _NOT_A_COMMAND:
            continue
        if key.endswith(".*") or key.endswith(">"):
            # A wildcard: alias.*, credential.<url>.*, http.<url>.*, pager.<cmd> ...
            samples = {"alias.*": ["alias.x"], "pager.<cmd>": ["pager.log"],
                       "credential.<url>.*": ["credential.https://x.helper"],
                       "http.<url>.*": ["http.https://x.proxy", "http.https://x.sslverify"],
                       "sendemail.<identity>.*": ["sendemail.x.tocmd", "sendemail.x.cccmd"],
                       }.get(key, [])  # fmt: skip
            if not samples and key.endswith(".*"):
                missing.append(key)
            missing += [s for s in samples if not _overridden(s)]
        elif not _overridden(_instance(key)):
            missing.append(key)
    assert missing == [], missing


def test_exec_runs_no_trailer_or_archive_command_of_the_tree(pinned_by_qola, marks, private_tmp,
                                                             tmp_path):  # fmt: skip
    """git interpret-trailers and git archive, in a build step under qola exec: neither
    the dependency's trailer.<token>.cmd nor the root's tar.<format>.command runs."""
    project = pinned_by_qola
    append(project.lib / ".git" / "config",
           b'[trailer "sign"]\n\tcmd = ' + leave(marks, "trailer", "echo") + b"\n")  # fmt: skip
    append(project.root / ".git" / "config",
           b'[tar "tgz"]\n\tcommand = ' + leave(marks, "tar", "gzip -cn") + b"\n")  # fmt: skip
    chown_tree(project.root)
    steps = (["git", "-C", str(project.lib), "interpret-trailers", "--trailer", "sign=x"],
             ["git", "-C", str(project.root), "archive", "--format=tgz", "-o",
              str(tmp_path / "dist.tgz"), "HEAD"])  # fmt: skip
    for step in steps:
        procs.run("exec", "-m", str(project.manifest), "--", *step)
    assert list(marks.iterdir()) == []
    git_as_root(project.root, "archive", "--format=tgz", "-o", str(tmp_path / "d.tgz"), "HEAD")
    assert [p.name for p in marks.iterdir()] == ["tar"]


def _overridden_keys(guard, repo: Path) -> set[str]:
    env = guard.overrides(repo, ["status"])
    return {v for k, v in env.items() if k.startswith("GIT_CONFIG_KEY_")}


def test_a_config_rewritten_in_place_with_its_mtime_put_back_is_listed_again(tmp_path):
    """Same inode, same size, the mtime put back (as an owner rewriting it concurrently
    can): the ctime, which only the kernel sets, says it changed."""
    from qola.gitrun.guard import Guard

    repo = init_repo(tmp_path / "repo")
    config = repo / ".git" / "config"
    text = b'[filter "p"]\n\tsmudge = touch pwned; cat\n'
    pad = b"#" + b"x" * (len(text) - 2) + b"\n"
    config.write_bytes(config.read_bytes() + pad)
    guard = Guard()
    assert "filter.p.smudge" not in _overridden_keys(guard, repo)
    info = os.stat(config)
    with config.open("r+b") as data:
        data.seek(info.st_size - len(pad))
        data.write(text)
    os.utime(config, ns=(info.st_atime_ns, info.st_mtime_ns))
    after = os.stat(config)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (info.st_ino, info.st_size,
                                                                 info.st_mtime_ns)  # fmt: skip
    assert "filter.p.smudge" in _overridden_keys(guard, repo)


def test_a_git_file_retargeted_after_the_listing_is_listed_again(tmp_path):
    from qola.gitrun.guard import Guard

    tree = tmp_path / "tree"
    tree.mkdir()
    for name, extra in (("a.git", b""), ("b.git", b'[filter "p"]\n\tsmudge = touch pwned\n')):
        git(tmp_path, "init", "-q", "--separate-git-dir", str(tmp_path / name), str(tree))
        append(tmp_path / name / "config", extra)
    (tree / ".git").write_text(f"gitdir: {tmp_path / 'a.git'}\n")
    guard = Guard()
    assert "filter.p.smudge" not in _overridden_keys(guard, tree)
    (tree / ".git").write_text(f"gitdir: {tmp_path / 'b.git'}\n")
    assert "filter.p.smudge" in _overridden_keys(guard, tree)


def test_a_config_include_that_is_a_fifo_is_refused(tmp_path):
    """git reads a FIFO again in every command, and gets what its writer gives it then:
    what the listing read proves nothing."""
    import threading

    from qola.gitrun.guard import Guard, UnsafeConfigError

    repo = init_repo(tmp_path / "repo")
    fifo = repo / ".git" / "inc"
    os.mkfifo(fifo)
    append(repo / ".git" / "config", b"[include]\n\tpath = inc\n")
    stop = threading.Event()

    def serve() -> None:
        with suppress(OSError):  # the last reader went away mid-write
            while not stop.is_set():
                with open(fifo, "wb") as out:
                    out.write(b"[x]\n\ty = 1\n")

    writer = threading.Thread(target=serve, daemon=True)
    writer.start()
    try:
        with pytest.raises(UnsafeConfigError) as refused:
            Guard().overrides(repo, ["status"])
    finally:
        stop.set()
        with suppress(OSError):
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    assert f"{fifo} is a FIFO" in str(refused.value)


def test_an_include_under_gits_prefix_is_read_as_git_reads_it(behind_pin, upstream,
                                                              private_tmp):  # fmt: skip
    """`%(prefix)/` is git's install prefix: git lists the config (the file is not there:
    nothing is included), so qola neither fails the checkout nor calls it unsafe."""
    project = behind_pin
    append(project.lib / ".git" / "config",
           b"[include]\n\tpath = %(prefix)/etc/qola-test-no-such-file.inc\n")  # fmt: skip
    subprocess.run(["git", "-C", str(project.lib), "config", "--list", "--includes"],
                   check=True, capture_output=True)  # fmt: skip
    chown_tree(project.root)
    checkout = procs.run("checkout", "-m", str(project.manifest))
    assert checkout.returncode == 0, checkout.stderr
    verified = procs.run("verify", "-m", str(project.manifest))
    assert verified.returncode == 0, verified.stdout + verified.stderr
