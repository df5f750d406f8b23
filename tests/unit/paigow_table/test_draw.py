"""The draw: journaled before shown, one per round, shown until the deal is complete (e)(6)."""

from __future__ import annotations

from pathlib import Path

from controller.tables.paigow.definition import physical_position

from .helpers import ALL_LIT, BLANK, EVERYTHING, digit, make_rig, play_round


def test_power_up_lamp_test_then_blank(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, recover=False)
    assert rig.display.lit() == ALL_LIT
    assert rig.lamps.lit() == frozenset(range(1, 7))
    rig.table.recover()
    assert rig.display.lit() == ALL_LIT  # the lamp test runs its full time
    rig.table.tick(EVERYTHING)
    assert rig.display.lit() == BLANK
    assert rig.lamps.lit() == frozenset()


def test_draw_is_journaled_before_the_display_shows_it(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    rig.press("no_more_bets")
    rig.press("draw")
    drawn = rig.rows("paigow.drawn")
    assert len(drawn) == 1
    number = drawn[0].data["record"]["number"]
    raw = drawn[0].data["record"]["raw"]
    assert 1 <= number <= 8 and len(bytes.fromhex(raw)) >= 1
    shows = [c for c in rig.display.calls if c[0] == "show"]
    assert shows == [("show", number, shows[0][2])]
    # The journal had the drawn row (and nothing after it) when show() was called.
    assert shows[0][2] == drawn[0].seq
    assert rig.display.lit() == digit(number)


def test_number_from_the_rng_bytes(tmp_path: Path) -> None:
    """The shown number is the certified scaling of the journaled raw bytes (a lab can replay)."""
    from controller.rng.certified import outcomes_from_raw

    rig = make_rig(tmp_path)
    for _ in range(5):
        play_round(rig)
    for row in rig.rows("paigow.drawn"):
        rec = row.data["record"]
        assert outcomes_from_raw(bytes.fromhex(rec["raw"])) == [rec["number"]]


def test_second_draw_refused_and_number_unchanged(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    for name in ("shuffled", "no_more_bets", "draw"):
        rig.press(name)
    shown = rig.display.lit()
    calls = len(rig.display.calls)
    number = rig.table.model.record.number
    rig.press("draw")
    rig.press("draw")
    assert rig.display.lit() == shown
    assert len(rig.display.calls) == calls  # the display was not touched at all
    assert rig.table.model.record.number == number
    assert len(rig.rows("paigow.drawn")) == 1
    refusals = rig.rows("paigow.refused")
    assert len(refusals) == 2 and all(r.data["trigger"] == "draw" for r in refusals)
    assert all(r.round == 1 for r in refusals)
    assert [a for a in rig.alarms if a.startswith("REFUSED draw")]


def test_number_blanked_when_deal_complete_and_kept_in_record(tmp_path: Path) -> None:
    """5324.50(e)(6): covered and shaken once after the deal -- the number goes off."""
    rig = make_rig(tmp_path)
    for name in ("shuffled", "no_more_bets", "draw"):
        rig.press(name)
    number = rig.table.model.record.number
    assert number is not None
    start = physical_position(number, None)
    rig.press("dealt")
    assert rig.display.lit() == BLANK
    assert rig.lamps.lit() == frozenset()
    assert rig.table.status()["number"] == str(number)
    rig.press("hands_set")
    rig.press("settled")
    closing = rig.rows("paigow.settled")[0]
    assert closing.data["record"]["number"] == number
    assert closing.data["record"]["start_position"] == start
    assert rig.table.status()["last_rng"] == f"{number} (round 1)"


def test_seat_lamp_lights_the_starting_seat(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    seen = set()
    for _ in range(12):
        for name in ("shuffled", "no_more_bets", "draw"):
            rig.press(name)
        rec = rig.table.model.record
        pos = rec.start_position
        assert pos == rec.number  # house banks: counted from the dealer (e)(3)
        expected = frozenset({pos - 1}) if 2 <= pos <= 7 else frozenset()
        assert rig.lamps.lit() == expected
        seen.add(pos)
        for name in ("dealt", "hands_set", "settled"):
            rig.press(name)
    assert len(seen) > 3
