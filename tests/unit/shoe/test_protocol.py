"""Reference shoe protocol, revision 3: encoding, streaming decoding, session ids and the
receiver's sequence rules."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from drivers.errors import DriverError
from drivers.shoe_protocol import (
    MAX_FRAME,
    REVISION,
    BadFrame,
    BadReason,
    Frame,
    FrameDecoder,
    SequenceTracker,
    SessionPosition,
    ShoeProtocolError,
    Verdict,
    check_sid,
    checksum,
    encode,
    helo_revision,
    is_sid,
    parse_frame,
    seq_distance,
)

SID = "1A2B3C4D"
OTHER = "9F00E1C2"


def body_frame(body: str, hh: str | None = None, end: bytes = b"\r\n") -> bytes:
    """A frame with ``body`` between `$` and `*`, the right checksum unless ``hh`` is given."""
    raw = body.encode("ascii")
    return b"$" + raw + b"*" + (hh or f"{checksum(raw):02X}").encode() + end


def feed_all(data: bytes) -> list[Frame | BadFrame]:
    return FrameDecoder().feed(data)


# -- encoding -------------------------------------------------------------------------------


def test_design_examples_encode_byte_for_byte() -> None:
    """docs/design.md "Reference shoe protocol, revision 3": its examples, checksums included."""
    helo = b"$HELO,0,1A2B3C4D,REF-SHOE,2.0,3*60\r\n"
    assert encode("HELO", 0, SID, "REF-SHOE", "2.0", "3") == helo
    assert encode("CARD", 1, SID, "QH") == b"$CARD,1,1A2B3C4D,QH*10\r\n"
    assert encode("ACK", 1, SID) == b"$ACK,1,1A2B3C4D*78\r\n"
    assert encode("HBT", 1, SID) == b"$HBT,1,1A2B3C4D*6F\r\n"


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
        ("FLT", 6, ("FULL",)),
        ("FLT", 7, ("CLR",)),
        ("ACK", 42, ()),
        ("NAK", 0, ()),
        ("XTRA", 7, ("any", "thing here")),
    ],
)
def test_every_frame_type_round_trips(ftype: str, seq: int, fields: tuple[str, ...]) -> None:
    raw = encode(ftype, seq, SID, *fields)
    (frame,) = feed_all(raw)
    assert frame == Frame(ftype, seq, SID, fields, raw)
    assert frame.known is (ftype != "XTRA")


@pytest.mark.parametrize(
    ("ftype", "seq", "sid", "fields"),
    [
        ("card", 1, SID, ("QH",)),  # type must be upper case
        ("CARD", 10000, SID, ("QH",)),
        ("CARD", -1, SID, ("QH",)),
        ("CARD", 1, SID, ("QX",)),  # suit
        ("CARD", 1, SID, ("1H",)),  # rank (ten is T)
        ("CARD", 1, SID, ("qh",)),
        ("CARD", 1, SID, ()),
        ("HELO", 0, SID, ("REF-SHOE",)),
        ("HELO", 0, SID, ("", "1.0")),
        ("FLT", 1, SID, ("jam",)),
        ("HBT", 1, SID, ("extra",)),
        ("XTRA", 1, SID, ("a*b",)),
        ("XTRA", 1, SID, ("a$b",)),
        ("XTRA", 1, SID, ("x" * 80,)),  # over 80 bytes
        ("HBT", 1, "00000000", ()),  # never a session id
        ("HBT", 1, "1a2b3c4d", ()),  # lower-case hex
        ("HBT", 1, "1A2B3C4", ()),  # 7 digits
        ("HBT", 1, "1A2B3C4D5", ()),  # 9 digits
        ("HBT", 1, "1A2B3C4G", ()),
        ("HBT", 1, "", ()),
    ],
)
def test_encode_refuses_what_the_protocol_cannot_carry(
    ftype: str, seq: int, sid: str, fields: tuple[str, ...]
) -> None:
    with pytest.raises(ShoeProtocolError):
        encode(ftype, seq, sid, *fields)


def test_session_ids() -> None:
    assert is_sid(SID) and is_sid("00000001") and is_sid("FFFFFFFF")
    for bad in (
        "00000000",
        "abcdef01",
        "ABCDEF0",
        "ABCDEF012",
        "ABCDEFG1",
        " ABCDEF0",
        12345678,
        None,
    ):
        assert not is_sid(bad), bad
    assert check_sid(SID) == SID
    with pytest.raises(ShoeProtocolError):
        check_sid("00000000")
    with pytest.raises(ShoeProtocolError):
        SessionPosition("00000000", 1)
    with pytest.raises(ShoeProtocolError):
        SessionPosition(SID, 10000)


def test_protocol_error_is_a_driver_error_and_a_value_error() -> None:
    assert issubclass(ShoeProtocolError, DriverError)
    assert issubclass(ShoeProtocolError, ValueError)


def test_frame_of_exactly_80_bytes_is_accepted_81_is_not() -> None:
    # "$XTRA,1,1A2B3C4D," + field + "*HH\r\n" = 17 + n + 5 bytes
    exact = encode("XTRA", 1, SID, "x" * (MAX_FRAME - 22))
    assert len(exact) == MAX_FRAME
    assert isinstance(feed_all(exact)[0], Frame)
    over = body_frame(f"XTRA,1,{SID}," + "x" * (MAX_FRAME - 21))
    assert len(over) == MAX_FRAME + 1
    out = feed_all(over + encode("HBT", 2, SID))
    assert [type(x) for x in out] == [BadFrame, Frame]
    assert isinstance(out[0], BadFrame) and out[0].reason is BadReason.TOO_LONG
    assert out[1] == Frame("HBT", 2, SID, (), encode("HBT", 2, SID))


# -- malformed input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (body_frame(f"CARD,1,{SID},QH", hh="11"), BadReason.CHECKSUM_MISMATCH),
        (body_frame(f"CARD,1,{SID},QH", hh="1a"), BadReason.BAD_CHECKSUM_FORMAT),
        (body_frame(f"HBT,2,{SID}", hh="G0"), BadReason.BAD_CHECKSUM_FORMAT),
        (f"$CARD,1,{SID},QH10\r\n".encode(), BadReason.BAD_TERMINATOR),  # missing `*`
        (f"$CARD,1,{SID},QH*1\r\n".encode(), BadReason.BAD_TERMINATOR),  # one hex digit
        (f"$CARD,1,{SID},QH\r\n".encode(), BadReason.BAD_TERMINATOR),
        (f"$CARD,1,{SID},QH*10\n".encode(), BadReason.BAD_TERMINATOR),  # LF without CR
        (f"$CARD,1,{SID},QH*10 \r\n".encode(), BadReason.BAD_TERMINATOR),
        (body_frame(f"CARD,X1,{SID},QH"), BadReason.BAD_SEQ),  # non-numeric SEQ
        (body_frame(f"CARD,,{SID},QH"), BadReason.BAD_SEQ),
        (body_frame(f"CARD,10000,{SID},QH"), BadReason.BAD_SEQ),  # SEQ > 9999
        (body_frame(f"CARD,-1,{SID},QH"), BadReason.BAD_SEQ),
        (body_frame("CARD"), BadReason.BAD_SEQ),
        (body_frame("CARD,1,QH"), BadReason.BAD_SID),  # a revision 1 frame: no SID
        (body_frame("HBT,2"), BadReason.BAD_SID),
        (body_frame("HBT,2,00000000"), BadReason.BAD_SID),
        (body_frame("HBT,2,1a2b3c4d"), BadReason.BAD_SID),
        (body_frame("HBT,2,1A2B3C4"), BadReason.BAD_SID),
        (body_frame("HBT,2,1A2B3C4DE"), BadReason.BAD_SID),
        (body_frame("HBT,2,"), BadReason.BAD_SID),
        (body_frame("HELO,0,REF-SHOE,2.0"), BadReason.BAD_SID),
        (body_frame(f"card,1,{SID},QH"), BadReason.BAD_TYPE),
        (body_frame(f",1,{SID}"), BadReason.BAD_TYPE),
        (body_frame(f"CARD,1,{SID},QX"), BadReason.BAD_FIELDS),
        (body_frame(f"CARD,1,{SID},QH,QS"), BadReason.BAD_FIELDS),
        (body_frame(f"CARD,1,{SID}"), BadReason.BAD_FIELDS),
        (body_frame(f"HELO,0,{SID},REF-SHOE"), BadReason.BAD_FIELDS),
        (body_frame(f"HBT,2,{SID},x"), BadReason.BAD_FIELDS),
        (body_frame(f"FLT,2,{SID},jam"), BadReason.BAD_FIELDS),
        (body_frame(f"XTRA,2,{SID},a\tb"), BadReason.BAD_FIELDS),  # control character
    ],
)
def test_malformed_frames_are_refused_with_a_reason(raw: bytes, reason: BadReason) -> None:
    out = feed_all(raw)
    assert len(out) == 1
    assert isinstance(out[0], BadFrame)
    assert out[0].reason is reason
    assert out[0].raw == raw


def test_non_ascii_byte_with_matching_checksum_is_refused() -> None:
    body = f"XTRA,1,{SID},".encode() + b"\xe9"
    raw = b"$" + body + b"*%02X\r\n" % checksum(body)
    (bad,) = feed_all(raw)
    assert isinstance(bad, BadFrame) and bad.reason is BadReason.BAD_FIELDS


def test_cr_only_ending_is_refused_when_the_next_frame_starts() -> None:
    # documented reading: a frame ends with CR LF; a CR alone leaves the frame open until the
    # next `$` interrupts it
    out = feed_all(encode("HBT", 2, SID)[:-1] + encode("HBT", 3, SID))
    assert isinstance(out[0], BadFrame) and out[0].reason is BadReason.INTERRUPTED
    assert out[1] == Frame("HBT", 3, SID, (), encode("HBT", 3, SID))


def test_garbage_before_within_and_after_frames() -> None:
    card = encode("CARD", 1, SID, "QH")
    out = feed_all(b"noise" + card + b"$CA\x00RD" + encode("HBT", 2, SID) + b"tail\n")
    kinds = [(x.reason if isinstance(x, BadFrame) else x.type) for x in out]
    assert kinds == [BadReason.GARBAGE, "CARD", BadReason.INTERRUPTED, "HBT", BadReason.GARBAGE]
    assert isinstance(out[0], BadFrame) and out[0].raw == b"noise"
    assert isinstance(out[2], BadFrame) and out[2].raw == b"$CA\x00RD"


def test_stray_line_ending_between_frames_is_garbage() -> None:
    out = feed_all(encode("HBT", 2, SID) + b"\r\n" + encode("HBT", 3, SID))
    assert [type(x) for x in out] == [Frame, BadFrame, Frame]


def test_long_garbage_is_reported_in_bounded_pieces() -> None:
    out = feed_all(b"z" * 1000)
    assert all(isinstance(x, BadFrame) and x.reason is BadReason.GARBAGE for x in out)
    assert len(out) == 1000 // MAX_FRAME
    assert all(len(x.raw) <= 2 * MAX_FRAME for x in out)


def test_too_long_frame_swallows_its_line_then_resynchronises() -> None:
    out = feed_all(b"$" + b"A" * 200 + b"\r\n" + encode("COVR", 4, SID))
    assert [type(x) for x in out] == [BadFrame, Frame]
    assert isinstance(out[0], BadFrame) and out[0].reason is BadReason.TOO_LONG


def test_frames_split_across_feeds_byte_by_byte() -> None:
    data = encode("CARD", 1, SID, "QH") + encode("COVR", 2, SID)
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


# -- sequence and session rules ---------------------------------------------------------------


def frame(ftype: str, seq: int, *fields: str, sid: str = SID) -> Frame:
    result = feed_all(encode(ftype, seq, sid, *fields))[0]
    assert isinstance(result, Frame)
    return result


def at(seq: int, sid: str = SID) -> SequenceTracker:
    """A tracker resumed in session ``sid`` expecting ``seq`` (a restarted controller)."""
    return SequenceTracker(SessionPosition(sid, seq))


def test_distance_is_modulo_10000() -> None:
    assert seq_distance(0, 9999) == 1
    assert seq_distance(9999, 0) == 9999
    assert seq_distance(5000, 0) == 5000
    assert seq_distance(5001, 0) == 5001


def test_helo_starts_a_session_and_sequence_wraps_after_9999() -> None:
    tracker = SequenceTracker()
    first = tracker.classify(frame("HELO", 9998, "REF-SHOE", "1.0", "3"))
    assert first.verdict is Verdict.ACCEPT and first.new_session and first.previous is None
    assert tracker.expected == 9999 and tracker.sid == SID
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
    tracker = at(expected)
    decision = tracker.classify(frame("COVR", seq))
    assert decision.verdict is verdict
    assert tracker.expected == ((expected + 1) % 10000 if verdict is Verdict.ACCEPT else expected)


def test_gap_is_nakked_once_then_recovered() -> None:
    tracker = at(10)
    first = tracker.classify(frame("CARD", 12, "QH"))
    assert first.verdict is Verdict.GAP and first.nak == 10
    second = tracker.classify(frame("COVR", 13))
    assert second.verdict is Verdict.GAP and second.nak is None  # once per gap
    assert tracker.classify(frame("CARD", 10, "TD")).verdict is Verdict.ACCEPT
    assert tracker.classify(frame("CARD", 11, "2S")).verdict is Verdict.ACCEPT
    # a new gap at a new expected SEQ is NAKed again
    assert tracker.classify(frame("COVR", 14)).nak == 12


def test_a_resend_round_ends_the_gap_so_a_second_loss_is_nakked() -> None:
    tracker = at(10)
    assert tracker.classify(frame("COVR", 11)).nak == 10
    assert tracker.classify(frame("COVR", 9)).verdict is Verdict.REPEAT  # the shoe resends
    assert tracker.classify(frame("COVR", 11)).nak == 10


def test_frames_before_any_session_are_refused_without_nak() -> None:
    tracker = SequenceTracker()
    decision = tracker.classify(frame("CARD", 5, "QH"))
    assert decision.verdict is Verdict.NO_SESSION and decision.nak is None
    assert tracker.nak_for_bad_frame() is None
    tracker.classify(frame("HELO", 20, "REF-SHOE", "1.0", "3"))
    assert tracker.nak_for_bad_frame() == SessionPosition(SID, 21)


def test_unknown_type_is_accepted_and_flagged() -> None:
    tracker = at(3)
    decision = tracker.classify(frame("TEMP", 3, "41C"))
    assert decision.verdict is Verdict.ACCEPT and decision.unknown
    assert tracker.expected == 4


def test_ack_and_nak_from_the_shoe_are_wrong_direction() -> None:
    tracker = at(3)
    assert tracker.classify(frame("ACK", 3)).verdict is Verdict.WRONG_DIRECTION
    assert tracker.classify(frame("NAK", 3)).verdict is Verdict.WRONG_DIRECTION
    assert tracker.expected == 3


def test_frames_of_another_session_are_foreign_whatever_their_seq() -> None:
    """docs/design.md: a frame of any other SID, other than a $HELO, is discarded without a reply,
    even at exactly the SEQ the current session expects (revision 1 took that one)."""
    tracker = at(7)
    for seq in (7, 8, 6, 0, 9999):
        decision = tracker.classify(frame("CARD", seq, "QH", sid=OTHER))
        assert decision.verdict is Verdict.FOREIGN and decision.nak is None
    assert tracker.expected == 7 and tracker.sid == SID
    assert tracker.classify(frame("CARD", 7, "QH")).verdict is Verdict.ACCEPT


def test_a_helo_of_a_new_sid_starts_its_session_and_names_the_old_one() -> None:
    tracker = at(40)
    decision = tracker.classify(frame("HELO", 0, "REF-SHOE", "2.0", "3", sid=OTHER))
    assert decision.verdict is Verdict.ACCEPT and decision.new_session
    assert decision.previous == SessionPosition(SID, 40)
    assert tracker.position == SessionPosition(OTHER, 1)
    # the old session's frames are foreign now
    assert tracker.classify(frame("CARD", 40, "QH")).verdict is Verdict.FOREIGN


def test_the_current_sessions_helo_is_a_repeat() -> None:
    """Resent after lost ACKs or after the controller restarted before acknowledging it: the
    same SID, so never a second session (revision 1 held it and guessed)."""
    tracker = SequenceTracker()
    helo = frame("HELO", 0, "REF-SHOE", "2.0", "3")
    assert tracker.classify(helo).new_session
    assert tracker.classify(frame("CARD", 1, "QH")).verdict is Verdict.ACCEPT
    again = tracker.classify(helo)
    assert again.verdict is Verdict.REPEAT and not again.new_session
    assert tracker.expected == 2
    assert tracker.classify(frame("CARD", 1, "QH")).verdict is Verdict.REPEAT
    assert tracker.classify(frame("CARD", 2, "TD")).verdict is Verdict.ACCEPT


def test_a_power_up_at_the_same_seq_and_bytes_but_a_new_sid_is_a_new_session() -> None:
    """Revision 1's ambiguity: a shoe that powers up sends `$HELO,0` with the same model and
    firmware. Revision 2 tells the power-ups apart by their SID alone."""
    tracker = SequenceTracker()
    for f in (frame("HELO", 0, "REF-SHOE", "2.0", "3"), *(frame("COVR", s) for s in range(1, 40))):
        tracker.classify(f)
    decision = tracker.classify(frame("HELO", 0, "REF-SHOE", "2.0", "3", sid=OTHER))
    assert decision.new_session and decision.previous == SessionPosition(SID, 40)
    assert tracker.classify(frame("COVR", 1, sid=OTHER)).verdict is Verdict.ACCEPT


def test_a_resumed_controller_names_its_session_and_steps_over_a_helo_at_expected() -> None:
    tracker = at(5)
    assert tracker.nak_for_bad_frame() == SessionPosition(SID, 5)
    assert tracker.classify(frame("HELO", 0, "REF-SHOE", "2.0", "3")).verdict is Verdict.REPEAT
    assert tracker.expected == 5
    # a shoe that sends its HELO again in the middle of its session, at the SEQ expected: the
    # session's next frame (journaled and acknowledged as any: SEQs stay contiguous), never a
    # new session, never a stall
    mid = tracker.classify(frame("HELO", 5, "REF-SHOE", "2.0", "3"))
    assert mid.verdict is Verdict.ACCEPT and not mid.new_session
    assert tracker.expected == 6


def test_rewind_expects_the_frame_again() -> None:
    tracker = at(3)
    tracker.classify(frame("CARD", 3, "QH"))
    tracker.rewind(3)
    assert tracker.classify(frame("CARD", 3, "QH")).verdict is Verdict.ACCEPT
    with pytest.raises(ShoeProtocolError):
        tracker.rewind(-1)
    with pytest.raises(ShoeProtocolError):
        SequenceTracker().rewind(3)  # no session


# -- fuzzing --------------------------------------------------------------------------------

sids = st.sampled_from([SID, OTHER, "00000001", "FFFFFFFF"])
shoe_frames = st.one_of(
    st.builds(
        lambda s, i, c: encode("CARD", s, i, c),
        st.integers(0, 9999),
        sids,
        st.sampled_from(["AS", "TD", "QH", "9C", "KD"]),
    ),
    st.builds(lambda s, i: encode("HBT", s, i), st.integers(0, 9999), sids),
    st.builds(lambda s, i: encode("COVR", s, i), st.integers(0, 9999), sids),
    st.builds(
        lambda s, i, m, *r: encode("HELO", s, i, m, "1.0", *r),
        st.integers(0, 9999),
        sids,
        st.text("ABCXYZ-", min_size=1, max_size=10),
        st.sampled_from(["3", "3", "2"]),
    ),
    st.builds(
        lambda s, i, m: encode("HELO", s, i, m, "1.0"),  # a revision 2 shoe: names none
        st.integers(0, 9999),
        sids,
        st.text("ABCXYZ-", min_size=1, max_size=10),
    ),
    st.builds(
        lambda s, i, c: encode("FLT", s, i, c),
        st.integers(0, 9999),
        sids,
        st.sampled_from(["JAM", "UNREAD", "DOOR", "FULL", "CLR"]),
    ),
)
# garbage biased towards the framing bytes so that it interacts with the decoder's states
garbage = st.binary(max_size=120) | st.lists(
    st.sampled_from(
        [
            b"$",
            b"*",
            b",",
            b"\r",
            b"\n",
            b"HBT",
            b"1",
            b"3C",
            b"\x00",
            b"\xff",
            b"1A2B3C4D",
            b"00000000",
        ]
    ),
    max_size=40,
).map(b"".join)


def decoded_frames(data: bytes, chunks: list[int]) -> list[bytes]:
    decoder = FrameDecoder()
    out: list[Frame | BadFrame] = []
    pos = 0
    for size in chunks:
        out += decoder.feed(data[pos : pos + size])
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
def test_fuzz_decoder_never_raises_and_bounds_what_it_keeps(data: bytes, chunks: list[int]) -> None:
    decoder = FrameDecoder()
    pos = 0
    for size in [*chunks, len(data)]:
        for item in decoder.feed(data[pos : pos + size]):
            assert len(item.raw) <= 2 * MAX_FRAME
            if isinstance(item, Frame):
                assert len(item.raw) <= MAX_FRAME and is_sid(item.sid)
        pos += size


@settings(max_examples=200, deadline=None)
@given(st.lists(shoe_frames, max_size=30), st.integers(0, 9999))
def test_fuzz_only_the_current_session_is_ever_accepted(frames: list[bytes], start: int) -> None:
    """Whatever arrives, a non-HELO frame is accepted only with the SID of the last HELO
    accepted (or the resumed one), and only at the expected SEQ."""
    tracker = at(start)
    for raw in frames:
        parsed = parse_frame(raw)
        assert isinstance(parsed, Frame)
        sid, expected = tracker.sid, tracker.expected
        decision = tracker.classify(parsed)
        if decision.verdict is Verdict.ACCEPT and not decision.new_session:
            assert parsed.sid == sid and parsed.seq == expected
        if decision.new_session:
            assert parsed.type == "HELO" and parsed.sid != sid
            assert parsed.fields[2:] == ("3",)  # only a shoe that speaks revision 3
        if parsed.type == "HBT":
            assert decision.verdict is not Verdict.ACCEPT and tracker.expected == expected
        if parsed.sid != sid and parsed.type != "HELO":
            assert decision.verdict is Verdict.FOREIGN and tracker.expected == expected


# -- revision 3: heartbeats outside the sequence, the $HELO's revision --------------------------


def test_a_heartbeat_takes_no_seq_and_never_moves_the_sequence() -> None:
    """docs/design.md, revision 3: `$HBT,LAST,SID` names the last frame sent; in step it is
    neither accepted into the sequence nor answered."""
    tracker = at(8)  # frames up to 7 accepted
    for _ in range(3):
        decision = tracker.classify(frame("HBT", 7))
        assert decision.verdict is Verdict.HEARTBEAT and decision.nak is None
    assert tracker.expected == 8
    assert tracker.classify(frame("CARD", 8, "QH")).verdict is Verdict.ACCEPT
    # a LAST behind what was accepted (never sent by a correct shoe) needs no reply either
    assert tracker.classify(frame("HBT", 3)).verdict is Verdict.HEARTBEAT


def test_a_heartbeat_right_after_the_helo_names_the_helo() -> None:
    tracker = SequenceTracker()
    tracker.classify(frame("HELO", 40, "REF-SHOE", "2.0", "3"))
    assert tracker.classify(frame("HBT", 40)).verdict is Verdict.HEARTBEAT
    assert tracker.expected == 41


def test_a_lost_last_card_is_nakked_by_the_next_heartbeat_once_per_gap() -> None:
    tracker = at(7)
    decision = tracker.classify(frame("HBT", 7))  # the shoe sent 7; we expect 7: it was lost
    assert decision.verdict is Verdict.LOST and decision.nak == 7
    assert tracker.classify(frame("HBT", 7)).nak is None  # once per gap
    assert tracker.classify(frame("CARD", 7, "5D")).verdict is Verdict.ACCEPT  # the resend
    assert tracker.classify(frame("HBT", 7)).verdict is Verdict.HEARTBEAT
    # across the wrap: expected 0, LAST 9999 is in step, LAST 0 is a loss
    wrap = at(0)
    assert wrap.classify(frame("HBT", 9999)).verdict is Verdict.HEARTBEAT
    assert wrap.classify(frame("HBT", 0)).nak == 0


@pytest.mark.parametrize(
    ("expected", "last", "verdict"),
    [
        (10, 9, Verdict.HEARTBEAT),
        (10, 10, Verdict.LOST),  # d = 1
        (10, 5009, Verdict.LOST),  # d = 5000
        (10, 5010, Verdict.HEARTBEAT),  # d = 5001: behind, not ahead
        (0, 4999, Verdict.LOST),
        (0, 5000, Verdict.HEARTBEAT),
    ],
)
def test_the_heartbeat_window_is_the_gap_window(expected: int, last: int, verdict: Verdict) -> None:
    assert at(expected).classify(frame("HBT", last)).verdict is verdict


def test_a_heartbeat_naming_a_seq_never_sent_is_nakked_once_and_accepts_nothing() -> None:
    """A shoe that names a SEQ it never sent: one NAK, then silence; the sequence stays."""
    tracker = at(5)
    assert tracker.classify(frame("HBT", 900)).nak == 5
    for _ in range(5):
        decision = tracker.classify(frame("HBT", 900))
        assert decision.verdict is Verdict.LOST and decision.nak is None
    assert tracker.expected == 5
    assert tracker.classify(frame("CARD", 5, "QH")).verdict is Verdict.ACCEPT


def test_heartbeats_of_another_session_or_before_any_are_not_ours() -> None:
    assert at(5).classify(frame("HBT", 4, sid=OTHER)).verdict is Verdict.FOREIGN
    assert SequenceTracker().classify(frame("HBT", 4)).verdict is Verdict.NO_SESSION


@pytest.mark.parametrize("revision", [None, "2", "4", "3.0", "03"])
def test_a_helo_of_another_revision_or_none_is_refused(revision: str | None) -> None:
    extra = () if revision is None else (revision,)
    helo = frame("HELO", 0, "REF-SHOE", "2.0", *extra, sid=OTHER)
    assert helo_revision(helo) == revision
    for tracker in (SequenceTracker(), at(12)):
        before = tracker.position
        decision = tracker.classify(helo)
        assert decision.verdict is Verdict.BAD_REVISION and not decision.new_session
        assert decision.nak is None and tracker.position == before
        # none of its frames is accepted: no session, or another session's
        card = tracker.classify(frame("CARD", 1, "QH", sid=OTHER)).verdict
        assert card in (Verdict.NO_SESSION, Verdict.FOREIGN)


def test_a_helo_of_revision_3_starts_a_session() -> None:
    helo = frame("HELO", 0, "REF-SHOE", "2.0", REVISION)
    assert REVISION == "3" and helo_revision(helo) == "3"
    assert SequenceTracker().classify(helo).new_session
