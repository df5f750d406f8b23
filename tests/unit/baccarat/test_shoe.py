"""The shoe, card by card: 9 NYCRR 5324.20(a)(4), (e), (f)(5)-(13), (f)(9), (i)(4)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.games.baccarat.cards import DECK, Card, card, cards
from controller.games.baccarat.coup import deal
from controller.games.baccarat.errors import BaccaratError, ShoeExhausted
from controller.games.baccarat.shoe import (
    COVER,
    BurnProgress,
    CardBeyondShoe,
    CoupInProgress,
    CoupStep,
    CoverCard,
    LastHandRule,
    ShoeComposition,
    ShoeStateError,
    ShoeStatus,
    ShoeValueError,
    burn_count,
    cards_with_cover,
    deal_shoe,
    void_for_short_shoe,
)

S = CoupStep


# --- composition, (a)(4) -----------------------------------------------------------------


def test_composition_holds_52_per_deck_and_at_least_six_decks() -> None:
    """(a)(4): "Baccarat shall be played with at least six decks of cards"."""
    shoe = ShoeComposition(8)
    assert shoe.cards_left == len(shoe) == 416
    assert shoe.remaining("AS") == 8
    # 16 zero-valued cards (T, J, Q, K) per deck, 4 of each other value: (a)(4)(i).
    assert shoe.values() == {0: 128, **{v: 32 for v in range(1, 10)}}
    assert shoe.ranks()["K"] == 32
    for bad in (5, 0, -1, True, 6.0, "8"):
        with pytest.raises(ShoeValueError, match=r"at least 6 decks"):
            ShoeComposition(bad)  # type: ignore[arg-type]


def test_composition_refuses_a_card_beyond_it() -> None:
    """A six-deck shoe holds six aces of spades; a seventh is a foreign card or a misread."""
    shoe = ShoeComposition(6)
    for _ in range(6):
        shoe.remove("AS")
    assert shoe.remaining(card("AS")) == 0
    assert shoe.cards_out == 6 and shoe.cards_left == 306
    with pytest.raises(CardBeyondShoe, match=r"AS cannot come out.*6 decks") as e:
        shoe.remove(card("AS"))
    assert isinstance(e.value, BaccaratError) and isinstance(e.value, ValueError)
    assert shoe.cards_left == 306  # the refused card changed nothing
    shoe.remove("AH")
    assert shoe.values()[1] == 24 - 7


def test_composition_copy_is_independent() -> None:
    shoe = ShoeComposition(6)
    other = shoe.copy()
    other.remove("KD")
    assert shoe.remaining("KD") == 6 and other.remaining("KD") == 5


# --- the burn, (e) ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "count"),
    [("AS", 1), ("2H", 2), ("5D", 5), ("9C", 9), ("TS", 10), ("JH", 10), ("QD", 10), ("KC", 10)],
)
def test_burn_count(code: str, count: int) -> None:
    """(e): "remove an additional amount of cards equal to the value of the first card drawn ...
    face cards and 10s count as 10 and aces count as 1"."""
    assert burn_count(code) == count


def test_burn_progress_first_card_face_up_then_its_value() -> None:
    """(e): a 3 turned face up burns three more; the fourth card after it starts the first hand."""
    burn = BurnProgress()
    assert burn.remaining == 1 and burn.face_up is None
    assert burn.add("3H") == 3
    assert burn.face_up is card("3H")
    assert [burn.add(c) for c in ("KS", "2D", "9C")] == [2, 1, 0]
    assert burn.done and burn.burned == cards("KS 2D 9C") and burn.cards_used == 4
    with pytest.raises(ShoeStateError, match="burn is complete"):
        burn.add("AS")


def test_burn_progress_from_a_card_already_face_up() -> None:
    """(i)(3): "the disclosed card and an additional number of cards equal to the value"."""
    burn = BurnProgress(face_up="QH")
    assert burn.remaining == 10 and burn.cards_used == 1


# --- a coup card by card, (f)(5)-(13) --------------------------------------------------------


def test_coup_natural_stops_after_four_cards() -> None:
    """(f)(5) first and third cards to the player, second and fourth to the banker; (f)(10) "If the
    point count of either ... is a natural, no more cards shall be dealt to either hand"."""
    coup = CoupInProgress()
    assert coup.expecting is S.PLAYER_CARD
    assert [coup.add(c) for c in ("9H", "TD", "KS", "2C")] == [
        S.BANKER_CARD,
        S.PLAYER_CARD,
        S.BANKER_CARD,
        S.COMPLETE,
    ]
    assert coup.player == cards("9H KS") and coup.banker == cards("TD 2C")
    assert coup.calls == (S.PLAYER_STANDS, S.BANKER_STANDS)
    assert coup.result().winner == "player" and coup.result().cards_used == 4


