"""The shoe, card by card: its composition, the burn, the cover card and the last hand, and a coup
fed one card at a time as the shoe's reader sees them. 9 NYCRR 5324.20(a)(4), (e), (f), (i)(4).

Everything here is pure (no I/O, no clock, no randomness) and incremental: the table's state
machine feeds each card as the reader reports it and asks what comes next. ``deal_shoe`` strings
the pieces together for a whole shoe, for simulations and as the reference of how they fit.
docs/baccarat-shoe.md gives the reading of each rule and the settings where the text is ambiguous.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from .cards import DECK, RANKS, Card
from .coup import Coup
from .errors import BaccaratError, ShoeExhausted
from .third_card import banker_draws, is_natural, player_draws

#: 5324.20(a)(4): baccarat is played with at least six decks.
MIN_DECKS: Final = 6

#: 5324.20(f)(9): hands dealt after the one during which the cover card appeared. The regulation
#: announces "last hand" on completing that hand, so one more is dealt. A table that reads the
#: hand in progress as the last one sets 0. See docs/baccarat-shoe.md.
HANDS_AFTER_COVER: Final = 1


class CardBeyondShoe(BaccaratError, ValueError):
    """A card the shoe cannot hold: every copy of it has already left the shoe (a ninth ace of
    spades from an eight-deck shoe). A smart shoe halts on this: a foreign card, a misread, or a
    card dealt twice."""


class ShoeValueError(BaccaratError, ValueError):
    """A number the shoe rules cannot take: fewer than six decks (5324.20(a)(4)), a negative count
    of cards or hands, a cover card placed outside the shoe."""


class ShoeStateError(BaccaratError, RuntimeError):
    """A card or event that does not fit where the shoe is: a card fed to a finished coup, a burn
    that is already complete, a hand dealt after the last hand of 5324.20(f)(9)."""


def _as_card(c: Card | str) -> Card:
    return c if isinstance(c, Card) else Card(c)


# --- composition ------------------------------------------------------------------------------


class ShoeComposition:
    """The cards still in a shoe of ``decks`` full decks (52 * decks cards), 5324.20(a)(4).

    ``remove(card)`` takes one card out as it leaves the shoe and refuses a card beyond the
    composition (:class:`CardBeyondShoe`). ``values()`` is a mapping of value 0-9 to count that
    ``exact_odds`` accepts, so the odds of the next coup can be read from a live shoe.
    """

    __slots__ = ("decks", "_left", "_count")

    decks: int
    _left: dict[Card, int]
    _count: int

    def __init__(self, decks: int) -> None:
        if isinstance(decks, bool) or not isinstance(decks, int) or decks < MIN_DECKS:
            raise ShoeValueError(
                f"a baccarat shoe holds at least {MIN_DECKS} decks (5324.20(a)(4)), not {decks!r}"
            )
        self.decks = decks
        self._left = {c: decks for c in DECK}
        self._count = 52 * decks

    def remove(self, card: Card | str) -> None:
        """Take ``card`` out of the shoe. Raises :class:`CardBeyondShoe` when none is left."""
        c = _as_card(card)
        n = self._left[c]
        if n == 0:
            raise CardBeyondShoe(
                f"{c.code} cannot come out of this shoe: it holds {self.decks} of each card"
                f" ({self.decks} decks, 5324.20(a)(4)) and all {self.decks} have been dealt"
            )
        self._left[c] = n - 1
        self._count -= 1

    def remaining(self, card: Card | str) -> int:
        """How many of ``card`` are still in the shoe."""
        return self._left[_as_card(card)]

    def __len__(self) -> int:
        return self._count

    @property
    def cards_left(self) -> int:
        """Cards still in the shoe."""
        return self._count

    @property
    def cards_out(self) -> int:
        """Cards that have left the shoe (dealt, burned or discarded)."""
        return 52 * self.decks - self._count

    def values(self) -> dict[int, int]:
        """Cards left by value 0-9 (5324.20(a)(4)(i)): the form ``exact_odds`` takes."""
        counts = dict.fromkeys(range(10), 0)
        for c, n in self._left.items():
            counts[c.value] += n
        return counts

    def ranks(self) -> dict[str, int]:
        """Cards left by rank ``A``..``K``."""
        counts = dict.fromkeys(RANKS, 0)
        for c, n in self._left.items():
            counts[c.rank] += n
        return counts

    def copy(self) -> ShoeComposition:
        """An independent copy (to try a line of play without touching this one)."""
        other = ShoeComposition(self.decks)
        other._left = dict(self._left)
        other._count = self._count
        return other

    def __repr__(self) -> str:
        return f"<ShoeComposition {self.decks} decks, {self._count} cards left>"


# --- the burn ---------------------------------------------------------------------------------


def burn_count(first_card: Card | str) -> int:
    """How many cards are burned after ``first_card`` is turned face up, 5324.20(e): "an additional
    amount of cards equal to the value of the first card drawn ... face cards and 10s count as 10
    and aces count as 1". The same count serves (i)(1)(i) and (i)(3)."""
    return _as_card(first_card).burn_value


