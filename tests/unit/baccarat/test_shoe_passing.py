"""Offering and passing the shoe, 9 NYCRR 5324.20(f)(1), (h)(1)-(2)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.games.baccarat.errors import BaccaratError
from controller.games.baccarat.shoe_passing import (
    SeatError,
    SeatRing,
    after_round,
    first_to_accept,
    opening_offer_order,
    passing_offer_order,
)

# A big table with no seat 13, numbers increasing counter-clockwise.
BIG = SeatRing.numbered(15, skip=(13,))


def test_opening_offer_starts_at_seat_one() -> None:
    """(f)(1): "offer the shoe to the player in seat number one at the table. If such player
    rejects the shoe ..., the dealer shall offer the shoe to each of the other players, in turn,
    counter-clockwise around the table"."""
    assert opening_offer_order(BIG, {1, 4, 9, 14}) == (1, 4, 9, 14)
    assert first_to_accept(opening_offer_order(BIG, {1, 4, 9}), {4, 9}) == 4


def test_opening_offer_with_seat_one_empty() -> None:
    """(f)(1): "or if there is no one in seat number one": the next occupied seat ccw from it."""
    assert opening_offer_order(BIG, {15, 3, 8}) == (3, 8, 15)


def test_opening_offer_follows_the_layouts_direction() -> None:
    """A layout whose numbers run clockwise lists its seats in reverse: seat 1, then 7, 6, ..."""
    ring = SeatRing((1, 7, 6, 5, 4, 3, 2))
    assert opening_offer_order(ring, {2, 3, 6}) == (6, 3, 2)


def test_passing_goes_to_the_right_of_the_previous_curator() -> None:
    """(h)(2): "offer the shoe to the player immediately to the right of the previous curator and,
    if such player does not accept the shoe or there is no player in that position, ... to each of
    the other players, in turn, counterclockwise around the table." Curator at 12: seat 14 (no 13)
    first, then round past 15 to 1."""
    assert passing_offer_order(BIG, {1, 5, 12, 14}, 12) == (14, 1, 5)
    assert passing_offer_order(BIG, {1, 5, 12, 14}, 12, offer_back=True) == (14, 1, 5, 12)
    # The previous curator has left the table: the order still starts from their seat.
    assert passing_offer_order(BIG, {2, 9}, 5) == (9, 2)


def test_nobody_accepts() -> None:
    """(h)(2): "If no player accepts the cards, the dealer shall turn the cards over"."""
    assert first_to_accept(passing_offer_order(BIG, {2, 3}, 2), set()) is None
    assert first_to_accept((), {1}) is None


@pytest.mark.parametrize(
    ("winner", "passes"), [("player", True), ("banker", False), ("tie", False)]
)
def test_banker_loss_compels_passing(winner: str, passes: bool) -> None:
    """(h)(1)(i): "the curator shall pass the shoe whenever the banker's hand loses". A tie is not
    a loss of the banker's hand: the curator may remain."""
    p = after_round(winner)
    assert p.passes is passes
    assert ("(h)(1)(i)" in p.reason) is passes


def test_curators_option_and_order() -> None:
    """(h)(1): "It shall be the option of the curator, after any round of play, either to pass the
    shoe or remain"; (h)(1)(ii) the dealer or floorperson "may order the curator to pass"."""
    assert after_round("banker", curator_passes=True).passes
    p = after_round("tie", ordered=True)
    assert p.passes and "(h)(1)(ii)" in p.reason


def test_hand_nobody_wagers_on() -> None:
    """A hand dealt under (i)(1)(ii) that no player wagers on: by default a banker loss there does
    not compel passing; the setting makes it do so."""
    assert not after_round("player", wagered=False).passes
    assert after_round("player", wagered=False, dead_hand_compels=True).passes


def test_bad_seats_refused() -> None:
    for bad in ((), (2, 3), (1, 1), (1, 0), [1, 2]):
        with pytest.raises(SeatError) as e:
            SeatRing(bad)  # type: ignore[arg-type]
        assert isinstance(e.value, BaccaratError) and isinstance(e.value, ValueError)
    with pytest.raises(SeatError, match="seat 13"):
        passing_offer_order(BIG, {1}, 13)
    with pytest.raises(SeatError, match=r"\[13\]"):
        opening_offer_order(BIG, {1, 13})
    with pytest.raises(SeatError):
        after_round("nobody")
    with pytest.raises(SeatError):
        SeatRing.numbered(0)


@settings(max_examples=100)
@given(st.sets(st.integers(1, 9), min_size=1), st.integers(1, 9))
def test_passing_order_is_every_other_player_once_counter_clockwise(
    occupied: set[int], previous: int
) -> None:
    """Computed independently: on a 9-seat table numbered counter-clockwise, the k-th seat to the
    right of seat p is ((p - 1 + k) mod 9) + 1."""
    ring = SeatRing.numbered(9)
    expected = tuple(s for k in range(1, 9) if (s := (previous - 1 + k) % 9 + 1) in occupied)
    assert passing_offer_order(ring, occupied, previous) == expected
