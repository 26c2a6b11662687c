"""An edit of the manifest under way (`bump`, `freeze`), recorded so that a killed one is finished.

One record of the whole edit (`<git dir of the root>/qola/editing`), written under the
root's lock before the first step that can leave state behind; the same command run
again finishes exactly that edit, or refuses (docs/bump.md, "Finishing an edit a killed
run left").
"""

from __future__ import annotations

import json
import os
import re
import time
from contextlib import suppress
from dataclasses import asdict, astuple, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qola.base import console
from qola.base.errors import GitError, QolaError, RefusedError
from qola.base.shas import is_full_sha
from qola.history.bump import current_head, edit_pins, label_of, read_manifest
from qola.repo import gitfiles, store

if TYPE_CHECKING:
    from qola.gitrun.git import Runner
    from qola.manifest import Dep, Manifest

# How the dependencies get to the new pins: not at all (bump --no-checkout); one checked
# out (bump NAME, which clones it when it is not there); all or nothing (bump --all);
# already there (freeze: the finish checks they still are).
MOVES = ("none", "one", "all", "frozen")
_OLD = re.compile(r"[0-9a-f]{7,64}")  # a legacy pin may be abbreviated


@dataclass(frozen=True)
class Pin:
    name: str
    key: str  # where the pin stands in the manifest (Dep.key)
    path: str
    old: str
    new: str
    tag: str | None = None  # the label written beside new


@dataclass(frozen=True)
class Edit:
    """What a bump or freeze writes, stages and commits."""

    command: str  # the command that makes (and finishes) it, e.g. "qola bump --all --commit"
    manifest: str  # the manifest's path below the root (POSIX)
    pins: tuple[Pin, ...]
    gitlinks: tuple[str, ...]  # names of the pins whose root gitlink goes with them
    message: str | None  # the commit message (--commit); None: staged, not committed
    head: str | None  # the root's HEAD the commit goes on
    moves: str  # one of MOVES

    def pin_map(self, deps: dict[str, Dep]) -> dict[Dep, str]:
        return {deps[pin.name]: pin.new for pin in self.pins}

    def labels(self) -> dict[str, str | None]:
        return {pin.name: pin.tag for pin in self.pins}


def edit_for(
    manifest: Manifest,
    runner: Runner,
    command: str,
    pins: dict[Dep, str],
    gitlinks: list[Dep],
    message: str | None,
    moves: str,
    labels: dict[str, str | None] | None = None,
) -> Edit:
    """The record of an edit about to be made."""
    from qola.gitrun.queries import head_sha  # lazy: only where git runs

    rel = Path(os.path.relpath(manifest.path, manifest.root)).as_posix()
    head = head_sha(runner, manifest.root) if message is not None else None
    return Edit(
        command, rel,
        tuple(Pin(dep.name, dep.key, dep.path, dep.commit, new, label_of(dep, new, labels))
              for dep, new in pins.items()),
        tuple(dep.name for dep in gitlinks), message, head, moves,
    )  # fmt: skip


def record_path(root: Path) -> Path | None:
    """Where the root's record is; None when the root is in no repository (then nothing is
    staged or committed, and the atomic write of the manifest is the edit's last step)."""
    gitdir = gitfiles.git_dir(root)
    return None if gitdir is None else store.editing_record(gitdir)


def begin(root: Path, edit: Edit) -> None:
    """Write the record (under the root's lock); a GitError (exit 3) when it cannot be."""
    gitdir = gitfiles.git_dir(root)
    if gitdir is None:
        return
    path = store.editing_record(gitdir)
    data = {"pid": os.getpid(), "started": time.time(), **asdict(edit)}
    try:
        store.write_file(path, (json.dumps(data, indent=1) + "\n").encode(), gitdir)
    except OSError as error:
        # Without the record a kill could not be finished: nothing is changed then.
        raise GitError(
            str(root),
            f"cannot write {error.filename or path}: {error.strerror}; nothing was changed",
            f"remove {error.filename} (qola makes its own)"
            if store.is_unsafe(error)
            else "make the git dir writable or free some space, then run again",
        ) from None


def end(root: Path) -> None:
    """The edit is over (done, or failed and said so): only a kill leaves the record."""
    gitdir = gitfiles.git_dir(root)
    if gitdir is not None:
        store.remove_file(store.editing_record(gitdir), gitdir)
        with suppress(OSError):  # and the folder, unless it holds more
            store.editing_record(gitdir).parent.rmdir()


def left_over(root: Path, locked: bool = False) -> Edit | None:
    """The record a run left that no live run of this host holds (locked: this run holds
    the root's lock, so any record there is a killed run's); a GitError when there is a
    file qola cannot read as its own."""
    path = record_path(root)
    if path is None or not os.path.lexists(path):
        return None
    gitdir = gitfiles.git_dir(root)
    assert gitdir is not None
    raw = store.read_file(path, gitdir)
    try:
        data: Any = json.loads(raw or b"")
        pid = data.pop("pid")
        data.pop("started")
        pins = tuple(Pin(**pin) for pin in data.pop("pins"))
        edit = Edit(pins=pins, gitlinks=tuple(data.pop("gitlinks")), **data)
        if not isinstance(pid, int) or not _well_formed(edit):
            raise ValueError(edit)
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise GitError(
            str(root),
            f"found {path}, but it is not qola's record of an edit of the manifest "
            f"({type(error).__name__}); qola will not guess what the run that left it did",
            f"check the manifest and the index (git -C {root} status), remove {path}, "
            "and run again",
        ) from None
    if not locked and pid != os.getpid() and store.is_alive(pid):
        return None  # a run under way (it holds the lock): not this run's to finish
    return edit


