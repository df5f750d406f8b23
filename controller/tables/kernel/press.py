"""A simulated dealer's press, as the profile wires the button (``sim button NAME``).

The pin goes to its active level (low when ``active_low``) and back, each held one millisecond
longer than the driver's bounce time on the simulated GPIO's clock, so the real DealerButtons
driver debounces it as it would a dealer's press, with either simulated debounce behaviour
(``gpio_sim_debounce``): the release edge is accepted, and the next press is not swallowed by
the lockout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class SimClock(Protocol):
    def advance(self, ms: float) -> None: ...


class SimPins(Protocol):
    """The part of the simulated GPIO a press drives."""

    @property
    def clock(self) -> SimClock: ...

    def drive(self, pin: int, level: int) -> None: ...


@dataclass(frozen=True)
class ButtonWiring:
    """The dealer buttons as the profile wires them."""

    pins: dict[str, int]
    active_low: bool = True
    bounce_ms: int = 30


def press(gpio: SimPins, wiring: ButtonWiring, button: str) -> int:
    """Press and release ``button``; return its BCM pin."""
    pin = wiring.pins[button]
    down, up = (0, 1) if wiring.active_low else (1, 0)
    gpio.drive(pin, down)
    gpio.clock.advance(wiring.bounce_ms + 1)
    gpio.drive(pin, up)
    gpio.clock.advance(wiring.bounce_ms + 1)
    return pin
