"""The baccarat dealer's text display: at most 2 lines of 20 characters (a 20x2 character LCD).

Serial protocol (docs/drivers-display-buttons.md), ASCII lines ending CR LF, answered
``OK`` / ``ERR <reason>`` like the LED display::

    S<line 1>|<line 2>   show both lines (either may be empty; '|' is the separator)
    X                    clear
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from drivers.errors import DisplayValueError
from drivers.serial_display import SerialLineLink

__all__ = ["COLUMNS", "DealerDisplay", "ROWS", "SerialTextDisplay", "check_lines"]

ROWS = 2
COLUMNS = 20


class DealerDisplay(Protocol):
    """What the controller needs from the dealer's text display."""

    def show(self, lines: Sequence[str]) -> None:
        """Show up to 2 lines of at most 20 printable ASCII characters (no '|')."""

    def clear(self) -> None:
        """Show nothing."""


def check_lines(lines: Sequence[str]) -> tuple[str, str]:
    """Validate ``lines`` and return exactly two (missing ones empty); else DisplayValueError."""
    if isinstance(lines, (str, bytes)) or not isinstance(lines, Sequence):
        raise DisplayValueError(f"lines must be a sequence of strings, not {lines!r}")
    if len(lines) > ROWS:
        raise DisplayValueError(f"the dealer display has {ROWS} lines, not {len(lines)}")
    for line in lines:
        if not isinstance(line, str):
            raise DisplayValueError(f"a line must be a str, not {line!r}")
        if len(line) > COLUMNS:
            raise DisplayValueError(f"line longer than {COLUMNS} characters: {line!r}")
        if not all(" " <= ch <= "~" and ch != "|" for ch in line):
            raise DisplayValueError(f"printable ASCII only, and no '|': {line!r}")
    padded = [*lines, "", ""]
    return padded[0], padded[1]


class SerialTextDisplay:
    """A ``DealerDisplay`` on a serial 20x2 display speaking the S/X line protocol."""

    def __init__(
        self,
        port_url: str,
        baud: int = 9600,
        write_timeout: float = 0.5,
        ack: bool = True,
        ack_timeout: float = 0.5,
        *,
        post: Callable[[object], None] | None = None,
    ) -> None:
        self._link = SerialLineLink(
            port_url, baud, write_timeout, ack, ack_timeout, device="dealer_display", post=post
        )

    def start(self) -> None:
        """Open the port if it is there, and keep reopening it while it is not
        (drivers/serial_display.py ``SerialLineLink``)."""
        self._link.start()

    def show(self, lines: Sequence[str]) -> None:
        """Show up to two lines."""
        first, second = check_lines(lines)
        self._link.command(f"S{first}|{second}")

    def clear(self) -> None:
        """Clear the display."""
        self._link.command("X")

    def close(self) -> None:
        """Close the port (the display keeps its last text)."""
        self._link.close()
