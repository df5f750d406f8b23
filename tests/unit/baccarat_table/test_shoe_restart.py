"""A controller crash between journaling shoe frames and acknowledging any of them, through the
real SerialShoe and SimShoe over a pseudo-terminal: the shoe resends its ``$HELO`` and the
frames after it; the restarted table recognises its journaled session and counts no card twice
(docs/shoe-protocol.md, "Start, restart, replug")."""

from __future__ import annotations

import functools
import queue
import time
from collections.abc import Callable
from pathlib import Path

from controller.config.settings import ConfigStore, RuleSettings
from controller.journal.store import Journal
from controller.journal.verify import check_chain
from controller.tables.baccarat.data import K_FRAME, K_SESSION
from controller.tables.baccarat.table import BaccaratTable
from controller.tables.table import TableContext
from drivers.buttons import ButtonPressed
from drivers.serial_shoe import SerialShoe
from drivers.sim.shoe import SimShoe

WAIT_S = 10.0


class Controller:
    """One controller process: a table whose SerialShoe posts to a queue the test pumps."""

    def __init__(self, journal: Journal, url: str) -> None:
        self.queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self.alarms: list[str] = []
        ctx = TableContext(journal=journal, settings=ConfigStore(journal, RuleSettings()),
                           devices={"shoe_open": functools.partial(SerialShoe, url,
                                                                    self.queue.put)},
                           alarm=self.alarms.append)
        self.table = BaccaratTable(ctx)

    def pump(self, done: Callable[[], bool], timeout: float = WAIT_S) -> None:
        """Handle events on this thread (the application's loop) until ``done`` or timeout."""
        deadline = time.monotonic() + timeout
        while not done():
            left = deadline - time.monotonic()
            assert left > 0, "timed out"
            try:
                event = self.queue.get(timeout=min(left, 0.05))
            except queue.Empty:
                continue
            self.table.handle(event)


def test_crash_before_any_ack_then_the_resent_helo_counts_no_card_twice(
        fast_tmp: Path) -> None:
    journal = Journal.open(fast_tmp / "journal.db")
    shoe = SimShoe(seed=5, heartbeat_s=0.3)
    url = shoe.create_pty()
    first = Controller(journal, url)
    first.table.link.reader.acknowledge = lambda seq: None  # the crash comes before any ACK
    second: Controller | None = None
    try:
        shoe.start()
        first.pump(lambda: journal.last([K_SESSION]) is not None)
        first.table.handle(ButtonPressed("shuffled", 0))
        dealt = shoe.deal(3)

        def cards() -> list[str]:
            return [e.data["fields"][0] for e in journal.events(kinds=[K_FRAME])
                    if e.data["type"] == "CARD"]

        first.pump(lambda: len(cards()) == 3)
        first.table.close()  # crash: the HELO and three cards journaled, none acknowledged
        assert shoe.status().unacked >= 4

        second = Controller(journal, url)
        second.table.recover()
        later = shoe.deal(2)
        second.pump(lambda: len(cards()) >= 5 and shoe.status().unacked == 0)
        assert cards() == dealt + later  # every card once, in order
        assert len(list(journal.events(kinds=[K_SESSION]))) == 1  # no second "power-up"
        assert second.table.data.cards_out == dealt + later
        assert not second.table.faults()
        assert check_chain(journal).ok
    finally:
        if second is not None:
            second.table.close()
        assert shoe.stop(WAIT_S)
        journal.close()
