"""Independent re-implementation of 9 NYCRR 5324.50(b) and (f)(4), written from the printed text
by a reviewer, compared with the engine exhaustively: all 221 x 221 two-tile hands and all 8,130
four-tile pip patterns.

It shares nothing with ranking.py / houseway.py but the public calls it checks: the (b)(1) and
(b)(6) tables are typed again from the regulation, and (b)(4) is done by listing every way of
counting a lone 1-2 or 2-4 (3 or 6, with its rank 17 or 15) and taking the best for the holder.
"""

from __future__ import annotations

from itertools import combinations

from controller.games import paigow

# (b)(6), "Ranking / Tile": first the highest.
_B6 = (
    "6-6 1, 1-1 2, 4-4 3, 1-3 4, 5-5 5, 3-3 6, 2-2 7, 5-6 8, 4-6 9, 1-6 10, 1-5 11, 3-6 12, "
    "4-5 12, 2-6 13, 3-5 13, 2-5 14, 3-4 14, 2-4 15, 1-4 16, 2-3 16, 1-2 17"
)
RANK = {t: int(r) for t, r in (x.split() for x in _B6.split(", "))}
# (b)(6) third column: 2 of each of the first eleven (the matched pairs), else 1.
COPIES = {t: 2 if r <= 11 else 1 for t, r in RANK.items()}
# (b)(1), rows in order; a row may list several pairings (wongs, gongs).
_B1 = (
    "2-4+1-2 | 6-6+6-6 | 1-1+1-1 | 4-4+4-4 | 1-3+1-3 | 5-5+5-5 | 3-3+3-3 | 2-2+2-2 | 5-6+5-6 | "
    "4-6+4-6 | 1-6+1-6 | 1-5+1-5 | 3-6+4-5 | 3-5+2-6 | 3-4+2-5 | 1-4+2-3 | 6-6+4-5 6-6+3-6 | "
    "1-1+4-5 1-1+3-6 | 6-6+2-6 6-6+3-5 6-6+4-4 | 1-1+2-6 1-1+3-5 1-1+4-4"
)
PAIR = {
    tuple(sorted(combo.split("+"))): n
    for n, row in enumerate(_B1.split(" | "), 1)
    for combo in row.split()
}


def _spots(t: str) -> int:
    a, b = t.split("-")
    return int(a) + int(b)


def _counts(t: str) -> list[tuple[int, int]]:
    """(count, individual rank) choices of a tile: (b)(3), and (b)(4) for 1-2 and 2-4."""
    if t == "1-2":
        return [(3, 17), (6, 15)]
    if t == "2-4":
        return [(6, 15), (3, 17)]
    return [(_spots(t), RANK[t])]


def _value_top(h: tuple[str, str]) -> tuple[int, int]:
    """Best (value, top rank) the holder can claim: higher value, then a higher top tile."""
    opts = [((ca + cb) % 10, min(ra, rb)) for ca, ra in _counts(h[0]) for cb, rb in _counts(h[1])]
    return max(opts, key=lambda o: (o[0], -o[1]))


def _cmp(x: tuple[str, str], y: tuple[str, str]) -> int:
    px, py = PAIR.get(tuple(sorted(x))), PAIR.get(tuple(sorted(y)))
    if px is not None or py is not None:  # (b)(1); (b)(2) same rank: tie
        if px is None:
            return -1
        if py is None:
            return 1
        return (px < py) - (px > py)
    (vx, tx), (vy, ty) = _value_top(x), _value_top(y)
    if vx != vy:  # (b)(3)
        return 1 if vx > vy else -1
    return (tx < ty) - (tx > ty)  # (b)(5); (b)(7) copy: 0


KINDS = list(RANK)
HANDS = [(a, b) for i, a in enumerate(KINDS) for b in KINDS[i:] if a != b or COPIES[a] == 2]


def test_independent_ranking_agrees_on_all_221_squared() -> None:
    assert len(HANDS) == 221
    engine = {h: paigow.rank_key(h) for h in HANDS}
    for x in HANDS:
        for y in HANDS:
            mine = _cmp(x, y)
            theirs = (engine[x] > engine[y]) - (engine[x] < engine[y])
            assert mine == theirs, (x, y, mine, theirs)
        if PAIR.get(tuple(sorted(x))) is None:
            assert paigow.hand_value(x) == _value_top(x)[0], x


def _four_tile_patterns() -> list[tuple[str, ...]]:
    pool = [t for t in KINDS for _ in range(COPIES[t])]
    return sorted(set(combinations(pool, 4)))


def test_independent_house_way_rules_on_every_pattern() -> None:
    """(f)(4): "(i) If the dealer has the supreme pair, such tiles shall be played as such; (ii)
    the dealer shall always play a pair, wong or gong; (iii) the dealer shall play any two tiles
    together that have a value equal to 9, 8 or 7; and (iv) the dealer shall play the
    highest-ranking tile with the lowest-ranking tile." Each rule is applied only where the
    earlier ones do not (13:69F-10.7(d)2-4 say so)."""
    patterns = _four_tile_patterns()
    assert len(patterns) == 8130

    def is_pair(h: tuple[str, str]) -> bool:
        return tuple(sorted(h)) in PAIR

    def is_987(h: tuple[str, str]) -> bool:
        return not is_pair(h) and _value_top(h)[0] in (7, 8, 9)

    for four in patterns:
        a, b, c, d = four
        options = [((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))]
        high, low = paigow.house_way(list(four))
        hi, lo = (str(high[0]), str(high[1])), (str(low[0]), str(low[1]))
        assert sorted(hi + lo) == sorted(four)
        assert _cmp(hi, lo) >= 0, four  # the high hand is not below the low
        chosen = (hi, lo)
        if "1-2" in four and "2-4" in four:
            assert any(PAIR.get(tuple(sorted(h))) == 1 for h in chosen), four
        elif any(is_pair(h) for s in options for h in s):
            assert any(is_pair(h) for h in chosen), four
        elif any(is_987(h) for s in options for h in s):
            assert any(is_987(h) for h in chosen), four
        else:
            by_rank = sorted(four, key=lambda t: RANK[t])
            assert any(set(h) == {by_rank[0], by_rank[-1]} for h in chosen), four
