"""Ranking of tiles and two-tile hands, 9 NYCRR 5324.50(b)(1)-(7)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from math import comb

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.games import paigow
from controller.games.paigow import HandError, Tile, TileError

T = paigow.tile
HANDS = paigow.all_hands()


def h(text: str) -> tuple[Tile, Tile]:
    a, b = text.split()
    return (T(a), T(b))


# ---------------------------------------------------------------- (b)(6), every row
B6_TABLE = [  # (rank, tile, number of tiles in set) as printed in 5324.50(b)(6)
    (1, "6-6", 2),
    (2, "1-1", 2),
    (3, "4-4", 2),
    (4, "1-3", 2),
    (5, "5-5", 2),
    (6, "3-3", 2),
    (7, "2-2", 2),
    (8, "5-6", 2),
    (9, "4-6", 2),
    (10, "1-6", 2),
    (11, "1-5", 2),
    (12, "3-6", 1),
    (12, "4-5", 1),
    (13, "2-6", 1),
    (13, "3-5", 1),
    (14, "2-5", 1),
    (14, "3-4", 1),
    (15, "2-4", 1),
    (16, "1-4", 1),
    (16, "2-3", 1),
    (17, "1-2", 1),
]


@pytest.mark.parametrize(("rank", "text", "copies"), B6_TABLE, ids=[r[1] for r in B6_TABLE])
def test_b6_individual_rank_row(rank: int, text: str, copies: int) -> None:
    assert paigow.tile_rank(text) == rank
    assert T(text).copies == copies


def test_b6_table_is_complete() -> None:
    assert {T(t) for _r, t, _c in B6_TABLE} == set(paigow.TILE_KINDS) and len(B6_TABLE) == 21
    assert sum(c for _r, _t, c in B6_TABLE) == 32


# ---------------------------------------------------------------- (b)(1), every row
B1_TABLE = [  # (rank, tiles) for every line printed in 5324.50(b)(1)
    (1, "2-4 1-2"),
    (2, "6-6 6-6"),
    (3, "1-1 1-1"),
    (4, "4-4 4-4"),
    (5, "1-3 1-3"),
    (6, "5-5 5-5"),
    (7, "3-3 3-3"),
    (8, "2-2 2-2"),
    (9, "5-6 5-6"),
    (10, "4-6 4-6"),
    (11, "1-6 1-6"),
    (12, "1-5 1-5"),
    (13, "3-6 4-5"),
    (14, "3-5 2-6"),
    (15, "3-4 2-5"),
    (16, "1-4 2-3"),
    (17, "6-6 4-5"),
    (17, "6-6 3-6"),
    (18, "1-1 4-5"),
    (18, "1-1 3-6"),
    (19, "6-6 2-6"),
    (19, "6-6 3-5"),
    (19, "6-6 4-4"),
    (20, "1-1 2-6"),
    (20, "1-1 3-5"),
    (20, "1-1 4-4"),
]


@pytest.mark.parametrize(("rank", "text"), B1_TABLE, ids=[f"{r}:{t}" for r, t in B1_TABLE])
def test_b1_pair_rank_row(rank: int, text: str) -> None:
    a, b = h(text)
    assert paigow.pair_rank((a, b)) == rank
    assert paigow.pair_rank((b, a)) == rank  # order of the two tiles does not matter
    assert paigow.hand_rank((a, b)).is_pair


def test_b1_ranks_strictly_descend_and_only_listed_hands_are_pairs() -> None:
    by_rank: dict[int, list[int]] = {}
    for rank, text in B1_TABLE:
        by_rank.setdefault(rank, []).append(paigow.rank_key(h(text)))
    assert sorted(by_rank) == list(range(1, 21))
    for rank in range(1, 21):
        assert len(set(by_rank[rank])) == 1  # (b)(2): one rank, one key
        if rank < 20:
            assert by_rank[rank][0] > by_rank[rank + 1][0]
    listed = {frozenset(h(t)) if h(t)[0] != h(t)[1] else frozenset(h(t)) for _r, t in B1_TABLE}
    for hand in HANDS:
        assert paigow.hand_rank(hand).is_pair == (frozenset(hand) in listed)
    assert sum(paigow.hand_rank(x).is_pair for x in HANDS) == len(B1_TABLE) == 26


def test_any_pair_beats_any_non_pair() -> None:
    # (b)(1): "A hand with any permissible pair of tiles shall rank higher than a hand that does
    # not contain any permissible pair" -- even the gong of 1-1 (value 0) beats a 9 with 6-6.
    lowest_pair = min(paigow.rank_key(x) for x in HANDS if paigow.hand_rank(x).is_pair)
    highest_other = max(paigow.rank_key(x) for x in HANDS if not paigow.hand_rank(x).is_pair)
    assert lowest_pair > highest_other
    assert paigow.compare(h("1-1 4-4"), h("6-6 1-2")) == 1  # gong 20 vs 8 (1-2 as 6)


def test_b2_identical_pair_rank_is_a_tie() -> None:
    assert paigow.compare(h("6-6 4-5"), h("6-6 3-6")) == 0  # both wongs of 17th rank
    assert paigow.compare(h("1-1 2-6"), h("1-1 4-4")) == 0  # both gongs of 20th rank
    assert paigow.compare(h("5-5 5-5"), h("5-5 5-5")) == 0


# ---------------------------------------------------------------- (b)(3)-(5), (b)(7)
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("5-6 4-6", 1),  # 21 -> 1: left digit discarded
        ("6-6 5-6", 3),  # 23 -> 3
        ("4-6 1-3", 4),  # 14
        ("5-5 4-5", 9),
        ("4-6 5-5", 0),  # 20 -> 0 (a non-pair)
        ("1-6 1-4", 2),  # 12
        ("2-5 2-2", 1),  # 11
        ("3-3 1-5", 2),  # 12
        # (b)(4): a lone 1-2 or 2-4 counts 3 or 6, whichever gives the higher value
        ("1-2 5-5", 6),  # 3+10=13 -> 3, or 6+10=16 -> 6
        ("1-2 3-4", 3),  # 3+7=10 -> 0, or 6+7=13 -> 3
        ("2-4 1-4", 8),  # 6+5=11 -> 1, or 3+5 -> 8
        ("2-4 2-5", 3),  # 6+7=13 -> 3, or 3+7=10 -> 0
        ("1-2 6-6", 8),  # 3+12=15 -> 5, or 6+12=18 -> 8
        ("2-4 1-2", 9),  # the supreme pair, not used separately: 9
    ],
)
def test_b3_b4_value(text: str, value: int) -> None:
    assert paigow.hand_value(h(text)) == value


def test_b4_rank_change_of_the_supreme_tiles() -> None:
    # 2-4 with 1-4 is an 8 only with 2-4 counted 3, and then it ranks seventeenth, so the hand's
    # highest-ranking tile is the 1-4 (sixteenth): a copy of 2-3 with 1-2 (1-2 counted 3).
    r = paigow.hand_rank(h("2-4 1-4"))
    assert (r.value, r.counted_as, r.top_rank) == (8, 3, 16)
    assert paigow.compare(h("2-4 1-4"), h("2-3 1-2")) == 0
    assert paigow.compare(h("2-4 2-3"), h("1-4 1-2")) == 0
    # 1-2 counted 6 ranks fifteenth (like 2-4), but its partner is then always the top tile.
    r = paigow.hand_rank(h("1-2 5-5"))
    assert (r.value, r.counted_as, r.top_rank) == (6, 6, 5)
    r = paigow.hand_rank(h("1-2 1-4"))
    assert (r.value, r.counted_as, r.top_rank) == (8, 3, 16)


def test_b5_same_value_highest_ranking_tile_wins() -> None:
    assert paigow.compare(h("1-3 2-3"), h("5-5 4-5")) == 1  # 9/9: 1-3 (4th) over 5-5 (5th)
    assert paigow.compare(h("6-6 1-5"), h("1-1 1-5")) == 1  # 8/8: 6-6 over 1-1
    assert paigow.compare(h("4-5 1-3"), h("5-6 1-1")) == -1  # 3/3: 1-3 (4th) under 1-1 (2nd)
    assert paigow.compare(h("1-6 2-3"), h("1-5 3-3")) == -1  # 2/2: 1-6 (10th) under 3-3 (6th)


def test_b7_copy_hand() -> None:
    # Same value, highest-ranking tiles of identical rank: copy, whatever the other tile.
    assert paigow.compare(h("5-5 3-6"), h("5-5 4-5")) == 0
    assert paigow.compare(h("3-6 1-4"), h("4-5 2-3")) == 0  # 4 / 4, top tiles both 12th
    assert paigow.compare(h("6-6 5-6"), h("6-6 5-6")) == 0


def test_higher_value_beats_better_tiles() -> None:
    assert paigow.compare(h("1-4 2-2"), h("6-6 5-6")) == 1  # 9 beats 3


# ---------------------------------------------------------------- the 221 hands
def test_count_of_distinct_two_tile_hands_is_221() -> None:
    # A two-tile hand by pip pattern is either two different kinds -- C(21, 2) = 210 -- or two
    # tiles of one kind, possible only for the 11 kinds the set holds twice: 210 + 11 = 221.
    assert comb(21, 2) + 11 == 221
    assert len(HANDS) == 221 == len(set(HANDS))
    # The same count by brute force over the C(32, 2) = 496 ways to take two of the 32 tiles.
    pairs = list(combinations(paigow.full_set(), 2))
    assert len(pairs) == comb(32, 2) == 496
    assert len({tuple(sorted((a.index, b.index))) for a, b in pairs}) == 221


def _reference_compare(x: Sequence[Tile], y: Sequence[Tile]) -> int:
    """An independent, literal reading of (b)(1)-(7), from the tables in this test file."""
    pairs = {}
    for rank, text in B1_TABLE:
        a, b = text.split()
        pairs[tuple(sorted((a, b)))] = rank
    ranks = {t: r for r, t, _c in B6_TABLE}

    def pr(hand: Sequence[Tile]) -> int | None:
        return pairs.get(tuple(sorted(str(t) for t in hand)))  # type: ignore[arg-type]

    def value_and_top(hand: Sequence[Tile]) -> tuple[int, int]:
        options = [[(t.spots, ranks[str(t)])] for t in hand]
        for i, t in enumerate(hand):
            if str(t) == "1-2":
                options[i].append((6, 15))
            if str(t) == "2-4":
                options[i].append((3, 17))
        best = None
        for s0, r0 in options[0]:
            for s1, r1 in options[1]:
                cand = ((s0 + s1) % 10, -min(r0, r1))
                best = cand if best is None or cand > best else best
        assert best is not None
        return best

    px, py = pr(x), pr(y)
    if px is not None or py is not None:
        if px is None:
            return -1
        if py is None:
            return 1
        return (px < py) - (px > py)
    vx, vy = value_and_top(x), value_and_top(y)
    return (vx > vy) - (vx < vy)


def test_compare_matches_literal_reading_on_all_221_squared() -> None:
    for x in HANDS:
        for y in HANDS:
            assert paigow.compare(x, y) == _reference_compare(x, y), (x, y)


def test_compare_antisymmetric_and_transitive_exhaustively() -> None:
    n = len(HANDS)
    c = [[paigow.compare(x, y) for y in HANDS] for x in HANDS]
    ge = [0] * n  # bit j set: HANDS[i] ranks at least as high as HANDS[j]
    gt = [0] * n
    for i in range(n):
        assert c[i][i] == 0
        for j in range(n):
            assert c[i][j] == -c[j][i]  # antisymmetric
            if c[i][j] >= 0:
                ge[i] |= 1 << j
            if c[i][j] > 0:
                gt[i] |= 1 << j
    for i in range(n):
        for j in range(n):
            if c[i][j] >= 0:  # i >= j  =>  everything j beats/ties, i beats/ties
                assert ge[j] & ~ge[i] == 0, (HANDS[i], HANDS[j])
                assert gt[j] & ~gt[i] == 0, (HANDS[i], HANDS[j])


hands_st = st.sampled_from(HANDS)


@given(hands_st, hands_st)
def test_compare_antisymmetric_property(x: tuple[Tile, Tile], y: tuple[Tile, Tile]) -> None:
    assert paigow.compare(x, y) == -paigow.compare(y, x)
    assert paigow.compare(x, y) == paigow.compare(y[::-1], x[::-1]) * -1


@given(hands_st, hands_st, hands_st)
def test_compare_transitive_property(
    x: tuple[Tile, Tile], y: tuple[Tile, Tile], z: tuple[Tile, Tile]
) -> None:
    cxy, cyz, cxz = paigow.compare(x, y), paigow.compare(y, z), paigow.compare(x, z)
    if cxy >= 0 and cyz >= 0:
        assert cxz >= 0
    if cxy > 0 and cyz >= 0 or cxy >= 0 and cyz > 0:
        assert cxz > 0
    if cxy == 0 and cyz == 0:
        assert cxz == 0


def test_accepts_text_and_checks_the_hand() -> None:
    assert paigow.compare(("6-6", "6-6"), ("1-1", "1-1")) == 1
    with pytest.raises(HandError, match="1-2 2 times"):
        paigow.compare(("1-2", "1-2"), ("1-1", "1-1"))
    with pytest.raises(HandError, match="has 2 tiles, got 3"):
        paigow.hand_rank(("1-1", "1-1", "6-6"))
    with pytest.raises(TileError, match="7-1"):
        paigow.hand_value(("7-1", "1-1"))


def test_describe() -> None:
    assert paigow.hand_rank(h("1-1 4-4")).describe() == "gong of 1-1 (day) and an 8"
    assert "counted as 6" in paigow.hand_rank(h("1-2 6-6")).describe()
