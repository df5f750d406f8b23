"""SIGKILL the real controller process in every state of each table's machine and show that the
restarted process resumes (or voids) the round as docs/paigow-table.md and docs/baccarat-table.md
"Recovery" say, with the journal chain intact (issue 6 "Done means").

Pai gow: every state of ``PaigowRound`` (inspection, washing, betting, bank_style, no_more_bets,
dealing, setting_hands, dealer_hands): the same round, the same state and, from ``dealing`` on,
the same number; one ``paigow.drawn`` row per round; rule ``resume`` journaled.

Baccarat: every state of the table (shuffle, burn, offering, betting, dealing, player_third,
banker_third, settling, passing, halted), with a simulated shoe in this process on a pty the
controller's SerialShoe reads, so the shoe survives the kill: the same state and the same coup
cards, rule ``resume``; a halt stays halted. And the void rule: a shoe that power-cycles while
the controller is down mid-coup voids the coup and halts.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.harness import Controller, fast_tmpdir, journal_rows, write_profile

PAIGOW_STATES = (
    "inspection",
    "washing",
    "betting",
    "bank_style",
    "no_more_bets",
    "dealing",
    "setting_hands",
    "dealer_hands",
)
BACCARAT_STATES = (
    "shuffle",
    "burn",
    "offering",
    "betting",
    "dealing",
    "player_third",
    "banker_third",
    "settling",
    "passing",
    "halted",
)


class Table:
    """The running process; ``crash()`` SIGKILLs it and starts a new one on the same state."""

    def __init__(self, profile: Path, state_dir: Path) -> None:
        self.profile, self.state_dir = profile, state_dir
        self.c = self._start()
        self.killed_in: list[str] = []

    def _start(self) -> Controller:
        c = Controller(self.profile, self.state_dir)
        c.wait_ready()
        reply = c.ask("journal verify")
        assert reply.ok, f"journal verify after restart: {reply.status}"
        c.login()
        return c

    def crash(self) -> tuple[dict[str, str], dict[str, str]]:
        """SIGKILL in the current state; returns (status before, status after restart)."""
        before = self.c.status()
        self.c.kill()
        self.c.close_pipes()
        self.killed_in.append(before["state"])
        self.c = self._start()
        return before, self.c.status()

    def close(self) -> None:
        self.c.stop()


# -- pai gow -----------------------------------------------------------------------------------


@pytest.fixture
def work() -> Iterator[Path]:
    path = fast_tmpdir("crash-recovery-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def paigow(work: Path) -> Iterator[Table]:
    t = Table(write_profile(work, "sim-paigow"), work / "state")
    yield t
    t.close()


def _press(t: Table, name: str, expect: str) -> None:
    t.c.ok(f"sim button {name}")
    assert t.c.status()["state"] == expect


def _pg_check(t: Table) -> None:
    before, after = t.crash()
    for key in ("state", "round", "number", "start_position", "bank"):
        assert after.get(key) == before.get(key), (key, before, after)
    assert after["faults"] == "none"
    rows = journal_rows(t.state_dir)
    recovered = [r for r in rows if r.kind == "paigow.recovered"][-1]
    assert recovered.data["rule"] == "resume"
    assert recovered.data["state"] == before["state"]
    draws: dict[int, int] = {}
    for r in rows:
        if r.kind == "paigow.drawn":
            draws[r.round] = draws.get(r.round, 0) + 1
    assert all(n == 1 for n in draws.values()), draws
    if before["number"] != "-":
        drawn = [r for r in rows if r.kind == "paigow.drawn" and r.round == int(before["round"])]
        assert str(drawn[0].data["record"]["number"]) == after["number"]


def test_paigow_killed_in_every_state_resumes(paigow: Table) -> None:
    t = paigow
    _pg_check(t)  # inspection
    _press(t, "shuffled", "betting")
    _pg_check(t)  # betting
    _press(t, "no_more_bets", "no_more_bets")
    _pg_check(t)  # no_more_bets
    _press(t, "draw", "dealing")
    _pg_check(t)  # dealing: the same number
    assert t.c.ask("sim button draw").code == "STATE"  # a second draw after the restart
    assert t.c.status()["state"] == "dealing"
    _press(t, "dealt", "setting_hands")
    _pg_check(t)  # setting_hands
    _press(t, "hands_set", "dealer_hands")
    _pg_check(t)  # dealer_hands
    _press(t, "settled", "washing")
    _pg_check(t)  # washing
    _press(t, "shuffled", "betting")
    t.c.ok("bank seat 2")
    _press(t, "no_more_bets", "bank_style")
    _pg_check(t)  # bank_style
    _press(t, "draw", "dealing")
    _pg_check(t)
    assert set(t.killed_in) == set(PAIGOW_STATES)
    reply = t.c.ask("journal verify")
    assert reply.ok


# -- baccarat ----------------------------------------------------------------------------------


@pytest.fixture
def baccarat(work: Path) -> Iterator[tuple[Table, Any]]:
    from drivers.sim.shoe import SimShoe

    sim = SimShoe(decks=8, seed=7, heartbeat_s=0.5)
    link = sim.create_pty(str(work / "shoe"))
    sim.start()
    t = None
    try:
        t = Table(write_profile(work, "sim-baccarat", shoe_port=link), work / "state")
        yield t, sim
    finally:
        if t is not None:
            t.close()
        sim.stop()


def _deal(t: Table, sim: Any, card: str, expect: str) -> None:
    sim.deal_card(card)
    assert sim.wait_delivered(10.0), "the controller did not acknowledge the card"
    assert t.c.status()["state"] == expect


def _recovery_row(t: Table) -> Any:
    return [r for r in journal_rows(t.state_dir, kinds=["baccarat.recovery"])][-1]


def _bac_check(t: Table, sim: Any, coup: list[str]) -> None:
    before, after = t.crash()
    assert sim.wait_delivered(10.0)
    for key in ("state", "shoe", "coup", "round", "cards_left", "curator", "vig_owed_cents"):
        assert after.get(key) == before.get(key), (key, before, after)
    row = _recovery_row(t)
    assert row.data["state"] == before["state"]
    assert row.data["rule"].startswith("resume"), row.data
    assert row.data["coup"] == coup
    frames = [r.data["seq"] for r in journal_rows(t.state_dir, kinds=["shoe.frame"])]
    assert len(frames) == len(set(frames)), "a shoe SEQ journaled twice"


def test_baccarat_killed_in_every_state_resumes(baccarat: tuple[Table, Any]) -> None:
    t, sim = baccarat
    _bac_check(t, sim, [])  # shuffle
    t.c.ok("sim button shuffled")
    assert t.c.status()["state"] == "burn"
    _deal(t, sim, "3H", "burn")  # face up 3: burn three more
    _deal(t, sim, "KD", "burn")
    _bac_check(t, sim, [])  # burn, mid-way
    _deal(t, sim, "QD", "burn")
    _deal(t, sim, "JD", "offering")
    _bac_check(t, sim, [])  # offering
    t.c.ok("curator 1")
    t.c.ok("bet 3 banker 500")
    _bac_check(t, sim, [])  # betting, a wager journaled
    t.c.ok("sim button no_more_bets")
    assert t.c.status()["state"] == "dealing"
    _deal(t, sim, "2S", "dealing")  # player
    _deal(t, sim, "KS", "dealing")  # banker
    _bac_check(t, sim, ["2S", "KS"])  # dealing
    _deal(t, sim, "3S", "dealing")  # player: 5
    _deal(t, sim, "KH", "player_third")  # banker: 0; player draws
    _bac_check(t, sim, ["2S", "KS", "3S", "KH"])  # player_third
    _deal(t, sim, "2H", "banker_third")  # player 7; banker draws
    _bac_check(t, sim, ["2S", "KS", "3S", "KH", "2H"])  # banker_third
    _deal(t, sim, "5C", "settling")  # banker 5: player wins
    _bac_check(t, sim, ["2S", "KS", "3S", "KH", "2H", "5C"])  # settling
    t.c.ok("sim button settled")
    assert t.c.status()["state"] == "passing"  # the banker's hand lost (h)(1)(i)
    _bac_check(t, sim, [])  # passing
    t.c.ok("curator 2")
    assert t.c.status()["state"] == "betting"
    sim.deal_unreadable()  # $FLT UNREAD: integrity halt
    assert sim.wait_delivered(10.0)
    assert t.c.status()["state"] == "halted"
    before, after = t.crash()  # halted: stays halted
    assert after["state"] == "halted"
    assert after["table_faults"] == before["table_faults"] != "none"
    assert _recovery_row(t).data["faults"]
    assert set(t.killed_in) == set(BACCARAT_STATES)
    assert t.c.ask("journal verify").ok


def test_baccarat_shoe_power_cycle_while_down_voids_the_coup(baccarat: tuple[Table, Any]) -> None:
    t, sim = baccarat
    t.c.ok("sim button shuffled")
    _deal(t, sim, "2H", "burn")
    _deal(t, sim, "KD", "burn")
    _deal(t, sim, "QD", "offering")
    t.c.ok("curator 1")
    t.c.ok("bet 2 player 1000")
    t.c.ok("sim button no_more_bets")
    _deal(t, sim, "9S", "dealing")
    t.c.kill()
    t.c.close_pipes()
    sim.power_cycle()  # the shoe loses its unacknowledged frames: a new SID, $HELO
    t.c = Controller(t.profile, t.state_dir)
    t.c.wait_ready()
    assert t.c.ask("journal verify").ok
    assert sim.wait_delivered(10.0)
    status = t.c.status()
    assert status["state"] == "halted", status
    kinds = [r.kind for r in journal_rows(t.state_dir)]
    assert "baccarat.coup.voided" in kinds