class BurnProgress:
    """A burn fed card by card, 5324.20(e): the first card is turned face up, then as many more as
    its value (tens and faces 10, aces 1) are burned.

    ``BurnProgress()`` starts a burn from the shoe (the next card is the face-up one);
    ``BurnProgress(face_up=card)`` continues from a card already face up, as (i)(3) burns a
    disclosed card and as many more as its value; ``count`` then overrides how many (the reading
    of (i)(3) chosen in irregularities.py).
    """

    __slots__ = ("_face_up", "_burned", "_needed")

    def __init__(self, face_up: Card | str | None = None, count: int | None = None) -> None:
        self._face_up: Card | None = None
        self._burned: list[Card] = []
        self._needed = 1
        if face_up is not None:
            self.add(face_up)
            if count is not None:
                if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= 10:
                    raise ShoeValueError(f"a burn count is a whole number 0-10, not {count!r}")
                self._needed = count
        elif count is not None:
            raise ShoeValueError("count applies only to a burn from a card already face up")

    def add(self, card: Card | str) -> int:
        """Feed the next card out of the shoe; returns how many more cards the burn takes."""
        if self._needed == 0:
            raise ShoeStateError("the burn is complete; this card belongs to the first hand")
        c = _as_card(card)
        if self._face_up is None:
            self._face_up = c
            self._needed = c.burn_value
        else:
            self._burned.append(c)
            self._needed -= 1
        return self._needed

    @property
    def remaining(self) -> int:
        """Cards the burn still takes (1 before the face-up card is drawn)."""
        return self._needed

    @property
    def done(self) -> bool:
        return self._needed == 0

    @property
    def face_up(self) -> Card | None:
        """The first card, turned face up, whose value sets the count (None before it is drawn)."""
        return self._face_up

    @property
    def burned(self) -> tuple[Card, ...]:
        """The cards burned after the face-up card, in order."""
        return tuple(self._burned)

    @property
    def cards_used(self) -> int:
        """Cards the burn has taken from the shoe so far, the face-up card included."""
        return len(self._burned) + (self._face_up is not None)


# --- a coup, card by card -------------------------------------------------------------------


class CoupStep(StrEnum):
    """What the dealer calls next in a coup, 5324.20(f)(5)-(13).

    ``CoupInProgress.add`` returns the step naming the next card ("player card", "banker card",
    "player draws", "banker draws") or "complete". "player stands" and "banker stands" call for no
    card, so ``add`` never returns them; they appear in ``CoupInProgress.calls``.
    """

    PLAYER_CARD = "player card"
    BANKER_CARD = "banker card"
    PLAYER_DRAWS = "player draws"
    PLAYER_STANDS = "player stands"
    BANKER_DRAWS = "banker draws"
    BANKER_STANDS = "banker stands"
    COMPLETE = "complete"


# 5324.20(f)(5): first and third cards to the player, second and fourth to the banker.
_INITIAL_STEPS: Final = (CoupStep.BANKER_CARD, CoupStep.PLAYER_CARD, CoupStep.BANKER_CARD)


