"""Dealing a coup: 9 NYCRR 5324.20(f)(5), (f)(8), (f)(10)-(13), (g)(1), (i)(4)."""

from collections.abc import Sequence
from typing import overload

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.games import baccarat
from controller.games.baccarat import Card, ShoeExhausted

from .test_third_card import F13

ALL = list(baccarat.DECK)
# A rank for each value 0-9 (0: a king).
RANK_OF = {0: "K", 1: "A", **{v: str(v) for v in range(2, 10)}}


def two_cards_totalling(total: int, suit: str) -> list[Card]:
    """Two cards with a point count of ``total`` (a ten and a card of that value)."""
    return [baccarat.card("T" + suit), baccarat.card(RANK_OF[total] + suit)]


def shoe_for(player2: int, banker2: int, rest: Sequence[int] = (4, 4)) -> list[Card]:
    """Cards in shoe order giving the player and banker these two-card totals, then ``rest``."""
    p = two_cards_totalling(player2, "S")
    b = two_cards_totalling(banker2, "H")
    # 5324.20(f)(5): first and third to the player, second and fourth to the banker.
    return [p[0], b[0], p[1], b[1]] + [baccarat.card(RANK_OF[v] + "D") for v in rest]


class SpySequence(Sequence[Card]):
    """A list that records the highest index read."""

    def __init__(self, cards: list[Card]) -> None:
        self._cards = cards
        self.highest = -1

    @overload
    def __getitem__(self, i: int) -> Card: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Card]: ...
    def __getitem__(self, i: int | slice) -> Card | Sequence[Card]:
        if isinstance(i, slice):
            raise AssertionError("deal should not slice")
        self.highest = max(self.highest, i)
        return self._cards[i]

    def __len__(self) -> int:
        return len(self._cards)


def reference_coup(cards: Sequence[Card]) -> tuple[list[Card], list[Card]]:
    """The rules written out as the regulation reads, one step at a time, for comparison."""
    it = iter(cards)
    player = [next(it)]
    banker = [next(it)]
    player.append(next(it))
    banker.append(next(it))  # (f)(5)

    def total(hand: list[Card]) -> int:
        return sum(c.value for c in hand) % 10  # (a)(4)(ii)

    p, b = total(player), total(banker)
    if p >= 8 or b >= 8:  # (f)(10)
        return player, banker
    if p <= 5:  # (f)(11)
        player.append(next(it))  # (f)(8): the player's third card first
        draws, _ = F13[b]  # (f)(13)
        if player[2].value in draws:
            banker.append(next(it))
    elif b <= 5:  # (f)(12): player stood on 6 or 7
        banker.append(next(it))
    return player, banker


# --- (f)(5): the order of the first four cards ----------------------------------------------


def test_f5_first_and_third_to_player_second_and_fourth_to_banker() -> None:
    cards = baccarat.cards("2S 3H 4D 5C 9S 9H")  # player 2+4=6, banker 3+5=8: natural
    coup = baccarat.deal(cards)
    assert coup.player == tuple(baccarat.cards("2S 4D"))
    assert coup.banker == tuple(baccarat.cards("3H 5C"))
    assert coup.cards_used == 4


# --- (f)(10): naturals ------------------------------------------------------------------------


@pytest.mark.parametrize("natural", [8, 9])
@pytest.mark.parametrize("other", range(10))
def test_f10_a_natural_on_either_side_ends_the_coup(natural: int, other: int) -> None:
    for player2, banker2 in ((natural, other), (other, natural)):
        coup = baccarat.deal(shoe_for(player2, banker2))
        assert coup.cards_used == 4
        assert (coup.player_total, coup.banker_total) == (player2, banker2)
        assert coup.player_natural is (player2 >= 8)
        assert coup.banker_natural is (banker2 >= 8)
        assert coup.natural


# --- (f)(11)-(12): the player stands on 6-7; the banker then draws on 0-5 --------------------


