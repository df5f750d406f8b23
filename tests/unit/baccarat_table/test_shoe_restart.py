"""The table and the shoe across restarts and power cycles, through the real SerialShoe and
SimShoe over a pseudo-terminal (docs/design.md "Reference shoe protocol, revision 3";
docs/shoe-protocol.md, "Start, restart, power-up"). These are revision 2's four power-up
sequences, kept in revision 3 (heartbeats outside the sequence), with the journal's frame rows
of every session contiguous in SEQ:

* a controller crash between journaling frames and acknowledging any of them: the resent
  ``$HELO`` carries the journaled SID, so nothing is counted twice;
* a new shoe powered up while the controller was down, its ``$HELO`` lost to the port's flush
  and its SEQ past the old session's (docs/reliability.md, finding 9): a new session, no card
  lost, the dealer's confirmation;
* a power cycle between coups after a long idle: no halt, no void, the dealer's confirmation;
* a power cycle during the burn after a burn frame was lost: an irregularity (halt), no card
  shifted into the coup.
"""

from __future__ import annotations

import functools
import queue
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.config.settings import ConfigStore, RuleSettings
from controller.games.baccarat.shoe import BurnProgress, CoupInProgress
from controller.journal.store import Journal
from controller.journal.verify import check_chain
from controller.tables.baccarat.data import K_FRAME, K_SESSION
from controller.tables.baccarat.table import BaccaratTable
from controller.tables.table import Devices, Refused, TableContext
from drivers.buttons import ButtonPressed
from drivers.serial_shoe import SerialShoe
from drivers.sim.shoe import SimShoe

WAIT_S = 10.0


class Controller:
    """One controller process: a table whose SerialShoe posts to a queue the test pumps."""

    def __init__(self, journal: Journal, url: str, transactional: bool = False) -> None:
        #: As the application runs a table that says ``journal_transactions``: each event one
        #: journal transaction (one commit; outputs after it; memory put back if it fails).
        self.transactional = transactional
        self.queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self.alarms: list[str] = []
        self.journal = journal
        ctx = TableContext(
            journal=journal,
            settings=ConfigStore(journal, RuleSettings()),
            devices=Devices(open_shoe=functools.partial(SerialShoe, url, self.queue.put)),
            alarm=self.alarms.append,
        )
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
            if self.transactional:
                with self.journal.transaction():
                    self.table.handle(event)
            else:
                self.table.handle(event)

    def settle(self, shoe: SimShoe) -> None:
        """Until the shoe holds nothing unacknowledged (every card, cover card, fault and HELO
        it sent is journaled; heartbeats are never held)."""
        self.pump(shoe.delivered)

    def cards(self) -> list[str]:
        return [
            e.data["fields"][0]
            for e in self.journal.events(kinds=[K_FRAME])
            if e.data["type"] == "CARD"
        ]

    def act(self, line: str) -> list[str]:
        name, *args = line.split()
        return self.table.action(name, args, "dealer")

    def press(self, name: str) -> None:
        """A dealer's button; a refusal (said on the consoles) is raised here."""
        self.table.handle(ButtonPressed(name, 0))
        if self.table.last_refusal is not None:
            raise self.table.last_refusal


def assert_contiguous(journal: Journal) -> None:
    """Every session's rows (its HELO, then its frames) carry consecutive SEQs: heartbeats
    take none, so an export explains itself without the wire log."""
    sessions: dict[str, list[int]] = {}
    sid = ""
    for e in journal.events(kinds=[K_SESSION, K_FRAME]):
        if e.kind == K_SESSION:
            sid = e.data["sid"]
        sessions.setdefault(sid, []).append(int(e.data["seq"]))
    for sid, seqs in sessions.items():
        steps = {(b - a) % 10000 for a, b in zip(seqs, seqs[1:], strict=False)}
        assert steps <= {1}, (sid, seqs)


def deal_burn(shoe: SimShoe) -> list[str]:
    burn = BurnProgress()
    n = 0
    for code in shoe.peek(12):
        if burn.done:
            break
        burn.add(code)
        n += 1
    return shoe.deal(n)


def deal_coup(shoe: SimShoe) -> list[str]:
    coup = CoupInProgress()
    n = 0
    for code in shoe.peek(6):
        if coup.complete:
            break
        coup.add(code)
        n += 1
    return shoe.deal(n)


def open_shoe(ctl: Controller, shoe: SimShoe) -> None:
    """Shuffled, burned, seat 1 holds the shoe: betting."""
    ctl.press("shuffled")
    deal_burn(shoe)
    ctl.settle(shoe)
    ctl.act("curator 1")
    assert ctl.table.state == "betting"


