"""SerialShoe against an in-memory port: durability of ACKs, session ids, NAK rules, link loss,
watchdog, heartbeats outside the sequence, the $HELO's revision (docs/design.md "Reference shoe
protocol, revision 3")."""

from __future__ import annotations

import errno
import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from drivers.errors import DriverError
from drivers.serial_shoe import DEFAULT_BAUD, SerialShoe
from drivers.shoe_events import (
    ShoeFrameAccepted,
    ShoeFrameRefused,
    ShoeLinkChanged,
    ShoeSession,
    ShoeWatchdog,
)
from drivers.shoe_protocol import (
    Frame,
    FrameDecoder,
    SessionPosition,
    ShoeProtocolError,
    checksum,
    encode,
)
from tests.unit.shoe.helpers import Events, FakePort, Opener, wait_until

SID = "1A2B3C4D"
NEW = "77E0B2A9"
HELO = encode("HELO", 0, SID, "REF-SHOE", "2.0", "3")

Rig = tuple[Opener, Events, list[SerialShoe]]


def sent(port: FakePort) -> list[tuple[str, int, str]]:
    """The (type, seq, sid) of every frame the driver wrote."""
    out = FrameDecoder().feed(bytes(port.written))
    return [(f.type, f.seq, f.sid) for f in out if isinstance(f, Frame)]


def everything(events: Events) -> list[object]:
    """Every event posted so far (the queue drained into ``seen``)."""
    while not events.queue.empty():
        events.seen.append(events.queue.get_nowait())
    return events.seen


def acks(port: FakePort) -> list[tuple[int, str]]:
    return [(seq, sid) for t, seq, sid in sent(port) if t == "ACK"]


@pytest.fixture
def rig() -> Iterator[Rig]:
    opener, events, made = Opener(), Events(), []
    yield opener, events, made
    for shoe in made:
        assert shoe.stop(2.0)


def make(rig: Rig, **kw: object) -> SerialShoe:
    opener, events, made = rig
    shoe = SerialShoe("fake://", events.post, opener=opener, **kw)  # type: ignore[arg-type]
    made.append(shoe)
    shoe.start()
    assert wait_until(lambda: bool(opener.ports))
    return shoe


def test_the_default_baud_is_115200() -> None:
    assert DEFAULT_BAUD == 115200
    seen: list[int] = []

    def opener(url: str, baud: int, rt: float, wt: float) -> FakePort:
        seen.append(baud)
        return FakePort()

    shoe = SerialShoe("fake://", print, opener=opener)
    shoe.start()
    try:
        assert wait_until(lambda: bool(seen)) and seen[0] == 115200
    finally:
        assert shoe.stop(2.0)


def test_no_ack_until_the_controller_acknowledges(rig: Rig) -> None:
    opener, events, _ = rig
    shoe = make(rig)
    port = opener.ports[0]
    port.push(HELO + encode("CARD", 1, SID, "QH") + encode("CARD", 2, SID, "TD"))
    session = events.next_of(ShoeSession)
    assert isinstance(session, ShoeSession)
    assert (session.sid, session.model, session.seq, session.previous) == (SID, "REF-SHOE", 0, None)
    cards = [events.next_of(ShoeFrameAccepted), events.next_of(ShoeFrameAccepted)]
    assert [(c.fields, c.sid) for c in cards] == [(("QH",), SID), (("TD",), SID)]  # type: ignore[attr-defined]
    assert shoe.stats().accepted == 3
    assert acks(port) == []
    shoe.acknowledge(SID, 0)
    shoe.acknowledge(SID, 1)
    assert wait_until(lambda: acks(port)[-1:] == [(1, SID)])
    assert all(seq <= 1 for seq, _ in acks(port))  # frame 2 is not yet journaled
    shoe.acknowledge(SID, 2)
    assert wait_until(lambda: acks(port)[-1:] == [(2, SID)])
    assert shoe.stats().durable_seq == 2


