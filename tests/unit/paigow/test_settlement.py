"""One wager in integer cents: 1:1 less vigorish (5324.50(f)(10); 13:69F-10.7(k)), the optional
25-cent rounding, push and loss ((f)(7)-(8)), surrender ((f)(5); 13:69F-10.7(f)), and the order of
two adjacent betting areas ((h))."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.games.paigow.errors import PaigowError
from controller.games.paigow.settlement import (
    OUTCOMES,
    AreaWager,
    PaigowRules,
    SettlementError,
    VigCentRounding,
    check_two_areas,
    commission,
    may_surrender,
    setting_order,
    settle_wager,
)

PLAIN = PaigowRules()
QUARTER = PaigowRules(round_vig_to_quarter=True)


# ---------------------------------------------------------------------------------------------
# Win, push, lose -- worked amounts
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stake", "net"),
    [
        (1000, 950),  # $10 wins $10, vig 50c
        (2000, 1900),  # $20 -> vig $1.00
        (2500, 2375),  # $25 -> vig $1.25
        (500, 475),  # $5  -> vig 25c
        (100, 95),  # $1  -> vig 5c
        (1010, 959),  # $10.10 -> vig 50.5c, rounded UP to 51c (sub-cent goes to the house)
        (1, 0),  # 1 cent -> vig 0.05c -> 1c (never more than the win)
        (20, 19),  # 20c -> vig exactly 1c
        (21, 19),  # 21c -> 1.05c -> 2c
        (100_000, 95_000),  # $1,000 -> $50
    ],
)
def test_win_pays_one_to_one_less_five_percent(stake: int, net: int) -> None:
    """(f)(10): "paid ... at no less than odds of 1:1, except that a gaming facility shall collect
    a vigorish from the winning player in an amount equal to five percent of the amount won"."""
    assert settle_wager("win", stake, PLAIN) == net


@pytest.mark.parametrize(
    ("stake", "vig", "net"),
    [
        (1000, 50, 950),  # 50c is a multiple of 25c: stays
        (500, 25, 475),  # exactly 25c: stays
        (2000, 100, 1900),  # $1.00: stays
        (2500, 125, 2375),  # $1.25: stays
        (100, 25, 75),  # 5c  -> "round off the vigorish to 25 cents"
        (200, 25, 175),  # 10c -> 25c
        (1100, 75, 1025),  # 55c -> "the next highest multiple of 25 cents" 75c
        (1200, 75, 1125),  # 60c -> 75c
        (1600, 100, 1500),  # 80c -> $1.00
        (2100, 125, 1975),  # $1.05 -> $1.25
        (510, 50, 460),  # 25.5c -> 26c -> 50c
        (24, 24, 0),  # 1.2c -> 2c -> 25c, capped at the 24c won
    ],
)
def test_quarter_rounding_rounds_up_and_keeps_exact_multiples(
    stake: int, vig: int, net: int
) -> None:
    """(f)(10): "the gaming facility may round off the vigorish to 25 cents or the next highest
    multiple of 25 cents" -- up, an exact multiple of 25 cents staying as it is."""
    assert commission(stake, QUARTER) == vig
    assert settle_wager("win", stake, QUARTER) == net


def test_push_is_zero() -> None:
    """(f)(8): "the dealer shall not collect or pay the wager"."""
    assert settle_wager("push", 1000, PLAIN) == 0
    assert settle_wager("push", 1010, QUARTER) == 0


def test_lose_is_the_whole_stake() -> None:
    """(f)(7): "All losing wagers shall be collected by the dealer"."""
    assert settle_wager("lose", 1000, PLAIN) == -1000
    assert settle_wager("lose", 1010, QUARTER) == -1010


def test_surrender_forfeits_the_whole_stake() -> None:
    """(f)(5): "Once the player has announced an intention to surrender, the dealer shall: (i)
    immediately collect the wager from such player" -- the whole wager, nothing returned."""
    assert settle_wager("surrender", 1000, PLAIN) == -1000
    assert settle_wager("surrender", 1010, QUARTER) == -1010


def test_surrender_not_offered() -> None:
    rules = PaigowRules(surrender_offered=False)
    with pytest.raises(SettlementError, match="surrender is not offered"):
        settle_wager("surrender", 1000, rules)


