"""Settling one pai gow wager in integer cents: 1:1 less vigorish, rounding, surrender, and the
order in which a player on two adjacent betting areas sets the two hands.

Pure rules: no I/O, no clock, no randomness. Outcomes are the strings ``"win"``, ``"push"``,
``"lose"`` from the player's point of view (what ``paigow.outcome`` returns), plus
``"surrender"`` for a wager the player surrendered; this module never looks at tiles.

Sources (``/work/shared/seeds``): 9 NYCRR 5324.50(f)(5), (f)(7)-(10), (h);
N.J.A.C. 13:69F-10.7(f), (h)-(l).

How (f)(10) / 13:69F-10.7(k) is read
------------------------------------
"paid ... at no less than odds of 1:1, except that [the casino] shall collect a vigorish from the
winning player in an amount equal to five percent of the amount won; provided, however, that
when collecting the vigorish, the [casino] may round off the vigorish to 25 cents or the next
highest multiple of 25 cents."

1. Amount won = the stake (1:1). Vigorish = ``vig_percent`` % of it.
2. Sub-cent: five percent of a stake that is not a multiple of 20 cents is not a whole number of
   cents (5% of $10.10 is 50.5 cents). Only whole cents can be collected and the regulation names
   no direction, so it is the setting ``vig_cent_rounding``: ``"up"`` (the default: 51 cents, in
   the house's favour, the direction of the regulation's own 25-cent rounding and of "odd cents
   go to the house" in banking) or ``"down"`` (50 cents: never more than five percent).
3. ``round_vig_to_quarter=True`` (the casino's option): the vigorish is raised to 25 cents if it
   is under 25 cents, else to the next highest multiple of 25 cents; a vigorish that already is a
   multiple of 25 cents stays as it is ($10 -> 50c stays 50c; $11 -> 55c -> 75c; $1 -> 5c -> 25c).
   This rounds the exact vigorish (50.5 cents on $10.10 -> 75 cents), so ``vig_cent_rounding``
   then makes no difference.
4. The vigorish never exceeds the amount won: a winning wager never costs the player money.
   (Reachable only for stakes under 25 cents with quarter rounding on; the regulation is silent.)

Surrender, (f)(5) / 13:69F-10.7(f): the dealer "immediately collect[s] the wager"; the player
loses the whole stake (no half is returned, unlike blackjack). It is allowed only after the
dealer's hands are set and before either of that player's hands is exposed (:func:`may_surrender`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from controller.games.paigow.errors import PaigowError

__all__ = [
    "SettlementError",
    "PaigowRules",
    "WIN",
    "PUSH",
    "LOSE",
    "SURRENDER",
    "OUTCOMES",
    "commission",
    "settle_wager",
    "may_surrender",
    "AreaWager",
    "setting_order",
    "check_two_areas",
    "VigCentRounding",
    "CoBankOddCent",
    "SurrenderAgainstBank",
]

WIN: Final = "win"
PUSH: Final = "push"
LOSE: Final = "lose"
SURRENDER: Final = "surrender"
#: What :func:`settle_wager` accepts. ``paigow.outcome`` gives the first three.
OUTCOMES: Final[tuple[str, ...]] = (WIN, PUSH, LOSE, SURRENDER)

QUARTER_CENTS: Final = 25

VigCentRounding = Literal["up", "down"]
CoBankOddCent = Literal["co_bank", "house"]
SurrenderAgainstBank = Literal["refuse", "center", "house"]
_CHOICES: Final[dict[str, tuple[str, ...]]] = {
    "vig_cent_rounding": ("up", "down"),
    "co_bank_shortfall_odd_cent": ("co_bank", "house"),
    "surrender_against_bank": ("refuse", "center", "house"),
}


class SettlementError(PaigowError, ValueError):
    """Bad input to a settlement rule (a stake that is not a positive whole number of cents, an
    unknown outcome, a surrender the rules do not offer, ...). The message names what is wrong."""


@dataclass(frozen=True, slots=True)
class PaigowRules:
    """The casino's and jurisdiction's settings for settlement and banking.

    ``vig_percent``: the vigorish, percent of the amount won (5 in 5324.50(f)(10) and
        13:69F-10.7(k); 0 for the no-vigorish tiles phase of the dragon's eye variation,
        13:69F-10.7(l)2).
    ``round_vig_to_quarter``: the casino's option of (f)(10) to round the vigorish up to 25 cents
        or the next highest multiple of 25 cents (see the module docstring).
    ``surrender_offered``: (f)(5) / 13:69F-10.7(f) let a player surrender; a casino profile may
        turn it off.
    ``player_bank_offered``: (g)(1) / 13:69F-10.8(a), the casino offers players the bank.
    ``co_bank_offered``: (g)(5) / 13:69F-10.8(e), the casino offers to cover 50 percent.
    ``bank_rotation_includes_dealer``: how :mod:`banking` reads "the initial offer ... shall
        rotate counterclockwise around the table until the offer returns to the dealer" (g)(3):
        True -- when the rotation returns to the dealer, the house banks that round and the
        rotation starts again at the player farthest to the dealer's right; False -- it starts
        again at once.
    ``vig_cent_rounding``: ``"up"`` or ``"down"``, a vigorish that is no whole number of cents
        (five percent of $10.10 is 50.5 cents); (f)(10) names no direction.
    ``co_bank_shortfall_odd_cent``: who puts in the odd cent when a co-bank shortfall of an odd
        number of cents is split "one-half" each ((g)(16)): ``"co_bank"`` (default, the house
        keeps the odd cent) or ``"house"``.
    ``surrender_against_bank``: where a wager surrendered ((f)(5)) in a round a player banks goes;
        (f)(5) says only that the dealer "collect[s] the wager", (g)(15)-(16) speak of losing
        wagers only: ``"refuse"`` (default: :mod:`banking` refuses to settle it), ``"center"``
        (collected into the center like a losing wager) or ``"house"`` (to the chip tray).
    """

    vig_percent: int = 5
    round_vig_to_quarter: bool = False
    surrender_offered: bool = True
    player_bank_offered: bool = False
    co_bank_offered: bool = False
    bank_rotation_includes_dealer: bool = True
    vig_cent_rounding: VigCentRounding = "up"
    co_bank_shortfall_odd_cent: CoBankOddCent = "co_bank"
    surrender_against_bank: SurrenderAgainstBank = "refuse"

    def __post_init__(self) -> None:
        v = self.vig_percent
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 100:
            raise SettlementError(f"vig_percent must be a whole percent 0-100, got {v!r}")
        for name in (
            "round_vig_to_quarter",
            "surrender_offered",
            "player_bank_offered",
            "co_bank_offered",
            "bank_rotation_includes_dealer",
        ):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise SettlementError(f"{name} must be True or False, got {value!r}")
        for name, choices in _CHOICES.items():
            value = getattr(self, name)
            if not isinstance(value, str) or value not in choices:
                raise SettlementError(
                    f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}"
                )
        if self.co_bank_offered and not self.player_bank_offered:
            raise SettlementError(
                "co_bank_offered needs player_bank_offered: a co-bank is a player bank with the "
                "house covering half (5324.50(g)(5))"
            )


def _check_cents(name: str, value: object, *, positive: bool = True) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettlementError(
            f"{name} must be a whole number of cents (int), got {type(value).__name__} {value!r}"
        )
    if positive and value <= 0:
        raise SettlementError(f"{name} must be a positive number of cents, got {value}")
    if not positive and value < 0:
        raise SettlementError(f"{name} must not be negative, got {value}")
    return value


def _check_rules(rules: object) -> PaigowRules:
    if not isinstance(rules, PaigowRules):
        raise SettlementError(f"rules must be a PaigowRules, got {type(rules).__name__}")
    return rules


def commission(amount_won_cents: int, rules: PaigowRules) -> int:
    """The vigorish in cents on ``amount_won_cents`` (5324.50(f)(10); 13:69F-10.7(k)).

    ``vig_percent`` % rounded to a whole cent by ``vig_cent_rounding``; with
    ``round_vig_to_quarter``, the exact vigorish up to 25 cents or the next highest multiple of 25
    cents (an exact multiple stays); never more than the amount.
    Also used for the 5% charged on a bank's surplus ((g)(15), (g)(16): "in accordance with
    subdivision (f)").

    >>> r = PaigowRules(round_vig_to_quarter=True)
    >>> commission(1000, PaigowRules()), commission(1010, PaigowRules())
    (50, 51)
    >>> commission(1000, r), commission(1100, r), commission(100, r)
    (50, 75, 25)
    """
    rules = _check_rules(rules)
    amount = _check_cents("amount won", amount_won_cents, positive=False)
    hundredths = amount * rules.vig_percent  # the exact vigorish, in hundredths of a cent
    if rules.round_vig_to_quarter:
        step = QUARTER_CENTS * 100
        vig = -(-hundredths // step) * QUARTER_CENTS  # ceil of the exact amount to 25 cents
    elif rules.vig_cent_rounding == "down":
        vig = hundredths // 100
    else:
        vig = -(-hundredths // 100)  # ceil to the cent, integers only
    return min(vig, amount)


def settle_wager(outcome: str, stake_cents: int, rules: PaigowRules) -> int:
    """Net result of one wager to the player, in cents.

    * ``"win"``  -> ``stake - commission(stake)``, 1:1 less vigorish (f)(9)-(10); never
      negative (note 4 of the module docstring).
    * ``"push"`` -> 0, "the dealer shall not collect or pay the wager" (f)(8).
    * ``"lose"`` -> ``-stake`` (f)(7).
    * ``"surrender"`` -> ``-stake``, the dealer "immediately collect[s] the wager" (f)(5); raises
      :class:`SettlementError` when ``rules.surrender_offered`` is False.

    The same function settles a wager against a player bank; the vigorish goes to the house
    ((g)(18)); see :mod:`banking` for the rest of a bank round.

    >>> settle_wager("win", 1000, PaigowRules()), settle_wager("lose", 1000, PaigowRules())
    (950, -1000)
    """
    rules = _check_rules(rules)
    stake = _check_cents("stake_cents", stake_cents)
    if outcome == WIN:
        return stake - commission(stake, rules)
    if outcome == PUSH:
        return 0
    if outcome == LOSE:
        return -stake
    if outcome == SURRENDER:
        if not rules.surrender_offered:
            raise SettlementError("surrender is not offered under these rules (5324.50(f)(5))")
        return -stake
    raise SettlementError(f"outcome must be one of {', '.join(OUTCOMES)}; got {outcome!r}")


def may_surrender(
    *, dealer_hands_set: bool, player_hands_exposed: bool, rules: PaigowRules
) -> bool:
    """Whether a player may still surrender (5324.50(f)(5); 13:69F-10.7(f)): "after the hands of
    the dealer have been set" and "prior to the dealer exposing either of the two hands of that
    player"."""
    rules = _check_rules(rules)
    return rules.surrender_offered and bool(dealer_hands_set) and not bool(player_hands_exposed)


