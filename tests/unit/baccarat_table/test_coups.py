"""Whole coups fed card by card: the journaled result is what baccarat.deal makes of the cards."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from controller.games import baccarat
from controller.games.baccarat.shoe import COVER, deal_shoe
from controller.tables.baccarat.integrity import SequenceMonitor
from tests.unit.baccarat_table.helpers import Rig


def shuffled(seed: int) -> list[str]:
    cards = [c.code for c in baccarat.shoe_cards(8)]
    random.Random(seed).shuffle(cards)
    return cards


def run_shoe(rig: Rig, items: list[str]) -> None:
    """Deal ``items`` (cards and COVER) from the shuffled button to the reshuffle."""
    rig.press("shuffled")
    it = iter(items)

    def feed() -> None:
        item = next(it)
        if item == COVER:
            rig.frame("COVR")
        else:
            rig.frame("CARD", item)

    while rig.table.state == "burn":
        feed()
    rig.act("curator 1")
    while rig.table.state != "shuffle":
        rig.press("no_more_bets")
        while rig.table.state not in ("settling", "shuffle"):
            feed()
        if rig.table.state == "settling":
            rig.press("settled")
        if rig.table.state == "passing":
            rig.act(f"curator {rig.table.data.curator % 8 + 1}")


def test_a_whole_shoe_is_journaled_as_the_rules_engine_deals_it(rig: Rig) -> None:
    cards = shuffled(7)
    items = [*cards[:-15], COVER, *cards[-15:]]
    run_shoe(rig, items)
    expected = deal_shoe(items)
    results = rig.rows("baccarat.coup.result")
    assert [r.data["cards"] for r in results] == [
        [c.code for c in _shoe_order(coup)] for coup in expected.coups
    ]
    for row, coup in zip(results, expected.coups, strict=True):
        assert (row.data["player_total"], row.data["banker_total"], row.data["winner"]) == (
            coup.player_total,
            coup.banker_total,
            coup.winner,
        )
        assert row.round is not None
    burn = rig.rows("baccarat.burn.done")[0].data
    assert burn["face_up"] == expected.burn_face_up.code
    assert burn["burned"] == [c.code for c in expected.burned]
    # 5324.20(f)(9): one hand after the one the cover card appeared in, then the reshuffle.
    assert rig.rows("baccarat.last_hand")
    assert rig.rows("baccarat.shoe.end")[-1].data["why"].startswith("last hand")
    # Every card out of the shoe is accounted for exactly once.
    assert len(rig.table.data.cards_out) == expected.cards_used


def _shoe_order(coup: baccarat.Coup) -> list[baccarat.Card]:
    order = [coup.player[0], coup.banker[0], coup.player[1], coup.banker[1]]
    if coup.player_third is not None:
        order.append(coup.player_third)
    if coup.banker_third is not None:
        order.append(coup.banker_third)
    return order


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from([c.code for c in baccarat.DECK]), min_size=6, max_size=6))
def test_any_six_cards_resolve_as_deal(fast_tmp_factory: object, six: list[str]) -> None:
    # cards the shoe's integrity check halts on (the same cards in the same order twice, a
    # run of one suit or of ranks: docs/baccarat-table.md "Shoe integrity", its own tests)
    # are no coup to compare
    monitor = SequenceMonitor()
    assume(not any(monitor.add(code) for code in ["2S", "AH", "AD", *six]))
    rig = fast_tmp_factory()  # type: ignore[operator]
    rig.open_shoe()
    rig.press("no_more_bets")
    used = 0
    for code in six:
        if rig.table.state == "settling":
            break
        rig.frame("CARD", code)
        used += 1
    coup = baccarat.deal(baccarat.cards(six))
    row = rig.rows("baccarat.coup.result")[-1].data
    assert used == coup.cards_used
    assert row["player"] == [c.code for c in coup.player]
    assert row["banker"] == [c.code for c in coup.banker]
    assert row["winner"] == coup.winner


def test_display_tells_the_dealer_what_comes_next(rig: Rig) -> None:
    rig.open_shoe()
    rig.press("no_more_bets")
    assert rig.display.lines == ("CARDS", "PLAYER CARD")
    rig.cards("2S")
    assert rig.display.lines == ("CARDS", "BANKER CARD")
    rig.cards("3S 2H KH")  # player 4, banker 3
    assert rig.display.lines[0] == "PLAYER DRAWS"
    rig.cards("8D")  # banker 3 stays on a player's third 8, (f)(13)
    assert rig.display.lines == ("BANKER WINS 3", "P 2  B 3")
    rig.press("settled")
    rig.press("no_more_bets")
    rig.cards("TS 3H 7S 2D")  # player 7 stands, banker 5 draws (f)(12)
    assert rig.display.lines == ("PLAYER STANDS", "BANKER DRAWS")
    rig.cards("AC")
    assert rig.display.lines[0] == "PLAYER WINS 7"


def test_wagers_settle_in_cents_with_commission(rig: Rig) -> None:
    rig.open_shoe()
    rig.act("bet 3 banker 1000")
    rig.act("bet 5 player 500")
    rig.act("bet 5 tie 500")
    rig.press("no_more_bets")
    rig.cards("2S 9H 3S KD")  # banker 9 + 0: a natural; both stand (f)(10)
    rows = rig.rows("baccarat.settlement")[-1].data["lines"]
    lines = {(x["seat"], x["wager"]): x for x in rows}
    assert lines[(3, "banker")]["net_cents"] == 950
    assert lines[(3, "banker")]["commission_cents"] == 50
    assert lines[(5, "player")]["net_cents"] == -500
    assert lines[(5, "tie")]["net_cents"] == -500
    # (g)(2): highest seat first.
    seats = [x["seat"] for x in rig.rows("baccarat.settlement")[-1].data["lines"]]
    assert seats == sorted(seats, reverse=True)


def test_deferred_vig_blocks_the_reshuffle_until_collected(fast_tmp_factory: object) -> None:
    rig = fast_tmp_factory(deferred_vig=True)  # type: ignore[operator]
    rig.open_shoe()
    rig.act("bet 2 banker 2000")
    rig.press("no_more_bets")
    rig.cards("2S 9H 3S KD")  # banker natural 9 wins
    row = rig.rows("baccarat.settlement")[-1].data
    assert row["lines"][0]["vig_deferred"] is True and row["lines"][0]["paid_cents"] == 2000
    assert row["ledger"] == {"2": 100}
    rig.press("settled")
    rig.act("void end of session")
    assert rig.table.state == "shuffle"
    exc = rig.refused(rig.press, "shuffled")
    assert "5324.20(d)(2)" in exc.reason
    assert "seat 3 owes no vigorish" in rig.refused(rig.act, "collect 3").reason
    assert rig.act("collect 2") == ["seat 2: collected $1.00"]
    assert "seat 2 owes no vigorish" in rig.refused(rig.act, "collect 2").reason  # collected
    rig.press("shuffled")
    assert rig.table.state == "burn"


def test_banker_loss_compels_passing_the_shoe(rig: Rig) -> None:
    rig.open_shoe(curator=4)
    rig.press("no_more_bets")
    rig.cards("9S 2H KS 3D")  # player natural 9 wins: the banker's hand lost, (h)(1)(i)
    rig.press("settled")
    assert rig.table.state == "passing"
    rig.act("curator 5")
    assert rig.rows("baccarat.curator")[-1].data["offer_order"][0] == 5  # (h)(2)
    rig.press("no_more_bets")
    rig.cards("2S 9H 3S KD")  # banker wins: the curator may stay
    rig.press("settled")
    assert rig.table.state == "betting"
    rig.act("pass")
    assert rig.table.state == "passing"
    rig.act("nobody")
    assert rig.table.state == "shuffle"


def test_odds_of_the_next_coup_from_the_cards_left(rig: Rig) -> None:
    rig.open_shoe()
    lines = rig.table.odds()
    assert lines[0] == "cards left 413"
    banker = float(lines[1].split()[1])
    assert 0.44 < banker < 0.47