def test_crash_before_any_ack_then_the_resent_helo_counts_no_card_twice(fast_tmp: Path) -> None:
    journal = Journal(fast_tmp / "journal.db")
    shoe = SimShoe(seed=5, heartbeat_s=0.3)
    url = shoe.create_pty()
    first = Controller(journal, url)
    first.table.link.reader.acknowledge = lambda sid, seq: None  # the crash precedes any ACK
    second: Controller | None = None
    try:
        shoe.start()
        first.pump(lambda: journal.last([K_SESSION]) is not None)
        first.press("shuffled")
        dealt = shoe.deal(3)
        first.pump(lambda: len(first.cards()) == 3)
        first.table.close()  # crash: the HELO and three cards journaled, none acknowledged
        assert shoe.status().unacked >= 4

        second = Controller(journal, url)
        second.table.recover()
        later = shoe.deal(2)
        ctl = second
        second.pump(lambda: len(ctl.cards()) >= 5 and shoe.delivered())
        assert second.cards() == dealt + later  # every card once, in order
        assert len(list(journal.events(kinds=[K_SESSION]))) == 1  # the resent HELO: a repeat
        assert second.table.data.cards_out == dealt + later
        assert not second.table.faults()
        assert_contiguous(journal)
        assert check_chain(journal).ok
    finally:
        if second is not None:
            second.table.close()
        assert shoe.stop(WAIT_S)
        journal.close()


def test_a_new_shoe_powered_up_while_the_controller_was_down_with_its_helo_lost(
    fast_tmp: Path,
) -> None:
    """docs/reliability.md finding 9. The controller is down; the shoe powers up anew at the
    old session's expected SEQ and heartbeats; its $HELO and heartbeats wait in the pty
    and are flushed when the restarted controller opens the port. The restarted controller
    resumes its journaled session with $NAK,next,SID; the new shoe ignores it, its frames are
    refused without a reply, and its silence resend brings its $HELO: a new session, journaled
    with the old one's position. At this quiet moment the table waits for the dealer's
    `shoe resume`; then a coup is dealt and every card is journaled once; the shoe was told of
    nothing the journal does not hold."""
    journal = Journal(fast_tmp / "journal.db")
    shoe = SimShoe(seed=21, heartbeat_s=0.05)
    url = shoe.create_pty()
    first = Controller(journal, url)
    second: Controller | None = None
    try:
        shoe.start()
        first.pump(lambda: journal.last([K_SESSION]) is not None)
        old_sid = shoe.sid
        open_shoe(first, shoe)
        first.table.close()  # the controller goes down
        resume = first.table.resume_position()
        assert resume is not None and resume.sid == old_sid
        # the new HELO at the very SEQ the old session expects next, and heartbeats naming it
        new_sid = shoe.power_cycle(start_seq=resume.next_seq)
        beats = shoe.status().heartbeats
        deadline = time.monotonic() + WAIT_S
        while shoe.status().heartbeats < beats + 5:
            assert time.monotonic() < deadline
            time.sleep(0.05)

        second = Controller(journal, url)
        second.table.recover()
        ctl = second
        ctl.pump(lambda: journal.last([K_SESSION]).data["sid"] == new_sid)  # type: ignore[union-attr]
        session = journal.last([K_SESSION])
        assert session is not None
        assert session.data["previous"] == {"sid": old_sid, "last_seq": resume.next_seq - 1}
        assert ctl.table.state == "betting" and ctl.table.data.shoe_unconfirmed == new_sid
        assert f"shoe session {new_sid} unconfirmed" in ctl.table.faults()
        assert any("SHOE RESTARTED" in a for a in ctl.alarms)
        ctl.act("shoe resume")
        assert not ctl.table.faults()
        before = len(ctl.cards())
        ctl.press("no_more_bets")
        coup = deal_coup(shoe)
        ctl.pump(lambda: ctl.table.state != "dealing" and shoe.delivered())
        assert ctl.table.state in ("settling",) and ctl.table.data.coup == coup
        assert ctl.cards()[before:] == coup
        # every $ACK the new shoe took names its session and a row the journal holds
        rows = [
            e.data for e in journal.events(kinds=[K_SESSION, K_FRAME], since_seq=session.seq - 1)
        ]
        journaled = {r["seq"] for r in rows}  # the new session's positions
        acked = [f.seq for f in shoe.received if f.type == "ACK" and f.sid == new_sid]
        assert acked and set(acked) <= journaled
        confirm = [
            (e.data["name"], e.data["args"]) for e in journal.events(kinds=["baccarat.action"])
        ]
        assert ("shoe", ["resume"]) in confirm
        resumed = list(journal.events(kinds=["baccarat.shoe.resumed"]))
        assert len(resumed) == 1 and resumed[0].data["sid"] == new_sid
        assert not list(journal.events(kinds=["baccarat.coup.voided"]))
        assert_contiguous(journal)
        assert check_chain(journal).ok
    finally:
        if second is not None:
            second.table.close()
        assert shoe.stop(WAIT_S)
        journal.close()


