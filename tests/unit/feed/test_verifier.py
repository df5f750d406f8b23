"""The collector's checks (controller/feed/verifier.py) against docs/feed.md "What the collector
checks", on rows chained and heads signed as docs/journal.md describes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.feed.keys import KeyRing
from controller.feed.messages import head_payload, row_payload, status_payload
from controller.feed.store import Store
from controller.feed.verifier import Verifier, VerifierSettings
from controller.floor.commands import encode, reply, sign_command
from controller.journal.chain import row_hash, verify_rows
from tests.feed_journal import TableJournal

SITE = "site1"


class Clock:
    def __init__(self) -> None:
        self.ns = 1_800_000_000 * 10**9

    def __call__(self) -> int:
        return self.ns

    def advance(self, seconds: float) -> None:
        self.ns += int(seconds * 1e9)


class Rig:
    """A verifier over a SQLite store, a keys directory and a fake clock."""

    def __init__(
        self,
        tmp: Path,
        *tables: TableJournal,
        gap: float = 60.0,
        silence: float = 900.0,
        store: Store | None = None,
    ) -> None:
        self.tmp = tmp
        self.keys = tmp / "keys"
        self.keys.mkdir(exist_ok=True)
        for t in tables:
            (self.keys / f"{t.table}.pem").write_bytes(t.public_pem)
        self.store = store or Store.open(f"sqlite:///{tmp / 'floor.sqlite'}")
        self.clock = Clock()
        self.printed: list[str] = []
        self.v = Verifier(
            self.store,
            KeyRing(self.keys),
            VerifierSettings(SITE, gap, silence),
            on_alarm=self.printed.append,
            wall_ns=self.clock,
        )

    def row(self, t: TableJournal, row: object) -> None:
        self.v.handle(f"tc/{SITE}/{t.table}/rows", row_payload(row.as_dict()))  # type: ignore[attr-defined]
        self.commit()

    def head(self, t: TableJournal, head: object, table: str | None = None) -> None:
        self.v.handle(f"tc/{SITE}/{table or t.table}/heads", head_payload(head.as_dict()))  # type: ignore[attr-defined]
        self.commit()

    def raw(self, topic: str, payload: bytes) -> None:
        self.v.handle(topic, payload)
        self.commit()

    def tick(self) -> None:
        self.v.tick()
        self.commit()

    def commit(self) -> None:
        self.v.flush()
        self.store.commit()

    def kinds(self) -> list[str]:
        return [a.kind for a in self.store.alarms()]

    def seqs(self, t: TableJournal) -> list[int]:
        return [r["seq"] for r in self.store.rows(SITE, t.table)]


@pytest.fixture
def table() -> TableJournal:
    return TableJournal("table-07")


def test_rows_in_order_are_stored_once_and_chain(tmp_path: Path, table: TableJournal) -> None:
    rig = Rig(tmp_path, table)
    rows = table.rounds(4)
    for r in rows + rows[3:6]:  # at least once: duplicates come
        rig.row(table, r)
    stored = rig.store.rows(SITE, table.table)
    assert [r["seq"] for r in stored] == list(range(1, 13))
    assert verify_rows(stored).ok and verify_rows(stored).head_hash == rows[-1].hash
    assert rig.v.counters.duplicates == 3
    assert rig.kinds() == []
    rec = rig.store.tables()[0]
    assert (rec.frontier_seq, rec.last_round) == (12, 4)


def test_rows_out_of_order_wait_for_the_missing_one(tmp_path: Path, table: TableJournal) -> None:
    rig = Rig(tmp_path, table)
    r1, r2, r3, r4 = table.rounds(4, 1)
    rig.row(table, r1)
    rig.row(table, r3)
    rig.row(table, r4)
    assert rig.seqs(table) == [1]  # held, not stored as valid
    rig.row(table, r2)
    assert rig.seqs(table) == [1, 2, 3, 4]
    assert rig.kinds() == []


def test_a_gap_that_does_not_fill_is_alarmed_then_passed(
    tmp_path: Path, table: TableJournal
) -> None:
    rig = Rig(tmp_path, table, gap=30.0)
    rows = table.rounds(6, 1)
    for r in rows[:2] + rows[4:]:  # 3 and 4 lost
        rig.row(table, r)
    rig.clock.advance(29)
    rig.tick()
    assert rig.kinds() == [] and rig.seqs(table) == [1, 2]
    rig.clock.advance(2)
    rig.tick()
    assert rig.kinds() == ["gap"]
    assert "rows 3..4" in rig.store.alarms()[0].detail
    assert rig.seqs(table) == [1, 2, 5, 6]
    assert [r["gap_before"] for r in rig.store.rows(SITE, table.table)] == [
        False,
        False,
        True,
        False,
    ]
    assert any("gap" in line for line in rig.printed)
    rig.row(table, rows[3])  # late rows still fill the hole
    rig.row(table, rows[2])
    assert rig.seqs(table) == [1, 2, 3, 4, 5, 6]
    assert verify_rows(rig.store.rows(SITE, table.table)).ok
    assert rig.kinds() == ["gap"]


def test_first_row_seen_after_one_is_a_gap_from_the_start(
    tmp_path: Path, table: TableJournal
) -> None:
    rig = Rig(tmp_path, table, gap=10.0)
    rows = table.rounds(3, 1)
    rig.row(table, rows[2])
    rig.clock.advance(11)
    rig.tick()
    assert rig.kinds() == ["gap"] and rig.seqs(table) == [3]
    assert "rows 1..2" in rig.store.alarms()[0].detail


def test_another_hash_at_a_stored_seq_is_a_fork(tmp_path: Path, table: TableJournal) -> None:
    rig = Rig(tmp_path, table)
    rows = table.rounds(2, 2)
    for r in rows:
        rig.row(table, r)
    other = TableJournal(table.table, table.key)
    for r in rows[:2]:
        other.rows.append(r)
    forged = other.append("paigow.drawn", {"number": 8}, 2)  # a different row 3
    rig.row(table, forged)
    assert rig.kinds() == ["fork"]
    assert [r["hash"] for r in rig.store.rows(SITE, table.table)] == [r.hash for r in rows]


def test_a_row_that_breaks_the_chain_is_refused(tmp_path: Path, table: TableJournal) -> None:
    rig = Rig(tmp_path, table)
    rows = table.rounds(3, 1)
    rig.row(table, rows[0])
    # row 2 edited after it was written: its hash no longer matches its content
    edited = rows[1].as_dict() | {"data": {"number": 5}}
    rig.raw(f"tc/{SITE}/{table.table}/rows", json.dumps({"v": 2, **edited}).encode())
    # row 2 re-chained on something else: self-consistent, but its prev is not row 1's hash
    fields = rows[1].as_dict()
    fields["prev"] = "ab" * 32
    fields["hash"] = row_hash(fields["prev"], fields)
    rig.raw(f"tc/{SITE}/{table.table}/rows", json.dumps({"v": 2, **fields}).encode())
    assert rig.kinds() == ["chain"]
    assert rig.store.alarms()[0].count == 2  # one alarm, two refusals
    assert rig.seqs(table) == [1]
    rig.row(table, rows[1])  # the real row 2 still goes in
    assert rig.seqs(table) == [1, 2]


def test_signed_heads_are_checked_and_matched(tmp_path: Path, table: TableJournal) -> None:
    rig = Rig(tmp_path, table)
    rows = table.rounds(2, 2)
    head2 = table.sign(2)
    head4 = table.sign(4)
    rig.row(table, rows[0])
    rig.head(table, head4)  # ahead of its rows: waits
    rig.row(table, rows[1])
    assert rig.store.tables()[0].signed_seq == 0
    rig.row(table, rows[2])
    rig.row(table, rows[3])
    rec = rig.store.tables()[0]
    assert (rec.head_seq, rec.signed_seq) == (4, 4)
    rig.head(table, head4)  # the retained copy again: a duplicate
    assert rig.kinds() == []
    # lower than 4 but the stored row 2's: judged by the record, not by arrival (a table
    # re-sending its journal from row 1 after its retained newest head)
    rig.head(table, head2)
    assert rig.kinds() == []
    # lower than 4 and another hash than the stored row 3: the table went back
    rig.head(table, table.sign(3, hash_="cd" * 32))
    assert rig.kinds() == ["rollback"]
    rec = rig.store.tables()[0]
    assert (rec.head_seq, rec.signed_seq, rec.forked_seq) == (4, 4, 3)
    assert [(e.channel, e.seq) for e in rig.store.evidence(SITE, table.table)] == [("heads", 3)]
    assert rig.store.head_hash(SITE, table.table, 3) is None  # never one of the table's heads


def test_a_forged_head_is_a_bad_signature(tmp_path: Path, table: TableJournal) -> None:
    rig = Rig(tmp_path, table)
    for r in table.rounds(1, 2):
        rig.row(table, r)
    intruder = ec.generate_private_key(ec.SECP256R1())
    rig.head(table, table.sign(2, key=intruder))  # another key
    genuine = table.sign(2)
    tampered = genuine.as_dict() | {"ts": genuine.ts + 1}  # the table's key id, bad sig
    rig.raw(f"tc/{SITE}/{table.table}/heads", json.dumps({"v": 2, **tampered}).encode())
    assert rig.kinds() == ["bad-signature"]
    assert rig.store.alarms()[0].count == 2
    assert rig.store.tables()[0].head_seq == 0
    rig.head(table, genuine)
    assert rig.store.tables()[0].signed_seq == 2


def test_a_head_naming_another_hash_than_the_stored_row_is_a_fork(
    tmp_path: Path, table: TableJournal
) -> None:
    rig = Rig(tmp_path, table)
    for r in table.rounds(1, 2):
        rig.row(table, r)
    rig.head(table, table.sign(2, hash_="cd" * 32))
    assert rig.kinds() == ["fork"]
    assert rig.store.tables()[0].signed_seq == 0


def test_a_head_for_another_table_on_this_topic_is_refused(
    tmp_path: Path, table: TableJournal
) -> None:
    other = TableJournal("table-08")
    rig = Rig(tmp_path, table, other)
    other.rounds(1, 1)
    rig.head(other, other.sign(1), table=table.table)
    assert rig.kinds() == ["malformed"]


def test_unknown_table_and_malformed_input_never_stop_the_collector(
    tmp_path: Path, table: TableJournal
) -> None:
    stranger = TableJournal("table-99")
    rig = Rig(tmp_path, table)
    rows = table.rounds(2, 1)
    rig.row(stranger, stranger.rounds(1, 1)[0])
    topic = f"tc/{SITE}/{table.table}/rows"
    for junk in (
        b"\xff\xfe",
        b"[]",
        b"{}",
        b'{"v": 1}',
        b'{"v": 2, "seq": NaN}',
        row_payload(rows[0].as_dict())[:-1],
        b"x" * 300_000,
        json.dumps({"v": 2, **rows[0].as_dict(), "extra": 1}).encode(),
        json.dumps({"v": 2, **(rows[0].as_dict() | {"seq": True})}).encode(),
    ):
        rig.raw(topic, junk)
    rig.raw(f"tc/{SITE}/{table.table}/secrets", b"{}")
    rig.raw(f"tc/{SITE}/{table.table}/heads", b'{"v": 2, "table": "table-07"}')
    rig.raw(f"tc/{SITE}/{table.table}/status", b'{"v": 2, "state": "dancing", "ts": 1}')
    rig.raw("tc/site1/table 07/rows", b"{}")
    for r in rows:
        rig.row(table, r)
    assert rig.seqs(table) == [1, 2]
    assert rig.store.row_count() == 2
    assert sorted(set(rig.kinds())) == ["malformed", "unknown-table"]
    assert sum(a.count for a in rig.store.alarms(kind="malformed")) == 13
    assert rig.store.alarms(kind="unknown-table")[0].table == "table-99"


def test_host_commands_and_replies_on_a_tables_topics_are_passed_over(
    tmp_path: Path, table: TableJournal
) -> None:
    """docs/host-commands.md: the host's commands (``cmd``) and the table's replies (``reply``)
    share the table's subtree, which the collector subscribes to; they are not the table's
    record: nothing stored, no alarm (before, each was ``malformed``: an unknown channel)."""
    rig = Rig(tmp_path, table)
    host_key = ec.generate_private_key(ec.SECP256R1())
    cmd = encode(sign_command(host_key, table.table, 1, "disable", ["maintenance"]))
    rig.raw(f"tc/{SITE}/{table.table}/cmd", cmd)
    rig.raw(f"tc/{SITE}/{table.table}/reply", reply(table.table, 1, True, ["OK"], now_ns=1))
    rig.raw(f"tc/{SITE}/{table.table}/reply", b"not even JSON")  # not the collector's to judge
    rig.raw(f"tc/{SITE}/table-99/cmd", cmd)  # a table without a key: still not a record
    for r in table.rounds(1, 2):
        rig.row(table, r)
    assert rig.kinds() == []
    assert rig.seqs(table) == [1, 2]
    assert rig.v.counters.host_messages == 4
    assert rig.v.counters.refused == 0


def test_a_table_silent_too_long_is_alarmed_once(tmp_path: Path, table: TableJournal) -> None:
    rig = Rig(tmp_path, table, silence=300.0)
    rows = table.rounds(2, 1)
    rig.row(table, rows[0])
    rig.clock.advance(299)
    rig.tick()
    assert rig.kinds() == []
    rig.clock.advance(2)
    rig.tick()
    rig.clock.advance(100)
    rig.tick()
    assert rig.kinds() == ["silent"]
    assert "nothing verified (row, head or online status) for 301 s" in rig.store.alarms()[0].detail
    assert rig.store.tables()[0].silent
    rig.row(table, rows[1])  # a row on the chain: alive again
    assert not rig.store.tables()[0].silent
    assert rig.store.tables()[0].last_seen_ns == rig.clock()


def forged_heads(table: TableJournal, seq: int) -> list[bytes]:
    """Well-formed heads for ``table`` that do not verify: one signed by another key, one with
    the table's key id and a signature over other bytes."""
    intruder = ec.generate_private_key(ec.SECP256R1())
    other_key = head_payload(table.sign(seq, key=intruder).as_dict())
    genuine = table.sign(seq)
    tampered = genuine.as_dict() | {"ts": genuine.ts + 1}
    return [other_key, json.dumps({"v": 2, **tampered}).encode()]


