"""An independent check of the rules engine against 9 NYCRR 5324.20, written from the regulation's
words without reading the package's tables: a second, deliberately plain implementation of the
coup (a)(4), (f)(5), (f)(8), (f)(10)-(13) and of every wager's settlement (b)(1), (d), compared
exhaustively with ``resolve_values``, ``deal``, ``CoupInProgress`` and ``settle_with_commission``.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import pytest

from controller.games import baccarat
from controller.games.baccarat import Coup, Rules
from controller.games.baccarat.cards import card
from controller.games.baccarat.coup import resolve_values
from controller.games.baccarat.shoe import CoupInProgress, CoupStep

# --- the regulation, re-implemented -------------------------------------------------------------

# (a)(4)(i): "(a) any card from 2 to 9 shall have its face value; (b) a 10, jack, queen and king
# shall have a value of zero; and (c) an ace shall have the value of one."
REG_VALUE = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9}
REG_VALUE.update({"T": 0, "J": 0, "Q": 0, "K": 0})

# One card of each value, to build real cards from values.
CARD_OF_VALUE = {0: "K", 1: "A", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9"}


def reg_point_count(values: list[int]) -> int:
    """(a)(4)(ii): total the values; "If the total ... is a two-digit number, the left digit ...
    shall be discarded ... and the right digit shall constitute the point count"."""
    total = sum(values)
    return int(str(total)[-1])


