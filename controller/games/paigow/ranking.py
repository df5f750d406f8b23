"""Ranking of pai gow tiles and two-tile hands, 9 NYCRR 5324.50(b) (N.J.A.C. 13:69F-10.2).

How two hands compare (:func:`compare`):

1. (b)(1): a hand that is one of the 20 permissible pair ranks -- supreme pair, 11 matched
   pairs, 4 mixed pairs, wongs, gongs -- beats every hand that is not; between two such hands
   the lower rank number wins. (b)(2): the same pair rank is a tie (the dealer or bank wins it;
   :func:`compare` reports 0 and :mod:`.outcome` gives it to the dealer).
2. (b)(3): otherwise the value wins: the spots of both tiles, the tens digit dropped (0-9).
   (b)(4): 1-2 and 2-4 used separately may count 3 or 6; a hand takes the count that gives it the
   higher value (the two counts differ by 3, so never tie), and a 1-2 counted 6 ranks fifteenth
   instead of seventeenth, a 2-4 counted 3 seventeenth instead of fifteenth.
3. (b)(5): the same value: the hand whose highest-ranking tile ranks higher, by (b)(6).
4. (b)(7): that tile of the same rank too: a copy hand, reported as 0 (dealer or bank wins).

Only the highest-ranking tile of each hand is compared in step 3: (b)(7) makes hands whose top
tiles tie a copy, whatever the second tiles are.

Every two-tile hand gets one integer :attr:`HandRank.key`; ``compare`` is the sign of the
difference of two keys, which makes it antisymmetric and transitive by construction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Final

from .tiles import TILE_KINDS, Tile, check_tiles, tile

__all__ = [
    "TILE_RANKS",
    "tile_rank",
    "PAIR_RANKS",
    "PairRank",
    "HandRank",
    "hand_rank",
    "hand_value",
    "pair_rank",
    "compare",
    "rank_key",
    "all_hands",
    "SUPREME_RANK",
]

# 5324.50(b)(6): individual rank of each kind, first (1) the highest.
TILE_RANKS: Final[dict[Tile, int]] = {
    tile(text): rank
    for text, rank in (
        ("6-6", 1),
        ("1-1", 2),
        ("4-4", 3),
        ("1-3", 4),
        ("5-5", 5),
        ("3-3", 6),
        ("2-2", 7),
        ("5-6", 8),
        ("4-6", 9),
        ("1-6", 10),
        ("1-5", 11),
        ("3-6", 12),
        ("4-5", 12),
        ("2-6", 13),
        ("3-5", 13),
        ("2-5", 14),
        ("3-4", 14),
        ("2-4", 15),
        ("1-4", 16),
        ("2-3", 16),
        ("1-2", 17),
    )
}
assert set(TILE_RANKS) == set(TILE_KINDS)


def tile_rank(t: Tile | str) -> int:
    """Individual rank 1 (highest, 6-6) .. 17 (lowest, 1-2) of a tile, 5324.50(b)(6)."""
    return TILE_RANKS[tile(t)]


@dataclass(frozen=True)
class PairRank:
    """One row of the (b)(1) table: its rank (1 = supreme pair), name, kind and tile pairs."""

    rank: int
    name: str
    kind: str  # "supreme", "matched", "mixed", "wong" or "gong"
    combos: tuple[tuple[Tile, Tile], ...]


def _row(rank: int, name: str, kind: str, *combos: str) -> PairRank:
    pairs = []
    for c in combos:
        a, b = c.split("+")
        pairs.append((tile(a), tile(b)))
    return PairRank(rank, name, kind, tuple(pairs))


# 5324.50(b)(1), first (1) the highest.
PAIR_RANKS: Final[tuple[PairRank, ...]] = (
    _row(1, "supreme pair (gee joon)", "supreme", "2-4+1-2"),
    _row(2, "pair of 6-6 (teen)", "matched", "6-6+6-6"),
    _row(3, "pair of 1-1 (day)", "matched", "1-1+1-1"),
    _row(4, "pair of 4-4", "matched", "4-4+4-4"),
    _row(5, "pair of 1-3", "matched", "1-3+1-3"),
    _row(6, "pair of 5-5", "matched", "5-5+5-5"),
    _row(7, "pair of 3-3", "matched", "3-3+3-3"),
    _row(8, "pair of 2-2", "matched", "2-2+2-2"),
    _row(9, "pair of 5-6", "matched", "5-6+5-6"),
    _row(10, "pair of 4-6", "matched", "4-6+4-6"),
    _row(11, "pair of 1-6", "matched", "1-6+1-6"),
    _row(12, "pair of 1-5", "matched", "1-5+1-5"),
    _row(13, "mixed 9s", "mixed", "3-6+4-5"),
    _row(14, "mixed 8s", "mixed", "3-5+2-6"),
    _row(15, "mixed 7s", "mixed", "3-4+2-5"),
    _row(16, "mixed 5s", "mixed", "1-4+2-3"),
    _row(17, "wong of 6-6 (teen) and a 9", "wong", "6-6+4-5", "6-6+3-6"),
    _row(18, "wong of 1-1 (day) and a 9", "wong", "1-1+4-5", "1-1+3-6"),
    _row(19, "gong of 6-6 (teen) and an 8", "gong", "6-6+2-6", "6-6+3-5", "6-6+4-4"),
    _row(20, "gong of 1-1 (day) and an 8", "gong", "1-1+2-6", "1-1+3-5", "1-1+4-4"),
)
SUPREME_RANK: Final = 1

_PAIR_BY_KEY: Final[dict[tuple[int, int], PairRank]] = {}
for _pr in PAIR_RANKS:
    for _a, _b in _pr.combos:
        _PAIR_BY_KEY[(min(_a.index, _b.index), max(_a.index, _b.index))] = _pr

_ONE_TWO: Final = tile("1-2")
_TWO_FOUR: Final = tile("2-4")


@dataclass(frozen=True)
class HandRank:
    """Everything (b) says about one two-tile hand.

    ``pair``: the (b)(1) row the hand is, or None. ``value``: 0-9 per (b)(3)/(b)(4) -- for a
    hand that is no pair, with 1-2/2-4 counted the way that gives the higher value; for a pair
    (wong, gong), the plain spot total with the tens digit dropped (the supreme pair: 9).
    ``top_rank``: (b)(6) rank of the highest-ranking tile, after any (b)(4) rank change.
    ``counted_as``: for a lone 1-2 or 2-4, the count (3 or 6) it takes; else None.
    ``key``: an integer; a higher key is a higher-ranking hand, equal keys are a copy.
    """

    tiles: tuple[Tile, Tile]
    pair: PairRank | None
    value: int
    top_rank: int
    counted_as: int | None
    key: int

    @property
    def is_pair(self) -> bool:
        """True for any (b)(1) combination: supreme, matched, mixed pair, wong or gong."""
        return self.pair is not None

    @property
    def spots(self) -> int:
        """Plain total of spots on both tiles (no (b)(4) recount)."""
        return self.tiles[0].spots + self.tiles[1].spots

    def describe(self) -> str:
        """Short text, e.g. ``"gong of 6-6 (teen) and an 8"`` or ``"7 (top tile rank 9)"``."""
        if self.pair is not None:
            return self.pair.name
        s = f"{self.value} (top tile rank {self.top_rank})"
        if self.counted_as is not None:
            s += f", gee joon tile counted as {self.counted_as}"
        return s


def _nonpair(a: Tile, b: Tile, a_spots: int, a_rank: int) -> tuple[int, int, int]:
    """(key, value, top_rank) of a non-pair hand where tile ``a`` counts ``a_spots``/``a_rank``."""
    value = (a_spots + b.spots) % 10  # (b)(3): drop the tens digit
    top = min(a_rank, TILE_RANKS[b])
    return value * 100 + (18 - top), value, top


@cache
def _rank_by_index(i: int, j: int) -> HandRank:
    a, b = TILE_KINDS[i], TILE_KINDS[j]
    pr = _PAIR_BY_KEY.get((i, j))
    if pr is not None:
        value = (a.spots + b.spots) % 10
        top = min(TILE_RANKS[a], TILE_RANKS[b])
        return HandRank((a, b), pr, value, top, None, 1000 + (21 - pr.rank))
    # (b)(4): a lone supreme-pair tile may be counted 3 or 6, its rank changing with the count.
    if b in (_ONE_TWO, _TWO_FOUR):
        a, b = b, a
    if a == _ONE_TWO:
        options = [(3, 17), (6, 15)]
    elif a == _TWO_FOUR:
        options = [(6, 15), (3, 17)]
    else:
        key, value, top = _nonpair(a, b, a.spots, TILE_RANKS[a])
        return HandRank((TILE_KINDS[i], TILE_KINDS[j]), None, value, top, None, key)
    best = max((_nonpair(a, b, sp, rk), sp) for sp, rk in options)
    (key, value, top), counted = best
    return HandRank((TILE_KINDS[i], TILE_KINDS[j]), None, value, top, counted, key)


def _indices(hand: Iterable[Tile | str]) -> tuple[int, int]:
    a, b = check_tiles(hand, 2, "two-tile hand")
    i, j = a.index, b.index
    return (i, j) if i <= j else (j, i)


def hand_rank(hand: Sequence[Tile | str]) -> HandRank:
    """Rank of a two-tile hand, 5324.50(b)(1)-(7). Raises ``HandError`` for a bad hand."""
    return _rank_by_index(*_indices(hand))


def rank_key(hand: Sequence[Tile | str]) -> int:
    """Integer rank of a two-tile hand: higher is better, equal is a copy/identical pair."""
    return _rank_by_index(*_indices(hand)).key


def hand_value(hand: Sequence[Tile | str]) -> int:
    """Value 0-9 of a two-tile hand, 5324.50(b)(3), with the (b)(4) recount of 1-2/2-4."""
    return hand_rank(hand).value


def pair_rank(hand: Sequence[Tile | str]) -> int | None:
    """The (b)(1) pair rank 1-20 of the hand, or None if it is no permissible pair."""
    pr = hand_rank(hand).pair
    return None if pr is None else pr.rank


def compare(hand_a: Sequence[Tile | str], hand_b: Sequence[Tile | str]) -> int:
    """1 if ``hand_a`` ranks higher, -1 if ``hand_b`` does, 0 for identical rank.

    0 is a copy hand (b)(7) or identical pair rank (b)(2), which the dealer or bank wins. The
    two hands are ranked independently (they may be, for instance, a player's and the
    dealer's, each from its own four tiles).
    """
    ka = rank_key(hand_a)
    kb = rank_key(hand_b)
    return (ka > kb) - (ka < kb)


def all_hands() -> tuple[tuple[Tile, Tile], ...]:
    """The 221 distinct two-tile hands by pip pattern (see tests for the count)."""
    out = []
    for i, a in enumerate(TILE_KINDS):
        for j in range(i, len(TILE_KINDS)):
            b = TILE_KINDS[j]
            if i == j and a.copies < 2:
                continue
            out.append((a, b))
    return tuple(out)
