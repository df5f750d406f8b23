"""Reference shoe protocol (DESIGN.md "Reference shoe protocol"): framing and sequence rules.

Pure: no I/O, no clocks. The serial driver, the simulated shoe and the tests all share it, so
both ends of the link agree byte for byte. Readings of the spec are in docs/shoe-protocol.md.
"""

from __future__ import annotations

import collections
import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass

from drivers.errors import ProtocolError

__all__ = [
    "CARD_RE",
    "FLT_CODES",
    "KNOWN_TYPES",
    "MAX_FRAME",
    "SEQ_MOD",
    "BadFrame",
    "BadReason",
    "Decision",
    "Frame",
    "FrameDecoder",
    "SequenceTracker",
    "ShoeProtocolError",
    "Verdict",
    "checksum",
    "encode",
    "next_seq",
    "parse_frame",
    "seq_distance",
]

SEQ_MOD = 10000  # SEQ is 0-9999 and wraps after 9999
MAX_FRAME = 80  # bytes from `$` through LF
GAP_WINDOW = 5000  # 1 <= d <= 5000 is a gap; any other non-zero d is a repeat
RAW_KEEP = 2 * MAX_FRAME  # bytes of a refused frame kept for the journal

SHOE_TYPES = frozenset({"HELO", "CARD", "COVR", "HBT", "FLT"})
CONTROLLER_TYPES = frozenset({"ACK", "NAK"})
KNOWN_TYPES = SHOE_TYPES | CONTROLLER_TYPES
# Field count per known type; an unknown type may carry any number of fields.
_ARITY = {"HELO": 2, "CARD": 1, "COVR": 0, "HBT": 0, "FLT": 1, "ACK": 0, "NAK": 0}
FLT_CODES = frozenset({"JAM", "UNREAD", "DOOR", "CLR"})

CARD_RE = re.compile(r"[A23456789TJQK][SHDC]")
_TYPE_RE = re.compile(r"[A-Z][A-Z0-9]{0,7}")
_SEQ_RE = re.compile(r"[0-9]{1,4}")
_CODE_RE = re.compile(r"[A-Z][A-Z0-9_]{0,15}")
_HEX_RE = re.compile(rb"[0-9A-F]{2}")
# A field is printable ASCII without the three framing characters.
_FIELD_RE = re.compile(r"[\x20-\x7e]*")
_FRAMING = frozenset("$*,")

_DOLLAR = 0x24
_STAR = 0x2A
_CR = 0x0D
_LF = 0x0A


class ShoeProtocolError(ProtocolError):
    """Bad arguments to the shoe protocol (an unencodable frame, a SEQ out of range)."""


class BadReason(enum.StrEnum):
    """Why received bytes were refused; the value is what the controller journals."""

    TOO_LONG = "too_long"  # more than 80 bytes from `$` without LF
    INTERRUPTED = "interrupted"  # a new `$` arrived before the frame ended
    BAD_TERMINATOR = "bad_terminator"  # the line did not end in `*HH` CR LF
    BAD_CHECKSUM_FORMAT = "bad_checksum_format"  # HH is not two upper-case hex digits
    CHECKSUM_MISMATCH = "checksum_mismatch"
    BAD_TYPE = "bad_type"
    BAD_SEQ = "bad_seq"
    BAD_FIELDS = "bad_fields"  # wrong count or format for a known type, or bad characters
    GARBAGE = "garbage"  # bytes outside any frame


@dataclass(frozen=True, slots=True)
class Frame:
    """A well-formed frame: checksum verified, SEQ in range, fields valid for a known type."""

    type: str
    seq: int
    fields: tuple[str, ...]
    raw: bytes

    @property
    def known(self) -> bool:
        """False for a well-formed frame of a type DESIGN.md does not define."""
        return self.type in KNOWN_TYPES


@dataclass(frozen=True, slots=True)
class BadFrame:
    """Bytes that are not a frame; ``raw`` is capped at RAW_KEEP bytes."""

    reason: BadReason
    raw: bytes
    detail: str = ""


