"""The unshuffled-sequence alarm: it fires on a sorted shoe, not on shuffled ones, and the rates
the simulation measures at lower levels agree with the arithmetic that sets the thresholds."""

from __future__ import annotations

import math
import random

import pytest

from controller.games import baccarat
from controller.tables.baccarat.integrity import (
    RANK_RUN_ALARM,
    REPEAT_WINDOW_ALARM,
    SUIT_RUN_ALARM,
    SequenceMonitor,
    expected_alarm_rate,
    shuffled_shoe_alarm_rates,
)
from tests.unit.baccarat_table.helpers import Rig

SHOES = 800


def test_a_sorted_shoe_raises_the_alarm_and_halts(rig: Rig) -> None:
    rig.press("shuffled")
    for c in baccarat.shoe_cards(8)[:20]:
        if rig.table.state == "halted":
            break
        if rig.table.state == "offering":
            rig.act("curator 1")
            rig.press("no_more_bets")
        rig.frame("CARD", c.code)
    assert rig.table.state == "halted"
    problem = rig.rows("baccarat.integrity")[-1].data["problem"]
    assert problem == f"{RANK_RUN_ALARM} consecutive ranks in a row"
    assert rig.alarms[-1].startswith("FAULT unshuffled sequence")


@pytest.mark.parametrize(
    ("order", "expect"),
    [
        ("suit", "cards of one suit in a row"),
        ("repeat", "in the same order twice"),
    ],
)
def test_each_pattern_is_recognised(order: str, expect: str) -> None:
    mon = SequenceMonitor()
    if order == "suit":  # one suit, ranks jumbled so no rank run
        codes = [r + "H" for r in "A5927K3J6Q48T"]
    else:
        rng = random.Random(2)
        block = [c.code for c in rng.sample(list(baccarat.DECK), REPEAT_WINDOW_ALARM)]
        codes = block + ["9D", "2C"] + block
    alarms = [a for c in codes for a in mon.add(c)]
    assert len(alarms) == 1 and expect in alarms[0]


def test_shuffled_shoes_raise_no_alarm() -> None:
    rng = random.Random(11)
    deck = [c.code for c in baccarat.shoe_cards(8)]
    for _ in range(200):
        rng.shuffle(deck)
        mon = SequenceMonitor()
        assert [a for c in deck for a in mon.add(c)] == []


def _within_poisson(observed_share: float, expected: float, shoes: int) -> bool:
    """The observed count is within 4 standard deviations of a Poisson count (or 3 events)."""
    mean = min(expected, 1.0) * shoes
    return abs(observed_share * shoes - mean) <= 4 * math.sqrt(mean) + 3


def test_simulated_rates_agree_with_the_arithmetic() -> None:
    rates = shuffled_shoe_alarm_rates(
        SHOES,
        seed=5,
        suit_levels=(7, 8, SUIT_RUN_ALARM),
        rank_levels=(5, 6, RANK_RUN_ALARM),
        window_levels=(3, 4, REPEAT_WINDOW_ALARM),
    )
    for key, share in rates.items():
        kind, level = key.split(">=")
        expected = expected_alarm_rate(kind, int(level))
        if kind == "repeat":
            expected = 1 - math.exp(-expected)  # at least one repeated window
        assert _within_poisson(share, expected, SHOES), (key, share, expected)
    assert rates[f"suit>={SUIT_RUN_ALARM}"] == 0
    assert rates[f"rank>={RANK_RUN_ALARM}"] == 0
    assert rates[f"repeat>={REPEAT_WINDOW_ALARM}"] == 0


def test_the_chosen_thresholds_keep_false_alarms_below_one_in_ten_thousand_shoes() -> None:
    total = (
        expected_alarm_rate("suit", SUIT_RUN_ALARM)
        + expected_alarm_rate("rank", RANK_RUN_ALARM)
        + expected_alarm_rate("repeat", REPEAT_WINDOW_ALARM)
    )
    assert total < 1e-4
    # One step lower on the repeat window would not do; suit 12 alone is 7e-5, so 13 keeps the
    # sum well under 1e-4; rank 8 (1.2e-5 by the formula, 5e-5 in 20,000 simulated shoes) is
    # given one step of margin.
    assert expected_alarm_rate("repeat", REPEAT_WINDOW_ALARM - 1) > 1e-4
    assert expected_alarm_rate("suit", SUIT_RUN_ALARM - 1) > 5e-5
