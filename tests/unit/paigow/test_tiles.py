"""The 32-tile set: 9 NYCRR 5324.50(a)(5), (b)(6), (d)(1)(i)."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections import Counter

import pytest

from controller.games import paigow
from controller.games.paigow import HandError, PaigowError, SetError, Tile, TileError


def test_set_has_32_tiles_in_16_pairs() -> None:
    # 5324.50(a)(5): 32 tiles; (b)(6): 21 kinds, 11 of them twice, 10 once; (d)(2): 16 pairs.
    s = paigow.full_set()
    assert len(s) == paigow.SET_SIZE == 32
    counts = Counter(s)
    assert len(counts) == len(paigow.TILE_KINDS) == 21
    assert sorted(counts.values()).count(2) == 11
    assert sorted(counts.values()).count(1) == 10
    # Every pip pattern of a double-six domino set without blanks is a kind: 6 doubles + 15 mixed.
    assert {(t.low, t.high) for t in counts} == {(a, b) for a in range(1, 7) for b in range(a, 7)}
    assert sum(t.spots for t in s) == 2 * sum(t.spots for t in counts if t.copies == 2) + sum(
        t.spots for t in counts if t.copies == 1
    )


@pytest.mark.parametrize("kind", paigow.TILE_KINDS, ids=str)
def test_every_kind_prints_and_parses_lower_pip_first(kind: Tile) -> None:
    text = str(kind)
    assert text == f"{kind.low}-{kind.high}" and kind.low <= kind.high
    assert paigow.tile(text) == kind
    assert paigow.tile(f"  {text} ") == kind
    assert paigow.tile(kind) is kind
    assert eval(repr(kind), {"tile": paigow.tile}) == kind


def test_example_tiles() -> None:
    assert str(paigow.tile("4-5")) == "4-5"
    assert str(paigow.tile("1-2")) == "1-2"
    assert paigow.tile("1-2").is_supreme and paigow.tile("2-4").is_supreme
    assert not paigow.tile("1-4").is_supreme


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("7-1", "7"),  # no 7-pip end
        ("", "empty"),
        ("4-5-6", "two ends"),
        ("5-4", "lower pip first"),
        ("0-0", "0"),  # no blanks in a pai gow set
        ("0-3", "0"),
        ("6-7", "7"),
        ("a-b", "pip counts"),
        ("45", "two ends"),
        ("4 5", "two ends"),
        ("-4", "pip counts"),
    ],
)
def test_bad_tile_text_names_the_problem(text: str, needle: str) -> None:
    with pytest.raises(ValueError) as exc:
        paigow.tile(text)
    assert isinstance(exc.value, TileError) and isinstance(exc.value, PaigowError)
    assert needle in str(exc.value)
    if text:
        assert repr(text.strip()) in str(exc.value) or text.strip() in str(exc.value)


def test_bad_tile_type() -> None:
    with pytest.raises(TileError, match="text"):
        paigow.tile(45)  # type: ignore[arg-type]
    with pytest.raises(TileError):
        Tile(3, 9)
    with pytest.raises(TileError, match="lower pip first"):
        Tile(5, 4)


def test_tile_is_immutable_hashable_value() -> None:
    a, b = paigow.tile("6-6"), Tile(6, 6)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.low = 1  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(a)) is a
    assert copy.deepcopy(a) == a
    assert paigow.tile("6-6") is paigow.tile("6-6")


def test_identity_of_identical_tiles_is_by_count() -> None:
    # Two 6-6 in one hand is legal (the set has two); two 1-2 is not (the set has one).
    assert paigow.check_tiles(["6-6", "6-6"], 2) == (paigow.tile("6-6"),) * 2
    with pytest.raises(HandError, match="1-2 2 times.*only one 1-2"):
        paigow.check_tiles(["1-2", "1-2"], 2)
    with pytest.raises(HandError, match="6-6 3 times.*only two 6-6"):
        paigow.check_tiles(["6-6", "6-6", "6-6", "1-1"], 4)


def test_hand_size_errors_name_the_count() -> None:
    with pytest.raises(HandError, match="has 4 tiles, got 5"):
        paigow.check_tiles(["6-6", "1-1", "4-4", "1-3", "5-5"], 4)
    with pytest.raises(HandError, match="has 2 tiles, got 1"):
        paigow.check_tiles(["6-6"], 2)
    with pytest.raises(HandError, match="single item"):
        paigow.check_tiles("6-6", 2)
    with pytest.raises(TileError, match="7-1"):
        paigow.check_tiles(["6-6", "7-1"], 2)


def test_complete_set_verifies() -> None:
    report = paigow.verify_set(paigow.full_set())
    assert report.ok and bool(report)
    assert report.missing == report.duplicated == report.extra == report.incomplete_pairs == ()
    report.raise_if_bad()
    # Order and text form do not matter.
    assert paigow.verify_set(reversed([str(t) for t in paigow.full_set()])).ok


def test_missing_tile_is_named() -> None:
    tiles = list(paigow.full_set())
    tiles.remove(paigow.tile("1-2"))
    r = paigow.verify_set(tiles)
    assert not r.ok and r.count == 31
    assert r.missing == (paigow.tile("1-2"),)
    assert r.duplicated == () and r.extra == ()
    assert r.incomplete_pairs == ("supreme pair 1-2 + 2-4",)
    assert "missing: 1-2" in str(r)
    with pytest.raises(SetError, match=r"5324\.50\(d\)\(1\)\(i\).*missing: 1-2"):
        r.raise_if_bad()


def test_missing_one_of_a_doubled_kind() -> None:
    tiles = list(paigow.full_set())
    tiles.remove(paigow.tile("5-5"))
    r = paigow.verify_set(tiles)
    assert r.missing == (paigow.tile("5-5"),)
    assert r.incomplete_pairs == ("matched pair 5-5",)


def test_duplicated_tile_is_named() -> None:
    # A 1-2 in place of the 2-4: 32 tiles, but 1-2 twice and no 2-4.
    tiles = [t for t in paigow.full_set() if str(t) != "2-4"] + [paigow.tile("1-2")]
    r = paigow.verify_set(tiles)
    assert r.count == 32 and not r.ok
    assert r.duplicated == (paigow.tile("1-2"),)
    assert r.missing == (paigow.tile("2-4"),)
    assert "duplicated: 1-2" in str(r) and "missing: 2-4" in str(r)


def test_third_copy_of_a_doubled_kind_is_duplicated() -> None:
    r = paigow.verify_set([*paigow.full_set(), paigow.tile("6-6")])
    assert r.count == 33 and r.duplicated == (paigow.tile("6-6"),) and r.missing == ()


def test_extra_item_that_is_no_pai_gow_tile() -> None:
    r = paigow.verify_set([*paigow.full_set(), "0-0", "7-1"])
    assert r.extra == ("0-0", "7-1") and r.missing == () and r.duplicated == ()
    assert "extra (not pai gow tiles): '0-0' '7-1'" in str(r)


def test_several_faults_at_once_and_empty_set() -> None:
    r = paigow.verify_set([])
    assert r.count == 0 and len(r.missing) == 32 and len(r.incomplete_pairs) == 16
    with pytest.raises(SetError, match="single item"):
        paigow.verify_set("6-6")
