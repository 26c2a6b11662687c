"""Progress, verbosity and colour: live on a terminal, plain lines and a heartbeat elsewhere,
nothing but errors and results under -q, colour only where it belongs."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import servers
from procs import environment
from repos import large_project

from qola.base import console

RATE = 2_000_000  # bytes a second: the large upstream's big commit (~10 MB) takes ~5 s


@contextmanager
def slow_url(large_upstream) -> Iterator[str]:
    """A git:// URL of the large upstream behind a throttled loopback proxy."""
    with servers.git_daemon(large_upstream.path.parent) as daemon:
        proxy = servers.ThrottlingProxy(daemon, RATE)
        try:
            yield f"git://127.0.0.1:{proxy.port}/{large_upstream.path.name}"
        finally:
            proxy.close()


def run_in_terminal(args: list[str], cwd, env: dict[str, str]) -> list[tuple[float, bytes]]:
    """Run `python -m qola ARGS` with a pseudo-terminal for stdin, stdout and stderr; return
    what it wrote, each chunk with the time it came, and the exit as (time, b"EXIT <code>")."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "qola", *args], cwd=cwd, env=environment(env),
        stdin=slave, stdout=slave, stderr=slave, close_fds=True,
    )  # fmt: skip
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the terminal's last writer is gone
                break
            if not data:
                break
            chunks.append((time.monotonic(), data))
        elif proc.poll() is not None:
            break
    code = proc.wait(timeout=60)
    os.close(master)
    chunks.append((time.monotonic(), b"EXIT %d" % code))
    return chunks


def test_checkout_on_a_terminal_shows_progress_before_the_clone_ends(tmp_path, large_upstream):
    with slow_url(large_upstream) as url:
        manifest = large_project(tmp_path / "project", url, large_upstream.big_a)
        chunks = run_in_terminal(["checkout", "-m", str(manifest)], tmp_path, {"TERM": "xterm"})
    ended, last = chunks[-1]
    assert last == b"EXIT 0", b"".join(c for _, c in chunks)
    progress = [when for when, data in chunks if b"Receiving objects" in data]
    assert progress, b"".join(c for _, c in chunks)
    assert ended - progress[0] > 1.0  # seen while the fetch ran, not dumped at the end
    screen = b"".join(data for _, data in chunks)
    assert b"big: fetching" in screen
    assert b"\x1b[" in screen  # the board is redrawn in place
    assert screen.count(b"Receiving objects") > 3  # and it moves


def test_checkout_off_a_terminal_prints_plain_steps_and_a_heartbeat(
    tmp_path, large_upstream, run_qola, monkeypatch
):
    """CI logs and CMake: one line per step, and every HEARTBEAT seconds of a long step a
    line saying where it is; never a carriage return or an escape code."""
    monkeypatch.setattr(console, "HEARTBEAT", 1.0)  # 10 s in real runs
    with slow_url(large_upstream) as url:
        manifest = large_project(tmp_path / "project", url, large_upstream.big_a)
        res = run_qola("checkout", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    lines = res.stderr.splitlines()
    assert lines[0].startswith(f"qola: big: clone {url} at ")
    assert lines[1] == f"qola: big: fetching {large_upstream.big_a[:12]} (depth 1)"
    beats = [line for line in lines if line.startswith("qola: big: fetching, ")]
    assert beats, res.stderr
    assert any(" MiB, " in line for line in beats), beats  # the bytes so far
    assert all(line.endswith(" s") for line in beats)
    assert "\r" not in res.stderr and "\x1b" not in res.stderr


def test_checkout_json_counts_the_bytes_fetched(tmp_path, large_upstream, run_qola):
    import json

    manifest = large_project(tmp_path / "project", large_upstream.path, large_upstream.big_a)
    res = run_qola("checkout", "-q", "--format", "json", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    [dep] = json.loads(res.stdout)["deps"]
    assert dep["bytes_fetched"] > 600 * 16384  # the pack of 600 files of 16 KiB


def test_quiet_checkout_prints_only_the_result(make_project, run_qola):
    project = make_project()
    res = run_qola("-q", "checkout", "-m", str(project.manifest))
    assert res.exit_code == 0
    assert res.stderr == ""
    assert res.stdout.startswith("lib 3rdparty/lib ")
    loud = run_qola("checkout", "-m", str(make_project(name="loud").manifest))
    assert loud.stderr  # what -q took away


def test_quiet_still_prints_errors(make_project, run_qola):
    project = make_project(pin="1" * 40)
    res = run_qola("checkout", "-q", "-m", str(project.manifest))
    assert res.exit_code == 3
    assert res.stderr.startswith("qola: lib: ")
    assert "qola: lib: clone" not in res.stderr  # the note is gone, the error is not


def test_verbose_prints_each_git_command_as_it_starts_with_its_folder(make_project, run_qola):
    project = make_project()
    res = run_qola("-v", "checkout", "-m", str(project.manifest))
    assert res.exit_code == 0
    lines = res.stderr.splitlines()
    fetch = next(i for i, line in enumerate(lines) if line.startswith("qola: run: git -C "))
    # Said before git ran: the step's line and the command come before its result note.
    assert "qola: run: git -C " in lines[fetch] and str(project.root) in lines[fetch]
    said = [i for i, line in enumerate(lines) if " fetch " in line and "run: git" in line]
    fetched = [i for i, line in enumerate(lines) if "fetched " in line and "by SHA" in line]
    assert said and fetched and said[0] < fetched[0]


# -- colour


def test_status_colours_states_on_a_terminal_only(pinned_clean, tmp_path):
    (pinned_clean.lib / "lib.txt").write_text("edited\n")
    args = ["status", "-m", str(pinned_clean.manifest)]
    chunks = run_in_terminal(args, tmp_path, {"TERM": "xterm"})
    screen = b"".join(data for _, data in chunks)
    assert b"\x1b[32mok" in screen  # the state column: ok in green
    assert b"\x1b[31myes" in screen  # dirt in red
    piped = subprocess.run([sys.executable, "-m", "qola", *args], capture_output=True,
                           env=environment(), check=False)  # fmt: skip
    assert b"\x1b" not in piped.stdout + piped.stderr


@pytest.mark.parametrize(
    ("env", "coloured"),
    [({}, False), ({"FORCE_COLOR": "1"}, True), ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
     ({"FORCE_COLOR": "0"}, False)],
    ids=["piped", "forced", "no-color-wins", "force-zero"],
)  # fmt: skip
def test_colour_follows_no_color_and_force_color_when_piped(pinned_clean, run_qola, env, coloured):
    res = run_qola("verify", "-m", str(pinned_clean.manifest), env=env)
    assert res.exit_code == 0
    assert ("\x1b[32m" in res.stdout) is coloured


def test_no_color_turns_colour_off_on_a_terminal(pinned_clean, tmp_path):
    chunks = run_in_terminal(["verify", "-m", str(pinned_clean.manifest)], tmp_path,
                             {"TERM": "xterm", "NO_COLOR": "1"})  # fmt: skip
    screen = b"".join(data for _, data in chunks)
    assert b"EXIT 0" in screen and b"\x1b[" not in screen


def test_checkout_up_to_date_is_green_and_overridden_yellow(pinned_clean, tmp_path, run_qola):
    res = run_qola("checkout", "-m", str(pinned_clean.manifest), env={"FORCE_COLOR": "1"})
    assert "\x1b[32mup to date\x1b[0m" in res.stdout
    elsewhere = tmp_path / "mine"
    elsewhere.mkdir()
    res = run_qola("checkout", "-m", str(pinned_clean.manifest),
                   env={"FORCE_COLOR": "1", "QOLA_SOURCE_DIR_LIB": str(elsewhere)})  # fmt: skip
    assert f"\x1b[33moverridden by {elsewhere}\x1b[0m" in res.stdout


def test_git_progress_lines_are_read_with_their_bytes():
    found = console.read_git_progress("Receiving objects:  56% (2505/4473), 4.78 MiB | 1.35 MiB/s")
    assert found is not None
    assert (found.title, found.size, found.received) == ("Receiving objects", "4.78 MiB",
                                                         int(4.78 * 2**20))  # fmt: skip
    assert console.read_git_progress("remote: Counting objects:  10% (1/10)") is not None
    assert console.read_git_progress("fatal: could not read from remote repository") is None


def fetching(name: str, git_line: str) -> console.Activity:
    """An activity fetching, six seconds in, with git's latest progress line."""
    activity = console.Activity(name)
    activity.step("fetching", "bc922796356f (depth 1)")
    assert activity.git_line(git_line)
    return activity