def test_forged_heads_do_not_keep_a_silent_table_alive(tmp_path: Path, table: TableJournal) -> None:
    # Issue 16 (audit): last seen moved before the signature check, so a table that sent only
    # forged heads never went silent. Only a verified row or head counts.
    rig = Rig(tmp_path, table, silence=300.0)
    rows = table.rounds(2, 2)
    for r in rows:
        rig.row(table, r)
    seen = rig.clock()
    for step in range(8):  # a forged head every 50 s for 400 s
        rig.clock.advance(50)
        for payload in forged_heads(table, 4):
            rig.raw(f"tc/{SITE}/{table.table}/heads", payload)
        rig.tick()
        kinds = rig.kinds()
        assert ("silent" in kinds) == (50 * (step + 1) >= 300), (step, kinds)
    assert rig.store.tables()[0].last_seen_ns == seen
    assert rig.store.tables()[0].silent
    assert rig.store.alarms(kind="silent")[0].count == 1
    rig.head(table, table.sign(4))  # a genuine head: alive again
    assert not rig.store.tables()[0].silent
    assert rig.store.tables()[0].last_seen_ns == rig.clock()


def test_a_table_that_only_ever_sent_forged_heads_goes_silent(
    tmp_path: Path, table: TableJournal
) -> None:
    rig = Rig(tmp_path, table, silence=300.0)
    table.rounds(1, 2)
    for _ in range(7):
        rig.clock.advance(50)
        for payload in forged_heads(table, 2):
            rig.raw(f"tc/{SITE}/{table.table}/heads", payload)
        rig.tick()
    assert rig.kinds() == ["bad-signature", "silent"]
    assert (
        "nothing verified (row, head or online status) yet for 300 s"
        in rig.store.alarms(kind="silent")[0].detail
    )
    assert rig.store.tables()[0].last_seen_ns is None


