"""Finish what a killed run left half-done in a dependency, before anything else looks at it.

A move writes a record (`<gitdir>/qola/moving`) before its first step that can leave git
state behind and removes it when it ends; a later run that finds one repairs the
dependency from it. How, step by step: docs/checkout.md, "Finishing a move a killed run
left".
"""

from __future__ import annotations

import json
import os
import time
from contextlib import suppress
from pathlib import Path

from qola.base import safetext
from qola.base.errors import GitError
from qola.base.shas import is_full_sha
from qola.gitrun.git import Runner
from qola.gitrun.queries import has_checkout, head_sha, index_gitlinks, only_here
from qola.manifest import Dep
from qola.repo import gitfiles, store
from qola.sync import complete, in_the_way
from qola.sync.fetch import Source, fetch_commit
from qola.sync.ignored import restore_command
from qola.sync.observe import gitlinks
from qola.sync.refs import keep_pin, save, save_then_reset

# Git's lock files that a killed git leaves behind (lockfile.c: "<file>.lock").
_LOCK_SUFFIX = ".lock"
_CLOCK_SLACK = 2.0  # seconds: file times and time.time() may disagree a little


def begin(worktree: Path, head: str | None, target: str | None) -> None:
    """Record that a move of this dependency from head to target (None: not known yet)
    starts, or has learnt its target; a GitError (exit 3) if it cannot be recorded."""
    gitdir = gitfiles.git_dir(worktree)
    if gitdir is None:
        return
    marker = store.moving_marker(gitdir)
    record = {"pid": os.getpid(), "started": time.time(), "from": head, "to": target}
    try:
        store.write_file(marker, (json.dumps(record) + "\n").encode(), gitdir)
    except OSError as error:
        # Without the record a kill could not be repaired: nothing is moved then.
        raise GitError(
            str(worktree),
            f"cannot write {error.filename or marker}: {error.strerror}; nothing was moved",
            f"remove {error.filename} (qola makes its own)"
            if store.is_unsafe(error)
            else "make the git dir writable or free some space, then run again",
        ) from None


def unfinished(worktree: Path) -> None:
    """Keep the record of a move whose checkout git left unfinished (complete.py), marked
    so: the next run, not a fast path, finishes it. Its start time becomes now: every git
    of this run has ended, and no lock file older than that is anyone's to remove."""
    gitdir = gitfiles.git_dir(worktree)
    marker = store.moving_marker(gitdir) if gitdir is not None else None
    data = store.read_file(marker, gitdir) if marker is not None and gitdir is not None else None
    if marker is None or gitdir is None or data is None:
        return
    with suppress(ValueError, TypeError, OSError):
        record = json.loads(data)
        record.update(started=time.time(), unfinished=True)
        store.write_file(marker, (json.dumps(record) + "\n").encode(), gitdir)


def end(worktree: Path) -> None:
    """Record that the move is over (or failed cleanly); only a kill leaves the record."""
    gitdir = gitfiles.git_dir(worktree)
    if gitdir is not None:
        with suppress(OSError):  # also on a read-only file system, where begin() failed
            store.remove_file(store.moving_marker(gitdir), gitdir)
        with suppress(OSError):  # and the folder begin() made, unless it holds more
            store.moving_marker(gitdir).parent.rmdir()


def repair(runner: Runner, worktree: Path, dep: Dep, offline: bool = False) -> list[str]:
    """Finish a move an earlier run left unfinished in this dependency; returns notes."""
    gitdir = gitfiles.git_dir(worktree)
    if gitdir is None:
        return []
    marker = store.moving_marker(gitdir)
    fetch = lambda: _fetch_pin(runner, worktree, dep, offline)  # noqa: E731
    if not os.path.lexists(marker):
        return []
    started, moved_from, moved_to, left_unfinished = _record(marker, gitdir, worktree)
    notes = [f"an earlier run did not finish moving {dep.path}; finishing its work"]
    for lock in _stale_locks(gitfiles.common_dir(gitdir), started - _CLOCK_SLACK):
        with suppress(OSError):
            lock.unlink()
            notes.append(f"removed {lock}, left by that run")
    head = gitfiles.read_head(gitdir)[0] or head_sha(runner, worktree)
    if moved_to is not None and head == moved_to:
        # git's checkout of the dependency ended: what differs in it now is the user's,
        # unless that checkout was found unfinished (complete.py): then its files are kept
        # and reset too, once every object is there.
        whole = not left_unfinished and has_checkout(runner, worktree, moved_to)
        if not whole:
            notes.extend(complete.finish(
                runner, worktree, moved_to, dep.name, fetch,
                lambda: _clear_the_way(runner, worktree, moved_to, dep),
            ))  # fmt: skip
        _remember_nested(runner, worktree, moved_to, dep)
        repos = _repositories(runner, worktree)
        notes.extend(_save_and_reset(runner, repos if left_unfinished else repos[1:], dep))
        notes.extend(_clear_nested_ways(runner, worktree, dep))
        _settle(runner, worktree, dep, moved_to)
    elif moved_from is None or head == moved_from:
        notes.extend(_save_and_reset(runner, _repositories(runner, worktree), dep))
        if has_checkout(runner, worktree, dep.commit):
            # The pin was fetched before the kill: complete the checkout. Never with -f: the
            # dying checkout may have written files of the pin that the old commit lacks,
            # and a file of the user's may be at such a path; each is kept, then cleared.
            notes.extend(_clear_the_way(runner, worktree, dep.commit, dep))
            complete.checkout(runner, worktree, dep.commit, dep.name, dep.path, "checkout", "-q",
                              "--detach", dep.commit)  # fmt: skip
            notes.extend(_clear_nested_ways(runner, worktree, dep))
            _settle(runner, worktree, dep, dep.commit)
    else:
        notes.append(f"{dep.path} was moved to {head or 'an unreadable HEAD'} since; left as is")
    store.remove_file(marker, gitdir)
    return notes


