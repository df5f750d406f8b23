"""Splits and the dealer's house way: 9 NYCRR 5324.50(f)(4); N.J.A.C. 13:69F-10.7(d)-(e)."""

from __future__ import annotations

import tomllib
from collections import Counter
from itertools import combinations
from math import comb
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.games import paigow
from controller.games.paigow import HandError, PolicyError, Tile, TileError

T = paigow.tile


def ts(text: str) -> list[Tile]:
    return [T(x) for x in text.split()]


def hs(hand: tuple[Tile, Tile]) -> str:
    return " ".join(map(str, hand))


def _patterns() -> list[tuple[Tile, ...]]:
    seen: dict[tuple[int, ...], tuple[Tile, ...]] = {}
    for four in combinations(paigow.full_set(), 4):
        seen.setdefault(tuple(sorted(t.index for t in four)), four)
    return list(seen.values())


PATTERNS = _patterns()


def test_count_of_four_tile_hands() -> None:
    # C(32, 4) = 35,960 selections of four of the 32 tiles; by pip pattern they are 8,130: the
    # coefficient of x^4 in (1 + x + x^2)^11 (1 + x)^10 (11 kinds held twice, 10 held once).
    assert comb(32, 4) == 35_960
    poly = [1]
    for factor in [[1, 1, 1]] * 11 + [[1, 1]] * 10:
        out = [0] * (len(poly) + len(factor) - 1)
        for i, a in enumerate(poly):
            for j, b in enumerate(factor):
                out[i + j] += a * b
        poly = out
    assert poly[4] == len(PATTERNS) == 8130


def test_three_splits() -> None:
    four = ts("6-6 1-1 4-5 2-3")
    sp = paigow.splits(four)
    assert len(sp) == 3
    for high, low in sp:
        assert Counter(high + low) == Counter(four)
        assert paigow.compare(high, low) >= 0
    assert len({frozenset((frozenset(a), frozenset(b))) for a, b in sp}) == 3


def _rule_fits(rule: str, hand: tuple[Tile, Tile], four: tuple[Tile, ...]) -> bool:
    r = paigow.hand_rank(hand)
    if rule == "i":
        return r.pair is not None and r.pair.rank == 1
    if rule == "ii":
        return r.is_pair
    if rule == "iii":
        return not r.is_pair and r.value in (9, 8, 7)
    ranks = [paigow.tile_rank(t) for t in four]
    return sorted(paigow.tile_rank(t) for t in hand) == [min(ranks), max(ranks)]


def test_default_house_way_on_every_four_tile_set() -> None:
    """Legal split, high not below low, and the four rules of (f)(4) / 10.7(d) respected."""
    used = Counter()
    for four in PATTERNS:
        high, low = paigow.house_way(four)
        assert Counter(high + low) == Counter(four), four
        assert paigow.compare(high, low) >= 0, four
        assert (high, low) in [
            (tuple(sorted(a, key=lambda t: t.index)), tuple(sorted(b, key=lambda t: t.index)))
            for a, b in paigow.splits(four)
        ] or paigow.compare(high, low) == 0
        # The first rule that some split can satisfy must be satisfied by the chosen split.
        for rule in ("i", "ii", "iii", "iv"):
            possible = any(
                _rule_fits(rule, x, four) or _rule_fits(rule, y, four)
                for x, y in paigow.splits(four)
            )
            if possible:
                assert _rule_fits(rule, high, four) or _rule_fits(rule, low, four), (four, rule)
                if rule == "iv":  # (b)(6) rank ties never make rule (iv) ambiguous
                    fits = [
                        x
                        for x, y in paigow.splits(four)
                        if _rule_fits(rule, x, four) or _rule_fits(rule, y, four)
                    ]
                    assert len(fits) == 1, four
                used[rule] += 1
                break
    assert set(used) == {"i", "ii", "iii", "iv"}  # every rule decides some hands
    assert sum(used.values()) == 8130


@given(st.permutations(paigow.full_set()))
def test_house_way_does_not_depend_on_tile_order(shuffled: list[Tile]) -> None:
    four = shuffled[:4]
    assert paigow.house_way(four) == paigow.house_way(list(reversed(four)))
    high, low = paigow.house_way(four)
    assert Counter(high + low) == Counter(four)
    assert paigow.compare(high, low) >= 0


