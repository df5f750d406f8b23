"""The dealer's push buttons on GPIO: debounced presses posted to the controller's queue.

Wiring (docs/hardware.md "Buttons"): each button between its GPIO and ground, pulled up (an
external 10 k and the Pi's internal pull-up), so idle reads HIGH and a press pulls it LOW
(``active_low``).

Debounce: edge detection on BOTH edges with the backend's ``bouncetime`` (``bounce_ms``). A
press is posted when an edge reads the pin active and the button was last seen released; a
release is recorded when an edge reads it inactive. What an edge is depends on the library that
provides ``RPi.GPIO`` (docs/drivers-display-buttons.md "Debounce"):

- rpi-lgpio (the release, on the Pi 4 and the Pi 5) reports an edge once the line has been
  stable for ``bounce_ms``: a press is posted ``bounce_ms`` after the contact settles, a tap
  shorter than ``bounce_ms`` is not a press, and every release is seen.
- RPi.GPIO reports the first edge and drops every edge within ``bounce_ms`` of it: a press is
  posted on its leading edge, and a release edge can be lost (a tap shorter than ``bounce_ms``,
  or the release read mid-bounce).

Either way the failure mode is a missed press or release, never an invented press: when a
release edge is not seen, :meth:`DealerButtons.poll` -- which the controller's loop calls every
tick -- sees the pin back at rest once the contact has been quiet for ``2 * bounce_ms`` and
re-arms the button, so the dealer's next press posts.

The callback runs on the GPIO event thread: it only posts an immutable event, never touches
controller state (Klipper habit: one loop owns state).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from drivers.errors import DeviceUnavailable, PinError
from drivers.gpio import GpioApi, ensure_bcm, validate_pins

__all__ = ["ButtonPressed", "DealerButtons"]


@dataclass(frozen=True, slots=True)
class ButtonPressed:
    """A debounced press of the dealer button ``name`` at ``monotonic_ns`` (time.monotonic_ns)."""

    name: str
    monotonic_ns: int


class DealerButtons:
    """Watches named buttons and posts one ``ButtonPressed`` per debounced press."""

    def __init__(
        self,
        gpio: GpioApi,
        pins: Mapping[str, int],
        post: Callable[[ButtonPressed], None],
        bounce_ms: int = 30,
        active_low: bool = True,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        for name in pins:
            if not isinstance(name, str) or not name.isidentifier():
                raise PinError(f"button names are identifiers (e.g. 'draw'), not {name!r}")
        if isinstance(bounce_ms, bool) or not isinstance(bounce_ms, int) or not 1 <= bounce_ms:
            raise PinError(f"bounce_ms must be an int >= 1, not {bounce_ms!r}")
        self._pins = validate_pins(pins, "dealer buttons")
        self._names = {pin: name for name, pin in self._pins.items()}
        self._gpio = gpio
        self._post = post
        self._clock = clock
        self._active = gpio.LOW if active_low else gpio.HIGH
        self._held: dict[int, bool] = {}
        self._last_edge: dict[int, int] = {}
        self._quiet_ns = 2 * bounce_ms * 1_000_000
        self._lock = threading.Lock()  # guards _held only: the GPIO thread vs close()
        self._closed = False
        ensure_bcm(gpio)
        pull = gpio.PUD_UP if active_low else gpio.PUD_DOWN
        for pin in self._pins.values():
            gpio.setup(pin, gpio.IN, pull_up_down=pull)
            self._held[pin] = gpio.input(pin) == self._active  # held at boot: not a press
        for pin in self._pins.values():
            gpio.add_event_detect(pin, gpio.BOTH, callback=self._on_edge, bouncetime=bounce_ms)

    @property
    def names(self) -> tuple[str, ...]:
        """The button names, in configuration order."""
        return tuple(self._pins)

    def close(self) -> None:
        """Stop edge detection and release this driver's pins (only these)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for pin in self._pins.values():
            self._gpio.remove_event_detect(pin)
        self._gpio.cleanup(list(self._pins.values()))

    def is_held(self, name: str) -> bool:
        """Whether the driver considers button ``name`` held down (for the console)."""
        if name not in self._pins:
            raise PinError(f"no button named {name!r}; buttons are {self.names}")
        if self._closed:
            raise DeviceUnavailable("dealer buttons are closed")
        with self._lock:
            return self._held[self._pins[name]]

    def poll(self) -> None:
        """Re-arm a button whose release edge was lost: called from the controller's loop.

        A held button whose pin reads at rest, with no edge for ``2 * bounce_ms`` (so not in the
        middle of a bounce), is marked released; it never posts anything itself.
        """
        now = self._clock()
        with self._lock:
            if self._closed:
                return
            held = [
                pin
                for pin, down in self._held.items()
                if down and now - self._last_edge.get(pin, 0) >= self._quiet_ns
            ]
        for pin in held:
            if self._gpio.input(pin) != self._active:
                with self._lock:
                    if now - self._last_edge.get(pin, 0) >= self._quiet_ns:
                        self._held[pin] = False

    def _on_edge(self, channel: int) -> None:
        # GPIO event thread: read, decide, post. Nothing else.
        now = self._clock()
        active = self._gpio.input(channel) == self._active
        with self._lock:
            if self._closed or channel not in self._held:
                return
            self._last_edge[channel] = now
            was_held = self._held[channel]
            self._held[channel] = active
        if active and not was_held:
            self._post(ButtonPressed(self._names[channel], now))
