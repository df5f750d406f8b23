"""The enclosure door's switch on a GPIO input: each change posted to the controller's queue.

``active_low`` (the default) means the line reads low while the door is OPEN (the Pi's internal
pull-down holds it low; a switch that closes to 3.3 V while the door is shut raises it); with
``active_low = false`` the line reads high while open (pull-up; a switch to ground while shut).
Edge detection on both edges posts :class:`DoorChanged` from the GPIO event thread
(debounced by ``bounce_ms``); :meth:`DoorInput.poll`, from the loop's tick, re-reads the level so
a change whose edge was dropped is still seen. Nothing here touches controller state.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from drivers.errors import PinError
from drivers.gpio import HEADER_BCM_PINS, GpioApi, ensure_bcm

__all__ = ["DoorChanged", "DoorInput"]


@dataclass(frozen=True, slots=True)
class DoorChanged:
    """The enclosure door's switch on GPIO ``pin`` opened or closed."""

    open: bool
    pin: int


class DoorInput:
    """Watches one GPIO input; posts :class:`DoorChanged` on each change, and once at start when
    the door is already open."""

    def __init__(
        self,
        gpio: GpioApi,
        pin: int,
        post: Callable[[DoorChanged], None],
        *,
        active_low: bool = True,
        bounce_ms: int = 50,
    ) -> None:
        if isinstance(pin, bool) or not isinstance(pin, int) or pin not in HEADER_BCM_PINS:
            raise PinError(f"door input: pin must be a BCM number 0-27, not {pin!r}")
        self.pin = pin
        self._gpio = gpio
        self._post = post
        self._open_level = gpio.LOW if active_low else gpio.HIGH
        self._lock = threading.Lock()
        self._closed = False
        ensure_bcm(gpio)
        gpio.setup(pin, gpio.IN, pull_up_down=gpio.PUD_DOWN if active_low else gpio.PUD_UP)
        self._open = gpio.input(pin) == self._open_level
        if self._open:
            post(DoorChanged(True, pin))
        gpio.add_event_detect(pin, gpio.BOTH, callback=self._on_edge, bouncetime=bounce_ms)

    @property
    def open(self) -> bool:
        with self._lock:
            return self._open

    def poll(self) -> None:
        """Re-read the level (the loop's tick): a change the edge detection missed is posted."""
        self._check()

    def _on_edge(self, _channel: int) -> None:
        # GPIO event thread: read, compare, post. Nothing else.
        self._check()

    def _check(self) -> None:
        is_open = self._gpio.input(self.pin) == self._open_level
        with self._lock:
            if self._closed or is_open == self._open:
                return
            self._open = is_open
        self._post(DoorChanged(is_open, self.pin))

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._gpio.remove_event_detect(self.pin)
        self._gpio.cleanup([self.pin])
