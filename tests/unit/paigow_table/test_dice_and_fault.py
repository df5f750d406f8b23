"""Dice mode (5324.50(a)(3)): by setting, or while the RNG is in fault; dragon's eye
(13:69F-10.7(l)) only in dice mode; the RNG fault latch survives a power cycle."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import FAULT, digit, good_rng, make_rig, reopen, settings, stuck_rng


def to_no_more_bets(rig) -> None:  # type: ignore[no-untyped-def]
    rig.press("shuffled")
    rig.press("no_more_bets")


@pytest.mark.parametrize(("total", "ordinal"), [(3, 3), (8, 8), (9, 1), (11, 3), (16, 8), (18, 2)])
def test_dice_mode_by_setting(tmp_path: Path, total: int, ordinal: int) -> None:
    rig = make_rig(tmp_path, settings(start_mode="dice"))
    to_no_more_bets(rig)
    rig.press("draw")
    refused = rig.rows("paigow.refused")[-1]
    assert "start_mode is dice" in refused.data["reason"]
    lines = rig.act(f"dice {total}")
    assert rig.state == "dealing"
    row = rig.rows("paigow.dice")[-1]
    rec = row.data["record"]  # the fields the dice total changed
    assert rec["mode"] == "dice" and rec["dice"] == [total] and rec["dice_total"] == total
    # (e)(3): count from the dealer as one until the count matches the total.
    assert rec["start_ordinal"] == ordinal and rec["start_position"] == ordinal
    assert rig.display.lit() == digit(ordinal)
    assert f"dice {total}={total}" in lines[1]
    assert not rig.rows("paigow.drawn")
    assert rig.table.status()["start_mode"] == "dice"


def test_dice_refused_in_rng_mode_and_out_of_range(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    to_no_more_bets(rig)
    exc = rig.try_act("dice 11")
    assert exc is not None and exc.code == "STATE" and "press draw" in exc.reason
    rig2 = make_rig(tmp_path / "d", settings(start_mode="dice"))
    to_no_more_bets(rig2)
    for line, code in (
        ("dice 2", "RANGE"),
        ("dice 19", "RANGE"),
        ("dice 7 1", "SYNTAX"),
        ("dice x", "SYNTAX"),
        ("dice 0 3 3", "RANGE"),
    ):
        exc = rig2.try_act(line)
        assert exc is not None and exc.code == code, line
        assert rig2.last().kind == "paigow.refused"
    assert rig2.state == "no_more_bets"


def test_three_dice_entered(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, settings(start_mode="dice"))
    to_no_more_bets(rig)
    rig.act("dice 6 5 2")
    rec = rig.table.model.record
    assert rec.dice == [6, 5, 2] and rec.dice_total == 13 and rec.number == 5
    assert rec.triples is None  # dragon's eye not offered


def test_dragons_eye_needs_three_dice_and_reports_triples(tmp_path: Path) -> None:
    nj = settings(jurisdiction="NJ", start_mode="dice", dragons_eye=True, dragons_eye_method=2)
    rig = make_rig(tmp_path, nj)
    to_no_more_bets(rig)
    exc = rig.try_act("dice 12")
    assert exc is not None and "dragon's eye" in exc.reason
    lines = rig.act("dice 4 4 4")
    assert rig.table.model.record.triples is True
    assert any("odd, even and pai gow wagers lose" in line for line in lines)


def test_dragons_eye_cannot_be_set_with_the_rng() -> None:
    """Dragon's eye only in dice mode: the settings refuse it with start_mode = rng."""
    from controller.config.settings import ConfigError

    with pytest.raises(ConfigError):
        settings(start_mode="rng", dragons_eye=True)


