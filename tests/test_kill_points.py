"""SIGKILL before every git call of `bump --all --commit`, `freeze`, `init` and the first
clone of a nested submodule; then the next run, which must end where an unkilled run ends.

A `git` wrapper on PATH (tests/gitpause.py) stops a run before its Nth git call, and the
test kills its process group there. Kill points are not sampled at random: a run is first
made to the end through the wrapper, which notes a digest of the project's tree (names,
sizes, modes and times) before each call; two calls between which the tree did not change
are one kill point, so each is tried once (`gitpause.distinct_points`): every state the
tree is in when a git call starts is tried, and none twice.

After each kill, the same command runs again, and (in a second copy) a plain
`qola checkout` first, then the same command. Either way the end state must be the
unkilled run's, byte for byte where it can be (`state`): the manifest, the root's HEAD
(commits are made at a fixed date, so the same commit is the same SHA), its index and
status, each dependency's and nested submodule's HEAD and status; and the user's own
files, staged change and manifest edit are all still there.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import gitpause
import procs
import pytest
from conftest import Upstream
from repos import commit_file, git, head, init_repo
from superprojects import two_submodules

MINE = "notes of mine\n"
MY_MANIFEST_EDIT = "# a comment of mine, not committed\n"


@pytest.fixture(scope="module")
def wrapper(tmp_path_factory: pytest.TempPathFactory) -> gitpause.Wrapper:
    return gitpause.make(tmp_path_factory.mktemp("git-wrapper-points"))


def state(root: Path, repos: tuple[str, ...]) -> dict[str, str]:
    """What a user sees of the project: the manifest's bytes, the root's HEAD, index and
    status, and each listed repository's HEAD and status (missing ones say so)."""
    found = {
        "qola.toml": (root / "qola.toml").read_text() if (root / "qola.toml").exists() else "-",
        "HEAD": git(root, "rev-parse", "HEAD"),
        "index": git(root, "ls-files", "-s"),
        "status": git(root, "status", "--porcelain", "--ignore-submodules=none"),
    }
    for path in repos:
        tree = root / path
        if (tree / ".git").exists():
            # submodule status: each nested one's commit, and `-` when its parent's config
            # does not initialise it (`+` when it is not at its gitlink).
            found[path] = "\n".join([head(tree), git(tree, "status", "--porcelain", "-uall"),
                                     git(tree, "submodule", "status")])  # fmt: skip
        else:
            found[path] = "not checked out"
    return found


@dataclass(frozen=True)
class Case:
    """A command run on copies of a template, and the repositories whose state counts."""

    template: Path
    args: tuple[str, ...]
    repos: tuple[str, ...]
    rerun_after_checkout: bool = True  # whether a plain `qola checkout` applies


def run_args(case: Case, copy: Path) -> list[str]:
    return [*case.args, "-m", str(copy / "qola.toml")]


def kill_every_point(
    wrapper: gitpause.Wrapper,
    case: Case,
    base: Path,
    check: Callable[[Path], None] = lambda _root: None,
) -> None:
    """Kill the case's command before each distinct git call, rerun, compare; every kill
    point that does not end in the unkilled run's state is reported, not just the first."""
    reference = base / "reference" / "project"
    shutil.copytree(case.template, reference, symlinks=True)
    done, calls = gitpause.count_calls(wrapper, *run_args(case, reference), watch=reference)
    assert done.returncode == 0, done.stderr
    points = gitpause.distinct_points(wrapper)
    want = state(reference, case.repos)
    check(reference)
    failures = []
    started = time.monotonic()
    for n in points:
        killed_tree = base / str(n) / "project"
        shutil.copytree(case.template, killed_tree, symlinks=True)
        killed, paused = gitpause.run_until(wrapper, n, *run_args(case, killed_tree))
        assert killed, f"the run ended before git call {n}"
        variants = ["again", "checkout first"] if case.rerun_after_checkout else ["again"]
        for variant in variants:
            # One kill, and each variant on a copy of what it left (paths in it are relative).
            copy = base / f"{n}-{variant.replace(' ', '-')}" / "project"
            shutil.copytree(killed_tree, copy, symlinks=True)
            problem = _finish(case, copy, variant, want, check)
            if problem:
                step = _command(paused)[:60]
                failures.append(f"kill before call {n} ({step}), then {variant}: {problem}")
            shutil.rmtree(copy.parent)
        shutil.rmtree(killed_tree.parent)
    seconds = time.monotonic() - started
    print(f"\n{case.args}: {len(points)} kill points of {len(calls)} git calls, {seconds:.1f} s")
    assert not failures, "\n".join(failures)


def _command(call: str) -> str:
    """A git call's arguments less the -C and -c options qola puts first."""
    words = call.split(" ")
    while len(words) > 1 and words[0] in ("-C", "-c"):
        words = words[2:]
    return " ".join(words)


