"""What the pai gow table says (issue 15): what a button did, on every console (``!BUTTON``,
``!REFUSED``), what the display shows (``!DISPLAY``), replies that say what changed, and the
alarm on a void after the draw (docs/paigow-table.md "Voids after the draw")."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import make_rig, play_round, reopen, settings


def _new(rig_alarms: list[str], since: int, prefix: str) -> list[str]:
    return [a for a in rig_alarms[since:] if a.startswith(prefix)]


def test_a_button_says_what_it_did_on_every_console(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    before = len(rig.alarms)
    rig.press("shuffled")
    said = _new(rig.alarms, before, "BUTTON shuffled: ")
    assert said[0] == "BUTTON shuffled: round 1 betting"
    assert any("betting is open" in line for line in said)


def test_the_settled_button_says_every_wager_and_the_ledger(tmp_path: Path) -> None:
    """docs/paigow-table.md: "one line per wager and the ledger" -- on the button path too."""
    rig = make_rig(tmp_path)
    play_round(rig)
    rig.press("shuffled")
    rig.act("wager 1 2000")
    rig.act("wager 3 1000")
    for name in ("no_more_bets", "draw", "dealt", "hands_set"):
        rig.press(name)
    rig.act("tiles dealer 2-6 1-5 3-4 1-6")
    rig.act("hands 1 6-6,6-6 1-1,1-1")
    rig.act("hands 3 4-4,4-4 5-5,5-5")
    before = len(rig.alarms)
    rig.press("settled")
    said = [a.removeprefix("BUTTON settled: ") for a in _new(rig.alarms, before, "BUTTON")]
    settlement = rig.rows("paigow.settlement")[-1].data
    wagers = [line for line in said if line.startswith("area ")]
    assert len(wagers) == len(settlement["lines"]) == 2
    assert any(line.startswith("ledger: ") for line in said)
    for line in settlement["lines"]:
        assert any(
            w.startswith(f"area {line['area']} seat {line['seat']}: {line['stake']}c")
            and f"net {line['net']:+d}c" in w
            for w in wagers
        )


def test_a_refused_button_is_said_on_every_console(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    before = len(rig.alarms)
    rig.press("draw")
    said = _new(rig.alarms, before, "REFUSED draw: ")
    assert said and "the table is in state betting, where it takes" in said[0]


def test_the_display_says_what_it_shows_when_that_changes(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    before = len(rig.alarms)
    for name in ("shuffled", "no_more_bets", "draw"):
        rig.press(name)
    number = rig.table.model.record.number
    assert _new(rig.alarms, before, "DISPLAY") == [f"DISPLAY {number}"]  # blank: unchanged
    before = len(rig.alarms)
    rig.press("dealt")
    assert _new(rig.alarms, before, "DISPLAY") == ["DISPLAY blank"]
    before = len(rig.alarms)
    rig.press("hands_set")
    assert _new(rig.alarms, before, "DISPLAY") == []


def test_replies_say_what_changed(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    play_round(rig)
    rig.press("shuffled")
    assert any("seat 2 banks round 2" in line for line in rig.act("bank seat 2"))
    assert any("co-banks" in line and "half" in line for line in rig.act("cobank seat 3"))
    assert any(line == "the house banks round 2" for line in rig.act("no-bank"))
    for name in ("no_more_bets", "draw"):
        rig.press(name)
    lines = rig.act("expose player 4")
    assert any("void seat 4" in line and "(i)(1)" in line for line in lines)
    assert any("the hand of area 4 is void" in line for line in rig.act("void seat 4"))
    lines = rig.act("expose dealer", "supervisor@serial")  # a void after the draw
    assert lines[0] == "round 3 washing"
    assert any(
        "round 2 voided" in line and "every hand is void" in line and "re-shuffled" in line
        for line in lines
    )


def test_three_voids_after_the_draw_are_each_an_alarm_and_counted(tmp_path: Path) -> None:
    """Issue 15: a dealer voided with the button after the number was shown and drew again,
    three times in a row, and nobody was told."""
    rig = make_rig(tmp_path)
    play_round(rig)
    for attempt in range(3):
        rig.press("shuffled")
        rig.press("no_more_bets")
        rig.press("draw")
        number = rig.table.model.record.number
        before = len(rig.alarms)
        rig.press("void")  # the button: refused
        assert rig.state == "dealing"
        assert "supervisor" in _new(rig.alarms, before, "REFUSED void: ")[0]
        refused = rig.try_act("void")  # a technician: refused
        assert refused is not None and refused.code == "AUTH"
        refused = rig.try_act("void", "supervisor@serial")  # no reason: refused
        assert refused is not None and "say why" in refused.reason
        rig.act("void tiles knocked over", "supervisor@serial")
        assert rig.state == "washing"
        alarms = _new(rig.alarms, before, "ALARM void after the draw")
        assert len(alarms) == 1
        assert f"rng {number} shown" in alarms[0] and "supervisor@serial" in alarms[0]
        assert alarms[0].endswith(
            f"{attempt + 1} void{'s' if attempt else ''} after a draw this shift"
        )
    rows = rig.rows("paigow.void_after_draw")
    assert [r.data["shift_count"] for r in rows] == [1, 2, 3]
    assert all(r.data["reason"] == "tiles knocked over" for r in rows)
    assert rig.table.status()["voids_after_draw"].startswith("3 this shift")
    again = reopen(rig)  # the count survives a restart
    assert again.table.status()["voids_after_draw"].startswith("3 this shift")
    refused = again.try_act("shift start")
    assert refused is not None and refused.code == "AUTH"
    assert "last shift: 3" in again.act("shift start", "supervisor@serial")[0]
    assert again.table.status()["voids_after_draw"] == "0 this shift"
    assert reopen(again).table.status()["voids_after_draw"] == "0 this shift"


def test_an_exposure_after_the_draw_is_alarmed_and_counted_too(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    for name in ("shuffled", "no_more_bets", "draw"):
        rig.press(name)
    before = len(rig.alarms)
    rig.act("expose dead", "supervisor@serial")
    assert _new(rig.alarms, before, "ALARM void after the draw")
    assert rig.table.status()["voids_after_draw"].startswith("1 this shift")


@pytest.mark.parametrize("whose", ["dealer", "dead", "unwagered"])
def test_an_exposure_after_the_draw_needs_a_supervisor_like_void(
    tmp_path: Path, whose: str
) -> None:
    """Issue 15 item 8: every path that voids a round after the draw needs the supervisor;
    `expose dealer|dead|unwagered` voided it with a technician's login."""
    rig = make_rig(tmp_path)
    for name in ("shuffled", "no_more_bets", "draw"):
        rig.press(name)
    number = rig.table.model.record.number
    before, refusals = len(rig.alarms), len(rig.rows("paigow.refused"))
    refused = rig.try_act(f"expose {whose}")  # a technician
    assert refused is not None and refused.code == "AUTH"
    assert refused.reason == (
        f"the number {number} is out: a void after the draw needs a"
        f" supervisor's login at the console (`expose {whose}`)"
    )
    void = rig.try_act("void")  # the same answer as `void`
    assert void is not None and void.code == "AUTH"
    assert void.reason.split(" (`")[0] == refused.reason.split(" (`")[0]
    assert rig.state == "dealing" and rig.table.model.round_id == 1
    assert not rig.rows("paigow.voided") and not rig.rows("paigow.void_after_draw")
    assert not _new(rig.alarms, before, "ALARM")
    assert rig.table.status()["voids_after_draw"] == "0 this shift"
    assert [r.data["code"] for r in rig.rows("paigow.refused")[refusals:]] == [
        "AUTH",
        "AUTH",
    ]  # journaled
    rig.act(f"expose {whose}", "supervisor@serial")
    assert rig.state == "washing" and rig.table.model.round_id == 2
    alarms = _new(rig.alarms, before, "ALARM void after the draw")
    assert len(alarms) == 1 and "supervisor@serial" in alarms[0]
    assert f"a tile of the {whose} hand was exposed" in alarms[0]
    row = rig.rows("paigow.void_after_draw")[-1]
    assert (row.data["trigger"], row.data["who"], row.data["number"]) == (
        "expose_void",
        "supervisor@serial",
        number,
    )
    assert rig.table.status()["voids_after_draw"].startswith("1 this shift")


