"""``rng.background_cycle``: draw and discard from the RNG's source in the background, at random
intervals, between games and during them (docs/rng.md "Cycling and seeding").

For jurisdictions whose rules read as requiring an algorithmic RNG to cycle in the background:
N.J.A.C. 13:69E-1.28G(b)4 ("continually cycle in the background between games") and OAC
325:85-15-50(5) ("cycled continuously in the background between games and during game play at a
speed that cannot be timed by the player"). The table's source is the kernel's CSPRNG, which
has no state a player can time (docs/rng.md gives the argument); this worker adds what the
words ask for and nothing the draws depend on:

- It reads through :meth:`CertifiedRng.read_raw`, so every byte it takes passes the same
  SP 800-90B health tests as a draw's (and the hardware generator's as many), and a failure it
  finds latches the fault before the next draw, as a draw's would.
- Each read holds the generator's lock for one read only: a draw's bytes are never split by a
  discard, so every draw's raw bytes still replay into its outcome (``outcomes_from_raw``,
  the lab's ``rng/replay.py``) and a raw capture stays one run of the source's bytes.
- The pause before each read and its size are drawn from the kernel's CSPRNG (``secrets``),
  not from a clock; while the generator is in fault or the kernel is not ready it reads nothing.

One daemon thread; every wait has a timeout; :meth:`stop` ends it.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

from controller.rng.certified import RngFault

#: The pause before each discard is drawn uniformly from these bounds (seconds).
MIN_PAUSE_S: Final = 0.005
MAX_PAUSE_S: Final = 0.050
#: Each discard takes 1 to this many bytes (drawn uniformly).
MAX_DISCARD: Final = 32
#: While the generator is in fault (or not ready) the worker looks again this often.
FAULT_RETRY_S: Final = 1.0


class CycledRng(Protocol):
    """What the worker needs of :class:`controller.rng.certified.CertifiedRng`."""

    @property
    def faulted(self) -> bool: ...
    def read_raw(self, count: int) -> bytes: ...


@dataclass
class CycleCounters:
    """What the worker did: discards made, bytes discarded, reads refused (fault, not ready)."""

    discards: int = 0
    bytes: int = 0
    refused: int = 0


class BackgroundCycle:
    """Discards 1..``max_discard`` health-tested bytes of ``rng``'s source after each pause
    drawn from ``min_pause_s``..``max_pause_s``. ``below`` draws the random pauses and sizes
    (``secrets.randbelow``; injectable for tests)."""

    def __init__(
        self,
        rng: CycledRng,
        *,
        min_pause_s: float = MIN_PAUSE_S,
        max_pause_s: float = MAX_PAUSE_S,
        max_discard: int = MAX_DISCARD,
        below: Callable[[int], int] = secrets.randbelow,
    ) -> None:
        if not 0 < min_pause_s <= max_pause_s or max_discard < 1:
            raise ValueError("need 0 < min_pause_s <= max_pause_s and max_discard >= 1")
        self._rng = rng
        self._min_us = int(min_pause_s * 1e6)
        self._span_us = int(max_pause_s * 1e6) - self._min_us + 1
        self._max_discard = max_discard
        self._below = below
        self.counters = CycleCounters()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def pause_s(self) -> float:
        """The next pause: uniform over the bounds, in microseconds."""
        return (self._min_us + self._below(self._span_us)) / 1e6

    def step(self) -> int:
        """One discard: the bytes taken (0 while the generator is in fault or not ready; a
        health-test failure found here latches the fault and is not raised)."""
        if self._rng.faulted:
            self.counters.refused += 1
            return 0
        count = 1 + self._below(self._max_discard)
        try:
            taken = len(self._rng.read_raw(count))
        except RngFault:  # latched (or not ready): the table's next draw says so
            self.counters.refused += 1
            return 0
        self.counters.discards += 1
        self.counters.bytes += taken
        return taken

    def _run(self) -> None:
        while not self._stop.wait(self.pause_s()):
            if self.step() == 0:
                self._stop.wait(FAULT_RETRY_S)

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="rng-cycle", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()
