"""What one pai gow round decided (:class:`RoundRecord`), the complete table state a snapshot
row carries (:class:`Snapshot`), and the compact forms the journal keeps: a snapshot leaves out
the record's fields at their defaults, a fact row carries only the fields its transition changed
(docs/journal.md "Small rows")."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import NotRequired, TypedDict

from controller.fields.readers import (
    Fields,
    as_map,
    as_str,
    bool_of,
    int_of,
    ints_of,
    list_of,
    map_of,
    opt_int_of,
    opt_str_of,
    str_of,
    strs_of,
)
from controller.games.paigow.banking import BankRotation
from controller.games.paigow.dealing import DEFAULT_DELIVERY_STYLE


class WagerEntry(TypedDict):
    """A wager entered at the table: the seat that placed it, the area it is on, its cents."""

    seat: int
    area: int
    cents: int


class HandEntry(TypedDict):
    """The tiles entered for one position and the two hands they were set into; ``reason`` is
    the house way's when the table set them."""

    tiles: list[str]
    high: list[str]
    low: list[str]
    set_by: str
    reason: NotRequired[str]


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
    wagers: list[WagerEntry] = field(default_factory=list)
    dealer_wager: int | None = None  # cents the dealer wagers against a player bank (g)(8)
    #: "dealer", "bank" or the area ("1".."6") -> its tiles and hands
    hands: dict[str, HandEntry] = field(default_factory=dict)
    settlement_seq: int | None = None  # the paigow.settlement row the closing row rests on


@dataclass(frozen=True)
class Snapshot:
    """The complete table state after a fact row: enough to rebuild the table from one row.
    It holds its own copy of the record (:meth:`of`)."""

    state: str
    round_id: int
    record: RoundRecord
    rotation: BankRotation

    @classmethod
    def of(cls, state: str, round_id: int, record: RoundRecord, rotation: BankRotation) -> Snapshot:
        """A snapshot of the table, the record copied (the table goes on changing its own)."""
        return cls(state, round_id, copy.deepcopy(record), rotation)


_DEFAULTS: dict[str, object] = asdict(RoundRecord(round_id=0))
_ROTATION: dict[str, object] = asdict(BankRotation())
_RECORD_FIELDS = frozenset(f.name for f in fields(RoundRecord))
_ROTATION_FIELDS = frozenset(f.name for f in fields(BankRotation))


def compact_record(values: Mapping[str, object]) -> dict[str, object]:
    """A record's fields that differ from a fresh round's, and always its round id."""
    return {k: v for k, v in values.items() if k == "round_id" or _DEFAULTS.get(k) != v}


def _unknown(values: Fields, known: frozenset[str], what: str) -> None:
    unknown = sorted(set(values) - known)
    if unknown:
        raise TypeError(f"{what} has unknown fields {unknown}")


def _opt_bool_of(obj: Fields, key: str) -> bool | None:
    return None if obj.get(key) is None else bool_of(obj, key)


def _wager(value: object, what: str) -> WagerEntry:
    w = as_map(value, what)
    _unknown(w, frozenset(WagerEntry.__annotations__), what)
    return WagerEntry(seat=int_of(w, "seat"), area=int_of(w, "area"), cents=int_of(w, "cents"))


def _hand(value: object, what: str) -> HandEntry:
    h = as_map(value, what)
    _unknown(h, frozenset(HandEntry.__annotations__), what)
    hand = HandEntry(
        tiles=strs_of(h, "tiles"),
        high=strs_of(h, "high"),
        low=strs_of(h, "low"),
        set_by=str_of(h, "set_by"),
    )
    if "reason" in h:
        hand["reason"] = as_str(h["reason"], f"{what} 'reason'")
    return hand


def full_record(values: Mapping[str, object]) -> RoundRecord:
    """A record from a compact (or a complete) one; ``TypeError`` for an unknown field,
    :class:`~controller.fields.readers.FieldError` (a ``ValueError``) for a field of the wrong
    type."""
    _unknown(values, _RECORD_FIELDS, "the round record")
    v = {**_DEFAULTS, **values}
    dice = v.get("dice")
    return RoundRecord(
        round_id=int_of(v, "round_id"),
        start_of_game=bool_of(v, "start_of_game"),
        bank=str_of(v, "bank"),
        bank_seat=opt_int_of(v, "bank_seat"),
        style=str_of(v, "style"),
        style_by=str_of(v, "style_by"),
        mode=opt_str_of(v, "mode"),
        number=opt_int_of(v, "number"),
        raw=opt_str_of(v, "raw"),
        dice=None if dice is None else ints_of(v, "dice"),
        dice_total=opt_int_of(v, "dice_total"),
        triples=_opt_bool_of(v, "triples"),
        start_ordinal=opt_int_of(v, "start_ordinal"),
        start_position=opt_int_of(v, "start_position"),
        counted_from=opt_str_of(v, "counted_from"),
        reshuffles=int_of(v, "reshuffles"),
        reshuffle_pending=bool_of(v, "reshuffle_pending"),
        exposed_seats=ints_of(v, "exposed_seats"),
        voided_seats=ints_of(v, "voided_seats"),
        surrendered_seats=ints_of(v, "surrendered_seats"),
        closing_reason=opt_str_of(v, "closing_reason"),
        wagers=[_wager(w, f"wager {i}") for i, w in enumerate(list_of(v, "wagers"))],
        dealer_wager=opt_int_of(v, "dealer_wager"),
        hands={k: _hand(h, f"hand {k!r}") for k, h in map_of(v, "hands").items()},
        settlement_seq=opt_int_of(v, "settlement_seq"),
    )


def full_rotation(values: Mapping[str, object]) -> BankRotation:
    """A bank rotation from its changed (or all its) fields; ``TypeError`` for an unknown
    field, ``FieldError`` for a field of the wrong type, ``BankingError`` for a bad rotation."""
    _unknown(values, _ROTATION_FIELDS, "the bank rotation")
    v = {**_ROTATION, **values}
    return BankRotation(
        seats=int_of(v, "seats"),
        first_offer=int_of(v, "first_offer"),
        last_banker=opt_int_of(v, "last_banker"),
        restack_round=bool_of(v, "restack_round"),
        includes_dealer=bool_of(v, "includes_dealer"),
    )


def changed(before: Mapping[str, object], after: Mapping[str, object]) -> dict[str, object]:
    """The fields of ``after`` that differ from ``before`` (a fact row's changes)."""
    return {k: v for k, v in after.items() if before.get(k) != v}


def compact_snapshot(snap: Snapshot) -> dict[str, object]:
    """A snapshot as a row carries it: the record's and the rotation's fields that differ from
    their defaults."""
    return {
        "state": snap.state,
        "round_id": snap.round_id,
        "record": compact_record(asdict(snap.record)),
        "rotation": changed(_ROTATION, asdict(snap.rotation)),
    }


def load_snapshot(data: Mapping[str, object]) -> Snapshot:
    """A snapshot from a row (compact or complete); ``TypeError`` or a ``ValueError``
    (``FieldError``) when it is not one."""
    record = full_record(map_of(data, "record"))
    rotation = full_rotation(map_of(data, "rotation"))
    return Snapshot(str_of(data, "state"), int_of(data, "round_id"), record, rotation)
