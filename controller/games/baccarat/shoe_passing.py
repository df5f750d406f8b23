"""Who holds the shoe: offering it at the start of play, 9 NYCRR 5324.20(f)(1), and passing it
after a round, (h)(1)-(2). Pure: seats in, seats out.

Both paragraphs go counter-clockwise: (f)(1) from seat one, (h)(2) from "the player immediately to
the right of the previous curator" (facing the table, the player on one's right sits next
counter-clockwise). Which way the seat numbers run is the layout's, so a :class:`SeatRing` lists
the seats in counter-clockwise order; ``SeatRing.numbered(n)`` assumes numbers that increase
counter-clockwise.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Final

from .coup import WINNERS
from .errors import BaccaratError

#: (h)(2) offers the shoe to "each of the other players, in turn": by default the previous curator
#: is not offered it again in the same round of offers. See docs/baccarat-shoe.md.
OFFER_BACK_TO_PREVIOUS: Final = False

#: Whether a banker's loss in a hand no player wagers on (5324.20(i)(1)(ii)) compels passing the
#: shoe under (h)(1)(i). By default it does not: nothing was wagered, so no round of play was
#: decided. See docs/baccarat-shoe.md.
DEAD_HAND_COMPELS_PASS: Final = False


class SeatError(BaccaratError, ValueError):
    """A seat layout or a seat number the table does not have."""


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass(frozen=True, slots=True)
class SeatRing:
    """The table's seat numbers in counter-clockwise order round the table (a layout setting).
    Must hold seat 1, the seat (f)(1) starts from; each seat once."""

    seats_ccw: tuple[int, ...]

    def __post_init__(self) -> None:
        seats = self.seats_ccw
        if not isinstance(seats, tuple) or not seats:
            raise SeatError(f"seats_ccw must be a non-empty tuple of seat numbers, not {seats!r}")
        if not all(_is_int(s) and s >= 1 for s in seats):
            raise SeatError(f"seat numbers are whole numbers 1 or more, not {seats!r}")
        if len(set(seats)) != len(seats):
            raise SeatError(f"a seat appears twice in {seats!r}")
        if 1 not in seats:
            raise SeatError("the layout must have seat number one (5324.20(f)(1))")

    @classmethod
    def numbered(cls, count: int, skip: Iterable[int] = ()) -> SeatRing:
        """Seats ``1..count`` (less any in ``skip``, e.g. a table with no seat 13), numbers
        increasing counter-clockwise."""
        if not _is_int(count) or count < 1:
            raise SeatError(f"count must be a whole number 1 or more, not {count!r}")
        gone = set(skip)
        return cls(tuple(s for s in range(1, count + 1) if s not in gone))

    def ccw_from(self, seat: int) -> tuple[int, ...]:
        """Every seat, starting at ``seat`` and going counter-clockwise."""
        i = self._index(seat)
        return self.seats_ccw[i:] + self.seats_ccw[:i]

    def _index(self, seat: int) -> int:
        try:
            return self.seats_ccw.index(seat)
        except ValueError:
            raise SeatError(f"seat {seat!r} is not at this table {self.seats_ccw}") from None


def _occupied(ring: SeatRing, occupied: Collection[int]) -> frozenset[int]:
    seats = frozenset(occupied)
    stray = sorted(s for s in seats if s not in ring.seats_ccw)
    if stray:
        raise SeatError(f"occupied seats {stray} are not at this table {ring.seats_ccw}")
    return seats


def opening_offer_order(ring: SeatRing, occupied: Collection[int]) -> tuple[int, ...]:
    """The order the shoe is offered at the start of play, 5324.20(f)(1): "the dealer calling the
    game shall offer the shoe to the player in seat number one at the table. If such player rejects
    the shoe or if there is no one in seat number one, the dealer shall offer the shoe to each of
    the other players, in turn, counter-clockwise around the table"."""
    seats = _occupied(ring, occupied)
    return tuple(s for s in ring.ccw_from(1) if s in seats)


def passing_offer_order(
    ring: SeatRing,
    occupied: Collection[int],
    previous: int,
    *,
    offer_back: bool = OFFER_BACK_TO_PREVIOUS,
) -> tuple[int, ...]:
    """The order the shoe is offered when the curator gives it up, 5324.20(h)(2): "the dealer shall
    offer the shoe to the player immediately to the right of the previous curator and, if such
    player does not accept the shoe or there is no player in that position, the dealer shall offer
    the shoe to each of the other players, in turn, counterclockwise around the table."

    The previous curator comes last when ``offer_back`` (default :data:`OFFER_BACK_TO_PREVIOUS`),
    else not at all.
    """
    seats = _occupied(ring, occupied)
    after = ring.ccw_from(previous)[1:]
    order = [s for s in after if s in seats]
    if offer_back and previous in seats:
        order.append(previous)
    return tuple(order)


def first_to_accept(offer_order: Iterable[int], accepting: Collection[int]) -> int | None:
    """The new curator: "The first player to accept the shoe when offered", (h)(2). ``None`` when
    nobody accepts: "the dealer shall turn the cards over and place the cards on the designated
    areas of the layout", (h)(2)."""
    for seat in offer_order:
        if seat in accepting:
            return seat
    return None


@dataclass(frozen=True, slots=True)
class Passing:
    """Whether the curator passes the shoe after a round, and why (the paragraph applied)."""

    passes: bool
    reason: str


def after_round(
    winner: str,
    *,
    curator_passes: bool = False,
    ordered: bool = False,
    wagered: bool = True,
    dead_hand_compels: bool = DEAD_HAND_COMPELS_PASS,
) -> Passing:
    """Whether the curator passes the shoe after a round, 5324.20(h)(1): "It shall be the option of
    the curator, after any round of play, either to pass the shoe or remain as curator except that:
    (i) the curator shall pass the shoe whenever the banker's hand loses; and (ii) the dealer or
    floorperson assigned to the table may order the curator to pass the shoe ...".

    ``winner`` is the coup's winner ("player", "banker", "tie"): only "player" is the banker's hand
    losing, a tie is not. ``curator_passes`` is the curator's own choice, ``ordered`` an order
    under (h)(1)(ii). ``wagered`` is False for a hand no player wagers on (5324.20(i)(1)(ii)).
    """
    if winner not in WINNERS:
        raise SeatError(f"winner must be one of {WINNERS}, not {winner!r}")
    if ordered:
        return Passing(True, "ordered by the dealer or floorperson, 5324.20(h)(1)(ii)")
    if winner == "player" and (wagered or dead_hand_compels):
        return Passing(True, "the banker's hand lost, 5324.20(h)(1)(i)")
    if curator_passes:
        return Passing(True, "the curator's option, 5324.20(h)(1)")
    return Passing(False, "the curator's option to remain, 5324.20(h)(1)")