def checksum(body: bytes | str) -> int:
    """NMEA checksum: XOR of every byte between `$` and `*`."""
    if isinstance(body, str):
        try:
            body = body.encode("ascii")
        except UnicodeEncodeError as exc:
            raise ShoeProtocolError(f"frame body is not ASCII: {body!r}") from exc
    value = 0
    for byte in body:
        value ^= byte
    return value


def seq_distance(seq: int, expected: int) -> int:
    """d = (SEQ - expected) mod 10000, the quantity every sequence rule is stated in."""
    return (seq - expected) % SEQ_MOD


def next_seq(seq: int) -> int:
    """The SEQ after ``seq`` (9999 wraps to 0)."""
    return (seq + 1) % SEQ_MOD


def _check_fields(ftype: str, fields: tuple[str, ...]) -> str | None:
    """Return why ``fields`` are invalid for ``ftype``, or None if they are fine."""
    for field in fields:
        if not _FIELD_RE.fullmatch(field) or _FRAMING.intersection(field):
            return f"field {field!r} has a character not allowed in a field"
    arity = _ARITY.get(ftype)
    if arity is None:
        return None  # unknown type: any printable fields (DESIGN.md: accepted, flagged)
    if len(fields) != arity:
        return f"{ftype} takes {arity} field(s), got {len(fields)}"
    if ftype == "CARD" and not CARD_RE.fullmatch(fields[0]):
        return f"card {fields[0]!r} is not rank A23456789TJQK + suit SHDC"
    if ftype == "HELO" and not all(fields):
        return "HELO model and firmware must not be empty"
    if ftype == "FLT" and not _CODE_RE.fullmatch(fields[0]):
        return f"fault code {fields[0]!r} is not an upper-case token"
    return None


def encode(ftype: str, seq: int, *fields: str) -> bytes:
    """Build one frame ``$TYPE,SEQ[,FIELD]*`*HH CR LF``; raises ShoeProtocolError if invalid."""
    if not isinstance(ftype, str) or not _TYPE_RE.fullmatch(ftype):
        raise ShoeProtocolError(f"frame type {ftype!r} is not 1-8 upper-case letters/digits")
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < SEQ_MOD:
        raise ShoeProtocolError(f"SEQ {seq!r} is not an integer 0-9999")
    if not all(isinstance(f, str) for f in fields):
        raise ShoeProtocolError(f"fields must be str: {fields!r}")
    problem = _check_fields(ftype, fields)
    if problem is not None:
        raise ShoeProtocolError(problem)
    body = ",".join((ftype, str(seq), *fields)).encode("ascii")
    frame = b"$%s*%02X\r\n" % (body, checksum(body))
    if len(frame) > MAX_FRAME:
        raise ShoeProtocolError(f"frame is {len(frame)} bytes, the limit is {MAX_FRAME}")
    return frame


def parse_frame(raw: bytes) -> Frame | BadFrame:
    """Parse one complete candidate frame (``$`` through LF, at most 80 bytes)."""
    kept = raw[:RAW_KEEP]
    if len(raw) > MAX_FRAME:
        return BadFrame(BadReason.TOO_LONG, kept, f"{len(raw)} bytes")
    if len(raw) < 6 or raw[0] != _DOLLAR or raw[-2:] != b"\r\n" or raw[-5] != _STAR:
        return BadFrame(BadReason.BAD_TERMINATOR, kept, "expected *HH CR LF at the end")
    body, hh = raw[1:-5], raw[-4:-2]
    if not _HEX_RE.fullmatch(hh):
        return BadFrame(BadReason.BAD_CHECKSUM_FORMAT, kept, f"checksum {hh!r}")
    if int(hh, 16) != checksum(body):
        return BadFrame(
            BadReason.CHECKSUM_MISMATCH, kept, f"sent {hh.decode()}, computed {checksum(body):02X}"
        )
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError:
        return BadFrame(BadReason.BAD_FIELDS, kept, "non-ASCII byte")
    parts = text.split(",")
    if not _TYPE_RE.fullmatch(parts[0]):
        return BadFrame(BadReason.BAD_TYPE, kept, f"type {parts[0]!r}")
    if len(parts) < 2 or not _SEQ_RE.fullmatch(parts[1]):
        return BadFrame(BadReason.BAD_SEQ, kept, "SEQ is not a decimal 0-9999")
    fields = tuple(parts[2:])
    problem = _check_fields(parts[0], fields)
    if problem is not None:
        return BadFrame(BadReason.BAD_FIELDS, kept, problem)
    return Frame(parts[0], int(parts[1]), fields, bytes(raw))


