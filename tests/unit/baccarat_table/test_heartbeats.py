"""The shoe's heartbeats and the journal, revision 3 (docs/design.md "Reference shoe protocol,
revision 3"; docs/shoe-protocol.md, "Acknowledging"): a heartbeat takes no SEQ, so an idle table
journals nothing and acknowledges nothing, the frame rows of a session carry contiguous SEQs, a
lost last card of a coup is found by the next heartbeat, and a shoe that speaks another revision
is refused. Through the real SerialShoe and SimShoe over a pseudo-terminal; counted, not timed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from controller.games.baccarat.shoe import CoupInProgress
from controller.journal.store import Journal
from controller.tables.baccarat.data import K_FRAME, K_REFUSED_FRAME, K_SESSION
from controller.tables.table import Refused
from drivers.sim.shoe import SimShoe
from tests.unit.baccarat_table.test_shoe_restart import (
    WAIT_S,
    Controller,
    assert_contiguous,
    open_shoe,
)


def test_an_idle_table_journals_and_acknowledges_nothing(fast_tmp: Path) -> None:
    """600 heartbeats (ten minutes at 1 Hz, quickly): not one row, not one $ACK, no resend."""
    journal = Journal(fast_tmp / "journal.db")
    shoe = SimShoe(seed=41, heartbeat_s=0.005)
    ctl = Controller(journal, shoe.create_pty())
    try:
        shoe.start()
        ctl.pump(lambda: journal.last([K_SESSION]) is not None)
        ctl.settle(shoe)  # the HELO journaled and acknowledged
        rows, beats, resends = journal.last_seq, shoe.status().heartbeats, shoe.status().resends
        acks = [f for f in shoe.received if f.type == "ACK"]

        def idle_done() -> bool:
            ctl.table.tick(time.monotonic_ns())  # the loop's timer: summaries, nothing due
            return shoe.status().heartbeats >= beats + 600

        ctl.pump(idle_done, timeout=6 * WAIT_S)
        assert journal.last_seq == rows  # an idle table journals nothing
        assert [f for f in shoe.received if f.type == "ACK"] == acks  # and answers nothing
        status = shoe.status()
        assert status.resends == resends and status.unacked == 0
        assert ctl.table.link.watchdog_ok  # the heartbeats alone keep it fed
    finally:
        ctl.table.close()
        assert shoe.stop(WAIT_S)
        journal.close()


def coup_size(shoe: SimShoe) -> int:
    """How many cards the next coup takes (5324.20(f)), worked out from the cards to come."""
    coup = CoupInProgress()
    for n, code in enumerate(shoe.peek(6), start=1):
        coup.add(code)
        if coup.complete:
            return n
    raise AssertionError("a coup takes at most six cards")


def test_a_lost_last_card_of_a_coup_is_found_by_the_next_heartbeat(fast_tmp: Path) -> None:
    """The coup's last card is lost on the wire and the shoe's silence resend is out of the
    picture (30 s): its next heartbeat names the card, the controller NAKs it once, the card is
    resent, journaled in its place, and the coup completes."""
    journal = Journal(fast_tmp / "journal.db")
    shoe = SimShoe(seed=42, heartbeat_s=0.05, resend_after_s=30.0)
    ctl = Controller(journal, shoe.create_pty())
    try:
        # the port open first: pySerial's input flush must not take the HELO (no quick resend)
        ctl.pump(lambda: ctl.table.link.up)
        shoe.start()
        ctl.pump(lambda: journal.last([K_SESSION]) is not None)
        open_shoe(ctl, shoe)
        ctl.press("no_more_bets")
        n = coup_size(shoe)
        coup = shoe.deal(n - 1)
        ctl.settle(shoe)
        assert ctl.table.state not in ("betting", "settling")  # the coup waits for its card
        shoe.fault_drop()
        coup += shoe.deal(1)  # the last card: lost on the wire
        ctl.pump(lambda: ctl.table.state == "settling" and shoe.delivered())
        assert ctl.table.state == "settling" and ctl.table.data.coup == coup
        assert ctl.cards()[-n:] == coup
        status = shoe.status()
        assert status.naks_received == 1 and status.resends == 1  # the heartbeat's NAK
        lost = [e.data for e in journal.events(kinds=[K_REFUSED_FRAME])]
        assert [d["reason"] for d in lost] == ["lost"]
        assert_contiguous(journal)
    finally:
        ctl.table.close()
        assert shoe.stop(WAIT_S)
        journal.close()


def test_a_shoe_of_another_revision_is_refused_and_none_of_its_cards_taken(
    fast_tmp: Path,
) -> None:
    """docs/design.md: a $HELO that names another revision (here none: a revision 2 shoe) is
    refused: journaled, said on the console, no session; its cards are never journaled."""
    journal = Journal(fast_tmp / "journal.db")
    shoe = SimShoe(seed=43, heartbeat_s=0.05, resend_after_s=0.1, revision=None)
    ctl = Controller(journal, shoe.create_pty())
    try:
        shoe.start()
        ctl.pump(lambda: any("SHOE REFUSED" in a for a in ctl.alarms))
        shoe.deal(2)
        ctl.pump(lambda: shoe.status().resends >= 3)  # its HELO and cards, again and again
        # (its first heartbeats may come before its HELO gets through: no_session)
        refused = [
            e.data
            for e in journal.events(kinds=[K_REFUSED_FRAME])
            if e.data["reason"] == "bad_revision"
        ]
        assert refused[0]["count"] == 1
        assert "names no protocol revision" in refused[0]["detail"]
        assert refused[0]["raw"].startswith("$HELO,0,")
        said = [a for a in ctl.alarms if a.startswith("SHOE REFUSED")]
        assert len(said) == 1 and "revision 3" in said[0]  # once, not at every resend
        assert not list(journal.events(kinds=[K_SESSION, K_FRAME]))
        assert not [f for f in shoe.received if f.type == "ACK"]
        assert ctl.table.resume_position() is None
        faults = ctl.table.faults()
        assert any(f.startswith("shoe refused:") and "no protocol revision" in f for f in faults)
        with pytest.raises(Refused, match="revision 3 powers up"):
            ctl.table.clear_fault("tech")  # not the console's to clear: says what clears it
    finally:
        ctl.table.close()
        assert shoe.stop(WAIT_S)
        journal.close()
