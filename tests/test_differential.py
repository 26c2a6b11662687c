"""Differential: no fast path says "up to date" where verify or git itself disagrees.

Each case copies a synced tree, lets qola's no-op answer once (which leaves its stamp
and a CMake results file with the CMake stamp), applies a sequence of mutations (HEADs,
refs, packed-refs, gitfiles, symlinks, broken repositories, manifest and patch edits
with mtimes restored, overrides, nested moves), and then asks, in this order:

- git itself: does `git -C lib` take lib for its own repository, is HEAD the pin and a
  commit it has, does `git submodule status --recursive` show every nested submodule
  at its gitlink;
- verify (the slow path): no `missing`, `wrong-commit`, `submodule`, `patches` or `unsafe`
  problem (`dirty` alone is local modification, which no fast path speaks of);
- the no-op with its stamp, QoLA.cmake's own checker on the CMake stamp (`cmake -P`),
  the no-op without a stamp, and the full checkout.

None of the four may claim the tree is at its pins unless verify and git agree (the fast
path never more optimistic than the slow path), and verify never unless git agrees (the
slow path never more optimistic than git). With an override set, the no-op must say
exactly what the full command says. Every single mutation runs once, then seeded random
sequences from a fixed seed; DIFFERENTIAL_SEED=random explores others (the seed is
printed) and DIFFERENTIAL_SEED=<seed> replays one.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import Upstream
from repos import git
from stamp_checkers import cmake_holds
from test_cmake import _pypi_cmake

from qola import noop

# The problems that deny "up to date": a repository qola refuses to read (`unsafe`) is no
# agreement, whatever else verify says of it.
COMMIT_KINDS = {"missing", "wrong-commit", "submodule", "patches", "unsafe", "developing"}
RANDOM_SEQUENCES = 45
FIXED_SEED = 834481109  # its sequences once caught verify judging a repository qola won't run in


@dataclass
class Case:
    """A copy of the synced tree, and what the mutations need."""

    root: Path
    scratch: Path  # a folder outside the root, for copies
    upstream: Upstream
    rng: random.Random
    env: dict[str, str] = field(default_factory=dict)

    @property
    def manifest(self) -> Path:
        return self.root / "qola.toml"

    @property
    def lib(self) -> Path:
        return self.root / "3rdparty" / "lib"

    @property
    def nested(self) -> Path:
        return self.lib / "extern" / "nested"

    @property
    def nested_gitdir(self) -> Path:
        return self.lib / ".git" / "modules" / "extern" / "nested"

    @property
    def results(self) -> Path:
        return self.root / "build" / "results.cmake"


# --- mutations: each one thing a person, a tool or an accident does to a tree -------------


def _keep_mtime(path: Path, change: Callable[[], object]) -> None:
    """change() the file, then give it back its modification time (a build tool's trick)."""
    stat = path.stat()
    change()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def lib_to_other_commit(c: Case) -> None:
    git(c.lib, "checkout", "-q", "--detach", c.upstream.lib_v1)


def lib_commit_on_top(c: Case) -> None:
    git(c.lib, "commit", "-q", "--allow-empty", "-m", "mine")


def lib_branch_at_pin(c: Case) -> None:
    git(c.lib, "checkout", "-q", "-B", "work")


def lib_head_rewritten_same(c: Case) -> None:
    head = c.lib / ".git" / "HEAD"
    head.write_text(head.read_text())


def lib_head_file_to_other_commit(c: Case) -> None:
    head = c.lib / ".git" / "HEAD"
    _keep_mtime(head, lambda: head.write_text(c.upstream.lib_tip + "\n"))


def lib_head_symlink_to_branch_at_pin(c: Case) -> None:
    sha = git(c.lib, "rev-parse", "HEAD")
    git(c.lib, "update-ref", "refs/heads/linked", sha)
    head = c.lib / ".git" / "HEAD"
    head.unlink()
    head.symlink_to("refs/heads/linked")


def nested_to_other_commit(c: Case) -> None:
    git(c.nested, "checkout", "-q", "--detach", c.upstream.nested_v1)


def nested_commit_on_top(c: Case) -> None:
    git(c.nested, "commit", "-q", "--allow-empty", "-m", "mine")


def nested_head_file_to_other_commit(c: Case) -> None:
    head = c.nested_gitdir / "HEAD"
    _keep_mtime(head, lambda: head.write_text(c.upstream.nested_v1 + "\n"))


def nested_deinit(c: Case) -> None:
    git(c.lib, "submodule", "deinit", "-q", "--force", "extern/nested")


def nested_deinit_gitfile_put_back(c: Case) -> None:
    gitfile = c.nested / ".git"
    text = gitfile.read_text() if gitfile.is_file() else None
    nested_deinit(c)
    if text is not None:
        gitfile.write_text(text)


def nested_config_removed(c: Case) -> None:
    git(c.lib, "config", "--remove-section", "submodule.extern/nested")


def nested_emptied(c: Case) -> None:
    shutil.rmtree(c.nested)
    c.nested.mkdir()


def lib_pack_refs(c: Case) -> None:
    git(c.lib, "pack-refs", "--all")


def lib_refs_folder_gone(c: Case) -> None:
    git(c.lib, "pack-refs", "--all")
    shutil.rmtree(c.lib / ".git" / "refs")


def lib_packed_refs_gone(c: Case) -> None:
    git(c.lib, "pack-refs", "--all")
    (c.lib / ".git" / "packed-refs").unlink(missing_ok=True)


def nested_refs_folder_gone(c: Case) -> None:
    git(c.nested, "pack-refs", "--all")
    shutil.rmtree(c.nested_gitdir / "refs")


def lib_objects_moved_away(c: Case) -> None:
    (c.lib / ".git" / "objects").rename(c.scratch / "lib-objects")


def nested_objects_moved_away(c: Case) -> None:
    (c.nested_gitdir / "objects").rename(c.scratch / "nested-objects")


def lib_bare(c: Case) -> None:
    git(c.lib, "config", "core.bare", "true")


def lib_bare_not_a_boolean(c: Case) -> None:
    with (c.lib / ".git" / "config").open("a") as config:
        config.write("[core]\n\tbare = maybe\n")


def lib_worktree_elsewhere(c: Case) -> None:
    git(c.lib, "config", "core.worktree", str(c.root))


def lib_format_2(c: Case) -> None:
    git(c.lib, "config", "core.repositoryformatversion", "2")


def lib_unknown_extension(c: Case) -> None:
    git(c.lib, "config", "core.repositoryformatversion", "1")
    git(c.lib, "config", "extensions.qolaNoSuchThing", "true")


def lib_config_garbage(c: Case) -> None:
    config = c.lib / ".git" / "config"
    _keep_mtime(config, lambda: config.write_text(config.read_text() + "this is not config\n"))


def lib_commondir_elsewhere(c: Case) -> None:
    (c.lib / ".git" / "commondir").write_text(str(c.nested_gitdir) + "\n")


def nested_worktree_nowhere(c: Case) -> None:
    git(c.nested, "config", "core.worktree", "../../../../nowhere")


def nested_bare(c: Case) -> None:
    git(c.nested_gitdir, "config", "core.bare", "true")


def nested_gitfile_nowhere(c: Case) -> None:
    (c.nested / ".git").write_text("gitdir: ../../.git/modules/no/such\n")


def nested_gitfile_garbage(c: Case) -> None:
    (c.nested / ".git").write_text("this is not a gitfile\n")


def nested_gitfile_absolute(c: Case) -> None:
    (c.nested / ".git").write_text(f"gitdir: {c.nested_gitdir}\n")


def nested_gitfile_to_a_copy_elsewhere(c: Case) -> None:
    copy = c.lib / ".git" / "modules" / "copy"
    shutil.copytree(c.nested_gitdir, copy, symlinks=True)
    (copy / "HEAD").write_text(c.upstream.nested_v1 + "\n")
    gitfile = c.nested / ".git"
    _keep_mtime(gitfile, lambda: gitfile.write_text("gitdir: ../../.git/modules/copy\n"))


def _copy_of_lib_with_nested_at_v1(c: Case) -> Path:
    copy = c.root / "3rdparty" / "copy"
    if not copy.exists():
        shutil.copytree(c.lib, copy, symlinks=True)
        git(copy / "extern" / "nested", "checkout", "-q", "--detach", c.upstream.nested_v1)
    return copy


def folder_in_lib_became_link_to_a_copy(c: Case) -> None:
    """The issue's repro: rm -rf deps/a/lib && ln -s ../copy/lib deps/a/lib."""
    _copy_of_lib_with_nested_at_v1(c)
    shutil.rmtree(c.lib / "extern")
    (c.lib / "extern").symlink_to("../copy/extern")


def nested_folder_became_link_to_a_copy(c: Case) -> None:
    _copy_of_lib_with_nested_at_v1(c)
    shutil.rmtree(c.nested)
    c.nested.symlink_to("../../copy/extern/nested")


def lib_modules_became_link_to_a_copy(c: Case) -> None:
    modules = c.lib / ".git" / "modules"
    copy = c.scratch / "modules-copy"
    shutil.copytree(modules, copy, symlinks=True)
    (copy / "extern" / "nested" / "HEAD").write_text(c.upstream.nested_v1 + "\n")
    shutil.rmtree(modules)
    modules.symlink_to(copy)


def lib_became_link_to_a_copy_at_another_commit(c: Case) -> None:
    copy = c.root / "3rdparty" / "other"
    shutil.copytree(c.lib, copy, symlinks=True)
    git(copy, "checkout", "-q", "--detach", c.upstream.lib_v1)
    shutil.rmtree(c.lib)
    c.lib.symlink_to("other")


def lib_became_link_to_a_copy_at_the_pin(c: Case) -> None:
    copy = c.root / "3rdparty" / "same"
    shutil.copytree(c.lib, copy, symlinks=True)
    shutil.rmtree(c.lib)
    c.lib.symlink_to("same")


def third_party_became_link_out_of_the_root(c: Case) -> None:
    outside = c.scratch / "outside"
    outside.mkdir(exist_ok=True)
    (c.root / "3rdparty").rename(outside / "3rdparty")
    (c.root / "3rdparty").symlink_to(outside / "3rdparty")


def manifest_repinned_same_mtime(c: Case) -> None:
    text = c.manifest.read_text()
    _keep_mtime(c.manifest, lambda: c.manifest.write_text(
        text.replace(c.upstream.lib_v2, c.upstream.lib_tip)))  # fmt: skip


def manifest_comment_edited_same_mtime(c: Case) -> None:
    text = c.manifest.read_text()
    _keep_mtime(c.manifest, lambda: c.manifest.write_text(text.replace("# lib v2", "# v2!!")))


def manifest_submodules_off(c: Case) -> None:
    c.manifest.write_text(c.manifest.read_text() + "submodules = false\n")


def manifest_patches_added(c: Case) -> None:
    (c.root / "patches").mkdir(exist_ok=True)
    (c.root / "patches" / "0001-x.patch").write_text("not applied yet\n")
    if "patches =" not in c.manifest.read_text():
        c.manifest.write_text(c.manifest.read_text() + 'patches = "patches"\n')


def patch_edited_same_mtime(c: Case) -> None:
    manifest_patches_added(c)
    patch = c.root / "patches" / "0001-x.patch"
    _keep_mtime(patch, lambda: patch.write_text("edited\n"))


def root_gitmodules_written(c: Case) -> None:
    (c.root / ".gitmodules").write_text('[submodule "x"]\n\tpath = x\n\turl = ../x.git\n')


def override_set(c: Case) -> None:
    copy = c.scratch / "my-lib"
    if not copy.exists():
        shutil.copytree(c.lib, copy, symlinks=True)
    c.env["QOLA_SOURCE_DIR_LIB"] = str(copy)


def override_cleared(c: Case) -> None:
    c.env["QOLA_SOURCE_DIR_LIB"] = ""


def lib_git_dir_moved_out_and_overridden_as_itself(c: Case) -> None:
    """The issue's case: lib's git dir moved out of the project and a link left to it,
    lib reached by git in the root (the root records it, as for a submodule of the root),
    and the override naming lib's own folder, relative. verify runs git in the root, which
    refuses what it reaches there; the no-op and the CMake stamp said "overridden"."""
    sha = git(c.lib, "rev-parse", "HEAD")
    git(c.root, "update-index", "--add", "--cacheinfo", f"160000,{sha},3rdparty/lib")
    (c.lib / ".git").rename(c.scratch / "lib-git")
    (c.lib / ".git").symlink_to(c.scratch / "lib-git")
    c.env["QOLA_SOURCE_DIR_LIB"] = "3rdparty/lib"


def lib_git_dir_moved_out_and_overridden_elsewhere(c: Case) -> None:
    """The same with the override naming a copy outside the project: lib's own folder
    is still the project's, and still reached from the root."""
    override_set(c)
    sha = git(c.lib, "rev-parse", "HEAD")
    git(c.root, "update-index", "--add", "--cacheinfo", f"160000,{sha},3rdparty/lib")
    (c.lib / ".git").rename(c.scratch / "lib-git")
    (c.lib / ".git").symlink_to(c.scratch / "lib-git")


def develop_marked(c: Case) -> None:
    """`qola develop lib`: used as it is, and said so by the full command every time."""
    mark = c.root / ".git" / "qola" / "developing" / "lib"
    mark.parent.mkdir(parents=True, exist_ok=True)
    mark.write_bytes(b"")


def develop_ended(c: Case) -> None:
    (c.root / ".git" / "qola" / "developing" / "lib").unlink(missing_ok=True)


MUTATIONS: list[Callable[[Case], None]] = [
    lib_to_other_commit, lib_commit_on_top, lib_branch_at_pin, lib_head_rewritten_same,
    lib_head_file_to_other_commit, lib_head_symlink_to_branch_at_pin, nested_to_other_commit,
    nested_commit_on_top, nested_head_file_to_other_commit, nested_deinit,
    nested_deinit_gitfile_put_back, nested_config_removed, nested_emptied,
    lib_pack_refs, lib_refs_folder_gone, lib_packed_refs_gone, nested_refs_folder_gone,
    lib_objects_moved_away, nested_objects_moved_away, lib_bare, lib_bare_not_a_boolean,
    lib_worktree_elsewhere, lib_format_2, lib_unknown_extension, lib_config_garbage,
    lib_commondir_elsewhere, nested_worktree_nowhere, nested_bare, nested_gitfile_nowhere,
    nested_gitfile_garbage, nested_gitfile_absolute, nested_gitfile_to_a_copy_elsewhere,
    folder_in_lib_became_link_to_a_copy, nested_folder_became_link_to_a_copy,
    lib_modules_became_link_to_a_copy, lib_became_link_to_a_copy_at_another_commit,
    lib_became_link_to_a_copy_at_the_pin, third_party_became_link_out_of_the_root,
    manifest_repinned_same_mtime, manifest_comment_edited_same_mtime, manifest_submodules_off,
    manifest_patches_added, patch_edited_same_mtime, root_gitmodules_written, override_set,
    override_cleared, lib_git_dir_moved_out_and_overridden_as_itself,
    lib_git_dir_moved_out_and_overridden_elsewhere, develop_marked, develop_ended,
]  # fmt: skip


# --- what git, verify and each fast path say ---------------------------------------------


def _git_ok(cwd: Path, *args: str) -> tuple[bool, str]:
    import subprocess

    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    return proc.returncode == 0, proc.stdout.rstrip("\n")  # a leading space is a status


def git_says_synced(c: Case, pin: str, submodules: bool) -> bool:
    """git's own view: lib is its own repository, at the pin, nested submodules at theirs."""
    if not c.lib.is_dir():
        return False
    ok, top = _git_ok(c.lib, "rev-parse", "--show-toplevel")
    if not ok or os.path.realpath(top) != os.path.realpath(c.lib):
        return False
    ok, head = _git_ok(c.lib, "rev-parse", "HEAD")
    if not ok or head != pin or not _git_ok(c.lib, "cat-file", "-e", "HEAD^{commit}")[0]:
        return False
    if not submodules:
        return True
    ok, listing = _git_ok(c.lib, "submodule", "status", "--recursive")
    return ok and all(line.startswith(" ") for line in listing.splitlines())


def _in_env(c: Case) -> contextlib.AbstractContextManager[object]:
    @contextlib.contextmanager
    def scope():  # type: ignore[no-untyped-def]
        saved = {k: os.environ.get(k) for k in c.env}
        for key, value in c.env.items():
            os.environ[key] = value
        try:
            yield
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    return scope()


def noop_answer(c: Case) -> str | None:
    """What the no-op printed, or None when it stepped aside (as CMake runs it)."""
    argv = ["checkout", "-m", str(c.manifest), "--cmake-out", str(c.results)]
    out = io.StringIO()
    old = Path.cwd()
    os.chdir(c.root)
    try:
        with _in_env(c), contextlib.redirect_stdout(out):
            noop.answer(argv)
    except SystemExit as exit:
        assert exit.code == 0
        return out.getvalue()
    finally:
        os.chdir(old)
    return None


@dataclass
class Verdicts:
    git: bool
    verify: bool
    verify_exit: int
    noop_stamp: str | None
    cmake_stamp: bool
    noop_fresh: str | None
    checkout_exit: int
    checkout_out: str
    git_after_checkout: bool
    # verify stopped at the root: git there reaches a repository qola refuses (a problem of
    # that repository's, not yet reported as one: the fast paths must only not answer).
    verify_root_refused: bool = False


def judge(c: Case, run_qola, cmake: Path) -> Verdicts:
    with _in_env(c):  # from the root, where the no-op runs: a relative override is the same
        verified = run_qola("verify", "--format", "json", "-m", str(c.manifest), cwd=c.root)
    pin, submodules, kinds = None, True, set()
    if verified.exit_code in (0, 1):
        [dep] = json.loads(verified.stdout)["deps"]
        pin = dep["pinned"]
        kinds = {problem["kind"] for problem in dep["problems"]}
        submodules = "submodules = false" not in c.manifest.read_text()
    if pin is None and c.manifest.is_file():  # verify gave no document: the manifest's pin
        found = re.search(r'^commit = "([0-9a-f]{40})"', c.manifest.read_text(), re.M)
        pin = found.group(1) if found else None
        submodules = "submodules = false" not in c.manifest.read_text()
    overridden = "overridden" in kinds or bool(c.env.get("QOLA_SOURCE_DIR_LIB"))
    git_truth = pin is not None and (overridden or git_says_synced(c, pin, submodules))
    # Local modifications are verify's business only (`dirty`), not the checkout's.
    verify_truth = verified.exit_code in (0, 1) and not (kinds & COMMIT_KINDS)
    stamped = noop_answer(c)
    cmake_stamp = c.results.exists() and cmake_holds(cmake, c.results)
    shutil.rmtree(c.root / ".git" / "qola" / "noop", ignore_errors=True)
    fresh = noop_answer(c)
    with _in_env(c):
        checkout = run_qola("checkout", "-m", str(c.manifest), cwd=c.root)
    # A dependency being developed is left as it is, like an override (verify fails on it).
    developing = (c.root / ".git" / "qola" / "developing" / "lib").exists()
    after = pin is not None and (overridden or developing or git_says_synced(c, pin, submodules))
    root_refused = verified.exit_code == 3 and f"qola: {c.root}: " in verified.stderr
    return Verdicts(
        git_truth, verify_truth, verified.exit_code, stamped, cmake_stamp, fresh,
        checkout.exit_code, checkout.stdout + checkout.stderr, after, root_refused,
    )  # fmt: skip


def check(c: Case, names: list[str], run_qola, cmake: Path) -> None:
    v = judge(c, run_qola, cmake)
    what = f"after {' + '.join(names)}: {v}"
    agreed = v.git and v.verify
    # verify failing outright (exit 3) is no agreement either: no fast path may answer then.
    assert not (v.verify and not v.git), f"verify is more optimistic than git {what}"
    assert v.noop_stamp is None or agreed, f"the no-op's stamp said up to date {what}"
    assert not v.cmake_stamp or agreed, f"the CMake stamp held {what}"
    assert v.noop_fresh is None or agreed, f"the no-op (no stamp) said up to date {what}"
    said_up_to_date = v.checkout_exit == 0 and " up to date" in v.checkout_out
    assert not said_up_to_date or agreed, f"the full checkout said up to date {what}"
    assert v.checkout_exit != 0 or v.git_after_checkout, f"checkout exit 0, git disagrees {what}"
    if c.env.get("QOLA_SOURCE_DIR_LIB") and v.noop_fresh is not None:
        assert v.noop_fresh.splitlines() == v.checkout_out.splitlines(), what
    assert v.verify_exit in (0, 1, 2) or (v.verify_root_refused and not agreed), (
        f"verify failed to judge (exit 3) {what}"
    )


# --- the runs ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def synced_with_history(tmp_path_factory: pytest.TempPathFactory, _qola_template: Path) -> Path:
    """The tree qola's checkout left (its memory lets the fast paths answer), with the
    upstream's other commits fetched into lib and nested (qola fetched one commit deep)."""
    root = tmp_path_factory.mktemp("differential") / "project"
    shutil.copytree(_qola_template, root, symlinks=True)
    lib = root / "3rdparty" / "lib"
    for repo in (lib, lib / "extern" / "nested"):
        shallow = git(repo, "rev-parse", "--is-shallow-repository") == "true"
        deepen = ["--unshallow"] if shallow else []
        git(repo, "fetch", "-q", *deepen, "origin", "+refs/heads/*:refs/remotes/origin/*")
    return root


def run_case(
    names: list[str], tmp_path: Path, synced: Path, upstream: Upstream, rng: random.Random,
    run_qola, cmake: Path, before: tuple[str, ...] = (),
) -> None:  # fmt: skip
    """Stamp a copy of synced (after the mutations of before), apply names, compare."""
    base = tmp_path / f"case-{len(list(tmp_path.iterdir()))}"
    base.mkdir()
    root = base / "project"
    shutil.copytree(synced, root, symlinks=True)
    (base / "scratch").mkdir()
    c = Case(root, base / "scratch", upstream, rng)
    for name in before:
        next(m for m in MUTATIONS if m.__name__ == name)(c)
    assert noop_answer(c) is not None  # answered from files: the stamps are written
    assert cmake_holds(cmake, c.results)
    time.sleep(0.01)  # a rewritten file gets another mtime
    by_name = {m.__name__: m for m in MUTATIONS}
    applied = []
    for name in names:
        try:
            by_name[name](c)
        except (AssertionError, OSError):  # an earlier one broke what this one needs
            applied.append(f"({name}, failed half-way)")
        else:
            applied.append(name)
    check(c, applied, run_qola, cmake)
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("mutation", [m.__name__ for m in MUTATIONS])
def test_no_fast_path_is_more_optimistic_than_verify_or_git_after_one_mutation(
    mutation: str, tmp_path: Path, synced_with_history: Path, upstream: Upstream, run_qola
) -> None:
    run_case([mutation], tmp_path, synced_with_history, upstream, random.Random(0), run_qola,
             _pypi_cmake("newest"))  # fmt: skip


ON_LIB = [m.__name__ for m in MUTATIONS if m.__name__.startswith("lib")]


@pytest.mark.parametrize("mutation", ON_LIB)
def test_no_fast_path_is_more_optimistic_than_verify_or_git_on_a_branch_at_the_pin(
    mutation: str, tmp_path: Path, synced_with_history: Path, upstream: Upstream, run_qola
) -> None:
    """The stamps are written while the dependency sits on a branch at its pin (as
    `git submodule add` leaves it); a commit on the branch moves only the branch's ref."""
    run_case([mutation], tmp_path, synced_with_history, upstream, random.Random(0), run_qola,
             _pypi_cmake("newest"), before=("lib_branch_at_pin",))  # fmt: skip


NESTED = [m.__name__ for m in MUTATIONS if "nested" in m.__name__ or "modules" in m.__name__]


@pytest.mark.parametrize("mutation", NESTED)
def test_no_fast_path_is_more_optimistic_than_verify_or_git_with_submodules_off(
    mutation: str, tmp_path: Path, synced_with_history: Path, upstream: Upstream, run_qola
) -> None:
    """With submodules = false nothing follows the nested submodule: whatever happens to
    it, git's status still has to look inside, and must not make verify fail to judge."""
    run_case(["manifest_submodules_off", mutation], tmp_path, synced_with_history, upstream,
             random.Random(0), run_qola, _pypi_cmake("newest"))  # fmt: skip


def test_no_fast_path_is_more_optimistic_than_verify_or_git_after_random_sequences(
    tmp_path: Path, synced_with_history: Path, upstream: Upstream, run_qola
) -> None:
    # A fixed seed by default, so that the suite gives the same answer on every run;
    # DIFFERENTIAL_SEED=random explores new sequences (the seed is printed to replay them).
    chosen = os.environ.get("DIFFERENTIAL_SEED") or str(FIXED_SEED)
    seed = random.SystemRandom().randrange(2**32) if chosen == "random" else int(chosen)
    print(f"differential seed {seed} (replay: DIFFERENTIAL_SEED={seed})")
    rng = random.Random(seed)
    cmake = _pypi_cmake("newest")
    names = [m.__name__ for m in MUTATIONS]
    for _ in range(RANDOM_SEQUENCES):
        sequence = rng.sample(names, rng.randint(2, 3))
        try:
            run_case(sequence, tmp_path, synced_with_history, upstream, rng, run_qola, cmake)
        except AssertionError as error:
            raise AssertionError(f"seed {seed}: {error}") from None
