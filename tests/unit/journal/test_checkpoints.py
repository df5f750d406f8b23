"""The journal's worker checkpoints soon after a start and whenever the WAL passes its bound, so
a process that restarts again and again (a crash loop, frequent power cuts) never leaves a WAL
that grows without end (docs/reliability.md: 641 MB after 100 kills of the crash trials)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from controller.journal import scrub
from controller.journal.scrub import Maintenance
from controller.journal.store import Journal

WAIT_S = 20.0


def _wal_frames_left(db: Path) -> int:
    """Frames of the WAL not yet in the database file (a checkpoint of nothing copies none)."""
    con = sqlite3.connect(db)
    try:
        row = con.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return int(row[1]) - int(row[2])
    finally:
        con.close()


def _filled(tmp_path: Path, rows: int) -> tuple[Journal, Path]:
    db = tmp_path / "journal.sqlite"
    journal = Journal(db, autocheckpoint=False)
    for i in range(rows):
        journal.append("test.row", {"i": i, "pad": "x" * 200})
    return journal, db


def _maintenance(db: Path) -> Maintenance:
    return Maintenance(
        str(db),
        b"",
        tmp_anchor(db),
        post=lambda fn: fn(),
        on_scrubbed=lambda result: None,
        scrub_every_s=10**9,
        first_scrub_s=10**9,
    )


def tmp_anchor(db: Path) -> Path:
    return db.with_name("journal.anchor")


def test_the_first_checkpoint_comes_soon_after_a_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal, db = _filled(tmp_path, 500)
    size_before = db.stat().st_size
    monkeypatch.setattr(scrub, "FIRST_CHECKPOINT_S", 0.2)
    worker = _maintenance(db)
    worker.start()
    try:
        deadline = time.monotonic() + WAIT_S
        while db.stat().st_size <= size_before:  # the rows reach the database file
            assert time.monotonic() < deadline, "no checkpoint after the start"
            time.sleep(0.05)
    finally:
        worker.stop(WAIT_S)
    assert _wal_frames_left(db) == 0
    journal.close()


def test_a_wal_past_its_bound_is_checkpointed_before_the_period(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal, db = _filled(tmp_path, 10)
    monkeypatch.setattr(scrub, "FIRST_CHECKPOINT_S", 10**6)  # no timed checkpoint in this test
    monkeypatch.setattr(scrub, "WAL_CHECK_S", 0.1)
    monkeypatch.setattr(scrub, "WAL_CHECKPOINT_BYTES", 256 * 1024)
    done: list[tuple[int, int]] = []
    original = Journal.checkpoint

    def counted(self: Journal) -> tuple[int, int]:
        result = original(self)
        done.append(result)
        return result

    monkeypatch.setattr(Journal, "checkpoint", counted)
    worker = _maintenance(db)
    worker.start()
    try:
        time.sleep(0.5)
        assert done == []  # under the bound: left alone
        while Path(f"{db}-wal").stat().st_size <= 256 * 1024:  # past the bound
            journal.append("test.row", {"pad": "y" * 400})
        deadline = time.monotonic() + WAIT_S
        while not done:
            assert time.monotonic() < deadline, "the WAL past its bound was not checkpointed"
            time.sleep(0.05)
    finally:
        worker.stop(WAIT_S)
    frames, copied = done[0]
    assert frames > 0 and copied == frames  # every frame reached the file
    assert _wal_frames_left(db) == 0
    journal.close()
