"""The simulated dealer: ``sim shoe deal burn`` and ``sim shoe deal coup`` deal exactly the cards
the burn or the coup takes, so a console session plays whole coups (a whole shoe here, through
SimShoe, a pseudo-terminal and the real SerialShoe), and the table's coups are those the rules
engine deals from the same stack (``deal_shoe``)."""

from __future__ import annotations

import functools
import queue
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.config.settings import ConfigStore, RuleSettings
from controller.games.baccarat.shoe import COVER, deal_shoe
from controller.journal.store import Journal
from controller.tables.baccarat.table import BaccaratTable
from controller.tables.kernel.sim import SimControls
from controller.tables.table import Devices, Refused, TableContext
from drivers.buttons import ButtonPressed
from drivers.serial_shoe import SerialShoe
from drivers.sim.shoe import SimShoe

WAIT_S = 10.0
COVER_FROM_END = 15
DECKS = 6  # the fewest 5324.20(a)(4) allows: a whole shoe in fewer coups


class Dealer:
    """A table with a simulated shoe; the test is the application's loop and its console."""

    def __init__(self, tmp: Path) -> None:
        self.journal = Journal(tmp / "journal.db")
        self.queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self.sim = SimShoe(decks=DECKS, seed=21, cover_from_end=(COVER_FROM_END,), heartbeat_s=None)
        rules = RuleSettings.from_mapping({"baccarat": {"decks": DECKS}})
        ctx = TableContext(
            journal=self.journal,
            settings=ConfigStore(self.journal, rules),
            devices=Devices(
                open_shoe=functools.partial(SerialShoe, self.sim.create_pty(), self.queue.put),
                sim=SimControls(shoe=self.sim),
            ),
            alarm=lambda text: None,
        )
        self.table = BaccaratTable(ctx)
        self.pump_until(
            lambda: self.table.status()["shoe_link"] == "up" and self.sim.status().unacked == 0
        )

    def pump_until(self, done: object, timeout: float = WAIT_S) -> None:
        deadline = time.monotonic() + timeout
        while not done():  # type: ignore[operator]
            assert time.monotonic() < deadline, "timed out"
            try:
                self.table.handle(self.queue.get(timeout=0.02))
            except queue.Empty:
                pass

    def console(self, line: str) -> list[str]:
        """A console action; its reply waits until the frames it caused are handled."""
        name, *args = line.split()
        lines = self.table.action(name, args, "tech")
        waiter = self.table.take_reply_waiter()
        if waiter is not None:
            self.pump_until(waiter.ready)
            self.pump_until(lambda: self.queue.empty())
        return lines

    def press(self, button: str) -> None:
        self.table.handle(ButtonPressed(button, 0))


@pytest.fixture
def dealer(fast_tmp: Path) -> Iterator[Dealer]:
    d = Dealer(fast_tmp)
    yield d
    d.table.close()
    d.journal.close()


def test_a_whole_shoe_is_played_with_deal_burn_and_deal_coup(dealer: Dealer) -> None:
    stack: list[str] = dealer.sim.peek(52 * DECKS)
    items: list[str] = [
        *stack[: len(stack) - COVER_FROM_END],
        COVER,
        *stack[len(stack) - COVER_FROM_END :],
    ]
    expected = deal_shoe(items)
    dealer.press("shuffled")
    assert dealer.console("sim shoe deal burn")[0].startswith("dealt burn: ")
    assert dealer.table.state == "offering"
    dealer.console("curator 1")
    coups = 0
    while dealer.table.state != "shuffle":
        assert dealer.table.state == "betting"
        dealer.press("no_more_bets")
        dealer.console("sim shoe deal coup")
        assert dealer.table.state == "settling"
        coups += 1
        dealer.press("settled")
        if dealer.table.state == "passing":
            dealer.console(f"curator {coups % 8 + 1}")
    results = [e.data for e in dealer.journal.events(kinds=["baccarat.coup.result"])]
    assert [(r["player"], r["banker"]) for r in results] == [
        ([c.code for c in coup.player], [c.code for c in coup.banker]) for coup in expected.coups
    ]
    assert [r["winner"] for r in results] == [coup.winner for coup in expected.coups]
    burn = next(dealer.journal.events(kinds=["baccarat.burn.done"])).data
    assert burn["face_up"] == expected.burn_face_up.code
    assert burn["burned"] == [c.code for c in expected.burned]
    assert dealer.sim.status().cards_dealt == expected.cards_used
    assert not dealer.table.faults()


def test_deal_coup_finishes_a_coup_in_progress_and_skips_a_face_up_card(dealer: Dealer) -> None:
    dealer.press("shuffled")
    dealer.console("sim shoe deal burn")
    dealer.console("curator 1")
    dealer.press("no_more_bets")
    dealer.console("sim shoe deal 2")  # two of the four initial cards by hand
    assert dealer.table.state == "dealing"
    dealer.console("sim shoe deal coup")  # the rest, and no more
    assert dealer.table.state == "settling"
    assert not list(dealer.journal.events(kinds=["baccarat.irregularity"]))
    dealer.press("settled")
    if dealer.table.state == "passing":
        dealer.console("curator 2")
    dealer.console("sim shoe fault faceup")  # $FLT FACEUP and the card: discarded
    dealer.press("no_more_bets")
    cards = dealer.console("sim shoe deal coup")[0].split(": ")[1].split()
    assert dealer.table.state == "settling"
    assert dealer.table.data.coup == cards  # the coup used every card dealt for it


def test_deal_coup_and_burn_are_refused_when_there_is_none(dealer: Dealer) -> None:
    with pytest.raises(Refused, match="no burn"):
        dealer.console("sim shoe deal burn")
    dealer.press("shuffled")
    with pytest.raises(Refused, match="burn comes first"):
        dealer.console("sim shoe deal coup")
    dealer.console("sim shoe deal burn")
    with pytest.raises(Refused, match="no_more_bets"):
        dealer.console("sim shoe deal coup")
    assert dealer.sim.status().cards_dealt == len(dealer.table.data.cards_out)