def _finish(
    case: Case, copy: Path, variant: str, want: dict[str, str], check: Callable[[Path], None]
) -> str | None:
    """Why the reruns after a kill did not end where the unkilled run did (None: they did)."""
    if variant == "checkout first":
        # It may refuse to move a dependency off a commit of the user's (exit 4), as any
        # checkout does, when the command had not written the manifest yet; then it must
        # change nothing.
        before = state(copy, case.repos)
        first = procs.run("checkout", "-m", str(copy / "qola.toml"))
        if first.returncode not in (0, 4):
            return f"checkout exit {first.returncode}: {first.stderr.strip()}"
        if first.returncode == 4 and state(copy, case.repos) != before:
            return f"checkout refused (exit 4) but changed the tree: {first.stderr.strip()}"
    again = procs.run(*run_args(case, copy))
    if again.returncode != 0:
        return f"exit {again.returncode}: {again.stderr.strip()}"
    got = state(copy, case.repos)
    differ = {key: (got[key], want[key]) for key in want if got[key] != want[key]}
    if differ:
        said = " / ".join((again.stdout + again.stderr).strip().splitlines()[-3:])
        return f"{', '.join(differ)} differ (the rerun said: {said})"
    try:
        check(copy)
    except AssertionError as error:
        return f"lost: {error}"
    return None


# ------------------------------------------------------------------- bump --all --commit


def _users_things(root: Path) -> None:
    """What the user has that no run may lose: a staged change, an unstaged manifest edit,
    an untracked file in a dependency."""
    (root / "unrelated.txt").write_text("staged by the user\n")
    git(root, "add", "unrelated.txt")
    with open(root / "qola.toml", "a") as manifest:
        manifest.write(MY_MANIFEST_EDIT)
    (root / "3rdparty" / "lib" / "notes.txt").write_text(MINE)


def _nothing_lost(root: Path) -> None:
    assert git(root, "diff", "--cached", "--name-only", "--", "unrelated.txt") == "unrelated.txt"
    assert (root / "qola.toml").read_text().endswith(MY_MANIFEST_EDIT)
    assert (root / "3rdparty" / "lib" / "notes.txt").read_text() == MINE


@pytest.fixture(scope="module")
def bump_all_template(tmp_path_factory: pytest.TempPathFactory, upstream: Upstream) -> Path:
    root = tmp_path_factory.mktemp("bump-all") / "project"
    two_submodules(root, upstream.lib, upstream.nested, upstream.lib_v1, upstream.nested_v1)
    _users_things(root)
    return root


BUMP_ALL_REPOS = ("3rdparty/lib", "3rdparty/lib/extern/nested", "3rdparty/other")


def test_bump_all_commit_killed_at_any_git_call_is_finished_by_the_next_run(
    wrapper, bump_all_template, tmp_path, upstream
):
    case = Case(bump_all_template, ("bump", "--all", "--commit"), BUMP_ALL_REPOS)

    def check(root: Path) -> None:
        _nothing_lost(root)
        message = git(root, "log", "-1", "--format=%B")
        assert message.startswith("Bump 2 dependencies: lib, other\n\n"), message
        assert git(root, "log", "-1", "--format=%s", "HEAD~") == "pins"  # one bump commit

    kill_every_point(wrapper, case, tmp_path, check)


# ------------------------------------------------------------------- freeze


@pytest.fixture(scope="module")
def freeze_template(tmp_path_factory: pytest.TempPathFactory, upstream: Upstream) -> Path:
    """Both submodules moved by hand past their pins, each with a commit of the user's on
    top: freeze writes and stages both. (A commit the remote sends is no local work: a
    checkout run first would move such a dependency back to its pin, as it should.)"""
    root = tmp_path_factory.mktemp("freeze") / "project"
    two_submodules(root, upstream.lib, upstream.nested, upstream.lib_v1, upstream.nested_v1)
    _users_things(root)
    git(root / "3rdparty" / "lib", "fetch", "-q", "origin", upstream.lib_v2)
    git(root / "3rdparty" / "lib", "checkout", "-q", "--detach", upstream.lib_v2)
    git(root / "3rdparty" / "lib", "submodule", "update", "-q")
    git(root / "3rdparty" / "other", "fetch", "-q", "origin", upstream.nested_v2)
    git(root / "3rdparty" / "other", "checkout", "-q", "--detach", upstream.nested_v2)
    for dep in ("lib", "other"):
        commit_file(root / "3rdparty" / dep, "fix.txt", "my fix\n", f"my fix to {dep}")
    return root


