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
from controller.scoreboard.content import baccarat_roads, document, encode
from tests.unit.baccarat.test_roads import (
    EXAMPLE,
    EXAMPLE_BIG_EYE_BOY,
    EXAMPLE_COCKROACH_PIG,
    EXAMPLE_SMALL_ROAD,
)


def test_pai_gow_documents_are_the_view_and_its_version() -> None:
    view = {"game": "paigow", "state": "dealing", "number": 6}
    assert document(7, view) == {**view, "version": 7}
    assert json.loads(encode(document(7, view))) == {**view, "version": 7}


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
def test_the_ask_is_what_the_road_writes_next(results: list[str]) -> None:
    now = baccarat_roads(results)
    for side in ("banker", "player"):
        after = baccarat_roads([*results, side])["roads"]
        for name in ("big_eye_boy", "small_road", "cockroach_pig"):
            grew = len(after[name]) > len(now["roads"][name])
            predicted = now["predict"][side][name]
            assert predicted == (after[name][-1]["color"] if grew else None)
            # Earlier entries never change (docs/roads.md): the prefix is kept.
            assert [c["color"] for c in after[name][: len(now["roads"][name])]] == [
                c["color"] for c in now["roads"][name]
            ]


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
