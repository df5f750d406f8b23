"""Baccarat table latency: from the last byte of a ``$CARD`` frame written on a pseudo-terminal
to the controller's decision about that card being journaled (synced), through the real
Application loop, the real SerialShoe reader and a ``synchronous=FULL`` journal in a temp dir.

    python bench/bench_baccarat_table.py [--shoes N] [--dir DIR] [--integrity SHOES] [--idle N]

The bench plays the shoe itself on the master end of a pty (no simulator thread in the way):
it writes one frame, notes the time the write returned, and waits for the table's decision row
(``baccarat.card`` or ``baccarat.burn``), timed by a journal listener on the loop thread. It
answers nothing but drains the controller's ``$ACK``s. Target: median and 99th percentile under
5 ms. ``--integrity`` instead simulates shuffled shoes for the unshuffled-sequence alarm's
false-alarm rates (docs/baccarat-table.md). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import select
import statistics
import sys
import tempfile
import threading
import time
import tty
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.app import Application  # noqa: E402
from controller.config.profile import load_profile  # noqa: E402
from controller.events import Shutdown  # noqa: E402
from controller.games import baccarat  # noqa: E402
from controller.journal.chain import Row  # noqa: E402
from controller.tables.baccarat.integrity import (
    RANK_RUN_ALARM,
    REPEAT_WINDOW_ALARM,
    SUIT_RUN_ALARM,
    expected_alarm_rate,
    shuffled_shoe_alarm_rates,
)
from drivers.shoe_protocol import REVISION, encode  # noqa: E402

SID = "BE4C7AB1"  # the bench shoe's session

PROFILE = Path(__file__).resolve().parents[1] / "hw_profiles" / "sim-baccarat.toml"
DECISIONS = ("baccarat.card", "baccarat.burn", "baccarat.irregularity")
WAIT_S = 5.0


class PtyShoe:
    """The shoe's end of a pty: writes frames, drains whatever the controller sends."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self.seq = 0
        self._stop = threading.Event()
        self._drain = threading.Thread(target=self._run, daemon=True)
        self._drain.start()

    def send(self, ftype: str, *fields: str) -> int:
        """Write one frame; return the time (perf_counter_ns) its last byte was written."""
        frame = encode(ftype, self.seq, SID, *fields)
        self.seq = (self.seq + 1) % 10000
        view = memoryview(frame)
        while view:
            view = view[os.write(self.master, view) :]
        return time.perf_counter_ns()

    def _run(self) -> None:
        while not self._stop.is_set():
            if select.select([self.master], [], [], 0.05)[0]:
                try:
                    os.read(self.master, 4096)
                except OSError:
                    return

    def close(self) -> None:
        self._stop.set()
        self._drain.join(1.0)
        os.close(self.master)
        os.close(self.slave)


def latency(shoes: int, state_dir: Path, shoe: PtyShoe | None = None) -> list[float]:
    """``shoe``: the shoe's end to play (bench/bench_shoe_link.py's puts traffic beside the
    cards on the line); a quiet one by default. It is closed here."""
    shoe = shoe or PtyShoe()
    base = load_profile(PROFILE)
    assert base.shoe is not None
    profile = dataclasses.replace(base, shoe=dataclasses.replace(base.shoe, port=shoe.path))
    app = Application(profile, state_dir, console_port="none")
    decided: list[int] = []
    cond = threading.Condition()

    def listener(entry: Row) -> None:
        if entry.kind in DECISIONS:
            with cond:
                decided.append(time.perf_counter_ns())
                cond.notify_all()

    app.journal.add_listener(listener)
    app.start()
    loop = threading.Thread(target=app.run, daemon=True)
    loop.start()
    table: Any = app.table

    def call(*words: str) -> Any:
        return app.call(lambda: table.action(words[0], list(words[1:]), "bench"), WAIT_S)

    def state() -> str:
        return str(app.call(lambda: table.state, WAIT_S))

    def wait_state(not_in: tuple[str, ...]) -> None:
        deadline = time.monotonic() + WAIT_S
        while state() in not_in:
            if time.monotonic() > deadline:
                raise TimeoutError(f"table stuck in {state()}")
            time.sleep(0.001)

    samples: list[float] = []

    def card(code: str) -> None:
        with cond:
            before = len(decided)
        sent = shoe.send("CARD", code)
        with cond:
            if not cond.wait_for(lambda: len(decided) > before, WAIT_S):
                raise TimeoutError(f"no decision for {code}")
            samples.append((decided[before] - sent) / 1e6)

    try:
        shoe.send("HELO", "BENCH", "2.0", REVISION)
        deadline = time.monotonic() + WAIT_S
        while app.call(lambda: app.journal.last(["shoe.session"]), WAIT_S) is None:
            if time.monotonic() > deadline:
                raise TimeoutError("the HELO was not journaled")
            time.sleep(0.01)
        # where the coups start: bench/run reports the journal's growth from here per coup
        START.update(bytes=journal_bytes(state_dir), rows=app.journal.last_seq)
        rng = random.Random(1)
        for _ in range(shoes):
            cards = [c.code for c in baccarat.shoe_cards(8)]
            rng.shuffle(cards)
            it = iter(cards[:-16])
            call("sim", "button", "shuffled")
            wait_state(("shuffle",))
            while state() == "burn":
                card(next(it))
            call("curator", "1")
            for code in it:
                if state() == "betting":
                    call("sim", "button", "no_more_bets")
                    wait_state(("betting",))
                card(code)
                if state() == "settling":
                    call("sim", "button", "settled")
                    wait_state(("settling",))
                    if state() == "passing":  # (h)(2): never back to the last curator
                        held = int(str(app.call(lambda: table.status()["curator"], WAIT_S)))
                        call("curator", str(held % 8 + 1))
            if state() in ("dealing", "player_third", "banker_third", "betting", "settling"):
                call("void", "bench", "end")
    finally:
        app.post(Shutdown("bench"))
        loop.join(WAIT_S)
        app.close()
        shoe.close()
    return samples


