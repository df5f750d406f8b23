"""The table's end of the shoe link: refused frames, link and watchdog changes are journaled as
counted summaries (docs/shoe-protocol.md, "Bad input in the journal"); nothing refused is ever
acknowledged; the first of each kind is journaled at once."""

from __future__ import annotations

from pathlib import Path

from controller.tables.baccarat.data import K_LINK, K_REFUSED_FRAME, K_WATCHDOG
from drivers.shoe_events import ShoeFrameRefused, ShoeLinkChanged, ShoeWatchdog
from tests.unit.baccarat_table.helpers import Rig

S = 10**9


def refused(reason: str, at_ns: int, raw: bytes = b"$HBT,5,00000000*6D\r\n") -> ShoeFrameRefused:
    return ShoeFrameRefused(reason, raw, 5, "detail", reason not in ("foreign_sid", "gap"), at_ns)


def test_refused_frames_are_counted_not_journaled_one_by_one(rig: Rig) -> None:
    before = rig.journal.last_seq
    acked = list(rig.reader.acked)
    for i in range(3000):  # 30 seconds of a flood: three kinds
        reason = ("foreign_sid", "bad_sid", "garbage")[i % 3]
        rig.table.handle(refused(reason, i * S // 100))
    rows = list(rig.journal.events(since_seq=before))
    assert [(r.kind, r.data["reason"], r.data["count"]) for r in rows] == [
        (K_REFUSED_FRAME, "foreign_sid", 1),
        (K_REFUSED_FRAME, "bad_sid", 1),
        (K_REFUSED_FRAME, "garbage", 1),
    ]  # the first of each, at once
    rig.table.tick(61 * S)  # the minute ends: one counted row each
    rows = list(rig.journal.events(since_seq=before))
    assert len(rows) == 6
    folded = {r.data["reason"]: r.data["count"] for r in rows[3:]}
    assert folded == {"foreign_sid": 999, "bad_sid": 999, "garbage": 999}
    assert all(r.data["folded"] for r in rows[3:])
    assert sum(r.data["count"] for r in rows) == 3000  # every refusal counted
    assert rig.reader.acked == acked  # nothing refused is acknowledged
    assert rows[0].data["raw"] == "$HBT,5,00000000*6D\r\n"


def test_a_link_outage_is_journaled_change_by_change_and_chatter_is_counted(rig: Rig) -> None:
    before = rig.journal.last_seq
    for i in range(10):
        rig.table.handle(ShoeLinkChanged(False, "gone", i * S))
        rig.table.handle(ShoeLinkChanged(True, "opened", i * S + S // 2))
    rows = list(rig.journal.events(kinds=[K_LINK], since_seq=before))
    assert [r.data["up"] for r in rows] == [False, True] * 4  # four of each at once
    rig.table.tick(70 * S)
    rows = list(rig.journal.events(kinds=[K_LINK], since_seq=before))
    assert sum(r.data["count"] for r in rows) == 20
    assert rig.table.status()["shoe_link"] == "up"


def test_the_watchdog_is_journaled_and_stops_new_coups(rig: Rig) -> None:
    rig.open_shoe()
    before = rig.journal.last_seq
    rig.table.handle(ShoeWatchdog(False, 3.2, 0))
    assert "shoe watchdog: no valid frame" in rig.table.faults()
    assert rig.refused(rig.press, "no_more_bets").code == "FAULT"
    rig.table.handle(ShoeWatchdog(True, 0.1, S))
    rows = list(rig.journal.events(kinds=[K_WATCHDOG], since_seq=before))
    assert [r.data["ok"] for r in rows] == [False, True]
    refusal = rig.refused(rig.table.clear_fault, "tech")
    assert refusal.reason == "no table fault to clear"
    rig.press("no_more_bets")
    assert rig.table.state == "dealing"


def test_fault_clear_agrees_with_status_for_a_shoe_fault(rig: Rig) -> None:
    rig.open_shoe()
    rig.frame("FLT", "JAM")
    assert rig.table.status()["table_faults"] == "shoe fault JAM"
    refusal = rig.refused(rig.table.clear_fault, "tech")
    assert "shoe fault JAM: the shoe clears it" in refusal.reason  # as status shows it
    assert rig.table.faults() == ["shoe fault JAM"]  # not cleared by the console
    rig.frame("FLT", "CLR")  # the shoe clears it (`sim shoe fault clear`)
    assert rig.table.status()["table_faults"] == "none"
    assert rig.refused(rig.table.clear_fault, "tech").reason == "no table fault to clear"


def test_a_new_session_ends_the_old_sessions_shoe_faults(rig: Rig) -> None:
    rig.open_shoe()
    rig.frame("FLT", "JAM")
    sid = rig.session()  # the technician power-cycles the jammed shoe
    assert rig.table.faults() == [f"shoe session {sid} unconfirmed"]
    rig.act("shoe resume")
    assert rig.table.faults() == []


class TestANewSession:
    """docs/design.md: a new session during a burn, a coup, or while cards are due is an
    irregularity (halt, void); at a quiet moment the dealer confirms (`shoe resume`)."""

    def test_at_a_quiet_moment_the_dealer_confirms(self, rig: Rig) -> None:
        rig.open_shoe()
        sid = rig.session()
        assert rig.table.state == "betting" and rig.table.data.shoe_unconfirmed == sid
        assert "shoe resume" in rig.refused(rig.press, "no_more_bets").reason
        assert "shoe resume" in rig.refused(rig.act, "remedy burn").reason
        rig.act("bet 1 banker 500")  # wagers are taken meanwhile
        assert rig.display.lines == ("SHOE RESTARTED", "CONFIRM: SHOE RESUME")
        assert any("SHOE RESTARTED" in a for a in rig.alarms)
        again = rig.reopen()  # a restart keeps it unconfirmed (journaled, replayed)
        assert again.table.data.shoe_unconfirmed == sid
        assert again.act("shoe resume") == [f"shoe session {sid} confirmed: play goes on"]
        assert again.rows("baccarat.shoe.resumed")[-1].data["sid"] == sid
        again.press("no_more_bets")
        assert again.table.state == "dealing"
        assert not again.rows("baccarat.coup.voided") and not again.table.data.faults

    def test_in_the_shuffle_too_and_by_the_profiles_button(self, rig: Rig) -> None:
        sid = rig.session()
        assert rig.table.state == "shuffle" and rig.table.data.shoe_unconfirmed == sid
        assert "shoe resume" in rig.refused(rig.press, "shuffled").reason
        rig.press("shoe_resume")
        assert rig.rows("baccarat.shoe.resumed")[-1].data["who"] == "dealer (button)"
        rig.press("shuffled")
        assert rig.table.state == "burn"

    def test_nothing_to_confirm_is_refused(self, rig: Rig) -> None:
        assert rig.refused(rig.act, "shoe resume").code == "STATE"
        assert rig.refused(rig.act, "shoe").code == "SYNTAX"

    def test_during_a_coup_it_halts_and_voids(self, rig: Rig) -> None:
        rig.open_shoe()
        rig.act("bet 2 player 1000")
        rig.press("no_more_bets")
        rig.cards("9S 2H")
        rig.session()
        assert rig.table.state == "halted"
        voided = rig.rows("baccarat.coup.voided")[-1].data
        assert voided["cards"] == ["9S", "2H"] and voided["bets_returned"]
        assert "power-cycled mid-coup" in rig.table.faults()[0]
        assert rig.table.data.shoe_unconfirmed is None  # the reshuffle is the remedy
        rig.act("clear")
        assert rig.table.state == "shuffle"

    def test_during_the_burn_it_halts_and_shifts_nothing(self, rig: Rig) -> None:
        rig.press("shuffled")
        rig.cards("5S 2D")  # five more to burn
        rig.session()
        assert rig.table.state == "halted"
        assert "power-cycled during the burn" in rig.table.faults()[0]
        rig.cards("3C 4C KD QD 8C")  # what the dealer deals next is no burn card
        assert [r.data["card"] for r in rig.rows("baccarat.burn")] == ["5S", "2D"]
        assert not rig.rows("baccarat.coup.start")

    def test_with_a_card_announced_face_up_it_halts(self, rig: Rig) -> None:
        rig.open_shoe()
        rig.frame("FLT", "FACEUP")
        rig.session()
        assert rig.table.state == "halted"
        assert "face up" in rig.table.faults()[0]

    def test_the_first_session_needs_no_confirmation(self, tmp_path: Path) -> None:
        fresh = Rig(tmp_path)  # its first shoe session came with no session before it
        assert fresh.table.data.shoe_unconfirmed is None and fresh.table.faults() == []
        fresh.press("shuffled")
        assert fresh.table.state == "burn"
        session = fresh.rows("shoe.session")[0].data
        assert "previous" not in session and session["sid"] == fresh.sid


def test_a_shoe_port_down_says_which_and_what_to_check(rig: Rig) -> None:
    """``status`` and the alarm name the port and why (the driver's words), and what the
    technician checks; back up, the reason is gone."""
    reason = "cannot open /dev/tc-shoe: No such file or directory"
    rig.table.handle(ShoeLinkChanged(False, reason, 0))
    link = rig.table.status()["shoe_link"]
    assert link.startswith(f"down ({reason}: check its cable")
    assert "USB adapter" in link and "_" not in link
    assert any(a.startswith(f"SHOE LINK DOWN {reason}: check its cable") for a in rig.alarms)
    rig.table.handle(ShoeLinkChanged(True, "opened", 1))
    assert rig.table.status()["shoe_link"] == "up"
