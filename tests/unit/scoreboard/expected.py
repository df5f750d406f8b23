"""What the scoreboard must show, computed for the tests apart from the program's own path:
a journaled coup's result code from its cards, and the roads of a list of codes as cells with
the attributes the page writes (``data-col``, ``data-row``, ``data-color``, ...), laid out by
``controller.games.baccarat.roads`` (the pure rules the page must equal)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from controller.games.baccarat import roads

#: 5324.20(a)(4): ace one, two to nine their pips, tens and faces zero.
VALUE = {"A": 1, **{str(n): n for n in range(2, 10)}, "T": 0, "J": 0, "Q": 0, "K": 0}
COLOUR = {"banker": "red", "player": "blue", "tie": "green"}


def expected_code(row: Mapping[str, object]) -> str:
    """A journaled ``baccarat.coup.result`` row as the scoreboard's code, from its cards: the
    winner's letter; ``b``/``p`` where that hand's first two cards share a rank; ``n`` where
    either hand's first two cards count 8 or 9 (5324.20(f)(10))."""
    player = [str(c) for c in row["player"]]  # type: ignore[attr-defined]
    banker = [str(c) for c in row["banker"]]  # type: ignore[attr-defined]

    def natural(hand: list[str]) -> bool:
        return (VALUE[hand[0][0]] + VALUE[hand[1][0]]) % 10 >= 8

    code = {"banker": "B", "player": "P", "tie": "T"}[str(row["winner"])]
    if banker[0][0] == banker[1][0]:
        code += "b"
    if player[0][0] == player[1][0]:
        code += "p"
    if natural(player) or natural(banker):
        code += "n"
    return code


def _flag(value: bool) -> str:
    return "1" if value else "0"


def expected_cells(codes: Sequence[str], rows: int = 6) -> dict[str, list[dict[str, str]]]:
    """Each road's cells in drawing order, as the page's data attributes (strings)."""
    results = [
        roads.Result(
            {"B": "banker", "P": "player", "T": "tie"}[c[0]],  # type: ignore[arg-type]
            banker_pair="b" in c,
            player_pair="p" in c,
            natural="n" in c,
        )
        for c in codes
    ]
    out: dict[str, list[dict[str, str]]] = {}
    out["bead"] = [
        {
            "road": "bead",
            "col": str(b.col),
            "row": str(b.row),
            "color": COLOUR[b.winner],
            "winner": b.winner,
            "bankerPair": _flag(b.banker_pair),
            "playerPair": _flag(b.player_pair),
            "natural": _flag(b.natural),
        }
        for b in roads.bead_plate(results, rows)
    ]
    big = roads.big_road(results)
    out["big"] = [
        {
            "road": "big",
            "col": str(x),
            "row": str(y),
            "color": COLOUR[cell.winner],
            "winner": cell.winner,
            "ties": str(cell.ties),
            "bankerPair": _flag(cell.banker_pair),
            "playerPair": _flag(cell.player_pair),
        }
        for column, places in zip(big, roads.layout(big, rows), strict=True)
        for cell, (x, y) in zip(column, places, strict=True)
    ]
    for name, entries in (
        ("big_eye_boy", roads.big_eye_boy(results)),
        ("small_road", roads.small_road(results)),
        ("cockroach_pig", roads.cockroach_pig(results)),
    ):
        columns = roads.as_columns(entries)
        out[name] = [
            {"road": name, "col": str(x), "row": str(y), "color": colour}
            for column, places in zip(columns, roads.layout(columns, rows), strict=True)
            for colour, (x, y) in zip(column, places, strict=True)
        ]
    return out