class CoupInProgress:
    """One coup fed card by card in shoe order. When ``expecting`` is ``COMPLETE``, ``result()``
    is the same :class:`~.coup.Coup` that ``deal`` gives for the same cards.

    The drawing decisions are the package's own predicates (third_card.py): (f)(10) naturals,
    (f)(11) the player's rule, (f)(12)-(13) the banker's rules; (f)(8) the player's third card
    comes before the banker's.
    """

    __slots__ = ("_cards", "_expect", "_calls")

    def __init__(self, cards: Iterable[Card | str] = ()) -> None:
        self._cards: list[Card] = []
        self._expect = CoupStep.PLAYER_CARD
        self._calls: list[CoupStep] = []
        for c in cards:
            self.add(c)

    def add(self, card: Card | str) -> CoupStep:
        """Feed the next card out of the shoe; returns what comes next."""
        if self._expect is CoupStep.COMPLETE:
            raise ShoeStateError(
                f"the coup is complete ({self.result()}); card {_as_card(card).code} is not part"
                " of it (5324.20(i)(2): a card drawn in excess)"
            )
        c = _as_card(card)
        cs = self._cards
        cs.append(c)
        n = len(cs)
        if n < 4:
            self._expect = _INITIAL_STEPS[n - 1]
        elif n == 4:
            self._expect = self._after_four()
        elif self._expect is CoupStep.PLAYER_DRAWS:
            # 5324.20(f)(13): the banker's two-card total and the VALUE of the player's third card.
            if banker_draws(self._two_card_total(1), c.value):
                self._call(CoupStep.BANKER_DRAWS)
            else:
                self._call(CoupStep.BANKER_STANDS)
                self._expect = CoupStep.COMPLETE
        else:  # the banker's third card
            self._expect = CoupStep.COMPLETE
        return self._expect

    def _call(self, step: CoupStep) -> None:
        self._calls.append(step)
        self._expect = step

    def _two_card_total(self, first: int) -> int:
        return (self._cards[first].value + self._cards[first + 2].value) % 10

    def _after_four(self) -> CoupStep:
        pt = self._two_card_total(0)
        bt = self._two_card_total(1)
        if is_natural(pt) or is_natural(bt):  # 5324.20(f)(10)
            self._calls += [CoupStep.PLAYER_STANDS, CoupStep.BANKER_STANDS]
            return CoupStep.COMPLETE
        if player_draws(pt):  # 5324.20(f)(11)
            self._call(CoupStep.PLAYER_DRAWS)
            return self._expect
        self._calls.append(CoupStep.PLAYER_STANDS)
        if banker_draws(bt, None):  # 5324.20(f)(12)
            self._call(CoupStep.BANKER_DRAWS)
            return self._expect
        self._calls.append(CoupStep.BANKER_STANDS)
        return CoupStep.COMPLETE

    @property
    def expecting(self) -> CoupStep:
        """What the coup needs next (``PLAYER_CARD`` before the first card)."""
        return self._expect

    @property
    def complete(self) -> bool:
        return self._expect is CoupStep.COMPLETE

    @property
    def calls(self) -> tuple[CoupStep, ...]:
        """The third-card calls made so far, in order (5324.20(f)(7)): e.g. ``(PLAYER_STANDS,
        BANKER_DRAWS)``. Both stand on a natural, (f)(10)."""
        return tuple(self._calls)

    @property
    def cards(self) -> tuple[Card, ...]:
        """The cards fed so far, in shoe order."""
        return tuple(self._cards)

    @property
    def player(self) -> tuple[Card, ...]:
        """The player's hand so far: shoe cards 1 and 3, then the player's third card."""
        cs = self._cards
        hand = cs[0:3:2]
        if len(cs) >= 5 and self._player_drew():
            hand.append(cs[4])
        return tuple(hand)

    @property
    def banker(self) -> tuple[Card, ...]:
        """The banker's hand so far: shoe cards 2 and 4, then the banker's third card."""
        cs = self._cards
        hand = cs[1:4:2]
        if len(cs) == 6:
            hand.append(cs[5])
        elif len(cs) == 5 and not self._player_drew():
            hand.append(cs[4])
        return tuple(hand)

    def _player_drew(self) -> bool:
        return CoupStep.PLAYER_DRAWS in self._calls

    @property
    def player_total(self) -> int:
        """The player's point count so far, 5324.20(a)(4)(ii)."""
        return sum(c.value for c in self.player) % 10

    @property
    def banker_total(self) -> int:
        """The banker's point count so far, 5324.20(a)(4)(ii)."""
        return sum(c.value for c in self.banker) % 10

    @property
    def min_cards_to_finish(self) -> int:
        """Cards the coup will take for certain before it is complete."""
        if self.complete:
            return 0
        return max(4 - len(self._cards), 1)

    @property
    def max_cards_to_finish(self) -> int:
        """Cards the coup may take at most before it is complete."""
        if self.complete:
            return 0
        if self._expect is CoupStep.PLAYER_DRAWS:
            return 2
        if self._expect is CoupStep.BANKER_DRAWS:
            return 1
        return 6 - len(self._cards)

    def result(self) -> Coup:
        """The finished coup. Raises :class:`ShoeStateError` while it is still being dealt."""
        if not self.complete:
            raise ShoeStateError(
                f"the coup is not complete: it has {len(self._cards)} cards and expects"
                f" {self._expect.value!r}"
            )
        return Coup(self.player, self.banker, self.player_total, self.banker_total)

    def copy(self) -> CoupInProgress:
        """An independent copy (to see what a card would do without feeding it)."""
        other = CoupInProgress()
        other._cards = list(self._cards)
        other._expect = self._expect
        other._calls = list(self._calls)
        return other

    def __repr__(self) -> str:
        codes = " ".join(c.code for c in self._cards)
        return f"<CoupInProgress [{codes}] expecting {self._expect.value!r}>"


