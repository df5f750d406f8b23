"""Player bank, co-bank and their rotation (5324.50(g)); the bank's delivery style (g)(9);
the starting position counted from the bank (g)(10)."""

from __future__ import annotations

from pathlib import Path

from controller.tables.paigow.definition import physical_position

from .helpers import make_rig, play_round, reopen, settings


def test_no_player_bank_at_the_start_of_the_game(tmp_path: Path) -> None:
    """(g)(2): the first round after inspection (the tiles restacked) has no player bank."""
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    exc = rig.try_act("bank seat 1")
    assert exc is not None and "(g)(2)" in exc.reason and exc.code == "STATE"
    assert rig.table.model.record.bank == "house"
    assert rig.table.model.record.start_of_game


def test_rotation_across_rounds(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    play_round(rig)  # round 1: start of the game
    rig.press("shuffled")
    assert rig.table.status()["bank_offer"] == "seat 1"
    rig.act("bank seat 1")  # round 2: seat 1 banks
    for name in ("no_more_bets", "draw", "dealt", "hands_set", "settled"):
        rig.press(name)
    rig.press("shuffled")  # round 3
    assert rig.table.status()["bank_offer"] == "seat 2"
    exc = rig.try_act("bank seat 1")
    assert exc is not None and "two in a row" in exc.reason
    rig.act("bank seat 3")
    assert rig.table.status()["bank"] == "player seat 3"
    rig.act("no-bank")
    assert rig.table.status()["bank"] == "house"
    for name in ("no_more_bets", "draw", "dealt", "hands_set", "settled"):
        rig.press(name)
    # Rounds 4-7: the first offer moves one seat a round, then returns to the dealer (g)(3).
    offers = []
    for _ in range(5):
        rig.press("shuffled")
        offers.append(rig.table.status()["bank_offer"])
        for name in ("no_more_bets", "draw", "dealt", "hands_set", "settled"):
            rig.press(name)
    assert offers == ["seat 3", "seat 4", "seat 5", "seat 6", "dealer"]
    rig.press("shuffled")
    assert rig.table.status()["bank_offer"] == "seat 1"


def test_idle_table_restarts_the_game(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    play_round(rig)
    rig.act("idle")
    assert rig.state == "inspection"
    rig.press("shuffled")
    assert rig.try_act("bank seat 1") is not None  # (g)(2) again after inspection


def test_start_counts_from_the_bank(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    play_round(rig)
    for seat in (2, 4):
        rig.press("shuffled")
        rig.act(f"bank seat {seat}")
        rig.press("no_more_bets")
        assert rig.state == "bank_style"
        rig.press("draw")
        rec = rig.table.model.record
        assert rec.number is not None
        assert rec.start_position == physical_position(rec.number, seat)
        assert rec.counted_from == f"bank (seat {seat})"
        assert rec.style == "house_way_from_right" and rec.style_by == "default"
        assert any(
            a.startswith(f"STYLE round {rig.table.model.round_id}: house_way_from_right")
            for a in rig.alarms
        )
        for name in ("dealt", "hands_set", "settled"):
            rig.press(name)
        play_round(rig)  # a house round between, so the rotation allows the next bank


def test_physical_position_counts_counter_clockwise() -> None:
    assert [physical_position(n, None) for n in range(1, 9)] == [1, 2, 3, 4, 5, 6, 7, 8]
    # Bank at seat 3 (position 4) is number one; the dealer and the dead hand are counted.
    assert [physical_position(n, 3) for n in range(1, 9)] == [4, 5, 6, 7, 8, 1, 2, 3]


def test_bank_chooses_style(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, settings(delivery_styles=("house_way_from_right", "jung_quat")))
    play_round(rig)
    rig.press("shuffled")
    rig.act("cobank seat 1")
    rig.press("no_more_bets")
    exc = rig.try_act("style chee_yee")
    assert exc is not None and "not offered" in exc.reason
    exc = rig.try_act("style nonsense")
    assert exc is not None and exc.code == "RANGE"
    rig.act("style jung_quat")
    assert rig.state == "no_more_bets"
    assert rig.rows("paigow.state")[-1].data["record"]["style"] == "jung_quat"
    assert any("STYLE round 2: jung_quat (bank)" in a for a in rig.alarms)
    rig.press("draw")
    assert rig.table.model.record.style_by == "bank"


def test_bank_not_offered(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, settings(bank_offered=False, cobank_offered=False))
    play_round(rig)
    rig.press("shuffled")
    assert rig.try_act("bank seat 1") is not None
    assert rig.try_act("cobank seat 1") is not None
    rig2 = make_rig(tmp_path / "nc", settings(cobank_offered=False))
    play_round(rig2)
    rig2.press("shuffled")
    exc = rig2.try_act("cobank seat 1")
    assert exc is not None and "co-banking" in exc.reason


def test_surrender_refused_against_a_player_bank(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    play_round(rig)
    rig.press("shuffled")
    rig.act("bank seat 1")
    for name in ("no_more_bets", "draw", "dealt", "hands_set"):
        rig.press(name)
    exc = rig.try_act("surrender seat 2")
    assert exc is not None and "player bank" in exc.reason


def test_bank_rotation_includes_dealer_setting_reaches_the_rotation_at_the_restack(
    tmp_path: Path,
) -> None:
    """paigow.bank_rotation_includes_dealer (the reading of (g)(3)'s "until the offer returns to
    the dealer") is taken at the start of the game and kept across a power cycle."""
    import dataclasses

    from controller.config.settings import RuleSettings

    base = RuleSettings()
    off = dataclasses.replace(
        base, paigow=dataclasses.replace(base.paigow, bank_rotation_includes_dealer=False)
    )
    rig = make_rig(tmp_path / "off", rules=off)
    rig.press("shuffled")  # from inspection: the start of the game, (g)(2)
    assert rig.table.model.rotation.includes_dealer is False
    again = reopen(rig)
    assert again.table.model.rotation.includes_dealer is False
    on = make_rig(tmp_path / "on")
    on.press("shuffled")
    assert on.table.model.rotation.includes_dealer is True
    assert off.paigow_rules().bank_rotation_includes_dealer is False


def test_the_draw_reply_says_where_the_count_starts_and_who_gets_the_first_stack(
    tmp_path: Path,
) -> None:
    """The words the monitor shows, which cannot be read as "count 4": with seat 1 banking,
    dice totalling 3 count 3 positions from the bank's own (its position counts one, (e)(3),
    (g)(10)): bank position 2, then 3, then 4, which is seat 3."""
    rig = make_rig(tmp_path, settings(start_mode="dice"))
    rig.press("shuffled")  # round 1: start of the game, no player bank
    rig.press("no_more_bets")
    rig.act("dice 5")
    for name in ("dealt", "hands_set", "settled", "shuffled"):
        rig.press(name)
    rig.act("bank seat 1")
    rig.press("no_more_bets")
    if rig.state == "bank_style":
        rig.act("style house_way_from_right")
    reply = rig.act("dice 1 1 1")
    assert reply[1] == (
        "dice 1+1+1=3: count 3 from the bank (seat 1): first stack to seat 3 (position 4),"
        " style house_way_from_right"
    )
    assert rig.table.published()["seat"] == 3


def test_a_refused_button_names_the_next_button_that_waits_and_why(tmp_path: Path) -> None:
    """docs/console.md "Refusals": a refusal names what the state takes. When the next step's
    button is held back by a rule (the bank's chips must cover the wagers, (g)(4)(ii)), it is
    named with why instead of left out."""
    rig = make_rig(tmp_path)
    play_round(rig)
    rig.press("shuffled")
    rig.act("bank seat 1")
    rig.act("wager 1 2500")  # the bank's chips
    rig.act("wager 2 5000")  # more than the bank's chips cover
    cover = rig.table.refusal("no_more_bets")
    assert cover is not None
    why = rig.table.refusal("draw")
    assert why is not None and why.startswith("the table is in state betting, where it takes ")
    assert f"the no_more_bets button waits: {cover}" in why
