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


BACCARAT_IN_COUP = {"dealing", "player_third", "banker_third", "settling"}


def test_baccarat_meters_equal_an_independent_count_after_kills(work: Path) -> None:
    """A baccarat run on the real process with a simulated shoe on a pty (it survives the
    kills): the cards this test dealt, the coups it saw settled, its kills during a coup; and
    the coups' outcomes read from the export by this test's own reading of 5324.20."""
    from drivers.sim.shoe import SimShoe

    rng = random.Random(5324)
    sim = SimShoe(decks=8, seed=11, heartbeat_s=0.5)
    link = sim.create_pty(str(work / "shoe"))
    sim.start()
    state = work / "state"
    mine: Counter[str] = Counter()
    c: Controller | None = None
    try:
        profile = write_profile(work, "sim-baccarat", shoe_port=link)

        def start() -> Controller:
            ctl = Controller(profile, state)
            ctl.wait_ready()
            mine["power_ups"] += 1
            if ctl.ask(f"login {PIN}").ok:
                mine["logins.technician"] += 1
            else:
                ctl.ok(f"passwd {PIN}")
            assert sim.wait_delivered(10.0)
            return ctl

        def deal() -> None:
            mine["baccarat.cards_read"] += len(sim.deal(1))
            assert sim.wait_delivered(10.0), "the controller did not acknowledge the card"

        c = start()
        while mine["baccarat.coups"] < 20:
            st = c.status()["state"]
            if st == "shuffle":
                reply = c.ask("sim button shuffled")
                assert reply.ok, reply.status
                mine["baccarat.shoes"] += 1
            elif st == "burn" or st in ("dealing", "player_third", "banker_third"):
                deal()
            elif st in ("offering", "passing"):
                c.ok(f"curator {rng.randint(1, 6)}")
            elif st == "betting":
                c.ok("sim button no_more_bets")
            elif st == "settling":
                c.ok("sim button settled")
                mine["baccarat.coups"] += 1
            else:
                raise AssertionError(f"state {st}")
            if rng.random() < 0.08:
                if c.status()["state"] in BACCARAT_IN_COUP:
                    mine["power_lost_mid_round"] += 1
                c.kill()
                c.close_pipes()
                c = start()
        c.stop()
        c = None
    finally:
        if c is not None:
            c.stop()
        sim.stop()
    assert mine["power_lost_mid_round"], mine  # the run covered a cut during a coup

    lifetime = json.loads(_cli("meters", "--state-dir", str(state), "--json"))["lifetime"]
    for name, count in mine.items():
        assert lifetime.get(name, 0) == count, (name, lifetime.get(name, 0), count)
    export = _cli("journal", "export", "--state-dir", str(state))
    results = [json.loads(x)["data"] for x in export.splitlines() if '"baccarat.coup.result"' in x]
    assert len(results) == mine["baccarat.coups"]

    def rank(card: str) -> str:
        return card[:-1]

    mine_results: Counter[str] = Counter()
    for r in results:
        p, b = r["player"], r["banker"]
        mine_results[
            {"banker": "baccarat.banker_wins", "player": "baccarat.player_wins"}.get(
                r["winner"], "baccarat.ties"
            )
        ] += 1

        # 5324.20(f): a natural is an 8 or 9 on a hand's first two cards
        def value(card: str) -> int:  # 5324.20(a): aces 1, tens and faces 0, others their pips
            r = rank(card)
            return 1 if r == "A" else int(r) if r.isdigit() and r != "10" else 0

        def two(cards: list[str]) -> int:
            return (value(cards[0]) + value(cards[1])) % 10

        if two(p) >= 8 or two(b) >= 8:
            mine_results["baccarat.naturals"] += 1
        mine_results["baccarat.player_pairs"] += rank(p[0]) == rank(p[1])
        mine_results["baccarat.banker_pairs"] += rank(b[0]) == rank(b[1])
        mine_results["baccarat.dragon7"] += (
            r["winner"] == "banker" and len(b) == 3 and r["banker_total"] == 7
        )
        mine_results["baccarat.panda8"] += (
            r["winner"] == "player" and len(p) == 3 and r["player_total"] == 8
        )
    for name, count in mine_results.items():
        assert lifetime.get(name, 0) == count, (name, lifetime.get(name, 0), count)
