"""Every meter against a count made independently (issue: meters checked against ``journal
export``): a long random pai gow run on the REAL process, SIGKILLed at random moments, then
``table-controller meters --json`` compared with what this test counted itself: the rounds it
settled and voided, the numbers the console showed, the starts it made, the kills it made in a
round, the logins it typed, the settings it changed; and with the same counts read from the
``journal export`` lines by this test's own reading (not the fold's code)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.harness import PIN, REPO, Controller, fast_tmpdir, write_profile

IN_ROUND = {"betting", "bank_style", "no_more_bets", "dealing", "setting_hands", "dealer_hands"}
STEPS = ("shuffled", "no_more_bets", "draw", "dealt", "hands_set", "settled")


@pytest.fixture
def work() -> Iterator[Path]:
    path = fast_tmpdir("meters-count-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _cli(*args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "controller", *args],
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return out.stdout


def test_meters_equal_an_independent_count_after_kills(work: Path) -> None:
    rng = random.Random(2025)
    profile = write_profile(work, "sim-paigow")
    state = work / "state"
    mine: Counter[str] = Counter()

    def start() -> Controller:
        c = Controller(profile, state)
        c.wait_ready()
        mine["power_ups"] += 1
        if c.ask(f"login {PIN}").ok:
            mine["logins.technician"] += 1
        else:  # the first start: no PIN yet, `passwd` sets it and logs in
            c.ok(f"passwd {PIN}")
        return c

    c = start()
    rounds = 0
    while rounds < 30:
        st = c.status()["state"]
        if st in ("inspection", "washing"):
            name = "shuffled"
        elif st in ("betting", "bank_style"):
            name = "no_more_bets"
        elif st == "no_more_bets":
            if rng.random() < 0.1:
                assert c.ask("void test before the draw").ok
                mine["paigow.voided_before_draw"] += 1
                rounds += 1
                continue
            name = "draw"
        elif st == "dealing":
            name = "dealt"
        elif st == "setting_hands":
            name = "hands_set"
        else:
            name = "settled"
        reply = c.ask(f"sim button {name}")
        assert reply.ok, (name, reply.status)
        if name == "draw":
            mine[f"paigow.rng.{c.status()['number']}"] += 1
        if name == "settled":
            mine["paigow.games_played"] += 1
            rounds += 1
        if rng.random() < 0.12:  # a power cut at a random moment between two inputs
            if c.status()["state"] in IN_ROUND:
                mine["power_lost_mid_round"] += 1
            c.kill()
            c.close_pipes()
            c = start()
    console = c.ask("meters chi")
    assert console.ok, console.status
    c.stop()

    # the run covered what it claims to (the seed is fixed)
    assert mine["power_lost_mid_round"] and mine["paigow.voided_before_draw"], mine
    assert mine["power_ups"] > mine["power_lost_mid_round"] + 1  # kills between rounds too
    table = json.loads(_cli("meters", "--state-dir", str(state), "--json"))
    lifetime = table["lifetime"]

    # 1. what this test did and saw
    for name, count in mine.items():
        assert lifetime.get(name, 0) == count, (name, lifetime.get(name, 0), count)
    # the console says the same (after the last row: its own login counted too)
    played = mine["paigow.games_played"]
    assert f"paigow.games_played: {played} (shift {played})" in console.lines
    assert any(line.startswith("chi-square ") for line in console.lines)
    assert any(line.startswith("release: ") for line in console.lines)
    # 2. the export, read here without the fold's code
    export = _cli("journal", "export", "--state-dir", str(state))
    rows = [json.loads(line) for line in export.splitlines()]
    kinds = Counter(r["kind"] for r in rows if "carried_from" not in r["data"])
    assert lifetime.get("power_ups", 0) == kinds["app.start"]
    assert lifetime.get("paigow.games_played", 0) == kinds["paigow.settled"]
    drawn = Counter(r["data"]["record"]["number"] for r in rows if r["kind"] == "paigow.drawn")
    for n in range(1, 9):
        assert lifetime.get(f"paigow.rng.{n}", 0) == drawn[n]
    assert lifetime.get("setting_changes", 0) == kinds["config.changed"]
    assert lifetime.get("logins.technician", 0) == sum(
        1 for r in rows if r["kind"] == "console.login" and r["data"].get("role") == "technician"
    )
    # every meter the table reports is one this test accounted for
    accounted = set(mine)
    assert set(lifetime) <= accounted, set(lifetime) - accounted
