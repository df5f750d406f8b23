#!/usr/bin/env python3
"""Soak: many rounds through the REAL controller process; memory and journal growth
(issue 8 "Soak").

    python bench/soak.py [--rounds 100000] [--game paigow|baccarat|both] [--quick] [--dir DIR]

pai gow: the scripted dealer's six buttons per round (``sim button ...`` on the console, on
stdio pipes; lines are pipelined in batches, each is answered ``OK`` in order, and a press is
handled before the next line is read). baccarat: a simulated shoe in this process on a pty the
controller's SerialShoe reads; each coup is ``no_more_bets``, the cards the coup takes (each
acknowledged by the controller before the next is dealt), ``settled``; the burn, the shoe's
offer and pass are played as the table asks, and the shoe is refilled with a freshly shuffled
eight decks whenever the table is back in ``shuffle``.

Prints, every ``--every`` rounds: rounds, rounds/s, the controller's VmRSS, the journal's size;
at the end: RSS after the first 1,000 rounds vs at the end (target: within 5 MB), journal bytes
per round, the rounds journaled (``paigow.settled`` / ``baccarat.coup.settled``) against the
rounds driven, and ``journal verify``. Exit status 1 if a check failed.

Full run (100,000 + 100,000): see docs/reliability.md for the time it takes on this machine.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.reliability.harness import Controller, machine_info, write_profile  # noqa: E402

FIRST = 1000
RSS_SLACK_KB = 5 * 1024
PG_ROUND = ("shuffled", "no_more_bets", "draw", "dealt", "hands_set", "settled")


@dataclass
class SoakResult:
    game: str
    rounds: int = 0
    seconds: float = 0.0
    rss_first_kb: int = 0
    rss_end_kb: int = 0
    bytes_first: int = 0
    bytes_end: int = 0
    journaled_rounds: int = 0
    verify: str = ""
    problems: list[str] = field(default_factory=list)
    samples: list[tuple[int, int, int]] = field(default_factory=list)  # rounds, rss kB, bytes

    @property
    def bytes_per_round(self) -> float:
        """The journal after a clean shutdown (WAL checkpointed into the database) per round."""
        return self.bytes_end / max(1, self.rounds)


def journal_size(state_dir: Path) -> int:
    return sum(p.stat().st_size for p in state_dir.glob("journal.sqlite*"))


def count_rows(state_dir: Path, kind: str) -> int:
    con = sqlite3.connect(f"file:{state_dir / 'journal.sqlite'}?mode=ro", uri=True)
    try:
        return int(
            con.execute(
                "SELECT COUNT(*) FROM rows r JOIN kinds k ON k.id = r.kind WHERE k.kind = ?",
                (kind,),
            ).fetchone()[0]
        )
    finally:
        con.close()


def _sample(res: SoakResult, c: Controller, state_dir: Path, started: float, every: int) -> None:
    rss, size = c.rss_kb(), journal_size(state_dir)
    res.samples.append((res.rounds, rss, size))
    if res.rounds == FIRST:
        res.rss_first_kb, res.bytes_first = rss, size
    if res.rounds % every == 0:
        rate = res.rounds / (time.monotonic() - started)
        print(
            f"  {res.game}: {res.rounds:>7} rounds  {rate:6.1f}/s  RSS {rss / 1024:6.1f} MB"
            f"  journal {size / 1e6:8.1f} MB",
            flush=True,
        )


def soak_paigow(rounds: int, work: Path, every: int) -> SoakResult:
    res = SoakResult("pai gow")
    state_dir = work / "paigow"
    c = Controller(write_profile(work, "sim-paigow", name="paigow.toml"), state_dir)
    started = time.monotonic()
    try:
        c.wait_ready()
        c.login()
        batch = 50
        while res.rounds < rounds:
            n = min(batch, rounds - res.rounds)
            lines = "".join(f"sim button {b}\n" for _ in range(n) for b in PG_ROUND)
            c.send_raw(lines.encode())
            for i in range(n * len(PG_ROUND)):
                reply = c.read_reply(60)
                if not reply.ok:
                    res.problems.append(f"round {res.rounds + i // 6}: {reply.status}")
            for _ in range(n):
                res.rounds += 1
                if res.rounds == FIRST or res.rounds % every == 0 or res.rounds == rounds:
                    _sample(res, c, state_dir, started, every)
            if len(res.problems) > 20:
                break
        res.seconds = time.monotonic() - started
        status = c.status()
        if status["state"] != "washing" or status["faults"] != "none":
            res.problems.append(f"end status {status}")
        res.rss_end_kb = c.rss_kb()
        reply = c.ask("journal verify", timeout=600)
        res.verify = reply.lines[0] if reply.ok else reply.status
        if not reply.ok:
            res.problems.append(reply.status)
    finally:
        c.stop()
    res.bytes_end = journal_size(state_dir)
    res.journaled_rounds = count_rows(state_dir, "paigow.settled")
    if res.journaled_rounds != res.rounds:
        res.problems.append(f"{res.rounds} rounds driven, {res.journaled_rounds} journaled")
    return res


class Shoe:
    """A simulated shoe in this process; refilled with a fresh 8-deck shoe on demand."""

    def __init__(self, link: str, seed: int) -> None:
        from drivers.sim.shoe import SimShoe

        self.rng = random.Random(seed)
        self.sim: Any = SimShoe(decks=8, seed=self.rng.randrange(1 << 30), heartbeat_s=1.0)
        self.sim.create_pty(link)
        self.sim.start()

    def refill(self) -> None:
        """The dealer loads a newly shuffled shoe (the device stays connected)."""
        self.sim.load(self.rng.randrange(1 << 30))

    def upcoming(self, n: int) -> list[str]:
        return list(self.sim.peek(n))

    def deal(self, c: Controller, n: int = 1) -> None:
        self.sim.deal(n)
        deadline = time.monotonic() + 30
        while not self.sim.wait_delivered(0.2):
            if c.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("card not acknowledged (controller gone or stuck)")


def soak_baccarat(rounds: int, work: Path, every: int, seed: int) -> SoakResult:
    from controller.games import baccarat

    res = SoakResult("baccarat")
    state_dir = work / "baccarat"
    shoe = Shoe(str(work / "shoe"), seed)
    c = Controller(
        write_profile(work, "sim-baccarat", shoe_port=str(work / "shoe"), name="baccarat.toml"),
        state_dir,
    )
    started = time.monotonic()
    try:
        c.wait_ready()
        c.login()
        shoe.sim.wait_delivered(10)
        state = c.status()["state"]
        curator = 1
        while res.rounds < rounds:
            if state == "betting":
                c.ok("sim button no_more_bets")
                upcoming = shoe.upcoming(6)
                used = (
                    baccarat.deal(baccarat.cards(upcoming)).cards_used
                    if len(upcoming) >= 4
                    else len(upcoming)
                )
                # the coup's cards in one go, then wait for the controller's cumulative $ACK:
                # SerialShoe sends an ACK only when its read (50 ms timeout) returns, so one
                # wait per card would cap the soak near 20 cards/s (docs/reliability.md)
                shoe.deal(c, used)
                c.ok("sim button settled")
                res.rounds += 1
                if res.rounds == FIRST or res.rounds % every == 0 or res.rounds == rounds:
                    _sample(res, c, state_dir, started, every)
            elif state in ("burn", "dealing", "player_third", "banker_third"):
                shoe.deal(c)
            elif state == "shuffle":
                shoe.refill()
                c.ok("sim button shuffled")
            elif state in ("offering", "passing"):
                curator = curator % 8 + 1
                if not c.ask(f"curator {curator}").ok:
                    c.ok("nobody")
            elif state == "settling":
                c.ok("sim button settled")
            else:
                res.problems.append(f"round {res.rounds}: state {state}: {c.status()}")
                break
            state = c.status()["state"]
        res.seconds = time.monotonic() - started
        status = c.status()
        if status["faults"] != "none":
            res.problems.append(f"end status {status}")
        res.rss_end_kb = c.rss_kb()
        reply = c.ask("journal verify", timeout=600)
        res.verify = reply.lines[0] if reply.ok else reply.status
        if not reply.ok:
            res.problems.append(reply.status)
    finally:
        c.stop()
        shoe.sim.stop()
    res.bytes_end = journal_size(state_dir)
    res.journaled_rounds = count_rows(state_dir, "baccarat.coup.settled")
    if res.journaled_rounds != res.rounds:
        res.problems.append(f"{res.rounds} coups driven, {res.journaled_rounds} journaled")
    return res


def report(res: SoakResult) -> bool:
    grew = res.rss_end_kb - res.rss_first_kb
    print(
        f"[{res.game}] {res.rounds:,} rounds in {res.seconds:,.0f} s "
        f"({res.rounds / max(res.seconds, 1e-9):,.1f}/s); journaled {res.journaled_rounds:,}"
    )
    ok_mem = True
    if res.rounds > FIRST:
        ok_mem = grew <= RSS_SLACK_KB
        print(
            f"  RSS after {FIRST:,} rounds {res.rss_first_kb / 1024:.1f} MB, at the end "
            f"{res.rss_end_kb / 1024:.1f} MB: {grew / 1024:+.1f} MB "
            f"({'within' if ok_mem else 'OVER'} 5 MB)"
        )
    else:
        print(
            f"  RSS at the end {res.rss_end_kb / 1024:.1f} MB (fewer than {FIRST} rounds: "
            "no comparison)"
        )
    print(f"  journal {res.bytes_end / 1e6:.1f} MB: {res.bytes_per_round:,.0f} bytes per round")
    print(f"  {res.verify}")
    for p in res.problems[:10]:
        print(f"  problem: {p}")
    return ok_mem and not res.problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--game", choices=["paigow", "baccarat", "both"], default="both")
    parser.add_argument("--quick", action="store_true", help="2,000 rounds per game")
    parser.add_argument("--every", type=int, default=None, help="progress every N rounds")
    parser.add_argument("--seed", type=int, default=5324)
    parser.add_argument(
        "--dir",
        default=None,
        help="parent of the working directory "
        "(default: the system temp dir; use the device's own storage)",
    )
    args = parser.parse_args(argv)
    rounds = 2000 if args.quick else args.rounds
    every = args.every or max(FIRST, rounds // 20)
    work = Path(tempfile.mkdtemp(prefix="soak-", dir=args.dir))
    m = machine_info()
    print(
        f"soak: {rounds:,} rounds per game; machine: {m['cpu']}, {m['cores']} cores, "
        f"Python {m['python']}, kernel {m['kernel']}; journal in {work}",
        flush=True,
    )
    ok = True
    try:
        if args.game in ("paigow", "both"):
            ok &= report(soak_paigow(rounds, work, every))
        if args.game in ("baccarat", "both"):
            ok &= report(soak_baccarat(rounds, work, every, args.seed))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"result: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
