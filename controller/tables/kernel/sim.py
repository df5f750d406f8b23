"""The simulator's controls: the one handle through which a table reaches the simulator.

The wiring (controller/devices.py) builds it from the profile: the simulated GPIO and the buttons
as wired, the simulated shoe. A table's ``sim ...`` console actions go through it and nowhere
else; on real hardware it holds nothing and every ``sim`` action is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from controller.tables.kernel.press import ButtonWiring, SimPins, press


class SimShoeControls(Protocol):
    """What a table asks of the simulated shoe (drivers/sim/shoe.py)."""

    def peek(self, n: int) -> list[str]: ...
    def deal(self, n: int = 1) -> list[str]: ...
    def deal_card(self, card: str) -> None: ...
    def inject(self, kind: str) -> str: ...
    def load(self, seed: int | None = None, cover_from_end: Sequence[int] | None = None) -> int: ...
    def delivered(self) -> bool: ...
    def start(self) -> None: ...
    def stop(self, timeout: float = 2.0) -> bool: ...


@dataclass(frozen=True)
class SimControls:
    """The simulator as a table may drive it (all None on real hardware)."""

    #: The simulated GPIO the dealer buttons are wired to (None: real GPIO or no buttons).
    gpio: SimPins | None = None
    #: The dealer buttons as the profile wires them (pins, active level, bounce time).
    buttons: ButtonWiring | None = None
    #: The simulated shoe at the far end of the shoe's serial port.
    shoe: SimShoeControls | None = None

    @property
    def button_names(self) -> tuple[str, ...]:
        return tuple(self.buttons.pins) if self.buttons is not None else ()

    def can_press(self) -> bool:
        """True when the dealer buttons are on the simulated GPIO."""
        return self.gpio is not None and self.buttons is not None

    def press(self, button: str) -> int:
        """Press and release ``button`` as the profile wires it; its BCM pin. The caller has
        checked :meth:`can_press` and the name (KeyError otherwise)."""
        if self.gpio is None or self.buttons is None:
            raise KeyError(button)
        return press(self.gpio, self.buttons, button)