def test_surrender_window() -> None:
    """(f)(5): "after the hands of the dealer have been set ... prior to the dealer exposing
    either of the two hands of that player"."""
    assert may_surrender(dealer_hands_set=True, player_hands_exposed=False, rules=PLAIN)
    assert not may_surrender(dealer_hands_set=False, player_hands_exposed=False, rules=PLAIN)
    assert not may_surrender(dealer_hands_set=True, player_hands_exposed=True, rules=PLAIN)
    assert not may_surrender(
        dealer_hands_set=True,
        player_hands_exposed=False,
        rules=PaigowRules(surrender_offered=False),
    )


def test_no_vigorish_variation() -> None:
    """13:69F-10.7(l)2: the dragon's eye variation may extract no vigorish in the tiles phase."""
    free = PaigowRules(vig_percent=0, round_vig_to_quarter=True)
    assert settle_wager("win", 1000, free) == 1000
    assert commission(1000, free) == 0  # 0 is a multiple of 25: no rounding up to 25c


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "stake", "message"),
    [
        ("won", 1000, r"outcome must be one of win, push, lose, surrender; got 'won'"),
        ("WIN", 1000, "got 'WIN'"),
        ("win", 0, "stake_cents must be a positive number of cents, got 0"),
        ("win", -500, "got -500"),
        ("win", 10.5, "whole number of cents .int., got float 10.5"),
        ("win", True, "got bool True"),
        ("win", "1000", "got str"),
    ],
)
def test_bad_wager_is_a_clear_value_error(outcome: str, stake: object, message: str) -> None:
    with pytest.raises(SettlementError, match=message):
        settle_wager(outcome, stake, PLAIN)  # type: ignore[arg-type]


