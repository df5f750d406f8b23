"""The journal's costs (issue 13 "Figures"): bytes per round, bytes written to storage per round,
rows an idle table adds, loop stalls from journal work on a 10^6-row journal, recall, start-up.

    python bench/bench_journal_cost.py [--rows N] [--dir DIR] [--quick]

Everything runs the real Application in this process (its loop on a thread), on the real
journal in DIR (default: the system's temp dir; on a table, a directory on its own storage: the
storage figures are what the SD card sees). Buttons are pressed on the simulated GPIO as a
dealer's finger would (the real DealerButtons driver posts the press), so a pai gow round is six
loop events. Storage bytes come from /proc/self/io ``write_bytes`` (what this process sent to
the block layer, page cache flushes included), with a checkpoint at the end so the WAL's pages
copied into the database count too. Prints one line per figure; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.app import Application  # noqa: E402
from controller.config.profile import load_profile  # noqa: E402
from controller.events import Call, Shutdown  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAIGOW = ROOT / "hw_profiles" / "sim-paigow.toml"
BACCARAT = ROOT / "hw_profiles" / "sim-baccarat.toml"
ROUND = ("shuffled", "no_more_bets", "draw", "dealt", "hands_set", "settled")


def write_bytes() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    return 0


def journal_size(state: Path) -> int:
    return sum(p.stat().st_size for p in state.glob("journal.sqlite*"))


def checkpoint(state: Path, mode: str = "PASSIVE") -> None:
    db = sqlite3.connect(state / "journal.sqlite", timeout=10)
    try:
        db.execute(f"PRAGMA wal_checkpoint({mode})")
    finally:
        db.close()


class Running:
    """An Application with its loop on a thread."""

    def __init__(self, profile: Path, state: Path) -> None:
        self.app = Application(load_profile(profile), state, console_port="none")
        self.app.start()
        self.thread = threading.Thread(target=self.app.run, name="loop", daemon=True)
        self.thread.start()

    def call(self, fn: Callable[[], Any]) -> Any:
        return self.app.call(fn, timeout=60)

    def press(self, name: str) -> None:
        gpio, pins = self.app.devices.gpio, self.app.devices.table.sim.buttons.pins
        gap = self.app.profile.buttons.bounce_ms + 1
        gpio.drive(pins[name], 0)
        gpio.clock.advance(gap)
        gpio.drive(pins[name], 1)
        gpio.clock.advance(gap)
        self.call(lambda: None)  # the press has been handled (FIFO queue)

    def stop(self) -> None:
        self.app.post(Shutdown("bench"))
        self.thread.join(30)
        self.app.close()


def paigow_rounds(work: Path, rounds: int) -> dict[str, float]:
    """Bytes per round in the journal file and written to storage, rows and heads per round."""
    state = work / "pg-cost"
    run = Running(PAIGOW, state)
    try:
        for _ in range(5):
            for name in ROUND:
                run.press(name)
        assert run.app.trust.notary.wait_idle(10)
        run.call(lambda: run.app.trust.store_heads())
        checkpoint(state, "TRUNCATE")
        size0, written0, seq0 = journal_size(state), write_bytes(), run.app.journal.last_seq
        heads0 = len(run.app.journal.heads_after(0, 10**6))
        for _ in range(rounds):
            for name in ROUND:
                run.press(name)
        assert run.app.trust.notary.wait_idle(10)
        run.call(lambda: run.app.trust.store_heads())
        checkpoint(state, "PASSIVE")  # the worker's checkpoint, counted
        written = write_bytes() - written0
        checkpoint(state, "TRUNCATE")
        size = journal_size(state) - size0
        rows = run.app.journal.last_seq - seq0
        heads = len(run.app.journal.heads_after(0, 10**6)) - heads0
    finally:
        run.stop()
    return {
        "bytes_per_round": size / rounds,
        "written_per_round": written / rounds,
        "rows_per_round": rows / rounds,
        "heads_per_round": heads / rounds,
    }


def idle_baccarat(work: Path, seconds: float) -> float:
    """Rows an idle baccarat table (shoe connected, heartbeats) adds per hour."""
    state = work / "bac-idle"
    run = Running(BACCARAT, state)
    try:
        time.sleep(3.0)  # the shoe's HELO and the start-up rows
        seq0, t0 = run.call(lambda: run.app.journal.last_seq), time.monotonic()
        time.sleep(seconds)
        rows = run.call(lambda: run.app.journal.last_seq) - seq0
        elapsed = time.monotonic() - t0
    finally:
        run.stop()
    return rows / elapsed * 3600


def build_big_journal(work: Path, rows: int) -> Path:
    """A pai gow table's journal with ``rows`` rows: a real round played on the table, copied
    round after round (its six rows, round ids moved on), with a signed head every 2,000 rounds
    and the anchor, as a running table leaves them (a head at least every minute)."""
    state = work / f"big-{rows}"
    if (state / "journal.sqlite").exists():
        return state
    run = Running(PAIGOW, state)
    try:
        for _ in range(2):
            for name in ROUND:
                run.press(name)
        template = run.call(
            lambda: [
                (r.kind, r.data, r.round)
                for r in run.app.journal.events(since_seq=run.app.journal.last_seq - len(ROUND))
            ]
        )
    finally:
        run.stop()
    from controller.journal.anchor import Anchor
    from controller.journal.heads import SignedHead, canonical_head
    from controller.journal.signer import FileSigner
    from controller.journal.store import Journal

    signer = FileSigner.load(state / "journal-key.pem")
    journal = Journal(state / "journal.sqlite", autocheckpoint=True)
    anchor = Anchor(state / "journal.anchor")
    table = journal.meta("table") or ""
    rnd = int(template[-1][2]) + 1
    while journal.last_seq < rows:
        with journal.transaction():
            for _ in range(2000):
                for kind, data, _ in template:
                    body = json.loads(json.dumps(data))
                    if "snapshot" in body:
                        body["record"]["round_id"] = rnd
                        body["snapshot"]["round_id"] = rnd + 1
                        body["snapshot"]["record"]["round_id"] = rnd + 1
                    journal.append(kind, body, rnd)
                rnd += 1
                if journal.last_seq >= rows:
                    break
        seq, digest = journal.head()
        ts = time.time_ns()
        head = {"table": table, "seq": seq, "hash": digest, "ts": ts}
        signed = SignedHead(
            table, seq, digest, ts, signer.sign(canonical_head(head)), signer.key_id
        )
        journal.add_heads([signed])
        anchor.append(signed)
    journal.close()
    checkpoint(state, "TRUNCATE")
    return state


def journal_start_ms(state: Path, runs: int = 5) -> float:
    """Median ms of the journal's part of a start (open with its signer, the start-up check,
    the table's recovery), in-process: what a long journal could add to start to READY=1."""
    from controller.config.profile import load_profile as load
    from controller.journal.trust import JournalTrust, open_journal
    from controller.tables.paigow.table import SNAPSHOT_KINDS

    settings = load(PAIGOW).journal
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        opened = open_journal(settings, lambda name: state / name, "sim-paigow")
        trust = JournalTrust(
            opened,
            settings,
            lambda name: state / name,
            post=lambda fn: None,
            raise_fault=lambda text: None,
        )
        verdict = trust.check_at_start()
        opened.journal.last(SNAPSHOT_KINDS)
        samples.append((time.perf_counter() - t0) * 1000)
        assert verdict.ok, verdict.problems
        opened.signer.close()
        opened.journal.close()
    return statistics.median(samples)