def test_a_repeat_is_acknowledged_only_up_to_the_journal(rig: Rig) -> None:
    opener, events, _ = rig
    shoe = make(rig)
    port = opener.ports[0]
    port.push(HELO + encode("CARD", 1, SID, "QH") + encode("CARD", 2, SID, "TD"))
    for _ in range(2):
        events.next_of(ShoeFrameAccepted)
    shoe.acknowledge(SID, 0)
    shoe.acknowledge(SID, 1)
    assert wait_until(lambda: (1, SID) in acks(port))
    port.push(HELO + encode("CARD", 1, SID, "QH") + encode("CARD", 2, SID, "TD"))  # resend
    assert wait_until(lambda: shoe.stats().repeats == 3)
    got = [seq for seq, _ in acks(port)]
    # acknowledge() may send at once (ACK 0 then ACK 1) or the reader may batch them (ACK 1):
    # both are cumulative. The three repeats are acknowledged only up to the journal (1).
    assert got[-3:] == [1, 1, 1] and max(got) == 1
    assert shoe.stats().accepted == 3  # nothing counted twice, the HELO not a second session
    assert shoe.stats().sessions == 1


def test_resume_naks_the_next_seq_of_its_session(rig: Rig) -> None:
    opener, events, _ = rig
    shoe = make(rig, resume=SessionPosition(SID, 57))
    port = opener.ports[0]
    assert wait_until(lambda: sent(port) == [("NAK", 57, SID)])
    port.push(encode("CARD", 56, SID, "QH") + encode("CARD", 57, SID, "2C"))
    accepted = events.next_of(ShoeFrameAccepted)
    assert isinstance(accepted, ShoeFrameAccepted) and accepted.seq == 57
    assert wait_until(lambda: shoe.stats().repeats == 1)
    assert acks(port) == [(56, SID)]  # the repeat: what the journal holds, no further
    shoe.acknowledge(SID, 57)
    assert wait_until(lambda: acks(port) == [(56, SID), (57, SID)])


def test_a_new_shoe_powered_up_while_the_controller_was_down_is_never_acknowledged_as_the_old(
    rig: Rig,
) -> None:
    """docs/reliability.md finding 9: the new shoe's $HELO was lost to the port's flush and
    its frames reach the old session's expected SEQ. Revision 2: they are foreign (no reply,
    no ACK); the shoe's silence resend brings its HELO, which starts the new session."""
    opener, events, _ = rig
    shoe = make(rig, resume=SessionPosition(SID, 3))
    port = opener.ports[0]
    held = [encode("CARD", 1, NEW, "QH"), encode("CARD", 2, NEW, "TD")]
    new_frames = [encode("HBT", 0, NEW), *held, encode("HBT", 2, NEW)]
    port.push(b"".join(new_frames))
    assert wait_until(lambda: shoe.stats().foreign == 4)
    refused = [events.next_of(ShoeFrameRefused) for _ in range(4)]
    assert {r.reason for r in refused} == {"foreign_sid"}  # type: ignore[attr-defined]
    assert not any(r.nak_sent for r in refused)  # type: ignore[attr-defined]
    assert sent(port) == [("NAK", 3, SID)]  # only the resume NAK: no reply to a foreign SID
    # the silence resend: the HELO first, then what follows it (heartbeats are never resent)
    port.push(encode("HELO", 0, NEW, "REF-SHOE", "2.0", "3") + b"".join(held))
    session = events.next_of(ShoeSession)
    assert isinstance(session, ShoeSession) and session.sid == NEW
    assert session.previous == SessionPosition(SID, 3)
    seqs = [events.next_of(ShoeFrameAccepted).seq for _ in range(2)]  # type: ignore[attr-defined]
    assert seqs == [1, 2]
    assert acks(port) == []  # nothing of the new session journaled yet
    shoe.acknowledge(SID, 2)  # an old session's SEQ: never sent to the new shoe
    shoe.acknowledge(NEW, 0)
    assert wait_until(lambda: acks(port) == [(0, NEW)])
    assert shoe.stats().stale_acks == 1


def test_old_session_acks_are_never_sent_to_the_new_session(rig: Rig) -> None:
    opener, events, _ = rig
    shoe = make(rig)
    port = opener.ports[0]
    port.push(HELO + encode("CARD", 1, SID, "QH"))
    events.next_of(ShoeFrameAccepted)
    port.push(encode("HELO", 0, NEW, "REF-SHOE", "2.0", "3"))  # power cycle before card 1's ACK
    assert events.next_of(ShoeSession).sid == NEW  # type: ignore[attr-defined]
    shoe.acknowledge(SID, 0)
    shoe.acknowledge(SID, 1)
    shoe.acknowledge(NEW, 0)
    assert wait_until(lambda: acks(port) == [(0, NEW)])
    assert shoe.stats().stale_acks == 2