def void_for_short_shoe(coup: CoupInProgress, cards_left: int) -> bool:
    """Whether the round is void because the shoe cannot finish ``coup``, 5324.20(i)(4): "If there
    are insufficient cards remaining in the shoe to complete a round of play, that round shall be
    void and a new round shall commence after a new shuffle is completed."

    True when the coup is unfinished and fewer cards are left than it certainly still takes. Call
    it with ``CoupInProgress()`` before a round to see whether one can start (fewer than 4 cards:
    void), and after each card; with 4 or 5 cards left a coup may or may not finish, which only
    the cards decide, so the answer is exact once the next card is needed.
    """
    if isinstance(cards_left, bool) or not isinstance(cards_left, int) or cards_left < 0:
        raise ShoeValueError(f"cards_left must be a whole number 0 or more, not {cards_left!r}")
    return not coup.complete and cards_left < coup.min_cards_to_finish


# --- the cover card and the last hand ----------------------------------------------------------


class ShoeStatus(StrEnum):
    """Where the shoe stands after a hand is complete, 5324.20(f)(9)."""

    CONTINUE = "continue"  # deal the next hand
    LAST_HAND = "last hand"  # the dealer announces "last hand": the next hand is the last
    RESHUFFLE = "reshuffle"  # the last hand is dealt: the cards are reshuffled


class CoverCard(StrEnum):
    """Which of the two cover cards of 5324.20(a)(4) passed the reader."""

    CUT = "cut"  # the first to appear: the cover card of (f)(9)
    BOTTOM = "bottom"  # the second: it sits behind the last card, so the shoe is empty


class LastHandRule:
    """The cover card and the last hand, 5324.20(f)(9): "Whenever the cover card appears during
    play, the cover card shall be removed and placed to the side and the hand shall be completed.
    Upon completion of that hand, the dealer calling the game announces 'last hand.' After the last
    hand is dealt, the cards shall be re-shuffled."

    Call ``cover_card()`` when a cover card passes the reader and ``hand_complete()`` when a hand
    is complete (voided hands and hands nobody wagers on included: they are dealt from the shoe).
    A cover card that appears between hands (or during the burn) belongs to the next hand.
    ``hands_after_cover`` is :data:`HANDS_AFTER_COVER` (1) by default.
    """

    __slots__ = ("hands_after_cover", "_hands_left", "_covers", "_finished", "_hands")

    def __init__(self, hands_after_cover: int = HANDS_AFTER_COVER) -> None:
        if (
            isinstance(hands_after_cover, bool)
            or not isinstance(hands_after_cover, int)
            or hands_after_cover < 0
        ):
            raise ShoeValueError(
                f"hands_after_cover must be a whole number 0 or more, not {hands_after_cover!r}"
            )
        self.hands_after_cover = hands_after_cover
        # Hands still to complete once the cover card has appeared (None before it appears),
        # counting the hand during which it appeared.
        self._hands_left: int | None = None
        self._covers = 0
        self._finished = False
        self._hands = 0

    def cover_card(self) -> CoverCard:
        """A cover card passed the reader. The first is the cover card of (f)(9); the second sits
        behind the last card: no cards are left (a hand in progress is void, (i)(4))."""
        if self._covers >= 2:
            raise ShoeStateError("a shoe holds two cover cards (5324.20(a)(4)); this is a third")
        self._covers += 1
        if self._covers == 1:
            self._hands_left = 1 + self.hands_after_cover
            return CoverCard.CUT
        return CoverCard.BOTTOM

    def hand_complete(self) -> ShoeStatus:
        """A hand is complete; returns whether to deal on, announce "last hand", or reshuffle."""
        if self._finished:
            raise ShoeStateError(
                "the last hand has been dealt; the cards must be reshuffled (5324.20(f)(9))"
            )
        self._hands += 1
        if self._hands_left is None:
            return ShoeStatus.CONTINUE
        self._hands_left -= 1
        if self._hands_left <= 0:
            self._finished = True
            return ShoeStatus.RESHUFFLE
        return ShoeStatus.LAST_HAND if self._hands_left == 1 else ShoeStatus.CONTINUE

    @property
    def cover_seen(self) -> bool:
        """Whether the cover card of (f)(9) has appeared."""
        return self._covers >= 1

    @property
    def last_hand(self) -> bool:
        """Whether the hand now to be dealt (or being dealt) is the last of the shoe."""
        return not self._finished and self._hands_left == 1

    @property
    def finished(self) -> bool:
        """Whether the last hand has been dealt: reshuffle before dealing again."""
        return self._finished

    @property
    def hands_dealt(self) -> int:
        return self._hands


