"""The baccarat table's published view (the scoreboard): the shoe and coup numbers and this
shoe's results, each coup's winner with its pair and natural flags, which must equal what the
journal's coup result rows say (computed here from the cards, independently of the table), and
survive a restart at any point of a coup."""

from __future__ import annotations

import json
import random

from controller.games import baccarat
from tests.unit.baccarat_table.helpers import Rig
from tests.unit.scoreboard.expected import expected_code


def shuffled(seed: int) -> list[str]:
    cards = [c.code for c in baccarat.shoe_cards(8)]
    random.Random(seed).shuffle(cards)
    return cards


def journaled(rig: Rig, shoe: int) -> list[str]:
    return [
        expected_code(e.data) for e in rig.rows("baccarat.coup.result") if e.data["shoe"] == shoe
    ]


def play(rig: Rig, cards: list[str], coups: int) -> list[str]:
    """Deal ``coups`` whole coups from ``cards`` (consumed); betting again after each."""
    for _ in range(coups):
        rig.press("no_more_bets")
        while rig.table.state not in ("settling", "shuffle"):
            rig.frame("CARD", cards.pop(0))
        rig.press("settled")
        if rig.table.state == "passing":
            rig.act(f"curator {rig.table.data.curator % 8 + 1}")
    return cards


def test_the_view_carries_the_shoe_and_its_results(rig: Rig) -> None:
    view = rig.table.published()
    assert view["game"] == "baccarat" and view["results"] == () and view["shoe"] == 0
    rig.open_shoe()
    cards = shuffled(11)
    for n in range(1, 31):
        play(rig, cards, 1)
        view = rig.table.published()
        json.dumps(view)
        # betting again: the coup to come, the number the dealer display names
        assert view["shoe"] == 1 and view["coup"] == n + 1 and view["state"] == "betting"
        assert rig.displays[-1] == f"DISPLAY PLACE YOUR BETS / COUP {n + 1}"
        assert list(view["results"]) == journaled(rig, 1)  # type: ignore[call-overload]
        row = rig.rows("baccarat.coup.result")[-1].data
        assert view["last_totals"] == (row["player_total"], row["banker_total"])
    codes = journaled(rig, 1)
    # The shuffled shoe had at least one of each flag in 30 coups (seed 11): the test says so.
    assert any("b" in c for c in codes) and any("p" in c for c in codes)
    assert any("n" in c for c in codes) and any(c.startswith("T") for c in codes)


def test_results_survive_a_restart_anywhere_in_a_coup(rig: Rig) -> None:
    rig.open_shoe()
    cards = play(rig, shuffled(3), 5)
    rig.press("no_more_bets")
    rig.frame("CARD", cards.pop(0))  # mid-coup: one card out
    before = rig.table.published()["results"]
    rig = rig.reopen()
    assert rig.table.published()["results"] == before
    while rig.table.state != "settling":
        rig.frame("CARD", cards.pop(0))
    rig = rig.reopen()  # settling: the result is journaled
    results = rig.table.published()["results"]
    assert list(results) == journaled(rig, 1) and len(results) == 6  # type: ignore[arg-type]


def test_a_new_shoe_starts_an_empty_board(rig: Rig) -> None:
    rig.open_shoe()
    play(rig, shuffled(5), 3)
    rig.act("void end of test shoe")
    assert rig.table.state == "shuffle"
    assert len(rig.table.published()["results"]) == 3  # type: ignore[arg-type]
    rig.open_shoe()
    view = rig.table.published()
    assert view["shoe"] == 2 and view["results"] == ()


def test_each_call_builds_new_objects(rig: Rig) -> None:
    rig.open_shoe()
    cards = play(rig, shuffled(2), 2)
    first = rig.table.published()
    assert isinstance(first["results"], tuple)  # immutable: nothing to share
    play(rig, cards, 1)
    assert len(first["results"]) == 2  # the earlier view did not change
    assert len(rig.table.published()["results"]) == 3  # type: ignore[arg-type]


def test_the_coup_number_is_the_dealer_displays_at_every_step(rig: Rig) -> None:
    """The page used to show ``COUP 1 PLACE YOUR BETS`` while the dealer display said
    ``COUP 2``: the view's coup is the one the dealer display names, whatever the state."""
    rig.open_shoe()
    cards = shuffled(7)
    for n in range(1, 4):
        assert rig.table.published()["coup"] == n  # betting: the coup to come
        rig.press("no_more_bets")
        assert rig.table.published()["coup"] == n  # its cards: the same coup
        while rig.table.state not in ("settling", "shuffle"):
            rig.frame("CARD", cards.pop(0))
        assert rig.table.published()["coup"] == n  # settling: still that coup
        rig.press("settled")
        if rig.table.state == "passing":
            assert rig.table.published()["coup"] == n + 1
            rig.act(f"curator {rig.table.data.curator % 8 + 1}")
    assert rig.displays[-1].endswith("COUP 4")


def test_the_last_totals_survive_a_restart_and_a_new_shoe_clears_them(rig: Rig) -> None:
    rig.open_shoe()
    play(rig, shuffled(9), 2)
    totals = rig.table.published()["last_totals"]
    assert len(totals) == 2  # type: ignore[arg-type]
    rig = rig.reopen()
    assert rig.table.published()["last_totals"] == totals
    rig.act("void end of test shoe")
    rig.open_shoe()
    assert rig.table.published()["last_totals"] == ()
