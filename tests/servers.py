"""Loopback servers that misbehave on purpose: silent, cut off, or a real git daemon."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path


def free_port() -> int:
    """A loopback port nothing listens on (a connection to it is refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def silent_server() -> Iterator[int]:
    """Accepts connections and never answers: a hanging remote. Yields its port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            with suppress(OSError):
                accepted.append(listener.accept()[0])

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        stop.set()
        thread.join()
        for conn in accepted:
            conn.close()
        listener.close()


@contextmanager
def git_daemon(base: Path) -> Iterator[int]:
    """`git daemon` exporting every repository under base on loopback. Yields its port."""
    port = free_port()
    proc = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", "--listen=127.0.0.1", f"--port={port}",
         f"--base-path={base}", "--export-all", "--informative-errors", str(base)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise AssertionError("git daemon did not start")
            time.sleep(0.05)
        yield port
    finally:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


class PktCut:
    """Where to stop forwarding a git server's replies: the first pkt-line boundary at or
    after `limit` bytes. git's side-band packets carry up to 65,515 bytes of pack each, and
    the client hands a packet's data to unpack-objects only once all of it arrived; how big
    a packet is depends on how much pack-objects had written when upload-pack read its pipe
    (on a busy machine, a whole 64 KiB pipe). A cut at a byte count inside the first big
    packet would leave the client without the commit; a cut at a boundary never does."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.seen = bytearray()
        self.boundary = 0  # where the next pkt-line starts
        self.at: int | None = None  # the cut, once known

    def feed(self, data: bytes) -> int | None:
        """Take the next bytes; return how many of all bytes so far to forward before the
        cut (None: forward all of them, the cut lies further on)."""
        self.seen += data
        while self.at is None and self.boundary + 4 <= len(self.seen):
            if self.boundary >= self.limit:
                self.at = self.boundary
                break
            try:
                size = int(self.seen[self.boundary : self.boundary + 4], 16)
            except ValueError:  # not pkt-lines (no side-band): the plain byte count
                self.at = max(self.limit, self.boundary)
                break
            self.boundary += 4 if size < 4 else size  # flush, delim, response-end: 4 bytes
        if self.at is None and self.boundary >= self.limit and self.boundary <= len(self.seen):
            self.at = self.boundary
        return self.at if self.at is not None and self.at <= len(self.seen) else None


class CuttingProxy:
    """Forwards loopback connections to a port; after `limit` bytes back (at the next
    pkt-line boundary: PktCut), drops them."""

    def __init__(self, target: int, limit: int | None) -> None:
        self.target = target
        self.limit = limit
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = int(self.listener.getsockname()[1])
        self.cut = threading.Event()  # set once a connection was dropped on purpose
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.listener.close()

    def _serve(self) -> None:
        self.listener.settimeout(0.1)
        while not self._stop.is_set():
            try:
                client = self.listener.accept()[0]
            except OSError:
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=self._pump, args=(client, upstream, None), daemon=True).start()
            threading.Thread(
                target=self._pump, args=(upstream, client, self.limit), daemon=True
            ).start()

    def _pump(self, src: socket.socket, dst: socket.socket, limit: int | None) -> None:
        cut = PktCut(limit) if limit is not None else None
        sent = 0
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    dst.shutdown(socket.SHUT_WR)
                    return
                at = cut.feed(data) if cut is not None else None
                if at is not None:
                    dst.sendall(bytes(cut.seen[sent:at]) if cut is not None else b"")
                    self.cut.set()
                    break
                dst.sendall(data)
                sent += len(data)
        except OSError:
            pass
        # The remote "disappears": both ends closed mid-transfer.
        for sock in (src, dst):
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


class ThrottlingProxy(CuttingProxy):
    """Forwards loopback connections to a port, sending back at most `rate` bytes a second:
    a slow network, so that a clone takes long enough to watch."""

    def __init__(self, target: int, rate: int) -> None:
        self.rate = rate
        super().__init__(target, None)

    def _pump(self, src: socket.socket, dst: socket.socket, limit: int | None) -> None:
        if limit is not None or src.getpeername()[1] != self.target:
            super()._pump(src, dst, limit)  # the client's side: as fast as it comes
            return
        started, sent = time.monotonic(), 0
        try:
            while True:
                data = src.recv(min(16384, self.rate // 10 or 1))
                if not data:
                    dst.shutdown(socket.SHUT_WR)
                    return
                dst.sendall(data)
                sent += len(data)
                ahead = sent / self.rate - (time.monotonic() - started)
                if ahead > 0:
                    time.sleep(ahead)
        except OSError:
            pass
        for sock in (src, dst):
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


class StallingProxy:
    """Forwards loopback connections to a port; after `limit` bytes back on a connection (at
    the next pkt-line boundary: PktCut), it stops forwarding and holds the connection
    open, silent (a server stalled mid-pack, or a fetch a test is about to kill). `limit`
    is read as each connection opens: set it to None and later connections go through
    whole. Held ones wait for close()."""

    def __init__(self, target: int, limit: int | None) -> None:
        self.target = target
        self.limit = limit
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = int(self.listener.getsockname()[1])
        self.held = threading.Event()  # set once a connection reached its limit
        self._stop = threading.Event()
        self._sockets: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.listener.close()
        for sock in self._sockets:  # the other end sees the connection drop
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _serve(self) -> None:
        self.listener.settimeout(0.1)
        while not self._stop.is_set():
            try:
                client = self.listener.accept()[0]
            except OSError:
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target))
            self._sockets += [client, upstream]
            limit = self.limit
            threading.Thread(target=self._pump, args=(client, upstream, None), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, limit), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, limit: int | None) -> None:
        cut = PktCut(limit) if limit is not None else None
        sent = 0
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    dst.shutdown(socket.SHUT_WR)
                    return
                at = cut.feed(data) if cut is not None else None
                if at is not None and cut is not None:
                    dst.sendall(bytes(cut.seen[sent:at]))
                    self.held.set()
                    self._stop.wait()  # silent from here on, the connection open
                    return
                dst.sendall(data)
                sent += len(data)
        except OSError:
            return
