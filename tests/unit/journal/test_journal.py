"""The journal's store and chain: append-only, one sync per transaction, SHA-256-chained (no
secret); every kind of tampering is named precisely by the walk."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from controller.journal.chain import GENESIS, canonical_row, row_hash, verify_rows
from controller.journal.store import Journal, JournalCorrupt, JournalError, JournalIOError
from controller.journal.verify import check_chain


def _journal(tmp_path: Path, **kwargs: object) -> Journal:
    return Journal(tmp_path / "j.sqlite", **kwargs)  # type: ignore[arg-type]


def _filled(tmp_path: Path, n: int = 10) -> Journal:
    j = _journal(tmp_path)
    for i in range(n):
        j.append("test.event", {"i": i, "cents": 100 * i}, round_id=i // 3)
    return j


def _raw(tmp_path: Path) -> sqlite3.Connection:
    """A second connection with the append-only triggers removed: what an attacker would do."""
    db = sqlite3.connect(tmp_path / "j.sqlite", isolation_level=None)
    db.execute("DROP TRIGGER rows_no_update")
    db.execute("DROP TRIGGER rows_no_delete")
    return db


def test_the_hash_is_sha256_of_prev_and_the_canonical_row(tmp_path: Path) -> None:
    """docs/journal.md "Row", computed here independently of controller/journal/chain.py."""
    j = _journal(
        tmp_path, boot_id="boot-1", wall_ns=lambda: 1_700_000_000_000_000_000, mono_ns=lambda: 42
    )
    j.append("paigow.input", {"b": "é", "a": [1, 2]}, round_id=7)
    row = j.row(1)
    assert row is not None and row.prev == "0" * 64 == GENESIS
    text = (
        '{"boot":"boot-1","data":{"a":[1,2],"b":"é"},"kind":"paigow.input","mono":42,'
        '"round":7,"seq":1,"ts":1700000000000000000}'
    )
    assert canonical_row(row.as_dict()) == text.encode("utf-8")
    want = hashlib.sha256(bytes(32) + text.encode("utf-8")).hexdigest()
    assert row.hash == want == row_hash(GENESIS, row.as_dict())
    j.append("next", {})
    second = j.row(2)
    assert second is not None and second.prev == want
    assert verify_rows([r.as_dict() for r in j.events()], GENESIS).ok


def test_rows_read_back_pass_the_feeds_check(tmp_path: Path) -> None:
    """What the feed publishes (Row.as_dict) is what the collector's verify_rows accepts."""
    rows = [r.as_dict() for r in _filled(tmp_path, 5).events()]
    assert verify_rows(rows).ok and verify_rows(rows).head_hash == rows[-1]["hash"]
    edited = [dict(r) for r in rows]
    edited[2]["data"] = {"i": 99}
    assert verify_rows(edited).broken_seq == 3


def test_append_numbers_rows_and_reads_them_back(tmp_path: Path) -> None:
    j = _filled(tmp_path, 5)
    rows = list(j.events())
    assert [e.seq for e in rows] == [1, 2, 3, 4, 5]
    assert rows[3].data == {"i": 3, "cents": 300}
    assert rows[3].round == 1 and rows[3].kind == "test.event"
    result = check_chain(j)
    assert result.ok and result.rows == 5 and result.head_seq == 5
    assert result.head_hash == j.head()[1] == rows[-1].hash


def test_kinds_and_boots_are_stored_once(tmp_path: Path) -> None:
    j = _filled(tmp_path, 20)
    j.close()
    db = sqlite3.connect(tmp_path / "j.sqlite")
    assert db.execute("SELECT COUNT(*) FROM kinds").fetchone()[0] == 1
    assert db.execute("SELECT COUNT(*) FROM boots").fetchone()[0] == 1
    assert db.execute("PRAGMA page_size").fetchone()[0] == 2048
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_rows_survive_reopen_and_chain_continues(tmp_path: Path) -> None:
    j = _filled(tmp_path, 3)
    head = j.head()
    j.close()
    j2 = _journal(tmp_path, boot_id="another boot")
    assert j2.head() == head
    j2.append("after.reopen", {})
    result = check_chain(j2)
    assert result.ok and result.rows == 4
    assert [r.boot for r in j2.events()][-1] == "another boot"


