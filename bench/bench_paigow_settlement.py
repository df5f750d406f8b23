"""Time one round's settlement of six pai gow wagers, in microseconds per round.

    python bench/bench_paigow_settlement.py [--rounds N]

Three figures, each the best of five runs of N rounds (prints figures, asserts nothing):

1. house-banked round: ``settle_wager`` for six wagers (5324.50(f)(7)-(10)), quarter rounding on;
2. player-banked round: ``settle_bank_round`` with six wagers and the dealer's wager ((g)(15));
3. co-banked round: ``settle_bank_round(co_bank=True)`` with six wagers ((g)(16)).

The wagers and outcomes are fixed data (no randomness): a mix of wins, pushes and losses.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.games.paigow.banking import BankWager, settle_bank_round  # noqa: E402
from controller.games.paigow.settlement import PaigowRules, settle_wager  # noqa: E402

RULES = PaigowRules(round_vig_to_quarter=True, player_bank_offered=True, co_bank_offered=True)
SIX = [
    ("seat1", 2500, "win"),
    ("seat2", 1000, "lose"),
    ("seat3", 5000, "push"),
    ("seat5", 1100, "win"),
    ("seat6", 10_000, "lose"),
    ("seat6", 2000, "win"),  # seat 6 on two adjacent areas: its second wager
]
BANK_WAGERS = [BankWager(p, s, o) for p, s, o in SIX]


def house_round() -> None:
    for _, stake, outcome in SIX:
        settle_wager(outcome, stake, RULES)


def bank_round() -> None:
    settle_bank_round(
        BANK_WAGERS,
        bank="seat4",
        bank_chips_cents=1_000_000,
        rules=RULES,
        dealer_wager_cents=2500,
        dealer_outcome="win",
    )


def co_bank_round() -> None:
    settle_bank_round(
        BANK_WAGERS, bank="seat4", bank_chips_cents=1_000_000, rules=RULES, co_bank=True
    )


def best_us_per_round(fn: Callable[[], None], rounds: int, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(rounds):
            fn()
        best = min(best, time.perf_counter() - t0)
    return best / rounds * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20_000, help="rounds per run")
    args = parser.parse_args(argv)
    print(f"pai gow settlement of six wagers, best of 5 runs x {args.rounds} rounds")
    for name, fn in (
        ("house-banked (settle_wager x6)", house_round),
        ("player bank (settle_bank_round)", bank_round),
        ("co-bank (settle_bank_round)", co_bank_round),
    ):
        print(f"  {name:<34} {best_us_per_round(fn, args.rounds):8.2f} us/round")


if __name__ == "__main__":
    main()
