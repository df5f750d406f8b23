"""The scripted dealer of the starting-position table (``table-controller simulate``): each
round presses no_more_bets, draw (or enters three dice while the RNG is in fault), dealt and
settled, the way a dealer would, through the simulated GPIO when the buttons are on it."""

from __future__ import annotations

import random
import time

from controller.tables.paigow.script import ScriptError, ScriptHost
from controller.tables.startpos.round import RoundState
from controller.tables.startpos.table import StartposTable
from controller.tables.table import Refused
from drivers.buttons import ButtonPressed

_WHO = "technician@simulate"


class _Driver:
    def __init__(self, app: ScriptHost) -> None:
        table = app.table
        if not isinstance(table, StartposTable):
            raise ScriptError(
                f"this scripted dealer deals the starting-position table, not {table.game}"
            )
        self.app, self.table = app, table

    def press(self, name: str) -> None:
        table = self.table
        if self.app.devices.table.sim.can_press():
            # The real driver posts the press; the next call runs after it (FIFO queue).
            self.app.call(lambda: table.action("sim", ["button", name], _WHO))
            return
        self.app.call(lambda: table.handle(ButtonPressed(name, time.monotonic_ns())))

    def now(self) -> RoundState:
        table = self.table
        result = self.app.call(lambda: table.round.now)
        assert isinstance(result, RoundState)
        return result

    def dice(self, roll: list[str]) -> RoundState:
        table = self.table
        try:
            self.app.call(lambda: table.action("dice", roll, _WHO))
        except Refused as exc:
            raise ScriptError(f"round {self.now().round}: dice refused: {exc.reason}") from exc
        return self.now()

    def step(self, name: str, expect: str) -> RoundState:
        self.press(name)
        now = self.now()
        if now.state != expect:
            raise ScriptError(
                f"round {now.round}: {name} left the table in {now.state}, expected {expect}"
                " (see the journal's startpos.refused rows)"
            )
        return now


def run_script(app: ScriptHost, rounds: int, *, dice: random.Random | None = None) -> list[str]:
    """Deal ``rounds`` rounds; one line per round: its id, the number and where the deal
    starts."""
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
        raise ValueError(f"rounds must be an int >= 0, got {rounds!r}")
    drv = _Driver(app)
    shaker = dice or random.SystemRandom()
    lines: list[str] = []
    for _ in range(rounds):
        if drv.now().state != "betting":
            raise ScriptError(f"round {drv.now().round}: the table is not between rounds")
        drv.step("no_more_bets", "closed")
        drv.press("draw")
        now = drv.now()
        if now.state != "dealing":  # the RNG is in fault: the dice (13:69F-31.11(b))
            now = drv.dice([str(shaker.randint(1, 6)) for _ in range(3)])
        if now.state != "dealing":
            raise ScriptError(f"round {now.round}: no number after the draw (state {now.state})")
        drv.step("dealt", "playing")
        drv.step("settled", "betting")
        lines.append(
            f"round {now.round}: {now.source} {now.number}, the deal starts at {now.start}"
        )
    return lines
