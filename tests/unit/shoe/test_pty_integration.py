"""SimShoe -> pseudo-terminal -> SerialShoe, with every injected fault.

The test plays the controller: a thread drains the queue, "journals" each event in a list and
then calls acknowledge(seq), as the durability rule requires.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator

import pytest

from drivers.serial_shoe import SerialShoe
from drivers.shoe_events import (
    ShoeFrameAccepted,
    ShoeFrameRefused,
    ShoeLinkChanged,
    ShoeSession,
)
from drivers.sim.shoe import SimShoe, SimShoeError
from tests.unit.shoe.helpers import WAIT_S, wait_until


class Controller:
    """Journals every event, then acknowledges accepted frames (unless ``hold`` is set)."""

    def __init__(self, path: str, resume_seq: int | None = None,
                 known_session: list[bytes] | None = None, hold: bool = False) -> None:
        self.queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self.journal: list[object] = []
        self.hold = hold  # journal but never acknowledge: a crash between fsync and ACK
        self.shoe = SerialShoe(path, self.queue.put, resume_seq=resume_seq,
                               known_session=known_session, backoff_initial_s=0.02)
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
                self.shoe.acknowledge(event.seq)

    def stop(self) -> None:
        assert self.shoe.stop(WAIT_S)
        self._stop.set()
        self._thread.join(WAIT_S)
        assert not self._thread.is_alive()

    def of(self, kind: type) -> list[object]:
        return [e for e in list(self.journal) if isinstance(e, kind)]

    def cards(self) -> list[str]:
        return [
            e.fields[0] for e in list(self.journal)
            if isinstance(e, ShoeFrameAccepted) and e.type == "CARD"
        ]

    def accepted(self) -> list[ShoeFrameAccepted]:
        return [e for e in list(self.journal) if isinstance(e, ShoeFrameAccepted)]

    def last_seq(self) -> int:
        return [e for e in list(self.journal) if isinstance(e, ShoeSession | ShoeFrameAccepted)][
            -1
        ].seq  # type: ignore[union-attr]


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


def test_shoe_faults_arrive_as_frames(sim: SimShoe, ctl: Controller) -> None:
    unread = sim.deal_unreadable()
    face_up = sim.deal_face_up()
    foreign = sim.deal_foreign("AS")
    sim.fault("JAM")
    sim.fault("DOOR")
    sim.fault("CLR")
    assert sim.wait_acked(WAIT_S)
    frames = [(e.type, e.fields) for e in ctl.accepted() if e.type != "HBT"]
    assert frames == [
        ("FLT", ("UNREAD",)),
        ("FLT", ("FACEUP",)),
        ("CARD", (face_up,)),
        ("CARD", (foreign,)),
        ("FLT", ("JAM",)),
        ("FLT", ("DOOR",)),
        ("FLT", ("CLR",)),
    ]
    assert sim.status().cards_dealt == 2  # the foreign card was never in the shoe
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
    dealt = sim.deal(4)
    settle(sim, ctl, dealt)
    sim.power_cycle()  # back to SEQ 0, the same HELO bytes as the first session
    dealt += sim.deal(4)
    settle(sim, ctl, dealt)
    assert ctl.cards() == dealt
    assert [e.seq for e in ctl.of(ShoeSession)] == [0, 0]  # type: ignore[attr-defined]


def test_power_cycle_is_recognised_while_the_old_helo_bytes_repeat() -> None:
    quiet = SimShoe(seed=8, heartbeat_s=None)
    ctl2 = Controller(quiet.create_pty()).start()
    try:
        quiet.start()
        first = quiet.deal(1)
        settle(quiet, ctl2, first)
        quiet.power_cycle()  # HELO 0 again, byte for byte: held until its followers tell
        assert wait_until(lambda: ctl2.shoe.stats().held >= 1)
        assert len(ctl2.of(ShoeSession)) == 1
        second = quiet.deal(2)  # CARD 1 differs from the CARD 1 accepted before
        assert second[0] != first[0]
        settle(quiet, ctl2, first + second)
        assert ctl2.cards() == first + second
        assert [e.seq for e in ctl2.of(ShoeSession)] == [0, 0]  # type: ignore[attr-defined]
    finally:
        ctl2.stop()
        assert quiet.stop(WAIT_S)


def test_controller_restart_resumes_from_its_journal(sim: SimShoe, ctl: Controller) -> None:
    dealt = sim.deal(5)
    settle(sim, ctl, dealt)
    ctl.stop()
    resume = (ctl.last_seq() + 1) % 10000
    dealt_while_down = sim.deal(4)
    second = Controller(sim.path or "", resume_seq=resume).start()
    try:
        settle(sim, second, dealt_while_down)
        assert ctl.cards() + second.cards() == dealt + dealt_while_down
        assert second.accepted()[0].seq == resume
        assert ("NAK", resume) in [(f.type, f.seq) for f in sim.received]
    finally:
        second.stop()


def test_crash_between_journal_and_ack_counts_nothing_twice(
    sim: SimShoe, ctl: Controller
) -> None:
    dealt = sim.deal(2)
    settle(sim, ctl, dealt)
    ctl.hold = True  # journal, but crash before acknowledging
    held = sim.deal(3)
    assert wait_until(lambda: len(ctl.cards()) == 5)
    assert sim.status().unacked >= 3
    ctl.stop()
    resume = (ctl.last_seq() + 1) % 10000
    later = sim.deal(2)
    second = Controller(sim.path or "", resume_seq=resume).start()
    try:
        settle(sim, second, later)
        assert ctl.cards() + second.cards() == dealt + held + later
        assert [e.seq for e in second.accepted()][0] == resume  # the held frames: not again
    finally:
        second.stop()


def _journaled_session(ctl: Controller) -> list[bytes]:
    """What the table passes as ``known_session``: the last HELO and the frames after it."""
    events = [e for e in list(ctl.journal) if isinstance(e, ShoeSession | ShoeFrameAccepted)]
    last_helo = max(i for i, e in enumerate(events) if isinstance(e, ShoeSession))
    return [e.raw for e in events[last_helo:]]  # type: ignore[union-attr]


def test_crash_before_any_ack_with_the_helo_resent_counts_nothing_twice() -> None:
    """docs/shoe-protocol.md: the controller journals the HELO and cards, crashes before any
    ACK; restarted, it NAKs the next SEQ, the shoe (holding everything) resends from its HELO.
    With the journaled session (``known_session``) the HELO is recognised as the same session;
    without it the HELO started a second session and the three cards came twice."""
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
        resume = (first.last_seq() + 1) % 10000
        second = Controller(shoe.path or "", resume_seq=resume,
                            known_session=_journaled_session(first)).start()
        later = shoe.deal(2)
        ctl = second
        assert wait_until(lambda: len(ctl.cards()) >= 2)
        assert shoe.wait_acked(WAIT_S)
        assert first.cards() + second.cards() == dealt + later  # no card twice
        assert second.of(ShoeSession) == []  # the same session goes on
        assert second.accepted()[0].seq == resume
    finally:
        if second is not None:
            second.stop()
        assert shoe.stop(WAIT_S)