def test_a_power_cycle_between_coups_after_a_long_idle(fast_tmp: Path) -> None:
    """Revision 1 held the repeated $HELO until the first card, then halted "power-cycled
    mid-coup" and voided a coup that had not started. Revision 2: the session is new at once;
    between coups nothing halts or is voided; the table waits for the dealer's confirmation,
    journals it, and the next coup is dealt as usual. Revision 3: the idle journals nothing."""
    journal = Journal(fast_tmp / "journal.db")
    shoe = SimShoe(seed=33, heartbeat_s=0.02)  # a long idle, quickly
    ctl = Controller(journal, shoe.create_pty())
    try:
        shoe.start()
        ctl.pump(lambda: journal.last([K_SESSION]) is not None)
        open_shoe(ctl, shoe)
        ctl.press("no_more_bets")
        deal_coup(shoe)
        ctl.settle(shoe)
        ctl.press("settled")
        if ctl.table.state == "passing":
            ctl.act("curator 2")
        assert ctl.table.state == "betting"
        rows = journal.last_seq
        beats = shoe.status().heartbeats
        # idle: more than two minutes' worth of 1 Hz heartbeats, and not one row for them
        ctl.pump(lambda: shoe.status().heartbeats >= beats + 130, timeout=3 * WAIT_S)
        assert journal.last_seq == rows and ctl.table.link.watchdog_ok
        old_sid = shoe.sid
        t0 = time.monotonic()
        new_sid = shoe.power_cycle()
        ctl.pump(lambda: ctl.table.data.shoe_unconfirmed == new_sid)
        assert time.monotonic() - t0 < 1.0  # at once, whatever the idle before
        assert ctl.table.state == "betting" and new_sid != old_sid
        assert not ctl.table.data.faults  # no halt
        assert not list(journal.events(kinds=["baccarat.coup.voided"]))  # no void
        with pytest.raises(Refused, match="shoe resume"):
            ctl.press("no_more_bets")  # the next coup waits for the dealer's confirmation
        assert ctl.table.state == "betting"
        assert ctl.act("shoe resume") == [f"shoe session {new_sid} confirmed: play goes on"]
        resumed = list(journal.events(kinds=["baccarat.shoe.resumed"]))
        assert [r.data["sid"] for r in resumed] == [new_sid]
        ctl.press("no_more_bets")
        coup = deal_coup(shoe)
        ctl.settle(shoe)
        assert ctl.table.state == "settling" and ctl.table.data.coup == coup
        assert_contiguous(journal)
        assert check_chain(journal).ok
    finally:
        ctl.table.close()
        assert shoe.stop(WAIT_S)
        journal.close()


def test_a_power_cycle_during_the_burn_after_a_lost_burn_frame(fast_tmp: Path) -> None:
    """Revision 1 accepted the new session without a fault, took coup 1's first card as the
    last burn card and shifted every card after it. Revision 2: the session is new, the burn
    cannot be completed (a card left unread), the table halts; no card after the power cycle
    is taken for the burn or a coup."""
    journal = Journal(fast_tmp / "journal.db")
    shoe = SimShoe(seed=8, heartbeat_s=None, decks=8)
    ctl = Controller(journal, shoe.create_pty())
    try:
        shoe.start()
        ctl.pump(lambda: journal.last([K_SESSION]) is not None)
        ctl.press("shuffled")
        first = shoe.deal(1)[0]  # face up: at least one more card is burned (5324.20(e))
        ctl.settle(shoe)
        assert ctl.table.state == "burn"
        shoe.fault_drop()
        lost = shoe.deal(1)  # this burn frame never arrives ...
        shoe.power_cycle()  # ... and the shoe loses it with its power
        ctl.pump(lambda: ctl.table.state == "halted")
        fault = "; ".join(ctl.table.faults())
        assert "power-cycled during the burn" in fault
        after = shoe.deal(4)  # what the dealer deals next is not a burn card, nor a coup's
        ctl.settle(shoe)
        burned = [e.data["card"] for e in journal.events(kinds=["baccarat.burn"])]
        assert burned == [first] and lost[0] not in burned[1:]
        assert not set(after) & set(burned[1:])
        assert not list(journal.events(kinds=["baccarat.coup.start"]))
        assert ctl.table.state == "halted"
        ctl.act("clear")  # the technician: the shoe is reshuffled
        assert ctl.table.state == "shuffle"
        assert_contiguous(journal)
    finally:
        ctl.table.close()
        assert shoe.stop(WAIT_S)
        journal.close()
