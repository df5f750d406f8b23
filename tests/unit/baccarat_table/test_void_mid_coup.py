"""A void during a coup (docs/baccarat-table.md "Voids during a coup"): once a card of the coup
is out, `void` is a supervisor's alone, as pai gow's void after the draw (a coup voided with
its cards out could be dealt again to another result). A technician's is refused (AUTH:
nothing voided, journaled, alarmed or counted); the supervisor's voids the coup, raises the
ALARM line on every console, journals it and counts it for the shift, and the count survives a
restart until a supervisor's `shift start`. Before the first card nothing changes."""

from __future__ import annotations

import pytest

from tests.unit.baccarat_table.helpers import Rig

TECH = "technician@serial"
SUPER = "supervisor@serial"


def to_mid_coup(rig: Rig, cards: str = "9S 2H") -> None:
    rig.open_shoe()
    rig.act("bet 2 banker 2500")
    rig.press("no_more_bets")
    rig.cards(cards)
    assert rig.table.state == "dealing" and rig.table.data.coup == cards.split()


@pytest.mark.parametrize("cards", ["9S", "9S 2H", "9S 2H 3C"])
def test_a_technician_cannot_void_a_coup_with_cards_out(rig: Rig, cards: str) -> None:
    to_mid_coup(rig, cards)
    exc = rig.refused(rig.act, "void shoe jammed", TECH)
    assert exc.code == "AUTH"
    assert f"({cards})" in exc.reason and "supervisor's login" in exc.reason
    assert "login SUPERVISOR-PIN" in exc.reason
    assert rig.table.state == "dealing" and rig.table.data.coup == cards.split()
    assert rig.rows("baccarat.coup.voided") == [] and rig.rows("baccarat.void_mid_coup") == []
    assert not [a for a in rig.alarms if a.startswith("ALARM")]
    assert rig.table.status()["voids_mid_coup"] == "0 this shift"


def test_the_supervisor_voids_a_coup_with_an_alarm_counted_for_the_shift(rig: Rig) -> None:
    to_mid_coup(rig)
    coup = rig.table.data.coup_no
    lines = rig.act("void shoe jammed", SUPER)
    assert lines == ["round void; reshuffle", "a void during a coup: alarmed, 1 this shift"]
    assert rig.table.state == "shuffle"
    (voided,) = rig.rows("baccarat.coup.voided")
    assert voided.data["cards"] == ["9S", "2H"] and voided.data["bets_returned"]
    (alarm_row,) = rig.rows("baccarat.void_mid_coup")
    assert (
        alarm_row.data["who"],
        alarm_row.data["cards"],
        alarm_row.data["shift_count"],
        alarm_row.data["reason"],
        alarm_row.data["coup"],
    ) == (SUPER, ["9S", "2H"], 1, "shoe jammed", coup)
    alarms = [a for a in rig.alarms if a.startswith("ALARM")]
    assert alarms == [
        f"ALARM void during a coup: shoe 1 coup {coup} (cards 9S 2H out) voided"
        f" by {SUPER}: shoe jammed; 1 void during a coup this shift"
    ]
    assert rig.table.status()["voids_mid_coup"] == "1 this shift (alarmed)"
    # a second one in the same shift: counted on
    to_mid_coup(rig, "4D 5C")
    rig.act("void", SUPER)
    assert rig.table.status()["voids_mid_coup"] == "2 this shift (alarmed)"
    assert [a for a in rig.alarms if a.startswith("ALARM")][-1].endswith(
        "; 2 voids during a coup this shift"
    )
    # a restart replays the journal: the same count, no alarm said again, nothing journaled twice
    again = rig.reopen()
    assert again.table.status()["voids_mid_coup"] == "2 this shift (alarmed)"
    assert not [a for a in again.alarms if a.startswith("ALARM")]
    assert len(again.rows("baccarat.void_mid_coup")) == 2
    # a new shift: the supervisor's alone
    assert again.refused(again.act, "shift start", TECH).code == "AUTH"
    assert again.act("shift start", SUPER) == [
        f"shift started by {SUPER}: voids during a coup counted from 0 (last shift: 2)"
    ]
    assert again.table.status()["voids_mid_coup"] == "0 this shift"
    assert again.reopen().table.status()["voids_mid_coup"] == "0 this shift"


def test_before_the_first_card_a_technician_voids_as_before(rig: Rig) -> None:
    rig.open_shoe()
    rig.act("bet 2 banker 2500")
    assert rig.act("void end of session", TECH) == ["round void; reshuffle"]
    rig.open_shoe("3S AH AD KC")
    rig.press("no_more_bets")  # the coup begins, no card out yet
    assert rig.table.data.coup == []
    assert rig.act("void", TECH) == ["round void; reshuffle"]
    assert rig.rows("baccarat.void_mid_coup") == []
    assert not [a for a in rig.alarms if a.startswith("ALARM")]
    assert rig.table.status()["voids_mid_coup"] == "0 this shift"


def test_a_journal_finding_that_lost_a_coups_cards_counts_as_a_void_during_a_coup(rig: Rig) -> None:
    """The supervisor acknowledges a finding of rows lost while a coup had cards out: the coup
    is voided and counted as a void during a coup, with the alarm, as her `void` would be."""
    to_mid_coup(rig)
    lines = rig.table.journal_untrusted(3, SUPER, None)
    assert lines[0].endswith("void (the journal cannot vouch for it); reshuffle"), lines
    assert rig.table.state == "shuffle"
    (row,) = rig.rows("baccarat.void_mid_coup")
    assert (row.data["who"], row.data["cards"], row.data["shift_count"]) == (SUPER, ["9S", "2H"], 1)
    assert "3 committed journal rows were lost" in row.data["reason"]
    alarms = [a for a in rig.alarms if a.startswith("ALARM void during a coup")]
    assert len(alarms) == 1 and alarms[0].endswith("; 1 void during a coup this shift")
    assert rig.reopen().table.status()["voids_mid_coup"] == "1 this shift (alarmed)"


def test_a_journal_finding_that_rewrote_a_card_counts_even_between_coups(rig: Rig) -> None:
    """Rows no signed head vouches for any more hold a card: counted (and kept by a snapshot
    across a restart) although no coup is in progress to void; rows without a card or a result
    are not counted, nor a loss between coups."""
    rig.open_shoe()
    rig.act("bet 2 banker 2500")
    rig.press("no_more_bets")
    rig.cards("2S 9H 3S KD")  # banker natural 9: the coup's result
    assert rig.table.state == "settling"
    rig.press("settled")
    assert rig.table.state == "betting"
    first_card = rig.rows("baccarat.card")[0].seq
    assert rig.table.journal_untrusted(2, SUPER, None) == []  # lost, no card out
    assert rig.table.journal_untrusted(0, SUPER, rig.journal.last_seq + 1) == []
    lines = rig.table.journal_untrusted(0, SUPER, first_card)
    assert lines == ["a void during a coup: alarmed, 1 this shift"]
    assert rig.table.state == "betting"  # nothing to void
    (row,) = rig.rows("baccarat.void_mid_coup")
    assert f"rewritten, among them card row {first_card}" in row.data["reason"]
    assert rig.reopen().table.status()["voids_mid_coup"] == "1 this shift (alarmed)"
