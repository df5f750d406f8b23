"""Baccarat end to end, written once against the ``rig`` (simulated by default: the table's own
simulated shoe driven through ``sim shoe ...``; with ``--hil PROFILE --hil-shoe-peer PORT``: the
shoe emulator process on the other end of the shoe's cable, driven through its stdin). A shoe
dealt to the last hand, and each injected shoe fault with the table's documented reaction
(docs/baccarat-table.md, docs/shoe-protocol.md) read back from ``status`` and ``recall``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from controller.games import baccarat
from tests.hil.rig import Rig

MAX_COUPS = 120  # a 6- or 8-deck shoe holds at most about 100 coups: a bound for the loop
AFTER_SETTLED = ("betting", "passing", "shuffle")
#: Faces of value 0 for the hand-made coups of the foreign-card scenario.
FACES = ("QH", "KH", "JH", "QS", "KS", "JS", "QD", "KD")


def baccarat_rig(make_rig: Callable[..., Rig]) -> Rig:
    rig = make_rig("baccarat")
    if rig.shoe is None:
        pytest.skip("no shoe emulator on this rig: run with --hil-shoe-peer PORT")
    if rig.hardware and rig.status().get("gpio", "sim") != "sim":
        pytest.skip("buttons are real on this build: the scenarios press simulated ones")
    rig.login()
    rig.wait_status("shoe_link", "up")
    return rig


def press(rig: Rig, button: str, *states: str) -> dict[str, str]:
    rig.ok(f"sim button {button}")
    return rig.wait_status("state", states)


def round_rows(rig: Rig) -> list[tuple[str, dict[str, Any]]]:
    """The newest round's journal rows from ``recall 1 json``: (kind, data)."""
    rows = []
    for line in rig.ok("recall 1 json")[1:]:
        _seq, kind, data = line.strip().split(" ", 2)
        rows.append((kind, json.loads(data)))
    return rows


def open_shoe(rig: Rig) -> list[str]:
    """Shuffled, the burn dealt, seat 1 holds the shoe: betting. Returns the burned cards."""
    press(rig, "shuffled", "burn")
    burned = rig.shoe.deal_burn()
    rig.wait_status("state", "offering")
    rig.ok("curator 1")
    assert rig.status()["state"] == "betting"
    return burned


def settle(rig: Rig, coup_no: int) -> dict[str, str]:
    """Press settled; pass the shoe when the banker's hand lost, (h)(1)(i). The status after
    ``settled`` (it still shows the coup's result)."""
    status = press(rig, "settled", *AFTER_SETTLED)
    if status["state"] == "passing":  # (h)(2): to the last curator's right
        rig.ok(f"curator {int(status['curator']) % 8 + 1}")
    return status


def dealt_coup(rig: Rig, cards: list[str]) -> None:
    """Wait for the coup's cards to be handled (the console's reply already waited)."""
    if not rig.shoe.handled_on_reply:
        rig.wait_status("state", "settling")


def expected_result(cards: list[str]) -> str:
    return str(baccarat.deal(baccarat.cards(cards)))


def test_a_shoe_dealt_to_the_last_hand(make_rig: Callable[..., Rig]) -> None:
    """Each console command costs the console's read timeout (about 0.2 s): the loop keeps to
    the commands a dealer's coup needs and reads the result from the status after settled."""
    rig = baccarat_rig(make_rig)
    open_shoe(rig)
    last_hand_seen = False
    for coup_no in range(1, MAX_COUPS + 1):
        press(rig, "no_more_bets", "dealing")
        cards = rig.shoe.deal_coup()
        dealt_coup(rig, cards)
        status = settle(rig, coup_no)
        assert status["last_result"] == expected_result(cards), (coup_no, cards)
        if status["state"] == "shuffle":
            break
        last_hand_seen |= status["last_hand"] == "yes"
    else:
        pytest.fail(f"the shoe did not end within {MAX_COUPS} coups")
    assert last_hand_seen  # (f)(9): announced before the last hand
    assert status["table_faults"] == "none" and int(status["coup"]) == coup_no
    rig.ok("journal verify")


def _coup_with_fault(rig: Rig, fault: str, coup_no: int) -> list[tuple[str, dict[str, Any]]]:
    """A coup with ``fault`` injected after its first two cards; checks nothing was lost or
    counted twice and the result is the engine's; returns the round's rows."""
    press(rig, "no_more_bets", "dealing")
    cards = rig.shoe.deal(2)
    rig.shoe.fault(fault)
    cards += rig.shoe.deal_coup(cards)
    status = rig.wait_status("state", "settling")  # (a disconnect may still be resending)
    assert status["last_result"] == expected_result(cards), (fault, cards)
    rows = round_rows(rig)
    read = [d["fields"][0] for k, d in rows if k == "shoe.frame" and d["type"] == "CARD"]
    assert read == cards, (fault, read, cards)  # each card once, in order
    settle(rig, coup_no)
    return rows


