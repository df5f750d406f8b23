"""Wagers and tiles entered at the console; the house way, outcomes and settlement in cents,
journaled so that recall rebuilds a disputed hand (9 NYCRR 5324.50(f)(11)).

Worked examples (cents):
* 5% vigorish, (f)(10): a $10.00 win pays 1000 - 50 = 950.
* Quarter rounding, (f)(10): $11.00 -> 55c -> 75c (net 1025); $10.10 -> 50.5c -> 75c (net 935);
  without it $10.10 pays 51c "up" (net 959) or 50c "down" (net 960).
* Copy hands go to the dealer, (b)(7), (f)(7): a wager whose two hands are copies of the
  dealer's loses.
* A low hand of value zero never wins, (f)(8)(i): a pair high with a zero low is a push even
  though the zero outranks the dealer's zero; where the high does not win, (f)(7) makes it lose
  and (f)(8)(ii) read word for word a push (setting ``paigow.zero_low_conflict``).
* A player bank's shortfall, (g)(14)-(15), (g)(17)-(18): see test_player_bank_covers_a_shortfall.
* A co-bank's odd cent, (g)(16): see test_co_bank_shortfall_odd_cent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.games import paigow as pg
from controller.journal.recall import recall

from .helpers import Rig, make_rig, play_round, reopen, settings

# The dealer's tiles; the house way (f)(4)(iv) plays the highest with the lowest:
# high 1-6 3-4 (value 4, top tile 1-6), low 1-5 2-6 (value 4, top tile 2-6).
WEAK = "2-6 1-5 3-4 1-6"
# high 6-6 1-6 (value 9), low 3-3 2-2 (value 0, top tile 3-3).
ZERO_LOW = "1-6 2-2 3-3 6-6"


def to_dealer_hands(rig: Rig, *wagers: str, bank: str | None = None) -> None:
    rig.press("shuffled")
    if bank:
        rig.act(bank)
    for w in wagers:
        rig.act(w)
    rig.press("no_more_bets")
    assert rig.state in ("no_more_bets", "bank_style"), rig.alarms[-1:]
    for name in ("draw", "dealt", "hands_set"):
        rig.press(name)
    assert rig.state == "dealer_hands"


def settle(rig: Rig) -> tuple[list[str], dict[str, Any]]:
    before = rig.journal.last_seq
    rig.press("settled")
    assert rig.state == "washing", rig.alarms[-1:]
    rows = [e for e in rig.journal.events(since_seq=before)]
    kinds = [r.kind for r in rows]
    assert kinds == ["paigow.settlement", "paigow.settled"]
    assert rows[0].data["input"]["button"] == "settled"  # the input rides on its first row
    closing = rows[1].data["record"]
    assert closing["settlement_seq"] == rows[0].seq
    return kinds, rows[0].data


def line(st: dict[str, Any], area: int | None) -> dict[str, Any]:
    return next(x for x in st["lines"] if x["area"] == area)


def refused(rig: Rig, command: str, *needles: str) -> str:
    """The command is refused, and the refusal is journaled with its reason."""
    before = rig.journal.last_seq
    state = rig.state
    exc = rig.try_act(command)
    assert exc is not None, f"{command!r} was accepted"
    rows = [e for e in rig.journal.events(since_seq=before)]
    assert [r.kind for r in rows] == ["paigow.refused"]
    assert rows[0].data["input"]["args"] == command.split()[1:]
    assert rows[0].data["reason"] == exc.reason
    assert rig.state == state
    for needle in needles:
        assert needle in exc.reason, (needle, exc.reason)
    return exc.reason


# -- house-banked rounds ---------------------------------------------------------------------


def test_house_round_vig_and_copy_hands(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    to_dealer_hands(rig, "wager 1 1000", "wager 3 500", "wager 4 700")
    out = rig.act(f"tiles dealer {WEAK}")
    assert "dealer: high 1-6 3-4  low 1-5 2-6" in out[-1] and "house way" in out[-1]
    rig.act("hands 1 6-6,6-6 1-1,1-1")  # two pairs: wins both hands
    rig.act("tiles 3 1-6 2-5 1-5 3-5 HIGH=1-6,2-5")  # copies of the dealer's two hands
    rig.act("hands 4 4-4-4-4 5-5-5-5")
    assert pg.compare(["1-6", "2-5"], ["1-6", "3-4"]) == 0
    assert pg.compare(["1-5", "3-5"], ["1-5", "2-6"]) == 0
    _, st = settle(rig)
    assert line(st, 1) | {"hands": None} == {
        "seat": 1,
        "area": 1,
        "stake": 1000,
        "outcome": "win",
        "commission": 50,
        "net": 950,
        "hands": None,
    }
    assert (line(st, 3)["outcome"], line(st, 3)["net"]) == ("lose", -500)
    assert (line(st, 4)["outcome"], line(st, 4)["commission"], line(st, 4)["net"]) == (
        "win",
        35,
        665,
    )
    assert st["ledger"] == {"seat1": 950, "seat3": -500, "seat4": 665, "house": -1115}
    assert st["banker_hands"]["high"] == ["1-6", "3-4"]


@pytest.mark.parametrize(
    ("quarter", "rounding", "vig_1100", "vig_1010"),
    [
        (True, "up", 75, 75),
        (False, "up", 55, 51),
        (False, "down", 55, 50),
    ],
)
def test_vig_rounding(
    tmp_path: Path, quarter: bool, rounding: str, vig_1100: int, vig_1010: int
) -> None:
    rig = make_rig(tmp_path, settings(round_vig_to_quarter=quarter, vig_cent_rounding=rounding))
    to_dealer_hands(rig, "wager 1 1100", "wager 2 1010")
    rig.act(f"tiles dealer {WEAK}")
    rig.act("hands 1 6-6,6-6 1-1,1-1")
    rig.act("hands 2 4-4,4-4 5-5,5-5")
    _, st = settle(rig)
    assert (line(st, 1)["commission"], line(st, 1)["net"]) == (vig_1100, 1100 - vig_1100)
    assert (line(st, 2)["commission"], line(st, 2)["net"]) == (vig_1010, 1010 - vig_1010)
    assert st["rules"]["round_vig_to_quarter"] is quarter


@pytest.mark.parametrize(("conflict", "area2"), [("f7-lose", "lose"), ("f8ii-push", "push")])
def test_zero_low_hand(tmp_path: Path, conflict: str, area2: str) -> None:
    rig = make_rig(tmp_path, settings(zero_low_conflict=conflict))
    to_dealer_hands(rig, "wager 1 1000", "wager 2 1000")
    assert "high 6-6 1-6  low 3-3 2-2" in rig.act(f"tiles dealer {ZERO_LOW}")[-1]
    # area 1: a pair beats the dealer's 9; the low 1-3 1-5 is a zero that outranks the
    # dealer's zero but never wins: (f)(8)(i) push.
    rig.act("hands 1 4-4,4-4 1-3,1-5")
    # area 2: the high (4) is lower; the low zero outranks the dealer's zero: (f)(7) v (f)(8)(ii)
    rig.act("hands 2 4-5,2-3 1-3,1-5")
    _, st = settle(rig)
    assert (line(st, 1)["outcome"], line(st, 1)["net"]) == ("push", 0)
    assert line(st, 2)["outcome"] == area2
    assert line(st, 2)["net"] == (-1000 if area2 == "lose" else 0)
    assert st["rules"]["zero_low_conflict"] == conflict


def test_surrender_and_void_hand_need_no_tiles(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    rig.act("wager 1 1000")
    rig.act("wager 2 400")
    rig.act("wager 3 300")
    rig.press("no_more_bets")
    rig.press("draw")
    rig.act("expose player 3")
    rig.act("void seat 3")
    rig.press("dealt")
    rig.press("hands_set")
    rig.act(f"tiles dealer {WEAK}")
    rig.act("surrender seat 2")
    refused(rig, "hands 2 6-6,6-6 1-1,1-1", "surrendered", "(f)(5)(ii)")
    refused(rig, "hands 3 6-6,6-6 1-1,1-1", "void", "(i)(1)")
    rig.act("hands 1 6-6,6-6 1-1,1-1")
    refused(rig, "surrender seat 1", "exposed")
    _, st = settle(rig)
    assert [(x["area"], x["outcome"], x["net"]) for x in st["lines"]] == [
        (1, "win", 950),
        (2, "surrender", -400),
        (3, "void", 0),
    ]


def test_no_entries_settles_by_confirmation_as_before(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    play_round(rig)
    assert not rig.rows("paigow.settlement")
    # a field at its default is left out of the closing row's record
    assert rig.rows("paigow.settled")[-1].data["record"].get("settlement_seq") is None


# -- refusals ----------------------------------------------------------------------------------


def test_wager_refusals_are_journaled(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    refused(rig, "wager 1 1000", "the table is in state inspection, where it takes")
    rig.press("shuffled")
    refused(rig, "wager 1 10.00", "whole cents")
    refused(rig, "wager 1 $10", "whole cents")
    refused(rig, "wager 7 1000", "seat must be 1-6")
    refused(rig, "wager 1 100000001", "more than the console takes")
    rig.act("wager 2 1000")
    rig.act("wager 2 500 3")
    refused(rig, "wager 2 500 4", "no more than two betting areas", "(h)(1)")
    refused(rig, "wager 4 500 3", "area 3 holds seat 2's wager")
    rig.act("wager 5 500")
    refused(rig, "wager 5 500 3", "area 3 holds")
    rig.act("wager 1 500 1")
    refused(rig, "wager 1 500 6", "adjacent", "(h)(1)")
    refused(rig, "wager 1 0 2", "no wager on area 2 to withdraw")
    refused(rig, "wager dealer 1000", "(g)(8)")
    lines = rig.act("wager 2 0 3")
    assert "seat 2: area 2 1000c" in lines[1]
    assert len(rig.table.model.record.wagers) == 3


def test_two_areas_setting_order_is_shown(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    rig.act("wager 3 500")
    out = rig.act("wager 3 2500 4")
    assert "seat 3 sets area 4 before area 3 (5324.50(h)(2))" in out


def test_bank_wager_refusals(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    play_round(rig)
    rig.press("shuffled")
    rig.act("bank seat 2")
    refused(rig, "wager 2 5000 3", "(g)(6)")
    refused(rig, "wager 3 1000 2", "area 2 is the bank's")
    rig.act("wager 1 2000")
    before = rig.journal.last_seq
    rig.press("no_more_bets")
    assert rig.state == "betting"
    refusal = [e for e in rig.journal.events(since_seq=before) if e.kind == "paigow.refused"]
    assert "the bank's chips are not entered" in refusal[0].data["reason"]
    rig.act("wager 2 1500")
    rig.press("no_more_bets")
    assert rig.state == "betting"
    assert "do not cover the 2000 cents" in rig.alarms[-1]
    rig.act("wager 2 2000")
    rig.act("wager dealer 1000")
    rig.press("no_more_bets")
    assert "and the dealer's 1000 cents" in rig.alarms[-1]
    rig.act("wager 2 3000")
    rig.press("no_more_bets")
    assert rig.state == "bank_style"


def test_tiles_refusals_are_journaled(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    rig.act("wager 1 1000")
    rig.act("wager 2 1000")
    for name in ("no_more_bets", "draw", "dealt"):
        rig.press(name)
    # (f)(3): the dealer's tiles are turned over after every player has set the hands.
    refused(rig, f"tiles dealer {WEAK}", "the table is in state setting_hands, where it takes")
    rig.press("hands_set")
    refused(rig, "hands 1 6-6,6-6 1-1,1-1", "the dealer's hands come first", "(f)(6)")
    refused(rig, f"tiles dealer {WEAK} HIGH=1-6,2-6", "house way", "may not deviate")
    refused(rig, "tiles bank 6-6 6-6 1-1 1-1 HIGH=6-6,6-6", "the house banks")
    refused(rig, "tiles dealer 7-1 6-6 1-1 1-1", "7-1")
    refused(rig, "tiles dealer 6-6 6-6 6-6 1-1", "6-6")
    rig.act(f"tiles dealer {WEAK}")
    refused(rig, "tiles 3 6-6 6-6 1-1 1-1 HIGH=6-6,6-6", "no wager was entered on area 3", "(e)(5)")
    refused(rig, "tiles 1 6-6 6-6 1-1 1-1", "HIGH=")
    refused(rig, "tiles 1 6-6 6-6 1-1 1-1 HIGH=6-6,4-4", "HIGH tile 4-4")
    refused(rig, "hands 1 1-1,1-1 6-6,6-6", "ranks below the low hand")
    # 2-6 is one tile of the set and it is the dealer's: (b)(6), (d)(1)(i)
    refused(rig, "hands 1 6-6,2-6 1-1,1-1", "2-6")
    refused(rig, "hands dealer 6-6,6-6 1-1,1-1", "house way")
    rig.act("hands 1 6-6,6-6 1-1,1-1")
    refused(rig, "hands 2 6-6,4-4 1-1,4-4", "6-6")
    before = rig.journal.last_seq
    rig.press("settled")
    assert rig.state == "dealer_hands"
    row = [e for e in rig.journal.events(since_seq=before) if e.kind == "paigow.refused"][0]
    assert "the hands of area 2" in row.data["reason"]
    rig.act("hands 2 4-4,4-4 5-5,5-5")
    settle(rig)


def test_bank_and_co_bank_tiles_rules(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    play_round(rig)
    to_dealer_hands(rig, "wager 1 1000", "wager 2 5000", bank="cobank seat 2")
    refused(rig, f"tiles dealer {WEAK}", "(g)(5)")
    refused(rig, f"tiles bank {WEAK} HIGH=1-6,2-6", "(g)(5)", "omit HIGH=")
    refused(rig, "wager 1 1000", "the table is in state dealer_hands, where it takes")
    refused(rig, "hands 2 6-6,6-6 1-1,1-1", "area 2 is the bank's")
    out = rig.act(f"tiles bank {WEAK}")
    assert "bank: high 1-6 3-4  low 1-5 2-6  (house way" in out[-1]


# -- bank rounds -----------------------------------------------------------------------------


def test_player_bank_covers_a_shortfall(tmp_path: Path) -> None:
    """Seat 2 banks with 5000c. The dealer wagers 1000c against it and wins (g)(14); seat 1's
    2000c wins; seat 3's 500c loses. The center holds 500c and owes 3000c: the bank covers the
    2500c shortfall (g)(15); the dealer's win returns to the chip tray (g)(17); seat 1 pays 100c
    vigorish (g)(18)."""
    rig = make_rig(tmp_path)
    play_round(rig)
    rig.press("shuffled")
    rig.act("bank seat 2")
    for w in ("wager 2 5000", "wager 1 2000", "wager 3 500", "wager dealer 1000"):
        rig.act(w)
    rig.press("no_more_bets")
    for name in ("draw", "dealt", "hands_set"):
        rig.press(name)
    refused(rig, "hands 1 6-6,6-6 1-1,1-1", "the bank's hands come first")
    refused(rig, f"tiles bank {WEAK}", "(f)(3)", "HIGH=")
    rig.act(f"tiles bank {WEAK} HIGH=1-6,3-4")
    assert "high 6-6 1-6" not in rig.act("tiles dealer 4-4 4-4 5-5 5-5")[-1]
    rig.act("hands 1 6-6,6-6 1-1,1-1")
    rig.act("tiles 3 1-6 2-5 1-5 3-5 HIGH=1-6,2-5")  # copies of the bank's: they lose
    _, st = settle(rig)
    assert [(x["seat"], x["outcome"], x["net"]) for x in st["lines"]] == [
        ("dealer", "win", 1000),
        (1, "win", 1900),
        (3, "lose", -500),
    ]
    assert (st["shortfall"], st["bank_shortfall"], st["surplus"]) == (2500, 2500, 0)
    assert st["ledger"] == {"seat1": 1900, "seat3": -500, "seat2": -2500, "house": 1100}
    assert sum(st["ledger"].values()) == 0
    assert st["bank_chips_after"] == 2500


@pytest.mark.parametrize(
    ("odd_cent", "co_bank_part", "house_part"), [("co_bank", 501, 500), ("house", 500, 501)]
)
def test_co_bank_shortfall_odd_cent(
    tmp_path: Path, odd_cent: str, co_bank_part: int, house_part: int
) -> None:
    """Co-bank seat 2; seat 1's 1001c wins, nothing is collected: the 1001c shortfall is split
    "one-half" each (g)(16), the odd cent by ``paigow.co_bank_shortfall_odd_cent``; the
    vigorish on 1001c is 50.05c -> 51c (rounded up)."""
    rig = make_rig(tmp_path, settings(co_bank_shortfall_odd_cent=odd_cent))
    play_round(rig)
    to_dealer_hands(rig, "wager 2 5000", "wager 1 1001", bank="cobank seat 2")
    rig.act(f"tiles bank {WEAK}")
    rig.act("hands 1 6-6,6-6 1-1,1-1")
    _, st = settle(rig)
    assert (st["bank_shortfall"], st["house_shortfall"]) == (co_bank_part, house_part)
    assert st["ledger"] == {"seat1": 950, "seat2": -co_bank_part, "house": -house_part + 51}


def test_surrender_against_a_bank_follows_the_setting(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, settings(surrender_against_bank="center"))
    play_round(rig)
    to_dealer_hands(rig, "wager 2 5000", "wager 1 1000", "wager 3 1000", bank="bank seat 2")
    rig.act(f"tiles bank {WEAK} HIGH=1-6,3-4")
    refused(rig, "surrender seat 2", "is the bank")
    rig.act("surrender seat 3")
    rig.act("hands 1 6-6,6-6 1-1,1-1")
    _, st = settle(rig)
    # 1000c surrendered into the center pays seat 1's 1000c: no shortfall, no surplus.
    assert (st["shortfall"], st["surplus"]) == (0, 0)
    assert st["ledger"] == {"seat1": 950, "seat3": -1000, "house": 50}


def test_surrender_against_a_bank_refused_by_default(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    play_round(rig)
    to_dealer_hands(rig, "wager 2 5000", "wager 1 1000", bank="bank seat 2")
    refused(rig, "surrender seat 1", "paigow.surrender_against_bank = refuse")


# -- recovery and recall -------------------------------------------------------------------------


def test_restart_mid_entry_keeps_the_entries(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    rig.act("wager 1 1000")
    rig.act("wager 3 1000")
    rig = reopen(rig)
    assert rig.state == "betting"
    assert [(w["area"], w["cents"]) for w in rig.table.model.record.wagers] == [
        (1, 1000),
        (3, 1000),
    ]
    for name in ("no_more_bets", "draw", "dealt", "hands_set"):
        rig.press(name)
    rig.act(f"tiles dealer {WEAK}")
    rig.act("hands 1 6-6,6-6 1-1,1-1")
    rig = reopen(rig)
    assert rig.state == "dealer_hands"
    rec = rig.table.model.record
    assert sorted(rec.hands) == ["1", "dealer"]
    assert rec.hands["dealer"]["high"] == ["1-6", "3-4"]
    assert rig.table.status()["entries"] == "2 wagers, hands 1, dealer"
    # The journaled entries still count: area 3's hands are what is missing.
    rig.press("settled")
    assert rig.state == "dealer_hands" and "the hands of area 3" in rig.alarms[-1]
    rig.act("hands 3 4-4,4-4 5-5,5-5")
    _, st = settle(rig)
    assert [x["net"] for x in st["lines"]] == [950, 950]


def test_recall_rebuilds_the_disputed_hand(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    to_dealer_hands(rig, "wager 1 1000")
    rig.act(f"tiles dealer {WEAK}")
    rig.act("tiles 1 6-6 1-1 6-6 1-1 HIGH=6-6,6-6")
    settle(rig)
    (round_1,) = [r for r in recall(rig.journal, 5) if r.round_id == 1]
    kinds = [e.kind for e in round_1.events]
    assert "paigow.settlement" in kinds and kinds[-1] == "paigow.settled"
    inputs = [
        e.data["input"] for e in round_1.events if e.data.get("input", {}).get("action") == "tiles"
    ]
    assert [i["args"][0] for i in inputs] == ["dealer", "1"]
    closing = round_1.events[-1].data["record"]
    assert closing["hands"]["1"] == {
        "tiles": ["6-6", "1-1", "6-6", "1-1"],
        "high": ["6-6", "6-6"],
        "low": ["1-1", "1-1"],
        "set_by": "player",
    }
    assert closing["hands"]["dealer"]["set_by"] == "house way (default)"
    assert closing["wagers"] == [{"seat": 1, "area": 1, "cents": 1000}]
    st = next(e.data for e in round_1.events if e.kind == "paigow.settlement")
    # Rebuild: the journaled hands give the journaled outcome again.
    d, p = closing["hands"]["dealer"], closing["hands"]["1"]
    assert pg.outcome(p["high"], p["low"], d["high"], d["low"]) == st["lines"][0]["outcome"]


def test_a_correction_is_journaled_with_what_it_replaces(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    to_dealer_hands(rig, "wager 1 1000")
    rig.act(f"tiles dealer {WEAK}")
    rig.act("hands 1 6-6,6-6 1-1,1-1")
    rig.act("hands 1 4-4,4-4 5-5,5-5")
    row = rig.rows("paigow.state")[-1]
    assert row.data["replaces"]["high"] == ["6-6", "6-6"]
    assert row.data["record"]["hands"]["1"]["high"] == ["4-4", "4-4"]
