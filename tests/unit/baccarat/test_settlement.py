"""Wagers and their settlement in integer cents: 9 NYCRR 5324.20(b)(1), (d), (g)(2)."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.games import baccarat
from controller.games.baccarat import Coup, Rules, RulesError, WagerError

STANDARD = Rules()
EZ = Rules(ez=True)
DRAGON_A = Rules(dragon_pay_table="A")


def coup_of(codes: str) -> Coup:
    return baccarat.deal(baccarat.cards(codes))


PLAYER_WINS = coup_of("9S TH KD 3C")  # player natural 9 against 3
BANKER_WINS = coup_of("3S 8H 4D TC")  # banker natural 8 against 7
TIE = coup_of("6S 6H KD KC")  # 6 - 6
DRAGON7 = coup_of("2S 3H 3D TC KS 4H")  # banker three-card 7 beats 5
PANDA8 = coup_of("2S 6H 3D TC 3S")  # player three-card 8 beats 6


def test_fixtures() -> None:
    assert PLAYER_WINS.winner == "player" and BANKER_WINS.winner == "banker"
    assert TIE.winner == "tie" and DRAGON7.dragon7 and PANDA8.panda8


# --- (d)(2): the banker wager and its vigorish ------------------------------------------------


@pytest.mark.parametrize(("vig", "step"), [(4, 20), (5, 25)])
@pytest.mark.parametrize("units", [1, 2, 3, 7, 20, 200])
def test_d2_banker_win_pays_1_to_1_less_vigorish_in_steps(vig: int, step: int, units: int) -> None:
    rules = Rules(vig_percent=vig)
    stake = 500 * units
    # 5324.20(d)(2): 4% or 5% of the amount won, growing 20 or 25 cents per $5 staked.
    assert rules.vig_step_cents == step
    assert baccarat.banker_commission(stake, rules) == units * step == stake * vig // 100
    assert baccarat.settle("banker", stake, BANKER_WINS, rules) == stake - units * step
    s = baccarat.settle_with_commission("banker", stake, BANKER_WINS, rules)
    assert s == (stake - units * step, units * step)
    assert s.before_vigorish == stake  # what is paid when the vigorish is deferred
    # (d)(2)(ii): the deferred amount is marked with lammers of the step's denomination.
    assert baccarat.lammers_for(s.commission, rules) == units


@given(st.integers(min_value=1, max_value=10_000), st.sampled_from([4, 5]))
def test_d2_commission_is_exactly_the_percentage_never_rounded(units: int, vig: int) -> None:
    stake = 500 * units
    commission = baccarat.banker_commission(stake, Rules(vig_percent=vig))
    assert commission * 100 == stake * vig


def test_b1i_banker_loses_and_pushes_without_vigorish() -> None:
    assert baccarat.settle_with_commission("banker", 1000, PLAYER_WINS, STANDARD) == (-1000, 0)
    assert baccarat.settle_with_commission("banker", 1000, TIE, STANDARD) == (0, 0)  # (b)(1)(i)(c)


def test_lammers_refuse_a_broken_amount() -> None:
    with pytest.raises(WagerError):
        baccarat.lammers_for(30, STANDARD)
    with pytest.raises(WagerError):
        baccarat.lammers_for(-25, STANDARD)
    with pytest.raises(WagerError, match=r"\(d\)\(3\)"):
        baccarat.lammers_for(25, EZ)
    assert baccarat.lammers_for(20 * 9, Rules(vig_percent=4)) == 9


# --- (b)(1)(ii), (d)(1): the player wager --------------------------------------------------------


@pytest.mark.parametrize("rules", [STANDARD, EZ])
def test_b1ii_player(rules: Rules) -> None:
    assert baccarat.settle("player", 2500, PLAYER_WINS, rules) == 2500
    assert baccarat.settle("player", 2500, BANKER_WINS, rules) == -2500
    assert baccarat.settle("player", 2500, TIE, rules) == 0
    assert baccarat.settle("player", 2500, PANDA8, rules) == 2500
    assert baccarat.settle("player", 2500, DRAGON7, rules) == -2500  # (b)(1)(ii)(b)


# --- (b)(1)(iii): the tie wager at a table-set payout ---------------------------------------


@pytest.mark.parametrize("pays", [8, 9])
def test_b1iii_tie(pays: int) -> None:
    rules = Rules(tie_pays=pays)
    assert baccarat.settle("tie", 500, TIE, rules) == 500 * pays
    assert baccarat.settle("tie", 500, PLAYER_WINS, rules) == -500
    assert baccarat.settle("tie", 500, BANKER_WINS, rules) == -500


# --- EZ baccarat: (b)(1)(i)(c), (b)(1)(v)-(vi), (d)(3)-(4) ------------------------------------


def test_d3_ez_banker_no_vigorish_and_dragon7_pushes() -> None:
    assert baccarat.settle_with_commission("banker", 1000, BANKER_WINS, EZ) == (1000, 0)  # (d)(3)
    assert baccarat.banker_commission(1000, EZ) == 0
    assert baccarat.settle("banker", 1000, DRAGON7, EZ) == 0  # (b)(1)(i)(c)
    assert baccarat.settle("banker", 1000, PLAYER_WINS, EZ) == -1000
    # Off an EZ table, a dragon 7 is just a banker win less vigorish.
    assert baccarat.settle("banker", 1000, DRAGON7, STANDARD) == 950


@pytest.mark.parametrize("pays", [40, 30])
def test_b1v_dragon7_insurance(pays: int) -> None:
    rules = Rules(ez=True, dragon7_pays=pays)
    assert baccarat.settle("dragon7", 500, DRAGON7, rules) == 500 * pays
    for coup in (BANKER_WINS, PLAYER_WINS, TIE, PANDA8):
        assert baccarat.settle("dragon7", 500, coup, rules) == -500


def test_d4_panda8_insurance_pays_25_to_1() -> None:
    assert baccarat.settle("panda8", 500, PANDA8, EZ) == 12_500
    for coup in (BANKER_WINS, PLAYER_WINS, TIE, DRAGON7):
        assert baccarat.settle("panda8", 500, coup, EZ) == -500


def test_ez_default_pays() -> None:
    assert (EZ.dragon7_pays, EZ.panda8_pays) == (40, 25)


# --- (b)(1)(iv), (d)(5): the dragon bonus, every cell of every pay table ----------------------

PAY_TABLES = {  # 5324.20(d)(5), transcribed: win by 4, 5, 6, 7, 8, 9 points
    "A": (1, 2, 4, 6, 10, 30),
    "B": (1, 3, 4, 7, 8, 20),
    "C": (2, 2, 4, 4, 10, 30),
}


def _non_natural_wins() -> dict[tuple[str, int], Coup]:
    """A coup for every (winning hand, margin) without a natural, from a fixed shuffled shoe."""
    rng = random.Random(5324)
    found: dict[tuple[str, int], Coup] = {}
    while len(found) < 18:
        shoe = baccarat.shoe_cards(8)
        rng.shuffle(shoe)
        pos = 0
        while pos + 6 <= len(shoe):
            coup = baccarat.deal(shoe, pos)
            pos += coup.cards_used
            if not coup.natural and coup.winner != "tie":
                found.setdefault((coup.winner, coup.margin), coup)
    return found


NON_NATURAL_WINS = _non_natural_wins()


def non_natural_win_by(points: int, hand: str) -> Coup:
    """A coup where ``hand`` wins by ``points`` without a natural."""
    coup = NON_NATURAL_WINS[(hand, points)]
    assert not coup.natural and coup.winner == hand and coup.margin == points
    return coup


@pytest.mark.parametrize("table", ["A", "B", "C"])
@pytest.mark.parametrize("hand", ["player", "banker"])
@pytest.mark.parametrize("points", [4, 5, 6, 7, 8, 9])
def test_d5_dragon_non_natural_win_by(table: str, hand: str, points: int) -> None:
    coup = non_natural_win_by(points, hand)
    rules = Rules(dragon_pay_table=table)
    expected = 500 * PAY_TABLES[table][points - 4]
    assert baccarat.settle(f"dragon_{hand}", 500, coup, rules) == expected
    assert baccarat.dragon_result(hand, coup) == ("win", points)
    # The other side's dragon bonus loses: (b)(1)(iv)(b)(2).
    other = "banker" if hand == "player" else "player"
    assert baccarat.settle(f"dragon_{other}", 500, coup, rules) == -500


@pytest.mark.parametrize("hand", ["player", "banker"])
@pytest.mark.parametrize("points", [1, 2, 3])
def test_b1ivb3_non_natural_win_by_less_than_4_loses(hand: str, points: int) -> None:
    coup = non_natural_win_by(points, hand)
    assert baccarat.settle(f"dragon_{hand}", 500, coup, DRAGON_A) == -500


def test_b1ivb2_non_natural_tie_loses() -> None:
    for hand in ("player", "banker"):
        assert baccarat.settle(f"dragon_{hand}", 500, TIE, DRAGON_A) == -500


@pytest.mark.parametrize("table", ["A", "B", "C"])
def test_b1iv_naturals(table: str) -> None:
    rules = Rules(dragon_pay_table=table)
    # (a)(1): a natural against a non-natural wins 1 to 1 ("Natural winner"), even by 9 points.
    nat9_vs_0 = coup_of("9S TH KD KC")
    assert baccarat.settle("dragon_player", 500, nat9_vs_0, rules) == 500
    assert baccarat.settle("dragon_banker", 500, nat9_vs_0, rules) == -500
    assert baccarat.settle("dragon_banker", 500, BANKER_WINS, rules) == 500
    # (a)(2) and (b)(1): natural 9 against natural 8.
    nat9_vs_8 = coup_of("9S 8H KD KC")
    assert baccarat.dragon_result("player", nat9_vs_8) == ("natural_win", 0)
    assert baccarat.settle("dragon_player", 500, nat9_vs_8, rules) == 500
    assert baccarat.settle("dragon_banker", 500, nat9_vs_8, rules) == -500
    # (c): natural tie pushes.
    for codes in ("9S 9H KD KC", "8S 8H KD KC"):
        coup = coup_of(codes)
        for hand in ("player", "banker"):
            assert baccarat.settle(f"dragon_{hand}", 500, coup, rules) == 0
    # (b)(2): a non-natural hand against a natural loses.
    assert baccarat.settle("dragon_player", 500, BANKER_WINS, rules) == -500


# --- (d)(2): stakes in $5 increments; wagers the rules don't offer -----------------------------


@pytest.mark.parametrize("stake", [0, -500, 250, 501, 499, 1250, 500.0, True, "500", None])
@pytest.mark.parametrize("wager", ["banker", "player", "tie"])
def test_d2_stake_must_be_a_positive_multiple_of_500(stake: object, wager: str) -> None:
    with pytest.raises(WagerError, match="multiple of 500"):
        baccarat.settle(wager, stake, BANKER_WINS, STANDARD)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        baccarat.banker_commission(stake, STANDARD)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("wager", "rules", "words"),
    [
        ("dragon_player", STANDARD, "dragon bonus"),
        ("dragon_banker", EZ, "dragon bonus"),
        ("dragon7", STANDARD, "EZ"),
        ("panda8", STANDARD, "panda 8"),
        ("panda8", Rules(ez=True, panda8_pays=None), "panda 8"),
        ("pair", STANDARD, "unknown wager"),
    ],
)
def test_wager_not_offered_is_refused(wager: str, rules: Rules, words: str) -> None:
    with pytest.raises(WagerError, match=words):
        baccarat.settle(wager, 500, BANKER_WINS, rules)


def test_offered() -> None:
    assert STANDARD.offered == ("banker", "player", "tie")
    assert DRAGON_A.offered == ("banker", "player", "tie", "dragon_player", "dragon_banker")
    assert EZ.offered == ("banker", "player", "tie", "dragon7", "panda8")
    assert Rules(ez=True, panda8_pays=None).offered == ("banker", "player", "tie", "dragon7")


# --- Rules validation ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"vig_percent": 3},
        {"vig_percent": 6},
        {"vig_percent": 5.0},
        {"tie_pays": 0},
        {"tie_pays": 8.5},
        {"dragon_pay_table": "D"},
        {"dragon_pay_table": "a"},
        {"ez": 1},
        {"panda8_pays": 30},  # (d)(4) fixes 25 to 1
        {"dragon7_pays": 0},
        {"paying_procedure": "v"},
    ],
)
def test_rules_refuse_what_the_regulation_does_not_allow(kwargs: dict[str, object]) -> None:
    with pytest.raises(RulesError):
        Rules(**kwargs)  # type: ignore[arg-type]


def test_rules_defaults() -> None:
    r = Rules()
    assert (r.vig_percent, r.tie_pays, r.dragon_pay_table, r.ez) == (5, 8, None, False)
    assert (r.panda8_pays, r.dragon7_pays, r.paying_procedure) == (25, 40, "i")
    assert Rules(vig_percent=5, tie_pays=8, dragon_pay_table="A", ez=False).dragon_pay_table == "A"


# --- (g)(2): the paying order -----------------------------------------------------------------


def test_g2_paying_orders() -> None:
    seats = [3, 7, 5]
    seq = {
        p: baccarat.paying_sequence(Rules(paying_procedure=p), seats)
        for p in baccarat.PAYING_PROCEDURES
    }
    L, W, V = "losing", "winning", "vigorish"
    # (g)(2): losing wagers first; then (i) pay all, then vigorish, highest seat first.
    assert seq["i"] == ((L, None), (W, 7), (W, 5), (W, 3), (V, 7), (V, 5), (V, 3))
    # (ii): vigorish all, then pay all.
    assert seq["ii"] == ((L, None), (V, 7), (V, 5), (V, 3), (W, 7), (W, 5), (W, 3))
    # (iii): seat by seat, pay then vigorish.
    assert seq["iii"] == ((L, None), (W, 7), (V, 7), (W, 5), (V, 5), (W, 3), (V, 3))
    # (iv): seat by seat, vigorish then pay.
    assert seq["iv"] == ((L, None), (V, 7), (W, 7), (V, 5), (W, 5), (V, 3), (W, 3))
    assert Rules().paying_order == (L, W, V)
    assert Rules(paying_procedure="ii").paying_order == (L, V, W)
    # (g)(2): "With the exception of an EZ baccarat table where no vigorish is collected".
    assert baccarat.paying_sequence(Rules(ez=True, paying_procedure="iv"), [2, 1]) == (
        (L, None),
        (W, 2),
        (W, 1),
    )


# --- every wager on every coup: money is conserved and integral ---------------------------------


@given(st.lists(st.sampled_from(baccarat.DECK), min_size=6, max_size=6), st.integers(1, 100))
def test_every_offered_wager_settles_to_whole_cents(cards: list[baccarat.Card], units: int) -> None:
    coup = baccarat.deal(cards)
    for rules in (STANDARD, EZ, Rules(vig_percent=4, dragon_pay_table="C", ez=True)):
        for wager in rules.offered:
            net, commission = baccarat.settle_with_commission(wager, 500 * units, coup, rules)
            assert isinstance(net, int) and isinstance(commission, int)
            assert net >= -500 * units
            assert commission == 0 or wager == "banker"


@pytest.mark.parametrize(
    "kwargs",
    [{"dragon_pay_table": ["A"]}, {"paying_procedure": ["i"]}, {"dragon_pay_table": 1}],
)
def test_rules_refuse_a_setting_of_the_wrong_kind_with_rules_error(
    kwargs: dict[str, object],
) -> None:
    """A pay table of (d)(5) is "A", "B" or "C" and a procedure of (g)(2) one of (i)-(iv): anything
    else is a RulesError naming the setting, never a stray TypeError."""
    with pytest.raises(baccarat.RulesError, match=next(iter(kwargs))):
        Rules(**kwargs)  # type: ignore[arg-type]
