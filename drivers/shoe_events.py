"""Immutable events the serial shoe driver posts onto the controller's queue (DESIGN.md data flow).

Every ``ShoeSession`` and ``ShoeFrameAccepted`` must be journaled and then acknowledged with
``SerialShoe.acknowledge(event.seq)``, in the order they were posted; nothing else is acknowledged.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    """A ``$HELO`` was accepted: the shoe powered up and a new session starts at ``seq``."""

    model: str
    firmware: str
    seq: int
    raw: bytes
    monotonic_ns: int


@dataclass(frozen=True, slots=True)
class ShoeFrameAccepted:
    """A frame with the expected SEQ (CARD, COVR, HBT, FLT, or a well-formed unknown type).

    ``known`` is False for a type DESIGN.md does not define: journal it as unknown.
    """

    type: str
    seq: int
    fields: tuple[str, ...]
    raw: bytes
    monotonic_ns: int
    known: bool = True


@dataclass(frozen=True, slots=True)
class ShoeFrameRefused:
    """Bytes that were discarded: a malformed frame, garbage, or a frame out of sequence.

    ``reason`` is a ``BadReason`` value, or ``gap`` / ``no_session`` / ``wrong_direction``.
    ``expected_seq`` is the SEQ the driver expected (and NAKed, if ``nak_sent``).
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
    """No valid frame for more than the watchdog period (``ok`` False), or frames resumed."""

    ok: bool
    silent_for_s: float
    monotonic_ns: int


ShoeEvent = ShoeSession | ShoeFrameAccepted | ShoeFrameRefused | ShoeLinkChanged | ShoeWatchdog
