"""The configuration reaches the table (docs/baccarat-table.md, "Settings"): each baccarat
setting changed between coups (or shoes) changes what the table does, from the next coup (or
shoe) on; a coup keeps the settings it started with."""

from __future__ import annotations

import pytest

from tests.unit.baccarat_table.helpers import Rig

BANKER_NATURAL = "KS 9S 3D TS"  # player 3, banker 9: the banker wins
PLAYER_NATURAL = "9S 2H KS 3D"  # player 9, banker 5: the player wins (the banker's hand loses)
TEN_CARDS = "4S 5H 9C 2D 7S 8H 3C 6D QS JH"


def setting(rig: Rig, key: str, value: str) -> None:
    assert not rig.table.round_in_progress()  # the console refuses a change mid-round
    rig.settings.set(f"baccarat.{key}", value, "tech")


def coup(rig: Rig, cards: str) -> None:
    rig.press("no_more_bets")
    rig.cards(cards)
    assert rig.table.state == "settling"


@pytest.mark.parametrize(("count", "more"), [("burn", 10), ("baccarat", 0)])
def test_error_card_count_sets_how_many_cards_follow_a_disclosed_error_card(
    rig: Rig, count: str, more: int
) -> None:
    rig.open_shoe()
    setting(rig, "error_card_count", count)
    rig.press("no_more_bets")
    rig.cards("2S 9H 3S KD")  # banker natural: both stand
    rig.frame("CARD", "KH")  # the player's third card in error, (i)(3)
    rig.press("disclose")
    rig.press("settled")
    rig.act("remedy burn")
    if more:
        assert rig.table.state == "burn"
        rig.cards(TEN_CARDS)
    assert rig.table.state == "betting"
    done = rig.rows("baccarat.burn.done")[-1].data
    assert (
        done["count"] == more
        and rig.rows("baccarat.irregularity")[-1].data["kind"] == "player_third"
    )


def test_a_coup_keeps_the_error_card_count_it_started_with(rig: Rig) -> None:
    rig.open_shoe()
    rig.press("no_more_bets")
    rig.cards("2S 9H 3S KD")
    rig.settings.set("baccarat.error_card_count", "baccarat", "tech")  # (the console refuses)
    rig.frame("CARD", "KH")
    rig.press("disclose")
    rig.press("settled")
    rig.act("remedy burn")
    assert rig.table.state == "burn"  # still 10 more, as when the coup started
    assert rig.rows("baccarat.coup.start")[-1].data["settings"]["error_card_count"] == "burn"


@pytest.mark.parametrize("burn_from", ["next_card", "face_up_card"])
def test_face_up_burn_from_sets_where_the_burn_starts(rig: Rig, burn_from: str) -> None:
    rig.open_shoe()
    setting(rig, "face_up_burn_from", burn_from)
    coup(rig, BANKER_NATURAL)  # the coup's start takes the setting
    rig.press("settled")
    rig.frame("FLT", "FACEUP")
    rig.frame("CARD", "QH")
    rig.act("disclose")
    rig.act("remedy burn")
    assert rig.table.state == "burn"
    if burn_from == "next_card":
        assert rig.display.lines == ("BURN: FIRST CARD", "FACE UP")
        rig.frame("CARD", "3C")  # turned face up: 3 more
        rig.cards("4S 5H 9C")
        face_up, count = "3C", 3
    else:
        rig.cards(TEN_CARDS)  # QH was the first card: 10 more
        face_up, count = "QH", 10
    assert rig.table.state == "betting"
    done = rig.rows("baccarat.burn.done")[-1].data
    assert (done["face_up"], done["count"]) == (face_up, count)


@pytest.mark.parametrize(("hands", "after"), [(0, "shuffle"), (1, "betting")])
def test_hands_after_cover_sets_when_the_shoe_ends(rig: Rig, hands: int, after: str) -> None:
    setting(rig, "hands_after_cover", str(hands))  # before the shoe: it takes the setting
    rig.open_shoe()
    rig.press("no_more_bets")
    rig.cards("KS 9S")
    rig.frame("COVR")
    rig.cards("3D TS")
    rig.press("settled")
    assert rig.table.state == after
    assert rig.table.status()["last_hand"] == ("yes" if hands else "no")


