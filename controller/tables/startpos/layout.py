"""Where the deal starts: a drawn number counted around the table (pure, no I/O).

N.J.A.C. 13:69F-31.11(c) (Asia poker): a computerized random number generator approved by the
Division may "select and display a number from 1 through 7"; the dealer counts counterclockwise,
the dealer's position is number one, and every betting position counts "regardless of whether
there is a wager at the position". The game is the layout: the range N, the positions in seat
order, which position counts as one (the dealer, or the bank), the direction, and whether an
empty position counts.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

Direction = Literal["counterclockwise", "clockwise"]


class LayoutError(ValueError):
    """A layout that cannot be counted (named in the profile's error)."""


@dataclass(frozen=True)
class StartLayout:
    """A game's counting rule.

    ``positions`` are the table's positions in clockwise order as seen from above (the dealer's
    or bank's place included); ``one`` is the position counted as number one; ``direction`` is
    the way the count goes from it; with ``count_empty`` every position counts, else only
    ``one`` and the positions with a wager (``occupied``).
    """

    range_n: int
    positions: tuple[str, ...]
    one: str
    direction: Direction = "counterclockwise"
    count_empty: bool = True

    def __post_init__(self) -> None:
        if self.range_n < 1:
            raise LayoutError(f"range must be 1 or more, not {self.range_n}")
        if len(set(self.positions)) != len(self.positions) or not self.positions:
            raise LayoutError(f"positions must be distinct and not empty: {self.positions}")
        if self.one not in self.positions:
            raise LayoutError(f"position one {self.one!r} is not one of {self.positions}")
        if self.direction not in ("counterclockwise", "clockwise"):
            raise LayoutError(f"direction must be counterclockwise or clockwise: {self.direction}")

    def order(self, occupied: Collection[str] = ()) -> tuple[str, ...]:
        """The positions in counting order, ``one`` first; the empty ones left out unless
        ``count_empty``."""
        start = self.positions.index(self.one)
        ring = self.positions[start:] + self.positions[:start]
        if self.direction == "counterclockwise":
            ring = ring[:1] + tuple(reversed(ring[1:]))
        if self.count_empty:
            return ring
        return tuple(p for p in ring if p == self.one or p in occupied)

    def start(self, number: int, occupied: Collection[str] = ()) -> str:
        """The position that receives the first card or stack for a drawn ``number``
        (13:69F-31.11(c): count from one "until the count matches" the number)."""
        if not 1 <= number <= self.range_n:
            raise LayoutError(f"number {number} is outside 1 through {self.range_n}")
        return self.count(number, occupied)

    def count(self, total: int, occupied: Collection[str] = ()) -> str:
        """The position a count of ``total`` ends on, going on around the table past the
        last position (13:69F-31.11(b)2: the dice's total, 3 through 18)."""
        if total < 1:
            raise LayoutError(f"a count starts at 1, not {total}")
        ring = self.order(occupied)
        return ring[(total - 1) % len(ring)]