def test_update_and_delete_are_refused_by_the_database(tmp_path: Path) -> None:
    j = _filled(tmp_path, 3)
    j.close()
    db = sqlite3.connect(tmp_path / "j.sqlite")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE rows SET data = '{}' WHERE seq = 2")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM rows WHERE seq = 2")
    db.execute("INSERT INTO heads (seq, hash, ts, sig, key_id) VALUES (1, x'00', 1, x'00', 'k')")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM heads")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE kinds SET kind = 'x'")


def test_edited_row_is_named(tmp_path: Path) -> None:
    j = _filled(tmp_path)
    _raw(tmp_path).execute("UPDATE rows SET data = ? WHERE seq = 4", ('{"cents":999999,"i":3}',))
    result = check_chain(j)
    assert not result.ok and result.first_bad_seq == 4
    assert "row 4" in (result.problem or "") and "edited" in (result.problem or "")


def test_a_row_rewritten_with_its_hash_recomputed_breaks_the_next_row(tmp_path: Path) -> None:
    """No secret is needed to recompute one hash; the next row's link then breaks (and a
    rewrite re-chained to the end breaks the signed heads: test_verify.py)."""
    j = _filled(tmp_path)
    row = j.row(4)
    assert row is not None
    forged = {**row.as_dict(), "data": {"cents": 999999, "i": 3}}
    _raw(tmp_path).execute(
        "UPDATE rows SET data = ?, hash = ? WHERE seq = 4",
        (
            json.dumps(forged["data"], sort_keys=True, separators=(",", ":")),
            bytes.fromhex(row_hash(row.prev, forged)),
        ),
    )
    result = check_chain(j)
    assert not result.ok and result.first_bad_seq == 5


def test_deleted_row_is_named(tmp_path: Path) -> None:
    j = _filled(tmp_path)
    _raw(tmp_path).execute("DELETE FROM rows WHERE seq = 6")
    result = check_chain(j)
    assert not result.ok and result.first_bad_seq == 6
    assert result.problem == "row 6 is missing (deleted)"


def test_deleted_first_row_is_named(tmp_path: Path) -> None:
    j = _filled(tmp_path)
    _raw(tmp_path).execute("DELETE FROM rows WHERE seq = 1")
    result = check_chain(j)
    assert not result.ok and result.first_bad_seq == 1
    assert "deleted" in (result.problem or "")


def test_reordered_rows_are_named(tmp_path: Path) -> None:
    j = _filled(tmp_path)
    raw = _raw(tmp_path)
    r3 = raw.execute("SELECT data, hash FROM rows WHERE seq = 3").fetchone()
    r4 = raw.execute("SELECT data, hash FROM rows WHERE seq = 4").fetchone()
    raw.execute("UPDATE rows SET data = ?, hash = ? WHERE seq = 3", r4)
    raw.execute("UPDATE rows SET data = ?, hash = ? WHERE seq = 4", r3)
    result = check_chain(j)
    assert not result.ok and result.first_bad_seq == 3


def test_a_transaction_is_one_commit_and_outputs_wait_for_it(tmp_path: Path) -> None:
    j = _journal(tmp_path)
    order: list[str] = []
    reader = j.reader()
    with j.transaction():
        j.append("input", {"b": "draw"})
        j.after_commit(lambda: order.append(f"shown, reader sees {reader.stored_last_seq()}"))
        j.append("decision", {"n": 3})
        order.append(f"in transaction, reader sees {reader.stored_last_seq()}")
        with j.transaction():  # nested: joins the outer one
            j.append("more", {})
    assert order == ["in transaction, reader sees 0", "shown, reader sees 3"]
    assert [r.kind for r in j.events()] == ["input", "decision", "more"]
    reader.close()


