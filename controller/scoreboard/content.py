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
from typing import Final

from controller.games.baccarat import roads

#: Rows of every road on the board (the 6-row boards of real tables; docs/roads.md).
ROWS: Final = 6
#: The derived roads: name on the page, k of the published rule.
DERIVED: Final = (("big_eye_boy", 1), ("small_road", 2), ("cockroach_pig", 3))
#: Published keys a page never needs (the baccarat results are sent as roads instead).
_NOT_SENT: Final = frozenset({"results"})


def document(
    version: int, view: Mapping[str, object], table: Mapping[str, object] | None = None
) -> dict[str, object]:
    """The document a page receives for ``version``: the view, the version, ``table`` (the
    table's id and name: the page checks it is the table its monitor expects), what the header
    says (:func:`called`), and for baccarat the roads, counts, percentages and asks
    (:func:`baccarat_roads`)."""
    doc: dict[str, object] = {k: v for k, v in view.items() if k not in _NOT_SENT}
    doc.update(table or {})
    doc["version"] = version
    if view.get("game") == "baccarat":
        codes = view.get("results", ())
        if not isinstance(codes, Sequence) or isinstance(codes, str | bytes):
            raise roads.RoadError(f"results must be a list, not {type(codes).__name__}")
        results = [roads.Result.from_code(c) for c in codes]
        doc.update(baccarat_roads(results))
        doc["called"] = baccarat_called(view, results)
        doc["ask"] = baccarat_asks(view)
    elif view.get("game") in ("paigow", "startpos"):
        doc["called"] = paigow_called(view)
        doc["start"] = paigow_start(view)
    return doc


#: Baccarat states and what the header calls in each (a label of controller/scoreboard/labels).
_BACCARAT_CALLS: Final = {
    "shuffle": "state_shuffle",
    "burn": "state_burn",
    "offering": "state_offering",
    "passing": "state_passing",
    "betting": "state_betting",
    "dealing": "state_dealing",
    "player_third": "state_dealing",
    "banker_third": "state_dealing",
    "halted": "state_halted",
}
#: States in which the next coup is still to be dealt from this shoe: the asks mean something.
_ASKING: Final = frozenset(
    {"offering", "passing", "betting", "dealing", "player_third", "banker_third", "settling"}
)


def baccarat_called(
    view: Mapping[str, object], results: Sequence[roads.Result]
) -> dict[str, object]:
    """What the header calls now, as a label and its values: the result while the coup is
    settled (``BANKER WINS 7``, ``TIE HAND``: the winner's total, 5324.20(g)(1)), else what the
    table is doing (``PLACE YOUR BETS``); ``{}`` when nothing."""
    state = view.get("state")
    totals = view.get("last_totals") or ()
    if state == "settling" and results and isinstance(totals, Sequence) and len(totals) == 2:
        winner = results[-1].winner
        if winner == "tie":
            return {"key": "tie_hand"}
        points = totals[1] if winner == "banker" else totals[0]
        return {"key": f"{winner}_wins", "vars": {"n": points}}
    key = _BACCARAT_CALLS.get(str(state))
    return {"key": key} if key else {}


def baccarat_asks(view: Mapping[str, object]) -> bool:
    """Whether the asks (the next cell if banker / player wins) are shown: while this shoe
    still has a coup to come; not once it has ended (the last hand settled, or shuffling), not
    before a shoe, not while the game is halted."""
    state = view.get("state")
    if not view.get("shoe") or state not in _ASKING:
        return False
    return not (state == "settling" and bool(view.get("last_hand")))


#: Pai gow states and what the header calls in each.
_PAIGOW_CALLS: Final = {
    "inspection": "state_inspection",
    "washing": "state_washing",
    "betting": "state_betting",
    "bank_style": "state_dealing",
    "no_more_bets": "state_dealing",
    "setting_hands": "state_setting_hands",
    "dealer_hands": "state_dealer_hands",
}


def paigow_called(view: Mapping[str, object]) -> dict[str, object]:
    key = _PAIGOW_CALLS.get(str(view.get("state")))
    return {"key": key} if key else {}