def test_replays_and_held_rows_are_not_proof_of_life(tmp_path: Path, table: TableJournal) -> None:
    # A duplicate (a replayed row or head) proves nothing new, and a row held before a gap has
    # not had its chain checked yet: neither moves "last seen".
    rig = Rig(tmp_path, table, silence=300.0, gap=3600.0)
    rows = table.rounds(4, 1)
    rig.row(table, rows[0])
    head1 = table.sign(1)
    rig.head(table, head1)
    seen = rig.clock()
    for n in range(7):
        rig.clock.advance(50)
        rig.raw(f"tc/{SITE}/{table.table}/status", status_payload("offline", n + 2))
        rig.row(table, rows[0])  # a replay of a stored row
        rig.head(table, head1)  # a replay of the retained head
        rig.row(table, rows[2 + n % 2])  # rows 3, 4: held (row 2 missing)
        rig.tick()
    rec = rig.store.tables()[0]
    assert rig.kinds() == ["silent"]
    assert "(status offline)" in rig.store.alarms()[0].detail
    assert (rec.status, rec.status_ts, rec.last_seen_ns, rec.silent) == ("offline", 8, seen, True)
    rig.row(table, rows[1])  # the missing row: 2, 3, 4 on the chain
    rec = rig.store.tables()[0]
    assert rig.seqs(table) == [1, 2, 3, 4]
    assert (rec.last_seen_ns, rec.silent) == (rig.clock(), False)


