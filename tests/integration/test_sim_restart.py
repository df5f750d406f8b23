"""`./run-sim baccarat`: a restart of the controller mid-coup resumes the coup with the same cards
(README, "a restart resumes"). The real ``table-controller run`` process on the sim profile, its
simulated shoe in the process, killed (SIGKILL) after two cards of a coup and started again on
the same state directory: the simulated shoe keeps its state there, so the restarted process
finds the same powered-on shoe (the same session, the same cards to come; docs/shoe-protocol.md,
"A shoe that outlives the controller"). A power cycle of that shoe while the controller is down
is a new session, which halts the coup and voids it (docs/baccarat-table.md)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.harness import Controller, fast_tmpdir, journal_rows, write_profile

COUP = ("dealing", "player_third", "banker_third")


@pytest.fixture
def work() -> Iterator[Path]:
    path = fast_tmpdir("simrestart-")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _to_mid_coup(c: Controller) -> list[str]:
    """Shuffle, burn, take the shoe, bet, no more bets, two cards: the coup's cards so far."""
    c.login()
    c.ok("sim button shuffled")
    c.ok("sim shoe deal burn")
    c.ok("curator 1")
    c.ok("bet 1 banker 2500")
    c.ok("sim button no_more_bets")
    assert c.status()["state"] == "dealing"
    lines = c.ok("sim shoe deal 2")
    return lines[-1].split()[1:]


def test_a_restart_mid_coup_resumes_the_coup_with_the_same_cards(work: Path) -> None:
    profile = write_profile(work, "sim-baccarat")
    state = work / "state"
    c = Controller(profile, state)
    try:
        c.wait_ready()
        first = _to_mid_coup(c)
        before = c.status()
        c.kill()  # the controller dies; the shoe (its own power) does not
        c.close_pipes()
        assert (state / "sim-shoe.json").exists()
        c = Controller(profile, state)
        c.wait_ready()
        c.login()
        after = c.status()
        for key in ("state", "shoe", "coup", "round", "cards_left"):
            assert after[key] == before[key], (key, before, after)
        assert after["table_faults"] == "none"
        rest = c.ok("sim shoe deal coup")[-1].split(": ")[1].split()
        status = c.status()
        assert status["state"] == "settling", status
        results = [r.data for r in journal_rows(state, ["baccarat.coup.result"])]
        assert results[-1]["cards"] == first + rest  # the same coup, the same cards
        sessions = journal_rows(state, ["shoe.session"])
        assert len(sessions) == 1  # the shoe never powered up again
        assert not journal_rows(state, ["baccarat.coup.voided"])
        assert c.ask("journal verify").ok
    finally:
        c.stop()


def test_a_shoe_power_cycle_while_the_controller_is_down_halts_and_voids(work: Path) -> None:
    """The same restart, but the shoe loses its power too (a machine reboot: another boot id in
    its state file): a new session mid-coup is the rules' irregularity."""
    profile = write_profile(work, "sim-baccarat")
    state = work / "state"
    c = Controller(profile, state)
    try:
        c.wait_ready()
        first = _to_mid_coup(c)
        c.kill()
        c.close_pipes()
        saved = state / "sim-shoe.json"
        saved.write_text(saved.read_text().replace('"boot_id":"', '"boot_id":"rebooted-'))
        c = Controller(profile, state)
        c.wait_ready()
        c.login()
        # its $HELO may be flushed when the port opens: the silence resend brings it (0.5 s)
        deadline = time.monotonic() + 10.0
        status = c.status()
        while status["state"] != "halted" and time.monotonic() < deadline:
            time.sleep(0.05)
            status = c.status()
        assert status["state"] == "halted", status
        assert "power-cycled mid-coup" in status["table_faults"]
        voided = [r.data for r in journal_rows(state, ["baccarat.coup.voided"])]
        assert voided and voided[-1]["cards"] == first
        sessions = [r.data for r in journal_rows(state, ["shoe.session"])]
        assert len(sessions) == 2 and sessions[1]["previous"]["sid"] == sessions[0]["sid"]
    finally:
        c.stop()


def test_a_power_cycle_between_coups_waits_for_the_dealer(work: Path) -> None:
    """`sim shoe fault power` between coups: no halt, no void; the next coup waits for the
    dealer's `shoe resume`, which is journaled."""
    profile = write_profile(work, "sim-baccarat")
    state = work / "state"
    c = Controller(profile, state)
    try:
        c.wait_ready()
        c.login()
        c.ok("sim button shuffled")
        c.ok("sim shoe deal burn")
        c.ok("curator 1")
        assert c.status()["state"] == "betting"
        reply = c.ok("sim shoe fault power")
        assert reply[-1].startswith("fault power: powered up, session ")
        sid = reply[-1].rsplit(" ", 1)[1]
        status = c.status()
        assert status["state"] == "betting"
        assert f"shoe session {sid} unconfirmed" in status["table_faults"]
        refused = c.ask("fault clear")
        assert not refused.ok and "shoe resume" in refused.status
        early = c.ask("sim button no_more_bets")  # refused by the table: still betting
        assert not early.ok and "shoe resume" in early.status
        assert c.status()["state"] == "betting"
        assert c.ok("shoe resume")[-1] == f"shoe session {sid} confirmed: play goes on"
        assert c.status()["table_faults"] == "none"
        c.ok("sim button no_more_bets")
        c.ok("sim shoe deal coup")
        assert c.status()["state"] == "settling"
        resumed = [r.data for r in journal_rows(state, ["baccarat.shoe.resumed"])]
        assert [r["sid"] for r in resumed] == [sid]
        assert not journal_rows(state, ["baccarat.coup.voided", "baccarat.fault"])
    finally:
        c.stop()
