"""Revision-1 journals (HMAC-SHA256 chain keyed with ``device.key``): set aside, still verifiable.

A revision-1 journal found at start-up is renamed (with its WAL) to ``journal-rev1-<time>.sqlite``
and a new journal begins whose first row names the old one's head (docs/journal.md
"Revision 1"). ``table-controller journal verify --rev1 FILE --key device.key`` checks the old
file with its old key; this module is that check, read-only.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from controller.journal.durable import sync_dir

KEY_BYTES = 32


@dataclass(frozen=True)
class LegacyVerdict:
    """The revision-1 walk: rows checked, the head (seq, HMAC hex), the first problem."""

    ok: bool
    rows: int
    head_seq: int
    head_mac: str
    problem: str | None = None

    def describe(self) -> str:
        if self.ok:
            return (
                f"revision-1 journal verified: {self.rows} rows, head {self.head_seq}"
                f" {self.head_mac}"
            )
        return f"revision-1 journal BROKEN: {self.problem}"


def _row_mac(
    key: bytes,
    prev: bytes,
    seq: int,
    wall: int,
    mono: int,
    boot: str,
    rnd: int | None,
    kind: str,
    text: str,
) -> str:
    body = "\x1f".join(
        [str(seq), str(wall), str(mono), boot, "" if rnd is None else str(rnd), kind, text]
    ).encode("utf-8")
    return hmac.new(key, prev + body, hashlib.sha256).hexdigest()


def is_revision1(path: str | os.PathLike[str]) -> bool:
    """True when the file holds the revision-1 ``events`` table and no revision-2 rows."""
    if not Path(path).exists():
        return False
    try:
        db = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True)
        try:
            names = {
                r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        finally:
            db.close()
    except sqlite3.DatabaseError:
        return False
    return "events" in names and "rows" not in names


def read_key(path: str | os.PathLike[str]) -> bytes:
    key = Path(path).read_bytes()
    if len(key) != KEY_BYTES:
        raise ValueError(f"revision-1 key {path} has {len(key)} bytes, expected {KEY_BYTES}")
    return key


def verify_revision1(path: str | os.PathLike[str], key: bytes) -> LegacyVerdict:
    """Walk a revision-1 journal's HMAC chain (from its archive anchor when rows were moved)."""
    try:
        db = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.DatabaseError as exc:
        return LegacyVerdict(False, 0, 0, "", f"unreadable: {exc}")
    try:
        anchor = db.execute("SELECT value FROM meta WHERE key = 'archive_anchor'").fetchone()
        first = db.execute("SELECT MIN(seq) FROM events").fetchone()[0] or 1
        prev = bytes.fromhex(anchor[0]) if anchor and first > 1 else b"\x00" * 32
        expected, rows, head_seq, head_mac = first, 0, first - 1, prev.hex()
        for seq, wall, mono, boot, rnd, kind, text, mac in db.execute(
            "SELECT seq, wall_ns, mono_ns, boot_id, round_id, kind, data, mac FROM events"
            " ORDER BY rowid"
        ):
            if seq != expected:
                return LegacyVerdict(
                    False, rows, head_seq, head_mac, f"row {expected} is missing (deleted)"
                )
            if not hmac.compare_digest(
                _row_mac(key, prev, seq, wall, mono, boot, rnd, kind, text), mac
            ):
                return LegacyVerdict(
                    False, rows, head_seq, head_mac, f"row {seq} ({kind}) does not match its HMAC"
                )
            prev, rows, head_seq, head_mac = bytes.fromhex(mac), rows + 1, seq, mac
            expected += 1
    except sqlite3.DatabaseError as exc:
        return LegacyVerdict(False, 0, 0, "", f"unreadable: {exc}")
    finally:
        db.close()
    return LegacyVerdict(True, rows, head_seq, head_mac)


def set_aside(path: str | os.PathLike[str], stamp: str) -> Path:
    """Rename the revision-1 database and its WAL/SHM files together (the WAL's committed rows
    stay with it); returns the new database path."""
    p = Path(path)
    new = p.with_name(f"{p.stem}-rev1-{stamp}{p.suffix}")
    for suffix in ("-wal", "-shm"):
        side = Path(str(p) + suffix)
        if side.exists():
            os.replace(side, Path(str(new) + suffix))
    os.replace(p, new)
    sync_dir(p.parent)
    return new