@pytest.mark.parametrize(
    ("four", "high", "low", "step"),
    [
        # (i) supreme pair played as such, even with a pair of 6-6 beside it
        ("1-2 6-6 2-4 6-6", "2-4 1-2", "6-6 6-6", "step 1"),
        # (ii) pair, wong or gong: two wongs rather than mixed 9s and a 4
        ("6-6 1-1 4-5 3-6", "6-6 3-6", "1-1 4-5", "step 2"),
        # (ii) two pairs: both played
        ("6-6 6-6 4-5 3-6", "6-6 6-6", "3-6 4-5", "step 2"),
        # (ii) one pair possible per split: the highest (teens) rather than a wong and a 7
        ("6-6 6-6 4-5 2-3", "6-6 6-6", "4-5 2-3", "step 2"),
        # (iii) 9/8/7: both hands 7 rather than one 8 (1-4 + 1-2 with 1-2 as 3)
        ("6-6 5-6 1-4 1-2", "6-6 1-4", "5-6 1-2", "step 3"),
        # (iii) 7 and 7 (1-2 counted 6) rather than 8 (5-6 + 2-5) and 6
        ("4-6 2-5 5-6 1-2", "5-6 1-2", "4-6 2-5", "step 3"),
        # (iii) one 9 possible (3-3 + 1-2 counted 3), the 5-6 + 3-4 a 8: 9/8 both qualify
        ("3-3 1-2 5-6 3-4", "3-3 1-2", "5-6 3-4", "step 3"),
        # (iv) highest-ranking (1-6) with lowest-ranking (3-4)
        ("3-4 2-6 1-5 1-6", "1-6 3-4", "1-5 2-6", "step 4"),
    ],
)
def test_default_examples(four: str, high: str, low: str, step: str) -> None:
    d = paigow.set_hand(four.split())
    assert (hs(d.high), hs(d.low)) == (high, low)
    assert d.reason.startswith(step)
    assert paigow.house_way(four.split()) == (d.high, d.low)


def test_bad_input_raises_clear_value_error() -> None:
    with pytest.raises(HandError, match="has 4 tiles, got 5"):
        paigow.house_way(["6-6", "1-1", "4-4", "1-3", "5-5"])
    with pytest.raises(HandError, match="1-2 2 times.*only one 1-2"):
        paigow.house_way(["1-2", "1-2", "4-4", "1-3"])
    with pytest.raises(TileError, match="7-1"):
        paigow.house_way(["7-1", "1-1", "4-4", "1-3"])
    with pytest.raises(HandError, match="has 4 tiles, got 3"):
        paigow.splits(["1-1", "4-4", "1-3"])
    for exc in (HandError, TileError, PolicyError):
        assert issubclass(exc, ValueError)


# ---------------------------------------------------------------- policies
def test_shipped_policy_names() -> None:
    assert paigow.policy_names() == ("regulation",)
    assert paigow.load_policy("default") is paigow.load_policy("regulation")
    assert paigow.load_policy(None or "regulation").source.startswith("9 NYCRR 5324.50(f)(4)")
    with pytest.raises(PolicyError, match="no house-way policy named 'foxwoods'"):
        paigow.load_policy("foxwoods")


def test_policy_round_trips_through_plain_data() -> None:
    pol = paigow.load_policy("regulation")
    again = paigow.load_policy(pol.to_mapping())
    assert again == pol
    for four in PATTERNS[::7]:
        assert paigow.house_way(four, again) == paigow.house_way(four)


CASINO_TOML = """
name = "example-casino"
title = "An example of a casino's own way, loaded from configuration (not a real casino's)"
source = "test fixture"

[[exceptions]]
tiles = ["6-6", "6-6", "4-5", "2-3"]
high = ["6-6", "4-5"]
low = ["6-6", "2-3"]
note = "split teens: wong and 7 rather than teens and 4"

[[steps]]
take = "supreme_pair"

[[steps]]
take = "pair"
kinds = ["supreme", "matched", "wong", "gong"]
prefer = ["qualifying_hands", "best_qualifying", "low"]

[[steps]]
take = "any"
prefer = ["low", "high"]
"""


