"""Irregularities at the shoe, 9 NYCRR 5324.20(i)(1)-(3)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.games.baccarat.cards import DECK, Card, card, cards
from controller.games.baccarat.coup import deal
from controller.games.baccarat.errors import BaccaratError
from controller.games.baccarat.irregularities import (
    ErrorCardCount,
    Fate,
    IrregularityError,
    Remedy,
    Then,
    drawn_in_excess,
    face_up_in_shoe,
    player_third_in_error,
)
from controller.games.baccarat.shoe import CoupInProgress, CoupStep

# --- (i)(1) a card face up in the shoe --------------------------------------------------------


def test_face_up_card_not_disclosed_is_discarded() -> None:
    """(i)(1): "A card found face up in the shoe shall not be used as the first card of the next
    hand of play." Not disclosed: it goes to the discard rack and play goes on."""
    r = face_up_in_shoe("7H", disclosed=False)
    assert (r.card, r.fate, r.then) == (card("7H"), Fate.DISCARD, Then.NOTHING)
    assert r.burn() is None and r.section == "5324.20(i)(1)"


def test_face_up_card_disclosed_burn() -> None:
    """(i)(1)(i): "remove the first card from the shoe and place such card face up and then remove
    an additional amount of cards equal to the value of the first card drawn and burn those cards.
    ... face cards and 10s count as 10". The next card out is a jack: ten more are burned."""
    r = face_up_in_shoe("7H", disclosed=True, remedy=Remedy.BURN)
    assert (r.fate, r.then) == (Fate.DISCARD, Then.BURN)
    burn = r.burn()
    assert burn is not None and burn.face_up is None
    assert burn.add("JD") == 10


def test_face_up_card_disclosed_dead_hand() -> None:
    """(i)(1)(ii): "choose to deal a complete hand in accordance with subdivision (f) of this
    section that no player shall wager upon"."""
    r = face_up_in_shoe("7H", disclosed=True, remedy=Remedy.DEAD_HAND)
    assert (r.fate, r.then, r.burn()) == (Fate.DISCARD, Then.DEAD_HAND, None)
    assert r.section.endswith("(i)(1)(ii)")


def test_disclosed_card_needs_the_dealers_choice() -> None:
    """(i)(1): "the dealer either shall" -- the choice is the dealer's and must be given."""
    with pytest.raises(IrregularityError, match="must choose") as e:
        face_up_in_shoe("7H", disclosed=True)
    assert isinstance(e.value, BaccaratError) and isinstance(e.value, ValueError)
    with pytest.raises(IrregularityError):
        drawn_in_excess("7H", disclosed=True, remedy="burn!")  # type: ignore[arg-type]


# --- (i)(2) a card drawn in excess --------------------------------------------------------


def test_excess_card_not_disclosed_is_next_hands_first_card() -> None:
    """(i)(2): "A card drawn in excess from the shoe, if not disclosed, shall be used as the first
    card of the next hand of play." Dealt from the next shoe cards, it is the player's first."""
    r = drawn_in_excess("4C", disclosed=False)
    assert (r.fate, r.then) == (Fate.NEXT_HAND_FIRST, Then.NOTHING)
    nxt = deal([r.card, *cards("2H 5S 3D")])
    assert nxt.player[0] is card("4C")


@pytest.mark.parametrize("remedy", list(Remedy))
def test_excess_card_disclosed_follows_i1(remedy: Remedy) -> None:
    """(i)(2): "If the card has been disclosed, the discard procedures described in paragraph (1)
    of this subdivision shall be implemented." -- both of the dealer's options."""
    r = drawn_in_excess("4C", disclosed=True, remedy=remedy)
    assert r.fate is Fate.DISCARD
    assert r.then is (Then.BURN if remedy is Remedy.BURN else Then.DEAD_HAND)
    assert r.section.startswith("5324.20(i)(2)")


# --- (i)(3) a third card dealt to the player in error --------------------------------------


