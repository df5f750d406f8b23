"""Reads of a damaged journal raise the journal's own error (found in review): the application
and the command line catch JournalError, never a bare sqlite3 error."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from controller.journal.recall import last_round_ids, recall
from controller.journal.store import Journal, JournalCorrupt

PAGE = 4096


def _damaged_journal(tmp_path: Path) -> Journal:
    db, key = tmp_path / "journal.sqlite", tmp_path / "device.key"
    journal = Journal.open(db, key)
    for i in range(3000):
        journal.append("test.row", {"i": i, "pad": "p" * 200}, round_id=i // 50)
    journal.close()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    data[20 * PAGE:120 * PAGE] = b"\xab" * (100 * PAGE)   # pages in the middle, not the header
    db.write_bytes(bytes(data))
    return Journal.open(db, key)


def test_recall_on_a_damaged_journal_raises_journal_corrupt(tmp_path: Path) -> None:
    journal = _damaged_journal(tmp_path)
    try:
        with pytest.raises(JournalCorrupt, match="malformed"):
            last_round_ids(journal, 5)
        with pytest.raises(JournalCorrupt):
            recall(journal, 5)
        assert not journal.verify().ok
    finally:
        journal.close()


def test_round_ids_are_the_newest_rounds_oldest_first(tmp_path: Path) -> None:
    journal = Journal.open(tmp_path / "journal.sqlite", tmp_path / "device.key")
    try:
        for round_id in (1, 2, 1, 3, None, 4):
            journal.append("test.row", {}, round_id=round_id)
        assert journal.round_ids(3) == [1, 3, 4]
        assert [r.round_id for r in recall(journal, 2)] == [3, 4]
    finally:
        journal.close()
