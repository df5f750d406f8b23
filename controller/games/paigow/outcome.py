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

Where (f)(7) and (f)(8)(ii) disagree -- setting ``zero_low_conflict``
--------------------------------------------------------------------
When the player's high hand is *not* higher than the dealer's and the player's low hand *is*
higher in rank than the dealer's low hand but has a value of zero (a 0 with a better top tile
than the dealer's 0), the two paragraphs give different answers, word for word:

* (f)(7) / 13:69F-10.7(h): the wager "shall lose if the high hand of the player is identical in
  rank or lower ..., and the low hand of the player is identical in rank or lower in rank than
  the low hand of the dealer **or has a value of zero**" -- lose;
* (f)(8)(ii) / 13:69F-10.7(i)2: a push if the high hand "is identical in rank ... or lower", "but
  the low hand of the player is higher in rank than the low hand of the dealer" -- push (this
  paragraph, unlike (f)(8)(i), does not mention a value of zero).

:data:`ZERO_LOW_CONFLICT_SETTINGS`: ``"f7-lose"`` (the default; the low hand of value zero is
treated as never beating the dealer's, the reading (f)(8)(i) also follows) or ``"f8ii-push"``.
It changes only that one case; every other outcome is the same under both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from .errors import HandError
from .ranking import HandRank, hand_rank
from .tiles import Tile, check_tiles

__all__ = [
    "outcome",
    "Outcome",
    "ZeroValue",
    "ZERO_VALUE_SETTINGS",
    "DEFAULT_ZERO_VALUE",
    "has_value_zero",
    "ZeroLowConflict",
    "ZERO_LOW_CONFLICT_SETTINGS",
    "DEFAULT_ZERO_LOW_CONFLICT",
]

Outcome = Literal["win", "push", "lose"]
ZeroValue = Literal["non-pairs", "gongs", "all"]
ZERO_VALUE_SETTINGS: Final[tuple[ZeroValue, ...]] = ("non-pairs", "gongs", "all")
DEFAULT_ZERO_VALUE: Final[ZeroValue] = "non-pairs"
ZeroLowConflict = Literal["f7-lose", "f8ii-push"]
ZERO_LOW_CONFLICT_SETTINGS: Final[tuple[ZeroLowConflict, ...]] = ("f7-lose", "f8ii-push")
DEFAULT_ZERO_LOW_CONFLICT: Final[ZeroLowConflict] = "f7-lose"


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
    zero_low_conflict: ZeroLowConflict = DEFAULT_ZERO_LOW_CONFLICT,
) -> Outcome:
    """``"win"``, ``"push"`` or ``"lose"`` for the player's wager, 5324.50(f)(7)-(9).

    "Dealer" is whoever banks: the dealer, a player bank or a co-bank. Raises ``HandError`` (a
    ``ValueError``) if a hand is not two tiles, if the eight tiles are more than one set holds
    (1-2 in both the player's and the dealer's hands, say), or if a side's "high" hand ranks
    below its "low" hand (hands are set high and low, (f)(1), (f)(3)).

    ``zero_value``: what "has a value of zero" covers; ``zero_low_conflict``: the one case where
    (f)(7) and (f)(8)(ii) disagree (see the module docstring).
    """
    setting = _check_setting(zero_value)
    if zero_low_conflict not in ZERO_LOW_CONFLICT_SETTINGS:
        raise ValueError(
            f"zero_low_conflict must be one of {', '.join(ZERO_LOW_CONFLICT_SETTINGS)}, "
            f"got {zero_low_conflict!r}"
        )
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
    low_higher = pl.key > dl.key
    low_zero = _is_zero(pl, setting)
    if high_wins:
        # (f)(9) win; (f)(8)(i) push: the low hand identical, lower "or has a value of zero".
        return "win" if low_higher and not low_zero else "push"
    if low_higher and not low_zero:
        return "push"  # (f)(8)(ii)
    if low_higher and zero_low_conflict == "f8ii-push":
        return "push"  # (f)(8)(ii) read word for word (see the module docstring)
    return "lose"  # (f)(7)