def test_a_heartbeat_is_never_answered_nor_posted(rig: Rig) -> None:
    """Revision 3: a heartbeat in step feeds the watchdog and nothing else: no $ACK (the shoe
    holds nothing for it), no event for the table to journal."""
    opener, events, _ = rig
    shoe = make(rig)
    port = opener.ports[0]
    port.push(HELO)
    events.next_of(ShoeSession)
    shoe.acknowledge(SID, 0)
    assert wait_until(lambda: acks(port) == [(0, SID)])
    port.push(encode("HBT", 0, SID) * 5)
    assert wait_until(lambda: shoe.stats().heartbeats == 5)
    port.push(encode("CARD", 1, SID, "QH"))
    card = events.next_of(ShoeFrameAccepted)
    assert isinstance(card, ShoeFrameAccepted) and card.seq == 1  # the first event after HELO
    port.push(encode("HBT", 1, SID) * 3)  # card 1 not journaled yet: still no reply
    assert wait_until(lambda: shoe.stats().heartbeats == 8)
    assert sent(port) == [("ACK", 0, SID)]
    assert not [e for e in everything(events) if isinstance(e, ShoeFrameRefused)]


def test_a_lost_last_card_is_nakked_by_the_next_heartbeat(rig: Rig) -> None:
    """The last card of a coup lost on the wire: nothing follows it but heartbeats. The first
    heartbeat naming it brings `$NAK` of the expected SEQ, once; the resend is accepted."""
    opener, events, _ = rig
    shoe = make(rig)
    port = opener.ports[0]
    port.push(HELO + encode("CARD", 1, SID, "QH"))
    events.next_of(ShoeFrameAccepted)
    shoe.acknowledge(SID, 1)
    assert wait_until(lambda: acks(port) == [(1, SID)])
    # $CARD,2 is lost; the shoe's next heartbeat names it
    port.push(encode("HBT", 2, SID))
    lost = events.next_of(ShoeFrameRefused)
    assert isinstance(lost, ShoeFrameRefused)
    assert (lost.reason, lost.expected_seq, lost.nak_sent) == ("lost", 2, True)
    assert wait_until(lambda: sent(port)[-1:] == [("NAK", 2, SID)])
    port.push(encode("HBT", 2, SID))  # once per gap
    assert wait_until(lambda: shoe.stats().heartbeats == 2)
    assert [t for t, _, _ in sent(port)].count("NAK") == 1
    port.push(encode("CARD", 2, SID, "TD"))  # the shoe's resend
    card = events.next_of(ShoeFrameAccepted)
    assert isinstance(card, ShoeFrameAccepted) and (card.seq, card.fields) == (2, ("TD",))
    shoe.acknowledge(SID, 2)
    assert wait_until(lambda: acks(port)[-1:] == [(2, SID)])
    assert shoe.stats().lost == 2 and shoe.stats().accepted == 3


def test_a_heartbeat_naming_a_seq_never_sent_is_nakked_once_and_nothing_accepted(
    rig: Rig,
) -> None:
    opener, events, _ = rig
    shoe = make(rig, resume=SessionPosition(SID, 10))
    port = opener.ports[0]
    assert wait_until(lambda: sent(port) == [("NAK", 10, SID)])  # the resume NAK
    port.push(encode("HBT", 4321, SID) * 4)
    assert wait_until(lambda: shoe.stats().heartbeats == 4)
    assert sent(port) == [("NAK", 10, SID), ("NAK", 10, SID)]  # one for the whole gap
    assert shoe.stats().accepted == 0 and shoe.stats().expected_seq == 10
    port.push(encode("CARD", 10, SID, "AS"))  # the sequence goes on where it was
    card = events.next_of(ShoeFrameAccepted)
    assert isinstance(card, ShoeFrameAccepted) and card.seq == 10


