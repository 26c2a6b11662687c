"""The one place that knows about terminals: results, messages, verbosity, colour, progress.

Which stream carries what, and how progress is drawn: docs/cli.md, "Where output goes, and
progress"."""

from __future__ import annotations

import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TextIO

from qola.base import colour, safetext

QUIET, NORMAL, VERBOSE = 0, 1, 2
HEARTBEAT = 10.0  # seconds of silence after which a running step says where it is
_REDRAW = 0.1  # the board is drawn at most this often on a terminal
# One progress line of git's (sideband "remote: " included): "Receiving objects:  56%
# (2505/4473), 4.78 MiB | 1.35 MiB/s", "Updating files: 40% (400/1000)", "Enumerating
# objects: 302, done.".
_GIT_PROGRESS = re.compile(
    r"^(?:remote: )?(?P<title>[A-Z][a-z]+(?: [a-z]+)*):\s+"
    r"(?:(?P<percent>\d+)% \((?P<done>\d+)/(?P<total>\d+)\)|(?P<count>\d+))"
    r"(?:, (?P<size>\d+(?:\.\d+)? (?:bytes|[KMGT]iB))(?: \| (?P<rate>[^,]+/s))?)?"
    r"(?:, done\.)?\s*$"
)
_UNITS = {"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}

_level = NORMAL
_lock = threading.RLock()
_local = threading.local()


def configure(verbose: bool = False, quiet: bool = False) -> None:
    """Set the verbosity for this run: -q wins over -v for notes and progress."""
    global _level
    _level = QUIET if quiet else VERBOSE if verbose else NORMAL


def is_quiet() -> bool:
    return _level == QUIET


def is_verbose() -> bool:
    return _level == VERBOSE


def result(text: str = "", end: str = "\n", commands: bool = False) -> None:
    """A line of the command's result (stdout). commands: the text is GitHub workflow
    commands of qola's own, which keep their `::` (safetext.for_log)."""
    with _lock:
        _board.hide()
        sys.stdout.write(safetext.for_log(text + end, commands))
        sys.stdout.flush()
        _board.show()


def message(text: str) -> None:
    """An error, or a line for people that always shows (stderr)."""
    with _lock:
        _board.hide()
        sys.stderr.write(safetext.for_log(text + "\n"))
        sys.stderr.flush()
        _board.show()


def report(text: str, *, to_stdout: bool) -> None:
    """What failed and what to do: stderr, like any message; but stdout when to_stdout (a
    CMake configure runs qola: QoLA.cmake shows stderr live and what it has not shown once,
    in its FATAL_ERROR)."""
    (result if to_stdout else message)(text)


def note(text: str) -> None:
    """`qola: text` for people, unless -q."""
    if _level != QUIET:
        message(f"qola: {text}")


def debug(text: str) -> None:
    """`qola: text` with -v only."""
    if _level == VERBOSE:
        message(f"qola: {text}")


def warning(text: str) -> None:
    """`qola: warning: text`; shown under -q too (it asks the user to act)."""
    message(f"qola: warning: {text}")


# -- colour


def wants_colour(stream: TextIO) -> bool:
    """Colour on a terminal; never with NO_COLOR set; always with FORCE_COLOR set (not 0)."""
    return colour.wanted(stream)


def paint(text: str, style: str, stream: TextIO | None = None) -> str:
    """text in a colour when the stream it goes to wants colour (stdout by default)."""
    return colour.paint(text, style, stream if stream is not None else sys.stdout)


def stderr() -> TextIO:
    """Where messages go (for paint)."""
    return sys.stderr


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


# -- progress


@dataclass
class GitProgress:
    """One line of git's --progress output, read."""

    title: str  # e.g. "Receiving objects"
    text: str  # the rest as git wrote it, e.g. "56% (2505/4473), 4.78 MiB | 1.35 MiB/s"
    size: str | None  # the bytes so far in git's words ("4.78 MiB"), when it says
    received: int | None  # the same in bytes
    percent: str | None = None  # "56", when git counts towards a total
    rate: str | None = None  # "1.35 MiB/s", when git says

    def shorter(self) -> list[str]:
        """The same, shorter and shorter, keeping what says whether it moves: the
        percentage, the bytes and the rate (git's counts go first, then the title)."""
        counted = ", ".join(w for w in (f"{self.percent}%" if self.percent else "",
                                        self.size or "") if w)  # fmt: skip
        rate = f" | {self.rate}" if self.rate else ""
        forms = [f"{self.title} {counted}{rate}", f"{counted}{rate}"] if counted else []
        return forms + ([self.rate] if self.rate else [])


def read_git_progress(line: str) -> GitProgress | None:
    """git's progress line read, or None when line is something else git said."""
    found = _GIT_PROGRESS.match(line.strip())
    if found is None:
        return None
    title = found.group("title")
    text = line.strip().removeprefix("remote: ").split(":", 1)[1].strip()
    size = found.group("size")
    received = None
    if size is not None:
        number, unit = size.split(" ")
        received = int(float(number) * _UNITS[unit])
    return GitProgress(title, text, size, received, found.group("percent"), found.group("rate"))


@dataclass(eq=False)
class Activity:
    """What one dependency's work is doing now; the board draws it, git.py feeds it."""

    name: str
    what: str = ""  # the step, e.g. "fetching"
    about: str = ""  # what it is done to, e.g. "d32b0cb62ecc (depth 1)"
    detail: str = ""  # git's latest progress, e.g. "Receiving objects 56% (2505/4473) ..."
    progress: GitProgress | None = None  # the same, read
    size: str | None = None  # bytes received by the running git command, in git's words
    started: float = field(default_factory=time.monotonic)  # the step's start
    said: float = field(default_factory=time.monotonic)  # the last plain line about it
    received: int = 0  # bytes received by the git commands that finished
    _receiving: int = 0  # by the one running now

    def step(self, doing: str, about: str = "") -> None:
        """A new step: a plain line off a terminal; the activity's line on one."""
        with _lock:
            self.what, self.about, self.detail, self.size = doing, about, "", None
            self.progress = None
            self.started = self.said = time.monotonic()
            _board.changed()
        if not _board.terminal and _level != QUIET:
            message(f"qola: {self.name}: {doing}{' ' + about if about else ''}")

    def git_line(self, line: str) -> bool:
        """Take one line git wrote to stderr; True when it was progress."""
        found = read_git_progress(line)
        if found is None:
            return False
        with _lock:
            self.detail, self.progress = f"{found.title} {found.text}", found
            if found.received is not None and found.title in ("Receiving objects",
                                                              "Unpacking objects"):
                self.size, self._receiving = found.size, found.received
            _board.changed()
        return True

    def git_finished(self) -> None:
        """The running git command ended: count what it received."""
        with _lock:
            self.received += self._receiving
            self._receiving = 0

    def heartbeat(self, now: float) -> str:
        """`<step>, <size>, <seconds> s`: the plain line of a step running long."""
        parts = [self.what]
        if self.size:
            parts.append(self.size)
        elif self.detail:
            parts.append(self.detail)
        parts.append(f"{now - self.started:.0f} s")
        return safetext.line(", ".join(parts))

    def line(self, now: float, width: int) -> str:
        """The activity's line on the board, shorter than width.

        What says whether the work moves (the rate, the percentage, the seconds) is
        at the end and kept: when the line is too long, git's counts and its words go
        first, then the end of what is being fetched is cut.
        """
        room = max(width - 1, 1)  # a character in the last column wraps on some terminals
        elapsed = f"{now - self.started:.0f} s" if now - self.started >= 1 else ""
        head = safetext.line(f"{self.name}: {self.what}")
        left = head + (" " + safetext.line(self.about) if self.about else "")
        details = [self.detail, *(self.progress.shorter() if self.progress else [])]
        shorter = [safetext.line(detail) for detail in details if detail]
        for whole, tried in ((True, shorter), (False, [*shorter, ""])):
            for detail in tried:
                right = "  ".join(part for part in (detail, elapsed) if part)
                shown = left if whole else _cut(left, room - len(right) - 2, len(head))
                text = f"{shown}  {right}" if right else shown
                if shown and len(text) <= room:
                    return text
        return _cut(left, room, 1) or left[:room]


def _cut(text: str, room: int, keep: int) -> str:
    """text in room characters, its end replaced by "…" if need be; "" when that would
    leave fewer than keep of its characters."""
    if len(text) <= room:
        return text
    return text[: room - 1] + "…" if room - 1 >= keep else ""


def _columns() -> int:
    """The width of the terminal stderr writes to (the board's), else of stdout's."""
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        # A terminal nobody sized (a fresh pseudo-terminal) reports 0 columns; Python
        # 3.10's get_terminal_size passes that on, later ones use the fallback.
        return shutil.get_terminal_size((80, 24)).columns or 80


class _Board:
    """The running activities, drawn at the foot of stderr on a terminal."""

    def __init__(self) -> None:
        self.activities: list[Activity] = []
        self.drawn: list[int] = []  # the length of each line on screen now
        self.dirty = False
        self.ticker: threading.Thread | None = None
        self.hidden = 0  # > 0 while a message is written above the board

    @property
    def terminal(self) -> bool:
        return _is_terminal(sys.stderr) and os.environ.get("TERM") != "dumb"

    def add(self, activity: Activity) -> None:
        with _lock:
            self.activities.append(activity)
            if self.ticker is None or not self.ticker.is_alive():
                self.ticker = threading.Thread(target=self._tick, daemon=True)
                self.ticker.start()

    def remove(self, activity: Activity) -> None:
        with _lock:
            if activity in self.activities:
                self.activities.remove(activity)
            self.changed()
            if not self.activities:
                self.hide()

    def changed(self) -> None:
        self.dirty = True

    def hide(self) -> None:
        """Erase the board (before other output); show() puts it back."""
        if self.drawn:
            # The rows the lines take now: a terminal made narrower since they were
            # drawn wraps them again, and moving up one row per line would leave the
            # rest of them on the screen.
            width = _columns()
            rows = sum(max(1, -(-length // width)) for length in self.drawn)
            sys.stderr.write(f"\x1b[{rows}F\x1b[J")
            sys.stderr.flush()
            self.drawn = []

    def show(self) -> None:
        self.dirty = True

    def _draw(self, now: float) -> None:
        if _level == QUIET or not self.terminal:
            return
        width = _columns()
        lines = [a.line(now, width) for a in self.activities if a.what]
        self.hide()
        if lines:
            sys.stderr.write("".join(f"\x1b[2K{line}\n" for line in lines))
            sys.stderr.flush()
        self.drawn = [len(line) for line in lines]
        self.dirty = False

    def _beat(self, now: float) -> None:
        if _level == QUIET:
            return
        for activity in self.activities:
            if activity.what and now - activity.said >= HEARTBEAT:
                activity.said = now
                sys.stderr.write(f"qola: {activity.name}: {activity.heartbeat(now)}\n")
                sys.stderr.flush()

    def _tick(self) -> None:
        last_second = 0
        while True:
            time.sleep(_REDRAW)
            with _lock:
                if not self.activities:
                    self.ticker = None
                    return
                now = time.monotonic()
                if not self.terminal:
                    self._beat(now)
                elif self.dirty or int(now) != last_second:
                    last_second = int(now)
                    self._draw(now)


_board = _Board()


@contextmanager
def activity(name: str) -> Iterator[Activity]:
    """Progress of one dependency's work on this thread: git.py reports into it."""
    task = Activity(name)
    previous = current()
    _local.activity = task
    _board.add(task)
    try:
        yield task
    finally:
        _local.activity = previous
        _board.remove(task)


def current() -> Activity | None:
    """The activity of this thread, if any."""
    found: Activity | None = getattr(_local, "activity", None)
    return found


def step(doing: str, about: str = "") -> None:
    """A new step of this thread's activity (nothing when there is none)."""
    task = current()
    if task is not None:
        task.step(doing, about)


def raw(data: bytes, err: bool = False) -> None:
    """Another program's output, byte for byte (stdout, or stderr with err)."""
    stream = sys.stderr if err else sys.stdout
    with _lock:
        _board.hide()
        stream.flush()
        stream.buffer.write(data)
        stream.buffer.flush()
        _board.show()