def paigow_start(view: Mapping[str, object]) -> dict[str, object]:
    """Where the deal starts, while the number is shown, as words that cannot be misread
    (``COUNT 3 FROM THE BANK (SEAT 1): FIRST STACK TO SEAT 3``, the console's draw reply in
    capitals): the count, where it starts (the bank's seat, else the dealer: 5324.50(e)(3),
    (g)(10)) and who gets the first stack; ``{}`` when no number is shown."""
    number, position = view.get("number"), view.get("start_position")
    if not view.get("showing") or not isinstance(number, int) or not isinstance(position, int):
        return {}
    bank_seat = view.get("bank_seat") if view.get("bank") not in (None, "house") else None
    origin: list[object] = (
        ["the_dealer", {}]
        if not isinstance(bank_seat, int)
        else ["the_bank_seat", {"n": bank_seat}]
    )
    seat = view.get("seat")
    if isinstance(seat, int):
        to: list[object] = ["seat", {"n": seat}]
    else:
        to = ["the_dealer", {}] if position == 1 else ["the_dead_hand", {}]
    return {"key": "count_from", "vars": {"n": number, "from": origin, "to": to}}


def encode(doc: Mapping[str, object]) -> bytes:
    """Compact JSON as UTF-8 (one line: it goes in one ``data:`` line of an event)."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def baccarat_roads(results: Sequence[roads.Item], rows: int = ROWS) -> dict[str, object]:
    """``counts``, ``roads`` (bead, big, and the three derived roads: every cell with ``col``,
    ``row`` on a grid of ``rows`` rows, as :func:`roads.layout` draws them), ``predict`` (the
    cell each road would draw if the next coup were a banker or a player win: the boards'
    "banker ask" / "player ask", :func:`_asked`) and ``percent`` (:func:`percentages`)."""
    beads = roads.bead_plate(results, rows)
    big = roads.big_road(results)
    out: dict[str, object] = {
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
    predict: dict[str, dict[str, object]] = {}
    for side in ("banker", "player"):
        predict[side] = _asked(results, side, entries, rows)
    c = roads.counts(results)
    counts = {
        "banker": c.banker,
        "player": c.player,
        "tie": c.tie,
        "banker_pair": c.banker_pair,
        "player_pair": c.player_pair,
        "coups": c.coups,
    }
    return {"roads": out, "predict": predict, "counts": counts, "percent": percentages(counts)}


def _asked(
    results: Sequence[roads.Item],
    side: roads.Side,
    entries: Mapping[str, list[roads.Colour]],
    rows: int,
) -> dict[str, object]:
    """The cell each road would draw if the next coup were a ``side`` win (a board's "banker
    ask" / "player ask"): the bead and the big road always draw one; each derived road at most
    one (``color`` and ``cell``, None where it writes none). One more win adds exactly one
    big-road cell, so the new cell of each road is its last."""
    after = [*results, side]
    bead = roads.bead_plate(after, rows)[-1]
    big = roads.big_road(after)
    big_place = roads.layout(big, rows)[-1][-1]
    asked: dict[str, object] = {
        "bead": {"col": bead.col, "row": bead.row, "winner": side},
        "big": {"col": big_place[0], "row": big_place[1], "winner": side},
    }
    for name, k in DERIVED:
        grown = roads.derived_road(big, k)
        if len(grown) > len(entries[name]):
            place = roads.layout(roads.as_columns(grown), rows)[-1][-1]
            asked[name] = {"col": place[0], "row": place[1], "color": grown[-1]}
        else:
            asked[name] = None
    return asked


def percentages(counts: Mapping[str, int]) -> dict[str, int]:
    """Each count as a whole percentage of the coups: banker, player and tie by the largest
    remainder, so the three always add up to 100; the pairs each rounded half up. All 0 before
    the first coup."""
    coups = counts.get("coups", 0)
    if not coups:
        return {k: 0 for k in ("banker", "player", "tie", "banker_pair", "player_pair")}
    main = ("banker", "player", "tie")
    exact = {k: 100 * counts[k] / coups for k in main}
    out = {k: int(v) for k, v in exact.items()}
    for k in sorted(main, key=lambda k: (-(exact[k] - out[k]), main.index(k)))[
        : 100 - sum(out.values())
    ]:
        out[k] += 1
    for k in ("banker_pair", "player_pair"):
        out[k] = (200 * counts[k] + coups) // (2 * coups)
    return out
