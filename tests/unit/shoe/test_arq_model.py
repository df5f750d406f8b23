"""Model check of the protocol's delivery guarantee (revision 3), with no threads and no ports.

A shoe that keeps docs/design.md's rules and a receiver built on SequenceTracker (acknowledging
the way SerialShoe and the table do: only what was journaled, an ``$ACK`` of the journaled SEQ on
every repeat, nothing for a heartbeat, whose LAST beyond what was accepted brings a ``$NAK`` of
the expected SEQ) exchange frames over channels
that drop, corrupt, duplicate and add garbage in both directions, any frame included (a lost
``$HELO`` too: revision 1 had to exclude it). The shoe power-cycles and the controller restarts
from its journal (the port's input flushed) at any moment. Hypothesis picks the traffic and the
faults; the property is the durability promise: nothing journaled twice, in order, nothing
acknowledged before it was journaled, and everything the shoe still held arrives once the line
is clean; every session's rows are contiguous in SEQ (heartbeats take none).
"""

from __future__ import annotations

import collections
import itertools
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.shoe_protocol import (
    BadFrame,
    Decision,
    Frame,
    FrameDecoder,
    SequenceTracker,
    SessionPosition,
    Verdict,
    encode,
    next_seq,
    seq_distance,
)

HELO = ("REF-SHOE", "2.0", "3")


@dataclass
class Channel:
    """A one-way line that applies the next scripted fault to each transmission."""

    faults: list[str]
    inflight: collections.deque[bytes] = field(default_factory=collections.deque)

    def send(self, data: bytes) -> None:
        fault = self.faults.pop() if self.faults else "ok"
        if fault == "drop":
            return
        if fault == "corrupt":
            data = data[:1] + bytes([data[1] ^ 0x01]) + data[2:]
        if fault == "garbage":
            self.inflight.append(b"\x00#junk*\r\n")
        self.inflight.append(data)
        if fault == "dup":
            self.inflight.append(data)


class ModelShoe:
    """The shoe of docs/design.md: a new SID at every power-up; keeps every unacknowledged frame,
    resends on a NAK of its SID and after silence; ignores ACK/NAK of another SID."""

    def __init__(self, line: Channel, start_seq: int) -> None:
        self.line = line
        self.start_seq = start_seq
        self.seq = start_seq
        self.sids = (f"{n:08X}" for n in itertools.count(0x10))
        self.sid = next(self.sids)
        self.unacked: collections.OrderedDict[int, tuple[bytes, int | None]] = (
            collections.OrderedDict()
        )
        self.acked_uids: list[int] = []
        self.decoder = FrameDecoder()

    def emit(self, ftype: str, *fields: str, uid: int | None = None) -> None:
        frame = encode(ftype, self.seq, self.sid, *fields)
        self.unacked[self.seq] = (frame, uid)
        self.seq = next_seq(self.seq)
        self.line.send(frame)

    def heartbeat(self) -> None:
        """``$HBT,LAST,SID``: LAST the SEQ of the last sequenced frame sent; never held."""
        self.line.send(encode("HBT", (self.seq - 1) % 10000, self.sid))

    def power_cycle(self) -> list[int]:
        lost = [uid for _, uid in self.unacked.values() if uid is not None]
        self.unacked.clear()
        self.seq = self.start_seq  # the same SEQ as the last power-up: only the SID differs
        self.sid = next(self.sids)
        self.decoder = FrameDecoder()
        self.emit("HELO", *HELO)
        return lost

    def resend_from(self, seq: int | None) -> None:
        items = list(self.unacked.items())
        if seq in self.unacked:
            items = items[[s for s, _ in items].index(seq) :]
        for _, (frame, _) in items:
            self.line.send(frame)

    def receive(self, data: bytes) -> None:
        for item in self.decoder.feed(data):
            if not isinstance(item, Frame) or item.sid != self.sid:
                continue
            if item.type == "ACK" and item.seq in self.unacked:
                while self.unacked:
                    seq, (_, uid) = self.unacked.popitem(last=False)
                    if uid is not None:
                        self.acked_uids.append(uid)
                    if seq == item.seq:
                        break
            elif item.type == "NAK":
                self.resend_from(item.seq)


@dataclass
class Row:
    sid: str
    seq: int
    type: str
    uid: int | None


class ModelController:
    """SerialShoe's and the table's rules with an instant, always-successful journal. A
    restart keeps only the journal: the tracker resumes from its last row."""

    def __init__(self, line: Channel, journal: list[Row]) -> None:
        self.line = line
        self.journal = journal
        last = journal[-1] if journal else None
        resume = None if last is None else SessionPosition(last.sid, next_seq(last.seq))
        self.tracker = SequenceTracker(resume)
        self.decoder = FrameDecoder()
        self.durable: int | None = None if last is None else last.seq
        self.acks = 0
        self.heartbeat_acks = 0  # ACKs sent in answer to a heartbeat: revision 3 sends none
        if resume is not None:
            self.line.send(encode("NAK", resume.next_seq, resume.sid))

    def journal_row(self, sid: str, seq: int, ftype: str, uid: int | None) -> None:
        self.journal.append(Row(sid, seq, ftype, uid))
        self.durable = seq
        self.acks += 1
        self.line.send(encode("ACK", seq, sid))  # after the row is durable

    def keepalive(self) -> None:
        sid = self.tracker.sid
        if sid is not None and self.durable is not None:
            self.acks += 1
            self.line.send(encode("ACK", self.durable, sid))

    def receive(self, data: bytes) -> None:
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                position = self.tracker.nak_for_bad_frame()
                if position is not None:
                    self.line.send(encode("NAK", position.next_seq, position.sid))
                continue
            acks = self.acks
            self.handle(self.tracker.classify(item))
            if item.type == "HBT":
                self.heartbeat_acks += self.acks - acks

    def handle(self, decision: Decision) -> None:
        frame = decision.frame
        if decision.verdict is Verdict.ACCEPT:
            assert frame.type != "HBT", "a heartbeat is never accepted into the sequence"
            if decision.new_session:
                self.durable = None
                self.journal_row(frame.sid, frame.seq, "HELO", None)
            else:
                self.journal_row(frame.sid, frame.seq, frame.type, int(frame.fields[0]))
        elif decision.verdict is Verdict.REPEAT:
            self.keepalive()
        elif decision.verdict in (Verdict.GAP, Verdict.LOST) and decision.nak is not None:
            assert self.tracker.sid is not None
            self.line.send(encode("NAK", decision.nak, self.tracker.sid))


