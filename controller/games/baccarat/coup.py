"""A coup: the cards of one round dealt from the shoe and the result, 9 NYCRR 5324.20(f), (g)(1).

``deal(cards)`` takes cards in shoe order and applies (f)(5) (first and third cards to the
player, second and fourth to the banker), (f)(10) (naturals), (f)(11) (the player's rule), (f)(8)
(the player's third card comes before the banker's) and (f)(12)-(13) (the banker's rules). It
consumes 4, 5 or 6 cards and never looks at a card the rules do not call for.

``resolve_values(values, start)`` is the same resolver on card values only (0-9), for code that
keeps a shoe as a list of values and needs only the totals (the exact-odds checks, simulations).

Both are written for speed (the bench deals eight-deck shoes at several hundred thousand coups a
second): one lookup in a 100-entry plan table decides who draws, and the outcome flags
(winner, naturals, dragon 7, panda 8, margin) are computed from the totals only when read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import Final, NamedTuple

from .cards import Card
from .errors import ShoeExhausted
from .third_card import BANKER_DRAWS, BANKER_DRAWS_PLAYER_STOOD, NATURALS, PLAYER_DRAWS

# The plan for a coup, from the two-card point counts (index player_total * 10 + banker_total):
_STAND: Final = 0  # a natural on either side (f)(10), or player 6-7 and banker 6-7 (f)(11)-(12)
_BANKER_ONLY: Final = 1  # player stays on 6-7 (f)(11); banker draws on 0-5 (f)(12)
_PLAYER_DRAWS: Final = 2  # player draws on 0-5 (f)(11); the banker then follows (f)(13)


def _plan(pt: int, bt: int) -> int:
    if pt in NATURALS or bt in NATURALS:
        return _STAND
    if PLAYER_DRAWS[pt]:
        return _PLAYER_DRAWS
    return _BANKER_ONLY if BANKER_DRAWS_PLAYER_STOOD[bt] else _STAND


_PLAN: Final[tuple[int, ...]] = tuple(_plan(i // 10, i % 10) for i in range(100))
_MOD10: Final[tuple[int, ...]] = tuple(i % 10 for i in range(30))

WINNERS: Final = ("player", "banker", "tie")


class Coup(NamedTuple):
    """One dealt round. Build it with :func:`deal`; the fields are the cards and final totals.

    ``player`` and ``banker`` are tuples of :class:`~.cards.Card` in the order dealt;
    ``player_total`` and ``banker_total`` the final point counts (5324.20(a)(4)(ii)).
    """

    player: tuple[Card, ...]
    banker: tuple[Card, ...]
    player_total: int
    banker_total: int

    @property
    def winner(self) -> str:
        """``"player"``, ``"banker"`` or ``"tie"``: the higher point count wins, 5324.20(g)(1)."""
        p = self.player_total
        b = self.banker_total
        return "player" if p > b else "banker" if b > p else "tie"

    @property
    def cards_used(self) -> int:
        """How many cards the coup took from the shoe: 4, 5 or 6."""
        return len(self.player) + len(self.banker)

    @property
    def player_natural(self) -> bool:
        """The player's first two cards count 8 or 9, 5324.20(f)(10)."""
        # A two-card hand totalling 8 or 9 at the end of a coup is always a natural: nobody draws
        # to a two-card 8 or 9, and a two-card hand keeps its two-card total.
        return len(self.player) == 2 and self.player_total >= 8

    @property
    def banker_natural(self) -> bool:
        """The banker's first two cards count 8 or 9, 5324.20(f)(10)."""
        return len(self.banker) == 2 and self.banker_total >= 8

    @property
    def natural(self) -> bool:
        """Either hand is a natural, so neither drew, 5324.20(f)(10)."""
        return self.player_natural or self.banker_natural

    @property
    def player_third(self) -> Card | None:
        """The player's third card, or None when the player's hand stayed."""
        return self.player[2] if len(self.player) == 3 else None

    @property
    def banker_third(self) -> Card | None:
        """The banker's third card, or None when the banker's hand stood."""
        return self.banker[2] if len(self.banker) == 3 else None

    @property
    def dragon7(self) -> bool:
        """EZ baccarat's dragon 7: the banker's hand wins with a three-card total of 7.

        5324.20(b)(1)(i), (v) use the term without defining it; this is the industry's definition.
        """
        return len(self.banker) == 3 and self.banker_total == 7 and self.player_total < 7

    @property
    def panda8(self) -> bool:
        """EZ baccarat's panda 8: the player's hand wins with a three-card total of 8.

        5324.20(b)(1)(ii), (vi) use the term without defining it; this is the industry's definition.
        """
        return len(self.player) == 3 and self.player_total == 8 and self.banker_total < 8

    @property
    def margin(self) -> int:
        """By how many points the winning hand won (0 on a tie): the dragon bonus's "win by"."""
        return abs(self.player_total - self.banker_total)

    def __str__(self) -> str:
        p = " ".join(c.code for c in self.player)
        b = " ".join(c.code for c in self.banker)
        return f"player {p} = {self.player_total}, banker {b} = {self.banker_total}: {self.winner}"


# Builds a Coup without the NamedTuple's Python-level __new__: a third faster, and deal() is hot.
_new_coup: Callable[[type[Coup], tuple[object, ...]], Coup] = tuple.__new__