def test_hands_after_cover_changed_mid_shoe_waits_for_the_next_shoe(rig: Rig) -> None:
    rig.open_shoe()  # the default: one hand after the cover card's
    setting(rig, "hands_after_cover", "0")
    rig.press("no_more_bets")
    rig.cards("KS 9S")
    rig.frame("COVR")
    rig.cards("3D TS")
    rig.press("settled")
    assert rig.table.state == "betting" and rig.table.status()["last_hand"] == "yes"
    assert rig.rows("baccarat.shoe.start")[-1].data["settings"]["hands_after_cover"] == 1


@pytest.mark.parametrize("back", [False, True])
def test_offer_back_to_previous_puts_the_previous_curator_last(rig: Rig, back: bool) -> None:
    rig.open_shoe(curator=1)
    setting(rig, "offer_back_to_previous", "true" if back else "false")
    coup(rig, PLAYER_NATURAL)  # the banker's hand lost: the shoe passes, (h)(1)(i)
    rig.press("settled")
    assert rig.table.state == "passing"
    rig.act("curator 2")
    order = rig.rows("baccarat.curator")[-1].data["offer_order"]
    assert order == [2, 3, 4, 5, 6, 7, 8] + ([1] if back else [])


@pytest.mark.parametrize(("compels", "after"), [(False, "betting"), (True, "passing")])
def test_dead_hand_compels_pass(rig: Rig, compels: bool, after: str) -> None:
    rig.open_shoe()
    setting(rig, "dead_hand_compels_pass", "true" if compels else "false")
    rig.frame("CARD", "4C")  # drawn in excess, then disclosed
    rig.press("disclose")
    rig.act("remedy dead")  # a hand nobody wagers on: its coup takes the setting
    rig.cards(PLAYER_NATURAL)
    rig.press("settled")
    assert rig.table.state == after


@pytest.mark.parametrize("pays", [8, 9])
def test_rules_reach_the_settlement(rig: Rig, pays: int) -> None:
    rig.open_shoe()
    setting(rig, "tie_pays", str(pays))
    rig.act("bet 3 tie 500")
    coup(rig, "KS TS 9S 9H")  # 9 - 9: a tie
    line = rig.rows("baccarat.settlement")[-1].data["lines"][0]
    assert (line["wager"], line["net_cents"]) == ("tie", 500 * pays)


def test_a_restarted_table_settles_with_the_coups_settings(rig: Rig) -> None:
    rig.open_shoe()
    setting(rig, "tie_pays", "9")
    rig.act("bet 3 tie 500")
    rig.press("no_more_bets")
    rig.cards("KS TS")
    again = rig.reopen()  # a restart mid-coup: replayed with the same settings
    again.cards("9S 9H")
    line = again.rows("baccarat.settlement")[-1].data["lines"][0]
    assert line["net_cents"] == 4500


def test_decks_changed_mid_shoe_wait_for_the_next_shoe_and_a_restart_keeps_them(
    rig: Rig,
) -> None:
    """A shoe's inventory is the decks it started with (5324.20(a)(4)): a change takes the
    next shoe; neither the shoe in play nor, after a restart, its rebuilt inventory changes."""
    rig.open_shoe()  # 8 decks (the default); 2S face up, then two cards: 3 burned
    assert rig.table.status()["cards_left"] == str(8 * 52 - 3)
    setting(rig, "decks", "6")
    coup(rig, BANKER_NATURAL)
    rig.press("settled")
    assert rig.table.status()["cards_left"] == str(8 * 52 - 7)
    again = rig.reopen()
    assert again.table.status()["cards_left"] == str(8 * 52 - 7)
    again.press("no_more_bets")  # the cover card, then the last hand: the shoe ends
    again.cards("KS 9S")
    again.frame("COVR")
    again.cards("3D TS")
    again.press("settled")
    coup(again, PLAYER_NATURAL)
    again.press("settled")
    assert again.table.state == "shuffle"
    again.open_shoe()  # a new shoe: the 6 decks now
    assert again.rows("baccarat.shoe.start")[-1].data["decks"] == 6
    assert again.table.status()["cards_left"] == str(6 * 52 - 3)
    assert not [a for a in again.alarms if "inventory" in a]