def run_until_quiet(shoe: ModelShoe, ctl: ModelController) -> None:
    steps = 0
    while shoe.line.inflight or ctl.line.inflight:
        steps += 1
        assert steps < 200_000, "the exchange does not converge"
        if shoe.line.inflight:
            ctl.receive(shoe.line.inflight.popleft())
        if ctl.line.inflight:
            shoe.receive(ctl.line.inflight.popleft())


FAULTS = st.lists(st.sampled_from(["ok", "ok", "drop", "corrupt", "dup", "garbage"]), max_size=60)
OPS = st.lists(
    st.sampled_from(
        [
            "data",
            "data",
            "data",
            "hbt",
            "hbt",
            "deliver",
            "silence",
            "powercycle",
            "restart",
            "restart_powercycle",
        ]
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS, FAULTS, FAULTS, st.sampled_from([0, 9990, 4999]))
def test_nothing_journaled_twice_or_acknowledged_unjournaled(
    ops: list[str], down_faults: list[str], up_faults: list[str], start_seq: int
) -> None:
    shoe_to_ctl, ctl_to_shoe = Channel(down_faults), Channel(up_faults)
    journal: list[Row] = []
    shoe, ctl = ModelShoe(shoe_to_ctl, start_seq), ModelController(ctl_to_shoe, journal)
    shoe.emit("HELO", *HELO)
    uid = 0
    lost: list[int] = []
    for op in ops:
        if op == "data":
            uid += 1
            shoe.emit("XDAT", str(uid), uid=uid)
        elif op == "hbt":
            shoe.heartbeat()
        elif op == "silence":
            shoe.resend_from(None)
        elif op == "powercycle":
            # no timing assumption (revision 1 needed one): an ACK of the old session that
            # reaches the new power-up names another SID and is ignored
            lost += shoe.power_cycle()
        elif op in ("restart", "restart_powercycle"):
            # the controller dies; what was on the wire to it is flushed when the port opens
            shoe_to_ctl.inflight.clear()
            if op == "restart_powercycle":
                lost += shoe.power_cycle()  # while it is down
                shoe_to_ctl.inflight.clear()  # ... and its HELO is flushed too (finding 9)
            ctl = ModelController(ctl_to_shoe, journal)
        if op == "deliver":
            run_until_quiet(shoe, ctl)
    # the line becomes clean; the shoe's silence resends and heartbeats go on until it holds
    # nothing
    shoe_to_ctl.faults.clear()
    ctl_to_shoe.faults.clear()
    for _ in range(20):
        run_until_quiet(shoe, ctl)
        if not shoe.unacked:
            break
        shoe.resend_from(None)
        shoe.heartbeat()
    assert not shoe.unacked
    assert ctl.heartbeat_acks == 0

    journaled = [r.uid for r in journal if r.uid is not None]
    assert len(journaled) == len(set(journaled)), "a frame was journaled twice"
    assert journaled == sorted(journaled), "frames were journaled out of order"
    assert set(shoe.acked_uids) <= set(journaled), "the shoe dropped a frame never journaled"
    # everything is journaled except frames a power cycle wiped before they were acknowledged
    assert set(journaled) | set(lost) == set(range(1, uid + 1))
    # every session is journaled once, and each row of a session follows its HELO in SEQ order
    sessions = [r.sid for r in journal if r.type == "HELO"]
    assert len(sessions) == len(set(sessions))
    for sid in sessions:
        rows = [r.seq for r in journal if r.sid == sid]
        steps = [seq_distance(b, a) for a, b in zip(rows, rows[1:], strict=False)]
        assert all(s == 1 for s in steps), (sid, rows)  # contiguous: an export explains itself


def test_a_lost_last_frame_is_found_by_the_next_heartbeat() -> None:
    """Revision 3: the last card of a coup lost on the wire, and no silence resend (the model
    shoe has no clock): the heartbeat's LAST names it, the controller NAKs the expected SEQ
    once, the shoe resends it, it is journaled."""
    shoe_to_ctl, ctl_to_shoe = Channel([]), Channel([])
    journal: list[Row] = []
    shoe, ctl = ModelShoe(shoe_to_ctl, 0), ModelController(ctl_to_shoe, journal)
    shoe.emit("HELO", *HELO)
    shoe.emit("XDAT", "1", uid=1)
    run_until_quiet(shoe, ctl)
    shoe_to_ctl.faults.append("drop")
    shoe.emit("XDAT", "2", uid=2)  # lost
    run_until_quiet(shoe, ctl)
    assert [r.uid for r in journal] == [None, 1]
    shoe.heartbeat()  # $HBT,2,SID: the controller expected 2, so 2 was lost
    run_until_quiet(shoe, ctl)
    assert [r.uid for r in journal] == [None, 1, 2]
    assert not shoe.unacked
    shoe.heartbeat()  # in step again: no reply at all
    run_until_quiet(shoe, ctl)
    assert not ctl_to_shoe.inflight and [r.uid for r in journal] == [None, 1, 2]
