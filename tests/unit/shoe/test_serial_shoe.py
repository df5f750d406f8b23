"""SerialShoe against an in-memory port: durability of ACKs, NAK rules, link loss, watchdog."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from drivers.serial_shoe import SerialShoe
from drivers.shoe_events import (
    ShoeFrameAccepted,
    ShoeFrameRefused,
    ShoeLinkChanged,
    ShoeSession,
    ShoeWatchdog,
)
from drivers.shoe_protocol import FrameDecoder, ShoeProtocolError, encode
from tests.unit.shoe.helpers import Events, FakePort, Opener, wait_until

HELO = encode("HELO", 0, "REF-SHOE", "1.0")


def sent(port: FakePort) -> list[tuple[str, int]]:
    """The (type, seq) of every frame the driver wrote."""
    out = FrameDecoder().feed(bytes(port.written))
    return [(f.type, f.seq) for f in out if hasattr(f, "seq")]


@pytest.fixture
def rig() -> Iterator[tuple[Opener, Events, list[SerialShoe]]]:
    opener, events, made = Opener(), Events(), []
    yield opener, events, made
    for shoe in made:
        assert shoe.stop(2.0)


def make(rig: tuple[Opener, Events, list[SerialShoe]], **kw: object) -> SerialShoe:
    opener, events, made = rig
    shoe = SerialShoe("fake://", events.post, opener=opener, **kw)  # type: ignore[arg-type]
    made.append(shoe)
    shoe.start()
    assert wait_until(lambda: bool(opener.ports))
    return shoe


def test_no_ack_until_the_controller_acknowledges(
    rig: tuple[Opener, Events, list[SerialShoe]],
) -> None:
    opener, events, _ = rig
    shoe = make(rig)
    port = opener.ports[0]
    port.push(HELO + encode("CARD", 1, "QH") + encode("CARD", 2, "TD"))
    session = events.next_of(ShoeSession)
    assert isinstance(session, ShoeSession) and session.model == "REF-SHOE"
    cards = [events.next_of(ShoeFrameAccepted), events.next_of(ShoeFrameAccepted)]
    assert [c.fields for c in cards] == [("QH",), ("TD",)]  # type: ignore[attr-defined]
    assert shoe.stats().accepted == 3
    assert ("ACK", 0) not in sent(port) and not any(t == "ACK" for t, _ in sent(port))
    shoe.acknowledge(0)
    shoe.acknowledge(1)
    assert wait_until(lambda: sent(port)[-1:] == [("ACK", 1)])
    assert all(seq <= 1 for t, seq in sent(port) if t == "ACK")  # frame 2 is not yet journaled
    shoe.acknowledge(2)
    assert wait_until(lambda: sent(port)[-1:] == [("ACK", 2)])


def test_repeat_is_reacknowledged_only_up_to_the_journal(
    rig: tuple[Opener, Events, list[SerialShoe]],
) -> None:
    opener, events, _ = rig
    shoe = make(rig)
    port = opener.ports[0]
    port.push(HELO + encode("CARD", 1, "QH") + encode("CARD", 2, "TD"))
    for _ in range(2):
        events.next_of(ShoeFrameAccepted)
    shoe.acknowledge(0)
    shoe.acknowledge(1)
    assert wait_until(lambda: ("ACK", 1) in sent(port))
    port.push(encode("CARD", 1, "QH") + encode("CARD", 2, "TD"))  # the shoe resends
    assert wait_until(lambda: shoe.stats().repeats == 2)
    acks = [s for t, s in sent(port) if t == "ACK"]
    # acknowledge() may send at once (ACK 0 then ACK 1) or the reader may batch them (ACK 1):
    # both are cumulative. The two repeats are re-acknowledged only up to the journal (1).
    assert acks[-2:] == [1, 1] and max(acks) == 1 and acks == sorted(acks)
    assert acks[:-2] in ([0, 1], [1])
    assert shoe.stats().accepted == 3  # nothing counted twice


def test_resume_naks_the_next_seq_and_acks_only_what_it_journals(
    rig: tuple[Opener, Events, list[SerialShoe]],
) -> None:
    """After a restart the reader cannot tell a resent old frame from a new shoe's frame at the
    same SEQ (its HELO lost): it acknowledges no such "repeat" (a cumulative ACK could make a new
    shoe drop frames nobody journaled); the resumed frame's ACK covers the old ones."""
    opener, events, _ = rig
    shoe = make(rig, resume_seq=57)
    port = opener.ports[0]
    assert wait_until(lambda: sent(port) == [("NAK", 57)])
    port.push(encode("CARD", 56, "QH") + encode("CARD", 57, "2C"))
    accepted = events.next_of(ShoeFrameAccepted)
    assert isinstance(accepted, ShoeFrameAccepted) and accepted.seq == 57
    assert wait_until(lambda: shoe.stats().repeats == 1)
    assert [a for a in sent(port) if a[0] == "ACK"] == []
    shoe.acknowledge(57)  # journaled: the cumulative ACK covers 56 too
    assert wait_until(lambda: ("ACK", 57) in sent(port))
    assert [a for a in sent(port) if a[0] == "ACK"] == [("ACK", 57)]


def test_gap_is_refused_and_nakked_once(rig: tuple[Opener, Events, list[SerialShoe]]) -> None:
    opener, events, _ = rig
    shoe = make(rig)
    port = opener.ports[0]
    port.push(HELO + encode("CARD", 2, "QH") + encode("HBT", 3))
    events.next_of(ShoeSession)
    first = events.next_of(ShoeFrameRefused)
    second = events.next_of(ShoeFrameRefused)
    assert isinstance(first, ShoeFrameRefused) and isinstance(second, ShoeFrameRefused)
    assert (first.reason, first.expected_seq, first.nak_sent) == ("gap", 1, True)
    assert (second.reason, second.nak_sent) == ("gap", False)
    assert sent(port) == [("NAK", 1)]
    assert shoe.stats().gaps == 2