def _exhausted(needed: int, available: int) -> ShoeExhausted:
    return ShoeExhausted(
        f"the cards ran out mid-coup: it needed {needed} cards and only {available} were left"
        " (5324.20(i)(4): the round is void)",
        needed=needed,
        available=available,
    )


def deal(cards: Sequence[Card] | Iterable[Card], start: int = 0) -> Coup:
    """Deal one coup from ``cards`` in shoe order, starting at index ``start``.

    Consumes ``coup.cards_used`` (4 to 6) cards: ``cards[start:start + coup.cards_used]``. Card
    codes (``"TD"``) are accepted too. With an iterator rather than a sequence, exactly the cards
    the coup uses are taken from it. Raises :class:`~.errors.ShoeExhausted` (saying how many cards
    the coup needed) when the cards run out before the coup is complete.
    """
    if start < 0:
        raise ValueError(f"start must be 0 or more, not {start}")
    try:
        p1 = cards[start]  # type: ignore[index]
        b1 = cards[start + 1]  # type: ignore[index]
        p2 = cards[start + 2]  # type: ignore[index]
        b2 = cards[start + 3]  # type: ignore[index]
        pt = _MOD10[p1.value + p2.value]
        bt = _MOD10[b1.value + b2.value]
    except IndexError:
        raise _exhausted(4, max(0, len(cards) - start)) from None  # type: ignore[arg-type]
    except (TypeError, AttributeError):
        return _deal_slow(cards, start)
    plan = _PLAN[pt * 10 + bt]
    if plan == _STAND:
        return _new_coup(Coup, ((p1, p2), (b1, b2), pt, bt))
    if plan == _BANKER_ONLY:
        try:
            b3 = cards[start + 4]  # type: ignore[index]
        except IndexError:
            raise _exhausted(5, len(cards) - start) from None  # type: ignore[arg-type]
        return _new_coup(Coup, ((p1, p2), (b1, b2, b3), pt, _MOD10[bt + b3.value]))
    try:
        p3 = cards[start + 4]  # type: ignore[index]
    except IndexError:
        raise _exhausted(5, len(cards) - start) from None  # type: ignore[arg-type]
    v3 = p3.value
    if not BANKER_DRAWS[bt][v3]:
        return _new_coup(Coup, ((p1, p2, p3), (b1, b2), _MOD10[pt + v3], bt))
    try:
        b3 = cards[start + 5]  # type: ignore[index]
    except IndexError:
        raise _exhausted(6, len(cards) - start) from None  # type: ignore[arg-type]
    return _new_coup(Coup, ((p1, p2, p3), (b1, b2, b3), _MOD10[pt + v3], _MOD10[bt + b3.value]))


def _as_card(c: Card | str) -> Card:
    return c if isinstance(c, Card) else Card(c)


def _deal_slow(cards: Sequence[Card | str] | Iterable[Card | str], start: int) -> Coup:
    """``deal`` for card codes and for iterators: take cards one at a time, never one too many."""
    if isinstance(cards, Sequence):
        it: Iterator[Card | str] = iter(cards[start:])
    else:
        it = islice(iter(cards), start, None)
    taken: list[Card] = []

    def take(needed: int) -> None:
        """Take cards until the coup holds ``needed`` of them."""
        for c in islice(it, needed - len(taken)):
            taken.append(_as_card(c))
        if len(taken) < needed:
            raise _exhausted(needed, len(taken))

    take(4)
    p1, b1, p2, b2 = taken
    pt = _MOD10[p1.value + p2.value]
    bt = _MOD10[b1.value + b2.value]
    plan = _PLAN[pt * 10 + bt]
    if plan == _STAND:
        return Coup((p1, p2), (b1, b2), pt, bt)
    take(5)
    if plan == _BANKER_ONLY:
        b3 = taken[4]
        return Coup((p1, p2), (b1, b2, b3), pt, _MOD10[bt + b3.value])
    p3 = taken[4]
    if not BANKER_DRAWS[bt][p3.value]:
        return Coup((p1, p2, p3), (b1, b2), _MOD10[pt + p3.value], bt)
    take(6)
    b3 = taken[5]
    return Coup((p1, p2, p3), (b1, b2, b3), _MOD10[pt + p3.value], _MOD10[bt + b3.value])


def resolve_values(values: Sequence[int], start: int = 0) -> tuple[int, int, int]:
    """The coup dealt from card VALUES (0-9, 5324.20(a)(4)(i)) in shoe order from ``start``:
    ``(player_total, banker_total, cards_used)``. Same rules as :func:`deal`, no card objects.

    Raises :class:`~.errors.ShoeExhausted` when the values run out before the coup is complete.
    """
    n = len(values) - start
    if start < 0:
        raise ValueError(f"start must be 0 or more, not {start}")
    if n < 4:
        raise _exhausted(4, max(n, 0))
    pt = _MOD10[values[start] + values[start + 2]]
    bt = _MOD10[values[start + 1] + values[start + 3]]
    plan = _PLAN[pt * 10 + bt]
    if plan == _STAND:
        return pt, bt, 4
    if n < 5:
        raise _exhausted(5, n)
    v5 = values[start + 4]
    if plan == _BANKER_ONLY:
        return pt, _MOD10[bt + v5], 5
    if not BANKER_DRAWS[bt][v5]:
        return _MOD10[pt + v5], bt, 5
    if n < 6:
        raise _exhausted(6, n)
    return _MOD10[pt + v5], _MOD10[bt + values[start + 5]], 6