def test_a_commit_listener_hears_each_commit_that_wrote_after_its_outputs(tmp_path: Path) -> None:
    """The feed's publisher is woken once per commit (rows or heads alone), after the display
    and the replies went out; an empty transaction or a failed one wakes nobody."""
    from controller.journal.heads import SignedHead

    j = _journal(tmp_path)
    heard: list[str] = []
    j.add_commit_listener(lambda: heard.append(f"commit at {j.last_seq}"))
    with j.transaction():
        j.append("input", {})
        j.append("decision", {})
        j.after_commit(lambda: heard.append("shown"))
    assert heard == ["shown", "commit at 2"]
    with j.transaction():
        pass  # a tick that journaled nothing
    j.append("alone", {})  # outside a transaction: its own commit
    head = SignedHead("t", 3, j.last_hash, 1, "3006020101020101", "00" * 8)
    j.add_heads([head])  # heads alone are worth sending too
    assert heard == ["shown", "commit at 2", "commit at 3", "commit at 3"]
    j._db.execute("PRAGMA max_page_count = 1")
    with pytest.raises(JournalIOError), j.transaction():
        for i in range(10_000):
            j.append("bulk", {"pad": "x" * 2000, "i": i})
    assert heard == ["shown", "commit at 2", "commit at 3", "commit at 3"]


def test_a_failed_transaction_rolls_back_runs_undo_and_never_the_outputs(tmp_path: Path) -> None:
    j = _filled(tmp_path, 3)
    head = j.head()
    shown: list[str] = []
    undone: list[str] = []
    j._db.execute("PRAGMA max_page_count = 1")  # the database cannot grow: a full disk
    with pytest.raises(JournalIOError, match="full"), j.transaction():
        j.on_rollback(lambda: undone.append("model restored"))
        j.after_commit(lambda: shown.append("display"))
        try:
            for i in range(10_000):
                j.append("bulk", {"pad": "x" * 2000, "i": i})
        except JournalIOError:
            pass  # a handler that catches the error: the transaction stays doomed
    assert shown == [] and undone == ["model restored"]
    assert j.head() == head
    j._db.execute("PRAGMA max_page_count = 1073741823")
    j.append("after", {})
    assert check_chain(j).ok and j.last_seq == 4


def test_full_disk_outside_a_transaction_is_an_io_error_and_nothing_half_written(
    tmp_path: Path,
) -> None:
    j = _filled(tmp_path, 3)
    j._db.execute("PRAGMA max_page_count = 1")
    with pytest.raises(JournalIOError, match="full"):
        for i in range(10_000):
            j.append("bulk", {"pad": "x" * 2000, "i": i})
    seq_before = j.last_seq
    result = check_chain(j)
    assert result.ok and result.rows == seq_before


def test_want_head_reports_the_committed_head(tmp_path: Path) -> None:
    j = _journal(tmp_path)
    asked: list[tuple[int, str, str]] = []
    j.set_head_hook(lambda seq, digest, why: asked.append((seq, digest, why)))
    with j.transaction():
        j.append("a", {})
        j.want_head("decision")
        assert asked == []  # not before the commit
        j.append("b", {})
    assert asked == [(2, j.head()[1], "decision")]


def test_file_truncated_mid_write_is_a_named_fault_not_a_crash(tmp_path: Path) -> None:
    j = _filled(tmp_path, 200)
    j.close()  # checkpoints the WAL into the main file
    path = tmp_path / "j.sqlite"
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size // 2)
    with pytest.raises(JournalCorrupt):
        j2 = _journal(tmp_path)
        result = check_chain(j2)
        if not result.ok:
            raise JournalCorrupt(result.describe())


def test_torn_wal_tail_loses_only_the_unsynced_transaction(tmp_path: Path) -> None:
    """A write torn by power loss: SQLite drops the incomplete WAL frame; the chain verifies
    (the anchor, not the chain, says whether committed rows are missing: test_verify.py)."""
    j = _filled(tmp_path, 20)
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(tmp_path / "j.sqlite", copy / "j.sqlite")
    data = (tmp_path / "j.sqlite-wal").read_bytes()
    (copy / "j.sqlite-wal").write_bytes(data[: len(data) - 100])  # tear the last frame
    j.close()
    result = check_chain(_journal(copy))
    assert result.ok and 0 < result.rows < 20


def test_not_a_database_is_a_named_fault(tmp_path: Path) -> None:
    (tmp_path / "j.sqlite").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(JournalCorrupt, match="not a readable journal"):
        _journal(tmp_path)


