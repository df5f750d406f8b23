"""Scoreboard road maps of a baccarat shoe: bead plate, big road and the three derived roads.

Pure rules over a shoe's results, in the order the coups were dealt: no clock, no I/O. A result
is ``"banker"``, ``"player"`` or ``"tie"``, a :class:`Result` (which also carries the pair flags
and whether a hand was a natural), or a mapping with a ``"winner"`` key and optional
``"banker_pair"``, ``"player_pair"``, ``"natural"`` keys (other keys are ignored). Anything else
raises :class:`RoadError` naming the item and its index. These are the conventions of real
scoreboards (docs/roads.md has worked examples):

* **Bead plate.** One bead per coup, ties included, in order, filled column-major down ``rows``
  rows (6 by default). Each :class:`Bead` knows its grid position (``col``, ``row``, 0-based).
* **Big road, logical columns.** Banker and player wins only; a new column whenever the winner
  changes, so a column is a streak of any length (9 bankers are one column of 9). A tie writes
  no cell: it is counted on the latest cell (``BigRoadCell.ties``), and ties before the first
  banker or player win are counted on the first cell. A shoe of ties only has no cell yet, so
  :func:`big_road` returns no columns (:func:`counts` and the bead plate still report the
  ties); when the first banker or player win comes, those ties go on its cell. A cell's pair
  flags are those of the coup that wrote it; pairs in tie coups show on the bead plate and in
  :func:`counts` only.
* **Derived roads** (big eye boy, small road, cockroach pig: k = 1, 2, 3). One entry, ``"red"``
  or ``"blue"``, per big-road cell, in the order the cells were written, by the published rule
  on logical columns (rows and columns 1-based): for the cell at row m of column n, at m = 1
  compare the lengths of columns n-1 and n-1-k (red if equal, blue if not); at m >= 2 look at
  column n-k: red where it has a row m, blue where it ends exactly at row m-1, red where it
  ended earlier. A cell without the columns its rule compares writes nothing, so big eye boy
  starts at column 2 row 2 (column 3 row 1 if column 2 has one row), small road at column 3 row
  2 / column 4 row 1, cockroach pig at column 4 row 2 / column 5 row 1. Only columns before the
  cell's own are read, so an entry never changes once written. A derived road is drawn as
  big-road columns of one colour: :func:`as_columns` groups the flat sequence.
* **Drawing: dragon tail.** :func:`layout` places logical columns (of the big road or of a
  derived road) on a grid of ``rows`` rows. Each column starts at the top of the next drawing
  column to the right of where the previous one started (further right if a tail already holds
  that top cell) and goes down; when it reaches the bottom, or the cell below is held by an
  earlier tail, it turns right along the last row it reached and stays on it.

Every road comes back as plain lists (a derived road a list of ``"red"`` / ``"blue"``, the big
road a list of columns, each a list of cells; :func:`layout` a list of columns of ``(col,
row)`` pairs), new on each call, so a road compares equal to the list a reader writes by hand
(issue 17: ``big_eye_boy(r) == ["red", "blue"]``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass
from typing import Final, Literal, TypeVar

from .coup import Coup
from .errors import BaccaratError

Winner = Literal["banker", "player", "tie"]
Side = Literal["banker", "player"]
Colour = Literal["red", "blue"]

RED: Final = "red"
BLUE: Final = "blue"

_WINNERS: Final[dict[object, Winner]] = {"banker": "banker", "player": "player", "tie": "tie"}
_FLAGS: Final = ("banker_pair", "player_pair", "natural")
#: The compact code of a result (:attr:`Result.code`): the winner's letter, then a flag letter
#: for each flag set, in this order.
_LETTERS: Final[dict[str, Winner]] = {"B": "banker", "P": "player", "T": "tie"}
_FLAG_LETTERS: Final = (("b", "banker_pair"), ("p", "player_pair"), ("n", "natural"))

T = TypeVar("T")


class RoadError(BaccaratError, ValueError):
    """A result the roads cannot read (not banker, player or tie), or a bad road argument."""


@dataclass(frozen=True, slots=True)
class Result:
    """One coup's result as the scoreboard shows it: the winner and the flags drawn with it."""

    winner: Winner
    banker_pair: bool = False
    player_pair: bool = False
    natural: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.winner, str) or self.winner not in _WINNERS:
            raise RoadError(f"winner must be 'banker', 'player' or 'tie', not {self.winner!r}")
        for name in _FLAGS:
            if not isinstance(getattr(self, name), bool):
                raise RoadError(f"{name} must be True or False, not {getattr(self, name)!r}")

    @property
    def code(self) -> str:
        """A compact text of the result, as a table keeps a shoe's results: ``B``, ``P`` or
        ``T``, then ``b`` (banker pair), ``p`` (player pair), ``n`` (natural) for each flag set:
        ``"Bpn"`` is a banker win with a player pair and a natural."""
        return self.winner[0].upper() + "".join(
            letter for letter, name in _FLAG_LETTERS if getattr(self, name)
        )

    @classmethod
    def from_code(cls, code: str) -> Result:
        """The result :attr:`code` wrote; anything else raises :class:`RoadError`."""
        if not isinstance(code, str) or not code or code[0] not in _LETTERS:
            raise RoadError(f"result code {code!r} must start with B, P or T")
        flags = code[1:]
        expected = "".join(letter for letter, _ in _FLAG_LETTERS if letter in flags)
        if flags != expected:
            raise RoadError(f"result code {code!r}: flags must be among b, p, n in that order")
        return cls(_LETTERS[code[0]], **{name: letter in flags for letter, name in _FLAG_LETTERS})


