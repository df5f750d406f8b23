"""A journal write that fails for one shoe frame (a full disk, an I/O error) must not lose the
card: the frame was neither acknowledged nor acted on, so the controller has the shoe resend it,
and every card ends up journaled exactly once, in order (docs/design.md "Durability and trust";
5324.20 "the controller never silently drops a card"). Real SerialShoe and SimShoe over a pty."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.journal.store import Journal, JournalIOError
from controller.journal.verify import check_chain
from controller.tables.baccarat.data import K_FRAME, K_SESSION
from drivers.buttons import ButtonPressed
from drivers.sim.shoe import SimShoe

from .test_shoe_restart import WAIT_S, Controller


class FailingOnce:
    """Wraps the journal's append so that the first write of a chosen CARD frame fails, or (with
    ``decision``) the first decision row about that card, after the table acted on it."""

    def __init__(self, journal: Journal, card: str, decision: bool = False) -> None:
        self.journal = journal
        self.card = card
        self.decision = decision
        self.failed = 0
        self._append = journal.append

    def __call__(self, kind: str, data: Any = None, round_id: int | None = None) -> int:
        if self.decision:
            hit = kind == "baccarat.burn" and data and data.get("card") == self.card
        else:
            hit = (
                kind == K_FRAME
                and data
                and data.get("type") == "CARD"
                and data.get("fields") == [self.card]
            )
        if hit and not self.failed:
            self.failed += 1
            raise JournalIOError("database or disk is full (simulated)")
        return self._append(kind, data, round_id)


@pytest.mark.parametrize(
    ("transactional", "decision"), [(False, False), (True, False), (True, True)]
)
def test_a_frame_that_could_not_be_journaled_is_resent_and_counted_once(
    fast_tmp: Path, transactional: bool, decision: bool
) -> None:
    """Outside a transaction the frame's row is its own; inside one (as the application runs
    the table) the whole event is rolled back, a decision row failing after the table acted on
    the card included, and the table's memory put back, so the card the shoe resends is taken
    once (the burn and cards_out would hold it twice otherwise)."""
    journal = Journal(fast_tmp / "journal.db")
    shoe = SimShoe(seed=11, heartbeat_s=0.3)
    url = shoe.create_pty()
    controller = Controller(journal, url, transactional)
    try:
        shoe.start()
        controller.pump(lambda: journal.last([K_SESSION]) is not None)
        controller.table.handle(ButtonPressed("shuffled", 0))
        first = shoe.peek(1)[0]
        failing = FailingOnce(journal, first, decision)
        journal.append = failing  # type: ignore[method-assign]

        def cards() -> list[str]:
            return [
                e.data["fields"][0]
                for e in journal.events(kinds=[K_FRAME])
                if e.data["type"] == "CARD"
            ]

        dealt = shoe.deal(6)
        assert dealt[0] == first
        errors: list[Exception] = []

        def pump_until(done: Any) -> None:
            while True:
                try:
                    controller.pump(done)
                    return
                except JournalIOError as exc:  # the application would raise a fault here
                    errors.append(exc)

        pump_until(lambda: len(cards()) >= 6 and shoe.delivered())
        assert failing.failed == 1 and len(errors) == 1
        assert cards() == dealt  # the failed card came back: every card once, in order
        assert controller.table.data.cards_out == dealt  # the memory too
        burned = [e.data["card"] for e in journal.events(kinds=["baccarat.burn"])]
        assert burned[0] == first and burned.count(first) == 1
        assert check_chain(journal).ok
    finally:
        controller.table.close()
        assert shoe.stop(WAIT_S)
        journal.close()


@pytest.mark.parametrize("transactional", [False, True])
def test_a_new_session_that_could_not_be_journaled_comes_again(
    fast_tmp: Path, transactional: bool
) -> None:
    """The journal fails on a new session's row: the reader forgets the session, nothing of it
    is acknowledged or played, and the shoe's silence resend brings its $HELO again: journaled
    once, and the cards dealt after it are journaled once, in order, in that session."""
    journal = Journal(fast_tmp / "journal.db")
    shoe = SimShoe(seed=12, heartbeat_s=0.2)
    controller = Controller(journal, shoe.create_pty(), transactional)
    append = journal.append
    failed: list[str] = []

    def fail_new_session(kind: str, data: Any = None, round_id: int | None = None) -> int:
        if kind == K_SESSION and data and data.get("previous") and not failed:
            failed.append(data["sid"])
            raise JournalIOError("database or disk is full (simulated)")
        return append(kind, data, round_id)

    journal.append = fail_new_session  # type: ignore[method-assign]
    try:
        shoe.start()
        controller.pump(lambda: journal.last([K_SESSION]) is not None)
        new_sid = shoe.power_cycle()
        dealt = shoe.deal(3)
        errors: list[Exception] = []

        def pump_until(done: Any) -> None:
            while True:
                try:
                    controller.pump(done)
                    return
                except JournalIOError as exc:
                    errors.append(exc)

        def cards() -> list[str]:
            return [
                e.data["fields"][0]
                for e in journal.events(kinds=[K_FRAME])
                if e.data["type"] == "CARD"
            ]

        pump_until(lambda: len(cards()) >= 3 and shoe.delivered())
        assert failed == [new_sid] and len(errors) == 1
        sessions = [e.data["sid"] for e in journal.events(kinds=[K_SESSION])]
        assert sessions[-1] == new_sid and sessions.count(new_sid) == 1
        last_session = journal.last([K_SESSION])
        assert last_session is not None
        frames = list(journal.events(kinds=[K_FRAME], since_seq=last_session.seq))
        assert cards() == dealt and len(frames) == 3  # all in the new session
        assert check_chain(journal).ok
    finally:
        controller.table.close()
        assert shoe.stop(WAIT_S)
        journal.close()


def test_resync_refuses_a_bad_seq() -> None:
    from drivers.serial_shoe import SerialShoe
    from drivers.shoe_protocol import ShoeProtocolError

    shoe = SerialShoe("loop://", lambda event: None)
    with pytest.raises(ShoeProtocolError):
        shoe.resync(10_000)


def test_an_application_fault_stops_play_and_replay_skips_the_refusal(fast_tmp: Path) -> None:
    """A journal, program or settings fault held by the application stops a new coup, wagers and
    a new shoe (ERR FAULT, journaled); after it is cleared play goes on, and a restart replays
    the refused input as refused (the refusal row names it)."""
    from controller.tables.baccarat.data import K_REFUSED
    from controller.tables.table import Refused

    from .helpers import Rig

    rig = Rig(fast_tmp)
    faults: list[str] = []
    rig.ctx.app_faults = lambda: list(faults)
    rig.open_shoe()
    faults.append("program: drivers/serial_shoe.py does not match the manifest")
    with pytest.raises(Refused) as refused:
        rig.press("no_more_bets")
    assert refused.value.code == "FAULT" and "manifest" in refused.value.reason
    with pytest.raises(Refused):
        rig.act("bet 1 banker 500")
    assert rig.table.state == "betting"
    assert len(rig.rows(K_REFUSED)) == 2
    faults.clear()
    rig.act("bet 1 banker 500")
    rig.press("no_more_bets")
    assert rig.table.state == "dealing"
    again = rig.reopen()  # a restart: the journal is replayed since the last snapshot
    assert again.table.state == "dealing"
