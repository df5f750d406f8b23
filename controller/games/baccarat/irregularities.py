"""Irregularities at the shoe, 9 NYCRR 5324.20(i)(1)-(3): what happens to the card concerned and
what the dealer does next. Pure decision functions; the dealer's choices are explicit parameters.

(i)(4), too few cards to finish a round, is :func:`~.shoe.void_for_short_shoe`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .cards import Card
from .coup import Coup
from .errors import BaccaratError
from .shoe import BurnProgress, CoupInProgress, CoupStep


class IrregularityError(BaccaratError, ValueError):
    """An irregularity described in a way the regulation does not cover: a "third card in error"
    that the player was entitled to, or a disclosed card without the dealer's choice of remedy."""


class Remedy(StrEnum):
    """The dealer's choice when a card found face up in the shoe, or drawn in excess, has been
    disclosed, 5324.20(i)(1)(i)-(ii) (and (i)(2), which refers to them)."""

    BURN = "burn"  # (i)(1)(i): the next card face up, then as many more as its value, burned
    DEAD_HAND = "dead hand"  # (i)(1)(ii): a complete hand under (f) that no player wagers on


class ErrorCardCount(StrEnum):
    """How (i)(3) counts "an additional number of cards equal to the value of such card". (e) and
    (i)(1)(i) say "face cards and 10s count as 10 and aces count as 1"; (i)(3) does not, and the
    value of (a)(4)(i) makes a ten or a face 0. See docs/baccarat-shoe.md."""

    BURN = "burn"  # as (e): tens and faces 10, aces 1 (the default, and issue 3's reading)
    BACCARAT = "baccarat"  # as (a)(4)(i): tens and faces 0, aces 1


#: The default reading of the count in 5324.20(i)(3).
ERROR_CARD_COUNT = ErrorCardCount.BURN


class BurnFrom(StrEnum):
    """Where the burn of 5324.20(i)(1)(i) starts for a disclosed card found face up in the shoe:
    "remove the first card from the shoe and place such card face up and then remove an additional
    amount of cards equal to the value of the first card drawn". The card found face up was to be
    the first card of the next hand, so "the first card from the shoe" may be read as the card
    after it or as that card itself. See docs/baccarat-shoe.md."""

    NEXT_CARD = "next card"  # the face-up card is discarded; the next card is turned (default)
    FACE_UP_CARD = "face-up card"  # the face-up card is the burn's first card; its value counts


#: The default reading of where the burn of 5324.20(i)(1)(i) starts for a card found face up.
FACE_UP_BURN_FROM = BurnFrom.NEXT_CARD


class Fate(StrEnum):
    """What becomes of the card concerned."""

    DISCARD = "discard"  # to the discard rack, used in no hand
    NEXT_HAND_FIRST = "first card of the next hand"
    BANKER_THIRD = "banker's third card"
    BURN_FACE_UP = "face up, with as many more as its value, to the discard rack"


class Then(StrEnum):
    """What the dealer does next, before the next hand that players wager on."""

    NOTHING = "nothing"  # play goes on
    BURN = "burn"  # (i)(1)(i): turn the next card face up and burn as many more as its value
    DEAD_HAND = "dead hand"  # (i)(1)(ii): deal one complete hand that no player wagers on
    BURN_MORE = "burn more"  # (i)(3): burn ``burn_more`` cards after the disclosed one


@dataclass(frozen=True, slots=True)
class Ruling:
    """The decision on one irregularity.

    ``card`` is the card concerned and ``fate`` what becomes of it; ``then`` what the dealer does
    next; ``burn_more`` how many more cards are drawn face up and discarded (only with
    ``Then.BURN_MORE``; for ``Then.BURN`` the count is known once the next card is turned, see
    :meth:`burn`); ``coup`` the completed coup when the card completed it (``BANKER_THIRD``);
    ``section`` the paragraph applied.
    """

    card: Card
    fate: Fate
    then: Then
    section: str
    burn_more: int = 0
    coup: Coup | None = None

    def burn(self) -> BurnProgress | None:
        """The burn the dealer now performs, to feed card by card, or None when there is none:
        ``Then.BURN`` starts from the next card in the shoe (5324.20(i)(1)(i)); ``Then.BURN_MORE``
        continues from this card, already face up (5324.20(i)(3))."""
        if self.then is Then.BURN:
            return BurnProgress()
        if self.then is Then.BURN_MORE:
            return BurnProgress(face_up=self.card, count=self.burn_more)
        return None


def _as_card(c: Card | str) -> Card:
    return c if isinstance(c, Card) else Card(c)


def _disclosed_remedy(card: Card, remedy: Remedy | None, section: str) -> Ruling:
    if remedy is None:
        raise IrregularityError(
            f"{card.code} was disclosed: the dealer must choose a remedy, a burn or a hand no"
            f" player wagers on (5324.20(i)(1)(i)-(ii)), as applied by {section}"
        )
    if not isinstance(remedy, Remedy):
        raise IrregularityError(f"remedy must be Remedy.BURN or Remedy.DEAD_HAND, not {remedy!r}")
    then = Then.BURN if remedy is Remedy.BURN else Then.DEAD_HAND
    sub = "(i)" if remedy is Remedy.BURN else "(ii)"
    return Ruling(card, Fate.DISCARD, then, f"{section}, 5324.20(i)(1){sub}")


