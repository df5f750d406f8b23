"""What one pai gow round decided (:class:`RoundRecord`), the complete table state a snapshot
row carries (:class:`Snapshot`), and the compact forms the journal keeps: a snapshot leaves out
the record's fields at their defaults, a fact row carries only the fields its transition changed
(docs/journal.md "Small rows")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from controller.games.paigow.banking import BankRotation
from controller.games.paigow.dealing import DEFAULT_DELIVERY_STYLE


@dataclass
class RoundRecord:
    """What one round decided; journaled in every fact row and kept in the closing row."""

    round_id: int
    start_of_game: bool = False  # first round after inspection (g)(2)
    bank: str = "house"  # "house" | "player" | "cobank"
    bank_seat: int | None = None
    style: str = DEFAULT_DELIVERY_STYLE
    style_by: str = "default"  # "default" | "bank"
    mode: str | None = None  # "rng" | "dice"
    number: int | None = None  # count 1-8 shown on the display (stays after blanking)
    raw: str | None = None  # RNG raw bytes (hex) for a lab's replay
    dice: list[int] | None = None  # dice as entered: [total] or [a, b, c]
    dice_total: int | None = None
    triples: bool | None = None  # dragon's eye, 13:69F-10.7(l)
    start_ordinal: int | None = None
    start_position: int | None = None  # physical position of the first stack
    counted_from: str | None = None
    reshuffles: int = 0  # (d)(5) exposures while stacking
    reshuffle_pending: bool = False
    exposed_seats: list[int] = field(default_factory=list)
    voided_seats: list[int] = field(default_factory=list)
    surrendered_seats: list[int] = field(default_factory=list)
    closing_reason: str | None = None
    # -- optional entries (docs/paigow-table.md "Wagers, tiles and settlement") --
    wagers: list[dict[str, int]] = field(default_factory=list)  # {"seat", "area", "cents"}
    dealer_wager: int | None = None  # cents the dealer wagers against a player bank (g)(8)
    #: "dealer", "bank" or the area ("1".."6") -> {"tiles", "high", "low", "set_by", "reason"}
    hands: dict[str, dict[str, Any]] = field(default_factory=dict)
    settlement_seq: int | None = None  # the paigow.settlement row the closing row rests on


@dataclass(frozen=True)
class Snapshot:
    """The complete table state after a fact row: enough to rebuild the table from one row."""

    state: str
    round_id: int
    record: dict[str, Any]
    rotation: dict[str, Any]


_DEFAULTS: dict[str, Any] = asdict(RoundRecord(round_id=0))
_ROTATION: dict[str, Any] = asdict(BankRotation())


def compact_record(values: Mapping[str, Any]) -> dict[str, Any]:
    """A record's fields that differ from a fresh round's, and always its round id."""
    return {k: v for k, v in values.items() if k == "round_id" or _DEFAULTS.get(k) != v}


def full_record(values: Mapping[str, Any]) -> RoundRecord:
    """A record from a compact (or a complete) one; ``TypeError`` for an unknown field."""
    return RoundRecord(**{**_DEFAULTS, **values})


def changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``after`` that differ from ``before`` (a fact row's changes)."""
    return {k: v for k, v in after.items() if before.get(k) != v}


def compact_snapshot(snap: Snapshot) -> dict[str, Any]:
    """A snapshot as a row carries it: the record's and the rotation's fields that differ from
    their defaults."""
    return {
        "state": snap.state,
        "round_id": snap.round_id,
        "record": compact_record(snap.record),
        "rotation": changed(_ROTATION, snap.rotation),
    }


def load_snapshot(data: Mapping[str, Any]) -> Snapshot:
    """A snapshot from a row (compact or complete); ``KeyError``/``TypeError`` when it is not
    one."""
    record = asdict(full_record(data["record"]))
    rotation = asdict(BankRotation(**{**_ROTATION, **data["rotation"]}))
    return Snapshot(str(data["state"]), int(data["round_id"]), record, rotation)