def _clear_the_way(
    runner: Runner, tree: Path, target: str, dep: Dep, nested: str = ""
) -> list[str]:
    """Remove the files at paths target adds to tree's HEAD (qola/sync/in_the_way.py), each that
    is not target's own saved first under refs/qola/backup/<name>/...-in-the-way."""
    found, differing = in_the_way.in_the_way(runner, tree, target, dep.name)
    notes = []
    if differing:
        label = f"{dep.path}/{nested}" if nested else dep.path
        ref = in_the_way.keep_aside(runner, tree, differing, target, dep.name, nested)
        notes.append(f"saved what {label} held in the way of {target[:12]} as {ref}; "
                     f"restore with: {restore_command(tree, differing, ref)}")  # fmt: skip
    for path in found:
        (tree / path).unlink()
    return notes


def _clear_nested_ways(runner: Runner, tree: Path, dep: Dep, prefix: str = "") -> list[str]:
    """The same for each nested repository the dependency's checkout left behind its
    gitlink (a kill while one was being checked out: its files half-way); the run
    that repair() precedes moves them, and git's checkout must find its way clear."""
    notes = []
    for path, sha in index_gitlinks(runner, tree).items():
        sub = tree / path
        gitdir = gitfiles.git_dir(sub)
        if sha is None or gitdir is None or not gitfiles.has_index(gitdir):
            continue  # not checked out, or half-made (nested.py finishes those itself)
        head = gitfiles.read_head(gitdir)[0] or head_sha(runner, sub)
        if head is not None and head != sha and has_checkout(runner, sub, sha):
            notes.extend(_clear_the_way(runner, sub, sha, dep, prefix + path))
        notes.extend(_clear_nested_ways(runner, sub, dep, f"{prefix}{path}/"))
    return notes


def _remember_nested(runner: Runner, tree: Path, commit: str, dep: Dep) -> None:
    """Record as qola's each nested repository checked out at the gitlink that commit (at
    its pin, qola's) records, recursively: a run killed between a nested submodule's
    checkout and its refs/qola/pins/<sha> left a commit no ref holds, which every later
    move of it would otherwise take for the user's (a commit on no branch), and which
    saving "what differs" here would back up for nothing."""
    gitdir = gitfiles.git_dir(tree)
    links = gitlinks(runner, tree, gitdir, commit, write_cache=False) if gitdir else None
    for link in links or ():
        sub = tree / link.path
        sub_gitdir = gitfiles.git_dir(sub)
        if sub_gitdir is None or not gitfiles.has_index(sub_gitdir):
            continue  # not checked out, or half-made (nested.py finishes those itself)
        if (gitfiles.read_head(sub_gitdir)[0] or head_sha(runner, sub)) == link.sha:
            keep_pin(runner, sub, link.sha, dep.name)
            _remember_nested(runner, sub, link.sha, dep)


def finish_broken_pin(runner: Runner, worktree: Path, dep: Dep, offline: bool) -> list[str]:
    """With no record of a move: a HEAD at the pin whose tree is not in the object store
    (git 2.39 moves HEAD there when a cut fetch left the commit alone, and every git
    command then fails on "bad tree object HEAD") is finished as an unfinished move is;
    returns notes (none: nothing to finish)."""
    gitdir = gitfiles.git_dir(worktree)
    head = gitfiles.read_head(gitdir)[0] if gitdir is not None else None
    if head != dep.commit:
        return []
    fetch = lambda: _fetch_pin(runner, worktree, dep, offline)  # noqa: E731
    out = runner.run(worktree, "cat-file", "-e", "--end-of-options", f"{head}^{{tree}}",
                     check=False)  # fmt: skip
    if out.status == 0:
        return []
    notes = [f"{dep.path} is at {head[:12]}, but its tree is not in the object store"]
    clear = lambda: _clear_the_way(runner, worktree, head, dep)  # noqa: E731
    return notes + complete.finish(runner, worktree, head, dep.name, fetch, clear)


