"""Reference shoe protocol: encoding, streaming decoding, and the receiver's sequence rules."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from drivers.errors import DriverError
from drivers.shoe_protocol import (
    MAX_FRAME,
    BadFrame,
    BadReason,
    Frame,
    FrameDecoder,
    SequenceTracker,
    ShoeProtocolError,
    Verdict,
    checksum,
    encode,
    parse_frame,
    seq_distance,
)


def body_frame(body: str, hh: str | None = None, end: bytes = b"\r\n") -> bytes:
    """A frame with ``body`` between `$` and `*`, the right checksum unless ``hh`` is given."""
    raw = body.encode("ascii")
    return b"$" + raw + b"*" + (hh or f"{checksum(raw):02X}").encode() + end


def feed_all(data: bytes) -> list[Frame | BadFrame]:
    return FrameDecoder().feed(data)


# -- encoding -------------------------------------------------------------------------------


def test_design_examples_encode_byte_for_byte() -> None:
    assert encode("HELO", 0, "REF-SHOE", "1.0") == b"$HELO,0,REF-SHOE,1.0*50\r\n"
    assert encode("CARD", 1, "QH") == b"$CARD,1,QH*3C\r\n"
    assert encode("HBT", 2) == b"$HBT,2*40\r\n"


@pytest.mark.parametrize(
    ("ftype", "seq", "fields"),
    [
        ("HELO", 0, ("REF-SHOE", "1.0")),
        ("CARD", 17, ("TD",)),
        ("COVR", 9999, ()),
        ("HBT", 5000, ()),
        ("FLT", 3, ("JAM",)),
        ("FLT", 4, ("UNREAD",)),
        ("FLT", 5, ("DOOR",)),
        ("FLT", 6, ("CLR",)),
        ("ACK", 42, ()),
        ("NAK", 0, ()),
        ("XTRA", 7, ("any", "thing here")),
    ],
)
def test_every_frame_type_round_trips(ftype: str, seq: int, fields: tuple[str, ...]) -> None:
    raw = encode(ftype, seq, *fields)
    (frame,) = feed_all(raw)
    assert frame == Frame(ftype, seq, fields, raw)
    assert frame.known is (ftype != "XTRA")


@pytest.mark.parametrize(
    ("ftype", "seq", "fields"),
    [
        ("card", 1, ("QH",)),  # type must be upper case
        ("CARD", 10000, ("QH",)),
        ("CARD", -1, ("QH",)),
        ("CARD", 1, ("QX",)),  # suit
        ("CARD", 1, ("1H",)),  # rank (ten is T)
        ("CARD", 1, ("qh",)),
        ("CARD", 1, ()),
        ("HELO", 0, ("REF-SHOE",)),
        ("HELO", 0, ("", "1.0")),
        ("FLT", 1, ("jam",)),
        ("HBT", 1, ("extra",)),
        ("XTRA", 1, ("a*b",)),
        ("XTRA", 1, ("a$b",)),
        ("XTRA", 1, ("x" * 80,)),  # over 80 bytes
    ],
)
def test_encode_refuses_what_the_protocol_cannot_carry(
    ftype: str, seq: int, fields: tuple[str, ...]
) -> None:
    with pytest.raises(ShoeProtocolError):
        encode(ftype, seq, *fields)


def test_protocol_error_is_a_driver_error_and_a_value_error() -> None:
    assert issubclass(ShoeProtocolError, DriverError)
    assert issubclass(ShoeProtocolError, ValueError)


def test_frame_of_exactly_80_bytes_is_accepted_81_is_not() -> None:
    # "$XTRA,1," + field + "*HH\r\n" = 8 + n + 5 bytes
    exact = encode("XTRA", 1, "x" * (MAX_FRAME - 13))
    assert len(exact) == MAX_FRAME
    assert isinstance(feed_all(exact)[0], Frame)
    over = body_frame("XTRA,1," + "x" * (MAX_FRAME - 12))
    assert len(over) == MAX_FRAME + 1
    out = feed_all(over + encode("HBT", 2))
    assert [type(x) for x in out] == [BadFrame, Frame]
    assert isinstance(out[0], BadFrame) and out[0].reason is BadReason.TOO_LONG
    assert out[1] == Frame("HBT", 2, (), encode("HBT", 2))


# -- malformed input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (body_frame("CARD,1,QH", hh="3D"), BadReason.CHECKSUM_MISMATCH),
        (body_frame("CARD,1,QH", hh="3c"), BadReason.BAD_CHECKSUM_FORMAT),  # lower-case hex
        (body_frame("HBT,2", hh="G0"), BadReason.BAD_CHECKSUM_FORMAT),
        (b"$CARD,1,QH3C\r\n", BadReason.BAD_TERMINATOR),  # missing `*`
        (b"$CARD,1,QH*3\r\n", BadReason.BAD_TERMINATOR),  # one hex digit
        (b"$CARD,1,QH\r\n", BadReason.BAD_TERMINATOR),
        (b"$CARD,1,QH*3C\n", BadReason.BAD_TERMINATOR),  # LF without CR
        (b"$CARD,1,QH*3C \r\n", BadReason.BAD_TERMINATOR),
        (body_frame("CARD,X1,QH"), BadReason.BAD_SEQ),  # non-numeric SEQ
        (body_frame("CARD,,QH"), BadReason.BAD_SEQ),
        (body_frame("CARD,10000,QH"), BadReason.BAD_SEQ),  # SEQ > 9999
        (body_frame("CARD,-1,QH"), BadReason.BAD_SEQ),
        (body_frame("CARD"), BadReason.BAD_SEQ),
        (body_frame("card,1,QH"), BadReason.BAD_TYPE),
        (body_frame(",1"), BadReason.BAD_TYPE),
        (body_frame("CARD,1,QX"), BadReason.BAD_FIELDS),
        (body_frame("CARD,1,QH,QS"), BadReason.BAD_FIELDS),
        (body_frame("CARD,1"), BadReason.BAD_FIELDS),
        (body_frame("HELO,0,REF-SHOE"), BadReason.BAD_FIELDS),
        (body_frame("HBT,2,x"), BadReason.BAD_FIELDS),
        (body_frame("FLT,2,jam"), BadReason.BAD_FIELDS),
        (body_frame("XTRA,2,a\tb"), BadReason.BAD_FIELDS),  # control character
    ],
)
def test_malformed_frames_are_refused_with_a_reason(raw: bytes, reason: BadReason) -> None:
    out = feed_all(raw)
    assert len(out) == 1
    assert isinstance(out[0], BadFrame)
    assert out[0].reason is reason
    assert out[0].raw == raw


def test_non_ascii_byte_with_matching_checksum_is_refused() -> None:
    body = b"XTRA,1,\xe9"
    raw = b"$" + body + b"*%02X\r\n" % checksum(body)
    (bad,) = feed_all(raw)
    assert isinstance(bad, BadFrame) and bad.reason is BadReason.BAD_FIELDS


def test_cr_only_ending_is_refused_when_the_next_frame_starts() -> None:
    # documented reading: a frame ends with CR LF; a CR alone leaves the frame open until the
    # next `$` interrupts it
    out = feed_all(b"$HBT,2*40\r" + encode("HBT", 3))
    assert isinstance(out[0], BadFrame) and out[0].reason is BadReason.INTERRUPTED
    assert out[1] == Frame("HBT", 3, (), encode("HBT", 3))


def test_garbage_before_within_and_after_frames() -> None:
    card = encode("CARD", 1, "QH")
    out = feed_all(b"noise" + card + b"$CA\x00RD" + encode("HBT", 2) + b"tail\n")
    kinds = [(x.reason if isinstance(x, BadFrame) else x.type) for x in out]
    assert kinds == [BadReason.GARBAGE, "CARD", BadReason.INTERRUPTED, "HBT", BadReason.GARBAGE]
    assert isinstance(out[0], BadFrame) and out[0].raw == b"noise"
    assert isinstance(out[2], BadFrame) and out[2].raw == b"$CA\x00RD"


def test_stray_line_ending_between_frames_is_garbage() -> None:
    out = feed_all(encode("HBT", 2) + b"\r\n" + encode("HBT", 3))
    assert [type(x) for x in out] == [Frame, BadFrame, Frame]


def test_long_garbage_is_reported_in_bounded_pieces() -> None:
    out = feed_all(b"z" * 1000)
    assert all(isinstance(x, BadFrame) and x.reason is BadReason.GARBAGE for x in out)
    assert len(out) == 1000 // MAX_FRAME
    assert all(len(x.raw) <= 2 * MAX_FRAME for x in out)


def test_too_long_frame_swallows_its_line_then_resynchronises() -> None:
    out = feed_all(b"$" + b"A" * 200 + b"\r\n" + encode("COVR", 4))
    assert [type(x) for x in out] == [BadFrame, Frame]
    assert isinstance(out[0], BadFrame) and out[0].reason is BadReason.TOO_LONG


def test_frames_split_across_feeds_byte_by_byte() -> None:
    data = encode("CARD", 1, "QH") + encode("COVR", 2)
    decoder = FrameDecoder()
    out = [item for byte in data for item in decoder.feed(bytes([byte]))]
    assert [x.type for x in out if isinstance(x, Frame)] == ["CARD", "COVR"]
    assert len(out) == 2


def test_feed_refuses_non_bytes_with_its_own_error() -> None:
    with pytest.raises(ShoeProtocolError):
        FrameDecoder().feed("$HBT,2*40\r\n")  # type: ignore[arg-type]


def test_parse_frame_reports_over_long_input() -> None:
    bad = parse_frame(b"$" + b"A" * 100 + b"\r\n")
    assert isinstance(bad, BadFrame) and bad.reason is BadReason.TOO_LONG


# -- sequence rules -------------------------------------------------------------------------


def frame(ftype: str, seq: int, *fields: str) -> Frame:
    result = feed_all(encode(ftype, seq, *fields))[0]
    assert isinstance(result, Frame)
    return result


def test_distance_is_modulo_10000() -> None:
    assert seq_distance(0, 9999) == 1
    assert seq_distance(9999, 0) == 9999
    assert seq_distance(5000, 0) == 5000
    assert seq_distance(5001, 0) == 5001


def test_helo_starts_a_session_and_sequence_wraps_after_9999() -> None:
    tracker = SequenceTracker()
    first = tracker.classify(frame("HELO", 9998, "REF-SHOE", "1.0"))
    assert first.verdict is Verdict.ACCEPT and first.new_session
    assert tracker.expected == 9999
    assert tracker.classify(frame("CARD", 9999, "QH")).verdict is Verdict.ACCEPT
    assert tracker.expected == 0
    assert tracker.classify(frame("CARD", 0, "TD")).verdict is Verdict.ACCEPT
    assert tracker.expected == 1
    # the frame before the wrap is now a repeat
    assert tracker.classify(frame("CARD", 9999, "QH")).verdict is Verdict.REPEAT


@pytest.mark.parametrize(
    ("expected", "seq", "verdict"),
    [
        (0, 0, Verdict.ACCEPT),
        (0, 1, Verdict.GAP),
        (0, 5000, Verdict.GAP),  # d = 5000: still a gap
        (0, 5001, Verdict.REPEAT),  # d = 5001: a repeat
        (0, 9999, Verdict.REPEAT),
        (9000, 4000, Verdict.GAP),  # d = 5000 across the wrap
        (9000, 4001, Verdict.REPEAT),  # d = 5001 across the wrap
        (9999, 0, Verdict.GAP),
        (5000, 0, Verdict.GAP),  # d = 5000
        (5000, 9999, Verdict.GAP),
        (5000, 4999, Verdict.REPEAT),
    ],
)
def test_gap_and_repeat_windows(expected: int, seq: int, verdict: Verdict) -> None:
    tracker = SequenceTracker(expected)
    decision = tracker.classify(frame("HBT", seq))
    assert decision.verdict is verdict
    assert tracker.expected == ((expected + 1) % 10000 if verdict is Verdict.ACCEPT else expected)


def test_gap_is_nakked_once_then_recovered() -> None:
    tracker = SequenceTracker(10)
    first = tracker.classify(frame("CARD", 12, "QH"))
    assert first.verdict is Verdict.GAP and first.nak == 10
    second = tracker.classify(frame("HBT", 13))
    assert second.verdict is Verdict.GAP and second.nak is None  # once per gap
    assert tracker.classify(frame("CARD", 10, "TD")).verdict is Verdict.ACCEPT
    assert tracker.classify(frame("CARD", 11, "2S")).verdict is Verdict.ACCEPT
    # a new gap at a new expected SEQ is NAKed again
    assert tracker.classify(frame("HBT", 14)).nak == 12


def test_a_resend_round_ends_the_gap_so_a_second_loss_is_nakked() -> None:
    tracker = SequenceTracker(10)
    assert tracker.classify(frame("HBT", 11)).nak == 10
    assert tracker.classify(frame("HBT", 9)).verdict is Verdict.REPEAT  # the shoe resends
    assert tracker.classify(frame("HBT", 11)).nak == 10


def test_frames_before_any_session_are_refused_without_nak() -> None:
    tracker = SequenceTracker()
    decision = tracker.classify(frame("CARD", 5, "QH"))
    assert decision.verdict is Verdict.NO_SESSION and decision.nak is None
    assert tracker.nak_for_bad_frame() is None
    tracker.classify(frame("HELO", 20, "REF-SHOE", "1.0"))
    assert tracker.nak_for_bad_frame() == 21


def test_unknown_type_is_accepted_and_flagged() -> None:
    tracker = SequenceTracker(3)
    decision = tracker.classify(frame("TEMP", 3, "41C"))
    assert decision.verdict is Verdict.ACCEPT and decision.unknown
    assert tracker.expected == 4


def test_ack_and_nak_from_the_shoe_are_wrong_direction() -> None:
    tracker = SequenceTracker(3)
    assert tracker.classify(frame("ACK", 3)).verdict is Verdict.WRONG_DIRECTION
    assert tracker.expected == 3


def session(tracker: SequenceTracker, *frames: Frame) -> list[Verdict]:
    return [tracker.classify(f).verdict for f in frames]


HELO0 = "HELO", 0, "REF-SHOE", "1.0"


def test_power_up_with_the_same_helo_is_proved_by_the_first_different_frame() -> None:
    tracker = SequenceTracker()
    session(tracker, frame(*HELO0), *(frame("HBT", s) for s in range(1, 40)))
    assert tracker.expected == 40
    # the shoe powers up and starts again at 0 with the very same HELO bytes
    assert tracker.classify(frame(*HELO0)).verdict is Verdict.HELD
    assert tracker.holding and tracker.nak_for_bad_frame() is None
    assert tracker.classify(frame("HBT", 1)).verdict is Verdict.HELD  # same bytes as before
    proof = tracker.classify(frame("CARD", 2, "QH"))  # we accepted HBT 2 here: a power-up
    assert proof.verdict is Verdict.ACCEPT and proof.new_session
    assert proof.frame.type == "HELO" and proof.nak == 1  # the shoe resends HBT 1, CARD 2
    assert not tracker.holding and tracker.expected == 1
    assert session(tracker, frame("HBT", 1), frame("CARD", 2, "QH")) == [Verdict.ACCEPT] * 2


def test_resent_helo_and_followers_are_not_accepted_twice() -> None:
    tracker = SequenceTracker()
    sent = [frame(*HELO0), frame("CARD", 1, "QH"), frame("CARD", 2, "TD")]
    assert session(tracker, *sent) == [Verdict.ACCEPT] * 3
    # every ACK was lost: the shoe resends all it holds, HELO first
    assert session(tracker, *sent) == [Verdict.HELD] * 3
    # then it goes on with new frames: it was a resend; the session continues
    assert tracker.classify(frame("HBT", 3)).verdict is Verdict.ACCEPT
    assert not tracker.holding and tracker.expected == 4


def test_held_helo_is_released_when_the_shoe_stops_resending_it() -> None:
    tracker = SequenceTracker()
    session(tracker, frame(*HELO0), frame("CARD", 1, "QH"), frame("CARD", 2, "TD"))
    assert tracker.classify(frame(*HELO0), 10.0).verdict is Verdict.HELD
    # our ACKs reached the shoe after all: it resends only CARD 2, every 500 ms
    assert tracker.classify(frame("CARD", 2, "TD"), 10.5).verdict is Verdict.HELD
    assert tracker.classify(frame("CARD", 2, "TD"), 11.0).verdict is Verdict.HELD
    assert tracker.holding
    # 2 s without the HELO: a powered-up shoe would still be resending it
    assert tracker.classify(frame("CARD", 2, "TD"), 12.5).verdict is Verdict.REPEAT
    assert not tracker.holding
    assert tracker.classify(frame("HBT", 3), 12.6).verdict is Verdict.ACCEPT


def test_a_lost_frame_in_a_held_round_waits_for_the_next_round() -> None:
    tracker = SequenceTracker()
    session(tracker, frame(*HELO0), frame("CARD", 1, "QH"), frame("CARD", 2, "TD"))
    # HELO, (CARD 1 lost), CARD 2, HBT 3: no conclusion, nothing accepted
    assert session(tracker, frame(*HELO0), frame("CARD", 2, "TD"), frame("HBT", 3)) == [
        Verdict.HELD
    ] * 3
    # the next full round decides: a resend
    assert session(tracker, frame(*HELO0), frame("CARD", 1, "QH"), frame("CARD", 2, "TD")) == [
        Verdict.HELD
    ] * 3
    assert tracker.classify(frame("HBT", 3)).verdict is Verdict.ACCEPT


def test_a_late_identical_frame_proves_nothing() -> None:
    tracker = SequenceTracker()
    for t, f in enumerate([frame(*HELO0), *(frame("HBT", s) for s in range(1, 4))]):
        tracker.classify(f, float(t))
    assert tracker.classify(frame(*HELO0), 100.0).verdict is Verdict.HELD
    # a second later: a live heartbeat of a powered-up shoe, or the next resend round
    assert tracker.classify(frame("HBT", 1), 101.0).verdict is Verdict.HELD
    assert tracker.classify(frame("HBT", 2), 101.001).verdict is Verdict.HELD
    assert tracker.holding  # the comparison restarts with the next round from the HELO
    burst = [frame(*HELO0), *(frame("HBT", s) for s in range(1, 4))]
    assert [tracker.classify(f, 101.5).verdict for f in burst] == [Verdict.HELD] * 4
    assert tracker.classify(frame("HBT", 4), 101.5).verdict is Verdict.ACCEPT


def test_held_helo_followed_in_a_burst_is_a_resend() -> None:
    tracker = SequenceTracker()
    for t, f in enumerate([frame(*HELO0), *(frame("HBT", s) for s in range(1, 5))]):
        tracker.classify(f, float(t))
    burst = [frame(*HELO0), *(frame("HBT", s) for s in range(1, 5))]
    verdicts = [tracker.classify(f, 100.0 + i * 0.002).verdict for i, f in enumerate(burst)]
    assert verdicts == [Verdict.HELD] * 5
    assert tracker.classify(frame("HBT", 5), 101.0).verdict is Verdict.ACCEPT


def test_a_repeat_unlike_what_was_accepted_is_a_conflict_and_stops_acks() -> None:
    tracker = SequenceTracker()
    session(tracker, frame(*HELO0), frame("CARD", 1, "QH"), frame("CARD", 2, "TD"))
    # the shoe powered up and its HELO was lost: CARD 1 is not the CARD 1 we accepted
    decision = tracker.classify(frame("CARD", 1, "9S"))
    assert decision.verdict is Verdict.CONFLICT and tracker.holding
    assert tracker.classify(frame("CARD", 3, "AS")).verdict is Verdict.HELD  # not even d = 0
    assert tracker.nak_for_bad_frame() is None
    # its silence resend starts again from the HELO: held, then proved a power-up
    assert tracker.classify(frame(*HELO0)).verdict is Verdict.HELD
    proof = tracker.classify(frame("CARD", 1, "9S"))
    assert proof.new_session and proof.nak == 1 and tracker.expected == 1


def test_an_identical_repeat_is_a_plain_repeat() -> None:
    tracker = SequenceTracker()
    session(tracker, frame(*HELO0), frame("CARD", 1, "QH"), frame("CARD", 2, "TD"))
    assert tracker.classify(frame("CARD", 1, "QH")).verdict is Verdict.REPEAT
    assert not tracker.holding


@pytest.mark.parametrize(
    "helo",
    [("HELO", 0, "REF-SHOE", "2.0"), ("HELO", 7, "REF-SHOE", "1.0"), ("HELO", 3, "X", "1")],
)
def test_a_helo_that_cannot_be_a_resend_starts_a_session_at_once(
    helo: tuple[str, int, str, str],
) -> None:
    tracker = SequenceTracker()
    session(tracker, frame(*HELO0), frame("CARD", 1, "QH"), frame("CARD", 2, "QH"))
    decision = tracker.classify(frame(*helo))  # other bytes, or d in 0..5000
    assert decision.verdict is Verdict.ACCEPT and decision.new_session and decision.nak is None
    assert tracker.expected == helo[1] + 1


def test_a_different_helo_while_holding_starts_that_session() -> None:
    tracker = SequenceTracker()
    session(tracker, frame(*HELO0), frame("CARD", 1, "QH"), frame(*HELO0))
    decision = tracker.classify(frame("HELO", 0, "REF-SHOE", "1.1"))
    assert decision.new_session and decision.frame.fields == ("REF-SHOE", "1.1")
    assert tracker.expected == 1 and not tracker.holding


def test_tracker_refuses_an_out_of_range_start() -> None:
    with pytest.raises(ShoeProtocolError):
        SequenceTracker(10000)
    with pytest.raises(ShoeProtocolError):
        SequenceTracker(3).rewind(-1)


# -- fuzzing --------------------------------------------------------------------------------

shoe_frames = st.one_of(
    st.builds(lambda s, c: encode("CARD", s, c), st.integers(0, 9999),
              st.sampled_from(["AS", "TD", "QH", "9C", "KD"])),
    st.builds(lambda s: encode("HBT", s), st.integers(0, 9999)),
    st.builds(lambda s: encode("COVR", s), st.integers(0, 9999)),
    st.builds(lambda s, m: encode("HELO", s, m, "1.0"), st.integers(0, 9999),
              st.text("ABCXYZ-", min_size=1, max_size=10)),
    st.builds(lambda s, c: encode("FLT", s, c), st.integers(0, 9999),
              st.sampled_from(["JAM", "UNREAD", "DOOR", "CLR"])),
)
# garbage biased towards the framing bytes so that it interacts with the decoder's states
garbage = st.binary(max_size=120) | st.lists(
    st.sampled_from([b"$", b"*", b",", b"\r", b"\n", b"HBT", b"1", b"3C", b"\x00", b"\xff"]),
    max_size=40,
).map(b"".join)


def decoded_frames(data: bytes, chunks: list[int]) -> list[bytes]:
    decoder = FrameDecoder()
    out: list[Frame | BadFrame] = []
    pos = 0
    for size in chunks:
        out += decoder.feed(data[pos:pos + size])
        pos += size
    out += decoder.feed(data[pos:])
    return [x.raw for x in out if isinstance(x, Frame)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(garbage, shoe_frames), max_size=8),
    garbage,
    st.lists(st.integers(1, 30), max_size=20),
)
def test_fuzz_every_valid_frame_survives_garbage_in_order(
    pairs: list[tuple[bytes, bytes]], tail: bytes, chunks: list[int]
) -> None:
    # garbage that happens to contain a whole valid frame of its own is not garbage
    junk = [g for g, _ in pairs] + [tail]
    assume(not any(isinstance(x, Frame) for g in junk for x in FrameDecoder().feed(g)))
    data = b"".join(g + f for g, f in pairs) + tail
    assert decoded_frames(data, chunks) == [f for _, f in pairs]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400), st.lists(st.integers(1, 50), max_size=10))
def test_fuzz_decoder_never_raises_and_bounds_what_it_keeps(
    data: bytes, chunks: list[int]
) -> None:
    decoder = FrameDecoder()
    pos = 0
    for size in [*chunks, len(data)]:
        for item in decoder.feed(data[pos:pos + size]):
            assert len(item.raw) <= 2 * MAX_FRAME
            if isinstance(item, Frame):
                assert len(item.raw) <= MAX_FRAME
        pos += size


def test_a_known_session_holds_its_resent_helo_and_matches_the_followers() -> None:
    """A restarted controller's tracker given the journaled session (docs/shoe-protocol.md)."""
    from drivers.shoe_protocol import SequenceTracker, Verdict, encode, parse_frame

    helo, c1, c2 = encode("HELO", 0, "S", "1"), encode("CARD", 1, "QH"), encode("CARD", 2, "2S")
    tracker = SequenceTracker(3, [helo, c1, c2])
    verdicts = [tracker.classify(parse_frame(raw), 0.0).verdict  # type: ignore[arg-type]
                for raw in (helo, c1, c2)]
    assert verdicts == [Verdict.HELD] * 3  # a resend round: nothing delivered again
    after = tracker.classify(parse_frame(encode("CARD", 3, "5D")), 0.1)  # type: ignore[arg-type]
    assert after.verdict is Verdict.ACCEPT and not after.new_session

    powered_up = SequenceTracker(3, [helo, c1, c2])
    powered_up.classify(parse_frame(helo), 0.0)  # type: ignore[arg-type]
    new = powered_up.classify(parse_frame(encode("CARD", 1, "9C")), 0.0)  # type: ignore[arg-type]
    assert new.verdict is Verdict.ACCEPT and new.new_session and new.nak == 1

    with pytest.raises(ShoeProtocolError):
        SequenceTracker(None, [helo])
    with pytest.raises(ShoeProtocolError):
        SequenceTracker(3, [c1, helo])
