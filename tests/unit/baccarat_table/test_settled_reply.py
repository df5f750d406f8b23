"""What ``settled`` says at baccarat: every wager's settlement and the ledger, as pai gow's
``settled`` does (docs/console.md); and ``status`` names the coup as the dealer display does.

The expected figures are worked out here from 9 NYCRR 5324.20, not from the table's engine:
(d)(1) the player's hand pays 1:1; (d)(2) the banker's hand pays 1:1 less a vigorish of 5% of
the amount won, charged in 25-cent steps per $5 staked (stakes are whole $5s); (b)(1)(i)(c),
(ii)(c) a banker or player wager ties and is returned when the hands tie; (b)(1)(iii) a tie
wager wins on a tie and loses otherwise, paid at the posted odds (``baccarat.tie_pays``,
8 to 1 by default, (a)(2)(iii)); (g)(2) the wagers in descending order of player position.
"""

from __future__ import annotations

from controller.journal.recall import recall
from tests.unit.baccarat_table.helpers import Rig


def _vig(stake_cents: int) -> int:
    """5324.20(d)(2): 5% of the amount won, in 25-cent increments on $5 stakes."""
    assert stake_cents % 500 == 0
    return stake_cents // 500 * 25


def _said(rig: Rig, before: int) -> list[str]:
    """The ``!BUTTON settled`` lines every console heard since ``before``."""
    return [a.removeprefix("BUTTON settled: ") for a in rig.alarms[before:]]


def _money(cents: int) -> str:
    return ("-" if cents < 0 else "+") + f"${abs(cents) // 100}.{abs(cents) % 100:02d}"


def test_settled_says_every_wager_s_settlement_and_the_ledger(rig: Rig) -> None:
    rig.open_shoe()
    for line in ("bet 3 banker 1000", "bet 5 player 500", "bet 5 tie 500", "bet 7 banker 2500"):
        rig.act(line)
    rig.press("no_more_bets")
    rig.cards("2S 9H 3S KD")  # player 2+3 = 5, banker 9+0 = 9: a natural, the banker wins
    before = len(rig.alarms)
    rig.press("settled")
    seat3 = 1000 - _vig(1000)  # 950
    seat7 = 2500 - _vig(2500)  # 2375
    seat5 = -500 - 500  # the player wager and the tie wager lose
    house = -(seat3 + seat5 + seat7)
    assert _said(rig, before) == [
        "coup 1 settled (player 2S 3S = 5, banker 9H KD = 9: banker); next: betting",
        # (g)(2): the losing wagers collected first, then the winning ones, highest seat first
        "seat 5 player: 500c lose net -500c",
        "seat 5 tie: 500c lose net -500c",
        f"seat 7 banker: 2500c win vig {_vig(2500)}c net +{seat7}c",
        f"seat 3 banker: 1000c win vig {_vig(1000)}c net +{seat3}c",
        f"ledger: house {_money(house)}, seat3 {_money(seat3)}, seat5 {_money(seat5)},"
        f" seat7 {_money(seat7)}",
    ]


def test_a_tie_pays_the_tie_wager_and_returns_banker_and_player(rig: Rig) -> None:
    rig.open_shoe()
    for line in ("bet 2 tie 500", "bet 2 banker 1000", "bet 1 player 500"):
        rig.act(line)
    rig.press("no_more_bets")
    rig.cards("4S 4H 5S 5H")  # player 4+5 = 9, banker 4+5 = 9: a tie of naturals
    before = len(rig.alarms)
    rig.press("settled")
    tie = 500 * 8  # 8 to 1, the posted default
    lines = _said(rig, before)
    assert lines[1:] == [  # (g)(2): the winning wager paid, then the ties returned
        f"seat 2 tie: 500c win net +{tie}c",
        "seat 2 banker: 1000c push net +0c",
        "seat 1 player: 500c push net +0c",
        f"ledger: house {_money(-tie)}, seat1 +$0.00, seat2 {_money(tie)}",
    ]


def test_deferred_vigorish_is_said_owed(fast_tmp_factory: object) -> None:
    rig = fast_tmp_factory(deferred_vig=True)  # type: ignore[operator]
    rig.open_shoe()
    rig.act("bet 2 banker 2000")
    rig.press("no_more_bets")
    rig.cards("2S 9H 3S KD")
    before = len(rig.alarms)
    rig.press("settled")
    vig = _vig(2000)
    assert _said(rig, before)[1:] == [
        f"seat 2 banker: 2000c win vig {vig}c owed net +{2000 - vig}c",
        f"ledger: house {_money(-(2000 - vig))}, seat2 {_money(2000 - vig)}",
        f"vigorish owed (5324.20(d)(2)): seat 2 ${vig // 100}.{vig % 100:02d}",
    ]


def test_a_coup_without_wagers_says_so(rig: Rig) -> None:
    rig.open_shoe()
    rig.press("no_more_bets")
    rig.cards("2S 9H 3S KD")
    before = len(rig.alarms)
    rig.press("settled")
    assert _said(rig, before)[1:] == ["no wagers were entered: nothing to settle"]


def test_status_names_the_coup_the_dealer_display_and_the_monitor_name(rig: Rig) -> None:
    """While bets are open the coup to come (``PLACE YOUR BETS / COUP 2`` after coup 1); the
    round is the journal's id of the coup being dealt (what recall lists), none between."""
    rig.open_shoe()
    for coup in (1, 2):
        status = rig.table.status()
        assert rig.display.lines == ("PLACE YOUR BETS", f"COUP {coup}")
        assert status["coup"] == str(coup) == str(rig.table.published()["coup"])
        assert status["round"] == "-"
        rig.press("no_more_bets")
        status = rig.table.status()
        round_id = recall(rig.journal, 1)[0].round_id
        assert status["coup"] == str(coup) == str(rig.table.published()["coup"])
        assert status["round"] == f"{round_id} (coup {coup}'s rows in the journal and recall)"
        rig.cards("2S 9H 3S KD")
        assert rig.table.status()["coup"] == str(coup)
        rig.press("settled")