def test_bad_frame_is_journaled_and_nakked(rig: tuple[Opener, Events, list[SerialShoe]]) -> None:
    opener, events, _ = rig
    shoe = make(rig)
    port = opener.ports[0]
    port.push(HELO + b"$CARD,1,QH*3D\r\n")
    events.next_of(ShoeSession)
    refused = events.next_of(ShoeFrameRefused)
    assert isinstance(refused, ShoeFrameRefused)
    assert refused.reason == "checksum_mismatch" and refused.raw == b"$CARD,1,QH*3D\r\n"
    assert wait_until(lambda: sent(port) == [("NAK", 1)])
    assert shoe.stats().refused == 1


def test_frames_before_any_helo_are_refused_and_not_acked(
    rig: tuple[Opener, Events, list[SerialShoe]],
) -> None:
    opener, events, _ = rig
    shoe = make(rig)
    port = opener.ports[0]
    port.push(encode("CARD", 7, "QH"))
    refused = events.next_of(ShoeFrameRefused)
    assert isinstance(refused, ShoeFrameRefused) and refused.reason == "no_session"
    shoe.acknowledge(7)  # nothing was accepted: a stale acknowledge sends nothing
    assert wait_until(lambda: shoe.stats().stale_acks == 1)
    assert sent(port) == []


def test_old_session_acks_are_never_sent_to_the_new_session(
    rig: tuple[Opener, Events, list[SerialShoe]],
) -> None:
    opener, events, _ = rig
    shoe = make(rig)
    port = opener.ports[0]
    port.push(HELO + encode("CARD", 1, "QH"))
    events.next_of(ShoeFrameAccepted)
    port.push(encode("HELO", 100, "REF-SHOE", "1.0"))  # power cycle before we journaled card 1
    assert events.next_of(ShoeSession).seq == 100  # type: ignore[attr-defined]
    shoe.acknowledge(0)
    shoe.acknowledge(1)
    shoe.acknowledge(100)
    assert wait_until(lambda: sent(port) == [("ACK", 100)])


def test_port_vanishing_reopens_and_naks_the_expected_seq(
    rig: tuple[Opener, Events, list[SerialShoe]],
) -> None:
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
    assert wait_until(lambda: sent(opener.ports[1]) == [("NAK", 1)])
    assert shoe.stats().reconnects == 1


def test_write_failure_keeps_the_received_frames_and_reconnects(
    rig: tuple[Opener, Events, list[SerialShoe]],
) -> None:
    opener, events, _ = rig
    make(rig, backoff_initial_s=0.01)
    port = opener.ports[0]
    port.fail_writes = True
    # the bad frame's NAK fails; the valid frames after it in the same read are still posted
    port.push(HELO + b"$CARD,1,QH*00\r\n" + encode("CARD", 1, "QH") + encode("CARD", 2, "TD"))
    seqs = [events.next_of(ShoeFrameAccepted).seq for _ in range(2)]  # type: ignore[attr-defined]
    assert seqs == [1, 2]
    down = events.next_of(ShoeLinkChanged)
    assert isinstance(down, ShoeLinkChanged) and not down.up and "write failed" in down.reason
    assert wait_until(lambda: len(opener.ports) == 2)
    assert wait_until(lambda: sent(opener.ports[1]) == [("NAK", 3)])


def test_open_failure_is_reported_once_then_retried(
    rig: tuple[Opener, Events, list[SerialShoe]],
) -> None:
    opener, events, made = rig
    opener.fail = 3
    shoe = SerialShoe("fake://", events.post, opener=opener, backoff_initial_s=0.01)
    made.append(shoe)
    shoe.start()
    down = events.next_of(ShoeLinkChanged)
    up = events.next_of(ShoeLinkChanged)
    assert isinstance(down, ShoeLinkChanged) and not down.up and "could not open" in down.reason
    assert isinstance(up, ShoeLinkChanged) and up.up


def test_watchdog_faults_on_silence_and_clears_on_a_valid_frame(
    rig: tuple[Opener, Events, list[SerialShoe]],
) -> None:
    opener, events, _ = rig
    make(rig, watchdog_s=0.2)
    port = opener.ports[0]
    fault = events.next_of(ShoeWatchdog)
    assert isinstance(fault, ShoeWatchdog) and not fault.ok and fault.silent_for_s > 0.2
    port.push(b"garbage\n")  # not a valid frame: does not feed the watchdog
    port.push(HELO)
    back = events.next_of(ShoeWatchdog)
    assert isinstance(back, ShoeWatchdog) and back.ok
    assert not any(isinstance(e, ShoeWatchdog) for e in events.seen[:-1] if e is not fault)


def test_consumer_failure_does_not_lose_the_frame(
    rig: tuple[Opener, Events, list[SerialShoe]],
) -> None:
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
    port.push(HELO + encode("CARD", 1, "QH"))
    events.next_of(ShoeSession)
    assert wait_until(lambda: shoe.stats().post_errors == 1)
    port.push(encode("CARD", 1, "QH"))  # the shoe's resend is accepted this time
    accepted = events.next_of(ShoeFrameAccepted)
    assert isinstance(accepted, ShoeFrameAccepted) and accepted.seq == 1


def test_arguments_are_checked() -> None:
    with pytest.raises(ShoeProtocolError):
        SerialShoe("x", print, resume_seq=10000)
    shoe = SerialShoe("x", print)
    with pytest.raises(ShoeProtocolError):
        shoe.acknowledge(-1)
    assert shoe.stop(0.1)
