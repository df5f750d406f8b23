"""What one pai gow round decided (:class:`RoundRecord`) and the complete table state a fact
row carries (:class:`Snapshot`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.games.paigow.dealing import DEFAULT_DELIVERY_STYLE


@dataclass
class RoundRecord:
    """What one round decided; journaled in every fact row and kept in the closing row."""

    round_id: int
    start_of_game: bool = False          # first round after inspection (g)(2)
    bank: str = "house"                  # "house" | "player" | "cobank"
    bank_seat: int | None = None
    style: str = DEFAULT_DELIVERY_STYLE
    style_by: str = "default"            # "default" | "bank"
    mode: str | None = None              # "rng" | "dice"
    number: int | None = None            # count 1-8 shown on the display (stays after blanking)
    raw: str | None = None               # RNG raw bytes (hex) for a lab's replay
    dice: list[int] | None = None        # dice as entered: [total] or [a, b, c]
    dice_total: int | None = None
    triples: bool | None = None          # dragon's eye, 13:69F-10.7(l)
    start_ordinal: int | None = None
    start_position: int | None = None    # physical position of the first stack
    counted_from: str | None = None
    reshuffles: int = 0                  # (d)(5) exposures while stacking
    reshuffle_pending: bool = False
    exposed_seats: list[int] = field(default_factory=list)
    voided_seats: list[int] = field(default_factory=list)
    surrendered_seats: list[int] = field(default_factory=list)
    closing_reason: str | None = None
    # -- optional entries (docs/paigow-table.md "Wagers, tiles and settlement") --
    wagers: list[dict[str, int]] = field(default_factory=list)  # {"seat", "area", "cents"}
    dealer_wager: int | None = None      # cents the dealer wagers against a player bank (g)(8)
    #: "dealer", "bank" or the area ("1".."6") -> {"tiles", "high", "low", "set_by", "reason"}
    hands: dict[str, dict[str, Any]] = field(default_factory=dict)
    settlement_seq: int | None = None    # the paigow.settlement row the closing row rests on


@dataclass(frozen=True)
class Snapshot:
    """The complete table state after a fact row: enough to rebuild the table from one row."""

    state: str
    round_id: int
    record: dict[str, Any]
    rotation: dict[str, Any]


