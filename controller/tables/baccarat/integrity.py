"""Shoe integrity: the unshuffled-sequence monitor of the baccarat table (issue 5, "Shoe
integrity"): long runs of one suit, of consecutive ranks, or a repeated sequence of cards, with
thresholds set from the false-alarm rate they give on a shuffled shoe (docs/baccarat-table.md,
"Shoe integrity", holds the arithmetic and the simulation). Pure: cards in, alarms out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Final

from controller.games import baccarat

__all__ = [
    "RANK_RUN_ALARM",
    "REPEAT_WINDOW_ALARM",
    "SUIT_RUN_ALARM",
    "SequenceMonitor",
    "expected_alarm_rate",
    "shuffled_shoe_alarm_rates",
]

# --- unshuffled-sequence monitor ----------------------------------------------------------------

#: Alarm thresholds; docs/baccarat-table.md derives each false-alarm rate (a shuffled 8-deck shoe).
SUIT_RUN_ALARM: Final = 13  # 13 cards of one suit in a row: ~1.7e-5 of shuffled shoes
RANK_RUN_ALARM: Final = 9  # 9 cards each one rank above (or each one below) the last: ~9.5e-7
REPEAT_WINDOW_ALARM: Final = 6  # the same 6 cards in the same order twice in a shoe: ~2.0e-6

_RANK_INDEX: Final = {r: i for i, r in enumerate(baccarat.RANKS)}


class SequenceMonitor:
    """Watches the cards of one shoe in the order they leave it for signs it was not shuffled:
    a run of one suit, a run of consecutive ranks (ascending or descending, king to ace wraps),
    or a window of cards repeated exactly. ``add`` returns the alarms the card raises (each kind
    once per shoe)."""

    __slots__ = (
        "suit_alarm",
        "rank_alarm",
        "window",
        "_suit_run",
        "_up",
        "_down",
        "_prev",
        "_recent",
        "_seen",
        "_raised",
        "max_suit_run",
        "max_rank_run",
        "repeats",
    )

    def __init__(
        self,
        suit_alarm: int = SUIT_RUN_ALARM,
        rank_alarm: int = RANK_RUN_ALARM,
        window: int = REPEAT_WINDOW_ALARM,
    ) -> None:
        self.suit_alarm = suit_alarm
        self.rank_alarm = rank_alarm
        self.window = window
        self._suit_run = 0
        self._up = 0
        self._down = 0
        self._prev: str | None = None
        self._recent: tuple[str, ...] = ()
        self._seen: set[tuple[str, ...]] = set()
        self._raised: set[str] = set()
        self.max_suit_run = 0
        self.max_rank_run = 0
        self.repeats = 0

    def add(self, code: str) -> list[str]:
        prev = self._prev
        if prev is None:
            self._suit_run = self._up = self._down = 1
        else:
            self._suit_run = self._suit_run + 1 if code[1] == prev[1] else 1
            step = (_RANK_INDEX[code[0]] - _RANK_INDEX[prev[0]]) % 13
            self._up = self._up + 1 if step == 1 else 1
            self._down = self._down + 1 if step == 12 else 1
        self._prev = code
        rank_run = max(self._up, self._down)
        self.max_suit_run = max(self.max_suit_run, self._suit_run)
        self.max_rank_run = max(self.max_rank_run, rank_run)
        recent = (*self._recent, code)[-self.window :]
        self._recent = recent
        alarms: list[tuple[str, str]] = []
        if len(recent) == self.window:
            if recent in self._seen:
                self.repeats += 1
                alarms.append(
                    (
                        "repeat",
                        f"the same {self.window} cards in the same order twice: {' '.join(recent)}",
                    )
                )
            else:
                self._seen.add(recent)
        if self._suit_run >= self.suit_alarm:
            alarms.append(("suit", f"{self._suit_run} cards of one suit in a row"))
        if rank_run >= self.rank_alarm:
            alarms.append(("rank", f"{rank_run} consecutive ranks in a row"))
        fresh = [text for key, text in alarms if key not in self._raised]
        self._raised.update(key for key, _ in alarms)
        return fresh


def expected_alarm_rate(kind: str, level: int, decks: int = 8) -> float:
    """The expected number of alarms per shuffled shoe (for small values, the share of shoes
    that raise one) at ``level``: the arithmetic of docs/baccarat-table.md.

    ``suit``: runs start at about N (1 - p) positions and continue with p = (13d - 1)/(N - 1).
    ``rank``: two directions, each step with q = 4d/(N - 1) (the cards of the next rank).
    ``repeat``: about (N - K)^2 / 2 pairs of windows, each matching with ((d - 1)/(N - 1))^K.
    """
    n = 52 * decks
    if kind == "suit":
        p = (13 * decks - 1) / (n - 1)
        return n * (1 - p) * p ** (level - 1)
    if kind == "rank":
        q = 4 * decks / (n - 1)
        return 2 * n * (1 - q) * q ** (level - 1)
    if kind == "repeat":
        pairs = (n - level) ** 2 / 2
        return pairs * ((decks - 1) / (n - 1)) ** level
    raise ValueError(f"kind is suit, rank or repeat, not {kind!r}")


def shuffled_shoe_alarm_rates(
    shoes: int,
    decks: int = 8,
    seed: int = 1,
    suit_levels: Iterable[int] = (8, 9, 10),
    rank_levels: Iterable[int] = (5, 6, 7),
    window_levels: Iterable[int] = (3, 4, 5),
) -> dict[str, float]:
    """The share of ``shoes`` shuffled shoes whose longest suit run, longest consecutive-rank run
    and longest exactly repeated window reach each level: the false-alarm arithmetic of
    docs/baccarat-table.md. ``random.Random(seed)``: reproducible, a simulation only."""
    import random

    rng = random.Random(seed)
    deck = [c.code for c in baccarat.shoe_cards(decks)]
    suit_levels, rank_levels, window_levels = (
        list(suit_levels),
        list(rank_levels),
        list(window_levels),
    )
    hits: Counter[str] = Counter()
    for _ in range(shoes):
        rng.shuffle(deck)
        mon = SequenceMonitor(suit_alarm=99, rank_alarm=99, window=1)
        for code in deck:
            mon.add(code)
        for lv in suit_levels:
            hits[f"suit>={lv}"] += mon.max_suit_run >= lv
        for lv in rank_levels:
            hits[f"rank>={lv}"] += mon.max_rank_run >= lv
        for lv in window_levels:
            seen: set[tuple[str, ...]] = set()
            for i in range(len(deck) - lv + 1):
                w = tuple(deck[i : i + lv])
                if w in seen:
                    hits[f"repeat>={lv}"] += 1
                    break
                seen.add(w)
    return {
        k: hits[k] / shoes
        for k in [f"suit>={lv}" for lv in suit_levels]
        + [f"rank>={lv}" for lv in rank_levels]
        + [f"repeat>={lv}" for lv in window_levels]
    }
