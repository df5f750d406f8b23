#!/usr/bin/env python3
"""Crash trials: SIGKILL the REAL controller process at random moments, restart it, and check
that nothing was lost, duplicated or re-rolled (issue 8 "Crash trials").

    python bench/crash_trials.py [--trials N] [--game paigow|baccarat|both] [--seed S] [--quick]

For each game, N times: start ``table-controller run`` on a profile derived from the sim profile
(console on stdio pipes), check the restart, then drive rounds (pai gow: ``sim button ...``
through the real DealerButtons on SimGPIO; baccarat: a simulated shoe *in this process* on a
pseudo-terminal the controller's real SerialShoe reads, so the shoe outlives the controller and
remembers which SEQs were acknowledged) while a timer sends SIGKILL after a random delay drawn
from ``random.Random(seed)``. About one start in five is instead killed during start-up (journal
verification and recovery).

After every restart:
* ``journal verify`` on the console (the running process) passes, and the process reports no
  fault;
* pai gow: every button press the console saw confirmed (its reply, then a later reply) is in
  the journal exactly once, in order, and no press is journaled that was not sent; every round has
  at most one ``paigow.drawn`` row; every number the console showed is the journaled one, and a
  round restarted in ``dealing`` shows the same number; the state recovered is the newest
  journaled one;
* baccarat: every card the shoe was told was accepted (``$ACK``, cumulative) is in the journal;
  once the shoe holds nothing unacknowledged, the journal's ``$CARD`` frames of each shoe
  session (by its session id) are exactly the cards the shoe dealt, in order (none lost, none
  twice), and a session's rows carry contiguous SEQs (none twice, none skipped: heartbeats take
  no SEQ in shoe protocol revision 3). When a shoe is used up, a
  fresh one powers up on the same port while the controller is down (its ``$HELO`` is flushed
  away when the restarted controller opens the port: docs/reliability.md, finding 9); the
  dealer confirms the new session with ``shoe resume``.

Prints the seed and the counts; exit status 1 if any check failed.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.reliability.harness import (  # noqa: E402
    Controller,
    ControllerDied,
    HarnessTimeout,
    KillTimer,
    journal_rows,
    open_journal,
    write_profile,
)

KILL_MAX_S = 2.5  # a kill lands uniformly in (0, KILL_MAX_S) after the restart checks
STARTUP_KILL_SHARE = 0.2  # share of starts killed during start-up instead
STARTUP_KILL_MAX_S = 0.8
VERIFY_TIMEOUT_S = 300.0  # console `journal verify` of a long journal (docs/journal.md)

PAIGOW_NEXT = {
    "inspection": "shuffled",
    "washing": "shuffled",
    "betting": "no_more_bets",
    "bank_style": "draw",
    "no_more_bets": "draw",
    "dealing": "dealt",
    "setting_hands": "hands_set",
    "dealer_hands": "settled",
}
PAIGOW_IN_ROUND = {"bank_style", "no_more_bets", "dealing", "setting_hands", "dealer_hands"}
BACCARAT_CARD_STATES = {"burn", "dealing", "player_third", "banker_third"}


@dataclass
class Counts:
    game: str
    counts: Counter[str] = field(default_factory=Counter)
    kill_states: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)

    def fail(self, text: str) -> None:
        self.problems.append(text)
        self.counts["violations"] += 1
        print(f"  VIOLATION [{self.game}]: {text}", flush=True)


# -- pai gow -----------------------------------------------------------------------------------


@dataclass
class PaigowSession:
    pid: int
    confirmed: list[str] = field(default_factory=list)  # presses confirmed by a later reply
    tail: list[str] = field(default_factory=list)  # sent, not confirmed when killed
    numbers: dict[int, str] = field(default_factory=dict)  # round -> number the console showed
    last_seen: tuple[int, str] | None = None
    checked: bool = False


@dataclass
class PaigowLedger:
    """What has been read of the journal so far (read incrementally: the journal grows to
    hundreds of thousands of rows over a run)."""

    seen_seq: int = 0
    draws: dict[int, list[str]] = field(default_factory=dict)
    facts: set[tuple[int, str]] = field(default_factory=set)
    last_fact: dict[int, Any] = field(default_factory=dict)  # app.start seq -> newest fact
    newest_fact: Any = None
    by_pid: dict[int, list[str]] = field(default_factory=dict)  # pid -> button presses
    pid: int = -1

    def read(self, state_dir: Path) -> None:
        j = open_journal(state_dir)
        try:
            for r in j.events(since_seq=self.seen_seq):
                self.seen_seq = r.seq
                if r.kind == "app.start":
                    self.pid = int(r.data["pid"])
                    self.last_fact[self.pid] = self.newest_fact
                given = r.data if r.kind == "paigow.input" else r.data.get("input", {})
                if r.kind.startswith("paigow.") and "button" in given:
                    # an input rides on the first row it caused (docs/journal.md)
                    self.by_pid.setdefault(self.pid, []).append(given["button"])
                if r.kind == "paigow.drawn":
                    self.draws.setdefault(int(r.round), []).append(str(r.data["record"]["number"]))
                if r.kind in PAIGOW_FACTS and "state" in r.data:
                    # a closing row's snapshot is the next round's; other fact rows are in
                    # their own round (docs/journal.md "Small rows")
                    snap = r.data.get("snapshot") or {"round_id": r.round, "state": r.data["state"]}
                    self.facts.add((int(snap["round_id"]), snap["state"]))
                    self.newest_fact = snap
        finally:
            j.close()


PAIGOW_FACTS = ("paigow.state", "paigow.drawn", "paigow.dice", "paigow.settled", "paigow.voided")


def check_paigow(
    state_dir: Path,
    sessions: list[PaigowSession],
    res: Counts,
    restarted: dict[str, str],
    ledger: PaigowLedger,
) -> None:
    checked_draws = len(ledger.draws)
    ledger.read(state_dir)
    for s in sessions[-1:]:  # earlier sessions were checked at earlier restarts
        if s.checked:
            continue
        s.checked = True
        got = ledger.by_pid.get(s.pid, [])
        n = len(s.confirmed)
        if got[:n] != s.confirmed:
            res.fail(
                f"pid {s.pid}: confirmed presses {s.confirmed[-5:]} but journal has "
                f"{got[:n][-5:]} (lost or reordered)"
            )
        extra = got[n:]
        if extra != s.tail[: len(extra)]:
            res.fail(f"pid {s.pid}: journal has presses {extra} never sent (tail {s.tail})")
        res.counts["presses journaled"] += len(got)
        for rnd, number in s.numbers.items():
            if ledger.draws.get(rnd, [None])[0] != number:
                res.fail(f"round {rnd}: console showed {number}, journal {ledger.draws.get(rnd)}")
        if s.last_seen is not None and s.last_seen not in ledger.facts:
            res.fail(f"console saw round/state {s.last_seen} that the journal does not hold (lost)")
    for rnd, numbers in list(ledger.draws.items())[max(0, checked_draws - 1) :]:
        if len(numbers) > 1:
            res.fail(f"round {rnd} drawn {len(numbers)} times: {numbers} (re-rolled)")
    res.counts["draws journaled"] = len(ledger.draws)
    # the state recovered is that of the newest fact row before this start
    snap = ledger.last_fact.get(int(restarted["_pid"]))
    if snap is not None:
        want = (str(snap["round_id"]), snap["state"])
        got_state = (restarted["round"], restarted["state"])
        if want != got_state:
            res.fail(f"restart resumed {got_state}, newest journaled state {want}")
        if snap["state"] == "dealing":
            res.counts["restarts in dealing (number shown again)"] += 1
            rnd = int(snap["round_id"])
            if restarted.get("number") != ledger.draws.get(rnd, ["?"])[0]:
                res.fail(
                    f"round {rnd} restarted showing {restarted.get('number')}, "
                    f"journal drew {ledger.draws.get(rnd)}"
                )


def drive_paigow(c: Controller, s: PaigowSession, res: Counts) -> None:
    """Press the next button, read the status, forever (until the kill)."""
    status = c.status()
    while True:
        state = status["state"]
        name = PAIGOW_NEXT.get(state)
        if name is None:
            res.fail(f"unexpected state {state}")
            return
        s.tail.append(name)
        reply = c.ask(f"sim button {name}")
        if not reply.ok:
            res.fail(f"sim button {name} -> {reply.status}")
        status = c.status()
        s.confirmed.extend(s.tail)  # a reply after the press: it was handled (FIFO queue)
        s.tail.clear()
        rnd = int(status["round"])
        s.last_seen = (rnd, status["state"])
        if status.get("number", "-") != "-":
            s.numbers[rnd] = status["number"]
        if name == "settled":
            res.counts["rounds settled"] += 1
        if name == "draw" and status["state"] == "dealing":
            res.counts["draws shown"] += 1


# -- baccarat ----------------------------------------------------------------------------------


@dataclass
class ShoeRun:
    sim: Any
    dealt: list[str] = field(default_factory=list)


def new_shoe(link: str, seed: int) -> ShoeRun:
    from drivers.sim.shoe import SimShoe

    sim = SimShoe(decks=8, seed=seed, heartbeat_s=0.5)
    sim.create_pty(link)
    sim.start()
    return ShoeRun(sim)


def last_acked(sim: Any) -> int | None:
    """The last $ACK the shoe took: one naming its own session (it ignores the others)."""
    acks = [f.seq for f in list(sim.received) if f.type == "ACK" and f.sid == sim.sid]
    return acks[-1] if acks else None


def check_baccarat(state_dir: Path, shoes: list[ShoeRun], res: Counts, settled: bool) -> None:
    # The $ACKs first, then the journal: an $ACK goes out after its row is committed, so every
    # row it names is in what is read after it (read the other way round, a row committed and
    # acknowledged in between would look missing while the controller runs).
    acks = [last_acked(shoe.sim) for shoe in shoes]
    rows = journal_rows(state_dir, kinds=["shoe.session", "shoe.frame"])
    sessions = [r.data["sid"] for r in rows if r.kind == "shoe.session"]
    if (
        sessions != [shoe.sim.sid for shoe in shoes][: len(sessions)]
        or len(sessions) < len(shoes) - 1
    ):
        res.fail(
            f"shoe sessions journaled {sessions}, shoes powered up "
            f"{[shoe.sim.sid for shoe in shoes]}"
        )
        return
    by_sid: dict[str, list[Any]] = {}
    current: list[Any] = []
    for r in rows:  # a session's rows follow its shoe.session row
        if r.kind == "shoe.session":
            current = by_sid.setdefault(r.data["sid"], [])
        current.append(r)
    for n, shoe in enumerate(shoes):
        mine = by_sid.get(shoe.sim.sid, [])
        frames = [r for r in mine if r.kind == "shoe.frame"]
        seqs = [int(r.data["seq"]) for r in frames]
        dup = [s for s, k in Counter(seqs).items() if k > 1]
        if dup:
            res.fail(f"shoe {n}: SEQs journaled twice: {dup[:10]}")
        positions = [int(r.data["seq"]) for r in mine]  # the HELO's, then every frame's
        skips = [
            (a, b) for a, b in zip(positions, positions[1:], strict=False) if (b - a) % 10000 != 1
        ]
        if skips:
            res.fail(f"shoe {n}: SEQs not contiguous in the journal: {skips[:5]}")
        cards = [r.data["fields"][0] for r in frames if r.data["type"] == "CARD"]
        if cards != shoe.dealt[: len(cards)]:
            i = (
                next(i for i, (a, b) in enumerate(zip(cards, shoe.dealt, strict=False)) if a != b)
                if any(a != b for a, b in zip(cards, shoe.dealt, strict=False))
                else len(shoe.dealt)
            )
            res.fail(
                f"shoe {n}: journal cards differ from the dealt ones at card {i}: "
                f"{cards[i : i + 3]} vs {shoe.dealt[i : i + 3]} (len {len(cards)} vs "
                f"{len(shoe.dealt)})"
            )
        if settled and shoe is shoes[-1] and len(cards) != len(shoe.dealt):
            res.fail(
                f"shoe {n}: {len(shoe.dealt)} cards dealt, {len(cards)} journaled "
                "after every frame was acknowledged"
            )
        acked = acks[n]
        if acked is not None and acked not in {int(r.data["seq"]) for r in mine}:
            res.fail(f"shoe {n}: the shoe got $ACK {acked}, the journal has no frame {acked}")
    res.counts["cards journaled"] = sum(
        1 for r in rows if r.kind == "shoe.frame" and r.data["type"] == "CARD"
    )


def drive_baccarat(
    c: Controller, shoes: list[ShoeRun], res: Counts, seen: dict[str, str]
) -> str | None:
    """Play until killed; returns 'new shoe' when the table wants a fresh shoe."""
    while True:
        status = c.status()
        state = status["state"]
        seen["state"] = state
        shoe = shoes[-1]
        if state in BACCARAT_CARD_STATES:
            if shoe.sim.status().cards_left < 1:
                return "new shoe"
            shoe.dealt += shoe.sim.deal(1)
            deadline = time.monotonic() + 10
            while not shoe.sim.wait_delivered(0.1):
                if c.proc.poll() is not None:
                    raise ControllerDied("killed while the card was in flight")
                if time.monotonic() > deadline:
                    raise HarnessTimeout("card not acknowledged within 10 s")
            res.counts["cards acknowledged"] += 1
        elif "unconfirmed" in status.get("table_faults", ""):
            # a new shoe powered up while the controller was down: the dealer confirms it
            c.ok("shoe resume")
            res.counts["new sessions confirmed (shoe resume)"] += 1
        elif state == "shuffle":
            if shoe.sim.status().cards_left < 100:
                return "new shoe"
            c.ok("sim button shuffled")
        elif state == "offering":
            c.ok("curator 1")
        elif state == "passing":
            reply = c.ask(f"curator {int(status.get('curator') or 1) % 8 + 1}")
            if not reply.ok:
                c.ok("nobody")
        elif state == "betting":
            c.ok("bet 1 banker 500")
            c.ok("sim button no_more_bets")
        elif state == "settling":
            c.ok("sim button settled")
            res.counts["coups settled"] += 1
        elif state == "halted":
            if "power-cycled" in status.get("table_faults", ""):
                res.counts["halts by a new session mid-coup (the rules)"] += 1
            else:
                res.fail(f"table halted: {status.get('table_faults')}")
            c.login()
            c.ask("clear")
        else:
            res.fail(f"unexpected state {state}")
            return None
        if c.status()["state"] == state and state not in BACCARAT_CARD_STATES:
            # a button press is handled after its reply: wait for it to land
            time.sleep(0.01)


# -- the trial loop ----------------------------------------------------------------------------


def run_game(game: str, trials: int, rng: random.Random, work: Path) -> Counts:
    res = Counts(game)
    state_dir = work / game / "state"
    shoes: list[ShoeRun] = []
    extra_env = None
    if game == "baccarat":
        link = str(work / game / "shoe")
        (work / game).mkdir(parents=True, exist_ok=True)
        shoes.append(new_shoe(link, rng.randrange(1 << 30)))
        profile = write_profile(work / game, "sim-baccarat", shoe_port=link)
    else:
        profile = write_profile(work / game, "sim-paigow")
    sessions: list[PaigowSession] = []
    ledger = PaigowLedger()
    started = time.monotonic()
    trial = 0
    try:
        while trial < trials:
            if rng.random() < STARTUP_KILL_SHARE:
                c = Controller(profile, state_dir, env=extra_env)
                timer = KillTimer(c.proc, rng.uniform(0.0, STARTUP_KILL_MAX_S))
                try:
                    c.wait_ready()
                    timer.cancel()  # too late: ready first; use it as a normal trial
                except ControllerDied:
                    res.counts["kills during start-up"] += 1
                    trial += 1
                    c.kill()
                    c.close_pipes()
                    continue
            else:
                c = Controller(profile, state_dir, env=extra_env)
                c.wait_ready()
            res.counts["restarts"] += 1
            try:
                # the console walks the whole chain at a quarter of a core: a long journal on
                # a busy machine takes longer than a reply usually may
                verdict = c.ask("journal verify", timeout=VERIFY_TIMEOUT_S)
                if not verdict.ok:
                    res.fail(f"journal verify after restart: {verdict.status}")
                else:
                    res.counts["journal verify passed"] += 1
                status = c.status()
                faults = [
                    f
                    for f in status.get("faults", "none").split("; ")
                    if f != "none" and "unconfirmed" not in f
                ]
                if faults:
                    res.fail(f"fault after restart: {status['faults']}")
                status["_pid"] = str(c.pid)
                if game == "paigow":
                    check_paigow(state_dir, sessions, res, status, ledger)
                    c.login()
                    sessions.append(PaigowSession(c.pid))
                else:
                    shoes[-1].sim.wait_delivered(3.0)
                    check_baccarat(state_dir, shoes, res, settled=shoes[-1].sim.delivered())
                    c.login()
            except (ControllerDied, HarnessTimeout) as exc:
                res.fail(f"restart checks failed: {exc}")
                c.kill()
                c.close_pipes()
                trial += 1
                continue
            delay = rng.uniform(0.0, KILL_MAX_S)
            timer = KillTimer(c.proc, delay)
            why = None
            seen: dict[str, str] = {}
            try:
                if game == "paigow":
                    drive_paigow(c, sessions[-1], res)
                else:
                    why = drive_baccarat(c, shoes, res, seen)
            except ControllerDied:
                pass
            except HarnessTimeout as exc:
                res.fail(f"timeout while driving: {exc}")
            timer.cancel()
            if timer.fired.is_set():
                res.counts["random kills"] += 1
                if game == "paigow" and sessions[-1].last_seen is not None:
                    res.kill_states[sessions[-1].last_seen[1]] += 1
                elif "state" in seen:
                    res.kill_states[seen["state"]] += 1
            c.kill()
            c.close_pipes()
            if why != "new shoe":  # a deliberate stop to swap the shoe is not a trial
                trial += 1
            if why == "new shoe":
                res.counts["shoes replaced (controller down)"] += 1
                shoes[-1].sim.wait_delivered(0.5)
                # the old shoe is unplugged; a fresh one powers up on the same port
                old = shoes[-1]
                check_baccarat(state_dir, shoes, res, settled=old.sim.delivered())
                old.sim.stop()
                shoes.append(new_shoe(str(work / game / "shoe"), rng.randrange(1 << 30)))
            if trial % 20 == 0:
                print(
                    f"  {game}: {trial}/{trials} trials, {time.monotonic() - started:.0f} s,"
                    f" {res.counts['violations']} violations",
                    flush=True,
                )
        # final check: a clean run to settle what is in flight
        c = Controller(profile, state_dir, env=extra_env)
        c.wait_ready()
        verdict = c.ask("journal verify", timeout=VERIFY_TIMEOUT_S)
        if not verdict.ok:
            res.fail(f"final journal verify: {verdict.status}")
        status = c.status()
        status["_pid"] = str(c.pid)
        if game == "paigow":
            check_paigow(state_dir, sessions, res, status, ledger)
        else:
            shoes[-1].sim.wait_delivered(5.0)
            check_baccarat(state_dir, shoes, res, settled=shoes[-1].sim.delivered())
        c.stop()
    finally:
        for shoe in shoes:
            shoe.sim.stop()
    res.counts["seconds"] = int(time.monotonic() - started)
    j = open_journal(state_dir)
    res.counts["journal rows"] = j.last_seq
    j.close()
    if game == "paigow":
        res.counts["presses confirmed"] = sum(len(s.confirmed) for s in sessions)
    return res


def report(results: list[Counts], seed: int) -> int:
    print(f"\ncrash trials, seed {seed}")
    for res in results:
        print(f"[{res.game}]")
        for key, value in sorted(res.counts.items()):
            print(f"  {key:<42} {value}")
        if res.kill_states:
            spread = ", ".join(f"{k} {v}" for k, v in sorted(res.kill_states.items()))
            print(f"  {'last state seen before a random kill':<42} {spread}")
        for p in res.problems[:20]:
            print(f"  problem: {p}")
    bad = sum(len(r.problems) for r in results)
    print(f"result: {'PASS' if not bad else 'FAIL'} ({bad} violations)")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=200, help="kills per game (default 200)")
    parser.add_argument("--game", choices=["paigow", "baccarat", "both"], default="both")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--quick", action="store_true", help="20 trials per game")
    parser.add_argument("--dir", default=None, help="parent of the working directory")
    parser.add_argument("--keep", action="store_true", help="keep the journals")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    trials = 20 if args.quick else args.trials
    print(f"crash trials: seed {seed}, {trials} trials per game", flush=True)
    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="crash-trials-", dir=args.dir))
    games = ["paigow", "baccarat"] if args.game == "both" else [args.game]
    try:
        results = [run_game(g, trials, rng, work) for g in games]
    finally:
        if args.keep:
            print(f"journals kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return report(results, seed)


if __name__ == "__main__":
    raise SystemExit(main())
