"""The irregularities of 5324.20(i), the cover card of (f)(9) and the shoe's integrity checks."""

from __future__ import annotations

import random

from controller.games import baccarat
from drivers.shoe_events import ShoeWatchdog
from tests.unit.baccarat_table.helpers import Rig


def result(rig: Rig) -> dict[str, object]:
    data: dict[str, object] = rig.rows("baccarat.coup.result")[-1].data
    return data


def test_card_drawn_in_excess_is_the_next_hands_first_card(rig: Rig) -> None:
    rig.open_shoe()
    rig.frame("CARD", "4C")  # during betting: drawn in excess, (i)(2)
    row = rig.rows("baccarat.irregularity")[-1].data
    assert row["kind"] == "excess" and row["section"] == "5324.20(i)(2)"
    assert rig.alarms and "4C" in rig.alarms[-1]
    rig.press("no_more_bets")
    rig.cards("TS 3H KS")
    expected = baccarat.deal(baccarat.cards("4C TS 3H KS 2D 2C"))
    while rig.table.state != "settling":
        rig.frame("CARD", ["2D", "2C"][len(rig.table.data.coup) - 4])
    assert result(rig)["player"] == [c.code for c in expected.player]
    assert result(rig)["banker"] == [c.code for c in expected.banker]


def test_disclosed_excess_card_then_the_dealer_burns(rig: Rig) -> None:
    rig.open_shoe()
    rig.frame("CARD", "4C")
    rig.press("disclose")
    exc = rig.refused(rig.press, "no_more_bets")
    assert "remedy" in exc.reason
    rig.act("remedy burn")  # (i)(1)(i): next card face up, as many more burned
    assert rig.table.state == "burn"
    rig.cards("3D 5S 6S")
    assert rig.table.state == "burn"
    rig.frame("CARD", "7S")
    assert rig.table.state == "betting"
    done = rig.rows("baccarat.burn.done")[-1].data
    assert done == {"face_up": "3D", "burned": ["5S", "6S", "7S"], "count": 3, "reason": "choice"}
    rig.press("no_more_bets")
    rig.cards("9S 2H KS 3D")
    assert result(rig)["cards"] == ["9S", "2H", "KS", "3D"]  # 4C is in no hand


def test_disclosed_excess_card_then_a_hand_nobody_wagers_on(rig: Rig) -> None:
    rig.open_shoe()
    rig.act("bet 1 banker 500")
    rig.frame("CARD", "4C")
    rig.press("disclose")
    rig.act("remedy dead")  # (i)(1)(ii)
    assert rig.table.state == "dealing"
    rig.cards("9S 2H KS 3D")  # the banker's hand loses a dead hand
    assert result(rig)["dead_hand"] is True
    assert rig.rows("baccarat.settlement")[-1].data["lines"] == []
    rig.press("settled")
    assert rig.table.state == "betting"  # a dead hand compels no pass (shoe_passing default)


def test_player_third_card_in_error_when_both_stand(rig: Rig) -> None:
    rig.open_shoe()
    rig.press("no_more_bets")
    rig.cards("2S 9H 3S KD")  # banker natural: no third card, (f)(10)
    rig.frame("CARD", "6H")  # dealt to the player in error, (i)(3)
    row = rig.rows("baccarat.irregularity")[-1].data
    assert row["kind"] == "player_third" and row["section"] == "5324.20(i)(3)"
    rig.press("settled")
    rig.press("no_more_bets")
    rig.cards("TS 3H KS")  # 6H is this hand's first card
    assert rig.table.data.coup == ["6H", "TS", "3H", "KS"]


def test_player_third_card_in_error_disclosed_is_burned_with_as_many_more(rig: Rig) -> None:
    rig.open_shoe()
    rig.press("no_more_bets")
    rig.cards("2S 9H 3S KD")
    rig.frame("CARD", "3H")
    rig.press("disclose")
    rig.press("settled")
    assert rig.refused(rig.act, "remedy dead").reason.startswith("5324.20(i)(3)")
    rig.act("remedy burn")
    assert rig.table.state == "burn"
    rig.cards("4S 5S 6S")
    assert rig.table.state == "betting"
    assert rig.rows("baccarat.burn.done")[-1].data["face_up"] == "3H"