# (f)(13), transcribed column by column: "Draws when player's third card is" and "Stays when
# player's third card is". The seed cuts the first row short; a banker with 0, 1 or 2 always draws
# (issue 3), so its stays column is empty.
REG_F13 = {
    # banker: (draws, stays)
    0: ({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, set()),
    1: ({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, set()),
    2: ({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, set()),
    3: ({0, 1, 2, 3, 4, 5, 6, 7, 9}, {8}),
    4: ({2, 3, 4, 5, 6, 7}, {0, 1, 8, 9}),
    5: ({4, 5, 6, 7}, {0, 1, 2, 3, 8, 9}),
    6: ({6, 7}, {0, 1, 2, 3, 4, 5, 8, 9}),
    7: (set(), set(range(10))),  # "Stands"
}


def reg_coup(seq: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """The coup dealt from card values ``seq`` (at least six), as the regulation words it."""
    shoe = list(seq)
    dealt: list[int] = []

    def draw() -> int:
        dealt.append(shoe.pop(0))
        return dealt[-1]

    # (f)(5): "The first and third cards dealt shall constitute the first and second cards of the
    # player's hand. The second and fourth cards dealt shall constitute the first and second cards
    # of the banker's hand."
    first, second, third, fourth = draw(), draw(), draw(), draw()
    player = [first, third]
    banker = [second, fourth]
    p2 = reg_point_count(player)
    b2 = reg_point_count(banker)
    # (f)(10): "If the point count of either the player's hand or the banker's hand after the
    # initial two cards are dealt to each is a natural, no more cards shall be dealt to either
    # hand." (a natural: a two-card 8 or 9, the "8,9 Natural stand" row of (f)(13))
    if p2 in (8, 9) or b2 in (8, 9):
        return player, banker
    # (f)(11): banker 0 to 7: the player's hand "0 to 5 Draws", "6 to 9 Stays".
    if p2 in (0, 1, 2, 3, 4, 5):
        # (f)(8): the third card goes first to the player's hand, then to the banker's.
        player.append(draw())
        draws, stays = REG_F13[b2]
        assert draws.isdisjoint(stays) and draws | stays == set(range(10))
        if player[2] in draws:
            banker.append(draw())
        return player, banker
    # (f)(12): "If the point count of the player's hand on the first two cards is 6 or 7, the
    # banker's hand always shall draw on totals of 0, 1, 2, 3, 4 and 5 and stand on totals of 6,
    # 7, 8 and 9."
    assert p2 in (6, 7)
    if b2 in (0, 1, 2, 3, 4, 5):
        banker.append(draw())
    return player, banker


def test_the_reference_itself_on_hand_worked_examples() -> None:
    """Hand-worked: 7+8 = 15, point count 5 (a)(4)(ii); K+Q = 0."""
    assert reg_point_count([7, 8]) == 5 and reg_point_count([0, 0]) == 0
    assert reg_point_count([9, 9, 9]) == 7
    # P 2+3=5 draws a 4 -> 9; B 6+0=6 draws only on 6-7 -> stands on a player's 4.
    assert reg_coup((2, 6, 3, 0, 4, 9)) == ([2, 3, 4], [6, 0])
    # P 6+0=6 stays; B 1+2=3 draws (f)(12).
    assert reg_coup((6, 1, 0, 2, 5, 9)) == ([6, 0], [1, 2, 5])
    # B natural 8 with P 0: nobody draws.
    assert reg_coup((0, 4, 0, 4, 5, 5)) == ([0, 0], [4, 4])


def _reference_table() -> dict[tuple[int, int, int, int], tuple[int, int, int]]:
    """(player two-card total, banker two-card total, 5th value, 6th value) -> the reference's
    (player total, banker total, cards used). Built from the 4-card sequences (p, b, 0, 0)."""
    table = {}
    for p2, b2, e, f in product(range(10), repeat=4):
        player, banker = reg_coup((p2, b2, 0, 0, e, f))
        table[p2, b2, e, f] = (
            reg_point_count(player),
            reg_point_count(banker),
            len(player) + len(banker),
        )
    return table


REFERENCE = _reference_table()


def test_resolve_values_agrees_with_the_regulation_on_every_six_value_sequence() -> None:
    """All 10**6 sequences of six card values through ``resolve_values``."""
    mismatches = []
    for a, b, c, d in product(range(10), repeat=4):
        p2 = (a + c) % 10
        b2 = (b + d) % 10
        seq = [a, b, c, d, 0, 0]
        for e in range(10):
            seq[4] = e
            for f in range(10):
                seq[5] = f
                got = resolve_values(seq)
                if got != REFERENCE[p2, b2, e, f]:
                    mismatches.append((tuple(seq), got, REFERENCE[p2, b2, e, f]))
    assert mismatches == []


def _cards_of(values: tuple[int, ...], suits: str = "SHDCSH") -> list[baccarat.Card]:
    return [card(CARD_OF_VALUE[v] + s) for v, s in zip(values, suits, strict=True)]


def test_deal_and_card_by_card_put_each_card_where_the_regulation_does() -> None:
    """Every card in its place: ``deal`` and ``CoupInProgress`` against the reference, comparing
    the cards (not just the totals), for all 10**4 initial four-card value sequences, each followed
    by one of the 100 (fifth, sixth) pairs in turn."""
    for i, (p1, b1, p2, b2) in enumerate(product(range(10), repeat=4)):
        e, f = divmod((i * 37) % 100, 10)
        values = (p1, b1, p2, b2, e, f)
        cs = _cards_of(values)
        ref_p, ref_b = reg_coup(values)
        coup = baccarat.deal(cs)
        assert [c.value for c in coup.player] == ref_p
        assert [c.value for c in coup.banker] == ref_b
        assert coup.player[:2] == (cs[0], cs[2]) and coup.banker[:2] == (cs[1], cs[3])
        used = len(ref_p) + len(ref_b)
        assert coup.cards_used == used
        if len(ref_p) == 3:
            assert coup.player[2] is cs[4]  # (f)(8): the player's third card first
        cip = CoupInProgress()
        for c in cs[:used]:
            cip.add(c)
        assert cip.expecting is CoupStep.COMPLETE and cip.result() == coup


# --- the wagers, re-implemented -----------------------------------------------------------------

PAY_TABLES = {  # (d)(5), read off the seed's table row by row
    "Natural tie": ("Push", "Push", "Push"),
    "Natural winner": ("1:1", "1:1", "1:1"),
    "Win by 4 points": ("1:1", "1:1", "2:1"),
    "Win by 5 points": ("2:1", "3:1", "2:1"),
    "Win by 6 points": ("4:1", "4:1", "4:1"),
    "Win by 7 points": ("6:1", "7:1", "4:1"),
    "Win by 8 points": ("10:1", "8:1", "10:1"),
    "Win by 9 points": ("30:1", "20:1", "30:1"),
}


def _pay(row: str, table: str) -> int | None:
    cell = PAY_TABLES[row]["ABC".index(table)]
    return None if cell == "Push" else int(cell.split(":")[0])


def reg_settle(
    wager: str, stake: int, player: list[int], banker: list[int], rules: Rules
) -> tuple[int, int]:
    """(net after vigorish, vigorish), from (b)(1), (d)."""
    pt, bt = reg_point_count(player), reg_point_count(banker)
    pnat = len(player) == 2 and pt in (8, 9)
    bnat = len(banker) == 2 and bt in (8, 9)
    dragon7 = len(banker) == 3 and bt == 7 and bt > pt  # banker wins with a three-card 7
    panda8 = len(player) == 3 and pt == 8 and pt > bt  # player wins with a three-card 8
    if wager == "banker":
        if bt > pt and not (rules.ez and dragon7):  # (b)(1)(i)(a)
            if rules.ez:  # (d)(3): "no vigorish shall be collected"
                return stake, 0
            # (d)(2): "a vigorish on the amount won at either four percent or five percent of
            # such amount"; the amount won at 1:1 is the stake.
            vig = Fraction(stake) * Fraction(rules.vig_percent, 100)
            assert vig.denominator == 1
            step = 20 if rules.vig_percent == 4 else 25  # "20-cent increments" / "25 cent"
            assert vig % step == 0 and vig // step == stake // 500
            return stake - int(vig), int(vig)
        if bt < pt:  # (b)(1)(i)(b)
            return -stake, 0
        return 0, 0  # (b)(1)(i)(c): tie, or a dragon 7 at EZ baccarat
    if wager == "player":  # (b)(1)(ii), (d)(1) 1:1
        if pt > bt:
            return stake, 0
        if pt < bt:
            return -stake, 0
        return 0, 0
    if wager == "tie":  # (b)(1)(iii), "to 1"
        return (stake * rules.tie_pays if pt == bt else -stake), 0
    if wager == "dragon7":  # (b)(1)(v)
        return (stake * rules.dragon7_pays if dragon7 else -stake), 0
    if wager == "panda8":  # (b)(1)(vi), (d)(4) "25 to 1"
        return (stake * 25 if panda8 else -stake), 0
    assert wager in ("dragon_player", "dragon_banker")
    table = rules.dragon_pay_table
    assert table is not None
    mine, theirs, my_nat, their_nat = (
        (pt, bt, pnat, bnat) if wager == "dragon_player" else (bt, pt, bnat, pnat)
    )
    # (b)(1)(iv)(c): "tie ... if the selected hand is a natural and the other hand is a natural of
    # equal point count"
    if my_nat and their_nat and mine == theirs:
        assert _pay("Natural tie", table) is None
        return 0, 0
    # (b)(1)(iv)(a)(1) "a natural and the other hand is not a natural"; (a)(2) "a natural 9 and
    # the other hand is a natural 8"
    if (my_nat and not their_nat) or (my_nat and mine == 9 and their_nat and theirs == 8):
        pays = _pay("Natural winner", table)
        assert pays is not None
        return stake * pays, 0
    # (b)(1)(iv)(b)(1) natural 8 against natural 9
    if my_nat:
        assert mine == 8 and theirs == 9
        return -stake, 0
    # (b)(1)(iv)(a)(3): "not a natural and ... exceed ... by four or more points"
    if mine - theirs >= 4:
        pays = _pay(f"Win by {mine - theirs} points", table)
        assert pays is not None
        return stake * pays, 0
    return -stake, 0  # (b)(1)(iv)(b)(2)-(3)


RULE_SETS = [
    Rules(vig_percent=5, dragon_pay_table="A"),
    Rules(vig_percent=4, dragon_pay_table="B", tie_pays=9),
    Rules(vig_percent=5, dragon_pay_table="C", tie_pays=8),
    Rules(ez=True, dragon_pay_table="A"),
    Rules(ez=True, dragon7_pays=40, panda8_pays=None, dragon_pay_table="B"),
]


def _distinct_coups() -> list[tuple[tuple[int, ...], list[int], list[int]]]:
    """One six-value sequence for every distinct (player two-card total, banker two-card total,
    third cards) the regulation's coup can produce: the sequences (p, b, 0, 0, e, f)."""
    seen: dict[object, tuple[tuple[int, ...], list[int], list[int]]] = {}
    for seq in product(range(10), range(10), (0,), (0,), range(10), range(10)):
        player, banker = reg_coup(seq)
        key = (seq[0], seq[1], tuple(player[2:]), tuple(banker[2:]))
        seen.setdefault(key, (seq, player, banker))
    return list(seen.values())


DISTINCT = _distinct_coups()


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"vig{r.vig_percent}-ez{r.ez}")
def test_every_wager_settles_as_the_regulation_says_on_every_distinct_coup(rules: Rules) -> None:
    assert len(DISTINCT) > 1500
    mismatches = []
    for seq, player, banker in DISTINCT:
        coup: Coup = baccarat.deal(_cards_of(seq))
        for wager in rules.offered:
            for stake in (500, 2500, 10_000):
                got = baccarat.settle_with_commission(wager, stake, coup, rules)
                want = reg_settle(wager, stake, player, banker, rules)
                if tuple(got) != want:
                    mismatches.append((wager, stake, str(coup), tuple(got), want))
                assert baccarat.settle(wager, stake, coup, rules) == got.net
    assert mismatches == []


def test_every_outcome_flag_is_reached() -> None:
    """The sweep above meets every kind of result (so it really checks every branch)."""
    kinds = set()
    for seq, _, _ in DISTINCT:
        coup = baccarat.deal(_cards_of(seq))
        kinds.add(coup.winner)
        if coup.dragon7:
            kinds.add("dragon7")
        if coup.panda8:
            kinds.add("panda8")
        for hand in ("player", "banker"):
            kind, points = baccarat.dragon_result(hand, coup)
            kinds.add(f"{kind}{points}")
    assert kinds >= {"player", "banker", "tie", "dragon7", "panda8", "natural_win0"}
    assert kinds >= {"natural_tie0", "lose0"} | {f"win{n}" for n in range(4, 10)}