def test_clock_unset_and_backwards_are_journaled(tmp_path: Path) -> None:
    now = [2_000_000_000 * 10**9]
    j = _journal(tmp_path, wall_ns=lambda: now[0])
    j.append("a", {})
    now[0] -= 5 * 10**9
    warnings = j.check_clock(floor_ns=1_700_000_000 * 10**9)
    assert len(warnings) == 1 and "backwards" in warnings[0]
    now[0] = 0
    warnings = j.check_clock(floor_ns=1_700_000_000 * 10**9)
    assert any("unset" in w for w in warnings)
    kinds = [e.kind for e in j.events()]
    assert kinds.count("clock.warning") == 3
    assert [e.seq for e in j.events()] == sorted(e.seq for e in j.events())


def test_a_clock_jump_while_running_is_journaled_when_it_happens(tmp_path: Path) -> None:
    """docs/design.md "Time": a jump either way is journaled when it happens, not at the next
    start; a wall clock that keeps pace with the monotonic clock (or drifts under the
    threshold) is not a jump."""
    wall = [1_800_000_000 * 10**9]
    mono = [10**9]
    j = _journal(tmp_path, wall_ns=lambda: wall[0], mono_ns=lambda: mono[0])
    assert j.watch_clock() is None  # the first call takes the reference
    for _ in range(3):  # ten seconds pass on both clocks, with 0.5 s of drift: no jump
        wall[0] += 10 * 10**9 + 500_000_000
        mono[0] += 10 * 10**9
        assert j.watch_clock() is None
    wall[0] += 3600 * 10**9 + 10**8  # NTP sets the clock an hour ahead, in 0.1 s of time
    mono[0] += 10**8
    assert j.watch_clock() == "wall clock jumped forward by 3600.000 s"
    assert j.watch_clock() is None  # the new offset is the reference
    wall[0] -= 90 * 10**9  # a technician sets it back a minute and a half
    assert j.watch_clock() == "wall clock jumped backwards by 90.000 s"
    rows = [e for e in j.events() if e.kind == "clock.warning"]
    assert [r.data["step_s"] for r in rows] == [3600.0, -90.0]
    assert check_chain(j).ok


def test_non_json_data_is_refused_before_writing(tmp_path: Path) -> None:
    j = _journal(tmp_path)
    with pytest.raises(ValueError, match="not JSON"):
        j.append("bad", {"x": object()})
    with pytest.raises(ValueError, match="not JSON"):
        j.append("bad", {"x": float("nan")})
    assert j.last_seq == 0


def test_reader_is_read_only_and_sees_committed_rows(tmp_path: Path) -> None:
    j = _filled(tmp_path, 3)
    reader = j.reader()
    assert check_chain(reader).rows == 3
    j.append("more", {})
    assert check_chain(reader).rows == 4
    assert [r.seq for r in reader.rows_after(2, 10)] == [3, 4]
    assert reader.rows_after(2, 1)[0].prev == j.row(2).hash  # type: ignore[union-attr]
    assert reader.heads_after(0, 10) == []
    with pytest.raises(JournalError, match="read-only"):
        reader.append("x", {})


def test_last_and_recall_read_by_index(tmp_path: Path) -> None:
    """last(kinds) uses the kind index and a round's rows the round index: neither scans."""
    j = _filled(tmp_path, 30)
    j.append("rare", {"n": 1})
    j.append("test.event", {}, round_id=None)
    assert j.last(["rare"]).data == {"n": 1}  # type: ignore[union-attr]
    assert j.last(["never"]) is None
    plans = [
        " ".join(str(c) for c in r)
        for r in j._db.execute(
            "EXPLAIN QUERY PLAN SELECT seq FROM rows WHERE round = ? ORDER BY seq", (3,)
        )
    ]
    assert any("rows_round" in p for p in plans), plans
    plans = [
        " ".join(str(c) for c in r)
        for r in j._db.execute("EXPLAIN QUERY PLAN SELECT MAX(seq) FROM rows WHERE kind = ?", (1,))
    ]
    assert any("rows_kind" in p for p in plans), plans


def test_a_revision1_file_is_recognised_never_altered(tmp_path: Path) -> None:
    from controller.journal.store import JournalRevision1

    db = sqlite3.connect(tmp_path / "j.sqlite")
    db.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, mac TEXT)")
    db.commit()
    db.close()
    before = (tmp_path / "j.sqlite").read_bytes()
    with pytest.raises(JournalRevision1):
        _journal(tmp_path)
    assert (tmp_path / "j.sqlite").read_bytes() == before
