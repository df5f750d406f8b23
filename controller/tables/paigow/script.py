"""A scripted simulated dealer: N pai gow rounds pressed button by button (issue 4 "The simulated
table"), printing each round's draw and starting position (``table-controller simulate`` runs it
on a real application, controller/cli.py).

Given an :class:`controller.app.Application` whose loop is running, every press goes through the
console's ``sim button NAME`` action on the loop thread, so the simulated GPIO pin goes low and
high and the real ``DealerButtons`` driver debounces it and posts the press to the queue, exactly
as a dealer's finger would. Given a bare :class:`controller.tables.paigow.table.PaigowTable`,
presses are handed to ``table.handle`` directly (tests, tools without a loop).

In dice mode (the setting, or the RNG in fault, 5324.50(a)(3)) the scripted dealer shakes three
simulated dice and enters them with the ``dice A B C`` action; that line says so.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Protocol

from controller.tables.paigow.record import RoundRecord
from controller.tables.paigow.table import PaigowTable
from controller.tables.table import Devices, Refused, Table

__all__ = ["ScriptError", "run_script"]

_BEFORE_DRAW = ("shuffled", "no_more_bets")
_AFTER_DRAW = ("dealt", "hands_set", "settled")
_WHO = "scripted-dealer"


class ScriptError(RuntimeError):
    """The table refused a step of the script; the message names the round, step and reason."""


class _Wiring(Protocol):
    @property
    def table(self) -> Devices: ...


class ScriptHost(Protocol):
    """A running application as the scripted dealer drives it (controller/app.py): its table,
    the devices it built, and a call run on its loop thread."""

    @property
    def table(self) -> Table: ...

    @property
    def devices(self) -> _Wiring: ...

    def call(self, fn: Callable[[], object], timeout: float = 5.0) -> object: ...


class _Driver:
    """Runs one step on the table's owner thread and reads the table back."""

    def __init__(self, target: ScriptHost | PaigowTable) -> None:
        self.app: ScriptHost | None = None
        if isinstance(target, PaigowTable):
            self.table = target
        else:
            table = target.table
            if not isinstance(table, PaigowTable):
                raise ScriptError(f"the scripted dealer deals pai gow, not {table.game}")
            self.app, self.table = target, table

    def run(self, fn: Callable[[], object]) -> object:
        if self.app is not None:
            return self.app.call(fn)
        return fn()

    def press(self, name: str) -> None:
        table = self.table
        if self.app is not None and self.app.devices.table.sim.can_press():
            # The real driver posts the press; the next call runs after it (FIFO queue).
            self.run(lambda: table.action("sim", ["button", name], _WHO))
            return
        from drivers.buttons import ButtonPressed

        self.run(lambda: table.handle(ButtonPressed(name, time.monotonic_ns())))

    def state(self) -> tuple[str, int, RoundRecord]:
        table = self.table
        result = self.run(lambda: (table.model.state, table.model.round_id, table.model.record))
        assert isinstance(result, tuple)
        return result


def run_script(
    app_or_table: ScriptHost | PaigowTable, rounds: int, *, dice: random.Random | None = None
) -> list[str]:
    """Deal ``rounds`` rounds; one line per round: id, the number (RNG or dice), the start."""
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
        raise ValueError(f"rounds must be an int >= 0, got {rounds!r}")
    drv = _Driver(app_or_table)
    shaker = dice or random.SystemRandom()
    lines: list[str] = []
    for _ in range(rounds):
        state, round_id, _rec = drv.state()
        if state in ("inspection", "washing"):
            _step(drv, "shuffled", round_id, "betting")
        elif state != "betting":
            raise ScriptError(f"round {round_id}: the table is in {state}, not between rounds")
        _step(drv, "no_more_bets", round_id, "no_more_bets")
        drv.press("draw")
        state, _, rec = drv.state()
        if state != "dealing":
            state, _, rec = _enter_dice(drv, shaker, round_id)
        if state != "dealing":
            raise ScriptError(f"round {round_id}: no number after the draw (state {state})")
        for name in _AFTER_DRAW:
            nxt = {"dealt": "setting_hands", "hands_set": "dealer_hands", "settled": "washing"}
            _step(drv, name, round_id, nxt[name])
        lines.append(_line(round_id, rec))
    return lines


def _enter_dice(drv: _Driver, shaker: random.Random, round_id: int) -> tuple[str, int, RoundRecord]:
    """Dice mode (5324.50(a)(3)): shake three simulated dice and enter them."""
    roll = [str(shaker.randint(1, 6)) for _ in range(3)]
    table = drv.table
    try:
        drv.run(lambda: table.action("dice", roll, _WHO))
    except Refused as exc:
        raise ScriptError(f"round {round_id}: dice refused: {exc.reason}") from exc
    return drv.state()


def _step(drv: _Driver, name: str, round_id: int, expect: str) -> None:
    drv.press(name)
    state, _, _ = drv.state()
    if state != expect:
        raise ScriptError(
            f"round {round_id}: {name} left the table in {state}, "
            f"expected {expect} (see the journal's paigow.refused rows)"
        )


def _line(round_id: int, rec: RoundRecord) -> str:
    if rec.mode == "rng":
        source = f"rng {rec.number}"
    else:
        dice = "+".join(str(d) for d in rec.dice or ())
        source = f"dice {dice}={rec.dice_total} (count {rec.number})"
    from controller.tables.paigow.definition import position_name

    pos = rec.start_position
    return (
        f"round {round_id}: {source}, starting position {pos}"
        f" ({position_name(pos) if pos is not None else '-'}), "
        f"counted from the {rec.counted_from}, style {rec.style}"
    )
