"""Win, push or lose: 9 NYCRR 5324.50(f)(7)-(9); N.J.A.C. 13:69F-10.7(h)-(j)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.games import paigow
from controller.games.paigow import HandError, Tile

T = paigow.tile


def h(text: str) -> tuple[Tile, Tile]:
    a, b = text.split()
    return (T(a), T(b))


def test_f9_win_both_hands_higher() -> None:
    assert paigow.outcome(h("6-6 6-6"), h("4-5 5-5"), h("1-1 1-1"), h("3-4 2-2")) == "win"


def test_f7_lose_both_lower_or_identical() -> None:
    assert paigow.outcome(h("1-1 1-1"), h("3-4 2-2"), h("6-6 6-6"), h("4-5 5-5")) == "lose"
    # identical rank on both hands (copies / identical pair ranks) goes to the dealer
    assert paigow.outcome(h("6-6 4-5"), h("5-5 1-4"), h("6-6 3-6"), h("5-5 2-3")) == "lose"


def test_f8_push_one_higher_one_not() -> None:
    # (f)(8)(i): high higher, low lower
    assert paigow.outcome(h("6-6 6-6"), h("3-4 2-2"), h("1-1 1-1"), h("4-5 5-5")) == "push"
    # (f)(8)(i): high higher, low a copy
    assert paigow.outcome(h("6-6 6-6"), h("5-5 3-6"), h("1-1 1-1"), h("5-5 4-5")) == "push"
    # (f)(8)(ii): high a copy (identical pair rank), low higher
    assert paigow.outcome(h("6-6 4-5"), h("5-5 1-3"), h("6-6 3-6"), h("3-4 2-2")) == "push"
    # (f)(8)(ii): high lower, low higher
    assert paigow.outcome(h("1-1 1-1"), h("4-5 5-5"), h("6-6 6-6"), h("3-4 2-2")) == "push"


def test_f8i_low_hand_of_value_zero_never_wins() -> None:
    # Player low 5-5 + 4-6 (20: value 0, top 5-5) outranks dealer low 2-2 + 1-5 (10: value 0,
    # top 2-2) but has a value of zero: push, not win, although the high hand wins.
    pl, dl = h("5-5 4-6"), h("2-2 1-5")
    assert paigow.hand_value(pl) == 0 and paigow.compare(pl, dl) == 1
    assert paigow.has_value_zero(pl)
    assert paigow.outcome(h("6-6 6-6"), pl, h("1-1 1-1"), dl) == "push"
    # and with the high hand lower it is a loss, not a push (f)(7)
    assert paigow.outcome(h("1-1 1-1"), pl, h("6-6 6-6"), dl) == "lose"


def test_supreme_tile_recount_is_not_zero() -> None:
    # 1-2 + 3-4 is 3 + 7 = 10, but counted 6 + 7 = 13: value 3, not zero ((b)(4)).
    assert not paigow.has_value_zero(h("1-2 3-4"))
    assert paigow.hand_value(h("1-2 3-4")) == 3


@pytest.mark.parametrize(
    ("low", "non_pairs", "gongs", "all_"),
    [
        ("5-5 5-5", False, False, True),  # pair of 5-5: 20 spots
        ("4-6 4-6", False, False, True),  # pair of 4-6: 20 spots
        ("1-4 2-3", False, False, True),  # mixed 5s: 10 spots
        ("6-6 4-4", False, True, True),  # gong: 20 spots
        ("1-1 2-6", False, True, True),  # gong: 10 spots
        ("6-6 4-5", False, False, False),  # wong: 21 spots
        ("3-3 3-3", False, False, False),  # pair of 3-3: 12 spots
        ("4-6 1-3", False, False, False),  # not a pair, value 4
        ("4-6 5-5", True, True, True),  # not a pair, value 0
    ],
)
def test_zero_value_setting(low: str, non_pairs: bool, gongs: bool, all_: bool) -> None:
    assert paigow.DEFAULT_ZERO_VALUE == "non-pairs"
    assert paigow.has_value_zero(h(low)) is non_pairs
    assert paigow.has_value_zero(h(low), "gongs") is gongs
    assert paigow.has_value_zero(h(low), "all") is all_


def test_zero_value_setting_changes_the_outcome() -> None:
    ph, pl, dh, dl = h("6-6 6-6"), h("5-5 5-5"), h("1-1 1-1"), h("3-4 2-2")
    assert paigow.outcome(ph, pl, dh, dl) == "win"
    assert paigow.outcome(ph, pl, dh, dl, zero_value="gongs") == "win"
    assert paigow.outcome(ph, pl, dh, dl, zero_value="all") == "push"
    with pytest.raises(ValueError, match="zero_value must be one of"):
        paigow.outcome(ph, pl, dh, dl, zero_value="pairs")  # type: ignore[arg-type]


def test_bad_input() -> None:
    with pytest.raises(HandError, match="1-2 2 times"):  # one 1-2 in a set
        paigow.outcome(h("1-2 6-6"), h("3-4 2-2"), h("1-2 1-1"), h("4-5 5-5"))
    with pytest.raises(HandError, match="6-6 3 times"):
        paigow.outcome(h("6-6 6-6"), h("3-4 2-2"), h("6-6 1-1"), h("4-5 5-5"))
    with pytest.raises(HandError, match="player's high hand has 2 tiles, got 3"):
        paigow.outcome(("6-6", "6-6", "1-1"), h("3-4 2-2"), h("1-1 1-1"), h("4-5 5-5"))
    with pytest.raises(HandError, match="player's high hand 2-2 3-4 .* ranks below"):
        paigow.outcome(h("3-4 2-2"), h("6-6 6-6"), h("1-1 1-1"), h("4-5 5-5"))
    with pytest.raises(HandError, match="dealer's high hand"):
        paigow.outcome(h("6-6 6-6"), h("3-4 2-2"), h("4-5 5-5"), h("1-1 1-1"))
    with pytest.raises(ValueError, match="7-1"):
        paigow.outcome(h("6-6 6-6"), ("7-1", "2-2"), h("1-1 1-1"), h("4-5 5-5"))


@given(st.permutations(paigow.full_set()), st.sampled_from(paigow.ZERO_VALUE_SETTINGS))
def test_outcome_matches_f7_f9_on_dealt_hands(
    shuffled: list[Tile], zero_value: paigow.ZeroValue
) -> None:
    ph, pl = paigow.house_way(shuffled[:4])
    dh, dl = paigow.house_way(shuffled[4:8])
    res = paigow.outcome(ph, pl, dh, dl, zero_value=zero_value)
    high_wins = paigow.compare(ph, dh) > 0
    low_wins = paigow.compare(pl, dl) > 0 and not paigow.has_value_zero(pl, zero_value)
    assert res == {(True, True): "win", (False, False): "lose"}.get((high_wins, low_wins), "push")


def test_f7_and_f8ii_disagree_on_a_zero_low_that_outranks_the_dealers_low() -> None:
    """(f)(7): "A wager made by a player shall lose if the high hand of the player is identical in
    rank or lower in rank than the high hand of the dealer, and the low hand of the player is
    identical in rank or lower in rank than the low hand of the dealer or has a value of zero."
    (f)(8)(ii): a push if "the high hand of the player is identical in rank to the high hand of
    the dealer or lower in rank than the high hand of the dealer, but the low hand of the player
    is higher in rank than the low hand of the dealer."

    Player low 5-5 + 4-6 (value 0, top 5-5) outranks dealer low 2-2 + 1-5 (value 0, top 2-2);
    player high lower. Word for word both paragraphs apply; the setting names the choice."""
    ph, pl, dh, dl = h("1-1 1-1"), h("5-5 4-6"), h("6-6 6-6"), h("2-2 1-5")
    assert paigow.compare(ph, dh) == -1 and paigow.compare(pl, dl) == 1
    assert paigow.has_value_zero(pl)
    assert paigow.DEFAULT_ZERO_LOW_CONFLICT == "f7-lose"
    assert paigow.outcome(ph, pl, dh, dl) == "lose"
    assert paigow.outcome(ph, pl, dh, dl, zero_low_conflict="f7-lose") == "lose"
    assert paigow.outcome(ph, pl, dh, dl, zero_low_conflict="f8ii-push") == "push"
    # (f)(8)(i) names the value of zero itself: with the high hand higher it is a push either way
    for conflict in paigow.ZERO_LOW_CONFLICT_SETTINGS:
        assert paigow.outcome(dh, pl, ph, dl, zero_low_conflict=conflict) == "push"
    with pytest.raises(ValueError, match="zero_low_conflict must be one of"):
        paigow.outcome(ph, pl, dh, dl, zero_low_conflict="push")  # type: ignore[arg-type]


def _literal_f7_f9(hi: int, lo: int, lo_zero: bool) -> set[str]:
    """Every outcome whose words in (f)(7), (f)(8)(i)-(ii), (f)(9) fit; hi/lo: sign of compare."""
    fits = set()
    if hi <= 0 and (lo <= 0 or lo_zero):
        fits.add("lose")  # (f)(7)
    if hi > 0 and (lo <= 0 or lo_zero):
        fits.add("push")  # (f)(8)(i)
    if hi <= 0 and lo > 0:
        fits.add("push")  # (f)(8)(ii)
    if hi > 0 and lo > 0:
        fits.add("win")  # (f)(9), which does not mention the value of zero
    return fits


@given(
    st.permutations(paigow.full_set()),
    st.sampled_from(paigow.ZERO_VALUE_SETTINGS),
    st.sampled_from(paigow.ZERO_LOW_CONFLICT_SETTINGS),
)
def test_outcome_is_one_the_words_allow(
    shuffled: list[Tile], zero_value: paigow.ZeroValue, conflict: paigow.ZeroLowConflict
) -> None:
    """Independent check: the result is always one the words of (f)(7)-(9) allow, and where they
    allow two, the (f)(8)(i) value-of-zero rule and the named setting decide."""
    ph, pl = paigow.house_way(shuffled[:4])
    dh, dl = paigow.house_way(shuffled[4:8])
    hi, lo = paigow.compare(ph, dh), paigow.compare(pl, dl)
    zero = paigow.has_value_zero(pl, zero_value)
    fits = _literal_f7_f9(hi, lo, zero)
    res = paigow.outcome(ph, pl, dh, dl, zero_value=zero_value, zero_low_conflict=conflict)
    assert res in fits
    if fits == {"win", "push"}:  # high higher, low higher but of value zero: (f)(8)(i)
        assert res == "push"
    if fits == {"lose", "push"}:
        assert res == ("lose" if conflict == "f7-lose" else "push")
