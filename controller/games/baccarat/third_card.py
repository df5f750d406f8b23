"""The drawing rules: naturals (f)(10), the player's rule (f)(11), the banker's rules (f)(12)-(13)
of 9 NYCRR 5324.20.

The predicates take point counts and card VALUES (0-9, 5324.20(a)(4)(i)), not cards, so the
exact-odds enumeration, the coup resolver and the shoe-level code all ask the same tables.

A note on the seed text of (f)(13): its first row is cut short. It reads "0,1,2 | 0,1,2,3,4,5,6,7"
with the rest of the "draws" column and the whole "stays" column lost. A banker with 0, 1 or 2
always draws, whatever the player's third card: every published analysis of the game assumes it,
and so do the exact figures pinned in tests/unit/baccarat/test_odds.py (banker 0.458597 with eight
decks), which this table reproduces only with the full row. See issue 3.
"""

from __future__ import annotations

from typing import Final

from .errors import TotalError

#: 5324.20(f)(10): a two-card point count of 8 or 9 is a natural.
NATURALS: Final = frozenset({8, 9})

#: 5324.20(f)(11): the player's hand draws on 0-5 and stays on 6-9. Indexed by the player's
#: two-card point count.
PLAYER_DRAWS: Final[tuple[bool, ...]] = tuple(t <= 5 for t in range(10))

#: 5324.20(f)(12): when the player's hand stays (on 6 or 7), the banker's hand draws on 0-5 and
#: stands on 6-9. Indexed by the banker's two-card point count.
BANKER_DRAWS_PLAYER_STOOD: Final[tuple[bool, ...]] = tuple(t <= 5 for t in range(10))

# 5324.20(f)(13), "draws when player's third card is": the card values for which the banker draws.
_F13_DRAWS: Final[dict[int, frozenset[int]]] = {
    # Cut short in the seed text; a banker with 0, 1 or 2 always draws (module docstring).
    0: frozenset(range(10)),
    1: frozenset(range(10)),
    2: frozenset(range(10)),
    3: frozenset({0, 1, 2, 3, 4, 5, 6, 7, 9}),  # stays on 8
    4: frozenset({2, 3, 4, 5, 6, 7}),  # stays on 0, 1, 8, 9
    5: frozenset({4, 5, 6, 7}),  # stays on 0, 1, 2, 3, 8, 9
    6: frozenset({6, 7}),  # stays on 0, 1, 2, 3, 4, 5, 8, 9
    7: frozenset(),  # stands
    8: frozenset(),  # natural stand (never reached: (f)(10) ends the coup first)
    9: frozenset(),  # natural stand
}

#: 5324.20(f)(13) as a table: ``BANKER_DRAWS[banker_total][player_third_card_value]``.
BANKER_DRAWS: Final[tuple[tuple[bool, ...], ...]] = tuple(
    tuple(v in _F13_DRAWS[b] for v in range(10)) for b in range(10)
)


def _check_total(name: str, total: object) -> int:
    if isinstance(total, bool) or not isinstance(total, int) or not 0 <= total <= 9:
        raise TotalError(f"{name} must be a point count 0-9, not {total!r}")
    return total


def is_natural(total: int) -> bool:
    """Whether a two-card point count is a natural (8 or 9), 5324.20(f)(10)."""
    return _check_total("total", total) >= 8


def player_draws(total: int) -> bool:
    """Whether the player's hand takes a third card on this two-card point count, 5324.20(f)(11):
    draws on 0-5, stays on 6-9.

    Call it only when neither hand is a natural: a natural on either side ends the coup before any
    third card, 5324.20(f)(10).
    """
    return PLAYER_DRAWS[_check_total("player total", total)]


def banker_draws(banker_total: int, player_third: int | None) -> bool:
    """Whether the banker's hand takes a third card.

    ``banker_total`` is the banker's two-card point count. ``player_third`` is the VALUE (0-9) of
    the player's third card, or ``None`` when the player's hand stood:

    * player stood (on 6 or 7): draw on 0-5, stand on 6-9, 5324.20(f)(12);
    * player drew: the table of 5324.20(f)(13) (0-2 always draw; 3 draws unless the card is 8;
      4 on 2-7; 5 on 4-7; 6 on 6-7; 7 stands; 8-9 natural stand).

    Call it only when neither hand is a natural, 5324.20(f)(10).
    """
    b = _check_total("banker total", banker_total)
    if player_third is None:
        return BANKER_DRAWS_PLAYER_STOOD[b]
    v = _check_total("player's third card value", player_third)
    return BANKER_DRAWS[b][v]
