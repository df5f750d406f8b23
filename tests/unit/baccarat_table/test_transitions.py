"""Every transition of the certified sequence: each trigger from each state, allowed or refused."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from transitions import MachineError

from controller.games.baccarat.shoe import CoupStep
from controller.games.baccarat.vig_ledger import VigLedger
from controller.tables.baccarat.machine import (
    STATES,
    TRANSITIONS,
    TRIGGER_INPUTS,
    TableModel,
    build_machine,
)
from controller.tables.baccarat.sequence import Sequence
from tests.unit.baccarat_table.helpers import Rig

TRIGGERS = sorted({t[0] for t in TRANSITIONS})


def _expected(state: str, trigger: str) -> list[str]:
    """The destinations TRANSITIONS allows for (state, trigger), in order."""
    out = []
    for trig, source, dest, _ in TRANSITIONS:
        sources = source if isinstance(source, tuple) else (source,)
        if trig == trigger and state in sources:
            out.append(dest)
    return out


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("trigger", TRIGGERS)
def test_each_trigger_from_each_state(state: str, trigger: str) -> None:
    model = TableModel()
    build_machine(model, initial=state)
    dests = _expected(state, trigger)
    if not dests:
        with pytest.raises(MachineError):
            getattr(model, trigger)()
        assert model.state == state
        return
    # With every guard's facts permissive, the first listed transition is taken.
    model.burn_left = 1 if dests[0] == "burn" and state == "burn" else 0
    model.expecting = {
        "dealing": CoupStep.BANKER_CARD,
        "player_third": CoupStep.PLAYER_DRAWS,
        "banker_third": CoupStep.BANKER_DRAWS,
    }.get(dests[0], CoupStep.COMPLETE)
    model.shoe_done = dests[0] == "shuffle" and trigger == "settled"
    model.compelled_pass = dests[0] == "passing"
    model.pending_disclosed = trigger in ("remedy_burn", "remedy_dead_hand")
    assert getattr(model, trigger)() is True
    assert model.state == dests[0]


def test_guards_choose_between_destinations() -> None:
    model = TableModel()
    build_machine(model, initial="settling")
    model.shoe_done, model.compelled_pass = False, True
    assert model.settled() and model.state == "passing"
    build_machine(model, initial="burn")
    model.burn_left, model.burn_reason = 0, "choice"
    assert model.burn_card() and model.state == "betting"


def test_guards_refuse_without_moving() -> None:
    model = TableModel()
    build_machine(model, initial="shuffle")
    model.ledger = VigLedger().owe(2, 100)
    assert model.shuffled() is False and model.state == "shuffle"
    build_machine(model, initial="betting")
    model.shoe_faults = ("JAM",)
    assert model.no_more_bets() is False and model.state == "betting"
    model.shoe_faults, model.pending_disclosed = (), True
    assert model.no_more_bets() is False


def test_every_trigger_names_its_input() -> None:
    assert set(TRIGGER_INPUTS) == set(TRIGGERS)


def test_no_auto_transitions() -> None:
    model = TableModel()
    build_machine(model)
    assert not hasattr(model, "to_betting")


def test_table_refuses_out_of_order_inputs_and_journals_why(rig: Rig) -> None:
    exc = rig.refused(rig.press, "no_more_bets")
    # the state, and what it takes in the dealer's words; the button is named by the line
    # that carries the reason (`!REFUSED no_more_bets: ...`), never twice
    assert exc.reason == "the table is in state shuffle, where it takes the shuffled button"
    assert rig.refused(rig.press, "settled")
    assert rig.refused(rig.act, "curator 1")
    assert rig.refused(rig.act, "bet 1 banker 500")
    refused = rig.rows("baccarat.refused")
    assert len(refused) == 4 and all(r.data["reason"] for r in refused)
    assert rig.table.state == "shuffle"
    rig.open_shoe()
    assert rig.refused(rig.press, "shuffled")
    assert rig.refused(rig.press, "settled")
    rig.press("no_more_bets")
    assert rig.refused(rig.act, "bet 1 banker 500").reason.startswith("wagers are taken only")
    assert rig.refused(rig.press, "no_more_bets")


def test_bad_console_arguments_are_refused(rig: Rig) -> None:
    rig.open_shoe()
    assert rig.refused(rig.act, "bet 1 banker 499").code == "RANGE"
    assert rig.refused(rig.act, "bet 99 banker 500").code == "SYNTAX"
    assert rig.refused(rig.act, "bet 1 dragon7 500").code == "RANGE"
    assert rig.refused(rig.act, "frobnicate").code == "UNKNOWN"
    assert rig.refused(rig.act, "remedy burn").reason.startswith("no disclosed card")


def _count_guards(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[list[tuple[str, str | None]], list[Counter[str]]]:
    """Wraps every guard (before a table is built: its Guards hold the bound methods) to record
    (name, reason), and every fire() to count each guard's evaluations for that one input."""
    calls: list[tuple[str, str | None]] = []
    per_input: list[Counter[str]] = []
    for name in [n for n in vars(TableModel) if n.startswith("why_")]:
        guard = getattr(TableModel, name)

        def counted(
            model: TableModel, event: object, guard: Callable[..., str | None] = guard
        ) -> str | None:
            reason = guard(model, event)
            calls.append((guard.__name__, reason))
            return reason

        monkeypatch.setattr(TableModel, name, counted)
    fire = Sequence.fire

    def counted_fire(seq: Sequence, trigger: str) -> None:
        start = len(calls)
        try:
            fire(seq, trigger)
        finally:
            per_input.append(Counter(name for name, _ in calls[start:]))

    monkeypatch.setattr(Sequence, "fire", counted_fire)
    return calls, per_input


def test_each_guard_runs_once_per_input(monkeypatch: pytest.MonkeyPatch, fast_tmp: Path) -> None:
    calls, per_input = _count_guards(monkeypatch)
    rig = Rig(fast_tmp)
    rig.refused(rig.press, "no_more_bets")  # what shuffle takes: the shuffled button's guard
    rig.open_shoe()
    rig.refused(rig.press, "settled")  # what betting takes: its inputs' guards asked once each
    rig.press("no_more_bets")  # allowed: the refusal's question and the machine's condition
    rig.cards("9S 2H KS 3D")  # a natural: the banker's hand lost
    rig.press("settled")
    rig.act("curator 2")
    assert rig.table.state == "betting"
    assert {"why_can_deal", "why_expects_initial", "why_vig_clear"} <= {n for n, _ in calls}
    twice = [c for c in per_input if c and max(c.values()) > 1]
    assert not twice, f"a guard ran more than once for one input: {twice}"


def test_a_refused_input_gives_its_guards_reason(
    monkeypatch: pytest.MonkeyPatch, fast_tmp: Path
) -> None:
    calls, per_input = _count_guards(monkeypatch)
    rig = Rig(fast_tmp)
    rig.open_shoe()
    rig.frame("FLT", "JAM")
    del calls[:]
    exc = rig.refused(rig.press, "no_more_bets")
    assert calls == [("why_can_deal", "the shoe reports a fault: JAM")]
    assert exc.reason == "the shoe reports a fault: JAM"
    assert per_input[-1] == Counter({"why_can_deal": 1})