def test_the_banker_takes_the_card_when_it_must_draw(rig: Rig) -> None:
    rig.open_shoe()
    rig.press("no_more_bets")
    rig.cards("TS 3H 7S 2D")  # player 7 stays, banker 5 draws: (f)(12)
    assert rig.table.state == "banker_third"
    rig.frame("CARD", "AC")  # put on the player's spot in error: the banker's third, (i)(3)
    assert result(rig)["banker"] == ["3H", "2D", "AC"]


def test_face_up_card_is_never_the_first_card_of_a_hand(rig: Rig) -> None:
    rig.open_shoe()
    rig.frame("FLT", "FACEUP")
    rig.frame("CARD", "QH")
    assert rig.rows("baccarat.card")[-1].data["use"] == "discard"
    rig.press("no_more_bets")
    rig.cards("9S 2H KS 3D")
    assert result(rig)["cards"] == ["9S", "2H", "KS", "3D"]


def test_face_up_card_disclosed_then_the_dealers_choice(rig: Rig) -> None:
    rig.open_shoe()
    rig.frame("FLT", "FACEUP")
    rig.frame("CARD", "QH")
    rig.act("disclose")
    rig.act("remedy dead")
    assert rig.table.state == "dealing"


def test_cover_card_completes_the_hand_and_the_next_is_the_last(rig: Rig) -> None:
    rig.open_shoe()
    rig.press("no_more_bets")
    rig.cards("9S 2H")
    rig.frame("COVR")
    rig.cards("KS 3D")
    assert rig.table.state == "settling"
    assert rig.rows("baccarat.last_hand")
    rig.press("settled")
    rig.act("curator 2")  # the banker's hand lost: the shoe passes, (h)(1)(i)
    assert rig.display.lines == ("PLACE YOUR BETS", "LAST HAND")
    rig.press("no_more_bets")
    rig.cards("9S 2H KS 3D")
    rig.press("settled")
    assert rig.table.state == "shuffle"


def test_a_cover_card_behind_the_last_card_voids_the_coup(rig: Rig) -> None:
    rig.open_shoe()
    rig.frame("COVR")
    rig.press("no_more_bets")
    rig.cards("9S 2H")
    rig.frame("COVR")  # the second cover card: no cards left, (i)(4)
    voided = rig.rows("baccarat.coup.voided")[-1]
    assert voided.data["cards"] == ["9S", "2H"] and "5324.20(i)(4)" in voided.data["reason"]
    assert voided.round is not None
    assert rig.table.state == "shuffle"


def test_too_few_cards_left_voids_the_round(rig: Rig) -> None:
    cards = [c.code for c in baccarat.shoe_cards(8)]
    random.Random(3).shuffle(cards)
    rig.press("shuffled")
    it = iter(cards)
    while rig.table.state == "burn":
        rig.frame("CARD", next(it))
    rig.act("curator 1")
    while rig.table.state != "shuffle":
        if rig.table.state == "passing":  # (h)(2): to the right of the last curator
            rig.act(f"curator {(rig.table.data.curator or 0) % 8 + 1}")
        rig.press("no_more_bets")
        while rig.table.state not in ("settling", "shuffle"):
            rig.frame("CARD", next(it))
        if rig.table.state == "settling":
            rig.press("settled")
    voided = rig.rows("baccarat.coup.voided")[-1].data
    assert "5324.20(i)(4)" in voided["reason"]
    assert len(rig.table.data.cards_out) + len(list(it)) == 416


def test_a_card_beyond_the_composition_halts_the_game(rig: Rig) -> None:
    rig.press("shuffled")
    rig.cards("TS AS 2C AS 3C AS 4C AS 5C AS 6C")  # a ten face up: ten burned, five aces
    rig.act("curator 1")
    rig.press("no_more_bets")
    rig.cards("AS 7D AS 8D AS")  # player 2 draws an ace, banker 5 stands on it: 8 aces out
    rig.press("settled")
    rig.press("no_more_bets")
    rig.frame("CARD", "AS")  # a ninth ace of spades from eight decks
    assert rig.table.state == "halted"
    assert any("inventory" in f for f in rig.table.faults())
    assert rig.alarms[-1].startswith("FAULT inventory")
    assert rig.rows("baccarat.coup.voided")[-1].data["cards"] == []
    assert rig.refused(rig.press, "no_more_bets")
    rig.frame("CARD", "2S")  # a card while halted is journaled, never dropped
    assert rig.rows("baccarat.card")[-1].data == {"card": "2S", "use": "held: table halted"}
    rig.table.clear_fault("tech")
    assert rig.table.state == "shuffle" and rig.table.faults() == []