def _well_formed(edit: Edit) -> bool:
    """Whether a record read back holds what qola writes (strings where strings go)."""
    texts = [edit.command, edit.manifest, *edit.gitlinks]
    texts += [value for pin in edit.pins for value in astuple(pin)[:5]]  # the tag: below
    return (
        all(isinstance(text, str) for text in texts)
        and all(isinstance(v, (str, type(None))) for v in (edit.message, edit.head))
        and edit.moves in MOVES
        and bool(edit.pins)
        and all(is_full_sha(pin.new) and _OLD.fullmatch(pin.old) for pin in edit.pins)
        and set(edit.gitlinks) <= {pin.name for pin in edit.pins}
        and all(pin.tag is None or isinstance(pin.tag, str) for pin in edit.pins)
    )


def warn_if_left_over(root: Path) -> None:
    """Say so (a warning) when a killed run left an edit: `checkout` brings the dependencies
    to the pins the manifest holds, and only the command that made the edit finishes it."""

    try:
        edit = left_over(root)
    except QolaError:
        return  # the command that finishes it says what is wrong with the record
    if edit is not None:
        console.warning(f"an earlier `{edit.command}` did not finish (it was killed or "
                        "interrupted); run it again to finish it")  # fmt: skip


def refuse_other(root: Path, edit: Edit, command: str, meanwhile: bool = False) -> None:
    """A RefusedError unless command is the one that finishes edit (meanwhile: the edit was
    left while command planned its own, which did not see it: always refused)."""
    if command == edit.command and not meanwhile:
        return
    path = record_path(root)
    why = (
        f"`{command}` planned its own edit of the manifest without it"
        if meanwhile
        else f"`{command}` would mix its own edit of the manifest into that one's"
    )
    raise RefusedError(
        str(root),
        f"an earlier `{edit.command}` did not finish (it was killed or interrupted); "
        f"{why}, so nothing was changed",
        f"run `{edit.command}` to finish it (it writes, stages and commits what that run "
        f"meant to, and nothing else), or remove {path} to abandon it",
    )


@dataclass(frozen=True)
class Progress:
    """How far a killed run's edit got, as the tree shows it."""

    written: bool  # the manifest holds the new pins
    committed: str | None  # HEAD is the edit's commit: the edit is done


def judge(runner: Runner, manifest: Manifest, edit: Edit) -> Progress:
    """How far the recorded edit got; a RefusedError when the project changed since in a
    way that finishing it would not mean what the killed run meant."""
    from qola.gitrun.queries import head_sha  # lazy: only where git runs

    path = record_path(manifest.root)

    def refuse(problem: str) -> RefusedError:
        return RefusedError(
            str(manifest.path),
            f"an earlier `{edit.command}` did not finish, and {problem}; finishing it now "
            "would not be what that run meant, so nothing was changed",
            f"see what is there (git -C {manifest.root} status), then remove {path} to "
            f"abandon it, and run `{edit.command}` again to plan it anew",
        )

    rel = Path(os.path.relpath(manifest.path, manifest.root)).as_posix()
    if rel != edit.manifest:
        raise refuse(f"it edited {edit.manifest}, not {rel}")
    deps = {dep.name: dep for dep in manifest.deps}
    for pin in edit.pins:
        dep = deps.get(pin.name)
        if dep is None or (dep.key, dep.path) != (pin.key, pin.path):
            raise refuse(f"the manifest no longer has {pin.name} at {pin.path} as it had")
    _, text = read_manifest(manifest)
    written = edit_pins(manifest, text, edit.pin_map(deps), edit.labels()) == text
    if not written:
        pinned = {pin.name: deps[pin.name].commit for pin in edit.pins}
        elsewhere = [pin for pin in edit.pins if pinned[pin.name] not in (pin.old, pin.new)]
        if elsewhere:
            pin = elsewhere[0]
            raise refuse(
                f"{pin.name} is pinned at {pinned[pin.name][:12]} now, neither at "
                f"{pin.old[:12]}, where it moved from, nor at {pin.new[:12]}"
            )
        moved = [pin.name for pin in edit.pins if pinned[pin.name] == pin.new != pin.old]
        if moved:
            kept = [pin.name for pin in edit.pins if pin.name not in moved]
            raise refuse(f"the manifest holds the new pins of {', '.join(moved)} but the old "
                         f"ones of {', '.join(kept)}")  # fmt: skip
    if edit.moves == "frozen" and not written:
        for pin in edit.pins:
            head = current_head(runner, manifest, deps[pin.name])
            if head != pin.new:
                raise refuse(f"{pin.path} is at {head[:12]} now, not at {pin.new[:12]}, "
                             "which it froze")  # fmt: skip
    committed = None
    if edit.message is not None:
        now = head_sha(runner, manifest.root)
        if now != edit.head:
            if not written or not _is_the_commit(runner, manifest.root, now, edit):
                raise refuse(f"HEAD moved since, from {str(edit.head)[:12]} to {str(now)[:12]}")
            committed = now
    return Progress(written, committed)


def _is_the_commit(runner: Runner, root: Path, head: str | None, edit: Edit) -> bool:
    """Whether head is the commit the edit makes: on its parent, with its message."""
    if head is None:
        return False
    out = runner.run(root, "log", "-1", "--format=%P%x00%B", head, "--", check=False)
    parents, _, message = out.stdout.partition("\x00")
    return out.status == 0 and parents.split() == ([edit.head] if edit.head else []) and (
        message.rstrip("\n") == (edit.message or "").rstrip("\n")
    )