# --- a whole shoe -------------------------------------------------------------------------


#: What the reader can report in a shoe: a card or a cover card.
COVER: Final = "cover"


@dataclass(frozen=True, slots=True)
class ShoeRun:
    """A shoe dealt from the burn to the reshuffle by :func:`deal_shoe`.

    ``coups`` are the complete hands in order; ``void`` holds the cards of a round voided for want
    of cards (5324.20(i)(4)) (``()`` when they ran out between hands), ``None`` when the shoe ended
    with its last hand; ``last_status`` is how the shoe ended
    (``RESHUFFLE`` after the last hand, or ``CONTINUE``/``LAST_HAND`` when the cards ran out
    first); ``cover_at_hand`` is the number (1-based) of the hand during which the (f)(9) cover
    card appeared, or ``None``; ``cards_used`` counts every card taken, burn included.
    """

    burn_face_up: Card
    burned: tuple[Card, ...]
    coups: tuple[Coup, ...]
    void: tuple[Card, ...] | None
    last_status: ShoeStatus
    cover_at_hand: int | None
    cards_used: int


def deal_shoe(items: Sequence[Card | str], hands_after_cover: int = HANDS_AFTER_COVER) -> ShoeRun:
    """Deal a whole shoe from ``items`` in shoe order: cards, and :data:`COVER` where a cover card
    sits. Burns per 5324.20(e), deals coups until the last hand of (f)(9), and voids a round the
    cards cannot finish (i)(4). Checks every card against the composition of ``52 * decks`` when
    ``items`` holds a whole number of decks of at least six, raising :class:`CardBeyondShoe`.
    """
    rule = LastHandRule(hands_after_cover)
    n_cards = sum(1 for x in items if x != COVER)
    decks = n_cards // 52
    composition = ShoeComposition(decks) if n_cards % 52 == 0 and decks >= MIN_DECKS else None
    burn = BurnProgress()
    coups: list[Coup] = []
    coup = CoupInProgress()
    cover_at: int | None = None
    used = 0
    status = ShoeStatus.CONTINUE
    for item in items:
        if item == COVER:
            if rule.cover_card() is CoverCard.BOTTOM:
                break
            cover_at = len(coups) + 1
            continue
        c = _as_card(item)
        if composition is not None:
            composition.remove(c)
        used += 1
        if not burn.done:
            burn.add(c)
            continue
        if coup.add(c) is CoupStep.COMPLETE:
            coups.append(coup.result())
            coup = CoupInProgress()
            status = rule.hand_complete()
            if status is ShoeStatus.RESHUFFLE:
                break
    if not burn.done or burn.face_up is None:
        raise ShoeExhausted(
            "the shoe ran out during the burn (5324.20(e))",
            needed=burn.remaining,
            available=0,
        )
    # Unless the last hand ended the shoe, the cards ran out first: the round being dealt (or, if
    # they ran out between hands, the round about to start) is void, (i)(4).
    void = None if status is ShoeStatus.RESHUFFLE else coup.cards
    return ShoeRun(
        burn_face_up=burn.face_up,
        burned=burn.burned,
        coups=tuple(coups),
        void=void,
        last_status=status,
        cover_at_hand=cover_at,
        cards_used=used,
    )


def cards_with_cover(cards: Sequence[Card], cover_at: int) -> list[Card | str]:
    """``cards`` with the (f)(9) cover card inserted before index ``cover_at`` and the second
    cover card at the bottom, 5324.20(a)(4): a shoe as the reader will report it."""
    if not 0 <= cover_at <= len(cards):
        raise ShoeValueError(f"cover_at must be within 0..{len(cards)}, not {cover_at}")
    return [*cards[:cover_at], COVER, *cards[cover_at:], COVER]
