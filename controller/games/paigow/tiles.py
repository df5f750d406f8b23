"""The 32-tile pai gow set: tiles, parsing, printing, hand checks and set verification.

Sources: 9 NYCRR 5324.50(a)(5) (a set of 32 tiles), (b)(6) (the 21 kinds of tile and how many of
each a set holds), (d)(1)(i) (sorting a set into pairs to check that it is complete).

Identity of tiles
-----------------
A :class:`Tile` is a *value*: the pip pattern of one face ("4-5"). The two physical 6-6 tiles of a
set are the same ``Tile`` (equal and of equal hash; :func:`tile` even returns one shared
instance per kind): 5324.50(a)(5) makes every tile identical in size and shading, and no rule
tells the two 6-6 tiles apart. What the set
limits is the *count*: 11 kinds are in the set twice (the matched pairs of (b)(1)), 10 kinds once
(the mixed-pair tiles and the two supreme-pair tiles 1-2 and 2-4). So a hand holding 6-6 twice is
legal, a hand holding 1-2 twice is not; :func:`check_tiles` enforces this by counting.

Text form: ``"a-b"``, the lower pip first (``"4-5"``, ``"1-2"``); :func:`tile` refuses anything else
with a :class:`~controller.games.paigow.errors.TileError` (a ``ValueError``) naming the problem.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from .errors import HandError, SetError, TileError

__all__ = [
    "Tile",
    "tile",
    "tiles",
    "TILE_KINDS",
    "COPIES",
    "SET_SIZE",
    "full_set",
    "check_tiles",
    "SetReport",
    "verify_set",
]

SET_SIZE: Final = 32  # 5324.50(a)(5)

# The 21 kinds of tile in the order of the individual ranking table, 5324.50(b)(6), highest first,
# with the number of each in a set (the table's third column).
_KINDS_IN_RANK_ORDER: Final[tuple[tuple[int, int, int], ...]] = (
    # (low pip, high pip, copies in the set)
    (6, 6, 2),
    (1, 1, 2),
    (4, 4, 2),
    (1, 3, 2),
    (5, 5, 2),
    (3, 3, 2),
    (2, 2, 2),
    (5, 6, 2),
    (4, 6, 2),
    (1, 6, 2),
    (1, 5, 2),
    (3, 6, 1),
    (4, 5, 1),
    (2, 6, 1),
    (3, 5, 1),
    (2, 5, 1),
    (3, 4, 1),
    (2, 4, 1),
    (1, 4, 1),
    (2, 3, 1),
    (1, 2, 1),
)

_COPIES_BY_PIPS: Final[dict[tuple[int, int], int]] = {
    (lo, hi): n for lo, hi, n in _KINDS_IN_RANK_ORDER
}
_INDEX_BY_PIPS: Final[dict[tuple[int, int], int]] = {
    (lo, hi): i for i, (lo, hi, _n) in enumerate(_KINDS_IN_RANK_ORDER)
}
_INSTANCES: dict[tuple[int, int], Tile] = {}


@dataclass(frozen=True, slots=True, eq=True)
class Tile:
    """One kind of pai gow tile, named by its two pip counts, lower first.

    Immutable and hashable. Construct with ``Tile(4, 5)`` or, better, :func:`tile` ``("4-5")``,
    which returns the one shared instance of each kind.
    """

    low: int
    high: int
    index: int = field(init=False, repr=False, compare=False)
    """Position 0..20 of this kind in the (b)(6) table, highest-ranking first.

    Two kinds of the same rank (e.g. 3-6 and 4-5, both twelfth) have different indexes; use
    :func:`controller.games.paigow.ranking.tile_rank` for the rank itself.
    """

    def __post_init__(self) -> None:
        if not isinstance(self.low, int) or not isinstance(self.high, int):
            raise TileError(f"tile pips must be whole numbers, got {self.low!r} and {self.high!r}")
        _check_pips(self.low, self.high, f"{self.low}-{self.high}")
        object.__setattr__(self, "index", _INDEX_BY_PIPS[(self.low, self.high)])

    def __str__(self) -> str:
        return f"{self.low}-{self.high}"

    def __repr__(self) -> str:
        return f"tile({str(self)!r})"

    def __reduce__(self) -> tuple[object, tuple[str]]:
        # Unpickling gives back the shared instance of the kind.
        return (tile, (str(self),))

    @property
    def spots(self) -> int:
        """Total number of spots on the tile (5324.50(b)(3) adds these)."""
        return self.low + self.high

    @property
    def copies(self) -> int:
        """How many tiles of this kind a set holds: 2 or 1 (5324.50(b)(6), third column)."""
        return _COPIES_BY_PIPS[(self.low, self.high)]

    @property
    def is_supreme(self) -> bool:
        """True for 1-2 and 2-4, the supreme-pair (gee joon) tiles, 5324.50(b)(1), (b)(4)."""
        return (self.low, self.high) in ((1, 2), (2, 4))


def _check_pips(low: int, high: int, text: str) -> None:
    for pip in (low, high):
        if not 1 <= pip <= 6:
            raise TileError(
                f"no pai gow tile {text!r}: each end has 1 to 6 pips, not {pip} "
                "(5324.50(b)(6) lists the 21 kinds of tile)"
            )
    if low > high:
        raise TileError(f"tile {text!r} must be written lower pip first: {high}-{low}")


TILE_KINDS: Final[tuple[Tile, ...]] = tuple(Tile(lo, hi) for lo, hi, _n in _KINDS_IN_RANK_ORDER)
"""The 21 kinds of tile, in the order of the (b)(6) table (highest-ranking first)."""
for _t in TILE_KINDS:
    _INSTANCES[(_t.low, _t.high)] = _t

COPIES: Final[dict[Tile, int]] = {t: t.copies for t in TILE_KINDS}
"""How many of each kind a complete set holds (5324.50(b)(6))."""


def tile(text: str | Tile) -> Tile:
    """Parse ``"a-b"`` (lower pip first) into a :class:`Tile`; a ``Tile`` is returned as it is.

    Raises :class:`TileError` (a ``ValueError``) naming the problem: ``""`` (empty), ``"4-5-6"``
    (not two ends), ``"7-1"`` (no such pip count), ``"5-4"`` (higher pip written first).
    """
    if isinstance(text, Tile):
        return text
    if not isinstance(text, str):
        raise TileError(f"a tile is written as text like '4-5', got {text!r}")
    s = text.strip()
    if not s:
        raise TileError("empty text is no tile: write a tile as 'a-b', e.g. '4-5'")
    parts = s.split("-")
    if len(parts) != 2:
        raise TileError(
            f"{text!r} is no tile: a tile has exactly two ends, written 'a-b' (e.g. '4-5')"
        )
    a, b = (p.strip() for p in parts)
    if not (a.isdigit() and b.isdigit()):
        raise TileError(f"{text!r} is no tile: both ends must be pip counts 1-6, as in '4-5'")
    low, high = int(a), int(b)
    _check_pips(low, high, s)
    return _INSTANCES[(low, high)]


def tiles(*texts: str | Tile) -> tuple[Tile, ...]:
    """Parse several tiles; ``tiles("6-6", "4-5")`` or ``tiles(*"6-6 4-5".split())``."""
    return tuple(tile(t) for t in texts)


def full_set() -> tuple[Tile, ...]:
    """The 32 tiles of a complete set, in (b)(6) order; the 11 doubled kinds appear twice."""
    return tuple(t for t in TILE_KINDS for _ in range(t.copies))


def check_tiles(items: Iterable[str | Tile], size: int, what: str = "hand") -> tuple[Tile, ...]:
    """Parse ``items`` as ``size`` tiles that one set can hold at once, or raise.

    Raises :class:`HandError` (a ``ValueError``) when the count is not ``size`` or a kind appears
    more often than a set holds it (``"1-2"`` twice: the set has one 1-2); :class:`TileError` for
    an item that is no tile. ``what`` names the thing in the message ("hand", "four tiles", ...).
    """
    if isinstance(items, (str, Tile)):
        raise HandError(f"a {what} is a sequence of {size} tiles, got the single item {items!r}")
    try:
        parsed = tuple(x if type(x) is Tile else tile(x) for x in items)
    except TypeError as exc:  # not iterable
        raise HandError(f"a {what} is a sequence of {size} tiles, got {items!r}") from exc
    if len(parsed) != size:
        shown = " ".join(str(t) for t in parsed)
        raise HandError(f"a {what} has {size} tiles, got {len(parsed)}: {shown or '(none)'}")
    if len({t.index for t in parsed}) != size:  # some kind repeated: is the set holding that many?
        _check_counts(parsed, what)
    return parsed


def _check_counts(parsed: Iterable[Tile], what: str) -> None:
    for t, n in Counter(parsed).items():
        if n > t.copies:
            held = "one" if t.copies == 1 else "two"
            raise HandError(
                f"{what} holds {t} {n} times, but a set has only {held} {t} (5324.50(b)(6))"
            )


@dataclass(frozen=True)
class SetReport:
    """Result of :func:`verify_set`, 5324.50(d)(1)(i).

    ``missing``: tiles a complete set has that were not given (one entry per missing copy).
    ``duplicated``: tiles given more often than a set holds them (one entry per surplus copy).
    ``extra``: items given that are no pai gow tile at all (their text, e.g. ``"0-0"``).
    ``incomplete_pairs``: the (b)(1) pairs -- supreme pair, matched and mixed pairs -- that cannot
    be sorted out of the tiles given (the check that (d)(1)(i) describes).
    """

    count: int
    missing: tuple[Tile, ...]
    duplicated: tuple[Tile, ...]
    extra: tuple[str, ...]
    incomplete_pairs: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not (self.missing or self.duplicated or self.extra) and self.count == SET_SIZE

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        if self.ok:
            return f"complete set of {SET_SIZE} tiles"
        parts = [f"{self.count} items given, a set has {SET_SIZE} tiles"]
        if self.missing:
            parts.append("missing: " + " ".join(str(t) for t in self.missing))
        if self.duplicated:
            parts.append("duplicated: " + " ".join(str(t) for t in self.duplicated))
        if self.extra:
            parts.append("extra (not pai gow tiles): " + " ".join(repr(x) for x in self.extra))
        if self.incomplete_pairs:
            parts.append("pairs that cannot be sorted out: " + ", ".join(self.incomplete_pairs))
        return "; ".join(parts)

    def raise_if_bad(self) -> None:
        """Raise :class:`SetError` with :meth:`__str__` as the message unless the set is ok."""
        if not self.ok:
            raise SetError(f"tile set fails inspection (5324.50(d)(1)(i)): {self}")


# The 16 pairs a set sorts into, 5324.50(b)(1), (d)(1)(i)-(2): supreme, 11 matched, 4 mixed.
_SORTED_PAIRS: Final[tuple[tuple[str, tuple[tuple[int, int], ...]], ...]] = (
    ("supreme pair 1-2 + 2-4", ((1, 2), (2, 4))),
    *(
        (f"matched pair {lo}-{hi}", ((lo, hi), (lo, hi)))
        for lo, hi, n in _KINDS_IN_RANK_ORDER
        if n == 2
    ),
    ("mixed 9s 3-6 + 4-5", ((3, 6), (4, 5))),
    ("mixed 8s 2-6 + 3-5", ((2, 6), (3, 5))),
    ("mixed 7s 2-5 + 3-4", ((2, 5), (3, 4))),
    ("mixed 5s 1-4 + 2-3", ((1, 4), (2, 3))),
)


def verify_set(items: Iterable[str | Tile]) -> SetReport:
    """Inspect a set of tiles as 5324.50(d)(1)(i) requires; report which tiles are wrong.

    Accepts tiles or their text. Never raises for a bad set (call ``report.raise_if_bad()`` for
    that); raises :class:`SetError` only if ``items`` is not a collection at all.
    """
    if isinstance(items, (str, Tile)):
        raise SetError(f"a tile set is a collection of tiles, got the single item {items!r}")
    try:
        raw = list(items)
    except TypeError as exc:
        raise SetError(f"a tile set is a collection of tiles, got {items!r}") from exc
    counts: Counter[Tile] = Counter()
    extra: list[str] = []
    for item in raw:
        try:
            counts[tile(item)] += 1
        except TileError:
            extra.append(str(item))
    missing: list[Tile] = []
    duplicated: list[Tile] = []
    for t in TILE_KINDS:
        have = counts.get(t, 0)
        missing.extend([t] * max(0, t.copies - have))
        duplicated.extend([t] * max(0, have - t.copies))
    left: Counter[tuple[int, int]] = Counter({(t.low, t.high): n for t, n in counts.items()})
    incomplete: list[str] = []
    for name, members in _SORTED_PAIRS:
        need = Counter(members)
        if all(left[k] >= n for k, n in need.items()):
            left.subtract(need)
        else:
            incomplete.append(name)
    return SetReport(
        count=len(raw),
        missing=tuple(missing),
        duplicated=tuple(duplicated),
        extra=tuple(extra),
        incomplete_pairs=tuple(incomplete),
    )
