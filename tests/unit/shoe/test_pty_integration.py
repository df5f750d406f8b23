"""SimShoe -> pseudo-terminal -> SerialShoe, with every injected fault.

The test plays the controller: a thread drains the queue, "journals" each event in a list and
then calls acknowledge(seq), as the durability rule requires.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator

import pytest

from drivers.serial_shoe import SerialShoe
from drivers.shoe_events import (
    ShoeFrameAccepted,
    ShoeFrameRefused,
    ShoeLinkChanged,
    ShoeSession,
)
from drivers.shoe_protocol import SessionPosition
from drivers.sim.shoe import SimShoe, SimShoeError
from tests.unit.shoe.helpers import WAIT_S, wait_until


class Controller:
    """Journals every event, then acknowledges accepted frames (unless ``hold`` is set)."""

    def __init__(
        self, path: str, resume: SessionPosition | None = None, hold: bool = False
    ) -> None:
        self.queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self.journal: list[object] = []
        self.hold = hold  # journal but never acknowledge: a crash between fsync and ACK
        self.shoe = SerialShoe(path, self.queue.put, resume=resume, backoff_initial_s=0.02)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> Controller:
        self.shoe.start()
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                event = self.queue.get(timeout=0.02)
            except queue.Empty:
                continue
            self.journal.append(event)
            if isinstance(event, ShoeSession | ShoeFrameAccepted) and not self.hold:
                self.shoe.acknowledge(event.sid, event.seq)

    def stop(self) -> None:
        assert self.shoe.stop(WAIT_S)
        self._stop.set()
        self._thread.join(WAIT_S)
        assert not self._thread.is_alive()

    def of(self, kind: type) -> list[object]:
        return [e for e in list(self.journal) if isinstance(e, kind)]

    def cards(self) -> list[str]:
        return [
            e.fields[0]
            for e in list(self.journal)
            if isinstance(e, ShoeFrameAccepted) and e.type == "CARD"
        ]

    def accepted(self) -> list[ShoeFrameAccepted]:
        return [e for e in list(self.journal) if isinstance(e, ShoeFrameAccepted)]

    def position(self) -> SessionPosition:
        """Where a restart resumes: the session and SEQ after the last journaled frame."""
        last = [e for e in list(self.journal) if isinstance(e, ShoeSession | ShoeFrameAccepted)][-1]
        return SessionPosition(last.sid, (last.seq + 1) % 10000)  # type: ignore[union-attr]


@pytest.fixture
def sim() -> Iterator[SimShoe]:
    shoe = SimShoe(seed=7, heartbeat_s=0.25)
    yield shoe
    assert shoe.stop(WAIT_S)


@pytest.fixture
def ctl(sim: SimShoe) -> Iterator[Controller]:
    controller = Controller(sim.create_pty()).start()
    assert wait_until(lambda: controller.shoe.stats().link_up)
    sim.start()
    assert wait_until(lambda: bool(controller.of(ShoeSession)))
    yield controller
    controller.stop()


def settle(sim: SimShoe, ctl: Controller, cards: list[str]) -> None:
    """Wait until the shoe holds nothing unacknowledged and every card reached the journal."""
    assert wait_until(lambda: len(ctl.cards()) >= len(cards)), (ctl.cards(), cards)
    assert sim.wait_acked(WAIT_S)


def assert_no_seq_twice(ctl: Controller) -> None:
    seqs = [e.seq for e in ctl.accepted()]
    assert len(seqs) == len(set(seqs))
    assert all((b - a) % 10000 == 1 for a, b in zip(seqs, seqs[1:], strict=False))


def test_a_whole_eight_deck_shoe_arrives_exactly_once_in_order(
    sim: SimShoe, ctl: Controller
) -> None:
    dealt: list[str] = []
    while len(dealt) < 416:
        dealt += sim.deal(min(16, 416 - len(dealt)))  # a few coups, then the acks catch up
        assert sim.wait_acked(WAIT_S)
    settle(sim, ctl, dealt)
    assert ctl.cards() == dealt
    assert len(set(dealt)) == 52 and all(dealt.count(c) == 8 for c in set(dealt))
    covr = [e for e in ctl.accepted() if e.type == "COVR"]
    assert len(covr) == 1  # the cut card; the back cover card never passes the reader
    assert_no_seq_twice(ctl)
    assert ctl.shoe.stats().refused == 0
    with pytest.raises(SimShoeError):
        sim.deal()


@pytest.mark.parametrize("fault", ["checksum", "drop", "dup", "garbage"])
def test_each_transmission_fault_loses_and_duplicates_nothing(
    sim: SimShoe, ctl: Controller, fault: str
) -> None:
    dealt = sim.deal(3)
    if fault == "checksum":
        sim.fault_checksum()
    elif fault == "drop":
        sim.fault_drop()
    elif fault == "dup":
        sim.fault_duplicate()
    else:
        sim.send_garbage(b"\x00noise$CA*")
    dealt += sim.deal(5)
    settle(sim, ctl, dealt)
    assert ctl.cards() == dealt
    assert_no_seq_twice(ctl)
    stats = ctl.shoe.stats()
    if fault == "dup":
        assert stats.repeats >= 1
    else:
        assert stats.refused >= 1 and stats.naks_sent >= 1
        assert sim.status().naks_received >= 1
        refused = ctl.of(ShoeFrameRefused)
        reason = {"checksum": "checksum_mismatch", "drop": "gap", "garbage": "garbage"}[fault]
        assert reason in {e.reason for e in refused}  # type: ignore[attr-defined]


def test_dropped_last_frame_is_recovered_by_the_silence_resend() -> None:
    quiet = SimShoe(seed=3, heartbeat_s=None)  # no heartbeat: nothing reveals the gap
    ctl2 = Controller(quiet.create_pty()).start()
    try:
        quiet.start()
        assert wait_until(lambda: bool(ctl2.of(ShoeSession)))
        quiet.fault_drop()
        dealt = quiet.deal(1)
        settle(quiet, ctl2, dealt)
        assert ctl2.cards() == dealt
        assert quiet.status().resends >= 1
    finally:
        ctl2.stop()
        assert quiet.stop(WAIT_S)


def test_dropped_last_frame_is_recovered_by_the_next_heartbeat() -> None:
    """Revision 3: the last card lost and the shoe's silence resend out of the picture (30 s):
    its next heartbeat names the card, the controller NAKs it, the shoe resends it."""
    shoe = SimShoe(seed=3, heartbeat_s=0.1, resend_after_s=30.0)
    ctl2 = Controller(shoe.create_pty()).start()
    try:
        # the port open first: pySerial's input flush must not take the HELO (no quick resend)
        assert wait_until(lambda: ctl2.shoe.stats().link_up)
        shoe.start()
        assert wait_until(lambda: bool(ctl2.of(ShoeSession)))
        assert wait_until(lambda: ctl2.shoe.stats().durable_seq == 0)  # the HELO acknowledged
        shoe.fault_drop()
        dealt = shoe.deal(1)
        settle(shoe, ctl2, dealt)
        assert ctl2.cards() == dealt
        lost = [e for e in ctl2.of(ShoeFrameRefused) if e.reason == "lost"]  # type: ignore[attr-defined]
        assert lost and lost[0].nak_sent  # type: ignore[attr-defined]
        assert shoe.status().naks_received == 1 and shoe.status().resends == 1
    finally:
        ctl2.stop()
        assert shoe.stop(WAIT_S)


def test_an_idle_link_is_quiet() -> None:
    """Revision 3: heartbeats are never held, resent or acknowledged. Counted, not timed:
    however long the idle, no resend and no reply."""
    shoe = SimShoe(seed=8, heartbeat_s=0.02)
    ctl2 = Controller(shoe.create_pty()).start()
    try:
        # the port opened first: its input flush cannot take the HELO (and force a resend)
        assert wait_until(lambda: ctl2.shoe.stats().link_up)
        shoe.start()
        assert wait_until(lambda: ctl2.shoe.stats().heartbeats >= 100)
        assert shoe.wait_acked(WAIT_S)
        status = shoe.status()
        assert status.heartbeats >= 100 and status.resends == 0 and status.unacked == 0
        replies = [(f.type, f.seq) for f in shoe.received]
        assert replies == [("ACK", 0)]  # its HELO's; nothing for a hundred heartbeats
        assert ctl2.accepted() == [] and ctl2.of(ShoeFrameRefused) == []
    finally:
        ctl2.stop()
        assert shoe.stop(WAIT_S)


@pytest.mark.parametrize("revision", [None, "2"])
def test_a_shoe_of_another_revision_is_refused(revision: str | None) -> None:
    shoe = SimShoe(seed=9, heartbeat_s=0.05, resend_after_s=0.1, revision=revision)
    ctl2 = Controller(shoe.create_pty()).start()
    try:
        shoe.start()
        shoe.deal(3)
        # its silence resends bring the HELO again and again: each is refused
        assert wait_until(
            lambda: sum(e.reason == "bad_revision" for e in ctl2.of(ShoeFrameRefused)) >= 3  # type: ignore[attr-defined]
        )
        assert ctl2.of(ShoeSession) == [] and ctl2.accepted() == []
        assert not [f for f in shoe.received if f.type == "ACK"]
        assert shoe.status().unacked == 4  # the HELO and three cards, never acknowledged
    finally:
        ctl2.stop()
        assert shoe.stop(WAIT_S)


def test_shoe_faults_arrive_as_frames(sim: SimShoe, ctl: Controller) -> None:
    copies = [c for c in sim.peek(416) if c == "AS"]
    for card in copies:
        sim.deal_card(card)  # every ace of spades is out: one more is beyond the shoe
    assert sim.wait_acked(WAIT_S)
    unread = sim.deal_unreadable()
    face_up = sim.deal_face_up()
    foreign = sim.deal_foreign()
    sim.fault("JAM")
    sim.fault("DOOR")
    sim.fault("CLR")
    assert sim.wait_acked(WAIT_S)
    frames = [(e.type, e.fields) for e in ctl.accepted()][8:]
    assert frames == [
        ("FLT", ("UNREAD",)),
        ("FLT", ("FACEUP",)),
        ("CARD", (face_up,)),
        ("CARD", ("AS",)),
        ("FLT", ("JAM",)),
        ("FLT", ("DOOR",)),
        ("FLT", ("CLR",)),
    ]
    assert foreign == "AS" and len(copies) == 8
    assert sim.status().cards_dealt == 10  # the foreign card was never in the shoe
    assert unread != ""


def test_unplug_and_replug_mid_stream(sim: SimShoe, ctl: Controller) -> None:
    dealt = sim.deal(3)
    settle(sim, ctl, dealt)
    sim.disconnect()
    assert wait_until(lambda: not ctl.shoe.stats().link_up)
    dealt += sim.deal(6)  # dealt with the cable out: kept unacknowledged in the shoe
    assert sim.status().unacked >= 6
    sim.reconnect()
    settle(sim, ctl, dealt)
    assert ctl.cards() == dealt
    assert_no_seq_twice(ctl)
    links = [e.up for e in ctl.of(ShoeLinkChanged)]  # type: ignore[attr-defined]
    assert links[-2:] == [False, True]
    assert len(ctl.of(ShoeSession)) == 1  # the shoe kept its session


def test_power_cycle_starts_a_new_session(sim: SimShoe, ctl: Controller) -> None:
    first_sid = sim.sid
    dealt = sim.deal(4)
    settle(sim, ctl, dealt)
    sim.power_cycle()  # back to SEQ 0 with the same model and firmware: only the SID differs
    dealt += sim.deal(4)
    settle(sim, ctl, dealt)
    assert ctl.cards() == dealt
    sessions = ctl.of(ShoeSession)
    assert [(e.seq, e.sid) for e in sessions] == [(0, first_sid), (0, sim.sid)]  # type: ignore[attr-defined]
    assert sessions[1].previous == SessionPosition(first_sid, 5)  # type: ignore[attr-defined]


def test_a_power_cycle_after_a_long_idle_is_a_new_session_at_once() -> None:
    """Revision 1 held a byte-identical $HELO until a later frame differed: an idle shoe's
    heartbeats look the same, so the hold lasted until the first card, longer the longer the
    shoe had idled. Revision 2 starts the session on the $HELO itself."""
    shoe = SimShoe(seed=5, heartbeat_s=0.02)  # a long idle, quickly: 50 heartbeats a second
    ctl2 = Controller(shoe.create_pty()).start()
    try:
        shoe.start()
        # three "seconds" of idle (revision 3: heartbeats are the driver's alone)
        assert wait_until(lambda: ctl2.shoe.stats().heartbeats >= 150)
        t0 = time.monotonic()
        shoe.power_cycle()
        assert wait_until(lambda: len(ctl2.of(ShoeSession)) == 2)
        assert time.monotonic() - t0 < 0.5
        assert ctl2.of(ShoeSession)[1].sid == shoe.sid  # type: ignore[attr-defined]
        assert shoe.wait_acked(WAIT_S)
    finally:
        ctl2.stop()
        assert shoe.stop(WAIT_S)


def test_controller_restart_resumes_from_its_journal(sim: SimShoe, ctl: Controller) -> None:
    dealt = sim.deal(5)
    settle(sim, ctl, dealt)
    ctl.stop()
    resume = ctl.position()
    dealt_while_down = sim.deal(4)
    second = Controller(sim.path or "", resume=resume).start()
    try:
        settle(sim, second, dealt_while_down)
        assert ctl.cards() + second.cards() == dealt + dealt_while_down
        assert second.accepted()[0].seq == resume.next_seq
        assert second.of(ShoeSession) == []  # the same session goes on
        received = [(f.type, f.seq, f.sid) for f in sim.received]
        assert ("NAK", resume.next_seq, sim.sid) in received
    finally:
        second.stop()


def test_crash_between_journal_and_ack_counts_nothing_twice(sim: SimShoe, ctl: Controller) -> None:
    dealt = sim.deal(2)
    settle(sim, ctl, dealt)
    ctl.hold = True  # journal, but crash before acknowledging
    held = sim.deal(3)
    assert wait_until(lambda: len(ctl.cards()) == 5)
    assert sim.status().unacked >= 3
    ctl.stop()
    resume = ctl.position()
    later = sim.deal(2)
    second = Controller(sim.path or "", resume=resume).start()
    try:
        settle(sim, second, later)
        assert ctl.cards() + second.cards() == dealt + held + later
        assert [e.seq for e in second.accepted()][0] == resume.next_seq  # the held: not again
    finally:
        second.stop()


def test_crash_before_any_ack_with_the_helo_resent_counts_nothing_twice() -> None:
    """The controller journals the HELO and cards, crashes before any ACK; restarted, it NAKs
    the next SEQ of that session and the shoe resends from there; a resent HELO carries the
    journaled SID, so it is a repeat, never a second session (revision 1 needed the journaled
    frames' bytes to guess)."""
    shoe = SimShoe(seed=11, heartbeat_s=0.3)
    first = Controller(shoe.create_pty(), hold=True).start()
    second: Controller | None = None
    try:
        assert wait_until(lambda: first.shoe.stats().link_up)
        shoe.start()
        dealt = shoe.deal(3)
        assert wait_until(lambda: len(first.cards()) == 3)
        first.stop()  # the crash: journaled, never acknowledged
        assert shoe.status().unacked >= 4  # the HELO and the three cards are still held
        resume = first.position()
        second = Controller(shoe.path or "", resume=resume).start()
        later = shoe.deal(2)
        ctl = second
        assert wait_until(lambda: len(ctl.cards()) >= 2)
        assert shoe.wait_acked(WAIT_S)
        assert first.cards() + second.cards() == dealt + later  # no card twice
        assert second.of(ShoeSession) == []  # the same session goes on
        assert second.accepted()[0].seq == resume.next_seq
    finally:
        if second is not None:
            second.stop()
        assert shoe.stop(WAIT_S)


def test_a_new_shoe_powered_up_while_the_controller_was_down_loses_no_card() -> None:
    """docs/reliability.md finding 9 over a real pty: the controller is down; the shoe is
    power-cycled (a new shoe on the same port) and deals; its $HELO and cards wait in the
    pty and are flushed when the restarted controller opens the port. The restarted
    controller NAKs its journaled session, which the new shoe ignores; the shoe's silence
    resend brings its $HELO first, and every card of the new session is journaled once."""
    shoe = SimShoe(seed=13, heartbeat_s=0.25)
    first = Controller(shoe.create_pty()).start()
    second: Controller | None = None
    try:
        assert wait_until(lambda: first.shoe.stats().link_up)
        shoe.start()
        old = shoe.deal(6)
        settle(shoe, first, old)
        first.stop()
        resume = first.position()
        new_sid = shoe.power_cycle(start_seq=0)
        fresh = shoe.deal(9)  # SEQ 1-9: past the old session's expected SEQ (7)
        assert resume.next_seq < 9
        second = Controller(shoe.path or "", resume=resume).start()
        more = shoe.deal(2)
        ctl = second
        assert wait_until(lambda: len(ctl.cards()) >= 11)
        assert shoe.wait_acked(WAIT_S)
        assert second.cards() == fresh + more
        sessions = second.of(ShoeSession)
        assert [e.sid for e in sessions] == [new_sid]  # type: ignore[attr-defined]
        assert sessions[0].previous == resume  # type: ignore[attr-defined]
        assert_no_seq_twice(second)
        # the shoe was told of nothing but what this controller accepted in its session
        acked = [f for f in shoe.received if f.type == "ACK" and f.sid == new_sid]
        assert acked and all(f.seq <= second.position().next_seq for f in acked)
    finally:
        if second is not None:
            second.stop()
        assert shoe.stop(WAIT_S)
