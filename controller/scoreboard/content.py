"""What a scoreboard page draws, from the view the table published (controller.app.Publication).

A page receives one JSON document per published version: the view itself and, for baccarat
(whose view carries the shoe's results as ``roads.Result`` codes), the five roads with every
cell's grid position, computed here by ``controller.games.baccarat.roads`` so the page only
places what it is given (the page's DOM is the rules' output, cell for cell). Pure functions:
the server calls them once per version and sends the same bytes to every client.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from controller.games.baccarat import roads

#: Rows of every road on the board (the 6-row boards of real tables; docs/roads.md).
ROWS: Final = 6
#: The derived roads: name on the page, k of the published rule.
DERIVED: Final = (("big_eye_boy", 1), ("small_road", 2), ("cockroach_pig", 3))
#: Published keys a page never needs (the baccarat results are sent as roads instead).
_NOT_SENT: Final = frozenset({"results"})


def document(version: int, view: Mapping[str, object]) -> dict[str, object]:
    """The document a page receives for ``version``: the view, the version, and for baccarat
    the roads and counts (:func:`baccarat_roads`)."""
    doc: dict[str, object] = {k: v for k, v in view.items() if k not in _NOT_SENT}
    doc["version"] = version
    if view.get("game") == "baccarat":
        codes = view.get("results", ())
        if not isinstance(codes, Sequence) or isinstance(codes, str | bytes):
            raise roads.RoadError(f"results must be a list, not {type(codes).__name__}")
        doc.update(baccarat_roads([roads.Result.from_code(c) for c in codes]))
    return doc


def encode(doc: Mapping[str, object]) -> bytes:
    """Compact JSON as UTF-8 (one line: it goes in one ``data:`` line of an event)."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def baccarat_roads(results: Sequence[roads.Item], rows: int = ROWS) -> dict[str, Any]:
    """``counts``, ``roads`` (bead, big, and the three derived roads: every cell with ``col``,
    ``row`` on a grid of ``rows`` rows, as :func:`roads.layout` draws them) and ``predict``
    (the entry each derived road would write if the next coup were a banker or a player win,
    None where it would write none: the boards' "banker ask" / "player ask")."""
    beads = roads.bead_plate(results, rows)
    big = roads.big_road(results)
    out: dict[str, Any] = {
        "bead": [
            {
                "col": b.col,
                "row": b.row,
                "winner": b.winner,
                "banker_pair": b.banker_pair,
                "player_pair": b.player_pair,
                "natural": b.natural,
            }
            for b in beads
        ],
        "big": [
            {
                "col": col,
                "row": row,
                "winner": cell.winner,
                "ties": cell.ties,
                "banker_pair": cell.banker_pair,
                "player_pair": cell.player_pair,
            }
            for column, places in zip(big, roads.layout(big, rows), strict=True)
            for cell, (col, row) in zip(column, places, strict=True)
        ],
    }
    entries: dict[str, list[roads.Colour]] = {}
    for name, k in DERIVED:
        entries[name] = roads.derived_road(big, k)
        columns = roads.as_columns(entries[name])
        out[name] = [
            {"col": col, "row": row, "color": colour}
            for column, places in zip(columns, roads.layout(columns, rows), strict=True)
            for colour, (col, row) in zip(column, places, strict=True)
        ]
    predict: dict[str, dict[str, str | None]] = {}
    for side in ("banker", "player"):
        # One more win adds exactly one big-road cell, so at most one entry per derived road.
        after = roads.big_road([*results, side])
        predict[side] = {}
        for name, k in DERIVED:
            grown = roads.derived_road(after, k)
            predict[side][name] = grown[-1] if len(grown) > len(entries[name]) else None
    c = roads.counts(results)
    return {
        "roads": out,
        "predict": predict,
        "counts": {
            "banker": c.banker,
            "player": c.player,
            "tie": c.tie,
            "banker_pair": c.banker_pair,
            "player_pair": c.player_pair,
            "coups": c.coups,
        },
    }
