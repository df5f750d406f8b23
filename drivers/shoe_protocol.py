"""Reference shoe protocol, revision 3 (docs/design.md): framing, session ids and sequence rules.

Pure: no I/O, no clocks, no randomness. The serial driver, the simulated shoe and the tests all
share it, so both ends of the link agree byte for byte. Every frame carries the session id (SID)
the shoe drew at power-up, so no frame of one power-up can be taken for another's. A heartbeat
(``$HBT,LAST,SID``) takes no SEQ of its own: it names the last sequenced frame the shoe sent.
Readings of the spec are in docs/shoe-protocol.md.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from drivers.errors import ProtocolError

__all__ = [
    "CARD_RE",
    "FLT_CODES",
    "KNOWN_TYPES",
    "MAX_FRAME",
    "NO_SID",
    "REVISION",
    "SEQ_MOD",
    "BadFrame",
    "BadReason",
    "Decision",
    "Frame",
    "FrameDecoder",
    "SequenceTracker",
    "SessionPosition",
    "ShoeProtocolError",
    "Verdict",
    "check_sid",
    "checksum",
    "encode",
    "helo_revision",
    "is_sid",
    "next_seq",
    "parse_frame",
    "seq_distance",
]

SEQ_MOD = 10000  # SEQ is 0-9999 and wraps after 9999
MAX_FRAME = 80  # bytes from `$` through LF
GAP_WINDOW = 5000  # 1 <= d <= 5000 is a gap; any other non-zero d is a repeat
RAW_KEEP = 2 * MAX_FRAME  # bytes of a refused frame kept for the journal
NO_SID = "00000000"  # never a session id (docs/design.md)
#: The protocol revision this code speaks; a shoe names its own in its $HELO (after the firmware).
REVISION = "3"

SHOE_TYPES = frozenset({"HELO", "CARD", "COVR", "HBT", "FLT"})
CONTROLLER_TYPES = frozenset({"ACK", "NAK"})
KNOWN_TYPES = SHOE_TYPES | CONTROLLER_TYPES
# Field count per known type, after SEQ and SID; an unknown type may carry any number of fields.
# A $HELO carries model, firmware and (revision 3 on) the protocol revision; one without the
# revision is well-formed (a revision 2 shoe) so that it can be refused by name, not as noise.
_ARITY = {"HELO": 3, "CARD": 1, "COVR": 0, "HBT": 0, "FLT": 1, "ACK": 0, "NAK": 0}
FLT_CODES = frozenset({"JAM", "UNREAD", "DOOR", "FULL", "CLR"})

CARD_RE = re.compile(r"[A23456789TJQK][SHDC]")
_TYPE_RE = re.compile(r"[A-Z][A-Z0-9]{0,7}")
_SEQ_RE = re.compile(r"[0-9]{1,4}")
_SID_RE = re.compile(r"[0-9A-F]{8}")
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
    """Bad arguments to the shoe protocol (an unencodable frame, a SEQ or SID out of range)."""


class BadReason(enum.StrEnum):
    """Why received bytes were refused; the value is what the controller journals."""

    TOO_LONG = "too_long"  # more than 80 bytes from `$` without LF
    INTERRUPTED = "interrupted"  # a new `$` arrived before the frame ended
    BAD_TERMINATOR = "bad_terminator"  # the line did not end in `*HH` CR LF
    BAD_CHECKSUM_FORMAT = "bad_checksum_format"  # HH is not two upper-case hex digits
    CHECKSUM_MISMATCH = "checksum_mismatch"
    BAD_TYPE = "bad_type"
    BAD_SEQ = "bad_seq"
    BAD_SID = "bad_sid"  # not 8 upper-case hex digits, or 00000000
    BAD_FIELDS = "bad_fields"  # wrong count or format for a known type, or bad characters
    GARBAGE = "garbage"  # bytes outside any frame


def is_sid(sid: object) -> bool:
    """True for a session id: 8 upper-case hex digits, not ``00000000``."""
    return isinstance(sid, str) and bool(_SID_RE.fullmatch(sid)) and sid != NO_SID


def check_sid(sid: object) -> str:
    """Return ``sid`` if it is a session id, else raise ShoeProtocolError."""
    if not is_sid(sid):
        raise ShoeProtocolError(
            f"session id {sid!r} is not 8 upper-case hex digits other than {NO_SID}"
        )
    assert isinstance(sid, str)
    return sid


@dataclass(frozen=True, slots=True)
class Frame:
    """A well-formed frame: checksum verified, SEQ and SID valid, fields valid for its type.

    For a heartbeat (``HBT``) ``seq`` is LAST: the SEQ of the last sequenced frame the shoe sent
    in its session (revision 3: a heartbeat takes no SEQ of its own)."""

    type: str
    seq: int
    sid: str
    fields: tuple[str, ...]
    raw: bytes

    @property
    def known(self) -> bool:
        """False for a well-formed frame of a type docs/design.md does not define."""
        return self.type in KNOWN_TYPES


@dataclass(frozen=True, slots=True)
class BadFrame:
    """Bytes that are not a frame; ``raw`` is capped at RAW_KEEP bytes."""

    reason: BadReason
    raw: bytes
    detail: str = ""


@dataclass(frozen=True, slots=True)
class SessionPosition:
    """Where a controller stands in a shoe session: its SID and the SEQ it expects next
    (the SEQ after the last one journaled). A restarted controller sends ``$NAK,next_seq,sid``."""

    sid: str
    next_seq: int

    def __post_init__(self) -> None:
        check_sid(self.sid)
        _check_seq(self.next_seq)


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
        return None  # unknown type: any printable fields (docs/design.md: accepted, flagged)
    if len(fields) != arity and not (ftype == "HELO" and len(fields) == arity - 1):
        if ftype == "HELO":
            return f"HELO takes model, firmware and revision after SEQ and SID, got {len(fields)}"
        return f"{ftype} takes {arity} field(s) after SEQ and SID, got {len(fields)}"
    if ftype == "CARD" and not CARD_RE.fullmatch(fields[0]):
        return f"card {fields[0]!r} is not rank A23456789TJQK + suit SHDC"
    if ftype == "HELO" and not all(fields):
        return "HELO model, firmware and revision must not be empty"
    if ftype == "FLT" and not _CODE_RE.fullmatch(fields[0]):
        return f"fault code {fields[0]!r} is not an upper-case token"
    return None


def helo_revision(frame: Frame) -> str | None:
    """The protocol revision a ``$HELO`` names (its field after the firmware), None if it names
    none (a revision 2 shoe)."""
    if frame.type != "HELO" or len(frame.fields) < 3:
        return None
    return frame.fields[2]


def encode(ftype: str, seq: int, sid: str, *fields: str) -> bytes:
    """Build one frame ``$TYPE,SEQ,SID[,FIELD]*`*HH CR LF``; raises ShoeProtocolError if
    invalid. For ``HBT`` the SEQ position carries LAST, the SEQ of the last sequenced frame
    the shoe sent in its session."""
    if not isinstance(ftype, str) or not _TYPE_RE.fullmatch(ftype):
        raise ShoeProtocolError(f"frame type {ftype!r} is not 1-8 upper-case letters/digits")
    _check_seq(seq)
    check_sid(sid)
    if not all(isinstance(f, str) for f in fields):
        raise ShoeProtocolError(f"fields must be str: {fields!r}")
    problem = _check_fields(ftype, fields)
    if problem is not None:
        raise ShoeProtocolError(problem)
    body = ",".join((ftype, str(seq), sid, *fields)).encode("ascii")
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
    if len(parts) < 3 or not is_sid(parts[2]):
        sid = parts[2] if len(parts) > 2 else ""
        return BadFrame(
            BadReason.BAD_SID,
            kept,
            f"SID {sid!r} is not 8 upper-case hex digits other than {NO_SID}",
        )
    fields = tuple(parts[3:])
    problem = _check_fields(parts[0], fields)
    if problem is not None:
        return BadFrame(BadReason.BAD_FIELDS, kept, problem)
    return Frame(parts[0], int(parts[1]), parts[2], fields, bytes(raw))


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

    ACCEPT = "accept"  # d = 0, or a HELO of a new SID: deliver it, acknowledge once journaled
    GAP = "gap"  # 1 <= d <= 5000: discard; NAK the expected SEQ once per gap
    REPEAT = "repeat"  # any other d, or the current session's HELO: re-acknowledge, ignore
    FOREIGN = "foreign_sid"  # another session's frame (not a HELO): discard without a reply
    NO_SESSION = "no_session"  # no HELO and no journal yet: discard without a reply
    WRONG_DIRECTION = "wrong_direction"  # ACK/NAK only travel controller -> shoe
    HEARTBEAT = "heartbeat"  # a heartbeat whose LAST we have accepted: feeds the watchdog only
    LOST = "lost"  # a heartbeat whose LAST is beyond what we accepted: NAK expected, once per gap
    BAD_REVISION = "bad_revision"  # a $HELO of another protocol revision, or none: refused


@dataclass(frozen=True, slots=True)
class Decision:
    """The tracker's verdict on one frame; ``nak`` is the SEQ to NAK, if a NAK is due.

    With ``new_session``, ``frame`` is the new session's ``$HELO`` and ``previous`` where the
    old session stood (its SID and the SEQ after its last accepted frame), if there was one.
    """

    verdict: Verdict
    frame: Frame
    expected: int | None  # the expected SEQ before this frame (of the current session)
    nak: int | None = None
    new_session: bool = False
    previous: SessionPosition | None = None

    @property
    def unknown(self) -> bool:
        """An accepted well-formed frame of a type docs/design.md does not define."""
        return not self.frame.known


class SequenceTracker:
    """Receiver-side rules of docs/design.md's shoe protocol: one current session, SEQ mod 10000.

    ``position`` is None until a ``$HELO`` arrives or the controller resumes from its journal
    (``SequenceTracker(SessionPosition(sid, next_seq))``). Only frames of the current SID are
    accepted; a ``$HELO`` of another SID starts that session.
    """

    def __init__(self, position: SessionPosition | None = None) -> None:
        self._sid: str | None = None if position is None else position.sid
        self._expected: int | None = None if position is None else position.next_seq
        self._nak_sent_for: int | None = None  # the expected SEQ already NAKed for this gap

    @property
    def sid(self) -> str | None:
        """The current session's SID, or None before any session."""
        return self._sid

    @property
    def expected(self) -> int | None:
        """The SEQ the next frame of the current session should carry, or None."""
        return self._expected

    @property
    def position(self) -> SessionPosition | None:
        """The current session and the SEQ expected next, or None before any session."""
        if self._sid is None or self._expected is None:
            return None
        return SessionPosition(self._sid, self._expected)

    def rewind(self, seq: int) -> None:
        """Expect ``seq`` next again (a frame accepted here never reached the journal)."""
        _check_seq(seq)
        if self._sid is None:
            raise ShoeProtocolError("no session to rewind")
        self._expected = seq
        self._nak_sent_for = None

    def nak_for_bad_frame(self) -> SessionPosition | None:
        """What to NAK after a refused frame (docs/design.md: the expected SEQ of the current
        session); None with no session (there is nothing to name)."""
        return self.position

    def classify(self, frame: Frame) -> Decision:
        """Decide accept / gap / repeat / foreign for ``frame`` and advance the expected SEQ."""
        expected = self._expected
        if frame.type in CONTROLLER_TYPES:
            return Decision(Verdict.WRONG_DIRECTION, frame, expected)
        if frame.type == "HELO":
            if helo_revision(frame) != REVISION:
                # neither end may half-understand the other: no session, no reply
                return Decision(Verdict.BAD_REVISION, frame, expected)
            if frame.sid == self._sid:
                # the current session's HELO again: the shoe resends it (our ACK was lost,
                # or we restarted before acknowledging it): a repeat. **Choice**: one at the
                # expected SEQ is the session's next frame, taken like any other (journaled,
                # then acknowledged; no new session), so the stream cannot stall on it and the
                # journal's SEQs stay contiguous: no $ACK covers a SEQ the journal lacks.
                self._nak_sent_for = None
                if expected is not None and frame.seq == expected:
                    self._expected = next_seq(expected)
                    return Decision(Verdict.ACCEPT, frame, expected)
                return Decision(Verdict.REPEAT, frame, expected)
            previous = self.position
            self._sid = frame.sid
            self._expected = next_seq(frame.seq)
            self._nak_sent_for = None
            return Decision(Verdict.ACCEPT, frame, expected, new_session=True, previous=previous)
        if self._sid is None or expected is None:
            return Decision(Verdict.NO_SESSION, frame, expected)
        if frame.sid != self._sid:
            return Decision(Verdict.FOREIGN, frame, expected)
        if frame.type == "HBT":
            return self._heartbeat(frame, expected)
        d = seq_distance(frame.seq, expected)
        if d == 0:
            self._expected = next_seq(expected)
            self._nak_sent_for = None
            return Decision(Verdict.ACCEPT, frame, expected)
        if d <= GAP_WINDOW:
            nak = None if self._nak_sent_for == expected else expected
            self._nak_sent_for = expected
            return Decision(Verdict.GAP, frame, expected, nak=nak)
        # the shoe is resending older frames: a later gap is a new gap and gets its own NAK
        self._nak_sent_for = None
        return Decision(Verdict.REPEAT, frame, expected)

    def _heartbeat(self, frame: Frame, expected: int) -> Decision:
        """Revision 3: ``$HBT,LAST,SID`` is outside the sequence; it never moves ``expected``.
        LAST = expected - 1 (or behind it) is a link in step. LAST beyond it means the frames
        from ``expected`` to LAST were lost on the wire (the last card of a coup, say): NAK the
        expected SEQ, once per gap, as for a gap frame."""
        d = seq_distance(next_seq(frame.seq), expected)
        if d == 0 or d > GAP_WINDOW:
            return Decision(Verdict.HEARTBEAT, frame, expected)
        nak = None if self._nak_sent_for == expected else expected
        self._nak_sent_for = expected
        return Decision(Verdict.LOST, frame, expected, nak=nak)


def _check_seq(seq: object) -> None:
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < SEQ_MOD:
        raise ShoeProtocolError(f"SEQ {seq!r} is not an integer 0-9999")