def test_rng_fault_falls_back_to_dice(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, rng=stuck_rng())
    to_no_more_bets(rig)
    rig.press("draw")
    assert rig.state == "no_more_bets"
    assert rig.rows("paigow.rng_fault")
    refused = rig.rows("paigow.refused")[-1]
    assert refused.data["code"] == "FAULT" and "dice" in refused.data["reason"]
    assert rig.display.lit() == FAULT
    assert rig.table.faults() and rig.table.status()["start_mode"] == "dice (RNG fault)"
    rig.press("draw")  # still refused, now by the state's guard
    assert "RNG is in fault" in rig.rows("paigow.refused")[-1].data["reason"]
    rig.act("dice 10")
    assert rig.state == "dealing" and rig.display.lit() == digit(2)
    assert rig.rows("paigow.dice")[-1].data["record"]["mode"] == "dice"


def test_fault_survives_power_cycle_and_clears_only_after_self_test(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, rng=stuck_rng())
    to_no_more_bets(rig)
    rig.press("draw")
    # Power cycle with a healthy generator: the latch is in the journal, not in the RNG object.
    rig = reopen(rig, rng=good_rng())
    assert rig.state == "no_more_bets"
    assert rig.table.faults() and "repetition count" in rig.table.faults()[0]
    assert rig.display.lit() == FAULT
    rig.press("draw")
    assert rig.state == "no_more_bets"
    # A stuck generator's self-test fails: refused, still faulted.
    rig = reopen(rig, rng=stuck_rng())
    from controller.tables.table import Refused

    with pytest.raises(Refused) as info:
        rig.table.clear_fault("tech")
    assert info.value.code == "FAULT" and rig.table.faults()
    rig = reopen(rig, rng=good_rng())
    lines = rig.table.clear_fault("tech")
    assert lines[-1] == "RNG fault cleared" and "PASS" in lines[0]
    assert rig.table.faults() == []
    assert rig.rows("paigow.rng_fault_cleared")[-1].data["who"] == "tech"
    rig.press("draw")
    assert rig.state == "dealing" and rig.rows("paigow.drawn")
    rig = reopen(rig)
    assert rig.table.faults() == []


def test_fault_raised_by_a_self_test_is_latched_on_tick(tmp_path: Path) -> None:
    source = {"stuck": False}
    from controller.rng.certified import CertifiedRng

    from .helpers import seeded_source

    good = seeded_source()

    def flaky(n: int) -> bytes:
        return b"\x00" * n if source["stuck"] else good(n)

    rng = CertifiedRng(flaky, hwrng_path=None, entropy_ready=lambda: True)
    rig = make_rig(tmp_path, rng=rng)
    source["stuck"] = True
    assert not rng.self_test().passed
    rig.table.tick(10**18 + 1)
    assert rig.rows("paigow.rng_fault")
    assert rig.display.lit() == FAULT


def test_an_application_fault_stops_play_but_the_dealer_may_still_void(tmp_path: Path) -> None:
    """A journal, program or settings fault held by the application stops the round: no draw is
    shown while it stands; the dealer can still void; play resumes once it is cleared."""
    rig = make_rig(tmp_path)
    faults: list[str] = []
    rig.table._ctx.app_faults = lambda: list(faults)  # noqa: SLF001 - the app's hook
    rig.press("shuffled")
    rig.press("no_more_bets")
    faults.append("program: controller/rng/certified.py does not match the manifest")
    rig.press("draw")
    assert rig.state == "no_more_bets"
    assert not rig.rows("paigow.drawn")
    assert not [c for c in rig.display.calls if c[0] == "show"]
    last_refusal = rig.rows("paigow.refused")[-1].data
    assert last_refusal["code"] == "FAULT" and "manifest" in last_refusal["reason"]
    faults.clear()
    rig.press("draw")
    assert rig.state == "dealing" and len(rig.rows("paigow.drawn")) == 1


def test_void_is_allowed_under_an_application_fault(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    rig.press("no_more_bets")
    rig.table._ctx.app_faults = lambda: ["journal: disk full"]  # noqa: SLF001 - the app's hook
    rig.press("void")
    assert len(rig.rows("paigow.voided")) == 1
    assert not [r for r in rig.rows("paigow.refused") if r.data["code"] == "FAULT"]
