"""What a page receives: the published view plus, for baccarat, the roads with every cell's grid
position, counts and the "ask" predictions. Expected values are the hand-worked example of
docs/roads.md (tests/unit/baccarat/test_roads.py), and the predictions are checked against what
the road does write when that result comes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.games.baccarat.roads import Result, RoadError
from controller.scoreboard.content import baccarat_roads, document, encode, percentages
from tests.unit.baccarat.test_roads import (
    EXAMPLE,
    EXAMPLE_BIG_EYE_BOY,
    EXAMPLE_COCKROACH_PIG,
    EXAMPLE_SMALL_ROAD,
)


def test_pai_gow_documents_are_the_view_its_version_and_the_table() -> None:
    view = {"game": "paigow", "state": "betting", "number": None}
    table = {"table": "PG-3", "table_name": "PAI GOW 3"}
    doc = document(7, view, table)
    assert doc == {**view, **table, "version": 7, "called": {"key": "state_betting"}, "start": {}}
    assert json.loads(encode(doc)) == doc


@pytest.mark.parametrize(
    ("bank", "bank_seat", "number", "position", "seat", "origin", "to"),
    [
        # 5324.50(g)(10): seat 1 banks (position 2); the count of 3 ends at position 4, seat 3
        ("player", 1, 3, 4, 3, ["the_bank_seat", {"n": 1}], ["seat", {"n": 3}]),
        # (e)(3): the house banks, 1 is the dealer's own position
        ("house", None, 1, 1, None, ["the_dealer", {}], ["the_dealer", {}]),
        ("house", None, 8, 8, None, ["the_dealer", {}], ["the_dead_hand", {}]),
        ("co-bank", 5, 2, 7, 6, ["the_bank_seat", {"n": 5}], ["seat", {"n": 6}]),
    ],
)
def test_the_pai_gow_start_is_said_in_words_that_cannot_be_misread(
    bank: str,
    bank_seat: int | None,
    number: int,
    position: int,
    seat: int | None,
    origin: list[object],
    to: list[object],
) -> None:
    view = {
        "game": "paigow",
        "state": "dealing",
        "showing": True,
        "number": number,
        "start_position": position,
        "seat": seat,
        "bank": bank,
        "bank_seat": bank_seat,
    }
    assert document(1, view)["start"] == {
        "key": "count_from",
        "vars": {"n": number, "from": origin, "to": to},
    }
    assert document(1, {**view, "showing": False})["start"] == {}


def test_the_worked_example_on_the_board() -> None:
    # The table publishes Result codes.
    codes = [r.code if isinstance(r, Result) else Result(r).code for r in EXAMPLE]
    doc = document(3, {"game": "baccarat", "shoe": 2, "coup": len(EXAMPLE), "results": codes})
    assert "results" not in doc and doc["shoe"] == 2 and doc["version"] == 3
    roads = doc["roads"]
    assert isinstance(roads, dict)
    # Big road: columns B1 | P P | B1 B | P | B B2 B | P | B | P P | B B B B | P1 P, 6 rows;
    # none is longer than 6, so each column is drawn straight down in its own drawing column.
    lengths = [1, 2, 2, 1, 3, 1, 1, 2, 4, 2]
    expected = [(col, row) for col, n in enumerate(lengths) for row in range(n)]
    assert [(c["col"], c["row"]) for c in roads["big"]] == expected
    assert [c["ties"] for c in roads["big"] if c["ties"]] == [1, 1, 2, 1]
    # Derived roads: the hand-worked colours, in order of the cells.
    for name, colours in (
        ("big_eye_boy", EXAMPLE_BIG_EYE_BOY),
        ("small_road", EXAMPLE_SMALL_ROAD),
        ("cockroach_pig", EXAMPLE_COCKROACH_PIG),
    ):
        assert [c["color"] for c in roads[name]] == colours, name
    # Bead plate: every coup, ties included, down 6 rows.
    assert len(roads["bead"]) == len(EXAMPLE)
    assert [(b["col"], b["row"]) for b in roads["bead"][:8]] == [
        (0, 0),
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (0, 5),
        (1, 0),
        (1, 1),
    ]
    counts = doc["counts"]
    assert isinstance(counts, dict)
    assert counts["coups"] == len(EXAMPLE)
    assert counts["banker"] + counts["player"] + counts["tie"] == len(EXAMPLE)


def test_a_long_streak_is_drawn_with_its_dragon_tail() -> None:
    roads = baccarat_roads(["player"] + ["banker"] * 8)["roads"]
    assert [(c["col"], c["row"]) for c in roads["big"]] == [
        (0, 0),
        (1, 0),
        (1, 1),
        (1, 2),
        (1, 3),
        (1, 4),
        (1, 5),
        (2, 5),
        (3, 5),
    ]


def test_pairs_and_naturals_are_carried() -> None:
    results = [
        {"winner": "banker", "banker_pair": True, "natural": True},
        {"winner": "tie", "player_pair": True},
        {"winner": "player", "player_pair": True, "banker_pair": True},
    ]
    doc = baccarat_roads(results)
    bead = doc["roads"]["bead"]
    assert [(b["banker_pair"], b["player_pair"], b["natural"]) for b in bead] == [
        (True, False, True),
        (False, True, False),
        (True, True, False),
    ]
    big = doc["roads"]["big"]
    assert [(c["winner"], c["ties"], c["banker_pair"], c["player_pair"]) for c in big] == [
        ("banker", 1, True, False),
        ("player", 0, True, True),
    ]
    assert doc["counts"]["banker_pair"] == 2 and doc["counts"]["player_pair"] == 2


results_strategy = st.lists(st.sampled_from(["banker", "player", "tie"]), max_size=80)


@given(results_strategy)
def test_the_ask_is_what_every_road_draws_next(results: list[str]) -> None:
    """The asks are the cell each road draws if the next coup is that side's win: the bead and
    the big road always one, a derived road one or none (its colour and place), checked by
    dealing that result."""
    now = baccarat_roads(results)
    for side in ("banker", "player"):
        after = baccarat_roads([*results, side])["roads"]
        asked = now["predict"][side]
        for name in ("bead", "big"):
            new = after[name][-1]
            assert asked[name] == {"col": new["col"], "row": new["row"], "winner": side}
            assert len(after[name]) == len(now["roads"][name]) + 1
        for name in ("big_eye_boy", "small_road", "cockroach_pig"):
            grew = len(after[name]) > len(now["roads"][name])
            assert asked[name] == (after[name][-1] if grew else None)
            # Earlier entries never change (docs/roads.md): the prefix is kept.
            assert after[name][: len(now["roads"][name])] == now["roads"][name]


@given(results_strategy)
def test_no_two_cells_of_a_road_share_a_place(results: list[str]) -> None:
    roads = baccarat_roads(results)["roads"]
    for name, cells in roads.items():
        places = [(c["col"], c["row"]) for c in cells]
        assert len(places) == len(set(places)), name
        assert all(0 <= row < 6 for _, row in places)


def test_a_bad_result_list_is_refused() -> None:
    for bad in (["banker"], ["Bx"], ["Bnb"], [""], "BPB", [None]):
        with pytest.raises(RoadError):
            document(1, {"game": "baccarat", "results": bad})


def test_codes_carry_the_flags() -> None:
    doc = document(1, {"game": "baccarat", "results": ["Bbn", "Tp", "Pbp"]})
    bead = doc["roads"]["bead"]  # type: ignore[index]
    assert [(b["winner"], b["banker_pair"], b["player_pair"], b["natural"]) for b in bead] == [
        ("banker", True, False, True),
        ("tie", False, True, False),
        ("player", True, True, False),
    ]


@pytest.mark.parametrize(
    ("counts", "percent"),
    [
        ((1, 1, 1, 1, 0), (34, 33, 33, 33, 0)),  # thirds: the first largest remainder rounds up
        ((40, 35, 5, 6, 3), (50, 44, 6, 8, 4)),  # 50, 43.75, 6.25: player gets the spare point
        ((0, 0, 0, 0, 0), (0, 0, 0, 0, 0)),
        ((2, 0, 1, 1, 1), (67, 0, 33, 33, 33)),
        ((7, 0, 0, 1, 0), (100, 0, 0, 14, 0)),  # a pair in 7 coups: 14.3 %
    ],
)
def test_percentages_of_the_coups(counts: tuple[int, ...], percent: tuple[int, ...]) -> None:
    keys = ("banker", "player", "tie", "banker_pair", "player_pair")
    given_counts = dict(zip(keys, counts, strict=True))
    got = percentages({**given_counts, "coups": sum(counts[:3])})
    assert tuple(got[k] for k in keys) == percent


@given(st.lists(st.sampled_from(["B", "P", "T", "Bb", "Pp", "Tbp"]), min_size=1, max_size=90))
def test_banker_player_and_tie_percentages_add_up_to_100(codes: list[str]) -> None:
    doc = document(1, {"game": "baccarat", "state": "betting", "shoe": 1, "results": codes})
    pct, counts = doc["percent"], doc["counts"]
    assert pct["banker"] + pct["player"] + pct["tie"] == 100  # type: ignore[index]
    for k in ("banker", "player", "tie", "banker_pair", "player_pair"):
        exact = 100 * counts[k] / counts["coups"]  # type: ignore[index]
        assert abs(pct[k] - exact) < 1, k  # type: ignore[index]


@pytest.mark.parametrize(
    ("state", "last_hand", "shoe", "asks"),
    [
        ("betting", False, 1, True),
        ("dealing", False, 1, True),
        ("settling", False, 1, True),
        ("betting", True, 1, True),  # the last hand is still to come
        ("settling", True, 1, False),  # the last hand settled: the shoe has ended
        ("shuffle", False, 1, False),
        ("burn", False, 2, False),
        ("halted", False, 1, False),
        ("betting", False, 0, False),
    ],
)
def test_the_asks_hide_once_the_shoe_has_ended(
    state: str, last_hand: bool, shoe: int, asks: bool
) -> None:
    view = {"game": "baccarat", "state": state, "shoe": shoe, "results": ["B"]}
    assert document(1, {**view, "last_hand": last_hand})["ask"] is asks


@pytest.mark.parametrize(
    ("state", "codes", "totals", "called"),
    [
        ("settling", ["P", "B"], (5, 7), {"key": "banker_wins", "vars": {"n": 7}}),
        ("settling", ["Pn"], (9, 2), {"key": "player_wins", "vars": {"n": 9}}),
        ("settling", ["B", "T"], (6, 6), {"key": "tie_hand"}),
        ("betting", ["B"], (2, 7), {"key": "state_betting"}),
        ("banker_third", [], (), {"key": "state_dealing"}),
    ],
)
def test_the_header_calls_the_winner_with_its_total(
    state: str, codes: list[str], totals: tuple[int, ...], called: dict[str, object]
) -> None:
    view = {"game": "baccarat", "state": state, "shoe": 1, "results": codes}
    assert document(1, {**view, "last_totals": totals})["called"] == called
