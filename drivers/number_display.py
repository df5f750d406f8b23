"""The pai gow number display: a Protocol and a single 7-segment digit driven from GPIO.

Segment names follow the usual datasheet convention::

     aaa
    f   b
     ggg
    e   c
     ddd   (dp)

Patterns shown (standard 7-segment encodings; 6 with its top bar and 7 without the f tail):

    1: b c            5: a c d f g
    2: a b d e g      6: a c d e f g
    3: a b c d g      7: a b c
    4: b c f g        8: a b c d e f g

Fault pattern: the lone middle bar "-" (g only).  It differs from every digit 1-8 in at least
three segments, so no single or double dead/stuck segment turns a digit into it or it into a
digit; "E" (a d e f g) was rejected because it is one segment (c) away from 6.
Lamp test: every segment (and dp when wired) lit, so a dead segment is seen at power-up before it
can turn an 8 into a 0.  The driver never sleeps: the caller decides how long the test shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, Protocol

from drivers.errors import DeviceUnavailable, DisplayValueError, PinError
from drivers.gpio import GpioApi, ensure_bcm, validate_pins

__all__ = [
    "DIGIT_SEGMENTS",
    "FAULT_SEGMENTS",
    "NumberDisplay",
    "SEGMENTS",
    "SevenSegmentDisplay",
    "check_number",
]

SEGMENTS = ("a", "b", "c", "d", "e", "f", "g")
_OPTIONAL = ("dp",)

DIGIT_SEGMENTS: Mapping[int, frozenset[str]] = {
    1: frozenset("bc"),
    2: frozenset("abdeg"),
    3: frozenset("abcdg"),
    4: frozenset("bcfg"),
    5: frozenset("acdfg"),
    6: frozenset("acdefg"),
    7: frozenset("abc"),
    8: frozenset("abcdefg"),
}
FAULT_SEGMENTS = frozenset("g")


class NumberDisplay(Protocol):
    """What the controller needs from any number display (GPIO digit, serial LED, sim)."""

    def show(self, n: int) -> None:
        """Show the drawn number ``n`` (1-8)."""

    def blank(self) -> None:
        """Show nothing."""

    def fault(self) -> None:
        """Show the fault pattern (no valid number)."""

    def lamp_test(self) -> None:
        """Light every segment until the next call."""

    def close(self) -> None:
        """Blank and release the device; later calls raise DeviceUnavailable."""


def check_number(n: object) -> int:
    """Return ``n`` if it is an int 1-8 (the pai gow starting-position count), else raise."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 8:
        raise DisplayValueError(f"the number display shows an int 1-8, not {n!r}")
    return n


class SevenSegmentDisplay:
    """One 7-segment digit, one GPIO per segment (BCM numbers), common anode or cathode."""

    def __init__(
        self,
        gpio: GpioApi,
        pins: Mapping[str, int],
        common: Literal["anode", "cathode"],
    ) -> None:
        unknown = set(pins) - set(SEGMENTS) - set(_OPTIONAL)
        missing = set(SEGMENTS) - set(pins)
        if unknown or missing:
            raise PinError(
                "seven-segment pins need a-g (dp optional); "
                f"missing {sorted(missing)}, unknown {sorted(unknown)}"
            )
        if common not in ("anode", "cathode"):
            raise PinError(f"common must be 'anode' or 'cathode', not {common!r}")
        self._pins = validate_pins(pins, "seven-segment display")
        self._gpio = gpio
        # Common anode: the segment's cathode pin sinks current, so LOW lights it.
        self._on = gpio.LOW if common == "anode" else gpio.HIGH
        self._off = gpio.HIGH if common == "anode" else gpio.LOW
        self._closed = False
        ensure_bcm(gpio)
        for pin in self._pins.values():
            gpio.setup(pin, gpio.OUT, initial=self._off)  # start dark: no stray digit at boot

    @property
    def segments(self) -> tuple[str, ...]:
        """Names of the wired segments (a-g, and dp when wired)."""
        return tuple(self._pins)

    def show(self, n: int) -> None:
        """Show the number ``n`` (1-8)."""
        self._write(DIGIT_SEGMENTS[check_number(n)])

    def blank(self) -> None:
        """Turn every segment off."""
        self._write(frozenset())

    def fault(self) -> None:
        """Show the fault pattern "-" (see module docstring for why)."""
        self._write(FAULT_SEGMENTS)

    def lamp_test(self) -> None:
        """Light every wired segment, including dp."""
        self._write(frozenset(self._pins))

    def read_back(self) -> frozenset[str]:
        """Segments lit now, read from the output pins' levels."""
        self._check_open()
        return frozenset(n for n, p in self._pins.items() if self._gpio.input(p) == self._on)

    def close(self) -> None:
        """Blank and release this display's pins (only its own)."""
        if self._closed:
            return
        self.blank()
        self._gpio.cleanup(list(self._pins.values()))
        self._closed = True

    def _write(self, lit: frozenset[str]) -> None:
        self._check_open()
        for name, pin in self._pins.items():
            self._gpio.output(pin, self._on if name in lit else self._off)

    def _check_open(self) -> None:
        if self._closed:
            raise DeviceUnavailable("seven-segment display is closed")
