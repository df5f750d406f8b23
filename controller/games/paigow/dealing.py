"""Dealing pai gow tiles: starting position, the bank's cut, the ten styles of delivery.

Pure rules: no I/O, no clock, no randomness. The dice total or the RNG number comes in as an
argument; tiles are opaque objects (this module never looks inside one).

Sources (``/work/shared/seeds``):

* 9 NYCRR 5324.50(a)(3)-(4), (e)(3)-(4): dice total 3-18 or an RNG number 1-8; count
  counter-clockwise with the dealer as number one, every betting position counted whether or
  not it holds a wager, the dead hand counted in order.
* 5324.50(g)(10) / N.J.A.C. 13:69F-10.8(j): with a player bank the count starts at the bank.
* 5324.50(g)(7) / 13:69F-10.8(g): the bank's one cut of the eight stacks.
* 5324.50(g)(9), (g)(11)(i)-(x) / 13:69F-10.8(i), (k)1-10: the ten styles of delivery; house way
  from the right when the bank names none. (e)(4) (no player bank) is the same as house way from
  the right: "the first stack of four tiles, starting from the right side of the eight stacks".

Conventions
-----------
``stacks`` is a sequence of eight stacks, **left to right as the dealer sees them**, each a
sequence of four tiles **top tile first**. So ``stacks[7]`` is "the first stack on the dealer's
right" and ``stacks[0]`` "the first stack on the dealer's left"; ``stacks[i][0]`` is a top tile.

:func:`deliver` returns eight hands; hand 0 goes to the starting position and hand ``k`` to the
``k``-th position counter-clockwise after it. Within a hand the tiles are listed in the order
the dealer takes them (for two stacks named together, in the order the regulation names them);
that order carries no meaning for the game.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, TypeVar

from controller.games.paigow.errors import PaigowError

__all__ = [
    "DealingError",
    "DELIVERY_STYLES",
    "DEFAULT_DELIVERY_STYLE",
    "STACKS",
    "TILES_PER_STACK",
    "starting_position",
    "deal_order",
    "deliver",
    "delivery_plan",
    "cut",
]

T = TypeVar("T")

STACKS: Final = 8
TILES_PER_STACK: Final = 4

DICE_MIN: Final = 3  # three dice, 5324.50(a)(3)
DICE_MAX: Final = 18
DIE_MIN: Final = 1  # one die of the shaker's three: the dealer enters each as 1-6 (`dice A B C`)
DIE_MAX: Final = 6
RNG_MIN: Final = 1  # 5324.50(a)(4): "a number from one through eight, inclusive"
RNG_MAX: Final = 8


class DealingError(PaigowError, ValueError):
    """Bad input to a dealing rule: a count out of range, a malformed layout, an unknown style
    of delivery, an impossible cut. The message names what is wrong."""


# ---------------------------------------------------------------------------------------------
# Starting position, 5324.50(e)(3), (g)(10); 13:69F-10.8(j)
# ---------------------------------------------------------------------------------------------


def _require_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise DealingError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    return value


def starting_position(count: int, positions: int = STACKS, *, source: str | None = None) -> int:
    """Ordinal (1..``positions``) of the position where the count ends.

    Position 1 is where the count starts: the dealer (5324.50(e)(3)) or, with a player bank, the
    bank (5324.50(g)(10); 13:69F-10.8(j)). Ordinals go counter-clockwise and count *every*
    position, wagered or not, the dealer (in a bank round) and the dead hand included -- which
    physical seat an ordinal is belongs to the table layout, not to this rule.

    ``count`` is a dice total 3-18 (5324.50(a)(3)) or an RNG number 1-8 (5324.50(a)(4)); 1..18 is
    accepted. Pass ``source="dice"`` or ``source="rng"`` to check the narrower range too.

    >>> starting_position(3), starting_position(8), starting_position(9), starting_position(18)
    (3, 8, 1, 2)
    """
    count = _require_int("count", count)
    positions = _require_int("positions", positions)
    if positions < 1:
        raise DealingError(f"positions must be at least 1, got {positions}")
    if source is None:
        lo, hi, what = RNG_MIN, DICE_MAX, "a dice total 3-18 or an RNG number 1-8"
    elif source == "dice":
        lo, hi, what = DICE_MIN, DICE_MAX, "a total of three dice, 3-18"
    elif source == "rng":
        lo, hi, what = RNG_MIN, RNG_MAX, "an RNG number 1-8"
    else:
        raise DealingError(f"source must be 'dice', 'rng' or None, got {source!r}")
    if not lo <= count <= hi:
        raise DealingError(f"count must be {what}, got {count}")
    return (count - 1) % positions + 1


def deal_order(start: int, positions: int = STACKS) -> list[int]:
    """The ordinals receiving hands 0, 1, ... of :func:`deliver`: the starting position, then
    counter-clockwise around the table (5324.50(e)(4), (g)(11)).

    >>> deal_order(7)
    [7, 8, 1, 2, 3, 4, 5, 6]
    """
    start = _require_int("start", start)
    positions = _require_int("positions", positions)
    if positions < 1:
        raise DealingError(f"positions must be at least 1, got {positions}")
    if not 1 <= start <= positions:
        raise DealingError(f"start must be a position 1-{positions}, got {start}")
    return [(start - 1 + k) % positions + 1 for k in range(positions)]


# ---------------------------------------------------------------------------------------------
# The ten styles of delivery, 5324.50(g)(11)(i)-(x); 13:69F-10.8(k)1-10
# ---------------------------------------------------------------------------------------------
#
# Each style is a plan: for hand 0..7, the four (stack index, depth) places its tiles come from,
# stack index counted from the dealer's LEFT (0..7), depth 0 = top tile of the original stack.
# Writing the plans as data makes "every tile dealt exactly once" checkable (see the tests).

_R = [7, 6, 5, 4, 3, 2, 1, 0]  # _R[k]: the (k+1)-th stack from the dealer's right
_L = [0, 1, 2, 3, 4, 5, 6, 7]  # _L[k]: the (k+1)-th stack from the dealer's left

Place = tuple[int, int]
Plan = tuple[tuple[Place, ...], ...]


def _whole_stacks(order: Sequence[int]) -> Plan:
    # (i), (ii): one stack per position, in the given order.
    return tuple(tuple((s, d) for d in range(4)) for s in order)


def _pairs_of_stacks(pairs: Sequence[tuple[int, int]]) -> Plan:
    # (iii)-(vi): two stacks at a time; "the top two tiles from each of the two stacks ... to the
    # starting position. The four remaining tiles ... to the next position."
    plan: list[tuple[Place, ...]] = []
    for a, b in pairs:
        plan.append(((a, 0), (a, 1), (b, 0), (b, 1)))
        plan.append(((a, 2), (a, 3), (b, 2), (b, 3)))
    return tuple(plan)


def _pin_say(first: Sequence[int], second: Sequence[int]) -> Plan:
    # (vii), (viii): "the top tile from each of the first four stacks" on one side, then on the
    # other side, then "the top tile remaining" on each side, ... layer by layer.
    plan: list[tuple[Place, ...]] = []
    for depth in range(4):
        plan.append(tuple((s, depth) for s in first))
        plan.append(tuple((s, depth) for s in second))
    return tuple(plan)


def _dragon_phoenix(head: Sequence[int], tail: Sequence[int]) -> Plan:
    # (ix), (x): head = [first, second, third, fourth] stacks counted from the head side. The
    # first and second stacks are placed "directly on top of" the third and fourth, giving two
    # eight-tile stacks: first-over-third and second-over-fourth. Each head turn takes "the top
    # two tiles in each of the eight tile stacks" (four tiles); each tail turn "the top tile
    # from each of the four stacks of four tiles" on the other side.
    first, second, third, fourth = head
    tall_a = [(first, d) for d in range(4)] + [(third, d) for d in range(4)]
    tall_b = [(second, d) for d in range(4)] + [(fourth, d) for d in range(4)]
    plan: list[tuple[Place, ...]] = []
    for turn in range(4):
        top = 2 * turn
        plan.append((tall_a[top], tall_a[top + 1], tall_b[top], tall_b[top + 1]))
        plan.append(tuple((s, turn) for s in tail))
    return tuple(plan)


_PLANS: Final[dict[str, Plan]] = {
    # (i) "pushing forward the first stack of tiles on the dealer's right ... The remaining
    # stacks of tiles shall be delivered from the dealer's right to left."
    "house_way_from_right": _whole_stacks(_R),
    # (ii) the mirror: "from the dealer's left to right".
    "house_way_from_left": _whole_stacks(_L),
    # (iii) "the first two stacks of tiles on the dealer's right", then the rest "from the
    # dealer's right to left in the same manner as the first two stacks".
    "cup_say_from_right": _pairs_of_stacks(
        [(_R[0], _R[1]), (_R[2], _R[3]), (_R[4], _R[5]), (_R[6], _R[7])]
    ),
    # (iv) the mirror, from the dealer's left.
    "cup_say_from_left": _pairs_of_stacks(
        [(_L[0], _L[1]), (_L[2], _L[3]), (_L[4], _L[5]), (_L[6], _L[7])]
    ),
    # (v) "the fourth stack of tiles from the dealer's right and the fourth stack of tiles from
    # the dealer's left (the two center stacks of the eight)"; then "the remaining stacks shall
    # be pushed together and the two new center stacks" are delivered the same way.
    "jung_quat": _pairs_of_stacks([(_R[3], _L[3]), (_R[2], _L[2]), (_R[1], _L[1]), (_R[0], _L[0])]),
    # (vi) "the first stack of tiles on the dealer's right and the first stack of tiles on the
    # dealer's left", then "the first stack remaining" on each side, ...
    "chee_yee": _pairs_of_stacks([(_R[0], _L[0]), (_R[1], _L[1]), (_R[2], _L[2]), (_R[3], _L[3])]),
    # (vii) the first four stacks on the dealer's right, then the first four on the left.
    "pin_say_from_right": _pin_say(_R[:4], _L[:4]),
    # (viii) the mirror.
    "pin_say_from_left": _pin_say(_L[:4], _R[:4]),
    # (ix) dragon head on the dealer's right, phoenix tail = the four stacks on the left.
    "dragon_head_phoenix_tail_from_right": _dragon_phoenix(_R[:4], _L[:4]),
    # (x) the mirror.
    "dragon_head_phoenix_tail_from_left": _dragon_phoenix(_L[:4], _R[:4]),
}

#: The ten styles of delivery, in the order of 5324.50(g)(11)(i)-(x) / 13:69F-10.8(k)1-10.
DELIVERY_STYLES: Final[tuple[str, ...]] = (
    "house_way_from_right",
    "house_way_from_left",
    "cup_say_from_right",
    "cup_say_from_left",
    "jung_quat",
    "chee_yee",
    "pin_say_from_right",
    "pin_say_from_left",
    "dragon_head_phoenix_tail_from_right",
    "dragon_head_phoenix_tail_from_left",
)
assert DELIVERY_STYLES == tuple(_PLANS)

#: 5324.50(g)(9); 13:69F-10.8(i): "If the bank does not choose a style of delivery, the dealer
#: shall use ... house way from the right". Also the only delivery of (e)(4) (no player bank).
DEFAULT_DELIVERY_STYLE: Final = "house_way_from_right"


def _check_style(style: object) -> str:
    if not isinstance(style, str) or style not in _PLANS:
        raise DealingError(
            f"unknown style of delivery {style!r}; expected one of: {', '.join(DELIVERY_STYLES)}"
        )
    return style


def delivery_plan(style: str) -> Plan:
    """For each of the eight hands, the four ``(stack index from the dealer's left, depth)``
    places its tiles come from (depth 0 = top tile of the original stack)."""
    return _PLANS[_check_style(style)]


def _check_stacks(stacks: Sequence[Sequence[T]]) -> Sequence[Sequence[T]]:
    if isinstance(stacks, (str, bytes)) or not isinstance(stacks, Sequence):
        raise DealingError(
            f"stacks must be a sequence of {STACKS} stacks, got {type(stacks).__name__}"
        )
    if len(stacks) != STACKS:
        raise DealingError(f"expected {STACKS} stacks, got {len(stacks)}")
    for i, stack in enumerate(stacks):
        if isinstance(stack, (str, bytes)) or not isinstance(stack, Sequence):
            raise DealingError(
                f"stack {i} (counting from the dealer's left, from 0) must be a sequence of "
                f"{TILES_PER_STACK} tiles, got {type(stack).__name__} {stack!r}"
            )
        if len(stack) != TILES_PER_STACK:
            raise DealingError(
                f"stack {i} (counting from the dealer's left, from 0) has {len(stack)} tiles, "
                f"expected {TILES_PER_STACK}"
            )
    return stacks


def deliver(stacks: Sequence[Sequence[T]], style: str) -> list[list[T]]:
    """Deal eight stacks of four tiles in one of the ten styles of delivery (5324.50(g)(11)).

    ``stacks``: eight stacks, left to right as the dealer sees them, top tile first.
    ``style``: one of :data:`DELIVERY_STYLES`.
    Returns eight four-tile hands: index 0 goes to the starting position, the rest
    counter-clockwise from it (see :func:`deal_order`). Raises :class:`DealingError` (a
    ``ValueError``) for an unknown style or a layout that is not 8 x 4.
    """
    plan = delivery_plan(style)
    checked = _check_stacks(stacks)
    return [[checked[s][d] for s, d in hand] for hand in plan]


# ---------------------------------------------------------------------------------------------
# The bank's cut, 5324.50(g)(7); 13:69F-10.8(g)
# ---------------------------------------------------------------------------------------------


def cut(
    stacks: Sequence[T],
    *,
    to_left: Sequence[int] = (),
    to_right: Sequence[int] = (),
) -> list[T]:
    """The bank's one cut of the eight stacks (5324.50(g)(7); 13:69F-10.8(g)).

    ``to_left`` / ``to_right``: indices (0..7, from the dealer's left, as in ``stacks``) of the
    stacks the dealer moves to the left / right end of the original eight stacks.

    * (g)(7)(i): "one or more adjacent stacks ... to the right or left end" -- give only one of
      the two.
    * (g)(7)(ii): "two or more adjacent stacks ..., of which at least one stack is moved to one
      end and the other stacks are moved to the opposite end" -- give both; together they must
      be adjacent stacks (which of them goes to which end is the bank's choice).

    Moved stacks keep their relative order; stacks are moved whole (tiles untouched, so a stack
    can be anything). A cut that leaves the stacks where they were is refused: if the bank does
    not cut, do not call this ("If the bank does not wish to cut the tiles, there shall be no
    cut").

    >>> cut(list("ABCDEFGH"), to_left=[5, 6])
    ['F', 'G', 'A', 'B', 'C', 'D', 'E', 'H']
    >>> cut(list("ABCDEFGH"), to_left=[3], to_right=[2])
    ['D', 'A', 'B', 'E', 'F', 'G', 'H', 'C']
    """
    if isinstance(stacks, (str, bytes)) or not isinstance(stacks, Sequence):
        raise DealingError(f"stacks must be a sequence of {STACKS} stacks")
    if len(stacks) != STACKS:
        raise DealingError(f"expected {STACKS} stacks to cut, got {len(stacks)}")
    left = [_require_int("to_left index", i) for i in to_left]
    right = [_require_int("to_right index", i) for i in to_right]
    for name, idx in (("to_left", left), ("to_right", right)):
        for i in idx:
            if not 0 <= i < STACKS:
                raise DealingError(f"{name} index {i} is not a stack 0-{STACKS - 1}")
        if len(set(idx)) != len(idx):
            raise DealingError(f"{name} names a stack twice: {sorted(idx)}")
    both = set(left) & set(right)
    if both:
        raise DealingError(f"stack(s) {sorted(both)} cannot go to both ends")
    moved = sorted(set(left) | set(right))
    if not moved:
        raise DealingError("a cut must move at least one stack (no cut: do not call cut())")
    if moved != list(range(moved[0], moved[-1] + 1)):
        raise DealingError(
            f"the stacks moved in a cut must be adjacent (5324.50(g)(7)), got {moved}"
        )
    keep = [i for i in range(STACKS) if i not in set(moved)]
    order = sorted(left) + keep + sorted(right)
    if order == list(range(STACKS)):
        raise DealingError(
            f"cut to_left={sorted(left)} to_right={sorted(right)} leaves the stacks where they "
            "were; that is no cut"
        )
    return [stacks[i] for i in order]