@pytest.mark.parametrize("player2", [6, 7])
@pytest.mark.parametrize("banker2", range(8))
def test_f11_f12_player_stands_banker_by_own_total(player2: int, banker2: int) -> None:
    coup = baccarat.deal(shoe_for(player2, banker2, rest=(3, 9)))
    assert len(coup.player) == 2  # (f)(11): 6 to 9 stays
    assert coup.player_third is None
    if banker2 <= 5:  # (f)(12)
        assert len(coup.banker) == 3 and coup.banker_third == baccarat.card("3D")
        assert coup.banker_total == (banker2 + 3) % 10
    else:
        assert len(coup.banker) == 2 and coup.banker_third is None
    assert not coup.natural


# --- (f)(11), (f)(13): every cell through deal -------------------------------------------------


@pytest.mark.parametrize("player2", range(6))
@pytest.mark.parametrize("banker2", range(8))
@pytest.mark.parametrize("third", range(10))
def test_f13_every_cell_through_deal(player2: int, banker2: int, third: int) -> None:
    coup = baccarat.deal(shoe_for(player2, banker2, rest=(third, 2)))
    # (f)(11): the player draws on 0-5; (f)(8): the fifth card is the player's.
    assert coup.player_third == baccarat.card(RANK_OF[third] + "D")
    assert coup.player_total == (player2 + third) % 10
    draws, _ = F13[banker2]
    if third in draws:
        assert coup.cards_used == 6 and coup.banker_third == baccarat.card("2D")
        assert coup.banker_total == (banker2 + 2) % 10
    else:
        assert coup.cards_used == 5 and coup.banker_third is None
        assert coup.banker_total == banker2


# --- hypothesis: deal draws exactly the cards the rules require --------------------------------

six_cards = st.lists(st.sampled_from(ALL), min_size=6, max_size=12)


@given(six_cards)
def test_deal_matches_the_rules_as_written(cards: list[Card]) -> None:
    player, banker = reference_coup(cards)
    coup = baccarat.deal(cards)
    assert list(coup.player) == player
    assert list(coup.banker) == banker
    assert coup.cards_used == len(player) + len(banker)
    assert coup.player_total == baccarat.hand_total(player)
    assert coup.banker_total == baccarat.hand_total(banker)


@given(six_cards)
def test_deal_never_draws_a_card_the_rules_forbid(cards: list[Card]) -> None:
    coup = baccarat.deal(cards)
    p2 = baccarat.hand_total(coup.player[:2])
    b2 = baccarat.hand_total(coup.banker[:2])
    natural = p2 >= 8 or b2 >= 8
    # The player draws if and only if (f)(10)-(11) call for it.
    assert (coup.player_third is not None) is (not natural and baccarat.player_draws(p2))
    # The banker draws if and only if (f)(12)-(13) call for it.
    third = coup.player_third.value if coup.player_third is not None else None
    assert (coup.banker_third is not None) is (not natural and baccarat.banker_draws(b2, third))
    # (f)(5), (f)(8): the cards went out in shoe order, the player's third before the banker's.
    order = [coup.player[0], coup.banker[0], coup.player[1], coup.banker[1]]
    order += [c for c in (coup.player_third, coup.banker_third) if c is not None]
    assert order == cards[: coup.cards_used]


@given(six_cards, st.integers(min_value=0, max_value=6))
def test_deal_reads_no_card_beyond_the_coup(cards: list[Card], start: int) -> None:
    spy = SpySequence(cards)
    if len(cards) - start < 6:
        return
    coup = baccarat.deal(spy, start)
    assert spy.highest == start + coup.cards_used - 1
    assert coup == baccarat.deal(cards[start:])


@given(six_cards)
def test_deal_from_an_iterator_takes_exactly_the_coup(cards: list[Card]) -> None:
    it = iter(cards)
    coup = baccarat.deal(it)
    assert list(it) == cards[coup.cards_used :]


@given(six_cards)
def test_deal_accepts_codes(cards: list[Card]) -> None:
    assert baccarat.deal([c.code for c in cards]) == baccarat.deal(cards)


@given(six_cards, st.integers(min_value=0, max_value=6))
def test_resolve_values_agrees_with_deal(cards: list[Card], start: int) -> None:
    if len(cards) - start < 6:
        return
    coup = baccarat.deal(cards, start)
    values = [c.value for c in cards]
    assert baccarat.resolve_values(values, start) == (
        coup.player_total,
        coup.banker_total,
        coup.cards_used,
    )


