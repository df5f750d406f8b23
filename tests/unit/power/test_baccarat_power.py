"""Baccarat while a UPS says the power is failing: no new shoe and no new coup start (the
refusal says why); a coup whose cards are out is dealt to its end."""

from __future__ import annotations

from pathlib import Path

from tests.unit.baccarat_table.helpers import Rig

FAILING = "power failing: no new round (UPS signal on GPIO 10)"


def _rig(tmp_path: Path) -> tuple[Rig, list[str | None]]:
    rig = Rig(tmp_path)
    hold: list[str | None] = [None]
    rig.ctx.new_round_hold = lambda: hold[0]
    return rig, hold


def test_no_new_shoe(tmp_path: Path) -> None:
    rig, hold = _rig(tmp_path)
    hold[0] = FAILING
    refusal = rig.refused(rig.press, "shuffled")
    assert refusal.reason == FAILING
    assert rig.table.state == "shuffle"
    hold[0] = None
    rig.open_shoe()


def test_no_new_coup_but_the_coup_under_way_ends(tmp_path: Path) -> None:
    rig, hold = _rig(tmp_path)
    rig.open_shoe()
    rig.press("no_more_bets")
    hold[0] = FAILING
    # player 2+4 = 6, banker 3+5 = 8, a natural: no more cards (5324.20(f)(10))
    rig.cards("2S 3S 4S 5S")
    assert rig.table.state == "settling"
    rig.press("settled")
    assert rig.table.state == "betting"
    assert rig.refused(rig.press, "no_more_bets").reason == FAILING
    hold[0] = None
    rig.press("no_more_bets")
    assert rig.table.state == "dealing"
