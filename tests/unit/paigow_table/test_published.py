"""The pai gow table's published view (the monitor's page): it shows exactly what the 7-segment
display shows -- the number from the draw until the deal is complete, blank after (5324.50(e)(6),
the shaker covered again) -- with the starting position and its seat, the style and the mode."""

from __future__ import annotations

import json
from pathlib import Path

from controller.tables.paigow.definition import physical_position, position_name, seat_of

from .helpers import BLANK, FAULT, digit, make_rig, reopen, settings, stuck_rng


def shown_number(rig) -> int | None:  # type: ignore[no-untyped-def]
    """The digit the real 7-segment driver has lit, read back from the pins (None: blank)."""
    lit = rig.display.lit()
    if lit == BLANK:
        return None
    matches = [n for n in range(1, 9) if digit(n) == lit]
    assert len(matches) == 1, f"display shows no digit: {sorted(lit)}"
    return matches[0]


def test_the_view_follows_the_display_through_a_round(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    for button in ("shuffled", "no_more_bets", "draw", "dealt", "hands_set", "settled"):
        rig.press(button)
        view = rig.table.published()
        json.dumps(view)  # JSON-able as it is
        assert view["state"] == rig.state
        assert view["number"] == shown_number(rig), button
        assert view["showing"] is (view["number"] is not None)
        if button == "draw":
            rec = rig.rows("paigow.drawn")[-1].data["record"]
            position = physical_position(rec["number"], None)  # counted from the dealer
            assert view["number"] == rec["number"] and view["source"] == "rng"
            assert view["start_position"] == position
            assert view["position_name"] == position_name(position)
            assert view["seat"] == seat_of(position)
            assert view["style"] == "house_way_from_right" and view["start_mode"] == "rng"
        else:
            # Before the draw nothing is shown; from `dealt` on the number is blank (e)(6).
            assert view["number"] is None and view["start_position"] is None
            assert view["seat"] is None and view["position_name"] is None
    assert rig.table.published()["round"] == 2


def test_blank_after_dealt_also_after_a_restart(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    for button in ("shuffled", "no_more_bets", "draw"):
        rig.press(button)
    number = rig.table.published()["number"]
    again = reopen(rig)
    assert again.table.published()["number"] == number == shown_number(again)
    again.press("dealt")
    assert again.table.published()["number"] is None and shown_number(again) is None


def test_dice_mode_is_published_with_the_entered_dice(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, settings(start_mode="dice"))
    rig.press("shuffled")
    rig.press("no_more_bets")
    view = rig.table.published()
    assert view["dice_mode"] is True and view["start_mode"] == "dice"
    assert view["number"] is None
    rig.act("dice 4 5 6")
    view = rig.table.published()
    # (e)(3): 15 counted from the dealer ends at the seventh position.
    assert view["number"] == 7 == shown_number(rig)
    assert view["source"] == "dice" and view["dice"] == [4, 5, 6] and view["dice_total"] == 15
    assert view["seat"] == 6 and view["position_name"] == "seat 6"


def test_an_rng_fault_publishes_dice_mode(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, rng=stuck_rng())
    assert rig.table.published()["fault"] is False
    for button in ("shuffled", "no_more_bets", "draw"):  # the draw finds the stuck source
        rig.press(button)
    view = rig.table.published()
    assert rig.display.lit() == FAULT
    assert view["fault"] is True and view["dice_mode"] is True and view["number"] is None
    assert view["start_mode"] == "dice (RNG fault)"


def test_each_call_builds_new_objects(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, settings(start_mode="dice"))
    rig.press("shuffled")
    rig.press("no_more_bets")
    rig.act("dice 4 5 6")
    first = rig.table.published()
    dice = first["dice"]
    assert isinstance(dice, list)
    dice.append(99)  # a reader's copy is its own
    assert rig.table.published()["dice"] == [4, 5, 6]
