"""Immutable events the serial shoe driver posts onto the controller's queue (docs/design.md).

A ``ShoeSession`` and every ``ShoeFrameAccepted`` must be journaled and then acknowledged with
``SerialShoe.acknowledge(event.sid, event.seq)``. Heartbeats are never posted (revision 3: they
are outside the sequence and feed the driver's watchdog). Nothing that is not journaled is ever
acknowledged.
"""

from __future__ import annotations

from dataclasses import dataclass

from drivers.shoe_protocol import SessionPosition

__all__ = [
    "ShoeEvent",
    "ShoeFrameAccepted",
    "ShoeFrameRefused",
    "ShoeLinkChanged",
    "ShoeSession",
    "ShoeWatchdog",
]


@dataclass(frozen=True, slots=True)
class ShoeSession:
    """A ``$HELO`` of a new SID was accepted: the shoe powered up, session ``sid`` starts at
    ``seq``. ``previous`` is where the old session stood in this driver (its SID and the SEQ
    after its last accepted frame), None if this driver knew no session."""

    sid: str
    model: str
    firmware: str
    seq: int
    raw: bytes
    monotonic_ns: int
    previous: SessionPosition | None = None


@dataclass(frozen=True, slots=True)
class ShoeFrameAccepted:
    """A frame of the current session with the expected SEQ (CARD, COVR, FLT, or a
    well-formed unknown type). ``known`` is False for a type docs/design.md does not define."""

    type: str
    seq: int
    sid: str
    fields: tuple[str, ...]
    raw: bytes
    monotonic_ns: int
    known: bool = True


@dataclass(frozen=True, slots=True)
class ShoeFrameRefused:
    """Bytes that were discarded: a malformed frame, garbage, a frame out of sequence, or a
    frame of another session.

    ``reason`` is a ``BadReason`` value, or ``gap`` / ``foreign_sid`` / ``no_session`` /
    ``wrong_direction`` / ``lost`` (a heartbeat whose LAST was never received: frames were
    lost, the expected SEQ is NAKed) / ``bad_revision`` (a ``$HELO`` of another protocol
    revision or none: that shoe is refused). ``expected_seq`` is the SEQ the driver expected
    (and NAKed, if ``nak_sent``) in its current session.
    """

    reason: str
    raw: bytes
    expected_seq: int | None
    detail: str
    nak_sent: bool
    monotonic_ns: int


@dataclass(frozen=True, slots=True)
class ShoeLinkChanged:
    """The serial port opened (``up``) or failed / vanished (not ``up``)."""

    up: bool
    reason: str
    monotonic_ns: int


@dataclass(frozen=True, slots=True)
class ShoeWatchdog:
    """No valid frame of the current session for more than the watchdog period (``ok``
    False), or such frames resumed."""

    ok: bool
    silent_for_s: float
    monotonic_ns: int


ShoeEvent = ShoeSession | ShoeFrameAccepted | ShoeFrameRefused | ShoeLinkChanged | ShoeWatchdog
