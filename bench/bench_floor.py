"""The cost of meters and coded events per round (issue: "bench/run shows the cost of meters and
events per round"): bytes journaled, time to fold, bytes published.

    python bench/bench_floor.py [--rounds N]

Deals N pai gow rounds with ``table-controller simulate`` (the real table, a fresh journal), then
measures on that journal: the rows and bytes per round the journal holds (meters and events add
none: both are read from the rows; the install log adds one row per start), the time the meter
fold and the event reader take per round (the feed's publisher thread pays it, never the loop),
the size of the meters message published after each round, and the fold of the whole journal
(what console ``meters`` and ``table-controller meters`` cost). Prints one line per figure;
asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.floor.events import EventReader  # noqa: E402
from controller.floor.feed import FloorFeed  # noqa: E402
from controller.floor.meters import MeterFold, export_rows  # noqa: E402


def measure(rounds: int) -> dict[str, float]:
    """The figures (see the module docstring) over ``rounds`` simulated rounds."""
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        state = Path(tmp) / "state"
        profile = str(ROOT / "hw_profiles" / "sim-paigow.toml")
        subprocess.run(
            [sys.executable, "-m", "controller", "simulate", "--profile", profile,
             "--rounds", str(rounds), "--state-dir", str(state)],
            cwd=ROOT, check=True, capture_output=True, timeout=1800,
        )  # fmt: skip
        export = subprocess.run(
            [sys.executable, "-m", "controller", "journal", "export", "--state-dir", str(state)],
            cwd=ROOT, check=True, capture_output=True, text=True, timeout=600,
        ).stdout.splitlines()  # fmt: skip
    lines = [json.loads(x) for x in export]
    rows = list(export_rows(export))
    release = [len(json.dumps(x["data"])) for x in lines if x["kind"] == "program.release"]
    settled = max(1, sum(1 for r in rows if r.kind == "paigow.settled"))
    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        fold, reader = MeterFold(), EventReader()
        for r in rows:
            fold.add(r)
            reader.events(r)
        samples.append(time.perf_counter() - t0)
    whole = statistics.median(samples)
    feed = FloorFeed("bench", lambda: _NoRows(), None)
    published = 0
    t0 = time.perf_counter()
    for x in lines:
        for _, payload in feed.after_row(x):
            published += len(payload)
    feed_s = time.perf_counter() - t0
    return {
        "rounds": settled,
        "rows": len(rows),
        "release_row_bytes": statistics.median(release) if release else 0,
        "fold_us_per_round": whole / settled * 1e6,
        "feed_us_per_round": feed_s / settled * 1e6,
        "published_bytes_per_round": published / settled,
        "whole_fold_ms": whole * 1000,
    }


def measure_big(rows: int) -> dict[str, float]:
    took = fold_from_sqlite(rows)
    return {"rows": rows, "seconds": took, "us_per_row": took / rows * 1e6}


def fold_from_sqlite(rows: int) -> float:
    """Seconds to fold a journal of ``rows`` pai gow rows read from SQLite (what console
    ``meters`` and the feed's first fold after a start pay; on tmpfs: the read, not the disk)."""
    from controller.floor.meters import fold_journal
    from controller.journal.store import Journal

    base = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(prefix="bench-fold-", dir=base) as tmp:
        journal = Journal(Path(tmp) / "journal.sqlite")
        kinds = ("paigow.input", "paigow.state", "paigow.drawn", "paigow.state", "paigow.state")
        n = 0
        while n < rows:
            with journal.transaction():
                for i in range(min(1000, rows - n)):
                    kind = kinds[i % 5] if i % 6 else "paigow.settled"
                    data = {"record": {"number": i % 8 + 1}, "pad": "x" * 100}
                    journal.append(kind, data, round_id=n // 6)
                    n += 1
        reader = journal.reader()
        t0 = time.perf_counter()
        fold_journal(reader.events(), None)
        took = time.perf_counter() - t0
        reader.close()
        journal.close()
    return took


class _NoRows:
    """The publisher's reader for a feed that starts at the journal's first row."""

    def events(self, kinds: object = None, since_seq: int = 0, round_id: int | None = None) -> Any:
        return iter(())

    def close(self) -> None:
        pass


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=300)
    m = measure(ap.parse_args().rounds)
    print(f"rounds dealt                         {m['rounds']:.0f} ({m['rows']:.0f} rows)")
    print("journal bytes per round added        0 (meters and events are read from the rows)")
    print(f"install log row per start (data)     {m['release_row_bytes']:.0f} B")
    print(f"meter fold + events per round        {m['fold_us_per_round']:.1f} us")
    print(f"feed messages per round (publisher)  {m['feed_us_per_round']:.1f} us")
    print(f"bytes published per round            {m['published_bytes_per_round']:.0f} B")
    print(f"whole journal fold                   {m['whole_fold_ms']:.1f} ms")
    big = measure_big(100_000)
    print(
        f"fold of {big['rows']:,.0f} rows from SQLite       {big['seconds']:.2f} s"
        f" ({big['us_per_row']:.1f} us a row)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