# ---------------------------------------------------------------------------------------------
# Two adjacent betting areas, 5324.50(h)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AreaWager:
    """One of a player's betting areas: ``area`` is its place in the counter-clockwise rotation
    (any ordered number, e.g. the seat number counting from the player farthest to the dealer's
    right), ``stake_cents`` the wager on it."""

    area: int
    stake_cents: int


def setting_order(first: AreaWager, second: AreaWager) -> tuple[AreaWager, AreaWager]:
    """The order in which a player on two adjacent betting areas must rank and set the hands
    (5324.50(h)(2)):

    (i) "If the two wagers are not equal, the player shall be required to rank and set the hand
    with the larger wager before ranking and setting the other hand."
    (ii) "If the two wagers are equal, each hand shall be played separately in a counterclockwise
    rotation with first hand being ranked and set before the second hand." -- the area earlier in
    the counter-clockwise rotation (smaller ``area``) first.

    Adjacency itself ((h)(1)) depends on the layout: check it with :func:`check_two_areas`.

    >>> setting_order(AreaWager(3, 500), AreaWager(4, 2500))
    (AreaWager(area=4, stake_cents=2500), AreaWager(area=3, stake_cents=500))
    """
    for name, w in (("first", first), ("second", second)):
        if not isinstance(w, AreaWager):
            raise SettlementError(f"{name} must be an AreaWager, got {type(w).__name__}")
        _check_cents(f"stake on area {w.area}", w.stake_cents)
        if isinstance(w.area, bool) or not isinstance(w.area, int):
            raise SettlementError(f"area must be an int, got {w.area!r}")
    if first.area == second.area:
        raise SettlementError(f"the two wagers are on the same area {first.area}")
    if first.stake_cents != second.stake_cents:
        return (first, second) if first.stake_cents > second.stake_cents else (second, first)
    return (first, second) if first.area < second.area else (second, first)