def test_player_third_in_error_banker_must_draw() -> None:
    """(i)(3): the card "shall become the third card of the banker's hand if the banker's hand is
    obligated to draw". Player 7 stays (f)(11); banker 3 must draw (f)(12); a 5 dealt to the
    player in error is the banker's third card: banker 8 wins."""
    coup = CoupInProgress(cards("4S 2H 3D AC"))
    assert coup.expecting is CoupStep.BANKER_DRAWS
    r = player_third_in_error(coup, "5H", disclosed=True)
    assert (r.fate, r.then) == (Fate.BANKER_THIRD, Then.NOTHING)
    assert r.coup is not None
    assert r.coup.player == cards("4S 3D") and r.coup.banker == cards("2H AC 5H")
    assert (r.coup.player_total, r.coup.banker_total, r.coup.winner) == (7, 8, "banker")
    assert len(coup.cards) == 4  # the coup given is left as it was


def test_player_third_in_error_banker_stays_not_disclosed() -> None:
    """(i)(3): "If, in such circumstances, the banker's hand is required to stay, the card dealt
    in error shall become the first card of the next hand unless such card has been disclosed."
    Player 6 stays, banker 7 stays (f)(12)."""
    coup = CoupInProgress(cards("6S 4H KD 3C"))
    assert coup.complete
    r = player_third_in_error(coup, "9D", disclosed=False)
    assert (r.fate, r.then, r.coup) == (Fate.NEXT_HAND_FIRST, Then.NOTHING, None)


@pytest.mark.parametrize(
    ("code", "more"), [("AS", 1), ("6D", 6), ("9C", 9), ("TS", 10), ("KH", 10)]
)
def test_player_third_in_error_banker_stays_disclosed(code: str, more: int) -> None:
    """(i)(3): "the disclosed card and an additional number of cards equal to the value of such
    card shall be drawn face up from the shoe and placed in the discard rack." Banker natural 9:
    the banker stays (f)(10). Tens and faces count 10 (the default reading, as (e))."""
    coup = CoupInProgress(cards("2S 4H 3D 5C"))
    r = player_third_in_error(coup, code, disclosed=True)
    assert (r.fate, r.then, r.burn_more) == (Fate.BURN_FACE_UP, Then.BURN_MORE, more)
    burn = r.burn()
    assert burn is not None and burn.face_up is card(code) and burn.remaining == more


def test_player_third_in_error_baccarat_count_setting() -> None:
    """The other reading of (i)(3): "the value of such card" as in (a)(4)(i), a king being 0."""
    coup = CoupInProgress(cards("2S 4H 3D 5C"))
    r = player_third_in_error(coup, "KH", disclosed=True, count=ErrorCardCount.BACCARAT)
    assert r.burn_more == 0
    burn = r.burn()
    assert burn is not None and burn.done
    r = player_third_in_error(coup, "7H", disclosed=True, count=ErrorCardCount.BACCARAT)
    assert r.burn_more == 7


def test_player_third_in_error_refuses_an_authorized_card() -> None:
    """A player on 0-5 draws (f)(11): that card is no error."""
    coup = CoupInProgress(cards("2S 4H 3D KC"))
    with pytest.raises(IrregularityError, match="draws on 5"):
        player_third_in_error(coup, "5H", disclosed=False)
    with pytest.raises(IrregularityError, match="four initial cards"):
        player_third_in_error(CoupInProgress(cards("2S 4H 3D")), "5H", disclosed=False)


four_cards = st.lists(st.sampled_from(DECK), min_size=4, max_size=4)


