"""Where the deal starts, checked against N.J.A.C. 13:69F-31.11's own words and examples."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.tables.startpos.layout import LayoutError, StartLayout

# The Asia poker layout as 13:69F-31.11 counts it: the dealer and six betting positions, listed
# clockwise as seen from above; counting counterclockwise from the dealer reaches betting
# position 1 first (31.11(b)3.ii: a total of 14 is "the sixth betting position").
ASIA = StartLayout(
    range_n=18,  # the three dice of 31.11(b) total 3 through 18
    positions=("dealer", "6", "5", "4", "3", "2", "1"),
    one="dealer",
    direction="counterclockwise",
    count_empty=True,
)


def test_the_regulations_dice_examples() -> None:
    # 13:69F-31.11(b)3.i: "If the dice total eight, the dealer would receive the first card"
    assert ASIA.start(8) == "dealer"
    # 13:69F-31.11(b)3.ii: "If the dice total 14, the sixth betting position would receive..."
    assert ASIA.start(14) == "6"


def test_rng_one_through_seven_counts_dealer_as_one_and_empty_positions() -> None:
    # 13:69F-31.11(c): number from 1 through 7, the dealer is number one, each betting position
    # counted "regardless of whether there is a wager at the position".
    rng = StartLayout(7, ASIA.positions, "dealer")
    expected = ["dealer", "1", "2", "3", "4", "5", "6"]
    assert [rng.start(n, occupied=()) for n in range(1, 8)] == expected


def test_clockwise_reverses_the_count() -> None:
    layout = StartLayout(7, ("bank", "a", "b", "c"), "bank", direction="clockwise")
    assert [layout.start(n) for n in range(1, 6)] == ["bank", "a", "b", "c", "bank"]
    ccw = StartLayout(7, ("bank", "a", "b", "c"), "bank")
    assert [ccw.start(n) for n in range(1, 6)] == ["bank", "c", "b", "a", "bank"]


def test_who_counts_as_one_is_the_bank_when_a_player_banks() -> None:
    # A player at betting position 3 banks: counting starts there (the layout's ``one``).
    layout = StartLayout(7, ASIA.positions, "3")
    assert layout.start(1) == "3"
    assert layout.start(2) == "4"
    assert layout.start(5) == "dealer"


def test_empty_positions_skipped_when_the_game_says_so() -> None:
    layout = StartLayout(7, ASIA.positions, "dealer", count_empty=False)
    assert layout.order(occupied={"2", "5"}) == ("dealer", "2", "5")
    assert layout.start(4, occupied={"2", "5"}) == "dealer"


@pytest.mark.parametrize("number", [0, 8, -1])
def test_number_outside_the_range_is_an_error(number: int) -> None:
    with pytest.raises(LayoutError, match="outside 1 through 7"):
        StartLayout(7, ASIA.positions, "dealer").start(number)


def test_bad_layouts_are_named() -> None:
    with pytest.raises(LayoutError, match="position one"):
        StartLayout(7, ("a", "b"), "c")
    with pytest.raises(LayoutError, match="distinct"):
        StartLayout(7, ("a", "a"), "a")
    with pytest.raises(LayoutError, match="range"):
        StartLayout(0, ("a",), "a")


@given(st.integers(1, 7), st.integers(1, 7))
def test_every_number_names_a_position_and_steps_by_one(number: int, seats: int) -> None:
    positions = tuple(str(i) for i in range(seats))
    layout = StartLayout(7, positions, "0")
    ring = layout.order()
    assert layout.start(number) == ring[(number - 1) % seats]
    assert sorted(ring) == sorted(positions)