def test_freeze_killed_at_any_git_call_is_finished_by_the_next_run(
    wrapper, freeze_template, tmp_path
):
    case = Case(freeze_template, ("freeze",), BUMP_ALL_REPOS)
    kill_every_point(wrapper, case, tmp_path, _nothing_lost)


# ------------------------------------------------------------------- init


@pytest.fixture(scope="module")
def init_template(tmp_path_factory: pytest.TempPathFactory, upstream: Upstream) -> Path:
    root = tmp_path_factory.mktemp("init") / "project"
    two_submodules(root, upstream.lib, upstream.nested, upstream.lib_v1, upstream.nested_v1)
    git(root, "rm", "-q", "--cached", "qola.toml")
    git(root, "commit", "-q", "-m", "no manifest")
    (root / "qola.toml").unlink()
    return root


def test_init_killed_at_any_git_call_is_finished_by_the_next_run(wrapper, init_template, tmp_path):
    case = Case(init_template, ("init",), BUMP_ALL_REPOS, rerun_after_checkout=False)
    kill_every_point(wrapper, case, tmp_path)


# ------------------------------------------------------------------- a nested first clone


@pytest.fixture
def lib_without_nested(tmp_path: Path, upstream: Upstream) -> Path:
    """lib checked out at v2 by git alone, its nested submodule never cloned; the manifest
    pins main's tip (the same nested gitlink): the checkout moves lib and clones nested."""
    root = init_repo(tmp_path / "template" / "project")
    (root / "qola.toml").write_text(
        f'[deps.lib]\npath = "3rdparty/lib"\nurl = "{upstream.lib}"\n'
        f'commit = "{upstream.lib_tip}"\n'
    )
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", "qola.toml", ".gitignore")
    git(root, "commit", "-q", "-m", "pins")
    lib = init_repo(root / "3rdparty" / "lib")
    git(lib, "remote", "add", "origin", str(upstream.lib))
    git(lib, "fetch", "-q", "--depth", "1", "origin", upstream.lib_v2)
    git(lib, "checkout", "-q", "--detach", upstream.lib_v2)
    return root


NESTED_REPOS = ("3rdparty/lib", "3rdparty/lib/extern/nested")


def test_first_clone_of_a_nested_submodule_killed_at_any_git_call_is_finished(
    wrapper, lib_without_nested, tmp_path
):
    """lib moves from v2 (checked out by git alone, its nested submodule never cloned) to
    main's tip, then its nested submodule is cloned for the first time."""
    (lib_without_nested / "3rdparty" / "lib" / "notes.txt").write_text(MINE)
    case = Case(lib_without_nested, ("checkout",), NESTED_REPOS, rerun_after_checkout=False)

    def check(root: Path) -> None:
        assert (root / "3rdparty" / "lib" / "notes.txt").read_text() == MINE

    kill_every_point(wrapper, case, tmp_path, check)


@pytest.mark.parametrize("step", ["checkout -f -q --detach", "update-ref --no-deref refs/qola/pin"])
def test_a_kill_in_a_nested_first_clone_leaves_nothing_a_later_move_takes_for_local_work(
    step, lib_without_nested, wrapper, tmp_path, upstream, run_qola
):
    """Killed just before the nested submodule's first checkout (HEAD written, no index
    yet) or just after it (before qola records the commit as its own): the rerun finishes
    it and records the commit as qola's, and saves no backup of what was nobody's (it
    saved an `-interrupted` stash of a repository that held only its git dir, or an
    `-interrupted-head` of the very commit lib records there); a later move of the nested
    submodule still goes through."""
    from test_kills import nth_call

    root = tmp_path / "project"
    shutil.copytree(lib_without_nested, root, symlinks=True)
    manifest = root / "qola.toml"
    counting = tmp_path / "counting" / "project"
    shutil.copytree(lib_without_nested, counting, symlinks=True)
    done, calls = gitpause.count_calls(wrapper, "checkout", "-m", str(counting / "qola.toml"))
    assert done.returncode == 0, done.stderr
    at = nth_call(calls, step, 1 if step.startswith("checkout") else 2)
    killed, paused = gitpause.run_until(wrapper, at, "checkout", "-m", str(manifest))
    assert killed and step in paused and "extern/nested" in paused

    rerun = run_qola("checkout", "-m", str(manifest))
    assert rerun.exit_code == 0, rerun.stderr
    nested = root / "3rdparty" / "lib" / "extern" / "nested"
    assert head(nested) == upstream.nested_v2
    assert "saved" not in rerun.stderr
    assert git(nested, "for-each-ref", "refs/qola/backup") == ""
    manifest.write_text(manifest.read_text().replace(upstream.lib_tip, upstream.lib_v1))
    back = run_qola("checkout", "-m", str(manifest))
    assert back.exit_code == 0, back.stderr
    assert head(nested) == upstream.nested_v1
