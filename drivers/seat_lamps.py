"""Optional seat lamps that light the starting position of the deal (one lamp per position).

Each lamp is an LED, or a driver stage (a ULN2803A channel, docs/hardware.md "Lamps"), on one
GPIO; active-high by default, active-low by the profile's ``devices.seat_lamps.active_high``.
"""

from __future__ import annotations

from collections.abc import Mapping

from drivers.errors import DeviceUnavailable, DisplayValueError, PinError
from drivers.gpio import GpioApi, ensure_bcm, validate_pins

__all__ = ["SeatLamps"]


class SeatLamps:
    """Lamps keyed by table position (int >= 1) on BCM pins."""

    def __init__(self, gpio: GpioApi, pins: Mapping[int, int], active_high: bool = True) -> None:
        for pos in pins:
            if isinstance(pos, bool) or not isinstance(pos, int) or pos < 1:
                raise PinError(f"seat lamp positions are ints >= 1, not {pos!r}")
        self._pins = validate_pins(pins, "seat lamps")
        self._gpio = gpio
        self._on = gpio.HIGH if active_high else gpio.LOW
        self._off = gpio.LOW if active_high else gpio.HIGH
        self._closed = False
        ensure_bcm(gpio)
        for pin in self._pins.values():
            gpio.setup(pin, gpio.OUT, initial=self._off)

    @property
    def positions(self) -> tuple[int, ...]:
        """Positions that have a lamp, in ascending order."""
        return tuple(sorted(self._pins))

    def light(self, position: int) -> None:
        """Light only the lamp at ``position``; a position without a lamp is an error."""
        if isinstance(position, bool) or position not in self._pins:
            raise DisplayValueError(
                f"no seat lamp at position {position!r}; lamps at {self.positions}"
            )
        self._write({position})

    def all_off(self) -> None:
        """Turn every lamp off."""
        self._write(set())

    def lamp_test(self) -> None:
        """Light every lamp (until the next call), so a dead lamp is seen at power-up."""
        self._write(set(self._pins))

    def lit(self) -> frozenset[int]:
        """Positions whose lamp is on now, read from the output pins."""
        self._check_open()
        return frozenset(p for p, pin in self._pins.items() if self._gpio.input(pin) == self._on)

    def close(self) -> None:
        """Turn lamps off and release their pins (only these)."""
        if self._closed:
            return
        self.all_off()
        self._gpio.cleanup(list(self._pins.values()))
        self._closed = True

    def _write(self, on: set[int]) -> None:
        self._check_open()
        for pos, pin in self._pins.items():
            self._gpio.output(pin, self._on if pos in on else self._off)

    def _check_open(self) -> None:
        if self._closed:
            raise DeviceUnavailable("seat lamps are closed")
