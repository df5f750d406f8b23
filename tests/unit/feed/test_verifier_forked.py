"""A diverged table stays diverged (docs/feed.md "A diverged table"): after a ``fork`` or a
``rollback`` the history verified first stays the table's record, what diverges is kept apart
as evidence, the gap timeout never joins the two, and the table shows ``FORKED`` until a named
person acknowledges it; history re-sent that matches the record raises nothing."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from controller.feed.floor import AckError, acknowledge, floor_lines, is_forked
from controller.feed.store import SCHEMA_VERSION, Store
from tests.feed_journal import TableJournal
from tests.unit.feed.test_verifier import SITE, Rig


def _record(rig: Rig, t: TableJournal) -> list[tuple[int, str]]:
    return [(int(r["seq"]), str(r["hash"])) for r in rig.store.rows(SITE, t.table)]


def test_a_rolled_back_table_played_past_the_record_is_forked_not_spliced(
    tmp_path: Path,
) -> None:
    table = TableJournal("table-07")
    rig = Rig(tmp_path, table, gap=60.0)
    original = table.rounds(4)  # rows 1-12
    for r in original:
        rig.row(table, r)
    rig.head(table, table.sign(6))
    rig.head(table, table.sign(12))
    record = _record(rig, table)
    assert rig.store.tables()[0].signed_seq == 12

    # restored from a copy at row 6, then played past the collector's newest head
    table.rollback(6)
    other = table.rounds(6)  # rows 7-24 of another history
    for head_at in (9, 18, 24):
        table.sign(head_at)
    # the publisher, its position gone, sends the journal again from row 1 (rows 1-6 match)
    for r in table.rows:
        rig.row(table, r)
    for h in table.heads:
        rig.head(table, h)
    for _ in range(3):  # the gap timeout passes, many times
        rig.clock.advance(61)
        rig.tick()

    assert _record(rig, table) == record  # the record untouched, nothing joined to it
    rec = rig.store.tables()[0]
    assert (rec.frontier_seq, rec.head_seq, rec.signed_seq) == (12, 12, 12)
    assert rec.forked_seq == 7  # the first row of the other history
    assert is_forked(rig.store, rec)
    assert set(rig.kinds()) == {"fork", "rollback"}
    assert "gap" not in rig.kinds()
    kept = {(e.channel, e.seq, e.hash) for e in rig.store.evidence(SITE, table.table)}
    assert {("rows", r.seq, r.hash) for r in other} <= kept
    assert {("heads", 9), ("heads", 18), ("heads", 24)} == {
        (c, s) for c, s, _ in kept if c == "heads"
    }
    assert rig.store.pending_counts() == {}

    lines = floor_lines(rig.store, site=SITE)
    assert lines[1].split()[:2] == ["table-07", "FORKED"]
    assert any("floor --ack table-07 --by NAME --note TEXT" in line for line in lines)

    # nobody unnamed, no note: refused; then acknowledged, stored with who and when
    with pytest.raises(AckError):
        acknowledge(rig.store, "table-07", "", "restored from a copy")
    ack = acknowledge(rig.store, "table-07", "J. Doe", "restored from a copy by a technician")
    assert [(a.by, a.note, a.forked_ns) for a in rig.store.acks()] == [
        ("J. Doe", "restored from a copy by a technician", rec.forked_ns)
    ]
    assert ack.ts_ns > 0
    assert not is_forked(rig.store, rig.store.tables()[0])
    assert "forked (acknowledged)" in floor_lines(rig.store, site=SITE)[1]
    # acknowledged already: said so, with who and when (the table is still forked)
    stamp = datetime.fromtimestamp(ack.ts_ns / 1e9, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    with pytest.raises(AckError) as again:
        acknowledge(rig.store, "table-07", "A. N. Other", "again")
    assert str(again.value) == (
        f"table {SITE}/table-07 is forked and already acknowledged by J. Doe at {stamp}:"
        " nothing more to acknowledge"
    )
    assert len(rig.store.acks()) == 1
    # still on the other history: evidence, never the record, not even past a gap timeout
    alarms = rig.store.alarms()
    more = table.rounds(1)
    for r in more:
        rig.row(table, r)
    rig.head(table, table.sign())
    rig.clock.advance(61)
    rig.tick()
    assert _record(rig, table) == record
    assert rig.store.alarms() == alarms
    kept = {(e.channel, e.seq) for e in rig.store.evidence(SITE, table.table)}
    assert {("rows", r.seq) for r in more} | {("heads", more[-1].seq)} <= kept


def test_history_sent_again_with_the_newest_head_first_raises_nothing(tmp_path: Path) -> None:
    table = TableJournal("table-07")
    rig = Rig(tmp_path, table)
    rows = table.rounds(10)
    heads = [table.sign(s) for s in range(3, 31, 3)]
    rig.head(table, heads[-1])  # the retained newest head, first
    for r in rows:
        rig.row(table, r)
    for h in heads:
        rig.head(table, h)
    rig.clock.advance(61)
    rig.tick()
    assert rig.kinds() == []
    rec = rig.store.tables()[0]
    assert (rec.frontier_seq, rec.head_seq, rec.signed_seq, rec.forked_ns) == (30, 30, 30, None)
    assert rig.store.evidence(SITE, table.table) == []


# the schema of a store made before the schema had a version (version 1), as it was created
_V1 = (
    """CREATE TABLE feed_tables (
        site TEXT NOT NULL, table_id TEXT NOT NULL,
        frontier_seq BIGINT NOT NULL DEFAULT 0, frontier_hash TEXT NOT NULL DEFAULT '',
        head_seq BIGINT NOT NULL DEFAULT 0, head_hash TEXT NOT NULL DEFAULT '',
        signed_seq BIGINT NOT NULL DEFAULT 0,
        last_round BIGINT, last_row_ts BIGINT, last_seen_ns BIGINT,
        status TEXT NOT NULL DEFAULT '', status_ts BIGINT,
        silent INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (site, table_id))""",
    "INSERT INTO feed_tables (site, table_id, frontier_seq, frontier_hash, signed_seq, status)"
    " VALUES ('site1', 'table-07', 12, 'ab', 12, 'online')",
)


def test_a_store_of_the_earlier_schema_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    for statement in _V1:
        db.execute(statement)
    db.commit()
    db.close()
    store = Store.open(f"sqlite:///{path}")
    try:
        assert store.schema_version() == SCHEMA_VERSION == 2
        (rec,) = store.tables()
        assert (rec.table, rec.frontier_seq, rec.signed_seq, rec.status) == (
            "table-07",
            12,
            12,
            "online",
        )
        assert (rec.forked_ns, rec.forked_seq) == (None, None)
        assert store.evidence("site1", "table-07") == [] and store.acks() == []
    finally:
        store.close()
    again = Store.open(f"sqlite:///{path}")  # opened again: nothing to migrate
    try:
        assert again.schema_version() == 2 and len(again.tables()) == 1
    finally:
        again.close()