def test_an_idle_connected_table_is_heard_by_its_online_status(
    tmp_path: Path, table: TableJournal
) -> None:
    # The publisher repeats "online" every minute; the broker lets only the table's own
    # certificate publish it (TLS, ACL): an idle table is heard, never silent; after its will's
    # "offline" nothing more comes, and it is silent after the setting.
    rig = Rig(tmp_path, table, silence=300.0)
    for n in range(10):  # ten idle minutes
        rig.clock.advance(60)
        rig.raw(f"tc/{SITE}/{table.table}/status", status_payload("online", n + 1))
        rig.tick()
    assert rig.kinds() == []
    rig.raw(f"tc/{SITE}/{table.table}/status", status_payload("offline", 11))
    rig.clock.advance(299)
    rig.tick()
    assert rig.kinds() == []
    rig.clock.advance(1)
    rig.tick()
    assert rig.kinds() == ["silent"]
    assert rig.store.tables()[0].status == "offline"


def test_alarms_of_a_kind_coalesce_within_the_window(tmp_path: Path, table: TableJournal) -> None:
    rig = Rig(tmp_path, table)
    for _ in range(3):
        rig.raw(f"tc/{SITE}/{table.table}/rows", b"junk")
    rig.clock.advance(61)
    rig.raw(f"tc/{SITE}/{table.table}/rows", b"junk")
    assert [a.count for a in rig.store.alarms()] == [3, 1]
    assert len(rig.printed) == 2