@pytest.mark.parametrize("revision", [None, "2", "4"])
def test_a_helo_of_another_revision_is_refused_and_none_of_its_cards_accepted(
    rig: Rig, revision: str | None
) -> None:
    opener, events, _ = rig
    shoe = make(rig, resume=SessionPosition(SID, 5))
    port = opener.ports[0]
    old = encode("HELO", 0, NEW, "OLD-SHOE", "1.4", *([] if revision is None else [revision]))
    port.push(old + encode("CARD", 1, NEW, "QH") + encode("HBT", 1, NEW) + old)
    refused = [events.next_of(ShoeFrameRefused) for _ in range(4)]
    reasons = [r.reason for r in refused]  # type: ignore[attr-defined]
    assert reasons == ["bad_revision", "foreign_sid", "foreign_sid", "bad_revision"]
    detail = refused[0].detail  # type: ignore[attr-defined]
    named = "names no protocol revision" if revision is None else f"speaks revision {revision}"
    assert NEW in detail and named in detail and "revision 3" in detail
    stats = shoe.stats()
    assert (stats.sid, stats.expected_seq, stats.sessions, stats.accepted) == (SID, 5, 0, 0)
    assert stats.bad_revision == 2
    assert sent(port) == [("NAK", 5, SID)]  # only the resume NAK: no reply to it at all
    assert not any(isinstance(e, ShoeSession | ShoeFrameAccepted) for e in everything(events))


def test_an_acknowledgement_beyond_what_was_delivered_is_refused(rig: Rig) -> None:
    opener, events, _ = rig
    shoe = make(rig)
    port = opener.ports[0]
    port.push(HELO + encode("CARD", 1, SID, "QH"))
    events.next_of(ShoeFrameAccepted)
    shoe.acknowledge(SID, 5)  # never delivered
    shoe.acknowledge(SID, 1)
    shoe.acknowledge(SID, 0)  # already covered
    assert wait_until(lambda: shoe.stats().stale_acks == 2)
    assert acks(port) == [(1, SID)]


def test_gap_is_refused_and_nakked_once(rig: Rig) -> None:
    opener, events, _ = rig
    shoe = make(rig)
    port = opener.ports[0]
    port.push(HELO + encode("CARD", 2, SID, "QH") + encode("COVR", 3, SID))
    events.next_of(ShoeSession)
    first = events.next_of(ShoeFrameRefused)
    second = events.next_of(ShoeFrameRefused)
    assert isinstance(first, ShoeFrameRefused) and isinstance(second, ShoeFrameRefused)
    assert (first.reason, first.expected_seq, first.nak_sent) == ("gap", 1, True)
    assert (second.reason, second.nak_sent) == ("gap", False)
    assert sent(port) == [("NAK", 1, SID)]
    assert shoe.stats().gaps == 2


def test_bad_frame_is_refused_and_nakked_in_the_current_session(rig: Rig) -> None:
    opener, events, _ = rig
    shoe = make(rig)
    port = opener.ports[0]
    bad = encode("CARD", 1, SID, "QH")[:-4] + b"00\r\n"
    port.push(HELO + bad)
    events.next_of(ShoeSession)
    refused = events.next_of(ShoeFrameRefused)
    assert isinstance(refused, ShoeFrameRefused)
    assert refused.reason == "checksum_mismatch" and refused.raw == bad
    assert wait_until(lambda: sent(port) == [("NAK", 1, SID)])
    assert shoe.stats().refused == 1


@pytest.mark.parametrize("sid", ["00000000", "1a2b3c4d", "1A2B3C4", "1A2B3C4DE", "XYZXYZXY", ""])
def test_a_frame_whose_sid_is_not_a_session_id_is_refused_never_acknowledged(
    rig: Rig, sid: str
) -> None:
    opener, events, _ = rig
    shoe = make(rig, resume=SessionPosition(SID, 1))
    port = opener.ports[0]
    body = f"CARD,1,{sid},QH".encode()
    port.push(b"$" + body + b"*%02X\r\n" % checksum(body))
    refused = events.next_of(ShoeFrameRefused)
    assert isinstance(refused, ShoeFrameRefused) and refused.reason == "bad_sid"
    assert wait_until(lambda: sent(port) == [("NAK", 1, SID), ("NAK", 1, SID)])
    assert shoe.stats().accepted == 0 and acks(port) == []


def test_frames_before_any_helo_are_refused_and_not_acked(rig: Rig) -> None:
    opener, events, _ = rig
    shoe = make(rig)
    port = opener.ports[0]
    port.push(encode("CARD", 7, SID, "QH"))
    refused = events.next_of(ShoeFrameRefused)
    assert isinstance(refused, ShoeFrameRefused) and refused.reason == "no_session"
    shoe.acknowledge(SID, 7)  # nothing was accepted: a stale acknowledge sends nothing
    assert wait_until(lambda: shoe.stats().stale_acks == 1)
    assert sent(port) == []