def test_coup_player_draws_then_banker_by_f13() -> None:
    """(f)(11) the player draws on 0-5; (f)(13) banker 3 draws unless the player's third card is
    an 8. Player A+4=5 draws 8; banker 2+A=3 stays: player 3, banker 3, a tie."""
    coup = CoupInProgress(cards("AS 2H 4D AC"))
    assert coup.expecting is S.PLAYER_DRAWS
    assert coup.add("8S") is S.COMPLETE
    assert coup.calls == (S.PLAYER_DRAWS, S.BANKER_STANDS)
    assert coup.result() == deal(cards("AS 2H 4D AC 8S"))
    assert coup.result().winner == "tie"


def test_coup_player_stands_banker_draws_by_f12() -> None:
    """(f)(12) "If the point count of the player's hand on the first two cards is 6 or 7, the
    banker's hand always shall draw on totals of 0, 1, 2, 3, 4 and 5". Player 6, banker 5 draws."""
    coup = CoupInProgress(cards("6S 2H KD 3C"))
    assert coup.expecting is S.BANKER_DRAWS
    assert coup.calls == (S.PLAYER_STANDS, S.BANKER_DRAWS)
    assert coup.banker == cards("2H 3C")
    assert coup.add("4D") is S.COMPLETE
    assert coup.banker == cards("2H 3C 4D") and coup.banker_total == 9
    assert coup.player == cards("6S KD")
    assert coup.result().winner == "banker"


def test_coup_both_draw_six_cards() -> None:
    """Player 0 draws a 7; banker 6 draws on 6-7 (f)(13); then the banker's card, complete."""
    coup = CoupInProgress(cards("TS 3H QD 3C"))
    assert coup.add("7H") is S.BANKER_DRAWS
    assert coup.add("AD") is S.COMPLETE
    assert coup.calls == (S.PLAYER_DRAWS, S.BANKER_DRAWS)
    assert (coup.player_total, coup.banker_total) == (7, 7)
    with pytest.raises(ShoeStateError, match="complete"):
        coup.add("2S")


def test_coup_result_refused_while_incomplete() -> None:
    coup = CoupInProgress(cards("TS 3H QD"))
    with pytest.raises(ShoeStateError, match="not complete.*'banker card'"):
        coup.result()


def test_cards_to_finish_bounds() -> None:
    assert (CoupInProgress().min_cards_to_finish, CoupInProgress().max_cards_to_finish) == (4, 6)
    both = CoupInProgress(cards("TS 3H QD 3C"))  # player draws
    assert (both.min_cards_to_finish, both.max_cards_to_finish) == (1, 2)
    bank = CoupInProgress(cards("6S 2H KD 3C"))  # banker only
    assert (bank.min_cards_to_finish, bank.max_cards_to_finish) == (1, 1)


card_lists = st.lists(st.sampled_from(DECK), min_size=6, max_size=6)


@settings(max_examples=300)
@given(card_lists)
def test_card_by_card_equals_deal(seq: list[Card]) -> None:
    """Fed one card at a time, the coup ends where ``deal`` ends and gives the same coup; the
    steps it announces name the hand that then receives the card."""
    expected = deal(seq)
    coup = CoupInProgress()
    for i, c in enumerate(seq):
        step = coup.expecting
        before_p, before_b = len(coup.player), len(coup.banker)
        coup.add(c)
        if step in (S.PLAYER_CARD, S.PLAYER_DRAWS):
            assert len(coup.player) == before_p + 1
        else:
            assert len(coup.banker) == before_b + 1
        if coup.complete:
            assert i + 1 == expected.cards_used
            break
    assert coup.result() == expected
    assert coup.cards == tuple(seq[: expected.cards_used])


@settings(max_examples=200)
@given(card_lists, st.integers(0, 6))
def test_void_for_short_shoe_agrees_with_deal(seq: list[Card], left: int) -> None:
    """(i)(4): "If there are insufficient cards remaining in the shoe to complete a round of play,
    that round shall be void": fed the ``left`` cards a shoe holds, the coup is void exactly when
    ``deal`` runs out on them."""
    coup = CoupInProgress()
    remaining = seq[:left]
    void = False
    while not coup.complete:
        if void_for_short_shoe(coup, len(remaining)):
            void = True
            break
        coup.add(remaining.pop(0))
    try:
        deal(seq[:left])
        assert not void
    except ShoeExhausted:
        assert void


def test_void_for_short_shoe_refuses_nonsense() -> None:
    with pytest.raises(ShoeValueError):
        void_for_short_shoe(CoupInProgress(), -1)
    assert void_for_short_shoe(CoupInProgress(), 3)
    assert not void_for_short_shoe(CoupInProgress(cards("9H TD KS 2C")), 0)


# --- the cover card and the last hand, (f)(9) ---------------------------------------------------