def check_two_areas(areas: Sequence[int], *, seats: int = 6, is_bank: bool = False) -> None:
    """Raise :class:`SettlementError` unless ``areas`` (the betting areas one player wagers on,
    numbered 1..``seats`` counter-clockwise) are allowed: at most two, adjacent ((h)(1)), and only
    one for the player who is the bank ((h)(4), (g)(6)). Areas 1 and ``seats`` are the two ends
    of the layout, not neighbours."""
    nums = list(areas)
    for a in nums:
        if isinstance(a, bool) or not isinstance(a, int) or not 1 <= a <= seats:
            raise SettlementError(f"betting area {a!r} is not an area 1-{seats}")
    if len(set(nums)) != len(nums):
        raise SettlementError(f"a betting area is listed twice: {nums}")
    if not nums:
        raise SettlementError("no betting area given")
    if is_bank and len(nums) > 1:
        raise SettlementError(
            f"a player who is the bank may wager on only one betting area (5324.50(g)(6), (h)(4)); "
            f"got {sorted(nums)}"
        )
    if len(nums) > 2:
        raise SettlementError(
            "a player may wager on no more than two betting areas (5324.50(h)(1)); "
            f"got {sorted(nums)}"
        )
    if len(nums) == 2 and abs(nums[0] - nums[1]) != 1:
        raise SettlementError(
            "the two betting areas of one player must be adjacent (5324.50(h)(1)); "
            f"got {sorted(nums)}"
        )
