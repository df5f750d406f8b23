"""The simulated twin of the TPM counter (drivers/counter.py): a counter in memory, shared by
everything that holds the same object, so a test can restore a table's files and keep the
counter where it was (what a real TPM does)."""

from __future__ import annotations

import threading


class SimCounter:
    """A monotonic counter in memory."""

    def __init__(self, value: int = 0, description: str = "simulated counter") -> None:
        self.description = description
        self._value = value
        self._lock = threading.Lock()
        #: Calls so far (a test asserts the notary made them off the loop).
        self.increments = 0

    def read(self) -> int:
        with self._lock:
            return self._value

    def increment(self) -> int:
        with self._lock:
            self._value += 1
            self.increments += 1
            return self._value