def test_an_unreadable_card_halts_and_voids_the_coup(rig: Rig) -> None:
    rig.open_shoe()
    rig.press("no_more_bets")
    rig.cards("9S 2H")
    rig.frame("FLT", "UNREAD")
    assert rig.table.state == "halted"
    assert rig.rows("baccarat.coup.voided")[-1].data["cards"] == ["9S", "2H"]


def test_shoe_fault_and_watchdog_stop_new_coups(rig: Rig) -> None:
    rig.open_shoe()
    rig.frame("FLT", "JAM")
    assert "shoe fault JAM" in rig.table.faults()
    assert rig.refused(rig.press, "no_more_bets")
    rig.frame("FLT", "CLR")
    rig.table.handle(ShoeWatchdog(False, 3.2, 0))
    assert rig.refused(rig.press, "no_more_bets").code == "FAULT"
    assert rig.display.lines == ("SHOE OFFLINE", "WAIT FOR THE SHOE")
    rig.table.handle(ShoeWatchdog(True, 0.1, 0))
    rig.press("no_more_bets")
    assert rig.table.state == "dealing"


def test_a_card_with_no_shoe_in_play_is_journaled_and_alarmed(rig: Rig) -> None:
    rig.frame("CARD", "5D")
    assert rig.rows("baccarat.irregularity")[-1].data["problem"].startswith("a card read")
    assert "5D" in rig.alarms[-1]


def test_a_shoe_power_cycle_mid_coup_halts(rig: Rig) -> None:
    rig.open_shoe()
    rig.press("no_more_bets")
    rig.cards("9S")
    rig.session()
    assert rig.table.state == "halted"


def test_every_frame_is_journaled_before_it_is_acknowledged(rig: Rig) -> None:
    rig.open_shoe()
    frames = rig.rows("shoe.session") + rig.rows("shoe.frame")
    assert sorted(f.data["seq"] for f in frames) == rig.reader.acked


def test_after_a_fault_in_the_burn_the_next_shoe_burns_afresh(rig: Rig) -> None:
    rig.press("shuffled")
    rig.cards("5S 2D")
    rig.frame("FLT", "UNREAD")
    rig.table.clear_fault("tech")
    rig.press("shuffled")
    rig.cards("2C 3C 4H")
    assert rig.rows("baccarat.burn.done")[-1].data == {
        "face_up": "2C",
        "burned": ["3C", "4H"],
        "count": 2,
        "reason": "shoe",
    }
    assert rig.table.state == "offering"


def test_cards_drawn_in_excess_are_said_as_the_places_they_take_in_the_next_hand(
    rig: Rig,
) -> None:
    """(i)(2): an undisclosed card drawn in excess is the next hand's first card; a second one
    drawn after it is the next hand's second (the banker's first: player, banker, player,
    banker), and the dealer display says so, not "1ST" twice."""
    rig.open_shoe()
    rig.frame("CARD", "5S")
    assert rig.display.lines == ("CARD IN EXCESS 5S", "NEXT HAND 1ST CARD")
    rig.frame("CARD", "5C")
    assert rig.display.lines == ("CARD IN EXCESS 5C", "NEXT HAND 2ND CARD")
    assert "DISPLAY CARD IN EXCESS 5C / NEXT HAND 2ND CARD" in rig.displays
    held = "5S (the next hand's 1st card; `disclose` if it was seen), 5C (the next hand's 2nd"
    assert rig.table.status()["held_cards"].startswith(held)
    rig = rig.reopen()  # a restart: the held cards are still said
    assert rig.table.status()["held_cards"].startswith(held)
    rig.press("no_more_bets")
    rig.cards("4H 3D")  # the player's second card (5 + 4 = 9), the banker's (5 + 3 = 8)
    assert result(rig)["cards"] == ["5S", "5C", "4H", "3D"]
