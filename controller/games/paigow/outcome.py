"""Win, push or lose of one pai gow wager, 9 NYCRR 5324.50(f)(7)-(9); N.J.A.C. 13:69F-10.7(h)-(j).

* (f)(9) win: the player's high hand ranks higher than the dealer's high hand AND the player's low
  hand ranks higher than the dealer's low hand.
* (f)(7) lose: the player's high hand is identical in rank or lower AND the player's low hand is
  identical in rank or lower, or has a value of zero.
* (f)(8) push: otherwise -- one hand higher, the other identical, lower or (low hand) of value zero.

Identical rank -- a copy hand (b)(7) or identical pair rank (b)(2) -- goes to the dealer (or the
bank). (f)(8)(i): a player's low hand of value zero never wins, even against a dealer's low hand
that it outranks (a 0 whose top tile is 6-6 against a 0 with a lower top tile, for instance).

What "has a value of zero" covers is the setting :data:`ZERO_VALUE_SETTINGS`, argument
``zero_value``:

* ``"non-pairs"`` (the default): only a hand that is no (b)(1) combination. (b)(3) gives a value
  to hands "that do not contain any of the pairs": a pair, wong or gong is ranked by (b)(1), not
  by value, so a pair of 5-5 or 4-6, mixed 5s or a gong (all of whose spots total a multiple of
  ten) is not "a value of zero". This is the reading of the text as written, and the usual one.
* ``"gongs"``: gongs (6-6 or 1-1 with an 8; their spots total 20 or 10) count as value zero too;
  other pairs do not.
* ``"all"``: any hand whose spots total a multiple of ten is value zero, pairs and gongs
  included (pair of 5-5, pair of 4-6, mixed 5s, the six gongs).

A jurisdiction or casino that reads it otherwise sets it in its rules profile; the code does not
fork. Only the player's low hand is affected: (f)(7)-(8) say it of that hand alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from .errors import HandError
from .ranking import HandRank, hand_rank
from .tiles import Tile, check_tiles

__all__ = ["outcome", "Outcome", "ZeroValue", "ZERO_VALUE_SETTINGS", "DEFAULT_ZERO_VALUE",
           "has_value_zero"]

Outcome = Literal["win", "push", "lose"]
ZeroValue = Literal["non-pairs", "gongs", "all"]
ZERO_VALUE_SETTINGS: Final[tuple[ZeroValue, ...]] = ("non-pairs", "gongs", "all")
DEFAULT_ZERO_VALUE: Final[ZeroValue] = "non-pairs"


def has_value_zero(hand: Sequence[Tile | str], zero_value: ZeroValue = DEFAULT_ZERO_VALUE) -> bool:
    """Whether a hand "has a value of zero" in the sense of (f)(7)-(8), under ``zero_value``."""
    return _is_zero(hand_rank(hand), _check_setting(zero_value))


def _check_setting(zero_value: str) -> ZeroValue:
    for s in ZERO_VALUE_SETTINGS:
        if zero_value == s:
            return s
    raise ValueError(
        f"zero_value must be one of {', '.join(ZERO_VALUE_SETTINGS)}, got {zero_value!r}"
    )


def _is_zero(r: HandRank, zero_value: ZeroValue) -> bool:
    if r.pair is None:
        return r.value == 0  # (b)(3) with the (b)(4) recount: 1-2 + 3-4 is 3, not 0
    if zero_value == "all":
        return r.spots % 10 == 0
    if zero_value == "gongs":
        return r.pair.kind == "gong"
    return False


def outcome(
    player_high: Sequence[Tile | str],
    player_low: Sequence[Tile | str],
    dealer_high: Sequence[Tile | str],
    dealer_low: Sequence[Tile | str],
    *,
    zero_value: ZeroValue = DEFAULT_ZERO_VALUE,
) -> Outcome:
    """``"win"``, ``"push"`` or ``"lose"`` for the player's wager, 5324.50(f)(7)-(9).

    "Dealer" is whoever banks: the dealer, a player bank or a co-bank. Raises ``HandError`` (a
    ``ValueError``) if a hand is not two tiles, if the eight tiles are more than one set holds
    (1-2 in both the player's and the dealer's hands, say), or if a side's "high" hand ranks
    below its "low" hand (hands are set high and low, (f)(1), (f)(3)).
    """
    setting = _check_setting(zero_value)
    hands = [
        check_tiles(h, 2, f"{name} hand")
        for h, name in (
            (player_high, "player's high"),
            (player_low, "player's low"),
            (dealer_high, "dealer's high"),
            (dealer_low, "dealer's low"),
        )
    ]
    check_tiles([t for h in hands for t in h], 8, "player's and dealer's eight tiles")
    ph, pl, dh, dl = (hand_rank(h) for h in hands)
    for side, hi, lo in (("player", ph, pl), ("dealer", dh, dl)):
        if hi.key < lo.key:
            raise HandError(
                f"the {side}'s high hand {hi.tiles[0]} {hi.tiles[1]} ({hi.describe()}) ranks "
                f"below the low hand {lo.tiles[0]} {lo.tiles[1]} ({lo.describe()})"
            )
    high_wins = ph.key > dh.key  # identical rank goes to the dealer, (b)(2), (b)(7)
    low_wins = pl.key > dl.key and not _is_zero(pl, setting)  # (f)(8)(i)
    if high_wins and low_wins:
        return "win"  # (f)(9)
    if not high_wins and not low_wins:
        return "lose"  # (f)(7)
    return "push"  # (f)(8)