class StallProbe:
    """Posts an empty Call every ``every_s`` and records how late the loop ran each one."""

    def __init__(self, app: Application, every_s: float = 0.005) -> None:
        self.app = app
        self.every_s = every_s
        self.delays: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            done: queue.SimpleQueue[float] = queue.SimpleQueue()
            posted = time.perf_counter()
            self.app.post(
                Call(lambda: None, lambda _r, p=posted, box=done: box.put(time.perf_counter() - p))
            )
            try:
                self.delays.append(done.get(timeout=30))
            except queue.Empty:
                self.delays.append(30.0)
            self._stop.wait(self.every_s)

    def __enter__(self) -> StallProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(35)

    @property
    def longest_ms(self) -> float:
        return max(self.delays, default=0.0) * 1000

    @property
    def p99_ms(self) -> float:
        ordered = sorted(self.delays) or [0.0]
        return ordered[int(0.99 * (len(ordered) - 1))] * 1000


def stalls_on_big_journal(state: Path, seconds: float) -> dict[str, float]:
    """The longest loop stall (ms) while: idle, the scrub runs, selftest, console journal
    verify, fault clear, recall 10; and recall 10's own time on the loop."""
    run = Running(PAIGOW, state)
    app = run.app
    out: dict[str, float] = {}
    try:
        run.call(lambda: app.console_execute("passwd 13572468", "bench"))
        with StallProbe(app) as probe:
            time.sleep(min(2.0, seconds))
        out["idle"] = probe.longest_ms
        with StallProbe(app) as probe:
            app.trust.maintenance.scrub_now()
            time.sleep(seconds)
        status = app.trust.maintenance.status
        out["scrub"] = probe.longest_ms
        out["scrub_p99"] = probe.p99_ms
        out["scrub_rows_per_s"] = status.rows_done / seconds
        t0 = time.perf_counter()
        run.call(lambda: app._console()._journal_selftest())
        out["selftest (its journal part)"] = (time.perf_counter() - t0) * 1000
        for command in ("selftest", "journal verify", "fault clear", "recall 10"):
            with StallProbe(app) as probe:
                t0 = time.perf_counter()
                run.call(lambda c=command: app.console_execute(c, "bench"))
                took = time.perf_counter() - t0
                time.sleep(min(seconds, 3.0))
            out[command] = max(probe.longest_ms, took * 1000)
        samples = []
        for _ in range(20):
            t0 = time.perf_counter()
            run.call(lambda: app.console_execute("recall 10", "bench"))
            samples.append((time.perf_counter() - t0) * 1000)
        out["recall_ms"] = statistics.median(samples)
    finally:
        run.stop()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--dir", default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--stalls",
        default=None,
        metavar="STATE_DIR",
        help="only the loop stalls on this journal, as one JSON line (bench/run"
        " runs it in a fresh process: its own heap, not the bench's)",
    )
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args(argv)
    if args.stalls:
        print(json.dumps(stalls_on_big_journal(Path(args.stalls), args.seconds)))
        return
    with tempfile.TemporaryDirectory(prefix="bench-journal-cost-", dir=args.dir) as tmp:
        work = Path(tmp)
        r = paigow_rounds(work, 30 if args.quick else args.rounds)
        print(
            f"pai gow: {r['bytes_per_round']:.0f} B/round in the journal,"
            f" {r['written_per_round']:.0f} B/round written to storage,"
            f" {r['rows_per_round']:.1f} rows and {r['heads_per_round']:.1f} heads/round"
        )
        print(f"idle baccarat: {idle_baccarat(work, 10 if args.quick else 30):.0f} rows/hour")
        rows = 100_000 if args.quick else args.rows
        t0 = time.perf_counter()
        big = build_big_journal(work, rows)
        print(
            f"built a {rows:,}-row journal in {time.perf_counter() - t0:.0f} s"
            f" ({journal_size(big) / 1e6:.0f} MB)"
        )
        for key, value in stalls_on_big_journal(big, 5 if args.quick else 10).items():
            print(f"  {key}: {value:.1f}")
    os.sync()


if __name__ == "__main__":
    main()
