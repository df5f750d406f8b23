"""Scoreboard roads (issue 17): bead plate, big road, big eye boy, small road, cockroach pig,
the dragon-tail layout.

Every expected output below was worked out by hand from the rule (the working is in the
comments), never by calling the code. The property tests compare with a second implementation
written here straight from the rule text, on the flat list of big-road cells with 1-based
(column, row) coordinates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.games import baccarat
from controller.games.baccarat import (
    BaccaratError,
    Bead,
    BigRoadCell,
    Counts,
    Result,
    RoadError,
    as_columns,
    bead_plate,
    big_eye_boy,
    big_road,
    cockroach_pig,
    counts,
    derived_road,
    layout,
    small_road,
)
from controller.games.baccarat.roads import Item

B: Final = "banker"
P: Final = "player"
T: Final = "tie"
R_: Final = "red"  # road colours (B is the banker)
B_: Final = "blue"


def seq(text: str) -> list[str]:
    """``"BBPT"`` -> ["banker", "banker", "player", "tie"]."""
    return [{"B": B, "P": P, "T": T}[c] for c in text]


def shape(columns: Sequence[Sequence[BigRoadCell]]) -> list[str]:
    """The big road as one string per column: winner letter repeated, ties as digits after."""
    out = []
    for col in columns:
        out.append(" ".join(c.winner[0].upper() + (str(c.ties) if c.ties else "") for c in col))
    return out


# ---------------------------------------------------------------------------------------------
# Reading results
# ---------------------------------------------------------------------------------------------


def test_plain_strings_results_and_mappings_read_the_same() -> None:
    plain: list[Item] = [B, T, P, P]
    rich: list[Item] = [Result(B), Result(T), Result(P), Result(P)]
    maps: list[Item] = [{"winner": B}, {"winner": T, "coup": 2}, {"winner": P}, {"winner": P}]
    assert big_road(plain) == big_road(rich) == big_road(maps)
    assert bead_plate(plain) == bead_plate(rich) == bead_plate(maps)
    assert counts(iter(plain)) == counts(plain)  # any iterable, read once


@pytest.mark.parametrize(
    "bad",
    [
        "Banker",
        "b",
        "",
        None,
        1,
        ("banker",),
        {"win": "banker"},
        {"winner": "draw"},
        {"winner": "banker", "banker_pair": "yes"},
        {"winner": "tie", "natural": 1},
    ],
)
def test_a_bad_item_is_a_road_error_naming_it(bad: object) -> None:
    for fn in (big_road, bead_plate, counts, big_eye_boy, small_road, cockroach_pig):
        with pytest.raises(RoadError) as e:
            fn([B, P, bad])  # type: ignore[list-item]
        assert repr(bad) in str(e.value)
        assert "result 2" in str(e.value)
        assert isinstance(e.value, ValueError) and isinstance(e.value, BaccaratError)


def test_result_checks_its_fields() -> None:
    with pytest.raises(RoadError, match="'draw'"):
        Result("draw")  # type: ignore[arg-type]
    with pytest.raises(RoadError, match="player_pair"):
        Result(B, player_pair=1)  # type: ignore[arg-type]
    with pytest.raises(RoadError, match="natural"):
        Result(B, natural=None)  # type: ignore[arg-type]


def test_a_string_is_not_a_sequence_of_results() -> None:
    with pytest.raises(RoadError, match="string"):
        big_road("banker")


@pytest.mark.parametrize("rows", [0, -1, True, 2.0, "6"])
def test_rows_must_be_a_positive_whole_number(rows: object) -> None:
    with pytest.raises(RoadError, match="rows"):
        bead_plate([B], rows=rows)  # type: ignore[arg-type]
    with pytest.raises(RoadError, match="rows"):
        layout([[B]], rows=rows)  # type: ignore[arg-type]


@pytest.mark.parametrize("k", [0, -1, True, 1.0])
def test_k_must_be_a_positive_whole_number(k: object) -> None:
    with pytest.raises(RoadError, match="k must"):
        derived_road([[B]], k)  # type: ignore[arg-type]


def test_an_empty_logical_column_is_refused() -> None:
    with pytest.raises(RoadError, match="column 1 is empty"):
        layout([[B], []])
    with pytest.raises(RoadError, match="column 0 is empty"):
        derived_road([[]], 1)


def test_exported_from_the_package() -> None:
    for name in (
        "bead_plate",
        "big_road",
        "big_eye_boy",
        "small_road",
        "cockroach_pig",
        "derived_road",
        "as_columns",
        "layout",
        "counts",
        "Result",
        "Bead",
        "BigRoadCell",
        "Counts",
        "RoadError",
    ):
        assert name in baccarat.__all__
        assert getattr(baccarat, name) is not None
    assert "deal" in baccarat.__all__ and "VigLedger" in baccarat.__all__  # existing names kept


def test_roads_are_lists_that_equal_a_list_written_by_hand() -> None:
    # Issue 17: `big_eye_boy(r) == ["red", "blue"]` must hold; a tuple never equals a list.
    # B P P B: columns [B], [P P], [B]; big eye boy c2 r2 blue (c1 ends at row 1), c3 r1
    # L2=2 vs L1=1 blue.
    r = seq("BPPB")
    assert big_eye_boy(r) == [B_, B_]
    assert type(big_eye_boy(r)) is list
    assert small_road(seq("BPBP")) == [R_]  # c4 r1: L3=1 vs L1=1
    assert cockroach_pig(seq("BPBPB")) == [R_]  # c5 r1: L4=1 vs L1=1
    road = big_road(r)
    assert road == [[BigRoadCell(B)], [BigRoadCell(P), BigRoadCell(P)], [BigRoadCell(B)]]
    assert type(road) is list and all(type(col) is list for col in road)
    assert [[c.winner for c in col] for col in road] == [[B], [P, P], [B]]
    assert bead_plate(seq("BT")) == [
        Bead(B, False, False, False, 0, 0),
        Bead(T, False, False, False, 0, 1),
    ]
    assert type(bead_plate(r)) is list
    assert type(derived_road(road, 1)) is list
    assert as_columns(big_eye_boy(r)) == [[B_, B_]]
    assert layout(road) == [[(0, 0)], [(1, 0), (1, 1)], [(2, 0)]]
    # Each call builds new lists: changing one road changes no other.
    road[0].append(BigRoadCell(B))
    assert big_road(r)[0] == [BigRoadCell(B)]


# ---------------------------------------------------------------------------------------------
# Counts
# ---------------------------------------------------------------------------------------------


def test_counts_by_hand() -> None:
    results: list[Item] = [
        Result(T, banker_pair=True),  # a pair in a tie coup still counts
        Result(B, banker_pair=True, player_pair=True),
        {"winner": P, "player_pair": True},
        B,
        T,
        P,
        P,
    ]
    c = counts(results)
    assert c == Counts(banker=2, player=3, tie=2, banker_pair=2, player_pair=2)
    assert c.coups == 7


def test_counts_of_nothing_and_of_ties_only() -> None:
    assert counts([]) == Counts(0, 0, 0, 0, 0)
    assert counts([T, T, T]) == Counts(banker=0, player=0, tie=3, banker_pair=0, player_pair=0)


# ---------------------------------------------------------------------------------------------
# Bead plate
# ---------------------------------------------------------------------------------------------


def test_bead_plate_fills_six_rows_column_major_with_ties() -> None:
    beads = bead_plate(seq("BPTBBPPT"))
    assert [b.winner for b in beads] == [B, P, T, B, B, P, P, T]
    # 6 rows: beads 0-5 down column 0, beads 6-7 at the top of column 1.
    assert [b.position for b in beads] == [
        (0, 0),
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (0, 5),
        (1, 0),
        (1, 1),
    ]
    assert [(b.col, b.row) for b in beads] == [b.position for b in beads]


def test_bead_plate_with_three_rows_and_flags() -> None:
    beads = bead_plate(
        [
            Result(P, natural=True),
            Result(T, player_pair=True),
            B,
            {"winner": B, "banker_pair": True, "player_pair": True},
        ],
        rows=3,
    )
    assert beads == [
        Bead(P, False, False, True, 0, 0),
        Bead(T, False, True, False, 0, 1),
        Bead(B, False, False, False, 0, 2),
        Bead(B, True, True, False, 1, 0),
    ]


def test_bead_plate_of_nothing() -> None:
    assert bead_plate([]) == []


# ---------------------------------------------------------------------------------------------
# Big road (logical columns)
# ---------------------------------------------------------------------------------------------


def test_long_streak_is_one_logical_column() -> None:
    road = big_road([B] * 9)
    assert len(road) == 1
    assert road[0] == [BigRoadCell(B)] * 9


def test_chop_is_a_column_per_coup() -> None:
    assert shape(big_road(seq("BPBPBP"))) == ["B", "P", "B", "P", "B", "P"]


def test_streaks_make_columns() -> None:
    assert shape(big_road(seq("BBPPPBP"))) == ["B B", "P P P", "B", "P"]


def test_ties_at_the_start_count_on_the_first_cell() -> None:
    # T T P P B: the two opening ties go on the first cell (the first P).
    assert shape(big_road(seq("TTPPB"))) == ["P2 P", "B"]
    assert big_road(seq("TTPPB"))[0][0] == BigRoadCell(P, ties=2)


def test_ties_in_the_middle_count_on_the_latest_cell() -> None:
    # B T B T T P T: one tie on the first B, two on the second B, one on the P.
    assert shape(big_road(seq("BTBTTPT"))) == ["B1 B2", "P1"]


def test_ties_at_the_start_and_straight_after_the_first_win() -> None:
    # T B T P: opening tie on the B, the next tie also on that B (it is the latest cell).
    assert shape(big_road(seq("TBTP"))) == ["B2", "P"]


def test_a_tie_does_not_break_a_streak() -> None:
    assert shape(big_road(seq("BTB"))) == ["B1 B"]


def test_only_ties_give_no_columns_until_a_win() -> None:
    # Documented choice: no cell without a banker or player win; counts and the bead plate
    # still show the ties, and they land on the first cell when it comes.
    assert big_road([T, T, T]) == []
    assert big_eye_boy([T, T, T]) == small_road([T, T, T]) == cockroach_pig([T, T, T]) == []
    assert counts([T, T, T]).tie == 3
    assert len(bead_plate([T, T, T])) == 3
    assert big_road([T, T, T, B]) == [[BigRoadCell(B, ties=3)]]


def test_empty_shoe() -> None:
    assert big_road([]) == []
    assert big_eye_boy([]) == small_road([]) == cockroach_pig([]) == []
    assert layout(big_road([])) == []


def test_pairs_on_cells_are_those_of_the_coup_that_wrote_the_cell() -> None:
    road = big_road(
        [
            Result(T, player_pair=True),  # opening tie with a pair: only the tie count moves
            Result(B, banker_pair=True),
            Result(B),
            Result(T, banker_pair=True),  # tie with a pair: counted on the second B, no pair there
            {"winner": P, "banker_pair": True, "player_pair": True},
        ]
    )
    assert road == [
        [BigRoadCell(B, 1, True, False), BigRoadCell(B, 1, False, False)],
        [BigRoadCell(P, 0, True, True)],
    ]


# ---------------------------------------------------------------------------------------------
# Derived roads: a worked example, every entry by hand
# ---------------------------------------------------------------------------------------------

# Big road columns (1-based), lengths L:
#   c1 B (1) | c2 P P (2) | c3 B B (2) | c4 P (1) | c5 B B B (3) | c6 P (1) | c7 B (1)
#   c8 P P (2) | c9 B B B B (4) | c10 P P (2)
# with ties and pairs sprinkled in (they change nothing on the derived roads).
EXAMPLE: list[Item] = [
    T,
    B,
    P,
    Result(P, banker_pair=True),
    B,
    T,
    B,
    P,
    B,
    B,
    T,
    T,
    B,
    P,
    B,
    P,
    P,
    Result(B, player_pair=True),
    B,
    B,
    B,
    P,
    T,
    P,
]
EXAMPLE_LENGTHS = [1, 2, 2, 1, 3, 1, 1, 2, 4, 2]

# Big eye boy, k = 1. Row 1: L(n-1) == L(n-2) -> red. Row m >= 2: L(n-1) == m-1 -> blue, else red.
#   c1: nothing (no column before). c2 r1: needs c0 -> nothing; r2: L1=1 = m-1 -> blue.
#   c3 r1: L2=2 vs L1=1 -> blue; r2: L2=2 >= 2 -> red.      c4 r1: L3=2 vs L2=2 -> red.
#   c5 r1: L4=1 vs L3=2 -> blue; r2: L4=1 = 1 -> blue; r3: L4=1 < 2 -> red.
#   c6 r1: L5=3 vs L4=1 -> blue.   c7 r1: L6=1 vs L5=3 -> blue.
#   c8 r1: L7=1 vs L6=1 -> red; r2: L7=1 = 1 -> blue.
#   c9 r1: L8=2 vs L7=1 -> blue; r2: L8=2 >= 2 -> red; r3: L8=2 = 2 -> blue; r4: 2 < 3 -> red.
#   c10 r1: L9=4 vs L8=2 -> blue; r2: L9=4 >= 2 -> red.
EXAMPLE_BIG_EYE_BOY = [
    B_,  # c2
    B_,
    R_,  # c3
    R_,  # c4
    B_,
    B_,
    R_,  # c5
    B_,  # c6
    B_,  # c7
    R_,
    B_,  # c8
    B_,
    R_,
    B_,
    R_,  # c9
    B_,
    R_,  # c10
]

# Small road, k = 2. Row 1: L(n-1) == L(n-3). Row m >= 2: column n-2.
#   c1, c2: nothing. c3 r1: needs c0 -> nothing; r2: L1=1 = 1 -> blue.
#   c4 r1: L3=2 vs L1=1 -> blue.
#   c5 r1: L4=1 vs L2=2 -> blue; r2: L3=2 >= 2 -> red; r3: L3=2 = 2 -> blue.
#   c6 r1: L5=3 vs L3=2 -> blue.   c7 r1: L6=1 vs L4=1 -> red.
#   c8 r1: L7=1 vs L5=3 -> blue; r2: L6=1 = 1 -> blue.
#   c9 r1: L8=2 vs L6=1 -> blue; r2: L7=1 = 1 -> blue; r3: L7=1 < 2 -> red; r4: red.
#   c10 r1: L9=4 vs L7=1 -> blue; r2: L8=2 >= 2 -> red.
EXAMPLE_SMALL_ROAD = [
    B_,  # c3
    B_,  # c4
    B_,
    R_,
    B_,  # c5
    B_,  # c6
    R_,  # c7
    B_,
    B_,  # c8
    B_,
    B_,
    R_,
    R_,  # c9
    B_,
    R_,  # c10
]

# Cockroach pig, k = 3. Row 1: L(n-1) == L(n-4). Row m >= 2: column n-3.
#   c1-c3: nothing. c4 has one row, r1 needs c0 -> nothing (so it starts at c5 r1).
#   c5 r1: L4=1 vs L1=1 -> red; r2: L2=2 >= 2 -> red; r3: L2=2 = 2 -> blue.
#   c6 r1: L5=3 vs L2=2 -> blue.   c7 r1: L6=1 vs L3=2 -> blue.
#   c8 r1: L7=1 vs L4=1 -> red; r2: L5=3 >= 2 -> red.
#   c9 r1: L8=2 vs L5=3 -> blue; r2: L6=1 = 1 -> blue; r3: L6=1 < 2 -> red; r4: red.
#   c10 r1: L9=4 vs L6=1 -> blue; r2: L7=1 = 1 -> blue.
EXAMPLE_COCKROACH_PIG = [
    R_,
    R_,
    B_,  # c5
    B_,  # c6
    B_,  # c7
    R_,
    R_,  # c8
    B_,
    B_,
    R_,
    R_,  # c9
    B_,
    B_,  # c10
]


def test_worked_example_big_road() -> None:
    assert [len(c) for c in big_road(EXAMPLE)] == EXAMPLE_LENGTHS
    assert shape(big_road(EXAMPLE)) == [
        "B1",
        "P P",
        "B1 B",
        "P",
        "B B2 B",
        "P",
        "B",
        "P P",
        "B B B B",
        "P1 P",
    ]


def test_worked_example_big_eye_boy() -> None:
    assert big_eye_boy(EXAMPLE) == EXAMPLE_BIG_EYE_BOY


def test_worked_example_small_road() -> None:
    assert small_road(EXAMPLE) == EXAMPLE_SMALL_ROAD


def test_worked_example_cockroach_pig() -> None:
    assert cockroach_pig(EXAMPLE) == EXAMPLE_COCKROACH_PIG


def test_worked_example_derived_road_from_columns() -> None:
    columns = big_road(EXAMPLE)
    assert derived_road(columns, 1) == EXAMPLE_BIG_EYE_BOY
    assert derived_road(columns, 2) == EXAMPLE_SMALL_ROAD
    assert derived_road(columns, 3) == EXAMPLE_COCKROACH_PIG
    # only the lengths matter
    assert derived_road([[0] * n for n in EXAMPLE_LENGTHS], 2) == EXAMPLE_SMALL_ROAD


def test_worked_example_derived_roads_as_columns() -> None:
    assert as_columns(big_eye_boy(EXAMPLE)) == [
        [B_, B_],
        [R_, R_],
        [B_, B_],
        [R_],
        [B_, B_],
        [R_],
        [B_, B_],
        [R_],
        [B_],
        [R_],
        [B_],
        [R_],
    ]
    assert as_columns(small_road(EXAMPLE)) == [
        [B_, B_, B_],
        [R_],
        [B_, B_],
        [R_],
        [B_, B_, B_, B_],
        [R_, R_],
        [B_],
        [R_],
    ]
    assert as_columns(cockroach_pig(EXAMPLE)) == [
        [R_, R_],
        [B_, B_, B_],
        [R_, R_],
        [B_, B_],
        [R_, R_],
        [B_, B_],
    ]


def test_a_long_streak_on_the_derived_roads() -> None:
    # B P then nine P-less bankers: c1 B (1), c2 P (1), c3 B x9.
    # Big eye boy: c3 r1: L2=1 vs L1=1 -> red; r2: L2=1 = 1 -> blue; r3..r9: L2 ended -> red.
    assert big_eye_boy(seq("BP" + "B" * 9)) == [R_, B_] + [R_] * 7
    # Small road: c3 r1 needs c0 -> nothing; r2: L1=1 = 1 -> blue; r3..r9 -> red.
    assert small_road(seq("BP" + "B" * 9)) == [B_] + [R_] * 7
    # Cockroach pig: c3 has no column 3 to the left -> nothing.
    assert cockroach_pig(seq("BP" + "B" * 9)) == []


def test_chop_on_the_derived_roads() -> None:
    # Columns of one only: every row-1 comparison is between equal lengths -> red.
    chop = seq("BPBPBPBP")  # 8 columns
    assert big_eye_boy(chop) == [R_] * 6  # c3..c8
    assert small_road(chop) == [R_] * 5  # c4..c8
    assert cockroach_pig(chop) == [R_] * 4  # c5..c8


# Where each derived road writes its first entry. Each case: results, and the number of coups
# after which the first entry appears (the one that writes that cell), and its colour.
FIRST_ENTRY = [
    # big eye boy at c2 r2: B P P -> the 3rd coup; c1 (1 row) ends at m-1=1 -> blue
    (big_eye_boy, "BPP", 3, B_),
    # big eye boy at c3 r1 when c2 has one row: B P B -> the 3rd coup; L2=1 vs L1=1 -> red
    (big_eye_boy, "BPB", 3, R_),
    # c2 of one row writes nothing: B P alone has no entry; a tie changes nothing
    (big_eye_boy, "BPTB", 4, R_),
    # small road at c3 r2: B P B B -> 4th coup; L1=1 = 1 -> blue
    (small_road, "BPBB", 4, B_),
    # small road at c4 r1 when c3 has one row: B P B P -> 4th coup; L3=1 vs L1=1 -> red
    (small_road, "BPBP", 4, R_),
    # small road with a long c2: c2 r2 writes nothing (needs c0); B PPP B B -> c3 r2, 6th coup
    # L1=1 = 1 -> blue
    (small_road, "BPPPBB", 6, B_),
    # cockroach pig at c4 r2: B P B P P -> 5th coup; L1=1 = 1 -> blue
    (cockroach_pig, "BPBPP", 5, B_),
    # cockroach pig at c5 r1 when c4 has one row: B P B P B -> 5th; L4=1 vs L1=1 -> red
    (cockroach_pig, "BPBPB", 5, R_),
    # cockroach pig: c4 r1 writes nothing even with long earlier columns: BB PP BB P B ->
    # c5 r1 at the 8th coup; L4=1 vs L1=2 -> blue
    (cockroach_pig, "BBPPBBPB", 8, B_),
]


@pytest.mark.parametrize(("road", "text", "at", "colour"), FIRST_ENTRY)
def test_where_each_derived_road_starts(road: object, text: str, at: int, colour: str) -> None:
    results = seq(text)
    fn = road  # one of big_eye_boy, small_road, cockroach_pig
    written = [len(fn(results[:i])) for i in range(len(results) + 1)]  # type: ignore[operator]
    assert written == [0] * at + [1] * (len(results) + 1 - at)
    assert fn(results)[0] == colour  # type: ignore[operator]


def test_big_eye_boy_in_a_long_second_column() -> None:
    # B PPP B: c2 r2: L1=1 = 1 -> blue; c2 r3: L1=1 < 2 -> red; c3 r1: L2=3 vs L1=1 -> blue.
    assert big_eye_boy(seq("BPPPB")) == [B_, R_, B_]


# ---------------------------------------------------------------------------------------------
# as_columns
# ---------------------------------------------------------------------------------------------


def test_as_columns() -> None:
    assert as_columns([]) == []
    assert as_columns([R_]) == [[R_]]
    assert as_columns([R_, R_, B_, R_, B_, B_, B_]) == [[R_, R_], [B_], [R_], [B_, B_, B_]]
    assert as_columns(iter("aab")) == [["a", "a"], ["b"]]


# ---------------------------------------------------------------------------------------------
# Layout: the dragon tail
# ---------------------------------------------------------------------------------------------


def test_layout_of_a_long_streak_turns_right_at_the_bottom() -> None:
    assert layout(big_road([B] * 9)) == [
        [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 5), (2, 5), (3, 5)]
    ]


def test_layout_of_short_columns_is_one_drawing_column_each() -> None:
    assert layout(big_road(seq("BBPPPB"))) == [[(0, 0), (0, 1)], [(1, 0), (1, 1), (1, 2)], [(2, 0)]]


def test_a_tail_blocks_later_columns_which_turn_right_earlier() -> None:
    # Logical lengths 8, 7, 6, 1, 6 on 6 rows, drawn by hand:
    #   c0 (8): (0,0)-(0,5), tail along row 5: (1,5), (2,5)
    #   c1 (7): (1,0)-(1,4) ((1,5) is c0's tail), turns on row 4: (2,4), (3,4)
    #   c2 (6): (2,0)-(2,3) ((2,4) held), turns on row 3: (3,3), (4,3)
    #   c3 (1): (3,0)
    #   c4 (6): (4,0)-(4,2) ((4,3) held by c2's tail), turns on row 2: (5,2), (6,2), (7,2)
    columns = big_road(seq("B" * 8 + "P" * 7 + "B" * 6 + "P" + "B" * 6))
    assert [len(c) for c in columns] == [8, 7, 6, 1, 6]
    assert layout(columns) == [
        [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 5), (2, 5)],
        [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (2, 4), (3, 4)],
        [(2, 0), (2, 1), (2, 2), (2, 3), (3, 3), (4, 3)],
        [(3, 0)],
        [(4, 0), (4, 1), (4, 2), (5, 2), (6, 2), (7, 2)],
    ]


def test_a_tail_ends_and_the_next_column_goes_down_again() -> None:
    # Lengths 7, 1, 6: c0 tail at (1,5); c1 at (1,0); c2 at (2,0) has row 5 free -> straight down.
    assert layout([[B] * 7, [P], [B] * 6]) == [
        [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 5)],
        [(1, 0)],
        [(2, 0), (2, 1), (2, 2), (2, 3), (2, 4), (2, 5)],
    ]


def test_a_tail_along_the_top_row_pushes_the_next_column_right() -> None:
    # 2 rows, lengths 3, 3, 1:
    #   c0: (0,0), (0,1), tail (1,1)
    #   c1: (1,0); (1,1) held -> turns on row 0: (2,0), (3,0)
    #   c2: the top of drawing columns 2 and 3 is c1's tail -> starts at (4,0)
    assert layout([[B] * 3, [P] * 3, [B]], rows=2) == [
        [(0, 0), (0, 1), (1, 1)],
        [(1, 0), (2, 0), (3, 0)],
        [(4, 0)],
    ]


def test_layout_with_one_row() -> None:
    assert layout([[B, B], [P], [B, B, B]], rows=1) == [
        [(0, 0), (1, 0)],
        [(2, 0)],
        [(3, 0), (4, 0), (5, 0)],
    ]


def test_layout_of_a_derived_road() -> None:
    # The long streak's big eye boy: red, blue, then 7 reds -> columns of 1, 1, 7.
    drawn = layout(as_columns(big_eye_boy(seq("BP" + "B" * 9))))
    assert drawn == [
        [(0, 0)],
        [(1, 0)],
        [(2, 0), (2, 1), (2, 2), (2, 3), (2, 4), (2, 5), (3, 5)],
    ]


# ---------------------------------------------------------------------------------------------
# Property tests against a second implementation written from the rule text
# ---------------------------------------------------------------------------------------------


def brute_cells(results: Sequence[str]) -> list[tuple[str, int, int, int]]:
    """Big-road cells as (winner, column, row, ties), 1-based, read coup by coup: a win like the
    last goes one row down, a different one to row 1 of the next column; a tie is added to the
    last cell, or held for the first."""
    cells: list[list[object]] = []
    held = 0
    for r in results:
        if r == T:
            if cells:
                cells[-1][3] = int(str(cells[-1][3])) + 1
            else:
                held += 1
        elif cells and cells[-1][0] == r:
            cells.append([r, cells[-1][1], int(str(cells[-1][2])) + 1, 0])
        else:
            col = int(str(cells[-1][1])) + 1 if cells else 1
            cells.append([r, col, 1, held if not cells else 0])
    return [(str(w), int(str(c)), int(str(m)), int(str(t))) for w, c, m, t in cells]


def brute_derived(results: Sequence[str], k: int) -> list[str]:
    """The published rule, on the set of occupied (column, row) cells."""
    cells = [(c, m) for _, c, m, _ in brute_cells(results)]
    here = set(cells)

    def length(c: int) -> int:
        m = 0
        while (c, m + 1) in here:
            m += 1
        return m

    out = []
    for n, m in cells:
        if m == 1:
            # compare the lengths of columns n-1 and n-1-k; both must be there
            if (n - 1, 1) in here and (n - 1 - k, 1) in here:
                out.append(R_ if length(n - 1) == length(n - 1 - k) else B_)
        elif (n - k, 1) in here:
            if (n - k, m) in here:
                out.append(R_)  # column n-k has a row m
            elif (n - k, m - 1) in here:
                out.append(B_)  # it ends exactly at row m-1
            else:
                out.append(R_)  # it ended earlier
    return out


results_st = st.lists(st.sampled_from([B, P, T]), max_size=90)
# streaky shoes: runs of one winner, with ties scattered in
runs_st = st.lists(
    st.tuples(st.sampled_from([B, P]), st.integers(1, 9), st.integers(0, 2)), max_size=25
).map(lambda runs: [x for w, n, t in runs for x in [w] * n + [T] * t])
any_results = st.one_of(results_st, runs_st)


@given(any_results)
def test_big_road_matches_the_brute_force(results: list[str]) -> None:
    road = big_road(results)
    got = [
        (cell.winner, i + 1, j + 1, cell.ties)
        for i, col in enumerate(road)
        for j, cell in enumerate(col)
    ]
    assert got == brute_cells(results)
    if road:
        assert sum(cell.ties for col in road for cell in col) == results.count(T)


@given(any_results)
def test_derived_roads_match_the_brute_force(results: list[str]) -> None:
    assert big_eye_boy(results) == brute_derived(results, 1)
    assert small_road(results) == brute_derived(results, 2)
    assert cockroach_pig(results) == brute_derived(results, 3)


@given(any_results, st.integers(1, 4))
def test_a_derived_entry_never_changes_once_written(results: list[str], k: int) -> None:
    full = derived_road(big_road(results), k)
    for i in range(len(results)):
        prefix = derived_road(big_road(results[:i]), k)
        assert full[: len(prefix)] == prefix


@given(any_results, st.integers(1, 8))
def test_bead_plate_properties(results: list[str], rows: int) -> None:
    beads = bead_plate(results, rows=rows)
    assert [b.winner for b in beads] == results
    assert [b.position for b in beads] == [(i // rows, i % rows) for i in range(len(results))]


@given(st.lists(st.integers(1, 15), max_size=30), st.integers(1, 7))
def test_layout_follows_the_dragon_tail_rule(lengths: list[int], rows: int) -> None:
    columns = [[0] * n for n in lengths]
    drawn = layout(columns, rows=rows)
    assert [len(c) for c in drawn] == lengths
    held: set[tuple[int, int]] = set()
    previous_start = -1
    for cells in drawn:
        x0, y0 = cells[0]
        # starts at the top of the first drawing column right of the previous start that is free
        assert y0 == 0
        assert x0 > previous_start and (x0, 0) not in held
        assert all((x, 0) in held for x in range(previous_start + 1, x0))
        previous_start = x0
        turned = False
        for (x, y), (nx, ny) in zip(cells, cells[1:], strict=False):
            below_free = y + 1 < rows and (x, y + 1) not in held
            if (nx, ny) == (x, y + 1):
                assert not turned and below_free  # goes down only before turning
            else:
                assert (nx, ny) == (x + 1, y)
                # turns right only at the bottom or above an earlier column's cell
                assert turned or not below_free
                turned = True
        for x, y in cells:
            assert 0 <= y < rows and x >= 0
            assert (x, y) not in held  # never drawn over another cell
        assert len(set(cells)) == len(cells)
        held.update(cells)