def test_port_vanishing_reopens_and_naks_the_expected_seq(rig: Rig) -> None:
    opener, events, _ = rig
    shoe = make(rig, backoff_initial_s=0.01)
    port = opener.ports[0]
    opened = events.next_of(ShoeLinkChanged)
    assert isinstance(opened, ShoeLinkChanged) and opened.up
    port.push(HELO)
    events.next_of(ShoeSession)
    opener.fail = 2  # the device stays away for two attempts
    port.vanish()
    down = events.next_of(ShoeLinkChanged)
    assert isinstance(down, ShoeLinkChanged) and not down.up
    up = events.next_of(ShoeLinkChanged)
    assert isinstance(up, ShoeLinkChanged) and up.up
    assert len(opener.ports) == 2 and port.closed
    assert wait_until(lambda: sent(opener.ports[1]) == [("NAK", 1, SID)])
    assert shoe.stats().reconnects == 1


def test_write_failure_keeps_the_received_frames_and_reconnects(rig: Rig) -> None:
    opener, events, _ = rig
    make(rig, backoff_initial_s=0.01)
    port = opener.ports[0]
    port.fail_writes = True
    # the bad frame's NAK fails; the valid frames after it in the same read are still posted
    bad = encode("CARD", 1, SID, "QH")[:-4] + b"00\r\n"
    port.push(HELO + bad + encode("CARD", 1, SID, "QH") + encode("CARD", 2, SID, "TD"))
    seqs = [events.next_of(ShoeFrameAccepted).seq for _ in range(2)]  # type: ignore[attr-defined]
    assert seqs == [1, 2]
    down = events.next_of(ShoeLinkChanged)
    assert isinstance(down, ShoeLinkChanged) and not down.up and "write failed" in down.reason
    assert wait_until(lambda: len(opener.ports) == 2)
    assert wait_until(lambda: sent(opener.ports[1]) == [("NAK", 3, SID)])


def test_open_failure_is_reported_once_then_retried(rig: Rig) -> None:
    opener, events, made = rig
    opener.fail = 3
    shoe = SerialShoe("fake://", events.post, opener=opener, backoff_initial_s=0.01)
    made.append(shoe)
    shoe.start()
    down = events.next_of(ShoeLinkChanged)
    up = events.next_of(ShoeLinkChanged)
    assert isinstance(down, ShoeLinkChanged) and not down.up and "could not open" in down.reason
    assert isinstance(up, ShoeLinkChanged) and up.up


def test_a_missing_port_is_named_with_the_errnos_words(rig: Rig, tmp_path: Path) -> None:
    """The real opener on a path that is not there (the adapter unplugged, /dev/tc-shoe not
    made): the reason names the port and says why as the kernel does, once."""
    _, events, made = rig
    path = tmp_path / "tc-shoe"
    shoe = SerialShoe(str(path), events.post, backoff_initial_s=0.01)
    made.append(shoe)
    shoe.start()
    down = events.next_of(ShoeLinkChanged)
    assert isinstance(down, ShoeLinkChanged) and not down.up
    assert down.reason == f"cannot open {path}: {os.strerror(errno.ENOENT)}"


def test_watchdog_is_fed_only_by_the_current_session(rig: Rig) -> None:
    opener, events, _ = rig
    make(rig, watchdog_s=0.2, resume=SessionPosition(SID, 1))
    port = opener.ports[0]
    fault = events.next_of(ShoeWatchdog)
    assert isinstance(fault, ShoeWatchdog) and not fault.ok and fault.silent_for_s > 0.2
    port.push(b"garbage\n")  # not a valid frame: does not feed the watchdog
    port.push(encode("HBT", 1, NEW))  # another session's frame: neither
    port.push(encode("ACK", 1, SID))  # the wrong direction (a loopback): neither
    assert wait_until(
        lambda: (
            sum(isinstance(e, ShoeFrameRefused) for e in events.seen) == 3
            or events.queue.qsize() >= 3
        )
    )
    port.push(encode("HBT", 0, SID))  # a heartbeat in step: LAST is the SEQ before 1
    back = events.next_of(ShoeWatchdog)
    assert isinstance(back, ShoeWatchdog) and back.ok
    assert not any(isinstance(e, ShoeWatchdog) for e in events.seen[:-1] if e is not fault)


