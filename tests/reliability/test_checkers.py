"""The crash-trial checkers catch what they claim to: a re-rolled draw, a lost press, a press
never sent, a card counted twice or lost, an $ACK for a frame the journal lacks (negative controls
on hand-made journals, so a PASS of bench/crash_trials.py means something)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

from controller.journal.store import Journal
from tests.reliability.harness import REPO

sys.path.insert(0, str(REPO / "bench"))

import crash_trials as ct  # noqa: E402


def _journal(state: Path) -> Journal:
    state.mkdir(parents=True, exist_ok=True)
    return Journal(state / "journal.sqlite")


def _snap(rnd: int, state: str, number: int | None = None) -> dict[str, object]:
    """A pai gow fact row's data: the state and the record's changed fields."""
    return {"trigger": "x", "state": state, "record": {"number": number}}


def test_paigow_checker_flags_a_reroll_a_lost_and_an_invented_press(tmp_path: Path) -> None:
    j = _journal(tmp_path)
    j.append("app.start", {"pid": 11})
    j.append("paigow.state", {**_snap(1, "betting"), "input": {"button": "shuffled"}}, 1)
    j.append("paigow.drawn", {**_snap(1, "dealing", 3), "input": {"button": "draw"}}, 1)
    j.append("paigow.drawn", _snap(1, "dealing", 6), 1)  # a second draw: re-rolled
    j.append("paigow.input", {"button": "settled"}, 1)  # never sent
    j.append("app.start", {"pid": 12})
    j.close()
    session = ct.PaigowSession(
        pid=11,
        confirmed=["shuffled", "no_more_bets", "draw"],
        numbers={1: "3"},
        last_seen=(1, "dealer_hands"),
    )
    res = ct.Counts("paigow")
    ct.check_paigow(
        tmp_path,
        [session],
        res,
        {"_pid": "12", "round": "1", "state": "betting"},
        ct.PaigowLedger(),
    )
    text = "\n".join(res.problems)
    assert "re-rolled" in text
    assert "lost or reordered" in text  # no_more_bets is missing
    assert "does not hold (lost)" in text  # dealer_hands never journaled
    assert "restart resumed ('1', 'betting'), newest journaled state ('1', 'dealing')" in text


def test_baccarat_checker_flags_a_card_twice_a_lost_card_and_an_unjournaled_ack(
    tmp_path: Path,
) -> None:
    j = _journal(tmp_path)
    j.append("shoe.session", {"sid": "5E55C0DE", "seq": 0, "model": "X", "firmware": "1"})
    j.append("shoe.frame", {"seq": 1, "type": "CARD", "fields": ["AS"]})
    j.append("shoe.frame", {"seq": 1, "type": "CARD", "fields": ["AS"]})
    j.close()
    sim = SimpleNamespace(
        sid="5E55C0DE",
        received=[
            SimpleNamespace(type="ACK", seq=3, sid="5E55C0DE"),
            SimpleNamespace(type="ACK", seq=9, sid="0FF5E55A"),
        ],
    )  # another session's: ignored
    shoe = ct.ShoeRun(sim=sim, dealt=["AS", "KD", "7H"])
    res = ct.Counts("baccarat")
    ct.check_baccarat(tmp_path, [shoe], res, settled=True)
    text = "\n".join(res.problems)
    assert "SEQs journaled twice: [1]" in text
    assert "differ from the dealt ones" in text
    assert "3 cards dealt, 2 journaled" in text
    assert "the shoe got $ACK 3, the journal has no frame 3" in text
    assert "$ACK 9" not in text
