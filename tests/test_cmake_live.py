"""What a configure shows while qola works: qola's report as it happens, not at the end;
nothing from qola on a no-op but its one summary line (real CMake)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import Upstream
from repos import head, snapshot
from servers import CuttingProxy, git_daemon
from test_cmake import GENERATORS, Consumer, _pypi_cmake, make_consumer

DELAY = 0.5  # seconds the proxy holds every piece the server sends


class SlowProxy(CuttingProxy):
    """Forwards loopback connections to a port, holding each piece the server sends back
    for DELAY seconds: a clone of even a small repository takes seconds."""

    def __init__(self, target: int) -> None:
        super().__init__(target, None)

    def _pump(self, src: socket.socket, dst: socket.socket, limit: int | None) -> None:
        towards_client = src.getpeername()[1] == self.target
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    dst.shutdown(socket.SHUT_WR)
                    return
                if towards_client:
                    time.sleep(DELAY)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            src.close()


def timed_lines(proc: subprocess.Popen[str]) -> list[tuple[float, str]]:
    """Every line of both streams with the moment it arrived, until the process ends."""
    lines: list[tuple[float, str]] = []

    def read(stream) -> None:
        for line in stream:
            lines.append((time.monotonic(), line.rstrip("\n")))

    readers = [threading.Thread(target=read, args=(s,)) for s in (proc.stdout, proc.stderr)]
    for reader in readers:
        reader.start()
    proc.wait(timeout=300)
    for reader in readers:
        reader.join()
    return lines


@pytest.mark.parametrize("version", ["3.21", "newest"])
@pytest.mark.parametrize("generator", GENERATORS, ids=["ninja", "make"])
def test_slow_clone_shows_qolas_line_before_the_configure_ends(
    version: str, generator: str, tmp_path: Path, upstream: Upstream
) -> None:
    consumer = make_consumer(tmp_path, upstream, _pypi_cmake(version), generator, upstream.lib_v1)
    with git_daemon(upstream.lib.parent) as port:
        proxy = SlowProxy(port)
        try:
            url = f"git://127.0.0.1:{proxy.port}/lib"
            consumer.manifest.write_text(consumer.manifest.read_text().replace(
                f'url = "{upstream.lib}"', f'url = "{url}"'))  # fmt: skip
            command = [str(consumer.cmake), "-S", str(consumer.src), "-B", str(consumer.build),
                       "-G", consumer.generator]  # fmt: skip
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | consumer.env
            proc = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
            )
            lines = timed_lines(proc)
            ended = time.monotonic()
        finally:
            proxy.close()

    assert proc.returncode == 0, "\n".join(line for _, line in lines)
    assert head(consumer.lib) == upstream.lib_v1
    shown, line = next((t, line) for t, line in lines if f"lib: clone {url} at " in line)
    # Shown while git was still fetching through the slow proxy, as qola said it.
    assert ended - shown > 2 * DELAY, lines
    assert line == f"qola: lib: clone {url} at {upstream.lib_v1[:12]} into 3rdparty/lib"


@pytest.fixture
def configured(tmp_path: Path, upstream: Upstream) -> Consumer:
    consumer = make_consumer(tmp_path, upstream, _pypi_cmake("newest"), "Ninja", upstream.lib_v1)
    consumer.configure()
    return consumer


def test_noop_run_of_qola_shows_only_the_summary_line(configured: Consumer) -> None:
    starts = configured.python_starts()

    proc = configured.configure("-U_QOLA_KEY_*")  # the stamp's key dropped: qola runs

    assert configured.python_starts() > starts
    assert proc.stderr == ""
    assert [line for line in proc.stdout.splitlines() if "-- qola:" in line] == [
        "-- qola: qola.toml: 1 dependency at its pin"
    ]


def test_verbose_log_level_lists_each_dependency_at_its_pin(
    configured: Consumer, upstream: Upstream
) -> None:
    proc = configured.configure("-U_QOLA_KEY_*", "--log-level=VERBOSE")

    assert f"-- qola: lib 3rdparty/lib {upstream.lib_v1[:12]} up to date" in proc.stdout


def test_quiet_checkout_shows_no_progress_either(consumer_quiet: Consumer) -> None:
    proc = consumer_quiet.configure("-DCONSUMER_ARGS=QUIET")

    assert consumer_quiet.lib.exists()
    assert "qola" not in proc.stdout + proc.stderr


@pytest.fixture
def consumer_quiet(tmp_path: Path, upstream: Upstream) -> Consumer:
    return make_consumer(tmp_path, upstream, _pypi_cmake("newest"), "Ninja", upstream.lib_v1)


def shown_once(proc: subprocess.CompletedProcess[str], line: str) -> bool:
    """line appears once in all the configure printed, inside its CMake Error."""
    everything = proc.stdout + proc.stderr
    error = proc.stderr[proc.stderr.find("CMake Error at") :]
    return everything.count(line) == 1 and "CMake Error at" in proc.stderr and line in error


@pytest.mark.parametrize("version", ["3.21", "newest"])
@pytest.mark.parametrize("generator", GENERATORS, ids=["ninja", "make"])
def test_refusal_under_a_build_shows_qolas_report_once_inside_the_cmake_error(
    version: str, generator: str, tmp_path: Path, upstream: Upstream
) -> None:
    consumer = make_consumer(tmp_path, upstream, _pypi_cmake(version), generator, upstream.lib_v1)
    consumer.configure()
    (consumer.lib / "README").write_text("my work\n")
    consumer.pin(upstream.lib, upstream.lib_v2)

    proc = consumer.build_(check=False)  # the pin edit re-runs configure, which refuses

    assert proc.returncode != 0
    refusal = f"qola: lib: moving 3rdparty/lib to {upstream.lib_v2[:12]} would lose local work:"
    assert shown_once(proc, refusal), proc.stdout + proc.stderr
    assert shown_once(proc, "qola: 1 of 1 dependency failed: lib")
    assert (consumer.lib / "README").read_text() == "my work\n"


@pytest.mark.parametrize("quiet", [False, True], ids=["live", "quiet"])
def test_invalid_manifest_shows_qolas_error_once_inside_the_cmake_error(
    quiet: bool, configured: Consumer
) -> None:
    configured.manifest.write_text(configured.manifest.read_text() + "[deps.other]\n")
    before = snapshot(configured.src)

    proc = configured.configure(*(["-DCONSUMER_ARGS=QUIET"] if quiet else []), check=False)

    assert proc.returncode != 0
    error = f"qola: {configured.manifest}:5: deps.other: has no commit"
    assert shown_once(proc, error), proc.stdout + proc.stderr
    assert shown_once(proc, "hint: pin it: qola bump other --to REF")
    assert "checkout failed (exit 2: the manifest or the command line is invalid):" in " ".join(
        proc.stderr.split()
    )
    assert snapshot(configured.src) == before


def test_failure_that_reports_only_on_stderr_points_above_the_cmake_error(
    configured: Consumer, tmp_path: Path
) -> None:
    # An interpreter whose qola dies saying so on stderr only (a crash, click's usage error).
    dying = tmp_path / "dying-python"
    dying.write_text(
        '#!/bin/sh\ncase "$*" in *" checkout "*) echo "qola died here" >&2; exit 3;; esac\n'
        f'exec "{sys.executable}" "$@"\n'
    )
    dying.chmod(0o755)

    proc = configured.configure(f"-DQOLA_PYTHON={dying}", "-U_QOLA_KEY_*", check=False)

    assert proc.returncode != 0
    assert (proc.stdout + proc.stderr).count("qola died here") == 1
    message = " ".join(proc.stderr.split())
    assert (
        "checkout failed (exit 3: a git operation failed); what qola printed is above "
        "The command was:"
    ) in message