def test_transmission_faults_lose_no_card_and_count_none_twice(
    make_rig: Callable[..., Rig],
) -> None:
    rig = baccarat_rig(make_rig)
    open_shoe(rig)
    refused = {}
    for coup_no, fault in enumerate(
        ["checksum", "drop", "duplicate", "garbage", "disconnect"], start=1
    ):
        rows = _coup_with_fault(rig, fault, coup_no)
        refused[fault] = {d["reason"] for k, d in rows if k == "shoe.refused"}
        if fault == "disconnect" and rig.shoe.unplugs_link:
            links = [d["up"] for k, d in rows if k == "shoe.link"]
            assert links[:1] == [False] and links[-1:] == [True], links
    assert "checksum_mismatch" in refused["checksum"]
    assert "garbage" in refused["garbage"]
    status = rig.status()
    assert status["table_faults"] == "none" and status["shoe_link"] == "up"


def _halted(rig: Rig, words: str) -> dict[str, str]:
    status = rig.wait_status("state", "halted")
    assert words in status["table_faults"], status
    return status


def _cleared(rig: Rig) -> None:
    rig.ok("clear")  # the technician clears: the shoe is redone
    assert rig.status()["state"] == "shuffle"


def test_a_shoe_power_cycle_mid_coup_halts_and_voids_it(make_rig: Callable[..., Rig]) -> None:
    rig = baccarat_rig(make_rig)
    open_shoe(rig)
    press(rig, "no_more_bets", "dealing")
    cards = rig.shoe.deal(2)
    rig.shoe.fault("power")  # a new session id: its $HELO alone says the shoe powered up
    _halted(rig, "power-cycled mid-coup")
    rows = round_rows(rig)
    voided = [d for k, d in rows if k == "baccarat.coup.voided"]
    assert voided and voided[0]["cards"] == cards
    sessions = [d for k, d in rows if k == "shoe.session"]
    assert len(sessions) == 1 and sessions[0]["previous"]["sid"] != sessions[0]["sid"]
    _cleared(rig)


def test_an_unreadable_card_halts_and_voids_the_coup(make_rig: Callable[..., Rig]) -> None:
    rig = baccarat_rig(make_rig)
    open_shoe(rig)
    press(rig, "no_more_bets", "dealing")
    cards = rig.shoe.deal(3)
    rig.shoe.fault("unread")
    _halted(rig, "unread")
    rows = round_rows(rig)
    assert any(k == "baccarat.integrity" and d["problem"] == "unreadable card" for k, d in rows)
    voided = [d for k, d in rows if k == "baccarat.coup.voided"]
    assert voided and voided[0]["cards"] == cards
    refused = rig.command("sim button no_more_bets")  # no play until cleared: the reply
    assert refused.code == "STATE" and "no_more_bets refused" in refused.status  # says so
    assert rig.status()["state"] == "halted"
    _cleared(rig)


def test_a_foreign_card_beyond_the_composition_halts(make_rig: Callable[..., Rig]) -> None:
    """Every copy of one face is dealt in hand-made coups, then the shoe reads one more."""
    rig = baccarat_rig(make_rig)
    burned = open_shoe(rig)
    face = next(f for f in FACES if f not in burned)
    decks = int(rig.ok("config show baccarat.decks")[0].split(" = ")[1])
    # coup 1: F F F F 5C F -- both 0, the player draws 5, the banker (0) draws: 5 copies
    # each coup after: F 9x 2x 9y -- the banker's natural 8: one copy each
    coups = [[face] * 4 + ["5C", face]]
    spares = iter(["9S", "2C", "9D", "9H", "2D", "9C", "9S", "3C", "9D", "9H", "3D", "9C"])
    while sum(c.count(face) for c in coups) < decks:
        coups.append([face, next(spares), next(spares), next(spares)])
    for coup_no, coup in enumerate(coups, start=1):
        press(rig, "no_more_bets", "dealing")
        for code in coup:
            rig.shoe.card(code)
        dealt_coup(rig, coup)
        assert settle(rig, coup_no)["last_result"] == expected_result(coup)
    press(rig, "no_more_bets", "dealing")
    rig.shoe.fault("foreign")  # a face none of whose copies is left
    _halted(rig, "inventory")
    rows = round_rows(rig)
    assert any(k == "baccarat.integrity" and face in d.get("card", "") for k, d in rows)
    _cleared(rig)
