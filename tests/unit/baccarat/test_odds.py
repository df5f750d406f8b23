"""Exact odds and house edges: the drawing rules of 9 NYCRR 5324.20(f)(10)-(13) and the pays of (d).

Published figures used here:
- Issue 3 pins banker/player/tie for six and eight decks.
- Michael Shackleford, "EZ Baccarat" (Wizard of Odds), eight decks, as mirrored at
  http://user-casino.com/games/ez-baccarat/ : banker win on a three-card 7 (dragon 7)
  112,633,011,329,024 combinations of 4,998,398,275,503,360 (0.022534), panda 8
  172,660,763,262,976 (0.034543), tie 475,627,426,473,216; EZ banker edge 1.02% (0.010183),
  dragon 7 at 40 to 1 7.61% (0.076113), panda 8 at 25 to 1 10.19% (0.101876).
- Wizard of Odds, "Baccarat side bets", Dragon Bonus (https://wizardofodds.com/games/baccarat/side-bets/
  and http://wizardofodds.com/games/baccarat/appendix/5/), pay table A, eight decks: the
  combinations of each outcome for each hand, house edge 2.65% (0.026517) on the player and 9.37%
  (0.093731) on the banker; 2.67% / 9.39% with six decks.
Figures of 16 digits on those pages are printed from double precision (e.g. player wins
"2,230,518,282,592,250"); only the exact ones (15 significant digits or fewer) are compared exactly.
"""

import itertools
from collections import Counter
from fractions import Fraction

import pytest

from controller.games import baccarat
from controller.games.baccarat import CompositionError, Rules

EIGHT = baccarat.exact_odds(8, rules=Rules(dragon_pay_table="A"))
SIX = baccarat.exact_odds(6, rules=Rules(dragon_pay_table="A"))
DENOM_8 = 416 * 415 * 414 * 413 * 412 * 411  # six-card sequences from eight decks


def r6(x: Fraction) -> float:
    return round(float(x), 6)


def test_pinned_eight_decks() -> None:
    # Issue 3, "Done means".
    assert (r6(EIGHT["banker"]), r6(EIGHT["player"]), r6(EIGHT["tie"])) == (
        0.458597,
        0.446247,
        0.095156,
    )


def test_pinned_six_decks() -> None:
    assert (r6(SIX["banker"]), r6(SIX["player"]), r6(SIX["tie"])) == (0.458653, 0.446279, 0.095069)


def test_results_are_fractions_summing_to_one() -> None:
    for odds in (EIGHT, SIX):
        assert all(isinstance(v, Fraction) for v in odds.values())
        assert odds["banker"] + odds["player"] + odds["tie"] == 1
        assert sum(odds[f"cards_used:{k}"] for k in (4, 5, 6)) == 1
        for hand in ("dragon_player", "dragon_banker"):
            assert sum(odds[f"{hand}:{o}"] for o in baccarat.DRAGON_OUTCOMES) == 1


def test_wizard_of_odds_ez_baccarat_combinations() -> None:
    # Wizard of Odds, EZ Baccarat, eight decks (module docstring).
    assert DENOM_8 == 4_998_398_275_503_360
    assert EIGHT["dragon7"] * DENOM_8 == 112_633_011_329_024
    assert EIGHT["panda8"] * DENOM_8 == 172_660_763_262_976
    assert EIGHT["tie"] * DENOM_8 == 475_627_426_473_216
    assert r6(EIGHT["dragon7"]) == 0.022534 and r6(EIGHT["panda8"]) == 0.034543


def test_wizard_of_odds_ez_baccarat_edges() -> None:
    ez = baccarat.exact_odds(8, rules=Rules(ez=True))
    assert r6(ez["edge:banker"]) == 0.010183
    assert r6(ez["edge:dragon7"]) == 0.076113
    assert r6(ez["edge:panda8"]) == 0.101876
    assert r6(ez["edge:player"]) == 0.012351


# Wizard of Odds, Dragon Bonus, eight decks: outcome -> combinations (player, banker).
WOO_DRAGON = {
    "win_by_9": (18_409_431_764_992, 15_390_342_909_952),
    "win_by_8": (34_097_645_543_424, 28_305_092_784_128),
    "win_by_7": (89_590_261_473_280, 79_517_099_278_336),
    "win_by_6": (141_238_897_317_888, 119_200_072_366_080),
    "win_by_5": (166_169_165_987_840, 157_275_882_332_160),
    "win_by_4": (186_780_352_174_080, 201_147_167_287_296),
    "natural_win": (812_685_054_124_032, 812_685_054_124_032),
    "natural_tie": (89_325_908_267_520, 89_325_908_267_520),
}


