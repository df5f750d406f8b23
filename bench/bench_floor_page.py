"""The floor page (``table-controller floor --serve``) with a 1,000-table floor.

    python bench/bench_floor_page.py [--tables 1000] [--changes 50] [--seconds 20]

A SQLite store is filled as a collector would leave it (every table 12 rows of a pai gow round
with its states, a signed head, an ``online`` status; a few forked, a few with alarms, a
collector holding the broker). Figures:

* the page server's read of the store: the first snapshot (every table's newest rows read) and
  the following ones (only tables whose rows moved are read again), median of 10;
* in Debian's headless Chromium (tests/services/chromium.py): navigation to the first drawn
  page of 100 rows, and the draw time (filter, sort, the 100 rows and their layout) of the
  first draw and of every draw while ``--changes`` tables a second get a new row for
  ``--seconds`` s;
* the event stream's bytes: the first (whole floor) event and the following (changed tables).

Prints one line per figure; asserts nothing.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.feed.floorpage import FloorPage, Snapshots  # noqa: E402
from controller.feed.store import Store, TableRecord  # noqa: E402

SITE = "site1"
STATES = ("betting", "no_more_bets", "dealing", "setting_hands", "dealer_hands", "settling")


def fill(store: Store, tables: int) -> list[TableRecord]:
    now = time.time_ns()
    recs = []
    for n in range(tables):
        name = f"table-{n:04d}"
        for seq in range(1, 13):
            kind = "paigow.settled" if seq == 12 else "paigow.moved"
            data = {"state": STATES[seq % len(STATES)]} if seq < 12 else {"record": {}}
            store.add_row(
                SITE,
                name,
                {
                    "seq": seq,
                    "ts": now,
                    "boot": "b",
                    "mono": seq,
                    "kind": kind,
                    "round": 1,
                    "data": data,
                    "prev": "0" * 64,
                    "hash": f"{seq:064x}",
                },
                now,
            )
        rec = TableRecord(
            SITE, name, 12, f"{12:064x}", 12, f"{12:064x}", 12, 1, now, now, "online", now
        )
        if n % 200 == 7:
            rec.forked_ns, rec.forked_seq = now, 9
        store.save_table(rec)
        if n % 50 == 3:
            store.add_alarm(now, SITE, name, "gap", "rows 13-20 missing")
        recs.append(rec)
    store.set_health("tc-collector-site1", SITE, True, now)
    store.commit()
    return recs


def events(url: str, count: int) -> list[int]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("GET", "/events")
    resp = conn.getresponse()
    sizes = []
    while len(sizes) < count:
        line = resp.fp.readline()
        if line.startswith(b"data: "):
            sizes.append(len(line))
    conn.close()
    return sizes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=1000)
    ap.add_argument("--changes", type=int, default=50, help="tables given a new row each second")
    ap.add_argument("--seconds", type=float, default=20.0)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tc-floor-bench-"))
    url = f"sqlite:///{work / 'collector.sqlite'}"
    store = Store.open(url)
    t0 = time.perf_counter()
    recs = fill(store, args.tables)
    print(f"store filled: {args.tables} tables, {time.perf_counter() - t0:.1f} s")

    reader = Store.open(url)
    snaps = Snapshots(reader, SITE)
    t0 = time.perf_counter()
    snaps.build()
    cold = time.perf_counter() - t0
    warm = []
    for _ in range(10):
        t0 = time.perf_counter()
        snaps.build()
        reader.rollback()
        warm.append(time.perf_counter() - t0)
    print(f"store read, first snapshot: {cold * 1000:.0f} ms")
    print(f"store read, next snapshots (median of 10): {statistics.median(warm) * 1000:.0f} ms")
    reader.close()

    page = FloorPage(url, ("127.0.0.1", 0), None, site=SITE)
    page.start()
    stop = threading.Event()

    def play() -> None:
        """``--changes`` tables a second get their next row (as a collector would store it)."""
        n = 0
        while not stop.wait(1.0):
            now = time.time_ns()
            for _ in range(args.changes):
                rec = recs[n % len(recs)]
                n += 1
                rec.frontier_seq += 1
                rec.last_seen_ns = now
                store.add_row(
                    SITE,
                    rec.table,
                    {
                        "seq": rec.frontier_seq,
                        "ts": now,
                        "boot": "b",
                        "mono": 1,
                        "kind": "paigow.moved",
                        "round": 2,
                        "data": {"state": "dealing"},
                        "prev": "0" * 64,
                        "hash": f"{rec.frontier_seq:064x}",
                    },
                    now,
                )
                store.save_table(rec)
            store.set_health("tc-collector-site1", SITE, True, now)
            store.commit()

    try:
        sizes = events(page.url, 1)
        print(f"event stream: first event (whole floor) {sizes[0]:,} B")
        try:
            from tests.services.chromium import ChromiumBrowser
        except ImportError:
            print("browser: skipped (tests/services missing)")
            return 0
        try:
            browser = ChromiumBrowser.create()
        except FileNotFoundError as exc:
            print(f"browser: skipped ({exc})")
            return 0
        try:
            driver = browser.new_driver(width=1600, height=900)
            driver.get(page.url + "/")
            deadline = time.monotonic() + 60
            while driver.execute_script("return window.floorStats.firstAt") is None:
                if time.monotonic() > deadline:
                    print("browser: the page never drew")
                    return 1
                time.sleep(0.05)
            stats = driver.execute_script("return window.floorStats")
            print(
                f"browser ({browser.version}): navigation to the first drawn page"
                f" {stats['firstAt']:.0f} ms, its draw {stats['firstMs']:.1f} ms"
            )
            driver.execute_script("window.floorStats.samples = []")
            player = threading.Thread(target=play, daemon=True)
            player.start()
            sizes = events(page.url, 1 + int(args.seconds // 2))
            time.sleep(max(0.0, args.seconds - (len(sizes) - 1)))
            stop.set()
            player.join(5)
            stats = driver.execute_script("return window.floorStats")
            draws = sorted(stats["samples"])
            if draws:
                p95 = draws[min(len(draws) - 1, int(len(draws) * 0.95))]
                print(
                    f"browser: {len(draws)} draws while {args.changes} tables/s changed:"
                    f" median {statistics.median(draws):.1f} ms, p95 {p95:.1f} ms,"
                    f" max {draws[-1]:.1f} ms"
                )
            later = sizes[1:]
            if later:
                print(
                    f"event stream: following events (changed tables) median"
                    f" {statistics.median(later):,.0f} B, max {max(later):,} B"
                )
            print(json.dumps({"tables": args.tables, "changes": args.changes}))
        finally:
            browser.quit_all()
    finally:
        stop.set()
        page.close()
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
