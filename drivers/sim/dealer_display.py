"""Simulated dealer text displays: in-memory (``SimDealerDisplay``) and a pty twin."""

from __future__ import annotations

from collections.abc import Sequence

from drivers.dealer_display import COLUMNS, check_lines
from drivers.errors import ProtocolError
from drivers.sim.serial_display import PtyLineDevice

__all__ = ["SimDealerDisplay", "SimTextDevice"]


#: What the twins remember: the newest entries only (they run for days in a soak or a sim table).
HISTORY_MAX = 4096


def _remember(history: list[tuple[str, str]], shown: tuple[str, str]) -> None:
    history.append(shown)
    if len(history) > 2 * HISTORY_MAX:
        del history[:-HISTORY_MAX]


class SimDealerDisplay:
    """A ``DealerDisplay`` backend that records what it shows (for the sim profile and tests)."""

    def __init__(self) -> None:
        self.lines: tuple[str, str] = ("", "")
        self.history: list[tuple[str, str]] = []

    def show(self, lines: Sequence[str]) -> None:
        """Record two validated lines (same checks as the serial display)."""
        self.lines = check_lines(lines)
        _remember(self.history, self.lines)

    def clear(self) -> None:
        """Record a cleared display."""
        self.lines = ("", "")
        _remember(self.history, self.lines)

    def close(self) -> None:
        """Nothing to release."""


class SimTextDevice(PtyLineDevice):
    """Twin of the serial 20x2 text display (S<l1>|<l2> / X) on a pty."""

    def __init__(self) -> None:
        self.lines: tuple[str, str] = ("", "")
        self.history: list[tuple[str, str]] = []
        super().__init__()

    def handle(self, line: str) -> None:
        if line == "X":
            shown = ("", "")
        elif line.startswith("S") and line.count("|") == 1:
            first, second = line[1:].split("|")
            if len(first) > COLUMNS or len(second) > COLUMNS:
                raise ProtocolError("line too long")
            shown = (first, second)
        else:
            raise ProtocolError(f"unknown command {line!r}")
        self.lines = shown
        _remember(self.history, shown)
