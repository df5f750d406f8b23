"""Reads of a damaged journal raise the journal's own error (found in review): the application
and the command line catch JournalError, never a bare sqlite3 error."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from controller.journal.recall import last_round_ids, recall
from controller.journal.store import Journal, JournalCorrupt
from controller.journal.verify import check_chain

PAGE = 4096


def _damaged_journal(tmp_path: Path) -> Journal:
    db = tmp_path / "journal.sqlite"
    journal = Journal(db)
    with journal.transaction():
        for i in range(3000):
            journal.append("test.row", {"i": i, "pad": "p" * 200}, round_id=i // 50)
    journal.close()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    low, high = len(data) // 4 // PAGE * PAGE, len(data) // 2 // PAGE * PAGE
    data[low:high] = b"\xab" * (high - low)  # pages in the middle: older rows, not the newest
    db.write_bytes(bytes(data))
    return Journal(db)


def test_recall_on_a_damaged_journal_raises_journal_corrupt(tmp_path: Path) -> None:
    journal = _damaged_journal(tmp_path)
    try:
        with pytest.raises(JournalCorrupt, match="malformed"):
            last_round_ids(journal, 60)  # reaches back into the damaged pages
        with pytest.raises(JournalCorrupt):
            recall(journal, 60)
        with pytest.raises(JournalCorrupt):
            list(journal.events())
        assert not check_chain(journal).ok
    finally:
        journal.close()


def test_round_ids_are_the_newest_rounds_oldest_first(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite")
    try:
        for round_id in (1, 2, 1, 3, None, 4):
            journal.append("test.row", {}, round_id=round_id)
        assert journal.round_ids(3) == [1, 3, 4]
        assert [r.round_id for r in recall(journal, 2)] == [3, 4]
        assert journal.round_ids(10) == [1, 2, 3, 4]
    finally:
        journal.close()