# --- (i)(4): too few cards ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("codes", "needed"),
    [
        ("", 4),
        ("9S 9H 9D", 4),
        ("TS TH TD", 4),
        ("TS TH 6D 2C", 5),  # player 6 stays, banker 2 draws (f)(12): a fifth card
        ("TS TH TD TC", 5),  # player 0 draws (f)(11)
        ("TS TH TD TC 5S", 6),  # banker 0 draws on anything (f)(13)
    ],
)
def test_running_out_says_how_many_cards_the_coup_needed(codes: str, needed: int) -> None:
    cards = list(baccarat.cards(codes))
    for source in (cards, iter(cards), [c.code for c in cards]):
        with pytest.raises(ShoeExhausted, match=f"needed {needed} cards") as info:
            baccarat.deal(source)
        assert info.value.needed == needed
        assert info.value.available == len(cards)
    with pytest.raises(ShoeExhausted, match=f"needed {needed} cards"):
        baccarat.resolve_values([c.value for c in cards])


def test_deal_exhausted_from_a_start_offset() -> None:
    cards = list(baccarat.cards("5S TH TD TC KS"))  # from index 1: both 0, the player draws
    with pytest.raises(ShoeExhausted, match="needed 5 cards and only 4"):
        baccarat.deal(cards, 1)


def test_negative_start_is_refused() -> None:
    with pytest.raises(ValueError):
        baccarat.deal(list(baccarat.DECK), -1)


# --- (g)(1): the result; the EZ flags; the margin ------------------------------------------------


@pytest.mark.parametrize(
    ("codes", "winner", "pt", "bt"),
    [
        ("9S TH KD 3C", "player", 9, 3),  # player natural 9
        ("3S 8H 4D TC", "banker", 7, 8),  # banker natural 8
        ("6S 7H KD TC", "banker", 6, 7),  # player 6 stays; banker 7 stands
        ("6S 6H KD KC", "tie", 6, 6),
    ],
)
def test_g1_winner(codes: str, winner: str, pt: int, bt: int) -> None:
    coup = baccarat.deal(baccarat.cards(codes))
    assert (coup.player_total, coup.banker_total) == (pt, bt)
    assert coup.winner == winner
    assert coup.margin == abs(pt - bt)


def test_dragon7_is_a_three_card_banker_7_that_wins() -> None:
    # player 2+3=5 draws a K: 5; banker 3+T=3, player's third is 0: draws (f)(13), a 4: 7.
    coup = baccarat.deal(baccarat.cards("2S 3H 3D TC KS 4H"))
    assert (coup.player_total, coup.banker_total, len(coup.banker)) == (5, 7, 3)
    assert coup.winner == "banker" and coup.dragon7 and not coup.panda8


def test_two_card_banker_7_is_not_a_dragon7() -> None:
    coup = baccarat.deal(baccarat.cards("2S 3H 3D 4C KS"))  # banker 7 stands on two cards
    assert coup.banker_total == 7 and len(coup.banker) == 2 and coup.winner == "banker"
    assert not coup.dragon7


def test_three_card_banker_7_that_ties_is_not_a_dragon7() -> None:
    # player 3+4=7 stays; banker 2+T=2 draws a 5: 7, a tie.
    coup = baccarat.deal(baccarat.cards("3S 2H 4D TC 5S"))
    assert (coup.player_total, coup.banker_total, len(coup.banker)) == (7, 7, 3)
    assert coup.winner == "tie" and not coup.dragon7


def test_panda8_is_a_three_card_player_8_that_wins() -> None:
    # player 2+3=5 draws a 3: 8; banker 6+T=6 stands on a third card of 3 (f)(13).
    coup = baccarat.deal(baccarat.cards("2S 6H 3D TC 3S"))
    assert (coup.player_total, coup.banker_total, len(coup.player)) == (8, 6, 3)
    assert coup.winner == "player" and coup.panda8 and not coup.dragon7


def test_natural_8_is_not_a_panda8() -> None:
    coup = baccarat.deal(baccarat.cards("4S 2H 4D TC"))
    assert coup.player_natural and not coup.panda8


def test_coup_prints() -> None:
    coup = baccarat.deal(baccarat.cards("9S TH KD 3C"))
    assert str(coup) == "player 9S KD = 9, banker TH 3C = 3: player"