def test_casino_policy_from_toml_replaces_the_default() -> None:
    pol = paigow.load_policy(tomllib.loads(CASINO_TOML))
    assert pol.name == "example-casino"
    d = paigow.set_hand(ts("6-6 6-6 4-5 2-3"), pol)
    assert (hs(d.high), hs(d.low)) == ("6-6 4-5", "6-6 2-3") and d.reason.startswith("exception")
    # Mixed pairs are not kept by this way: the low hand is maximized instead.
    assert paigow.house_way(ts("3-6 4-5 5-5 1-1"))[0] == (T("3-6"), T("4-5"))
    high, low = paigow.house_way(ts("3-6 4-5 5-5 1-1"), pol)
    assert paigow.compare(high, low) >= 0 and {high, low} != {(T("3-6"), T("4-5"))}
    for four in PATTERNS:
        high, low = paigow.house_way(four, pol)
        assert Counter(high + low) == Counter(four) and paigow.compare(high, low) >= 0


def _bad(change: dict[str, Any]) -> dict[str, Any]:
    m = dict(paigow.REGULATION_POLICY)
    m.update(change)
    return m


@pytest.mark.parametrize(
    ("mapping", "needle"),
    [
        (_bad({"name": ""}), "needs a 'name'"),
        (_bad({"steps": []}), "non-empty list 'steps'"),
        (_bad({"steps": [{"take": "pairs"}]}), "'take' must be one of"),
        (_bad({"steps": [{"take": "pair"}]}), "last step must take"),
        (_bad({"steps": [{"take": "any", "prefer": ["biggest"]}]}), "unknown 'prefer'"),
        (_bad({"steps": [{"take": "value", "values": [10]}, {"take": "any"}]}), "list of 0-9"),
        (_bad({"steps": [{"take": "any", "values": [9]}]}), "only goes with take 'value'"),
        (_bad({"steps": [{"take": "pair", "kinds": ["wongs"]}, {"take": "any"}]}), "'kinds'"),
        (_bad({"colour": "red"}), "unknown keys ['colour']"),
        (
            _bad({"exceptions": [{"tiles": ["6-6", "6-6", "4-5", "7-1"], "high": [], "low": []}]}),
            "7-1",
        ),
        (
            _bad({"exceptions": [{"tiles": ["1-2", "1-2", "4-5", "2-3"], "high": [], "low": []}]}),
            "only one 1-2",
        ),
        (
            _bad(
                {
                    "exceptions": [
                        {
                            "tiles": ["6-6", "6-6", "4-5", "2-3"],
                            "high": ["6-6", "6-6"],
                            "low": ["4-5", "1-4"],
                        }
                    ]
                }
            ),
            "not a split",
        ),
        (
            _bad(
                {
                    "exceptions": [
                        {
                            "tiles": ["6-6", "6-6", "4-5", "2-3"],
                            "high": ["6-6", "6-6"],
                            "low": ["4-5", "2-3"],
                        },
                        {
                            "tiles": ["2-3", "6-6", "4-5", "6-6"],
                            "high": ["6-6", "4-5"],
                            "low": ["6-6", "2-3"],
                        },
                    ]
                }
            ),
            "are both for",
        ),
    ],
)
def test_bad_policy_is_refused_with_the_reason(mapping: dict[str, Any], needle: str) -> None:
    with pytest.raises(PolicyError) as exc:
        paigow.load_policy(mapping)
    assert needle in str(exc.value)


def test_policy_argument_accepts_name_mapping_or_policy() -> None:
    four = ts("6-6 1-1 4-5 3-6")
    pol = paigow.load_policy("regulation")
    assert (
        paigow.house_way(four)
        == paigow.house_way(four, "default")
        == paigow.house_way(four, pol)
        == paigow.house_way(four, dict(paigow.REGULATION_POLICY))
    )
    with pytest.raises(PolicyError, match="name or a mapping"):
        paigow.load_policy(42)  # type: ignore[arg-type]