class FrameDecoder:
    """Streaming decoder: bytes in, frames and refusals out, resynchronising on every `$`."""

    def __init__(self) -> None:
        self._buf = bytearray()  # the frame in progress, starting with `$`
        self._junk = bytearray()  # bytes outside any frame (kept up to RAW_KEEP)
        self._junk_len = 0
        self._in_frame = False
        self._overlong = False  # discarding the rest of a too-long frame until LF or `$`

    def feed(self, data: bytes) -> list[Frame | BadFrame]:
        """Consume ``data`` and return every frame or refusal it completes, in order."""
        if not isinstance(data, bytes | bytearray | memoryview):
            raise ShoeProtocolError(f"feed() takes bytes, not {type(data).__name__}")
        out: list[Frame | BadFrame] = []
        for byte in bytes(data):
            if byte == _DOLLAR:
                self._flush_junk(out)
                if self._in_frame:
                    out.append(BadFrame(BadReason.INTERRUPTED, bytes(self._buf[:RAW_KEEP])))
                self._overlong = False
                self._in_frame = True
                self._buf = bytearray(b"$")
            elif self._in_frame:
                self._buf.append(byte)
                if byte == _LF:
                    out.append(parse_frame(bytes(self._buf)))
                    self._in_frame = False
                    self._buf = bytearray()
                elif len(self._buf) >= MAX_FRAME:
                    # the LF would be byte 81: refuse now, swallow the rest of the line
                    out.append(BadFrame(BadReason.TOO_LONG, bytes(self._buf), "no LF by byte 80"))
                    self._in_frame = False
                    self._overlong = True
                    self._buf = bytearray()
            elif self._overlong:
                if byte == _LF:
                    self._overlong = False
            else:
                self._junk_len += 1
                if len(self._junk) < RAW_KEEP:
                    self._junk.append(byte)
                if byte == _LF or self._junk_len >= MAX_FRAME:
                    self._flush_junk(out)
        return out

    def _flush_junk(self, out: list[Frame | BadFrame]) -> None:
        if self._junk_len:
            out.append(BadFrame(BadReason.GARBAGE, bytes(self._junk), f"{self._junk_len} bytes"))
            self._junk = bytearray()
            self._junk_len = 0


class Verdict(enum.StrEnum):
    """What the receiver does with a well-formed frame."""

    ACCEPT = "accept"  # d = 0 (or a HELO): deliver it and acknowledge once journaled
    GAP = "gap"  # 1 <= d <= 5000: discard; NAK the expected SEQ once per gap
    REPEAT = "repeat"  # any other d: already accepted; re-acknowledge, ignore
    HELD = "held"  # maybe a resend of this session's HELO and followers: no delivery, no ACK
    CONFLICT = "conflict"  # a "repeat" unlike the frame accepted at that SEQ: a missed HELO
    NO_SESSION = "no_session"  # no HELO and no journal yet: refuse, do not acknowledge
    WRONG_DIRECTION = "wrong_direction"  # ACK/NAK only travel controller -> shoe


@dataclass(frozen=True, slots=True)
class Decision:
    """The tracker's verdict on one frame; ``nak`` is the SEQ to NAK, if a NAK is due.

    With ``new_session``, ``frame`` is the session's ``$HELO`` (possibly one held earlier).
    """

    verdict: Verdict
    frame: Frame
    expected: int | None  # the expected SEQ before this frame
    nak: int | None = None
    new_session: bool = False

    @property
    def unknown(self) -> bool:
        """An accepted well-formed frame of a type DESIGN.md does not define."""
        return not self.frame.known


HISTORY = 1024  # accepted frames remembered per session; a shoe holds far fewer unacknowledged
HELD_RELEASE_S = 2.0  # no resend from the held HELO for this long: the shoe no longer holds it
# A resend round is sent back to back: a frame this long after the previous one is not part of
# the same round (the silence resend waits 500 ms), so it cannot continue a comparison.
BURST_GAP_S = 0.4