RECEIVING = "Receiving objects:  16% (97/604), 1.48 MiB | 300.00 KiB/s"


@pytest.mark.parametrize("width", [80, 60, 50, 40])
def test_board_line_shortens_git_words_first_and_keeps_the_rate_and_the_seconds(width):
    activity = fetching("big1", RECEIVING)
    line = activity.line(activity.started + 6, width)
    assert len(line) < width
    assert line.endswith(" 300.00 KiB/s  6 s"), line
    assert line.startswith("big1: fetching bc92")


def test_board_line_on_a_wide_terminal_is_whole():
    activity = fetching("big1", RECEIVING)
    assert activity.line(activity.started + 6, 120) == (
        "big1: fetching bc922796356f (depth 1)  Receiving objects 16% (97/604), 1.48 MiB | "
        "300.00 KiB/s  6 s"
    )
    assert activity.line(activity.started + 6, 80) == (
        "big1: fetching bc922796356f (depth 1)  16%, 1.48 MiB | 300.00 KiB/s  6 s"
    )


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_board_hidden_after_the_terminal_narrowed_erases_every_row_its_lines_wrap_to(
    monkeypatch,
):
    screen = _Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("COLUMNS", "120")
    board = console._Board()
    activity = fetching("big1", RECEIVING)
    board.activities.append(activity)
    board._draw(activity.started + 6)
    drawn = screen.getvalue()
    assert drawn.count("\n") == 1 and len(drawn) == len("\x1b[2K\n") + 99
    monkeypatch.setenv("COLUMNS", "40")  # the window made narrower: 99 characters, 3 rows
    board.hide()
    assert screen.getvalue()[len(drawn):] == "\x1b[3F\x1b[J"


def test_board_line_shows_control_characters_from_git_as_escapes():
    hostile = "Receiving objects:  16% (97/604), 1.48 MiB | \x1b]0;PWNED\x07 1 KiB/s"
    activity = fetching("big1", hostile)
    line = activity.line(activity.started + 6, 200)
    assert "\x1b" not in line and "\x07" not in line
    assert "\\033]0;PWNED\\a" in line
