"""Exposed tiles: (d)(5) while stacking, (i)(1) a player's tile, (i)(2) the dealer's, bank's,
dead hand's or an unwagered position's; surrender (f)(5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import make_rig, play_round, settings


def test_tile_exposed_while_stacking_forces_reshuffle(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    rig.act("open")
    rig.act("expose stacking")
    assert rig.state == "washing"
    rec = rig.table.model.record
    assert rec.reshuffles == 1 and rec.reshuffle_pending
    rig.press("shuffled")
    rig.act("expose stacking")  # in the stacks before the draw: back to the wash
    assert rig.state == "washing" and rig.table.model.record.reshuffles == 2
    rig.press("shuffled")
    assert rig.state == "betting" and not rig.table.model.record.reshuffle_pending
    assert rig.table.model.round_id == 1  # same round: nothing was dealt


def test_player_may_void_an_exposed_hand(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    for name in ("shuffled", "no_more_bets", "draw"):
        rig.press(name)
    exc = rig.try_act("void seat 2")
    assert exc is not None and "no tile of the hand of area 2 was exposed" in exc.reason
    rig.act("expose player 2")
    rig.press("dealt")
    rig.act("void seat 2")
    assert rig.state == "setting_hands"
    assert rig.table.model.record.voided_seats == [2]
    assert rig.try_act("void seat 2") is not None  # already void
    rig.press("hands_set")
    # Once hands are set the option is gone (decided "without looking at the unexposed tiles").
    assert rig.try_act("expose player 3") is not None
    rig.press("settled")
    closing = rig.rows("paigow.settled")[-1]
    assert closing.data["record"]["voided_seats"] == [2]
    assert closing.data["record"]["exposed_seats"] == [2]


@pytest.mark.parametrize("whose", ["dealer", "dead", "unwagered"])
@pytest.mark.parametrize("when", ["dealing", "setting_hands"])
def test_exposed_house_tile_voids_every_hand(tmp_path: Path, whose: str, when: str) -> None:
    rig = make_rig(tmp_path)
    for name in ("shuffled", "no_more_bets", "draw"):
        rig.press(name)
    if when == "setting_hands":
        rig.press("dealt")
    rig.act(f"expose {whose}", "supervisor@test")  # a void after the draw: a supervisor's
    assert rig.state == "washing"
    voided = rig.rows("paigow.voided")[-1]
    assert voided.round == 1
    assert "(i)(2)" in voided.data["record"]["closing_reason"]
    assert voided.data["record"]["number"] is not None
    assert rig.table.model.round_id == 2
    assert rig.display.lit() == frozenset()


def test_bank_tile_exposure_needs_a_player_bank(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    for name in ("shuffled", "no_more_bets", "draw"):
        rig.press(name)
    exc = rig.try_act("expose bank")
    assert exc is not None and "no player banks" in exc.reason
    play = make_rig(tmp_path / "b")
    play_round(play)
    play.press("shuffled")
    play.act("bank seat 1")
    for name in ("no_more_bets", "draw"):
        play.press(name)
    play.act("expose bank", "supervisor@test")
    assert play.state == "washing" and play.rows("paigow.voided")


def test_dealer_tiles_may_be_turned_once_hands_are_set(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    for name in ("shuffled", "no_more_bets", "draw", "dealt", "hands_set"):
        rig.press(name)
    refused = rig.try_act("expose dealer", "supervisor@test")  # (f)(3): turned over on purpose
    assert refused is not None and refused.code != "AUTH"
    rig.act("expose dead", "supervisor@test")
    assert rig.state == "washing"


def test_surrender(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    for name in ("shuffled", "no_more_bets", "draw", "dealt"):
        rig.press(name)
    assert rig.try_act("surrender seat 4") is not None  # before the dealer's hands are set
    rig.press("hands_set")
    rig.act("surrender seat 4")
    assert rig.try_act("surrender seat 4") is not None
    assert rig.table.model.record.surrendered_seats == [4]
    off = make_rig(tmp_path / "off", settings(surrender_offered=False))
    for name in ("shuffled", "no_more_bets", "draw", "dealt", "hands_set"):
        off.press(name)
    exc = off.try_act("surrender seat 4")
    assert exc is not None and "not offered" in exc.reason


def test_void_button_voids_the_round_before_the_draw(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    for name in ("shuffled", "no_more_bets"):
        rig.press(name)
    rig.press("void")
    assert rig.state == "washing"
    assert (
        rig.rows("paigow.voided")[-1].data["record"]["closing_reason"]
        == "voided by the dealer (button)"
    )
    assert not rig.rows("paigow.void_after_draw")


def test_banking_players_tile_is_the_banks(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    play_round(rig)
    rig.press("shuffled")
    rig.act("bank seat 3")
    for name in ("no_more_bets", "draw"):
        rig.press(name)
    exc = rig.try_act("expose player 3")
    assert exc is not None and "expose bank" in exc.reason
    rig.act("expose player 2")
    assert rig.table.model.record.exposed_seats == [2]


def test_an_exposed_hand_names_the_player_who_wagered_on_its_area(tmp_path: Path) -> None:
    """5324.50(h): a player may wager on two adjacent areas; (i)(1): "the player" whose hand
    had a tile exposed decides. Seat 2 wagers on areas 2 and 3: area 3's hand is seat 2's."""
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    rig.act("wager 2 2500")
    rig.act("wager 2 2500 3")
    for name in ("no_more_bets", "draw"):
        rig.press(name)
    (line,) = [x for x in rig.act("expose player 3") if "exposed" in x]
    assert line.startswith("a tile of the hand of area 3 was exposed: seat 2 may void that hand")
    rig.press("dealt")
    (line,) = [x for x in rig.act("void seat 3") if "void" in x]
    assert line == "the hand of area 3 is void; seat 2's wager on it is returned (5324.50(i)(1))"


def test_a_bare_sim_or_shift_says_its_usage(tmp_path: Path) -> None:
    """`help` lists `sim button NAME` and `shift start`: the word alone is a malformed line of a
    known action (SYNTAX, with its usage), not an unknown one."""
    rig = make_rig(tmp_path)
    for line, usage in (("sim", "usage: sim button NAME"), ("shift", "usage: shift start")):
        exc = rig.try_act(line)
        assert exc is not None and (exc.code, exc.reason) == ("SYNTAX", usage)


def test_an_exposed_tile_of_a_position_with_no_wager_is_not_a_players(tmp_path: Path) -> None:
    """5324.50(i)(1) is a player's hand; (i)(2): a tile of "any position where there is no
    wager" voids every hand. With wagers on areas 1 and 3, area 4's tile is (i)(2)'s (`expose
    player 4` is refused naming `expose unwagered 4`), and area 3's is a player's (`expose
    unwagered 3` is refused naming `expose player 3`)."""
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    rig.act("wager 1 2500")
    rig.act("wager 3 5000")
    for name in ("no_more_bets", "draw"):
        rig.press(name)
    exc = rig.try_act("expose player 4")
    assert exc is not None and "`expose unwagered 4`" in exc.reason and "(i)(2)" in exc.reason
    assert rig.table.model.record.exposed_seats == []
    exc = rig.try_act("expose unwagered 3", "supervisor@test")
    assert exc is not None and "`expose player 3`" in exc.reason and "(i)(1)" in exc.reason
    rig.act("expose unwagered 4", "supervisor@test")  # every hand void, the tiles re-washed
    closing = rig.rows("paigow.voided")[-1]
    assert "unwagered hand of area 4" in closing.data["record"]["closing_reason"]
