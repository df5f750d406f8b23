"""Shared test helpers for the shoe driver tests: bounded waits and an in-memory serial port."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

import serial

WAIT_S = 5.0  # every wait is bounded: a hung test is a failed test


def wait_until(predicate: Callable[[], bool], timeout: float = WAIT_S) -> bool:
    """Poll ``predicate`` until true or ``timeout``; returns its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


class FakePort:
    """An in-memory port: ``push`` plays the shoe, ``written`` is what the driver sent."""

    def __init__(self) -> None:
        self._rx = bytearray()
        self._cond = threading.Condition()
        self.written = bytearray()
        self.vanished = False
        self.closed = False
        self.fail_writes = False

    def push(self, data: bytes) -> None:
        with self._cond:
            self._rx += data
            self._cond.notify_all()

    def vanish(self) -> None:
        with self._cond:
            self.vanished = True
            self._cond.notify_all()

    @property
    def in_waiting(self) -> int:
        with self._cond:
            if self.vanished:
                raise serial.SerialException("device disconnected")
            return len(self._rx)

    def read(self, size: int = 1) -> bytes:
        with self._cond:
            self._cond.wait_for(lambda: self._rx or self.vanished, 0.05)
            if self.vanished:
                raise serial.SerialException("read failed: [Errno 5] Input/output error")
            data = bytes(self._rx[:size])
            del self._rx[:size]
            return data

    def write(self, data: bytes, /) -> int:
        with self._cond:
            if self.vanished or self.fail_writes:
                raise serial.SerialException("write failed")
            self.written += data
            return len(data)

    def close(self) -> None:
        self.closed = True


class Opener:
    """Hands out FakePorts in turn; ``fail`` makes the next opens raise."""

    def __init__(self) -> None:
        self.ports: list[FakePort] = []
        self.fail = 0
        self.lock = threading.Lock()

    def __call__(self, url: str, baud: int, read_timeout: float, write_timeout: float) -> FakePort:
        with self.lock:
            if self.fail:
                self.fail -= 1
                raise serial.SerialException(f"could not open port {url}")
            port = FakePort()
            self.ports.append(port)
            return port


class Events:
    """Collects posted events (the controller's queue), with bounded waits."""

    def __init__(self) -> None:
        self.queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self.seen: list[object] = []

    def post(self, event: object) -> None:
        self.queue.put(event)

    def next_of(self, kind: type, timeout: float = WAIT_S) -> object:
        """The next event of ``kind`` (earlier ones of other kinds are kept in ``seen``)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {kind.__name__} within {timeout} s; saw {self.seen}")
            try:
                event = self.queue.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(event)
            if isinstance(event, kind):
                return event
