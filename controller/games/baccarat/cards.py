"""Cards, their values and the point count of a hand: 9 NYCRR 5324.20(a)(4).

A card is written as two characters, rank then suit, as the shoe's card reader sends it: rank one
of ``A23456789TJQK`` (``T`` is the ten), suit one of ``SHDC``. ``card("TD")`` is the ten of
diamonds.

There are exactly 52 :class:`Card` objects: ``card()`` and ``Card()`` return the same object for
the same code, so identity, equality and hashing agree, and a card's values are plain attributes
read without computation (the coup resolver reads them hundreds of thousands of times a second).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, Final

from .errors import CardError

RANKS: Final = "A23456789TJQK"
SUITS: Final = "SHDC"

# 5324.20(a)(4)(i): 2-9 face value; 10, jack, queen, king zero; ace one.
_RANK_VALUE: Final = {r: (i + 1 if i < 9 else 0) for i, r in enumerate(RANKS)}
# 5324.20(e) and (i)(1)(i), (i)(3): when burning, tens and faces count 10, aces 1.
_RANK_BURN: Final = {r: min(i + 1, 10) for i, r in enumerate(RANKS)}


class Card:
    """One playing card. Immutable; one instance per code (see the module docstring).

    ``value`` is the baccarat value of 5324.20(a)(4)(i) (0-9); ``burn_value`` is the count used
    when burning cards under 5324.20(e) and (i) (1-10: tens and faces count 10).
    """

    __slots__ = ("code", "rank", "suit", "value", "burn_value")

    code: str
    rank: str
    suit: str
    value: int
    burn_value: int

    # Filled once at import with the 52 cards, never changed after.
    _interned: ClassVar[dict[str, Card]] = {}

    def __new__(cls, code: str) -> Card:
        try:
            return cls._interned[code]
        except (KeyError, TypeError):
            raise CardError(_card_problem(code)) from None

    @classmethod
    def _make(cls, rank: str, suit: str) -> Card:
        self = object.__new__(cls)
        for name, val in (
            ("code", rank + suit),
            ("rank", rank),
            ("suit", suit),
            ("value", _RANK_VALUE[rank]),
            ("burn_value", _RANK_BURN[rank]),
        ):
            object.__setattr__(self, name, val)
        return self

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Card is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Card is immutable")

    def __reduce__(self) -> tuple[type[Card], tuple[str]]:
        return (Card, (self.code,))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self

    def __repr__(self) -> str:
        return f"card({self.code!r})"

    def __str__(self) -> str:
        return self.code


def _card_problem(code: object) -> str:
    if not isinstance(code, str):
        return f"a card code must be a string like 'TD', not {type(code).__name__}"
    if len(code) != 2:
        hint = " (the ten is written T)" if code[:2] == "10" else ""
        return f"card code {code!r} must be two characters, rank then suit{hint}"
    rank, suit = code[0], code[1]
    if rank not in RANKS:
        return f"card code {code!r}: rank {rank!r} is not one of {RANKS}"
    if suit not in SUITS:
        return f"card code {code!r}: suit {suit!r} is not one of {SUITS}"
    return f"card code {code!r} is not a card"  # pragma: no cover - every valid code is interned


for _suit in SUITS:
    for _rank in RANKS:
        Card._interned[_rank + _suit] = Card._make(_rank, _suit)
del _suit, _rank

#: One deck in a fixed order (spades, hearts, diamonds, clubs; ace to king within a suit).
DECK: Final[tuple[Card, ...]] = tuple(Card._interned.values())


def card(code: str) -> Card:
    """The card written ``code`` (e.g. ``"TD"``). Raises :class:`CardError` (a ``ValueError``)
    naming the problem for anything else (``"1D"``, ``"T"``, ``"TX"``)."""
    return Card(code)


def cards(codes: str | Iterable[str]) -> tuple[Card, ...]:
    """Several cards: ``cards("TD 9H AS")`` or ``cards(["TD", "9H"])``."""
    if isinstance(codes, str):
        codes = codes.split()
    return tuple(Card(c) for c in codes)


def card_value(c: Card) -> int:
    """The value of a card, 5324.20(a)(4)(i): 2-9 face value, 10 and faces 0, ace 1."""
    return c.value


def burn_value(c: Card) -> int:
    """How many cards a face-up card calls for when burning, 5324.20(e) and (i)(1)(i), (i)(3):
    tens and faces count 10, aces 1, others their face value."""
    return c.burn_value


def point_count(values: Iterable[int]) -> int:
    """The point count of card values, 5324.20(a)(4)(ii): the total's right-hand digit."""
    return sum(values) % 10


def hand_total(hand: Iterable[Card]) -> int:
    """The point count of a hand of cards, 5324.20(a)(4)(ii)."""
    return sum(c.value for c in hand) % 10


def shoe_cards(decks: int) -> list[Card]:
    """``decks`` full decks in a fixed, unshuffled order. Shuffling belongs to the caller: these
    rules take no randomness. 5324.20(a)(4) requires at least six decks at the table; fewer are
    allowed here for analysis and tests."""
    if isinstance(decks, bool) or not isinstance(decks, int) or decks < 1:
        raise CardError(f"decks must be a positive whole number, not {decks!r}")
    return list(DECK) * decks
