"""Draws per second of the certified RNG, with its health tests on and, for comparison, off.

    python bench/bench_rng.py [--draws N] [--hwrng PATH]

"on" is ``CertifiedRng.draw(1, 8)`` exactly as the table calls it: the kernel CSPRNG, the RCT and
APT on every byte (and, with --hwrng or where /dev/hwrng exists and is readable, the hardware
generator read and tested alongside every draw). "off" is the same scaling over ``os.urandom``
with no health tests, which production code cannot select. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.rng.certified import CertifiedRng, outcomes_from_raw  # noqa: E402
from controller.rng.health import BYTES_PER_YEAR_BOUND, OS_SOURCE_PARAMS, HealthMonitor  # noqa: E402


def _rate(label: str, draws: int, fn: object) -> float:
    assert callable(fn)
    start = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    rate = draws / elapsed
    print(f"{label:<52} {rate:>12,.0f} draws/s  ({elapsed * 1e6 / draws:7.2f} us/draw)")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=200_000)
    parser.add_argument("--hwrng", metavar="PATH", default="/dev/hwrng")
    args = parser.parse_args()
    n = args.draws

    print(f"certified RNG, draw(1, 8), {n:,} draws per figure, python {sys.version.split()[0]}")
    rng = CertifiedRng(hwrng_path=None)
    rng.self_test()
    on = _rate("health tests on (kernel CSPRNG)", n, lambda: [rng.draw(1, 8) for _ in range(n)])

    def off() -> None:
        for _ in range(n):
            # The same scaling with no health tests and no lock: for 1..8, k = 3 and n = 2**3,
            # so no value is ever rejected.
            (os.urandom(1)[0] & 7) + 1

    _rate("health tests off (same scaling over os.urandom)", n, off)

    monitor = HealthMonitor("bench", OS_SOURCE_PARAMS)
    data = os.urandom(n)
    _rate("RCT + APT alone, per byte (bulk feed)", n, lambda: monitor.feed(data))
    _rate("replay of raw bytes into outcomes", n, lambda: outcomes_from_raw(data))

    if args.hwrng and os.access(args.hwrng, os.R_OK):
        hw = CertifiedRng(hwrng_path=args.hwrng)
        hw.self_test()
        m = max(1000, n // 20)
        _rate(
            f"health tests on, plus {args.hwrng} tested",
            m,
            lambda: [hw.draw(1, 8) for _ in range(m)],
        )
    else:
        print(f"{args.hwrng}: not readable here, hardware generator figure skipped")

    per_year = on * 365.25 * 86400  # one byte per 1-8 draw
    margin = BYTES_PER_YEAR_BOUND / per_year
    print(
        f"continuous drawing at the 'on' rate: {per_year:.2e} bytes/year per monitor; "
        f"docs/rng.md bound: {BYTES_PER_YEAR_BOUND:.0e} ({margin:.0f}x)"
    )


if __name__ == "__main__":
    main()