#: The journal's size and last row when the first shoe starts (set by :func:`latency`).
START: dict[str, int] = {}


def journal_bytes(state_dir: Path) -> int:
    """The journal's files after a full checkpoint (the WAL folded into the database)."""
    import sqlite3

    con = sqlite3.connect(state_dir / "journal.sqlite", timeout=10)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    return sum(p.stat().st_size for p in state_dir.glob("journal.sqlite*"))


def idle_rows(state_dir: Path, beats: int = 600, period_s: float = 0.02) -> tuple[int, int]:
    """An idle table (no shoe in play, nothing dealt) and a simulated shoe beating every
    ``period_s``: the journal rows written while ``beats`` heartbeats arrive, after the start.
    Returns (heartbeats, rows): at 1 Hz, rows per 3,600 heartbeats are rows per hour."""
    from drivers.sim.shoe import SimShoe

    sim = SimShoe(decks=8, seed=3, heartbeat_s=period_s)
    link = sim.create_pty(str(state_dir / "shoe"))
    base = load_profile(PROFILE)
    assert base.shoe is not None
    profile = dataclasses.replace(base, shoe=dataclasses.replace(base.shoe, port=link))
    app = Application(profile, state_dir / "state", console_port="none")
    app.start()
    loop = threading.Thread(target=app.run, daemon=True)
    loop.start()
    try:
        sim.start()
        deadline = time.monotonic() + WAIT_S
        while app.journal.last(["shoe.session"]) is None:  # the start's rows are not idle
            if time.monotonic() > deadline:
                raise TimeoutError("no shoe session")
            time.sleep(0.01)
        time.sleep(0.5)
        first, rows_before = sim.status().heartbeats, app.journal.last_seq
        while sim.status().heartbeats - first < beats:
            time.sleep(period_s)
        rows = app.journal.last_seq - rows_before
        return beats, rows
    finally:
        app.post(Shutdown("bench"))
        loop.join(WAIT_S)
        app.close()
        sim.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shoes", type=int, default=1)
    parser.add_argument("--dir", default=None, help="parent directory of the temp state dir")
    parser.add_argument(
        "--integrity",
        type=int,
        default=0,
        metavar="SHOES",
        help="simulate SHOES shuffled shoes for the alarm thresholds instead",
    )
    parser.add_argument(
        "--idle",
        type=int,
        default=0,
        metavar="BEATS",
        help="count the rows an idle table journals while BEATS heartbeats"
        " arrive (50 a second) instead",
    )
    args = parser.parse_args(argv)
    if args.idle:
        with tempfile.TemporaryDirectory(prefix="bench-idle-", dir=args.dir) as tmp:
            beats, rows = idle_rows(Path(tmp), args.idle)
        print(
            f"idle table: {rows} journal rows while {beats} heartbeats arrived:"
            f" {rows * 3600 / beats:.0f} rows per hour of 1 Hz heartbeats"
        )
        return 0
    if args.integrity:
        start = time.perf_counter()
        rates = shuffled_shoe_alarm_rates(
            args.integrity,
            suit_levels=(7, 8, 9, 10, SUIT_RUN_ALARM),
            rank_levels=(5, 6, 7, RANK_RUN_ALARM),
            window_levels=(3, 4, 5, REPEAT_WINDOW_ALARM),
        )
        print(f"{args.integrity} shuffled 8-deck shoes in {time.perf_counter() - start:.1f} s")
        print(f"{'level':<12} {'simulated':>10} {'formula':>10}")
        for key, share in rates.items():
            kind, level = key.split(">=")
            print(f"{key:<12} {share:>10.3g} {expected_alarm_rate(kind, int(level)):>10.3g}")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-baccarat-", dir=args.dir) as tmp:
        samples = latency(args.shoes, Path(tmp))
    samples.sort()
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    print(
        f"$CARD last byte -> decision journaled (synchronous=FULL, {args.dir or 'default tmp'}):"
        f" {len(samples)} cards"
    )
    print(
        f"  median {statistics.median(samples):.3f} ms   p99 {p99:.3f} ms"
        f"   max {samples[-1]:.3f} ms   target < 5 ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
