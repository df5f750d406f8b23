"""What the baccarat table says (issue 15): refused buttons said on every console, what the
dealer display shows (``!DISPLAY``), the coup in progress in ``status``, clear errors for
``curator`` and ``bet`` out of turn, and the offer order of 5324.20(h)(2) enforced."""

from __future__ import annotations

from controller.tables.kernel.press import ButtonWiring
from controller.tables.kernel.sim import SimControls
from drivers.buttons import ButtonPressed

from .helpers import Rig


def _lose_banker_hand(rig: Rig) -> None:
    """A coup the player wins (the banker's hand loses: the shoe must pass, (h)(1)(i))."""
    rig.press("no_more_bets")
    rig.cards("9C TS 9D TD")  # player 9, banker 0: naturals, player wins
    assert rig.table.state == "settling"
    rig.press("settled")
    assert rig.table.state == "passing"


def test_a_refused_button_is_said_on_every_console_and_never_raised_to_the_loop(rig: Rig) -> None:
    rig.open_shoe()
    rig.frame("FLT", "JAM")  # a shoe fault
    before = len(rig.alarms)
    rig.table.handle(ButtonPressed("no_more_bets", 0))  # as the loop calls it: no exception
    refused = [a for a in rig.alarms[before:] if a.startswith("REFUSED no_more_bets: ")]
    assert refused and "JAM" in refused[0]
    assert rig.table.state == "betting"
    assert rig.rows("baccarat.refused")[-1].data["reason"] in refused[0]


def test_a_button_says_what_it_did(rig: Rig) -> None:
    before = len(rig.alarms)
    rig.press("shuffled")
    assert [a for a in rig.alarms[before:] if a.startswith("BUTTON ")] == [
        "BUTTON shuffled: shoe 1: burn the first card (5324.20(e))"
    ]


def test_the_dealer_display_is_said_on_every_console_when_it_changes(rig: Rig) -> None:
    rig.press("shuffled")
    assert rig.displays[-1] == "DISPLAY BURN: FIRST CARD / FACE UP"
    rig.cards("2S AH AD")
    assert rig.displays[-1] == "DISPLAY OFFER THE SHOE / FROM SEAT 1"
    count = len(rig.displays)
    rig.table.status()
    assert len(rig.displays) == count  # nothing new shown, nothing said


def test_status_shows_the_cards_of_the_coup_and_clears_the_last_result(rig: Rig) -> None:
    rig.open_shoe()
    assert rig.table.status()["coup_cards"] == "-"
    rig.press("no_more_bets")
    rig.cards("4S 9H 2C")
    assert rig.table.status()["coup_cards"] == "P 4S 2C (6)  B 9H (9)"
    rig.frame("CARD", "KD")  # a natural 9: the coup is complete
    status = rig.table.status()
    assert status["coup_cards"] == "P 4S 2C (6)  B 9H KD (9)"
    assert rig.table.state == "settling" and status["last_result"] != "none"
    rig.press("settled")
    if rig.table.state == "passing":
        rig.act(f"curator {rig.table.data.curator % 8 + 1}")
    rig.press("no_more_bets")  # a new coup: the last result is not its
    status = rig.table.status()
    assert status["last_result"] == "none" and status["coup_cards"] == "-"


def test_a_wager_while_the_shoe_is_offered_says_curator_comes_first(rig: Rig) -> None:
    rig.press("shuffled")
    rig.cards("2S AH AD")
    assert rig.table.state == "offering"
    exc = rig.refused(rig.act, "bet 1 banker 500")
    assert "`curator SEAT` first" in exc.reason


def test_curator_while_betting_is_a_plain_refusal_not_library_text(rig: Rig) -> None:
    rig.open_shoe()
    exc = rig.refused(rig.act, "curator 4")
    assert "Can't trigger" not in exc.reason and "accept_shoe" not in exc.reason
    assert "seat 1 holds the shoe" in exc.reason


def test_an_out_of_order_trigger_names_what_is_allowed(rig: Rig) -> None:
    exc = rig.refused(rig.press, "settled")
    assert "Can't trigger" not in exc.reason
    assert exc.reason == "the table is in state shuffle, where it takes the shuffled button"


def test_the_shoe_never_goes_back_to_the_curator_whose_banker_hand_lost(rig: Rig) -> None:
    """5324.20(h)(2): offered to the player to the right of the previous curator, then to each
    of the other players in turn; with offer_back_to_previous = false (the default) never back
    to the previous curator."""
    rig.open_shoe(curator=3)
    _lose_banker_hand(rig)
    exc = rig.refused(rig.act, "curator 3")
    assert "5324.20(h)(2)" in exc.reason and "offer_back_to_previous" in exc.reason
    assert rig.table.state == "passing"
    reply = rig.act("curator 5")  # seat 4 declined or is empty: seat 5 accepts
    assert reply[0].startswith("seat 5 holds the shoe (offered in turn: 4, 5, 6, 7, 8, 1, 2;")
    assert rig.table.state == "betting"


def test_with_offer_back_the_previous_curator_is_offered_last(rig: Rig) -> None:
    rig.settings.set("baccarat.offer_back_to_previous", "true", "technician@test")
    rig.open_shoe(curator=3)
    _lose_banker_hand(rig)
    reply = rig.act("curator 3")
    assert "offered in turn: 4, 5, 6, 7, 8, 1, 2, 3;" in reply[0]


def test_sim_button_without_a_name_lists_the_buttons(rig: Rig) -> None:
    rig.table._sim._controls = SimControls(  # noqa: SLF001
        buttons=ButtonWiring({"shuffled": 9, "no_more_bets": 11})
    )
    exc = rig.refused(rig.act, "sim button")
    assert exc.code == "SYNTAX" and "buttons: shuffled, no_more_bets" in exc.reason


def test_help_has_every_action_with_an_example(rig: Rig) -> None:
    helps = rig.table.action_help()
    for word in (
        "curator",
        "bet",
        "pass",
        "nobody",
        "disclose",
        "remedy",
        "collect",
        "void",
        "clear",
        "sim",
    ):
        assert helps[word].syntax.startswith(word) and helps[word].example.startswith(word)
    assert set(rig.table.action_names()) >= set(helps)
