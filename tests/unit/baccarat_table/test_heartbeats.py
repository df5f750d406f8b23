"""The shoe's heartbeats in the journal (docs/shoe-protocol.md, "Heartbeats"): counted summary
rows, at most one a minute at 1 Hz (an idle table journals at most 60 rows an hour), sooner when
the shoe's 64-frame buffer could fill; every row is the shoe's durable position and the only
acknowledgement the heartbeats get; a card covers the heartbeats before it."""

from __future__ import annotations

from pathlib import Path

from controller.tables.baccarat.data import K_FRAME, K_HEARTBEATS
from controller.tables.baccarat.link import HEARTBEATS_PER_ROW
from drivers.shoe_protocol import SessionPosition
from tests.unit.baccarat_table.helpers import Rig

S = 10**9  # ns


def beats(rig: Rig, n: int, period_ns: int, start_ns: int = 0) -> int:
    for i in range(n):
        rig.frame("HBT", at_ns=start_ns + i * period_ns)
    return start_ns + n * period_ns


def test_an_idle_hour_of_1_hz_heartbeats_is_60_rows(rig: Rig) -> None:
    before = rig.journal.last_seq
    acked = len(rig.reader.acked)
    first = rig.seq
    beats(rig, 3600, S)
    rows = list(rig.journal.events(since_seq=before))
    assert len(rows) <= 60  # docs/shoe-protocol.md: <= 60 rows an hour on an idle table
    assert {r.kind for r in rows} == {K_HEARTBEATS}
    counts = [r.data["count"] for r in rows]
    assert sum(counts) == 3600 and max(counts) <= HEARTBEATS_PER_ROW
    # each row is a position: its last heartbeat's SEQ, acknowledged once the row is journaled
    assert [r.data["seq"] for r in rows] == rig.reader.acked[acked:]
    assert rows[0].data["first_seq"] == first and rows[-1].data["seq"] == rig.seq - 1
    assert rig.table.resume_position() == SessionPosition(rig.sid, rig.seq)


def test_fast_heartbeats_are_journaled_before_the_shoes_buffer_fills(rig: Rig) -> None:
    """A shoe may beat faster than once a second: the row comes every 60 heartbeats then, so
    the shoe (64 frames at least) never holds more than 60 of them unacknowledged."""
    before = rig.journal.last_seq
    beats(rig, 600, S // 10)  # a minute at 10 Hz
    rows = list(rig.journal.events(since_seq=before))
    assert [r.data["count"] for r in rows] == [HEARTBEATS_PER_ROW] * 10
    assert HEARTBEATS_PER_ROW <= 64 - 4  # the margin of docs/shoe-protocol.md


def test_slow_heartbeats_are_journaled_once_a_minute(rig: Rig) -> None:
    before = rig.journal.last_seq
    beats(rig, 100, 3 * S // 2)  # 150 s at 1.5 s a beat (a shoe late on its heartbeats)
    rows = list(rig.journal.events(since_seq=before))
    assert [r.data["count"] for r in rows] == [41, 40]  # when a minute has passed


def test_a_card_covers_the_heartbeats_before_it(rig: Rig) -> None:
    rig.open_shoe()
    before = rig.journal.last_seq
    end = beats(rig, 30, S)
    rig.press("no_more_bets")
    rig.frame("CARD", "9S", at_ns=end)
    acked = rig.reader.acked[-1]
    assert acked == rig.seq - 1  # the card's $ACK covers the 30 heartbeats (cumulative)
    beats(rig, 59, S, end + S)
    assert not list(rig.journal.events(kinds=[K_HEARTBEATS], since_seq=before))
    rig.frame("HBT", at_ns=end + 61 * S)
    summary = list(rig.journal.events(kinds=[K_HEARTBEATS], since_seq=before))
    assert [r.data["count"] for r in summary] == [60]  # counted from the card on
    assert len(list(rig.journal.events(kinds=[K_FRAME], since_seq=before))) == 1


def test_heartbeats_not_yet_journaled_come_again_after_a_restart(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    beats(rig, 70, S)  # one row of 60; ten wait
    position = rig.table.resume_position()
    assert position == SessionPosition(rig.sid, rig.seq - 10)
    again = rig.reopen()
    assert again.table.resume_position() == position  # the shoe resends the ten from there
