"""Model check of the protocol's delivery guarantee, with no threads and no ports.

A shoe that follows DESIGN.md's rules and a receiver built on SequenceTracker (acknowledging
the way SerialShoe does: only what was journaled, never while a HELO is held, never an old
session's SEQ) exchange frames over channels that drop, corrupt, duplicate and add garbage in
both directions. Hypothesis picks the traffic and the faults; the property is the durability
promise: nothing journaled twice, in order, nothing acknowledged before it was journaled, and
everything the shoe still held arrives once the line is clean.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.shoe_protocol import (
    BadFrame,
    Frame,
    FrameDecoder,
    SequenceTracker,
    Verdict,
    encode,
    next_seq,
    seq_distance,
)

HELO = ("HELO", "REF-SHOE", "1.0")


@dataclass
class Channel:
    """A one-way line that applies the next scripted fault to each transmission."""

    faults: list[str]
    inflight: collections.deque[bytes] = field(default_factory=collections.deque)

    def send(self, data: bytes) -> None:
        fault = self.faults.pop() if self.faults else "ok"
        if data.startswith(b"$HELO") and fault in ("drop", "corrupt"):
            # A lost HELO is caught only when a later frame conflicts with what was accepted at
            # its SEQ; losing it *and* every frame up to the old expected SEQ is undetectable
            # without a session id (docs/shoe-protocol.md, open problems). Unit tests cover it.
            fault = "ok"
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
    """DESIGN.md's shoe: keeps every unacknowledged frame, resends on NAK and on silence."""

    def __init__(self, line: Channel, start_seq: int) -> None:
        self.line = line
        self.start_seq = start_seq
        self.seq = start_seq
        self.unacked: collections.OrderedDict[int, tuple[bytes, int | None]] = (
            collections.OrderedDict()
        )
        self.acked_uids: list[int] = []
        self.decoder = FrameDecoder()

    def emit(self, ftype: str, *fields: str, uid: int | None = None) -> None:
        frame = encode(ftype, self.seq, *fields)
        self.unacked[self.seq] = (frame, uid)
        self.seq = next_seq(self.seq)
        self.line.send(frame)

    def power_cycle(self) -> list[int]:
        lost = [uid for _, uid in self.unacked.values() if uid is not None]
        self.unacked.clear()
        self.seq = self.start_seq
        self.emit(*HELO)
        return lost

    def resend_from(self, seq: int | None) -> None:
        items = list(self.unacked.items())
        if seq in self.unacked:
            items = items[[s for s, _ in items].index(seq):]
        for _, (frame, _) in items:
            self.line.send(frame)

    def receive(self, data: bytes) -> None:
        for item in self.decoder.feed(data):
            if not isinstance(item, Frame):
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


class ModelController:
    """SerialShoe's rules with an instant, always-successful journal."""

    def __init__(self, line: Channel) -> None:
        self.line = line
        self.tracker = SequenceTracker()
        self.decoder = FrameDecoder()
        self.journal: list[Frame] = []
        self.session = 0
        self.pending: collections.deque[tuple[int, int]] = collections.deque()
        self.to_ack: list[int] = []
        self.last_acked: int | None = None
        self.now = 0.0  # a logical clock, advanced by the test

    def receive(self, data: bytes) -> None:
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                nak = self.tracker.nak_for_bad_frame()
                if nak is not None:
                    self.line.send(encode("NAK", nak))
                continue
            decision = self.tracker.classify(item, self.now)
            if decision.verdict is Verdict.ACCEPT:
                if decision.new_session:
                    self.session += 1
                    self.last_acked = None
                self.journal.append(decision.frame)
                self.pending.append((self.session, decision.frame.seq))
                self.to_ack.append(decision.frame.seq)  # journaled: acknowledge
                if decision.nak is not None:
                    self.line.send(encode("NAK", decision.nak))
            elif decision.verdict is Verdict.REPEAT and self.last_acked is not None:
                journaled = seq_distance(self.last_acked, item.seq) < 5000
                self.line.send(encode("ACK", item.seq if journaled else self.last_acked))
            elif decision.verdict in (Verdict.GAP, Verdict.HELD) and decision.nak is not None:
                self.line.send(encode("NAK", decision.nak))
            self.send_acks()

    def send_acks(self) -> None:
        if self.tracker.holding:
            return
        latest = None
        for seq in self.to_ack:
            while self.pending:
                session, pending_seq = self.pending.popleft()
                if pending_seq == seq:
                    if session == self.session:
                        latest = seq
                    break
        self.to_ack.clear()
        if latest is not None:
            self.last_acked = latest
            self.line.send(encode("ACK", latest))


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
    st.sampled_from(["data", "data", "data", "hbt", "deliver", "silence", "powercycle"]),
    min_size=1,
    max_size=60,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS, FAULTS, FAULTS, st.sampled_from([0, 9990, 4999]))
def test_nothing_journaled_twice_or_acknowledged_unjournaled(
    ops: list[str], down_faults: list[str], up_faults: list[str], start_seq: int
) -> None:
    shoe_to_ctl, ctl_to_shoe = Channel(down_faults), Channel(up_faults)
    shoe, ctl = ModelShoe(shoe_to_ctl, start_seq), ModelController(ctl_to_shoe)
    shoe.emit(*HELO)
    uid = 0
    lost: list[int] = []
    for op in ops:
        ctl.now += 0.1
        if op == "data":
            uid += 1
            shoe.emit("XDAT", str(uid), uid=uid)
        elif op == "hbt":
            shoe.emit("HBT")
        elif op == "silence":
            ctl.now += 0.5
            shoe.resend_from(None)
        elif op == "powercycle":
            # Timing assumption (docs/shoe-protocol.md): a shoe takes longer to boot than the
            # controller takes to read what is on the wire and answer; answers to a shoe that is
            # off are lost.
            while shoe_to_ctl.inflight:
                ctl.receive(shoe_to_ctl.inflight.popleft())
            ctl_to_shoe.inflight.clear()
            lost += shoe.power_cycle()
        if op == "deliver":
            run_until_quiet(shoe, ctl)
    # the line becomes clean; the shoe's silence resends and heartbeats go on until it holds
    # nothing (a held HELO is resolved by the next new frame: a heartbeat at the latest)
    shoe_to_ctl.faults.clear()
    ctl_to_shoe.faults.clear()
    for _ in range(20):
        run_until_quiet(shoe, ctl)
        if not shoe.unacked:
            break
        ctl.now += 0.6
        shoe.resend_from(None)
        shoe.emit("HBT")
    assert not shoe.unacked

    journaled = [int(f.fields[0]) for f in ctl.journal if f.type == "XDAT"]
    assert len(journaled) == len(set(journaled)), "a frame was journaled twice"
    assert journaled == sorted(journaled), "frames were journaled out of order"
    assert set(shoe.acked_uids) <= set(journaled), "the shoe dropped a frame never journaled"
    # everything is journaled except frames a power cycle wiped before they were acknowledged
    assert set(journaled) | set(lost) == set(range(1, uid + 1))
