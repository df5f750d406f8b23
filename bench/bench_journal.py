"""Journal throughput with synchronous=FULL on this machine, and bytes per event.

Prints: appends per second (each one synced before it returns, as the controller requires),
the journal's on-disk bytes per event, and the time to verify the chain per 10,000 rows.
Bytes per *round* are printed by bench/run from real simulated rounds.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.journal.store import Journal  # noqa: E402
from controller.journal.verify import check_chain  # noqa: E402


def _disk_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def measure(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        db = Path(tmp) / "j.sqlite"
        j = Journal(db)
        sample = {"button": "draw", "state": "betting", "round": 123, "value": 7, "raw": "a1b2c3d4"}
        t0 = time.perf_counter()
        for i in range(n):
            j.append("paigow.input", sample, round_id=i // 10)
        elapsed = time.perf_counter() - t0
        j._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = _disk_bytes(db)
        t1 = time.perf_counter()
        ok = check_chain(j).ok
        verify_s = time.perf_counter() - t1
        j.close()
    return {
        "appends_per_s": n / elapsed,
        "bytes_per_event": size / n,
        "verify_s_per_10k": verify_s * 10_000 / n,
        "verified": float(ok),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("-n", type=int, default=2000)
    args = parser.parse_args(argv)
    n = 300 if args.quick else args.n
    r = measure(n)
    print(f"journal appends/s (synchronous=FULL, fsync each): {r['appends_per_s']:.0f}")
    print(f"journal bytes/event on disk:                      {r['bytes_per_event']:.0f}")
    print(f"journal verify time per 10,000 rows:              {r['verify_s_per_10k']:.3f} s")


if __name__ == "__main__":
    main()
