"""Cards, values and point counts: 9 NYCRR 5324.20(a)(4), (e)."""

import copy
import pickle

import pytest

from controller.games import baccarat
from controller.games.baccarat import BaccaratError, CardError


def test_all_52_codes_parse_and_print() -> None:
    codes = [r + s for s in "SHDC" for r in "A23456789TJQK"]
    parsed = [baccarat.card(c) for c in codes]
    assert [str(c) for c in parsed] == codes
    assert [c.code for c in parsed] == codes
    assert len(set(parsed)) == 52
    assert tuple(parsed) == baccarat.DECK


def test_parse_fields() -> None:
    c = baccarat.card("TD")
    assert (c.rank, c.suit, c.code) == ("T", "D", "TD")
    assert repr(c) == "card('TD')"


@pytest.mark.parametrize(
    ("rank", "value"),
    [("A", 1)]  # 5324.20(a)(4)(i)(c): an ace is one
    + [(str(v), v) for v in range(2, 10)]  # (a)(4)(i)(a): 2-9 face value
    + [("T", 0), ("J", 0), ("Q", 0), ("K", 0)],  # (a)(4)(i)(b): 10 and faces zero
)
def test_card_values_a4i(rank: str, value: int) -> None:
    for suit in "SHDC":
        c = baccarat.card(rank + suit)
        assert c.value == value
        assert baccarat.card_value(c) == value


@pytest.mark.parametrize(
    ("rank", "burn"),
    [("A", 1)] + [(str(v), v) for v in range(2, 10)] + [(r, 10) for r in "TJQK"],
)
def test_burn_values_e(rank: str, burn: int) -> None:
    # 5324.20(e): "face cards and 10s count as 10 and aces count as 1".
    assert baccarat.burn_value(baccarat.card(rank + "S")) == burn


@pytest.mark.parametrize(
    ("codes", "total"),
    [
        ("9H 9D", 8),  # 18 -> 8, 5324.20(a)(4)(ii)
        ("KH 5D", 5),
        ("TS JS QS", 0),
        ("9H 9D 9C", 7),  # 27 -> 7
        ("AS 8C", 9),
        ("5S 5C", 0),
        ("7S 6H 4D", 7),  # 17 -> 7
    ],
)
def test_point_count_a4ii(codes: str, total: int) -> None:
    hand = baccarat.cards(codes)
    assert baccarat.hand_total(hand) == total
    assert baccarat.point_count(c.value for c in hand) == total


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("1D", "rank '1'"),
        ("T", "two characters"),
        ("TX", "suit 'X'"),
        ("10D", "the ten is written T"),
        ("", "two characters"),
        ("td", "rank 't'"),
        ("TDS", "two characters"),
    ],
)
def test_bad_codes_name_the_problem(code: str, words: str) -> None:
    with pytest.raises(ValueError, match=words) as info:
        baccarat.card(code)
    assert isinstance(info.value, CardError)
    assert isinstance(info.value, BaccaratError)


def test_non_string_is_refused() -> None:
    with pytest.raises(CardError, match="string"):
        baccarat.card(10)  # type: ignore[arg-type]


def test_cards_are_interned_and_immutable() -> None:
    c = baccarat.card("QH")
    assert baccarat.Card("QH") is c
    assert pickle.loads(pickle.dumps(c)) is c
    assert copy.copy(c) is c and copy.deepcopy(c) is c
    with pytest.raises(AttributeError):
        c.value = 5  # type: ignore[misc]


def test_shoe_cards() -> None:
    shoe = baccarat.shoe_cards(8)
    assert len(shoe) == 416
    assert baccarat.composition_of(shoe) == (128,) + (32,) * 9
    with pytest.raises(CardError):
        baccarat.shoe_cards(0)