def test_consumer_failure_does_not_lose_the_frame(rig: Rig) -> None:
    opener, events, made = rig
    failures = [1]

    def flaky_post(event: object) -> None:
        if isinstance(event, ShoeFrameAccepted) and failures:
            failures.pop()
            raise RuntimeError("queue full")
        events.post(event)

    shoe = SerialShoe("fake://", flaky_post, opener=opener)
    made.append(shoe)
    shoe.start()
    assert wait_until(lambda: bool(opener.ports))
    port = opener.ports[0]
    port.push(HELO + encode("CARD", 1, SID, "QH"))
    events.next_of(ShoeSession)
    assert wait_until(lambda: shoe.stats().post_errors == 1)
    port.push(encode("CARD", 1, SID, "QH"))  # the shoe's resend is accepted this time
    accepted = events.next_of(ShoeFrameAccepted)
    assert isinstance(accepted, ShoeFrameAccepted) and accepted.seq == 1


def test_a_session_the_consumer_did_not_get_is_accepted_again(rig: Rig) -> None:
    opener, events, made = rig
    failures = [1]

    def flaky_post(event: object) -> None:
        if isinstance(event, ShoeSession) and failures:
            failures.pop()
            raise RuntimeError("queue full")
        events.post(event)

    shoe = SerialShoe("fake://", flaky_post, opener=opener, resume=SessionPosition(SID, 9))
    made.append(shoe)
    shoe.start()
    assert wait_until(lambda: bool(opener.ports))
    port = opener.ports[0]
    port.push(encode("HELO", 0, NEW, "REF-SHOE", "2.0", "3"))
    assert wait_until(lambda: shoe.stats().post_errors == 1)
    assert shoe.stats().sid == SID  # still the old session: the HELO was not delivered
    port.push(encode("HELO", 0, NEW, "REF-SHOE", "2.0", "3"))
    session = events.next_of(ShoeSession)
    assert isinstance(session, ShoeSession) and session.previous == SessionPosition(SID, 9)


def test_ten_megabytes_of_garbage_are_refused_and_never_acknowledged(rig: Rig) -> None:
    """Noise of every byte value, frames cut short, frames of a foreign SID and frames whose
    SID is not one: the thread survives, every piece is refused, nothing is acknowledged, and
    the session's next frame is accepted."""
    opener, events, _ = rig
    shoe = make(rig, resume=SessionPosition(SID, 100))
    port = opener.ports[0]
    rng = random.Random(12)
    total = 0
    chunk_size = 1 << 20
    bad_sid = b"$HBT,100,00000000*%02X\r\n" % checksum(b"HBT,100,00000000")
    foreign = encode("CARD", 100, NEW, "QH")
    old_helo = encode("HELO", 0, NEW, "OLD-SHOE", "1.4")  # revision 2: refused
    while total < 10 * chunk_size:
        noise = bytearray(rng.randbytes(chunk_size))
        for pos in range(0, chunk_size, 4096):  # sprinkle frames that must be refused
            piece = (bad_sid, foreign, old_helo)[(pos // 4096) % 3]
            noise[pos : pos + len(piece)] = piece
        port.push(bytes(noise))
        total += len(noise)
        assert wait_until(lambda: port.in_waiting == 0, 60.0)
    port.push(encode("CARD", 100, SID, "9S"))
    accepted = events.next_of(ShoeFrameAccepted, timeout=60.0)
    assert isinstance(accepted, ShoeFrameAccepted) and accepted.fields == ("9S",)
    stats = shoe.stats()
    assert stats.refused > 10_000 and stats.foreign >= 500 and stats.accepted == 1
    assert stats.bad_revision >= 500 and stats.sessions == 0
    assert acks(port) == [] and stats.link_up
    shoe.acknowledge(SID, 100)
    assert wait_until(lambda: acks(port) == [(100, SID)])


def test_arguments_are_checked() -> None:
    with pytest.raises(ShoeProtocolError):
        SerialShoe("x", print, resume=(SID, 1))  # type: ignore[arg-type]
    with pytest.raises(DriverError):
        SerialShoe("x", print, baud=0)
    shoe = SerialShoe("x", print)
    with pytest.raises(ShoeProtocolError):
        shoe.acknowledge(SID, -1)
    with pytest.raises(ShoeProtocolError):
        shoe.acknowledge("00000000", 1)
    assert shoe.stop(0.1)
