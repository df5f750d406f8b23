"""Deterministic byte sources for the RNG tests."""

from __future__ import annotations

import os
import threading
from pathlib import Path

# 1,024 bytes that pass the start-up test: every value four times, never twice in a row, and
# twice per 512-sample APT window.
STARTUP_BYTES = bytes(range(256)) * 4


class ScriptedSource:
    """Serves the given bytes in order; records how many were taken; short when exhausted."""

    def __init__(self, data: bytes = b"", *, startup: bool = True) -> None:
        self.data = bytearray(STARTUP_BYTES if startup else b"") + data
        self.taken = 0

    def feed(self, data: bytes) -> None:
        self.data += data

    def __call__(self, count: int) -> bytes:
        chunk = bytes(self.data[self.taken : self.taken + count])
        self.taken += len(chunk)
        return chunk


class CyclingSource:
    """Endless good-enough bytes (0, 1, ..., 255, 0, ...) unless ``stuck`` is set."""

    def __init__(self) -> None:
        self.position = 0
        self.stuck: int | None = None

    def __call__(self, count: int) -> bytes:
        if self.stuck is not None:
            return bytes([self.stuck]) * count
        out = bytes((self.position + i) % 256 for i in range(count))
        self.position += count
        return out


class SlowGenerator:
    """A FIFO fed like a slow hardware generator: ``burst`` bytes every ``every_s``, a pause of
    ``pause_s`` after ``pause_after`` bytes, and silence after ``stop_after`` bytes."""

    def __init__(
        self,
        path: Path,
        *,
        burst: int = 64,
        every_s: float = 0.02,
        pause_after: int | None = None,
        pause_s: float = 0.0,
        stop_after: int | None = None,
    ) -> None:
        os.mkfifo(path)
        self.path = path
        self._stop = threading.Event()
        self.written = 0
        self._args = (burst, every_s, pause_after, pause_s, stop_after)
        self._thread = threading.Thread(target=self._feed, daemon=True)
        self._thread.start()

    def _feed(self) -> None:
        burst, every_s, pause_after, pause_s, stop_after = self._args
        fd = os.open(self.path, os.O_WRONLY)  # waits for the reader to open
        try:
            paused = False
            while not self._stop.is_set():
                if stop_after is not None and self.written >= stop_after:
                    self._stop.wait(60)  # silent, but the device stays open
                    continue
                if pause_after is not None and not paused and self.written >= pause_after:
                    paused = True
                    self._stop.wait(pause_s)
                os.write(fd, os.urandom(burst))
                self.written += burst
                self._stop.wait(every_s)
        except BrokenPipeError:
            pass
        finally:
            os.close(fd)

    def close(self) -> None:
        self._stop.set()
        try:  # release a writer still waiting for a reader
            os.close(os.open(self.path, os.O_RDONLY | os.O_NONBLOCK))
        except OSError:
            pass
        self._thread.join(5)
