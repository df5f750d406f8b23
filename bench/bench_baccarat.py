"""Baccarat rules benchmarks: prints figures, asserts nothing (see CONTRIBUTING.md, bench/).

    python bench/bench_baccarat.py [--shoes N]

1. exact_odds(8): time to enumerate an eight-deck shoe exactly (target: under 1 s).
2. Coups resolved per second dealing pre-shuffled eight-deck shoes with deal(), shuffling not
   timed (target: at least 300,000 a second); and the same with resolve_values() on card values.
"""

from __future__ import annotations

import argparse
import random
import time

from controller.games import baccarat


def bench_exact_odds(repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        baccarat.exact_odds(8)
        best = min(best, time.perf_counter() - t0)
    return best


def shuffled_shoes(n: int, seed: int) -> list[list[baccarat.Card]]:
    rng = random.Random(seed)  # benchmark data only: not the certified RNG
    shoes = []
    for _ in range(n):
        shoe = baccarat.shoe_cards(8)
        rng.shuffle(shoe)
        shoes.append(shoe)
    return shoes


def bench_deal(shoes: list[list[baccarat.Card]]) -> tuple[int, float]:
    deal = baccarat.deal
    coups = 0
    t0 = time.perf_counter()
    for shoe in shoes:
        pos = 0
        last = len(shoe) - 6  # deal every coup that is sure to have its cards
        while pos <= last:
            pos += deal(shoe, pos).cards_used
            coups += 1
    return coups, time.perf_counter() - t0


def bench_resolve_values(shoes: list[list[int]]) -> tuple[int, float]:
    resolve = baccarat.resolve_values
    coups = 0
    t0 = time.perf_counter()
    for shoe in shoes:
        pos = 0
        last = len(shoe) - 6
        while pos <= last:
            pos += resolve(shoe, pos)[2]
            coups += 1
    return coups, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=2000, help="eight-deck shoes to deal")
    parser.add_argument("--seed", type=int, default=5324)
    args = parser.parse_args()

    t = bench_exact_odds()
    print(f"exact_odds(8): {t * 1000:.1f} ms (best of 5; target < 1000 ms)")

    shoes = shuffled_shoes(args.shoes, args.seed)  # not timed
    coups, dt = bench_deal(shoes)
    print(
        f"deal(): {coups:,} coups from {args.shoes:,} eight-deck shoes in {dt:.3f} s"
        f" = {coups / dt:,.0f} coups/s (target >= 300,000)"
    )
    values = [[c.value for c in shoe] for shoe in shoes]  # not timed
    coups, dt = bench_resolve_values(values)
    print(f"resolve_values(): {coups:,} coups in {dt:.3f} s = {coups / dt:,.0f} coups/s")


if __name__ == "__main__":
    main()
