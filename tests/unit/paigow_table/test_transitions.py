"""Every trigger in every state: either the documented next state, or refused with the state
unchanged and a journal row naming the reason (issue 4 "Done means")."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.tables.paigow.definition import STATE_NAMES, TRANSITIONS, TRIGGERS
from controller.tables.table import Refused

from .helpers import BUTTONS, Rig, make_rig, play_round

# How a trigger is sent in these tests, with data that passes the data guards where the state
# allows the trigger at all (the guards themselves are tested in the other files).
SEND = {
    "open": "open",
    "idle": "idle",
    "expose_stacking": "expose stacking",
    "bank": "bank seat 2",
    "cobank": "cobank seat 3",
    "no_bank": "no-bank",
    "style": "style jung_quat",
    "dice": "dice 11",
    "expose_player": "expose player 1",
    "void_hand": "void seat 1",
    "expose_void": "expose dead",  # a void too: after the draw a supervisor's
    "surrender": "surrender seat 1",
    "void": "void tiles knocked over",  # after the draw a supervisor's (Voids after the draw)
    "wager": "wager 1 1000",
    "tiles": "tiles dealer 6-6 4-5 1-3 2-2",
}

# The way to each state, from a fresh table, after one whole round (so round 2 may have a
# player bank, (g)(2)). Inspection is the fresh table itself.
AFTER_ROUND_1 = ["shuffled", "no_more_bets", "draw", "dealt", "hands_set", "settled"]
PATH = {
    "inspection": [],
    "washing": [],
    "betting": ["shuffled"],
    "bank_style": ["shuffled", "bank seat 2", "no_more_bets"],
    "no_more_bets": ["shuffled", "no_more_bets"],
    "dealing": ["shuffled", "no_more_bets", "draw"],
    "setting_hands": ["shuffled", "no_more_bets", "draw", "dealt"],
    "dealer_hands": ["shuffled", "no_more_bets", "draw", "dealt", "hands_set"],
}

# Hand-written from the regulation (docs/paigow-table.md), not from the machine's definition:
# (state, trigger) -> next state; anything not listed is refused in that state.
ALLOWED = {
    ("inspection", "open"): "washing",
    ("inspection", "shuffled"): "betting",
    ("washing", "shuffled"): "betting",
    ("washing", "idle"): "inspection",
    ("washing", "expose_stacking"): "washing",
    ("betting", "expose_stacking"): "washing",
    ("betting", "bank"): "betting",
    ("betting", "cobank"): "betting",
    ("betting", "no_bank"): "betting",
    ("betting", "wager"): "betting",
    ("betting", "no_more_bets"): "no_more_bets",
    ("betting", "void"): "washing",
    ("bank_style", "expose_stacking"): "washing",
    ("bank_style", "style"): "no_more_bets",
    ("bank_style", "draw"): "dealing",
    ("bank_style", "void"): "washing",
    ("no_more_bets", "expose_stacking"): "washing",
    ("no_more_bets", "draw"): "dealing",
    ("no_more_bets", "void"): "washing",
    ("dealing", "dealt"): "setting_hands",
    ("dealing", "expose_player"): "dealing",
    ("dealing", "expose_void"): "washing",
    ("dealing", "void"): "washing",
    ("setting_hands", "hands_set"): "dealer_hands",
    ("setting_hands", "expose_player"): "setting_hands",
    ("setting_hands", "expose_void"): "washing",
    ("setting_hands", "void"): "washing",
    ("dealer_hands", "surrender"): "dealer_hands",
    ("dealer_hands", "settled"): "washing",
    ("dealer_hands", "expose_void"): "washing",
    ("dealer_hands", "void"): "washing",
}
# Round-closing transitions: the round id moves on and the closing row ends .settled/.voided.
CLOSING = {"settled": "paigow.settled", "void": "paigow.voided", "expose_void": "paigow.voided"}


def reach(tmp_path: Path, state: str) -> Rig:
    rig = make_rig(tmp_path)
    if state != "inspection":
        for step in AFTER_ROUND_1:
            rig.press(step)
    for step in PATH[state]:
        if step in BUTTONS:
            rig.press(step)
        else:
            rig.act(step)
    assert rig.state == state
    return rig


def send(rig: Rig, trigger: str) -> Refused | None:
    if trigger in BUTTONS:
        before = len(rig.alarms)
        rig.press(trigger)
        refused = [a for a in rig.alarms[before:] if a.startswith(f"REFUSED {trigger}")]
        return Refused(refused[0]) if refused else None
    return rig.try_act(
        SEND[trigger],
        "supervisor@test" if trigger in ("void", "expose_void") else "technician@test",
    )


def test_the_hand_written_table_covers_the_machine() -> None:
    """Every (state, trigger) the machine defines is allowed in ALLOWED, or refused by a data
    guard in the context PATH builds (RNG mode refuses dice; void_hand needs an exposure)."""
    defined = {(t.source, t.trigger) for t in TRANSITIONS}
    assert set(ALLOWED) <= defined
    assert defined - set(ALLOWED) == {
        ("bank_style", "dice"),
        ("no_more_bets", "dice"),
        ("dealing", "void_hand"),
        ("setting_hands", "void_hand"),
        # no wager was entered on the way there: tiles are entered for wagers only
        ("dealer_hands", "tiles"),
    }


@pytest.mark.parametrize("state", STATE_NAMES)
@pytest.mark.parametrize("trigger", TRIGGERS)
def test_every_trigger_in_every_state(tmp_path: Path, state: str, trigger: str) -> None:
    rig = reach(tmp_path, state)
    round_before = rig.table.model.round_id
    seq_before = rig.journal.last_seq
    refused = send(rig, trigger)
    rows = [e for e in rig.journal.events(since_seq=seq_before)]
    # The input is journaled with the first row it causes, with the round's id (one input,
    # its rows, one transaction).
    assert "input" in rows[0].data
    assert rows[0].round == round_before
    expected = ALLOWED.get((state, trigger))
    if expected is None:
        assert refused is not None, f"{trigger} in {state} should be refused"
        assert rig.state == state
        assert rig.table.model.round_id == round_before
        assert [r.kind for r in rows] == ["paigow.refused"]
        assert rows[0].data["trigger"] == trigger
        assert rows[0].data["state"] == state
        assert rows[0].data["reason"]
        if trigger not in BUTTONS:
            assert refused.code == "STATE"
        return
    assert refused is None, f"{trigger} in {state} refused: {refused}"
    assert rig.state == expected
    fact = rows[0]
    assert fact.data["trigger"] == trigger and fact.data["from"] == state
    assert fact.data["state"] == expected
    assert fact.round == round_before
    if trigger in CLOSING:
        assert fact.kind == CLOSING[trigger]
        assert rig.table.model.round_id == round_before + 1
        assert fact.data["snapshot"]["round_id"] == round_before + 1
    else:
        assert rig.table.model.round_id == round_before
        assert "snapshot" not in fact.data  # a fact row carries only what changed


def test_no_auto_transitions(tmp_path: Path) -> None:
    """auto_transitions=False: no to_<state>() lets anything skip the sequence."""
    rig = make_rig(tmp_path)
    for state in STATE_NAMES:
        assert not hasattr(rig.table.model, f"to_{state}")


def test_draw_before_no_more_bets_is_refused(tmp_path: Path) -> None:
    """5324.50(e)(1): "no more bets" before the shaker (here the RNG)."""
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    rig.press("draw")
    assert rig.state == "betting"
    refused = rig.rows("paigow.refused")[-1]
    assert "the table is in state betting, where it takes" in refused.data["reason"]
    assert not rig.rows("paigow.drawn")


def test_unknown_button_and_action_are_journaled(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    rig.press("deal_faster")
    assert rig.last().kind == "paigow.refused" and "deal_faster" in rig.last().data["reason"]
    exc = rig.try_act("juggle 3")
    assert exc is not None and exc.code == "UNKNOWN"
    assert rig.last().kind == "paigow.refused"
    exc = rig.try_act("bank seat 9")
    assert exc is not None and exc.code == "RANGE"
    assert rig.last().data["reason"] == "seat must be 1-6, got 9"
    assert rig.state == "inspection"


def test_every_paigow_row_carries_a_round_id(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    play_round(rig)
    rig.press("draw")  # refused
    play_round(rig)
    rows = rig.rows()
    assert rows and all(r.round is not None for r in rows)
    closing = [r for r in rows if r.kind.endswith((".settled", ".voided"))]
    assert [r.round for r in closing] == [1, 2]
