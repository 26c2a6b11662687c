"""Renovate moves qola pins with the preset docs/renovate/qola.json (docs/bots.md).

The real Renovate, from the npm registry (.ci/install_renovate puts it in .test-renovate/),
reads the preset from a loopback HTTP server, as a repository's `extends` names it, and
looks each pin's updates up in upstream repositories that a loopback `git daemon` serves
(`--platform=local`: it writes its report and stops). tests/renovate_apply.mjs then makes
the update Renovate proposed with Renovate's own code, as its branch worker does on a
platform whose commits git makes: a blobless clone of the project, the preset's edit of
the manifest, the postUpgradeTasks (allowed by the self-hosted config docs/bots.md shows),
the commit and its push. The branch it pushed is checked out with qola and verified.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import procs
import pytest
from repos import commit_file, git, head, init_repo
from servers import free_port, git_daemon

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
INSTALL = REPO / ".test-renovate"
PRESET = REPO / "docs" / "renovate" / "qola.json"
BOTS = REPO / "docs" / "bots.md"
APPLY = Path(__file__).with_name("renovate_apply.mjs")


# --- Renovate, its preset and its self-hosted config --------------------------------------


@dataclass(frozen=True)
class Renovate:
    node: Path
    dist: Path


@pytest.fixture(scope="module")
def renovate() -> Renovate:
    """The Renovate .ci/install_renovate installed (the README's test command runs it)."""
    node, dist = INSTALL / "node", INSTALL / "node_modules" / "renovate" / "dist"
    if not (INSTALL / "installed").is_file() or not node.exists() or not dist.is_dir():
        pytest.fail(
            f"{INSTALL} holds no Renovate: run the README's test command (.ci/test), which "
            f"installs it with {REPO / '.ci' / 'install_renovate'}"
        )
    return Renovate(node, dist)


def self_hosted_config() -> dict[str, Any]:
    """The self-hosted config docs/bots.md tells an administrator to add (the JSON block
    of its section "Self-hosted Renovate")."""
    section = BOTS.read_text().split("\n## Self-hosted Renovate\n", 1)[1].split("\n## ")[0]
    block = re.search(r"```json\n(.*?)\n```", section, re.S)
    assert block, "docs/bots.md shows no JSON block under Self-hosted Renovate"
    return dict(json.loads(block[1]))


@pytest.fixture(scope="module")
def preset_url() -> Iterator[str]:
    """docs/renovate/ served on loopback: the preset as a repository's `extends` fetches it."""
    handler = functools.partial(_QuietHandler, directory=str(PRESET.parent))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{PRESET.name}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@dataclass(frozen=True)
class Bot:
    """Everything a Renovate run here gets: no file of the real $HOME, no network beyond
    loopback, and `qola` on PATH being this checkout's."""

    renovate: Renovate
    preset_url: str
    home: Path
    env: dict[str, str]
    config: Path  # the self-hosted config file (RENOVATE_CONFIG_FILE)

    def lookup(self, clone: Path) -> dict[str, Any]:
        """`renovate --platform=local` in clone: its report of the repository."""
        report = clone.parent / f"{clone.name}-report.json"
        proc = subprocess.run(
            [str(self.renovate.node), str(self.renovate.dist / "renovate.js"),
             "--platform=local", "--report-type=file", f"--report-path={report}"],
            cwd=clone, env=self.env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        log = proc.stdout + proc.stderr
        assert proc.returncode == 0, log
        assert "RE2 not usable" not in log, log
        document = json.loads(report.read_text())
        assert document["problems"] == [], log
        found: dict[str, Any] = document["repositories"]["local"]
        assert found["problems"] == [], log
        return found

    def apply(self, served: Served, manifest: str, name: str, branch: str,
              **wanted: str) -> dict[str, Any]:  # fmt: skip
        """Make the update of dependency name in manifest whose fields are wanted, on branch
        (renovate_apply.mjs), and push it to served's remote; its result."""
        [dep] = [d for f in served.report["packageFiles"]["regex"] if f["packageFile"] == manifest
                 for d in f["deps"] if d["depName"] == name]  # fmt: skip
        [update] = [u for u in dep["updates"] if all(u.get(k) == v for k, v in wanted.items())]
        assert update["branchName"] == branch, update
        local = self.home.parent / f"renovate-clone-{branch.replace('/', '-')}"
        job = {
            "remote": str(served.remote), "localDir": str(local),
            "cacheDir": str(self.home.parent / "cache"),
            "allowedCommands": self_hosted_config()["allowedCommands"], "hostRules": HOSTS,
            "packageFiles": served.report["packageFiles"], "branchName": branch,
        }  # fmt: skip
        job_file = local.with_suffix(".json")
        job_file.write_text(json.dumps(job))
        proc = subprocess.run(
            [str(self.renovate.node), str(APPLY), str(self.renovate.dist), str(job_file)],
            env=self.env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
        assert result["artifactErrors"] == [], proc.stdout + proc.stderr
        return result


# The loopback preset server is an internal host: the administrator's grant for it.
HOSTS = [{"hostType": "preset", "allowInternal": True}]


@pytest.fixture(scope="module")
def bot(renovate: Renovate, preset_url: str, tmp_path_factory: pytest.TempPathFactory) -> Bot:
    base = tmp_path_factory.mktemp("renovate")
    home, bin_dir = base / "home", base / "bin"
    home.mkdir()
    bin_dir.mkdir()
    # What postUpgradeTasks run: this checkout's qola, git isolated as for every test
    # (Renovate gives a command HOME and PATH of its environment, little else).
    qola = bin_dir / "qola"
    kept = {k: os.environ[k] for k in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")}
    kept["PYTHONPATH"] = procs.environment()["PYTHONPATH"]
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in kept.items())
    qola.write_text(f'#!/bin/sh\n{exports}exec {shlex.quote(sys.executable)} -m qola "$@"\n')
    qola.chmod(0o755)
    config = base / "config.json"
    config.write_text(json.dumps({**self_hosted_config(), "hostRules": HOSTS}))
    env = {k: v for k, v in procs.environment().items()
           if not k.startswith(("RENOVATE_", "NODE_", "NPM_", "npm_"))}  # fmt: skip
    env.update(
        HOME=str(home),
        PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
        RENOVATE_CONFIG_FILE=str(config),
        RENOVATE_BASE_DIR=str(base / "base"),
        RENOVATE_CACHE_DIR=str(base / "cache"),
        LOG_LEVEL="debug",
        # Any HTTP request of Renovate's past loopback goes to a port nothing listens on.
        HTTP_PROXY=f"http://127.0.0.1:{free_port()}",
        HTTPS_PROXY=f"http://127.0.0.1:{free_port()}",
        NO_PROXY="127.0.0.1,localhost",
    )
    return Bot(renovate, preset_url, home, env, config)


# --- the upstream repositories and the projects that pin them ----------------------------


@dataclass(frozen=True)
class Upstream:
    """lib (with the nested submodule extern/nested) served at url; its history on main:
    c1 (v1.0, annotated; nested n1), c2 (v1.1, lightweight), c3 (v2.0, annotated; nested
    n2), c4 (the tip; v3.0-rc1, a pre-release)."""

    url: str
    nested_url: str
    c1: str
    c2: str
    c3: str
    c4: str
    n1: str
    n2: str
    v2_object: str  # the annotated tag v2.0's own object


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstream]:
    base = tmp_path_factory.mktemp("renovate-upstream")
    served, work = base / "served", base / "work"
    served.mkdir()
    with git_daemon(served) as port:
        url, nested_url = (f"git://127.0.0.1:{port}/{name}.git" for name in ("lib", "nested"))
        nested = init_repo(work / "nested")
        n1 = commit_file(nested, "nested.txt", "n1\n")
        git(work, "clone", "-q", "--bare", str(nested), str(served / "nested.git"))
        n2 = commit_file(nested, "nested.txt", "n2\n")
        git(nested, "push", "-q", str(served / "nested.git"), "main")
        lib = init_repo(work / "lib")
        commit_file(lib, "README", "lib\n")
        git(lib, "submodule", "add", "-q", nested_url, "extern/nested")
        git(lib, "-C", "extern/nested", "checkout", "-q", n1)
        git(lib, "add", "extern/nested")
        git(lib, "commit", "-q", "-m", "nested at n1")
        c1 = head(lib)
        git(lib, "tag", "-a", "-m", "release 1.0", "v1.0")
        c2 = commit_file(lib, "lib.txt", "1.1\n")
        git(lib, "tag", "v1.1")
        git(lib, "-C", "extern/nested", "checkout", "-q", n2)
        git(lib, "add", "extern/nested")
        c3 = commit_file(lib, "lib.txt", "2.0\n", "lib 2.0, nested n2")
        git(lib, "tag", "-a", "-m", "release 2.0", "v2.0")
        c4 = commit_file(lib, "lib.txt", "3.0 to be\n")
        git(lib, "tag", "v3.0-rc1")
        git(work, "clone", "-q", "--bare", str(lib), str(served / "lib.git"))
        v2_object = git(lib, "rev-parse", "v2.0")
        yield Upstream(url, nested_url, c1, c2, c3, c4, n1, n2, v2_object)


@dataclass(frozen=True)
class Served:
    """A project pushed to remote (a bare repository Renovate clones and pushes to), and
    Renovate's report of it."""

    remote: Path
    report: dict[str, Any]

    def deps(self, manifest: str) -> dict[str, dict[str, Any]]:
        """The dependencies Renovate found in manifest, by name."""
        files = [f for f in self.report["packageFiles"].get("regex", [])
                 if f["packageFile"] == manifest]  # fmt: skip
        return {dep["depName"]: dep for f in files for dep in f["deps"]}

    def branch(self, tmp_path: Path, name: str) -> Path:
        """A clone of branch name as a person would check out the pull request."""
        clone = tmp_path / name.replace("/", "-")
        git(tmp_path, "clone", "-q", "-b", name, str(self.remote), str(clone))
        return clone


def _serve(project: Path, bot: Bot, base: Path) -> Served:
    """Commit project (its renovate.json extending the preset), push it to a bare
    repository and run Renovate's lookup in a clone of it."""
    (project / "renovate.json").write_text(json.dumps({"extends": [bot.preset_url]}) + "\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "pins")
    remote = base / f"{project.name}.git"
    git(base, "clone", "-q", "--bare", str(project), str(remote))
    clone = base / f"{project.name}-lookup"
    git(base, "clone", "-q", str(remote), str(clone))
    return Served(remote, bot.lookup(clone))


def _submodule(project: Path, url: str, path: str, commit: str) -> None:
    git(project, "submodule", "add", "-q", url, path)
    git(project, "-C", path, "checkout", "-q", commit)
    git(project, "add", path)


DEPS_FORM = """\
# The project's pins.
[deps.lib]
path = "3rdparty/lib"
url = "{url}"
commit = "{c1}"  # lib 1.0
tag = "v1.0"

[deps.releases]
path = "3rdparty/releases"
url = "{url}"
commit = "{c1}"
tag = "v1.0"
track = "refs/tags/v1*"

[deps.tip]
path = "3rdparty/tip"
url = "{url}"
commit = "{c1}"
track = "main"
submodules = false

[deps.labelled-tip]
path = "3rdparty/labelled-tip"
url = "{url}"
commit = "{c1}"
tag = "v1.0"
track = "main"

[deps.default]
url = "{url}"
path = "3rdparty/default"
commit = "{c1}"
"""


@pytest.fixture(scope="module")
def deps_form(bot: Bot, upstream: Upstream, tmp_path_factory: pytest.TempPathFactory) -> Served:
    """qola.toml in [deps.NAME] tables: lib a submodule of the root at v1.0 (with lib's
    nested submodule), the others plain clones."""
    base = tmp_path_factory.mktemp("renovate-deps")
    project = init_repo(base / "project")
    _submodule(project, upstream.url, "3rdparty/lib", upstream.c1)
    (project / ".gitignore").write_text(
        "".join(f"/3rdparty/{name}/\n" for name in ("releases", "tip", "labelled-tip", "default"))
    )
    (project / "qola.toml").write_text(DEPS_FORM.format(url=upstream.url, c1=upstream.c1))
    return _serve(project, bot, base)


TE_FORM = """\
[qola]
namespace = "te"
aiter_url = "{url}"
aiter_commit = "{c1}"
aiter_tag = "v1.0"

ck_url = "{url}"
# composable_kernel follows its main branch
ck_commit = "{c1}"
ck_track = "main"
ck_submodules = false

[build]
gpu_targets = ["gfx942", "gfx950"]

[[modules]]
name = "fused_attn_aiter"
depends = ["aiter"]
"""

NOT_PINS = """\
[qola]
one_url = "{url}"
other_commit = "{c1}"
short_url = "{url}"
short_commit = "{short}"

[deps.no-url]
path = "3rdparty/no-url"
commit = "{c1}"
"""


@pytest.fixture(scope="module")
def te_form(bot: Bot, upstream: Upstream, tmp_path_factory: pytest.TempPathFactory) -> Served:
    """TransformerEngine's form, [qola] <name>_commit, in qola_manifest.toml: aiter at the
    release v1.0, ck following main, both submodules of the root; and
    other/qola-manifest.toml, whose keys the preset must not take for pins."""
    base = tmp_path_factory.mktemp("renovate-te")
    project = init_repo(base / "te")
    _submodule(project, upstream.url, "3rdparty/aiter", upstream.c1)
    _submodule(project, upstream.url, "3rdparty/ck", upstream.c1)
    (project / "qola_manifest.toml").write_text(TE_FORM.format(url=upstream.url, c1=upstream.c1))
    (project / "other").mkdir()
    (project / "other" / "qola-manifest.toml").write_text(
        NOT_PINS.format(url=upstream.url, c1=upstream.c1, short=upstream.c1[:10])
    )
    return _serve(project, bot, base)


def checked_out(clone: Path, manifest: str) -> None:
    """`qola checkout` and `qola verify` of the pull request's branch, both exit 0."""
    for command in ("checkout", "verify"):
        proc = procs.run(command, "-m", str(clone / manifest))
        assert proc.returncode == 0, (command, proc.stdout, proc.stderr)


def pins(clone: Path, manifest: str) -> dict[str, Any]:
    return tomllib.loads((clone / manifest).read_text())


# --- what Renovate finds ----------------------------------------------------------------


def test_the_preset_passes_renovates_validator_with_nothing_to_migrate(bot, tmp_path):
    """--strict: an option Renovate would rename or rewrite (such as fileMatch, now
    managerFilePatterns) fails it."""
    proc = subprocess.run(
        [str(bot.renovate.node), str(bot.renovate.dist / "config-validator.js"), "--strict",
         str(PRESET)],
        cwd=tmp_path, env=bot.env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Config validated successfully" in proc.stdout + proc.stderr


def test_renovate_finds_each_kind_of_pin_and_what_it_follows(deps_form, upstream):
    """A labelled pin follows the remote's releases (an annotated tag's commit, not its
    object; a pre-release not for a release), a release track only the tags it names, a
    branch its tip, a pin with neither the remote's default branch."""
    deps = deps_form.deps("qola.toml")
    proposed = {name: [(u.get("newValue"), u["newDigest"]) for u in dep["updates"]]
                for name, dep in deps.items()}  # fmt: skip
    assert proposed == {
        "lib": [("v1.1", upstream.c2), ("v2.0", upstream.c3)],
        "releases": [("v1.1", upstream.c2)],
        "tip": [("main", upstream.c4)],
        "labelled-tip": [("main", upstream.c4)],
        "default": [("", upstream.c4)],
    }
    assert upstream.v2_object != upstream.c3
    kinds = {name: (dep["datasource"], dep["currentValue"]) for name, dep in deps.items()}
    assert kinds == {"lib": ("git-tags", "v1.0"), "releases": ("git-tags", "v1.0"),
                     "tip": ("git-refs", "main"), "labelled-tip": ("git-refs", "main"),
                     "default": ("git-refs", "")}  # fmt: skip
    assert {dep["packageName"] for dep in deps.values()} == {upstream.url}
    assert {dep["currentDigest"] for dep in deps.values()} == {upstream.c1}


def test_renovate_finds_the_transformerengine_pins_and_nothing_else(te_form, upstream):
    """<name>_url, then <name>_commit (comments between), with <name>_tag or _track; keys
    of two names, an abbreviated pin and a table without a url are no pins to it."""
    deps = te_form.deps("qola_manifest.toml")
    proposed = {name: [(u.get("newValue"), u["newDigest"]) for u in dep["updates"]]
                for name, dep in deps.items()}  # fmt: skip
    assert proposed == {
        "aiter": [("v1.1", upstream.c2), ("v2.0", upstream.c3)],
        "ck": [("main", upstream.c4)],
    }
    assert te_form.deps("other/qola-manifest.toml") == {}


# --- what its pull request holds ---------------------------------------------------------


def test_a_release_of_a_submodule_moves_the_pin_label_and_gitlink(
    bot, deps_form, upstream, tmp_path
):
    """lib, a submodule of the root at v1.0, to the annotated v2.0: the pin is v2.0's
    commit, the label v2.0 (the comment on the pin's line kept), the gitlink moves with it
    and the nested submodule with that; `qola verify` passes on the branch."""
    result = bot.apply(deps_form, "qola.toml", "lib", "renovate/lib-2.x", newValue="v2.0")
    assert sorted(result["updatedArtifacts"]) == ["3rdparty/lib", "qola.toml"]
    clone = deps_form.branch(tmp_path, "renovate/lib-2.x")
    text = (clone / "qola.toml").read_text()
    assert text == DEPS_FORM.format(url=upstream.url, c1=upstream.c1).replace(
        f'commit = "{upstream.c1}"  # lib 1.0\ntag = "v1.0"',
        f'commit = "{upstream.c3}"  # lib 1.0\ntag = "v2.0"',
    )
    assert git(clone, "ls-tree", "HEAD", "3rdparty/lib").split()[2] == upstream.c3
    assert git(clone, "diff", "--name-only", "HEAD~1", "HEAD").split() == [
        "3rdparty/lib", "qola.toml"]  # fmt: skip
    checked_out(clone, "qola.toml")
    assert head(clone / "3rdparty" / "lib" / "extern" / "nested") == upstream.n2


def test_a_release_track_moves_to_the_newest_tag_it_names(bot, deps_form, upstream, tmp_path):
    """refs/tags/v1*: to the lightweight v1.1; a plain clone, so no gitlink."""
    bot.apply(deps_form, "qola.toml", "releases", "renovate/releases-1.x", newValue="v1.1")
    clone = deps_form.branch(tmp_path, "renovate/releases-1.x")
    dep = pins(clone, "qola.toml")["deps"]["releases"]
    assert (dep["commit"], dep["tag"], dep["track"]) == (upstream.c2, "v1.1", "refs/tags/v1*")
    assert git(clone, "diff", "--name-only", "HEAD~1", "HEAD").split() == ["qola.toml"]
    checked_out(clone, "qola.toml")


def test_a_branch_tip_is_labelled_by_qola_not_by_the_old_label(bot, deps_form, upstream, tmp_path):
    """A pin following main, labelled v1.0, to main's tip: qola bump writes the label of
    the new commit (its only tag, v3.0-rc1), where Renovate's edit alone left v1.0."""
    bot.apply(deps_form, "qola.toml", "labelled-tip", "renovate/labelled-tip-digest",
              newDigest=upstream.c4)  # fmt: skip
    clone = deps_form.branch(tmp_path, "renovate/labelled-tip-digest")
    dep = pins(clone, "qola.toml")["deps"]["labelled-tip"]
    assert (dep["commit"], dep["tag"], dep["track"]) == (upstream.c4, "v3.0-rc1", "main")
    checked_out(clone, "qola.toml")


def test_the_default_branch_moves_a_pin_that_follows_nothing_named(
    bot, deps_form, upstream, tmp_path
):
    bot.apply(deps_form, "qola.toml", "default", "renovate/default-digest", newDigest=upstream.c4)
    clone = deps_form.branch(tmp_path, "renovate/default-digest")
    dep = pins(clone, "qola.toml")["deps"]["default"]
    assert (dep["commit"], "tag" in dep, "track" in dep) == (upstream.c4, True, False)
    checked_out(clone, "qola.toml")


def test_transformerengine_pins_move_with_their_gitlinks(bot, te_form, upstream, tmp_path):
    """aiter_commit to the release v2.0 (aiter_tag with it), ck_commit to main's tip (qola
    labels it); every other byte of the file as it was; each branch verifies."""
    bot.apply(te_form, "qola_manifest.toml", "aiter", "renovate/aiter-2.x", newValue="v2.0")
    bot.apply(te_form, "qola_manifest.toml", "ck", "renovate/ck-digest", newDigest=upstream.c4)
    original = TE_FORM.format(url=upstream.url, c1=upstream.c1)
    moved = {
        "renovate/aiter-2.x": ("3rdparty/aiter", upstream.c3, original.replace(
            f'aiter_commit = "{upstream.c1}"\naiter_tag = "v1.0"',
            f'aiter_commit = "{upstream.c3}"\naiter_tag = "v2.0"')),
        "renovate/ck-digest": ("3rdparty/ck", upstream.c4, original.replace(
            f'ck_commit = "{upstream.c1}"\n',
            f'ck_commit = "{upstream.c4}"\nck_tag = "v3.0-rc1"\n')),
    }  # fmt: skip
    for branch, (path, commit, text) in moved.items():
        clone = te_form.branch(tmp_path, branch)
        assert (clone / "qola_manifest.toml").read_text() == text
        assert git(clone, "ls-tree", "HEAD", path).split()[2] == commit
        checked_out(clone, "qola_manifest.toml")