@pytest.mark.parametrize("outcome", sorted(WOO_DRAGON))
def test_wizard_of_odds_dragon_bonus_combinations(outcome: str) -> None:
    player, banker = WOO_DRAGON[outcome]
    assert EIGHT[f"dragon_player:{outcome}"] * DENOM_8 == player
    assert EIGHT[f"dragon_banker:{outcome}"] * DENOM_8 == banker


def test_wizard_of_odds_dragon_bonus_edges() -> None:
    assert r6(EIGHT["edge:dragon_player"]) == 0.026517
    assert r6(EIGHT["edge:dragon_banker"]) == 0.093731
    assert round(float(SIX["edge:dragon_player"]), 4) == 0.0267
    assert round(float(SIX["edge:dragon_banker"]), 4) == 0.0939


def test_standard_edges() -> None:
    # 5% vigorish (d)(2), tie 8 to 1: the well-known 1.06% / 1.24% / 14.36% with eight decks.
    assert r6(EIGHT["edge:banker"]) == 0.010579
    assert r6(EIGHT["edge:player"]) == 0.012351
    assert r6(EIGHT["edge:tie"]) == 0.143596
    four = baccarat.exact_odds(8, rules=Rules(vig_percent=4))
    assert four["edge:banker"] == EIGHT["player"] - EIGHT["banker"] * Fraction(96, 100)
    nine = baccarat.exact_odds(8, rules=Rules(tie_pays=9))
    assert nine["edge:tie"] == 1 - 10 * EIGHT["tie"]


def test_edges_only_for_offered_wagers() -> None:
    plain = baccarat.exact_odds(8, rules=Rules())
    assert sorted(k for k in plain if k.startswith("edge:")) == [
        "edge:banker",
        "edge:player",
        "edge:tie",
    ]
    assert not any(k.startswith("edge:") for k in baccarat.exact_odds(8))


def test_composition_by_rank_by_value_and_by_decks_agree() -> None:
    by_rank = {r: 32 for r in "A23456789TJQK"}
    by_value = {0: 128, **{v: 32 for v in range(1, 10)}}
    plain = baccarat.exact_odds(8)
    assert baccarat.exact_odds(by_rank) == plain
    assert baccarat.exact_odds(by_value) == plain
    assert baccarat.exact_odds({"10": 32, "J": 96, **{r: 32 for r in "A23456789"}}) == plain


def brute_force(values: list[int]) -> dict[str, Fraction]:
    """Every ordered way to deal six of ``values``, resolved by the coup resolver."""
    counts: Counter[str] = Counter()
    n = 0
    for seq in itertools.permutations(values, 6):
        pt, bt, _ = baccarat.resolve_values(seq)
        counts["player" if pt > bt else "banker" if bt > pt else "tie"] += 1
        n += 1
    return {k: Fraction(v, n) for k, v in counts.items()}


@pytest.mark.parametrize(
    "values",
    [
        [0, 0, 1, 2, 3, 4, 5, 6, 7, 8],
        [0, 0, 0, 9, 9, 5, 5, 3, 2],
        [6, 6, 7, 7, 0, 0, 1, 4],
    ],
)
def test_partly_dealt_shoe_matches_brute_force(values: list[int]) -> None:
    # A tiny shoe where every ordering can be dealt: the enumeration must agree exactly.
    odds = baccarat.exact_odds(dict(Counter(values)))
    expected = brute_force(values)
    for k in ("banker", "player", "tie"):
        assert odds[k] == expected.get(k, 0)


def test_live_shoe_composition_from_remaining_cards() -> None:
    shoe = baccarat.shoe_cards(8)
    left = shoe[:300]
    comp = dict(enumerate(baccarat.composition_of(left)))
    odds = baccarat.exact_odds(comp, rules=Rules(ez=True, dragon_pay_table="B"))
    assert odds["banker"] + odds["player"] + odds["tie"] == 1
    assert "edge:dragon7" in odds and "edge:dragon_banker" in odds


@pytest.mark.parametrize(
    "bad",
    [0, -1, True, {"X": 3}, {10: 3}, {"A": -1}, {"A": 2.0}, {"A": 3, "2": 2}, "AAAA22", [1, 2]],
)
def test_bad_compositions_are_refused(bad: object) -> None:
    with pytest.raises(CompositionError):
        baccarat.exact_odds(bad)  # type: ignore[arg-type]