def result_of(coup: Coup) -> Result:
    """A dealt coup as the scoreboard shows it: the winner (5324.20(g)(1)), a banker or player
    pair where that hand's first two cards are of the same rank, a natural where either hand
    is one (5324.20(f)(10)). 5324.20 offers no pair wager and so defines no pair; same rank
    (a ten and a king are not a pair) is the pair side wager's common definition, our choice
    (docs/roads.md)."""
    return Result(
        winner=_WINNERS[coup.winner],
        banker_pair=coup.banker[0].rank == coup.banker[1].rank,
        player_pair=coup.player[0].rank == coup.player[1].rank,
        natural=coup.natural,
    )


#: What the road functions accept for one coup (see the module docstring).
Item = str | Mapping[str, object] | Result


@dataclass(frozen=True, slots=True)
class Bead:
    """One coup on the bead plate, at ``col``, ``row`` (0-based) of the grid."""

    winner: Winner
    banker_pair: bool
    player_pair: bool
    natural: bool
    col: int
    row: int

    @property
    def position(self) -> tuple[int, int]:
        """``(col, row)``, 0-based."""
        return (self.col, self.row)


@dataclass(frozen=True, slots=True)
class BigRoadCell:
    """One banker or player win on the big road, with the ties counted on it and its pairs."""

    winner: Side
    ties: int = 0
    banker_pair: bool = False
    player_pair: bool = False


@dataclass(frozen=True, slots=True)
class Counts:
    """Totals over a shoe's results: wins by side, ties, and coups with each pair."""

    banker: int = 0
    player: int = 0
    tie: int = 0
    banker_pair: int = 0
    player_pair: int = 0

    @property
    def coups(self) -> int:
        """Every coup counted, ties included."""
        return self.banker + self.player + self.tie


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _as_result(item: object, index: int) -> Result:
    if isinstance(item, Result):
        return item
    if isinstance(item, str):
        if item in _WINNERS:
            return Result(_WINNERS[item])
    elif isinstance(item, Mapping) and "winner" in item:
        try:
            return Result(item["winner"], **{k: item[k] for k in _FLAGS if k in item})
        except RoadError as e:
            raise RoadError(f"result {index} ({item!r}): {e}") from None
    raise RoadError(
        f"result {index} is {item!r}: expected 'banker', 'player' or 'tie', a Result, or a"
        " mapping with a 'winner' key"
    )


def _results(results: Iterable[Item]) -> list[Result]:
    if isinstance(results, str | bytes):
        raise RoadError(f"results must be a sequence of results, not the string {results!r}")
    return [_as_result(item, i) for i, item in enumerate(results)]


def _check_rows(rows: int) -> int:
    if not _is_int(rows) or rows < 1:
        raise RoadError(f"rows must be a whole number 1 or more, not {rows!r}")
    return rows


def counts(results: Iterable[Item]) -> Counts:
    """Banker, player and tie wins, and coups with a banker pair / a player pair (ties too)."""
    rs = _results(results)
    return Counts(
        banker=sum(r.winner == "banker" for r in rs),
        player=sum(r.winner == "player" for r in rs),
        tie=sum(r.winner == "tie" for r in rs),
        banker_pair=sum(r.banker_pair for r in rs),
        player_pair=sum(r.player_pair for r in rs),
    )