def test_last_hand_rule_one_more_hand_after_the_cover_card() -> None:
    """(f)(9): "Whenever the cover card appears during play ... the hand shall be completed. Upon
    completion of that hand, the dealer calling the game announces 'last hand.' After the last
    hand is dealt, the cards shall be re-shuffled." The cover card appears in hand 3: hand 3 is
    completed, "last hand" is announced, hand 4 is dealt, then the reshuffle."""
    rule = LastHandRule()
    assert [rule.hand_complete(), rule.hand_complete()] == [ShoeStatus.CONTINUE] * 2
    assert rule.cover_card() is CoverCard.CUT
    assert not rule.last_hand
    assert rule.hand_complete() is ShoeStatus.LAST_HAND
    assert rule.last_hand
    assert rule.hand_complete() is ShoeStatus.RESHUFFLE
    assert rule.finished and rule.hands_dealt == 4
    with pytest.raises(ShoeStateError, match="reshuffled"):
        rule.hand_complete()


def test_last_hand_rule_zero_hands_after_cover_setting() -> None:
    """The setting for the other reading: the hand in progress is the last."""
    rule = LastHandRule(hands_after_cover=0)
    rule.cover_card()
    assert rule.hand_complete() is ShoeStatus.RESHUFFLE
    with pytest.raises(ShoeValueError):
        LastHandRule(-1)


def test_two_cover_cards_and_no_third() -> None:
    """(a)(4): "two additional cover cards": the second is behind the last card."""
    rule = LastHandRule()
    assert rule.cover_card() is CoverCard.CUT
    assert rule.cover_card() is CoverCard.BOTTOM
    with pytest.raises(ShoeStateError, match="third"):
        rule.cover_card()


# --- a whole shoe -----------------------------------------------------------------------------


def _shuffled(decks: int, seed: int) -> list[Card]:
    deck = list(DECK) * decks
    random.Random(seed).shuffle(deck)
    return deck


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 415))
def test_whole_eight_deck_shoe(seed: int, cover_at: int) -> None:
    """A shuffled eight-deck shoe with the cover card anywhere: the burn of (e), coups as ``deal``
    deals them, one more hand after the one the cover card appears in (f)(9), and never more cards
    than the shoe holds; a round the cards cannot finish is void (i)(4)."""
    deck = _shuffled(8, seed)
    run = deal_shoe(cards_with_cover(deck, cover_at))
    burn_len = 1 + run.burn_face_up.burn_value
    assert run.burn_face_up is deck[0] and run.burned == tuple(deck[1:burn_len])
    # Every coup is the one deal() gives from where the previous one ended.
    pos = burn_len
    for coup in run.coups:
        assert coup == deal(deck, pos)
        pos += coup.cards_used
    void = run.void or ()
    assert run.cards_used == pos + len(void) <= 416
    if run.last_status is ShoeStatus.RESHUFFLE:
        # (f)(9): exactly one hand after the one during which the cover card appeared.
        assert run.void is None
        assert run.cover_at_hand is not None
        assert len(run.coups) == run.cover_at_hand + 1
        # The cover card appeared before the last hand's first card was drawn.
        start_of_last = pos - run.coups[-1].cards_used
        assert cover_at <= start_of_last
    else:
        # The cards ran out first: the unfinished round is void, (i)(4).
        assert run.cards_used == 416 and run.void is not None
        with pytest.raises(ShoeExhausted):
            deal(deck, pos)


def test_whole_shoe_cover_card_near_the_end() -> None:
    """Usual placement: the cover card about 16 cards from the end of an 8-deck shoe."""
    deck = _shuffled(8, 2026)
    run = deal_shoe(cards_with_cover(deck, 400))
    assert run.last_status is ShoeStatus.RESHUFFLE and run.void is None
    assert 400 <= run.cards_used <= 400 + 12  # at most two hands after the cover card
    assert run.cover_at_hand == len(run.coups) - 1


def test_whole_shoe_refuses_a_card_beyond_its_composition() -> None:
    deck = _shuffled(6, 7)
    deck[-1] = deck[0]  # two copies of one card too many: seven of it in six decks
    deck[-2] = deck[0]
    with pytest.raises(CardBeyondShoe):
        deal_shoe(cards_with_cover(deck, 311))


def test_whole_shoe_without_cover_card_runs_out_and_voids() -> None:
    """No cover card: the cards run out and the unfinished round is void (i)(4)."""
    deck = _shuffled(6, 11)
    run = deal_shoe(deck)
    assert run.cover_at_hand is None and run.last_status is not ShoeStatus.RESHUFFLE
    assert run.void is not None and run.cards_used == 312


def test_cards_with_cover_places_both_cover_cards() -> None:
    deck = list(cards("AS 2S 3S"))
    assert cards_with_cover(deck, 1) == [card("AS"), COVER, card("2S"), card("3S"), COVER]
    with pytest.raises(ShoeValueError) as e:
        cards_with_cover(deck, 4)
    assert isinstance(e.value, ValueError) and isinstance(e.value, BaccaratError)
