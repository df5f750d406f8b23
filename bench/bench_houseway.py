"""Time the house way over every four-tile hand, and compare over every pair of two-tile hands.

    python bench/bench_houseway.py

The 32-tile set has C(32, 4) = 35,960 four-tile selections (8,130 distinct pip patterns). The
house way is computed for each of the 35,960, first with an empty cache (every pattern decided
once, the rest looked up), then again warm. Target (issue 2): under 0.5 s on a 2-core machine.
"""

from __future__ import annotations

import sys
import time
from itertools import combinations
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.games import paigow  # noqa: E402
from controller.games.paigow import houseway, ranking  # noqa: E402


def main() -> int:
    tiles = paigow.full_set()
    hands4 = list(combinations(tiles, 4))
    assert len(hands4) == 35_960

    # Cold: fresh policy object (empty pattern cache) and empty two-tile rank cache.
    ranking._rank_by_index.cache_clear()
    houseway._LOADED.clear()
    t0 = time.perf_counter()
    for four in hands4:
        paigow.house_way(four)
    cold = time.perf_counter() - t0

    t0 = time.perf_counter()
    for four in hands4:
        paigow.house_way(four)
    warm = time.perf_counter() - t0

    hands2 = paigow.all_hands()
    t0 = time.perf_counter()
    n = 0
    for a in hands2:
        for b in hands2:
            paigow.compare(a, b)
            n += 1
    cmp_time = time.perf_counter() - t0

    pairs32 = list(combinations(tiles, 2))
    t0 = time.perf_counter()
    for a, b in zip(pairs32, reversed(pairs32), strict=True):
        paigow.compare(a, b)
    cmp496 = time.perf_counter() - t0

    target = 0.5
    print(f"house way, all {len(hands4):,} four-tile hands, cold cache: {cold:.3f} s")
    print(f"house way, all {len(hands4):,} four-tile hands, warm cache: {warm:.3f} s")
    print(f"compare, all {n:,} ordered pairs of the 221 two-tile hands: {cmp_time:.3f} s")
    print(f"compare, {len(pairs32)} two-tile selections of the 32 tiles: {cmp496:.4f} s")
    ok = cold < target
    print(f"target < {target} s (cold): {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