def bead_plate(results: Iterable[Item], rows: int = 6) -> list[Bead]:
    """Every coup, ties included, in order; bead i sits at column i // rows, row i % rows."""
    rows = _check_rows(rows)
    return [
        Bead(r.winner, r.banker_pair, r.player_pair, r.natural, i // rows, i % rows)
        for i, r in enumerate(_results(results))
    ]


def big_road(results: Iterable[Item]) -> list[list[BigRoadCell]]:
    """The big road's logical columns: one per streak of banker or player wins, ties counted
    on the latest cell (leading ties on the first); no columns while there is no such win."""
    columns: list[list[BigRoadCell]] = []
    leading_ties = 0
    for r in _results(results):
        if r.winner == "tie":
            if columns:
                last = columns[-1][-1]
                columns[-1][-1] = BigRoadCell(
                    last.winner, last.ties + 1, last.banker_pair, last.player_pair
                )
            else:
                leading_ties += 1
            continue
        # Ties before the first banker or player win are counted on the first cell.
        cell = BigRoadCell(r.winner, 0 if columns else leading_ties, r.banker_pair, r.player_pair)
        if columns and columns[-1][-1].winner == r.winner:
            columns[-1].append(cell)
        else:
            columns.append([cell])
    return columns


def _lengths(columns: Sequence[Sized]) -> list[int]:
    lengths = [len(c) for c in columns]
    for i, n in enumerate(lengths):
        if n == 0:
            raise RoadError(f"column {i} is empty: a logical column holds at least one cell")
    return lengths


def derived_road(columns: Sequence[Sized], k: int) -> list[Colour]:
    """The derived road that compares with the column k to the left (1 big eye boy, 2 small
    road, 3 cockroach pig), from the big road's logical columns; only their lengths matter."""
    if not _is_int(k) or k < 1:
        raise RoadError(f"k must be a whole number 1 or more, not {k!r}")
    lengths = _lengths(columns)
    out: list[Colour] = []
    # i is n - 1 for the 1-based column n of the published rule, m the 1-based row.
    for i, length in enumerate(lengths):
        for m in range(1, length + 1):
            if m == 1:
                # Row 1: columns n-1 and n-1-k, red if the same length. Both must exist.
                if i - 1 - k >= 0:
                    out.append(RED if lengths[i - 1] == lengths[i - 1 - k] else BLUE)
            elif i - k >= 0:
                # Row m >= 2, column n-k: red if it has row m or ended before row m-1; blue if
                # it ends exactly at row m-1.
                out.append(BLUE if lengths[i - k] == m - 1 else RED)
    return out


def big_eye_boy(results: Iterable[Item]) -> list[Colour]:
    """Big eye boy (k = 1): each big-road cell against the column just before its own."""
    return derived_road(big_road(results), 1)


def small_road(results: Iterable[Item]) -> list[Colour]:
    """Small road (k = 2): each big-road cell against the column two to the left."""
    return derived_road(big_road(results), 2)


def cockroach_pig(results: Iterable[Item]) -> list[Colour]:
    """Cockroach pig (k = 3): each big-road cell against the column three to the left."""
    return derived_road(big_road(results), 3)


def as_columns(entries: Iterable[T]) -> list[list[T]]:
    """Group a flat sequence into logical columns, a new column whenever the entry changes (a
    derived road's red/blue entries are drawn this way)."""
    columns: list[list[T]] = []
    for e in entries:
        if columns and columns[-1][-1] == e:
            columns[-1].append(e)
        else:
            columns.append([e])
    return columns


def layout(columns: Sequence[Sized], rows: int = 6) -> list[list[tuple[int, int]]]:
    """Where each cell of each logical column is drawn on a grid of ``rows`` rows, with dragon
    tails: ``layout(columns)[i][j]`` is ``(col, row)``, 0-based, of ``columns[i][j]``."""
    rows = _check_rows(rows)
    held: set[tuple[int, int]] = set()
    placed: list[list[tuple[int, int]]] = []
    start = -1
    for length in _lengths(columns):
        # A column starts at the top, next to where the previous column started (a tail may
        # already hold that top cell: then further right).
        start += 1
        while (start, 0) in held:
            start += 1
        x, y = start, 0
        cells = [(x, y)]
        turned = False
        for _ in range(length - 1):
            # Down while there is a free row below; then right along that row for good.
            if not turned and y + 1 < rows and (x, y + 1) not in held:
                y += 1
            else:
                turned = True
                x += 1
            cells.append((x, y))
        held.update(cells)
        placed.append(cells)
    return placed