def face_up_in_shoe(
    card: Card | str,
    *,
    disclosed: bool,
    remedy: Remedy | None = None,
    burn_from: BurnFrom = FACE_UP_BURN_FROM,
) -> Ruling:
    """A card found face up in the shoe, 5324.20(i)(1): "A card found face up in the shoe shall not
    be used as the first card of the next hand of play. If the card has been disclosed, the dealer
    either shall: (i) remove the first card from the shoe and place such card face up and then
    remove an additional amount of cards equal to the value of the first card drawn and burn those
    cards ...; or (ii) choose to deal a complete hand ... that no player shall wager upon."

    The card goes to the discard rack in either case. Not disclosed: play goes on. Disclosed: the
    dealer's ``remedy`` (required) is the burn or the hand nobody wagers on. ``burn_from``
    (:class:`BurnFrom`, default :data:`FACE_UP_BURN_FROM`) says where the burn starts: with
    ``BurnFrom.FACE_UP_CARD`` the card found face up is the burn's first card, and as many more as
    its value (tens and faces 10) are burned after it.
    """
    c = _as_card(card)
    if not disclosed:
        return Ruling(c, Fate.DISCARD, Then.NOTHING, "5324.20(i)(1)")
    if not isinstance(burn_from, BurnFrom):
        raise IrregularityError(f"burn_from must be a BurnFrom, not {burn_from!r}")
    if remedy is Remedy.BURN and burn_from is BurnFrom.FACE_UP_CARD:
        return Ruling(
            c,
            Fate.BURN_FACE_UP,
            Then.BURN_MORE,
            "5324.20(i)(1), 5324.20(i)(1)(i)",
            burn_more=c.burn_value,
        )
    return _disclosed_remedy(c, remedy, "5324.20(i)(1)")


def drawn_in_excess(card: Card | str, *, disclosed: bool, remedy: Remedy | None = None) -> Ruling:
    """A card drawn in excess from the shoe, 5324.20(i)(2): "A card drawn in excess from the shoe,
    if not disclosed, shall be used as the first card of the next hand of play. If the card has
    been disclosed, the discard procedures described in paragraph (1) of this subdivision shall be
    implemented."

    Not disclosed: the card is the next hand's first card. Disclosed: it is discarded and the
    dealer's ``remedy`` (required) of (i)(1)(i)-(ii) follows.
    """
    c = _as_card(card)
    if not disclosed:
        return Ruling(c, Fate.NEXT_HAND_FIRST, Then.NOTHING, "5324.20(i)(2)")
    return _disclosed_remedy(c, remedy, "5324.20(i)(2)")


def player_third_in_error(
    coup: CoupInProgress,
    card: Card | str,
    *,
    disclosed: bool,
    count: ErrorCardCount = ERROR_CARD_COUNT,
) -> Ruling:
    """A third card dealt to the player's hand when none was authorized, 5324.20(i)(3): it "shall
    become the third card of the banker's hand if the banker's hand is obligated to draw. If, in
    such circumstances, the banker's hand is required to stay, the card dealt in error shall become
    the first card of the next hand unless such card has been disclosed. In such case, the disclosed
    card and an additional number of cards equal to the value of such card shall be drawn face up
    from the shoe and placed in the discard rack."

    ``coup`` holds the four initial cards, or those and the banker's third card; the player's hand
    stayed, on a natural (f)(10) or on 6 or 7 (f)(11). The banker is obligated to draw when the
    player stayed on 6 or 7 and the banker has 0-5 (f)(12) and has not yet drawn: the card
    completes the coup as the banker's third card, disclosed or not. The banker is required to stay
    otherwise (a natural on either side, the banker on 6-7, or the banker's third card already
    dealt).
    ``count`` says how the disclosed card's value is counted (:class:`ErrorCardCount`; by default
    as in (e), tens and faces 10).
    """
    c = _as_card(card)
    n = len(coup.cards)
    if not (n == 4 or (n == 5 and coup.complete and len(coup.player) == 2)):
        raise IrregularityError(
            "a player's third card in error follows the four initial cards (5324.20(f)(5)), or"
            " the banker's third card when the player's hand stayed; this coup holds"
            f" {n} cards, the player's hand {len(coup.player)}"
        )
    if coup.expecting is CoupStep.PLAYER_DRAWS:
        raise IrregularityError(
            f"the player's hand draws on {coup.player_total} (5324.20(f)(11)): {c.code} is its"
            " third card, not an irregularity"
        )
    if coup.expecting is CoupStep.BANKER_DRAWS:
        done = coup.copy()
        done.add(c)
        return Ruling(c, Fate.BANKER_THIRD, Then.NOTHING, "5324.20(i)(3)", coup=done.result())
    if not disclosed:
        return Ruling(c, Fate.NEXT_HAND_FIRST, Then.NOTHING, "5324.20(i)(3)")
    if count is ErrorCardCount.BURN:
        more = c.burn_value
    elif count is ErrorCardCount.BACCARAT:
        more = c.value
    else:
        raise IrregularityError(f"count must be an ErrorCardCount, not {count!r}")
    return Ruling(c, Fate.BURN_FACE_UP, Then.BURN_MORE, "5324.20(i)(3)", burn_more=more)
