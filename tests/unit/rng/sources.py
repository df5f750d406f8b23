"""Deterministic byte sources for the RNG tests."""

from __future__ import annotations

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