@settings(max_examples=300)
@given(four_cards, st.sampled_from(DECK), st.booleans())
def test_player_third_in_error_against_the_rules(
    initial: list[Card], extra: Card, disclosed: bool
) -> None:
    """Independently of the module: the banker is "obligated to draw" exactly when neither hand
    is a natural, the player has 6 or 7 and the banker 0-5 ((f)(10)-(12))."""
    coup = CoupInProgress(initial)
    p = (initial[0].value + initial[2].value) % 10
    b = (initial[1].value + initial[3].value) % 10
    if p <= 5 and b <= 7:
        with pytest.raises(IrregularityError):
            player_third_in_error(coup, extra, disclosed=disclosed)
        return
    r = player_third_in_error(coup, extra, disclosed=disclosed)
    if p in (6, 7) and b <= 5:
        assert r.fate is Fate.BANKER_THIRD and r.coup is not None
        assert r.coup.banker_total == (b + extra.value) % 10 and r.coup.player_total == p
    elif disclosed:
        assert r.fate is Fate.BURN_FACE_UP and r.burn_more == min(extra.value or 10, 10)
        if extra.rank == "A":
            assert r.burn_more == 1
    else:
        assert r.fate is Fate.NEXT_HAND_FIRST


def test_player_third_in_error_after_the_banker_has_drawn() -> None:
    """(i)(3): "A third card dealt to the player's hand when no third card is authorized ...
    If, in such circumstances, the banker's hand is required to stay, the card dealt in error shall
    become the first card of the next hand unless such card has been disclosed. In such case, the
    disclosed card and an additional number of cards equal to the value of such card shall be
    drawn face up from the shoe and placed in the discard rack."

    Player 7 stays (f)(11); banker 3 draws (f)(12) a 4 and has its three cards. A card then dealt
    to the player is a third card the player was not authorized to take, and the banker (already
    drawn) must stay: (i)(3) governs, not an error."""
    coup = CoupInProgress(cards("4S 2H 3D AC 4D"))
    assert coup.complete and len(coup.player) == 2 and len(coup.banker) == 3
    r = player_third_in_error(coup, "9H", disclosed=False)
    assert (r.fate, r.then, r.coup) == (Fate.NEXT_HAND_FIRST, Then.NOTHING, None)
    r = player_third_in_error(coup, "9H", disclosed=True)
    assert (r.fate, r.then, r.burn_more) == (Fate.BURN_FACE_UP, Then.BURN_MORE, 9)
    # A player who drew already holds three cards: a further card is no "third card".
    with pytest.raises(IrregularityError):
        player_third_in_error(CoupInProgress(cards("2S 6H 3D KC 4D")), "9H", disclosed=True)


def test_face_up_card_burn_from_setting() -> None:
    """(i)(1)(i): "remove the first card from the shoe and place such card face up and then remove
    an additional amount of cards equal to the value of the first card drawn and burn those cards".
    Whether "the first card from the shoe" is the next card (default) or the disclosed card found
    face up at the front of the shoe is a named setting, ``burn_from``."""
    from controller.games.baccarat.irregularities import FACE_UP_BURN_FROM, BurnFrom

    assert FACE_UP_BURN_FROM is BurnFrom.NEXT_CARD
    default = face_up_in_shoe("7H", disclosed=True, remedy=Remedy.BURN)
    assert default == face_up_in_shoe(
        "7H", disclosed=True, remedy=Remedy.BURN, burn_from=BurnFrom.NEXT_CARD
    )
    r = face_up_in_shoe("7H", disclosed=True, remedy=Remedy.BURN, burn_from=BurnFrom.FACE_UP_CARD)
    assert (r.fate, r.then, r.burn_more) == (Fate.BURN_FACE_UP, Then.BURN_MORE, 7)
    burn = r.burn()
    assert burn is not None and burn.face_up is card("7H") and burn.remaining == 7
    r = face_up_in_shoe("QH", disclosed=True, remedy=Remedy.BURN, burn_from=BurnFrom.FACE_UP_CARD)
    assert r.burn_more == 10  # "face cards and 10s count as 10"
    # The setting touches only the burn: the hand nobody wagers on and the undisclosed card are
    # unchanged.
    for bf in BurnFrom:
        r = face_up_in_shoe("7H", disclosed=True, remedy=Remedy.DEAD_HAND, burn_from=bf)
        assert (r.fate, r.then) == (Fate.DISCARD, Then.DEAD_HAND)
        assert face_up_in_shoe("7H", disclosed=False, burn_from=bf).then is Then.NOTHING