def test_an_exposure_before_the_draw_is_unchanged(tmp_path: Path) -> None:
    """`expose stacking` (d)(5) is the only exposure before the draw: a technician's, no alarm,
    not counted; the voiding exposures are not allowed before the draw."""
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    rig.act("expose stacking")
    assert rig.state == "washing"
    rig.press("shuffled")
    rig.press("no_more_bets")
    refused = rig.try_act("expose dealer")
    assert refused is not None and refused.code != "AUTH"
    assert not rig.rows("paigow.void_after_draw")
    assert not [a for a in rig.alarms if a.startswith("ALARM")]
    assert rig.table.status()["voids_after_draw"] == "0 this shift"


def test_a_void_before_the_draw_is_no_alarm(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    rig.act("void")
    assert rig.state == "washing" and not rig.rows("paigow.void_after_draw")
    assert not [a for a in rig.alarms if a.startswith("ALARM")]


def test_entries_say_one_wager_not_one_wagers(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, settings())
    rig.press("shuffled")
    rig.act("wager 1 2000")
    assert rig.table.status()["entries"].startswith("1 wager,") or rig.table.status()[
        "entries"
    ].startswith("1 wager")
    assert not rig.table.status()["entries"].startswith("1 wagers")


def test_sim_button_without_a_name_lists_the_buttons(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    refused = rig.try_act("sim button")
    assert refused is not None and refused.code == "SYNTAX"
    assert "buttons: shuffled, no_more_bets, draw" in refused.reason
