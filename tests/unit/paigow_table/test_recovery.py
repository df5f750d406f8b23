"""Recovery from the journal: cut the journal after every row of real rounds, power up a new
table on it, and check the state, the round and the display (docs/design.md, durability)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.journal.store import Journal
from controller.tables.paigow.definition import RECOVERY_RULES, STATE_NAMES
from controller.tables.paigow.table import FACT_KINDS

from .helpers import BLANK, FAULT, digit, make_rig, play_round, reopen, settings, stuck_rng


def scenario(tmp_path: Path) -> list[Any]:
    """Two rounds through every state: a house round, then a player-banked round with a chosen
    style, an exposed player tile, a void hand and an idle table at the end."""
    rig = make_rig(tmp_path / "src")
    play_round(rig)
    rig.press("shuffled")
    rig.act("bank seat 1")
    rig.press("no_more_bets")
    rig.act("style jung_quat")
    rig.press("draw")
    rig.act("expose player 2")
    rig.press("dealt")
    rig.act("void seat 2")
    rig.press("hands_set")
    rig.press("settled")
    rig.act("expose stacking")
    rig.act("idle")
    rows = list(rig.journal.events())
    rig.journal.close()
    states = {r.data["state"] for r in rows if r.kind in FACT_KINDS}
    assert states == set(STATE_NAMES)
    return rows


def expected_after(rows: list[Any]) -> dict[str, Any]:
    """State, round and number after the fact rows of ``rows``: a snapshot row sets them all,
    a fact row its state and the fields it changed."""
    want: dict[str, Any] = {"state": "inspection", "round_id": 1, "number": None}
    for r in rows:
        if r.kind not in FACT_KINDS:
            continue
        if "snapshot" in r.data:
            snap = r.data["snapshot"]
            want = {
                "state": snap["state"],
                "round_id": snap["round_id"],
                "number": snap["record"].get("number"),
            }
        else:
            want["state"] = r.data["state"]
            want["number"] = r.data.get("record", {}).get("number", want["number"])
    return want


def test_recovery_from_a_cut_after_every_row(tmp_path: Path) -> None:
    rows = scenario(tmp_path)
    for cut in range(1, len(rows) + 1):
        where = tmp_path / f"cut{cut}"
        where.mkdir()
        journal = Journal(where / "journal.sqlite")
        for r in rows[:cut]:
            journal.append(r.kind, r.data, round_id=r.round)
        want = expected_after(rows[:cut])
        rig = make_rig(where, journal=journal)
        assert rig.state == want["state"], f"cut after row {cut} ({rows[cut - 1].kind})"
        assert rig.table.model.round_id == want["round_id"]
        assert rig.table.model.record.number == want["number"]
        if want["state"] == "dealing":
            assert rig.display.lit() == digit(want["number"])
        else:
            assert rig.display.lit() == BLANK
        recovered = rig.rows("paigow.recovered")[-1]
        assert recovered.data["rule"] == RECOVERY_RULES[want["state"]][0]
        assert recovered.round == want["round_id"]
        journal.close()


def test_power_cycle_in_dealing_shows_the_same_number_and_never_redraws(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    for name in ("shuffled", "no_more_bets", "draw"):
        rig.press(name)
    number = rig.table.model.record.number
    assert number is not None
    for _ in range(3):
        rig = reopen(rig)
        assert rig.state == "dealing" and rig.table.model.round_id == 1
        assert rig.display.lit() == digit(number)
        assert rig.table.status()["number"] == str(number)
        rig.press("draw")
        assert rig.display.lit() == digit(number)
    assert len(rig.rows("paigow.drawn")) == 1


def test_cut_between_the_draw_press_and_the_drawn_row(tmp_path: Path) -> None:
    """A number never journaled was never shown: the round waits for its one draw."""
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    rig.press("no_more_bets")
    rig.journal.append("paigow.input", {"button": "draw", "state": "no_more_bets"}, round_id=1)
    rig = reopen(rig)
    assert rig.state == "no_more_bets" and rig.display.lit() == BLANK
    rig.press("draw")
    assert rig.state == "dealing" and len(rig.rows("paigow.drawn")) == 1


def test_fault_at_power_down_is_a_fault_at_power_up(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, rng=stuck_rng())
    rig.press("shuffled")
    rig.press("no_more_bets")
    rig.press("draw")
    rig = reopen(rig)
    assert rig.table.faults() and rig.display.lit() == FAULT


@pytest.mark.parametrize("kind", ["paigow.state", "paigow.recovered"])
def test_unreadable_snapshot_voids_the_round(tmp_path: Path, kind: str) -> None:
    """A change row or a snapshot row this firmware cannot read voids the round."""
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    data: dict[str, Any] = {"trigger": "x", "from": "betting", "state": "flying"}
    if kind == "paigow.recovered":
        data["snapshot"] = {
            "state": "flying",
            "round_id": 1,
            "record": {"round_id": 1},
            "rotation": {},
        }
    rig.journal.append(kind, data, round_id=1)
    rig = reopen(rig)
    assert rig.state == "washing" and rig.table.model.round_id == 2
    voided = rig.rows("paigow.voided")[-1]
    assert voided.round == 1 and "flying" in voided.data["reason"]
    assert rig.rows("paigow.recovered")[-1].data["rule"] == "void"
    rig = reopen(rig)
    assert rig.state == "washing" and rig.table.model.round_id == 2


@pytest.mark.parametrize("state", ["inspection", "betting", "dealing", "dealer_hands"])
def test_round_in_progress(tmp_path: Path, state: str) -> None:
    rig = make_rig(tmp_path, settings())
    steps = {
        "inspection": [],
        "betting": ["shuffled"],
        "dealing": ["shuffled", "no_more_bets", "draw"],
        "dealer_hands": ["shuffled", "no_more_bets", "draw", "dealt", "hands_set"],
    }[state]
    for name in steps:
        rig.press(name)
    assert rig.table.round_in_progress() == (state != "inspection")