def test_errors_are_paigow_value_errors() -> None:
    assert issubclass(SettlementError, PaigowError) and issubclass(SettlementError, ValueError)
    with pytest.raises(ValueError):
        settle_wager("win", 1000, {"vig_percent": 5})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"vig_percent": 101}, "vig_percent must be a whole percent 0-100, got 101"),
        ({"vig_percent": -1}, "got -1"),
        ({"vig_percent": 4.5}, "got 4.5"),
        ({"round_vig_to_quarter": 1}, "round_vig_to_quarter must be True or False"),
        ({"co_bank_offered": True}, "co_bank_offered needs player_bank_offered"),
    ],
)
def test_bad_rules(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(SettlementError, match=message):
        PaigowRules(**kwargs)  # type: ignore[arg-type]


def test_rules_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        PLAIN.vig_percent = 4  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# Money properties
# ---------------------------------------------------------------------------------------------

rules_st = st.builds(
    PaigowRules,
    vig_percent=st.integers(0, 100),
    round_vig_to_quarter=st.booleans(),
)


@given(stake=st.integers(1, 10**9), rules=rules_st)
def test_commission_never_exceeds_the_percentage_plus_rounding(
    stake: int, rules: PaigowRules
) -> None:
    vig = commission(stake, rules)
    exact_times_100 = stake * rules.vig_percent  # the exact commission, in hundredths of a cent
    assert vig * 100 >= exact_times_100 or vig == stake  # never less than the stated percent...
    slack = 25 if rules.round_vig_to_quarter else 1
    assert vig * 100 < exact_times_100 + slack * 100  # ...and less than one rounding step above
    assert 0 <= vig <= stake
    if rules.round_vig_to_quarter:
        assert vig % 25 == 0 or vig == stake


@given(stake=st.integers(1, 10**9), rules=rules_st)
def test_a_win_never_costs_and_never_pays_more_than_the_stake(
    stake: int, rules: PaigowRules
) -> None:
    net = settle_wager("win", stake, rules)
    assert 0 <= net <= stake
    assert settle_wager("push", stake, rules) == 0
    assert settle_wager("lose", stake, rules) == -stake


@given(stake=st.integers(25 * 20, 10**9))
def test_quarter_rounding_costs_at_most_24_cents_more(stake: int) -> None:
    assert 0 <= commission(stake, QUARTER) - commission(stake, PLAIN) <= 24


@given(outcome=st.sampled_from(OUTCOMES), stake=st.integers(1, 10**7))
def test_result_is_an_int(outcome: str, stake: int) -> None:
    assert type(settle_wager(outcome, stake, QUARTER)) is int


# ---------------------------------------------------------------------------------------------
# Two adjacent betting areas, (h)
# ---------------------------------------------------------------------------------------------


def test_larger_wager_is_set_first() -> None:
    """(h)(2)(i): "If the two wagers are not equal, the player shall be required to rank and set
    the hand with the larger wager before ranking and setting the other hand." """
    small, large = AreaWager(area=3, stake_cents=500), AreaWager(area=4, stake_cents=2500)
    assert setting_order(small, large) == (large, small)
    assert setting_order(large, small) == (large, small)


def test_equal_wagers_go_counter_clockwise() -> None:
    """(h)(2)(ii): "If the two wagers are equal, each hand shall be played separately in a
    counterclockwise rotation with first hand being ranked and set before the second hand." """
    a, b = AreaWager(area=2, stake_cents=1000), AreaWager(area=3, stake_cents=1000)
    assert setting_order(b, a) == (a, b)
    assert setting_order(a, b) == (a, b)


def test_setting_order_bad_input() -> None:
    with pytest.raises(SettlementError, match="same area 2"):
        setting_order(AreaWager(2, 100), AreaWager(2, 200))
    with pytest.raises(SettlementError, match="stake on area 3 must be a positive"):
        setting_order(AreaWager(2, 100), AreaWager(3, 0))


def test_two_areas_must_be_adjacent_and_one_for_the_bank() -> None:
    """(h)(1): "no more than two betting areas ..., which shall be adjacent to each other";
    (h)(4) / (g)(6): "If a player is the bank, the player may wager on only one betting area"."""
    check_two_areas([3])
    check_two_areas([3, 4])
    check_two_areas([4], is_bank=True)
    with pytest.raises(SettlementError, match=r"must be adjacent .* got \[2, 4\]"):
        check_two_areas([2, 4])
    with pytest.raises(SettlementError, match="adjacent"):
        check_two_areas([1, 6])  # the two ends of the layout
    with pytest.raises(SettlementError, match="no more than two"):
        check_two_areas([2, 3, 4])
    with pytest.raises(SettlementError, match="only one betting area"):
        check_two_areas([3, 4], is_bank=True)
    with pytest.raises(SettlementError, match="area 7 is not an area 1-6"):
        check_two_areas([6, 7])


# ---------------------------------------------------------------------------------------------
# Review: the sub-cent of (f)(10) is a named setting
# ---------------------------------------------------------------------------------------------


def test_sub_cent_vigorish_is_a_named_setting() -> None:
    """(f)(10): "a vigorish ... in an amount equal to five percent of the amount won". Five
    percent of $10.10 is 50.5 cents, which is no whole number of cents; the regulation names no
    direction for it (only the optional 25-cent rounding, which is up). ``vig_cent_rounding``:
    "up" (default, 51c) or "down" (50c, never more than five percent)."""
    assert PaigowRules().vig_cent_rounding == "up"
    assert commission(1010, PaigowRules()) == 51
    down = PaigowRules(vig_cent_rounding="down")
    assert commission(1010, down) == 50
    assert settle_wager("win", 1010, down) == 960
    assert commission(1000, down) == 50  # exact amounts are the same either way
    assert commission(21, down) == 1  # 1.05c -> 1c
    assert commission(1, down) == 0  # 0.05c -> 0c
    with pytest.raises(SettlementError, match="vig_cent_rounding must be"):
        PaigowRules(vig_cent_rounding="nearest")  # type: ignore[arg-type]


@pytest.mark.parametrize("cents", ["up", "down"])
def test_quarter_rounding_is_of_the_exact_vigorish(cents: str) -> None:
    """(f)(10): "round off the vigorish to 25 cents or the next highest multiple of 25 cents":
    the vigorish on $10.10 is 50.5 cents, above 50, so it goes to 75 cents whichever way a cent
    would be rounded; on $10.00 it is exactly 50 cents and stays."""
    rules = PaigowRules(round_vig_to_quarter=True, vig_cent_rounding=cents)  # type: ignore[arg-type]
    assert commission(1010, rules) == 75
    assert commission(1000, rules) == 50
    assert commission(510, rules) == 50  # 25.5c -> 50c
    assert commission(500, rules) == 25


@given(st.integers(1, 10**7), st.integers(0, 100), st.booleans())
def test_commission_matches_exact_fractions(stake: int, pct: int, quarter: bool) -> None:
    """Independent check of (f)(10) with exact fractions."""
    from fractions import Fraction
    from math import ceil, floor

    exact = Fraction(stake * pct, 100)
    modes: tuple[VigCentRounding, ...] = ("up", "down")
    for mode in modes:
        rules = PaigowRules(vig_percent=pct, round_vig_to_quarter=quarter, vig_cent_rounding=mode)
        if quarter:
            want = ceil(exact / 25) * 25
        else:
            want = ceil(exact) if mode == "up" else floor(exact)
        assert commission(stake, rules) == min(want, stake)