def _fetch_pin(runner: Runner, worktree: Path, dep: Dep, offline: bool) -> None:
    """Fetch the pin again (what a cut fetch left of it is not enough for a checkout)."""
    if offline:
        raise GitError(
            dep.name,
            f"{dep.path} is at {dep.commit[:12]}, but not all of its files are in the object "
            "store, and --offline forbids fetching them",
            "run once without --offline",
        )
    gitdir = gitfiles.git_dir(worktree)
    shallow = gitdir is not None and gitfiles.is_shallow(gitdir)
    source = Source(dep.name, dep.url, dep.track)
    fetch_commit(runner, worktree, source, dep.commit, shallow)


def _settle(runner: Runner, worktree: Path, dep: Dep, head: str) -> None:
    """Record head as a commit qola checked out. The nested submodules are left to the
    run that repair() precedes: it observes them and brings them to head's gitlinks
    (fetching minimally, through --cache) like any others."""
    keep_pin(runner, worktree, head, dep.name)


def _record(
    marker: Path, gitdir: Path, worktree: Path
) -> tuple[float, str | None, str | None, bool]:
    """(start time, HEAD before, HEAD wanted, whether its checkout was found unfinished)
    of the recorded move; GitError when the record is not qola's."""
    data = store.read_file(marker, gitdir)
    problem = None
    if data is None:
        problem = "it is not a regular file qola can read"
    else:
        try:
            record = json.loads(data)
            started = float(record["started"])
            ends = [record.get(end) for end in ("from", "to")]
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            problem = f"it is not qola's record of a move ({type(error).__name__})"
        else:
            if any(end is not None and not (isinstance(end, str) and is_full_sha(end))
                   for end in ends):  # fmt: skip
                problem = "it names commits that are no commits"
            elif started == started and started not in (float("inf"), float("-inf")):
                return started, ends[0], ends[1], record.get("unfinished") is True
            else:
                problem = "its start time is not a number"
    raise GitError(
        str(worktree),
        f"found {marker}, but {problem}; qola will not guess what the run that left it "
        "was doing, so it removes nothing",
        f"check the repository (git -C {worktree} status), remove {marker}, and run again",
    )


def _stale_locks(gitdir: Path, since: float) -> list[Path]:
    found = []
    for folder, _dirs, files in os.walk(gitdir):  # does not follow links to folders
        for name in files:
            path = Path(folder, name)
            if name.endswith(_LOCK_SUFFIX) and name != store.LOCK_NAME:
                with suppress(OSError):
                    if path.lstat().st_mtime >= since:
                        found.append(path)
    return found


def _repositories(runner: Runner, worktree: Path, prefix: str = "") -> list[tuple[str, Path]]:
    """The dependency and every nested submodule checked out in it: (path in dep, folder)."""
    found = [(prefix.rstrip("/"), worktree)]
    for path in index_gitlinks(runner, worktree):
        tree = worktree / path
        if gitfiles.git_dir(tree) is not None:
            found += _repositories(runner, tree, f"{prefix}{path}/")
    return found


def _has_index(tree: Path) -> bool:
    gitdir = gitfiles.git_dir(tree)
    return gitdir is not None and gitfiles.has_index(gitdir)


def _save_and_reset(runner: Runner, repos: list[tuple[str, Path]], dep: Dep) -> list[str]:
    """Keep what the repositories hold that moving would lose; then clear the way for git
    (refs.save_then_reset: every one saved before any is reset, the deepest first)."""
    # A nested repository with no index is one whose first checkout never finished (its
    # population was killed): nothing in it is anyone's but what nested.py checks before
    # it finishes it (qola/sync/unfinished.py), so it is left to that, unsaved and not reset.
    repos = [(nested, tree) for nested, tree in repos if not nested or _has_index(tree)]

    def save_one(nested: str, tree: Path) -> tuple[list[str], bool]:
        label = f"{dep.path}/{nested}" if nested else dep.path
        notes = []
        stash = runner.run(tree, "stash", "create", check=False).stdout.strip()
        stashed = is_full_sha(stash)
        if stashed:
            ref = store.backup_ref(dep.name, nested, "interrupted")
            save(runner, tree, ref, stash, dep.name)
            notes.append(
                f"saved what {label} held modified as {ref}; "
                f"restore with: git -C {safetext.shell_word(str(tree))} stash apply {ref}"
            )
        unsaved = only_here(runner, tree, limit=1)
        if unsaved:
            ref = store.backup_ref(dep.name, nested, "interrupted-head")
            save(runner, tree, ref, unsaved[0][0], dep.name)
            notes.append(
                f"saved the commits of {label} as {ref}; "
                f"restore with: git -C {safetext.shell_word(str(tree))} switch -c rescued {ref}"
            )
        return notes, stashed

    return save_then_reset(runner, repos, dep.name, save_one)
