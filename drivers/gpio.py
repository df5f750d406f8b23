"""The GPIO interface the drivers use (``GpioApi``, the shape of ``RPi.GPIO``), the real backend,
and pin checks.

The drivers only ever talk to the ``GpioApi`` protocol below, so the simulated twin
(``drivers.sim.gpio``) is just another backend; the wiring (``controller/devices.py``) chooses
one by the profile's name, never an ``if`` in a table or a driver.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypeVar, cast

from drivers.errors import BackendUnavailable, PinError

__all__ = ["BACKENDS", "GpioApi", "HEADER_BCM_PINS", "ensure_bcm", "load_rpi_gpio", "validate_pins"]

BACKENDS = ("rpi", "sim")

# BCM numbers brought out on the 40-pin header of a Raspberry Pi 4/5 (GPIO0/1 are the HAT ID
# EEPROM bus: allowed, but docs/drivers-display-buttons.md advises against them).
HEADER_BCM_PINS = range(0, 28)

K = TypeVar("K")


class GpioApi(Protocol):
    """Exactly the part of the ``RPi.GPIO`` module that the drivers use."""

    BCM: int
    IN: int
    OUT: int
    HIGH: int
    LOW: int
    PUD_OFF: int
    PUD_UP: int
    PUD_DOWN: int
    RISING: int
    FALLING: int
    BOTH: int

    def setmode(self, mode: int) -> None: ...
    def setwarnings(self, flag: bool) -> None: ...
    def setup(
        self, channel: int, direction: int, pull_up_down: int = ..., initial: int = ...
    ) -> None: ...
    def output(self, channel: int, value: int) -> None: ...
    def input(self, channel: int) -> int: ...
    def add_event_detect(
        self,
        channel: int,
        edge: int,
        callback: Callable[[int], object] | None = ...,
        bouncetime: int | None = ...,
    ) -> None: ...
    def remove_event_detect(self, channel: int) -> None: ...
    def cleanup(self, channel: Sequence[int]) -> None: ...


def load_rpi_gpio() -> GpioApi:
    """The real backend: the ``RPi.GPIO`` module, which the release's rpi-lgpio provides on the
    Pi 4 and the Pi 5 (its debounce: docs/drivers-display-buttons.md "Debounce")."""
    try:
        module = importlib.import_module("RPi.GPIO")
    except ImportError as exc:
        raise BackendUnavailable(
            "GPIO backend 'rpi' needs the RPi.GPIO module, which is not installed: "
            "install the 'pi' extra (pip install '.[pi]': rpi-lgpio, which provides it on a "
            "Raspberry Pi 4 and 5)"
        ) from exc
    return cast(GpioApi, module)


def ensure_bcm(gpio: GpioApi) -> None:
    """Select BCM numbering (idempotent); a backend already in BOARD mode is a PinError."""
    try:
        gpio.setmode(gpio.BCM)
    except ValueError as exc:
        raise PinError(f"GPIO numbering must be BCM for the drivers: {exc}") from exc


def validate_pins(pins: Mapping[K, int], what: str) -> dict[K, int]:
    """Check a name->BCM mapping: non-empty, header pins only, no pin used twice."""
    if not pins:
        raise PinError(f"{what}: no pins given")
    seen: dict[int, K] = {}
    for name, pin in pins.items():
        if isinstance(pin, bool) or not isinstance(pin, int) or pin not in HEADER_BCM_PINS:
            raise PinError(f"{what}: pin for {name!r} must be a BCM number 0-27, not {pin!r}")
        if pin in seen:
            raise PinError(f"{what}: BCM {pin} assigned to both {seen[pin]!r} and {name!r}")
        seen[pin] = name
    return dict(pins)
