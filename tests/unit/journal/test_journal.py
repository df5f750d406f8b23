"""The journal: append-only, synced, HMAC-chained; every kind of tampering is named precisely."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from controller.journal.store import (
    Journal,
    JournalCorrupt,
    JournalIOError,
    JournalKeyError,
    load_or_create_key,
)


def _journal(tmp_path: Path, **kwargs: object) -> Journal:
    return Journal.open(tmp_path / "j.sqlite", tmp_path / "device.key", **kwargs)  # type: ignore[arg-type]


def _filled(tmp_path: Path, n: int = 10) -> Journal:
    j = _journal(tmp_path)
    for i in range(n):
        j.append("test.event", {"i": i, "cents": 100 * i}, round_id=i // 3)
    return j


def _raw(tmp_path: Path) -> sqlite3.Connection:
    """A second connection with the append-only triggers removed: what an attacker would do."""
    db = sqlite3.connect(tmp_path / "j.sqlite", isolation_level=None)
    db.execute("DROP TRIGGER events_no_update")
    db.execute("DROP TRIGGER events_no_delete")
    return db


def test_append_numbers_rows_and_reads_them_back(tmp_path: Path) -> None:
    j = _filled(tmp_path, 5)
    rows = list(j.events())
    assert [e.seq for e in rows] == [1, 2, 3, 4, 5]
    assert rows[3].data == {"i": 3, "cents": 300}
    assert rows[3].round_id == 1
    assert j.verify().ok
    assert j.verify().rows == 5


def test_rows_survive_reopen_and_chain_continues(tmp_path: Path) -> None:
    j = _filled(tmp_path, 3)
    head = j.head()
    j.close()
    j2 = _journal(tmp_path)
    assert j2.head() == head
    j2.append("after.reopen", {})
    result = j2.verify(expected_head=head)
    assert result.ok and result.rows == 4


def test_update_and_delete_are_refused_by_the_database(tmp_path: Path) -> None:
    j = _filled(tmp_path, 3)
    j.close()
    db = sqlite3.connect(tmp_path / "j.sqlite")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE events SET data = '{}' WHERE seq = 2")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM events WHERE seq = 2")


def test_edited_row_is_named(tmp_path: Path) -> None:
    j = _filled(tmp_path)
    _raw(tmp_path).execute("UPDATE events SET data = ? WHERE seq = 4",
                           ('{"cents":999999,"i":3}',))
    result = j.verify()
    assert not result.ok
    assert result.first_bad_seq == 4
    assert "row 4" in (result.problem or "") and "edited" in (result.problem or "")


def test_deleted_row_is_named(tmp_path: Path) -> None:
    j = _filled(tmp_path)
    _raw(tmp_path).execute("DELETE FROM events WHERE seq = 6")
    result = j.verify()
    assert not result.ok
    assert result.first_bad_seq == 6
    assert result.problem == "row 6 is missing (deleted)"


def test_deleted_first_row_is_named(tmp_path: Path) -> None:
    j = _filled(tmp_path)
    _raw(tmp_path).execute("DELETE FROM events WHERE seq = 1")
    result = j.verify()
    assert not result.ok and result.first_bad_seq == 1
    assert "deleted" in (result.problem or "")


def test_reordered_rows_are_named(tmp_path: Path) -> None:
    j = _filled(tmp_path)
    raw = _raw(tmp_path)
    r3 = raw.execute("SELECT data, mac FROM events WHERE seq = 3").fetchone()
    r4 = raw.execute("SELECT data, mac FROM events WHERE seq = 4").fetchone()
    raw.execute("UPDATE events SET data = ?, mac = ? WHERE seq = 3", r4)
    raw.execute("UPDATE events SET data = ?, mac = ? WHERE seq = 4", r3)
    result = j.verify()
    assert not result.ok and result.first_bad_seq == 3


def test_rewritten_tail_with_the_wrong_key_is_caught(tmp_path: Path) -> None:
    """Someone without the device key re-chains the rows after an edit: the HMAC still fails."""
    j = _filled(tmp_path, 4)
    j.close()
    os.rename(tmp_path / "device.key", tmp_path / "real.key")
    forged = _journal(tmp_path)  # a new key is generated: the forger's
    result = forged.verify()
    assert not result.ok and result.first_bad_seq == 1


def test_truncation_after_a_printed_head_is_caught(tmp_path: Path) -> None:
    j = _filled(tmp_path, 8)
    head = j.head()
    assert head[0] == 8
    raw = _raw(tmp_path)
    raw.execute("DELETE FROM events WHERE seq > 5")
    alone = j.verify()
    assert alone.ok, "a clean cut at the end is invisible without an earlier head"
    with_head = j.verify(expected_head=head)
    assert not with_head.ok
    assert "truncated" in (with_head.problem or "")
    assert "row 8" in (with_head.problem or "")


def test_rewritten_history_after_a_printed_head_is_caught(tmp_path: Path) -> None:
    j = _filled(tmp_path, 5)
    head = j.head()
    j.close()
    # Someone holding the key rebuilds the whole journal with different contents.
    key = (tmp_path / "device.key").read_bytes()
    os.remove(tmp_path / "j.sqlite")
    for suffix in ("-wal", "-shm"):
        if (tmp_path / f"j.sqlite{suffix}").exists():
            os.remove(tmp_path / f"j.sqlite{suffix}")
    rebuilt = Journal(tmp_path / "j.sqlite", key)
    for i in range(6):
        rebuilt.append("test.event", {"i": i, "cents": 1})
    assert rebuilt.verify().ok
    result = rebuilt.verify(expected_head=head)
    assert not result.ok and "rewritten" in (result.problem or "")


def test_file_truncated_mid_write_is_a_named_fault_not_a_crash(tmp_path: Path) -> None:
    j = _filled(tmp_path, 200)
    j.close()  # checkpoints the WAL into the main file
    path = tmp_path / "j.sqlite"
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(size // 2)
    with pytest.raises(JournalCorrupt):
        j2 = _journal(tmp_path)
        result = j2.verify()
        if not result.ok:
            raise JournalCorrupt(result.describe())


def test_torn_wal_tail_loses_only_the_unsynced_transaction(tmp_path: Path) -> None:
    """A write torn by power loss: SQLite drops the incomplete WAL frame; verify still passes."""
    j = _filled(tmp_path, 20)
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(tmp_path / "device.key", copy / "device.key")
    shutil.copy(tmp_path / "j.sqlite", copy / "j.sqlite")
    wal = tmp_path / "j.sqlite-wal"
    data = wal.read_bytes()
    (copy / "j.sqlite-wal").write_bytes(data[: len(data) - 100])  # tear the last frame
    j.close()
    recovered = _journal(copy)
    result = recovered.verify()
    assert result.ok
    assert 0 < result.rows < 20


def test_not_a_database_is_a_named_fault(tmp_path: Path) -> None:
    (tmp_path / "j.sqlite").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(JournalCorrupt, match="not a readable journal"):
        _journal(tmp_path)


def test_full_disk_is_an_io_error_and_nothing_half_written(tmp_path: Path) -> None:
    j = _filled(tmp_path, 3)
    j._db.execute("PRAGMA max_page_count = 1")  # the database cannot grow: as a full disk
    with pytest.raises(JournalIOError, match="full"):
        for i in range(10_000):
            j.append("bulk", {"pad": "x" * 2000, "i": i})
    seq_before = j.last_seq
    assert j.verify().ok
    assert j.verify().rows == seq_before


def test_device_key_is_private_and_stable(tmp_path: Path) -> None:
    key = load_or_create_key(tmp_path / "k")
    mode = stat.S_IMODE((tmp_path / "k").stat().st_mode)
    assert mode == 0o600
    assert load_or_create_key(tmp_path / "k") == key
    assert len(key) == 32


def test_malformed_key_is_refused(tmp_path: Path) -> None:
    (tmp_path / "k").write_bytes(b"short")
    with pytest.raises(JournalKeyError, match="5 bytes"):
        load_or_create_key(tmp_path / "k")


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


def test_non_json_data_is_refused_before_writing(tmp_path: Path) -> None:
    j = _journal(tmp_path)
    with pytest.raises(ValueError, match="not JSON"):
        j.append("bad", {"x": object()})
    assert j.last_seq == 0


def test_archive_moves_old_rows_and_chain_still_verifies(tmp_path: Path) -> None:
    from controller.journal.store import verify_archive

    now = [1_000 * 10**9]
    j = _journal(tmp_path, wall_ns=lambda: now[0])
    for i in range(10):
        j.append("old", {"i": i})
        now[0] += 10**9
    cutoff = now[0]
    now[0] += 100 * 10**9
    for i in range(5):
        j.append("new", {"i": i})
    moved = j.archive(cutoff, tmp_path / "a.jsonl.gz")
    assert moved == 10
    rows = list(j.events())
    assert rows[0].seq == 11 and rows[-1].kind == "journal.archived"
    assert rows[-1].data["first_seq"] == 1 and rows[-1].data["last_seq"] == 10
    assert j.verify().ok
    key = (tmp_path / "device.key").read_bytes()
    assert "rows 1-10" in verify_archive(tmp_path / "a.jsonl.gz", key, rows[-1].data["sha256"])
    # Survives reopening.
    j.close()
    assert _journal(tmp_path).verify().ok


def test_archive_file_tampering_is_caught(tmp_path: Path) -> None:
    import gzip

    from controller.journal.store import verify_archive

    now = [1_000 * 10**9]
    j = _journal(tmp_path, wall_ns=lambda: now[0])
    for i in range(6):
        j.append("old", {"i": i})
        now[0] += 10**9
    j.append("new", {})
    j.archive(now[0] - 10**9 // 2, tmp_path / "a.gz")
    stamp = j.last(["journal.archived"])
    assert stamp is not None
    key = (tmp_path / "device.key").read_bytes()
    lines = gzip.decompress((tmp_path / "a.gz").read_bytes()).decode().splitlines()
    lines[3] = lines[3].replace('\\"i\\":2', '\\"i\\":7')
    (tmp_path / "b.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    with pytest.raises(JournalCorrupt, match="SHA-256"):
        verify_archive(tmp_path / "b.gz", key, stamp.data["sha256"])
    with pytest.raises(JournalCorrupt, match="row 3 does not match"):
        verify_archive(tmp_path / "b.gz", key)


def test_forged_archive_anchor_is_caught(tmp_path: Path) -> None:
    now = [1_000 * 10**9]
    j = _journal(tmp_path, wall_ns=lambda: now[0])
    for i in range(6):
        j.append("old", {"i": i})
        now[0] += 10**9
    j.append("new", {})
    j.archive(now[0] - 10**9 // 2, tmp_path / "a.gz")
    raw = sqlite3.connect(tmp_path / "j.sqlite", isolation_level=None)
    raw.execute("UPDATE meta SET value = ? WHERE key = 'archive_anchor'", ("00" * 32,))
    result = j.verify()
    assert not result.ok and "anchor" in (result.problem or "")


def test_verify_from_a_checkpoint_checks_only_the_tail_but_catches_a_rewritten_anchor(
        tmp_path: Path) -> None:
    j = _filled(tmp_path, 10)
    seq, mac = j.head()
    for i in range(5):
        j.append("later", {"i": i})
    result = j.verify_from(seq, mac)
    assert result.ok and result.rows == 5 and result.head_seq == 15
    raw = _raw(tmp_path)
    raw.execute("UPDATE events SET data = '{}' WHERE seq = 12")
    bad = j.verify_from(seq, mac)
    assert not bad.ok and bad.first_bad_seq == 12
    raw.execute("UPDATE events SET mac = ? WHERE seq = 10", ("00" * 32,))
    anchor = j.verify_from(seq, mac)
    assert not anchor.ok and "rewritten" in (anchor.problem or "")


def test_reader_is_read_only_and_sees_synced_rows(tmp_path: Path) -> None:
    from controller.journal.store import JournalError

    j = _filled(tmp_path, 3)
    reader = j.reader()
    assert reader.verify().rows == 3
    j.append("more", {})
    assert reader.verify().rows == 4
    with pytest.raises(JournalError, match="read-only"):
        reader.append("x", {})