def test_a_restarted_collector_resumes_where_it_stopped(
    tmp_path: Path, table: TableJournal
) -> None:
    rig = Rig(tmp_path, table)
    rows = table.rounds(4, 1)
    head = table.sign(4)
    rig.row(table, rows[0])
    rig.row(table, rows[2])  # held
    rig.head(table, head)  # waiting for row 4
    rig.store.close()
    again = Rig(tmp_path, table)
    again.row(table, rows[3])
    again.row(table, rows[1])
    assert again.seqs(table) == [1, 2, 3, 4]
    assert again.store.tables()[0].signed_seq == 4
    assert again.kinds() == []


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_any_delivery_order_with_duplicates_stores_each_row_once(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """At-least-once delivery, rows in any order (within the gap timeout), heads first seen in
    the order they were signed (one connection keeps them in order; a re-delivery may repeat an
    older one), ends with the whole chain stored exactly once, every head matched, no alarm."""
    table = TableJournal("table-07")
    rows = table.rounds(5, 2)
    heads = [table.sign(s) for s in (2, 6, 10)]
    messages: list[tuple[str, object]] = [("row", r) for r in rows] + [("head", h) for h in heads]
    extra = data.draw(st.lists(st.sampled_from(messages), max_size=10))
    order = list(data.draw(st.permutations(messages + extra)))
    seen: list[object] = []
    for kind, item in order:
        if kind == "head" and all(item is not h for h in seen):
            seen.append(item)
    relabel = {id(old): new for old, new in zip(seen, heads, strict=True)}
    order = [(k, relabel[id(item)] if k == "head" else item) for k, item in order]
    rig = Rig(tmp_path_factory.mktemp("v"), table)
    for kind, item in order:
        if kind == "row":
            rig.row(table, item)
        else:
            rig.head(table, item)
    stored = rig.store.rows(SITE, table.table)
    assert [r["hash"] for r in stored] == [r.hash for r in rows]
    assert rig.kinds() == []
    assert rig.store.tables()[0].signed_seq == 10


def test_a_restarted_collector_times_silence_and_gaps_from_its_start(
    tmp_path: Path, table: TableJournal
) -> None:
    """A collector that was away longer than the silence and gap settings first receives what
    the broker kept for it: no alarm until the settings pass with the collector listening."""
    rig = Rig(tmp_path, table, gap=30.0, silence=300.0)
    rows = table.rounds(3, 1)
    rig.row(table, rows[0])
    rig.row(table, rows[2])  # row 2 not yet here
    rig.store.close()
    again = Rig(tmp_path, table, gap=30.0, silence=300.0)
    again.clock.advance(3600)  # an hour later it starts again
    again.v.started_ns = again.clock()
    again.v.reload()
    again.tick()
    assert again.kinds() == []
    again.clock.advance(31)
    again.tick()
    assert again.kinds() == ["gap"]
    again.clock.advance(300)
    again.tick()
    assert again.kinds() == ["gap", "silent"]


def test_alarms_go_out_once_then_with_their_count_once_a_window(tmp_path: Path) -> None:
    """docs/feed.md "Alarms out": the first raise goes out at once; repeats within the window
    the stored alarm absorbs go out together, with the count, once the window has passed."""
    rig = Rig(tmp_path)  # no key at all: every message is ``unknown-table``
    stranger = TableJournal("table-99")
    rows = stranger.rounds(1)
    rig.row(stranger, rows[0])
    first = rig.v.take_events()
    assert [(e.table, e.kind, e.count) for e in first] == [("table-99", "unknown-table", 1)]
    for r in rows[1:]:
        rig.clock.advance(1)
        rig.row(stranger, r)
    rig.tick()
    assert rig.v.take_events() == []  # within the window: counted, not sent
    assert [a.count for a in rig.store.alarms()] == [3]
    rig.clock.advance(60)
    rig.tick()
    again = rig.v.take_events()
    assert [(e.kind, e.count, e.detail) for e in again] == [("unknown-table", 3, first[0].detail)]
    rig.clock.advance(120)
    rig.tick()
    assert rig.v.take_events() == []  # nothing new: nothing sent
    # the collector's own alarm topic is not a table's message
    rig.raw(f"tc/{SITE}/alarms", first[0].as_json())
    assert rig.v.take_events() == [] and [a.count for a in rig.store.alarms()] == [3]