class SequenceTracker:
    """Receiver-side sequence rules of DESIGN.md, modulo 10000.

    ``expected`` is None until a ``$HELO`` arrives or the controller resumes from its journal.
    A ``$HELO`` byte-identical to the current session's, arriving in the repeat window, is either
    a power-up or a resend (its ACKs were lost); the tracker holds it (no delivery, no ACK) and
    compares what follows with what it accepted: a difference proves a power-up, reaching the old
    expected SEQ proves a resend. See docs/shoe-protocol.md.
    """

    def __init__(
        self, expected: int | None = None, known_session: Sequence[bytes] | None = None
    ) -> None:
        if expected is not None:
            _check_seq(expected)
        self._expected = expected
        self._nak_sent_for: int | None = None  # the expected SEQ already NAKed for this gap
        self._session_helo: bytes | None = None
        self._history: collections.OrderedDict[int, bytes] = collections.OrderedDict()
        if known_session:
            self._restore_session(known_session)
        self._held_helo: Frame | None = None  # set while deciding power-up versus resend
        self._suspect = False  # a conflict was seen: wait for the shoe to resend its HELO
        # while a HELO is held: the next SEQ to compare (None once the round broke), the SEQ and
        # time of the previous frame, and when the held HELO last arrived
        self._probe: int | None = None
        self._prev = 0
        self._prev_time: float | None = None
        self._now: float | None = None
        self._round_time: float | None = None

    def _restore_session(self, known_session: Sequence[bytes]) -> None:
        """A restarted controller's journaled session: its ``$HELO`` (first) and the frames
        accepted after it, as raw bytes. A resent identical ``$HELO`` is then held and compared
        with them, as within one run, instead of starting a second session."""
        if self._expected is None:
            raise ShoeProtocolError("a known session needs the resume SEQ (expected)")
        frames: list[Frame] = []
        for raw in known_session:
            parsed = parse_frame(bytes(raw))
            if not isinstance(parsed, Frame):
                raise ShoeProtocolError(f"known session frame {raw!r}: {parsed.reason.value}")
            frames.append(parsed)
        if frames[0].type != "HELO":
            raise ShoeProtocolError(f"a known session starts with its HELO, not {frames[0].type}")
        self._session_helo = frames[0].raw
        for frame in frames:
            self._remember(frame)

    @property
    def expected(self) -> int | None:
        """The SEQ the next frame should carry, or None before any session."""
        return self._expected

    @property
    def holding(self) -> bool:
        """True while a repeated ``$HELO`` is being checked: send no ``$ACK`` meanwhile."""
        return self._held_helo is not None or self._suspect

    def accepted_here(self, frame: Frame) -> bool:
        """True when this tracker accepted exactly this frame at its SEQ (not merely a SEQ in
        the repeat window: after a restart it knows no earlier frames)."""
        return self._history.get(frame.seq) == frame.raw

    def rewind(self, seq: int) -> None:
        """Expect ``seq`` next again (a frame accepted here never reached the controller)."""
        _check_seq(seq)
        self._expected = seq
        self._nak_sent_for = None
        self._history.pop(seq, None)

    def nak_for_bad_frame(self) -> int | None:
        """SEQ to NAK after a refused frame (DESIGN.md: name the expected SEQ); None if none."""
        return None if self.holding else self._expected

    def classify(self, frame: Frame, now_s: float | None = None) -> Decision:
        """Decide accept / gap / repeat / held for ``frame`` and advance the expected SEQ.

        ``now_s`` (a monotonic clock, passed in to keep this pure) lets a held HELO be settled
        by timing: a resend round arrives as one burst, a powered-up shoe's frames do not.
        """
        self._now = now_s
        expected = self._expected
        if frame.type in CONTROLLER_TYPES:
            return Decision(Verdict.WRONG_DIRECTION, frame, expected)
        if self._held_helo is not None:
            return self._classify_held(frame, self._held_helo)
        if self._suspect and frame.type != "HELO":
            return Decision(Verdict.HELD, frame, expected)
        if frame.type == "HELO":
            self._suspect = False
            if (
                expected is not None
                and frame.raw == self._session_helo
                and seq_distance(frame.seq, expected) > GAP_WINDOW
            ):
                self._held_helo = frame
                self._start_round(frame)
                return Decision(Verdict.HELD, frame, expected)
            return self._new_session(frame, expected)
        if expected is None:
            return Decision(Verdict.NO_SESSION, frame, expected)
        d = seq_distance(frame.seq, expected)
        if d == 0:
            self._expected = next_seq(expected)
            self._nak_sent_for = None
            self._remember(frame)
            return Decision(Verdict.ACCEPT, frame, expected)
        if d <= GAP_WINDOW:
            nak = None if self._nak_sent_for == expected else expected
            self._nak_sent_for = expected
            return Decision(Verdict.GAP, frame, expected, nak=nak)
        # the shoe is resending older frames: a later gap is a new gap and gets its own NAK
        self._nak_sent_for = None
        if self._history.get(frame.seq, frame.raw) != frame.raw:
            # not what we accepted at this SEQ: the shoe powered up and its HELO was lost.
            # Acknowledge nothing (a cumulative ACK would cover its new frames) and stay quiet:
            # its silence resend starts again from the HELO it still holds.
            self._suspect = True
            return Decision(Verdict.CONFLICT, frame, expected)
        return Decision(Verdict.REPEAT, frame, expected)

    def _classify_held(self, frame: Frame, helo: Frame) -> Decision:
        expected = self._expected
        assert expected is not None  # a HELO is held only within a session
        if frame.type == "HELO":
            if frame.raw != helo.raw:
                self._held_helo = None
                return self._new_session(frame, expected)
            self._start_round(frame)  # a round from the HELO: compare from its follower
            return Decision(Verdict.HELD, frame, expected)
        contiguous = frame.seq == next_seq(self._prev)
        self._prev = frame.seq
        prev_time, self._prev_time = self._prev_time, self._now
        if not contiguous:
            self._probe = None  # a frame was lost in this round: the next round decides
        if (
            self._now is not None
            and self._round_time is not None
            and self._now - self._round_time > HELD_RELEASE_S
        ):
            # a powered-up shoe still holds its HELO (we acknowledged nothing since) and
            # resends from it after every 500 ms of our silence: this one no longer does
            self._held_helo = None
            return self.classify(frame, self._now)
        if self._probe is None or frame.seq != self._probe:
            return Decision(Verdict.HELD, frame, expected)
        if self._probe == expected:
            # every frame since the HELO matched what we accepted and the shoe went on past
            # them: it was a resend round. Carry on with the session.
            self._held_helo = None
            return self.classify(frame, self._now)
        if self._history.get(frame.seq) == frame.raw:
            late = prev_time is not None and self._now is not None and (
                self._now - prev_time > BURST_GAP_S
            )
            if not late:
                self._probe = next_seq(self._probe)
            # a late frame is either a live one (power-up) or a new round: no conclusion
            return Decision(Verdict.HELD, frame, expected)
        # a frame we never accepted at this SEQ: the shoe powered up. Start the session at the
        # held HELO and NAK what follows it; none of it was acknowledged, so the shoe holds it.
        self._held_helo = None
        self._new_session(helo, expected)
        return Decision(Verdict.ACCEPT, helo, expected, nak=next_seq(helo.seq), new_session=True)

    def _start_round(self, helo: Frame) -> None:
        self._probe = next_seq(helo.seq)
        self._prev = helo.seq
        self._prev_time = self._round_time = self._now

    def _new_session(self, helo: Frame, expected: int | None) -> Decision:
        self._session_helo = helo.raw
        self._history.clear()
        self._remember(helo)
        self._expected = next_seq(helo.seq)
        self._nak_sent_for = None
        return Decision(Verdict.ACCEPT, helo, expected, new_session=True)

    def _remember(self, frame: Frame) -> None:
        self._history[frame.seq] = frame.raw
        self._history.move_to_end(frame.seq)
        while len(self._history) > HISTORY:
            self._history.popitem(last=False)


def _check_seq(seq: object) -> None:
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < SEQ_MOD:
        raise ShoeProtocolError(f"SEQ {seq!r} is not an integer 0-9999")
