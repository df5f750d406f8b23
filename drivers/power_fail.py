"""A UPS's power-fail signal on a GPIO input: each change posted to the controller's queue.

A UPS (or a supercapacitor hat) that keeps the Pi up for a while after the mains go says so on
one output, usually open-collector and pulled low while on battery (``active_low``, the
default: the Pi's internal pull-up holds the line high otherwise). Edge detection on both edges
posts :class:`PowerFailChanged` from the GPIO event thread; :meth:`PowerFailInput.poll`, called
from the controller's loop every tick, re-reads the level so a change whose edge the backend's
debounce dropped is still seen. Nothing here touches controller state (docs/power-and-storage.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from drivers.errors import PinError
from drivers.gpio import HEADER_BCM_PINS, GpioApi, ensure_bcm

__all__ = ["PowerFailChanged", "PowerFailInput"]

#: A UPS's signal line changes once per outage; this only rejects contact noise on the cable.
BOUNCE_MS: Final = 20


@dataclass(frozen=True, slots=True)
class PowerFailChanged:
    """The UPS's power-fail signal on GPIO ``pin`` was asserted (mains gone) or dropped."""

    asserted: bool
    pin: int


class PowerFailInput:
    """Watches one GPIO input; posts :class:`PowerFailChanged` on each change of level, and once
    at start when the signal is already asserted."""

    def __init__(
        self,
        gpio: GpioApi,
        pin: int,
        post: Callable[[PowerFailChanged], None],
        *,
        active_low: bool = True,
    ) -> None:
        if isinstance(pin, bool) or not isinstance(pin, int) or pin not in HEADER_BCM_PINS:
            raise PinError(f"power-fail input: pin must be a BCM number 0-27, not {pin!r}")
        self.pin = pin
        self._gpio = gpio
        self._post = post
        self._active = gpio.LOW if active_low else gpio.HIGH
        self._lock = threading.Lock()
        self._closed = False
        ensure_bcm(gpio)
        gpio.setup(pin, gpio.IN, pull_up_down=gpio.PUD_UP if active_low else gpio.PUD_DOWN)
        self._asserted = gpio.input(pin) == self._active
        if self._asserted:
            post(PowerFailChanged(True, pin))
        gpio.add_event_detect(pin, gpio.BOTH, callback=self._on_edge, bouncetime=BOUNCE_MS)

    @property
    def asserted(self) -> bool:
        with self._lock:
            return self._asserted

    def poll(self) -> None:
        """Re-read the level (the loop's tick): a change the edge detection missed is posted."""
        self._check()

    def _on_edge(self, _channel: int) -> None:
        # GPIO event thread: read, compare, post. Nothing else.
        self._check()

    def _check(self) -> None:
        asserted = self._gpio.input(self.pin) == self._active
        with self._lock:
            if self._closed or asserted == self._asserted:
                return
            self._asserted = asserted
        self._post(PowerFailChanged(asserted, self.pin))

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._gpio.remove_event_detect(self.pin)
        self._gpio.cleanup([self.pin])
