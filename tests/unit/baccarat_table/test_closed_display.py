"""The host's ``disable`` on the dealer display (docs/host-commands.md "CLOSED on the display and
the monitor"): between coups the display says TABLE CLOSED with the reason; a coup under way is
dealt and settled first; ``enable`` puts back what it said (the call for bets)."""

from __future__ import annotations

import dataclasses

from controller.tables.baccarat.table import BaccaratTable
from controller.tables.gate import DisableLatch
from drivers.sim.dealer_display import SimDealerDisplay
from tests.unit.baccarat_table.helpers import FakeShoeReader, Rig


def _closable(rig: Rig) -> tuple[Rig, DisableLatch]:
    """The rig's table restarted with the host's latch wired in as the application wires it
    (controller/app.py): ``closed`` says the latch's reason, its watchers refresh the display."""
    latch = DisableLatch(rig.journal, rig.alarms.append)
    rig.table.close()
    rig.display = SimDealerDisplay()
    rig.reader = FakeShoeReader()
    rig.ctx = dataclasses.replace(
        rig.ctx,
        devices=dataclasses.replace(rig.ctx.devices, dealer_display=rig.display),
        new_round_hold=latch.hold,
        closed=lambda: latch.reason,
        watch_closed=latch.watchers.append,
    )
    rig.table = BaccaratTable(rig.ctx)
    rig.table.link.reader = rig.reader
    rig.table.recover()
    return rig, latch


def test_disable_between_coups_shows_closed_and_enable_puts_the_call_back(rig: Rig) -> None:
    rig, latch = _closable(rig)
    rig.open_shoe()
    assert rig.display.lines == ("PLACE YOUR BETS", "COUP 1")
    assert latch.disable("count room audit", "host", "host")
    assert rig.display.lines == ("TABLE CLOSED", "count room audit")
    assert "DISPLAY TABLE CLOSED / count room audit" in rig.displays
    refused = rig.refused(rig.press, "no_more_bets")
    assert "CLOSED" in refused.reason
    assert rig.display.lines == ("TABLE CLOSED", "count room audit")
    assert latch.enable("console", "sup")
    assert rig.display.lines == ("PLACE YOUR BETS", "COUP 1")
    rig.press("no_more_bets")
    assert rig.display.lines == ("CARDS", "PLAYER CARD")


def test_a_coup_under_way_is_dealt_and_settled_before_closed_shows(rig: Rig) -> None:
    rig, latch = _closable(rig)
    rig.open_shoe()
    rig.press("no_more_bets")
    assert latch.disable("audit", "host", "host")
    assert rig.display.lines == ("CARDS", "PLAYER CARD")  # the coup's calls go on
    rig.cards("2S 3S 2H KH")  # player 4, banker 3: the player draws
    assert rig.display.lines[0] == "PLAYER DRAWS"
    rig.cards("8D")
    assert rig.display.lines == ("BANKER WINS 3", "P 2  B 3")
    rig.press("settled")
    assert rig.display.lines == ("TABLE CLOSED", "audit")
    assert latch.enable("host", "host")
    assert rig.display.lines == ("PLACE YOUR BETS", "COUP 2")


def test_a_restart_while_closed_shows_closed(rig: Rig) -> None:
    rig, latch = _closable(rig)
    rig.open_shoe()
    assert latch.disable("audit", "host", "host")
    again, latch = _closable(rig)
    assert latch.reason == "audit"
    assert again.display.lines == ("TABLE CLOSED", "audit")


def test_a_dead_hand_remedy_is_a_new_coup_held_while_play_is_held(rig: Rig) -> None:
    """`remedy dead` deals a coup (5324.20(i)(1)(ii)): while the host's disable (the door, a UPS
    alike: one hold) holds play it is refused like `no_more_bets`, and dealt once play may go
    on; `remedy burn` starts no coup and is not held."""
    rig, latch = _closable(rig)
    rig.open_shoe()
    rig.frame("CARD", "4C")  # a card drawn in excess between coups
    rig.press("disclose")
    assert latch.disable("count room audit", "host", "host")
    refused = rig.refused(rig.act, "remedy dead")
    assert "CLOSED" in refused.reason
    assert rig.table.state == "betting" and not rig.rows("baccarat.coup.start")
    assert latch.enable("console", "sup")
    rig.act("remedy dead")
    assert rig.table.state == "dealing" and len(rig.rows("baccarat.coup.start")) == 1
