"""The table's append-only, tamper-evident journal (DESIGN.md "Durability and trust").

SQLite in WAL mode with ``synchronous=FULL``: :meth:`Journal.append` returns only after the row is
on stable storage, so the controller may act on an event (show a number, acknowledge a card) only
after journaling it. Each row carries an HMAC-SHA256 over its own content and the previous row's
HMAC, keyed with a device key kept outside the database, so an edited, deleted, reordered or
truncated row is detected by :meth:`Journal.verify`. Rows are ordered by their sequence number,
never by the wall clock (a Raspberry Pi has no real-time clock).
"""

from __future__ import annotations

import gzip
import hashlib
import hmac
import json
import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GENESIS = b"\x00" * 32
KEY_BYTES = 32
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    seq      INTEGER PRIMARY KEY,
    wall_ns  INTEGER NOT NULL,
    mono_ns  INTEGER NOT NULL,
    boot_id  TEXT NOT NULL,
    round_id INTEGER,
    kind     TEXT NOT NULL,
    data     TEXT NOT NULL,
    mac      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_kind ON events(kind, seq);
CREATE INDEX IF NOT EXISTS events_round ON events(round_id, seq);
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
    WHEN (SELECT value FROM meta WHERE key = 'archiving') IS NOT '1'
    BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;
"""


class JournalError(Exception):
    """Base error of the journal."""


class JournalIOError(JournalError, OSError):
    """The journal could not be read or written (disk full, I/O error, permissions)."""


class JournalCorrupt(JournalError):
    """The journal file is not a readable journal, or its chain does not verify."""


class JournalKeyError(JournalError, PermissionError):
    """The device key is missing, unreadable or malformed."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One journal row."""

    seq: int
    wall_ns: int
    mono_ns: int
    boot_id: str
    round_id: int | None
    kind: str
    data: dict[str, Any]
    mac: str


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """Outcome of walking the chain: ``ok``, rows checked, and the first break if any."""

    ok: bool
    rows: int
    head_seq: int
    head_mac: str
    first_bad_seq: int | None = None
    problem: str | None = None

    def describe(self) -> str:
        if self.ok:
            return f"journal verified: {self.rows} rows, head {self.head_seq} {self.head_mac}"
        return f"journal BROKEN at seq {self.first_bad_seq}: {self.problem}"


def canonical_json(data: Mapping[str, Any]) -> str:
    """The exact text the HMAC covers: sorted keys, no spaces, ASCII only."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def row_mac(
    key: bytes,
    prev_mac: bytes,
    seq: int,
    wall_ns: int,
    mono_ns: int,
    boot_id: str,
    round_id: int | None,
    kind: str,
    data_text: str,
) -> str:
    """HMAC-SHA256 of a row chained to the previous row's HMAC (hex)."""
    body = "\x1f".join(
        [str(seq), str(wall_ns), str(mono_ns), boot_id,
         "" if round_id is None else str(round_id), kind, data_text]
    ).encode("utf-8")
    return hmac.new(key, prev_mac + body, hashlib.sha256).hexdigest()


def read_boot_id() -> str:
    """The kernel's boot ID, so rows from different boots are told apart."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown-" + uuid.uuid4().hex


def load_or_create_key(path: str | os.PathLike[str]) -> bytes:
    """Read the device key, creating it (mode 0600, never overwritten) on first start."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read_key(p)
    except OSError as exc:
        raise JournalKeyError(f"cannot create device key {p}: {exc}") from exc
    key = os.urandom(KEY_BYTES)
    try:
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    return key


def _read_key(p: Path) -> bytes:
    try:
        key = p.read_bytes()
    except OSError as exc:
        raise JournalKeyError(f"device key {p} is unreadable: {exc}") from exc
    if len(key) != KEY_BYTES:
        raise JournalKeyError(f"device key {p} has {len(key)} bytes, expected {KEY_BYTES}")
    return key


class Journal:
    """Append-only HMAC-chained event journal. Owned by the controller loop's thread."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        key: bytes,
        *,
        boot_id: str | None = None,
        wall_ns: Callable[[], int] = time.time_ns,
        mono_ns: Callable[[], int] = time.monotonic_ns,
        readonly: bool = False,
    ) -> None:
        self.path = str(path)
        self._key = key
        self._boot_id = boot_id or read_boot_id()
        self._wall_ns = wall_ns
        self._mono_ns = mono_ns
        self._readonly = readonly
        self._listeners: list[Callable[[Entry], None]] = []
        try:
            if readonly:
                uri = Path(self.path).resolve().as_uri() + "?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, isolation_level=None,
                                           check_same_thread=False)
            else:
                self._db = sqlite3.connect(self.path, isolation_level=None,
                                           check_same_thread=False)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=FULL")
                self._db.executescript(_SCHEMA)
            row = self._db.execute(
                "SELECT seq, mac, wall_ns FROM events ORDER BY seq DESC LIMIT 1"
            ).fetchone()
        except sqlite3.DatabaseError as exc:
            raise JournalCorrupt(f"{self.path} is not a readable journal: {exc}") from exc
        self._last_seq: int = row[0] if row else 0
        self._last_mac: bytes = bytes.fromhex(row[1]) if row else GENESIS
        self._last_wall_ns: int = row[2] if row else 0

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], key_path: str | os.PathLike[str], **kwargs: Any
    ) -> Journal:
        """Open (creating if needed) the journal at ``path`` keyed with the key at ``key_path``."""
        return cls(path, load_or_create_key(key_path), **kwargs)

    # -- writing -------------------------------------------------------------------------------

    def add_listener(self, listener: Callable[[Entry], None]) -> None:
        """Call ``listener`` with every row after it is synced (recall index, console alarms)."""
        self._listeners.append(listener)

    @property
    def last_seq(self) -> int:
        return self._last_seq

    @property
    def boot_id(self) -> str:
        return self._boot_id

    def append(self, kind: str, data: Mapping[str, Any] | None = None,
               round_id: int | None = None) -> int:
        """Append one event and sync it to disk; return its sequence number."""
        return self._append(kind, dict(data or {}), round_id, self._wall_ns()).seq

    def append_entry(self, kind: str, data: Mapping[str, Any] | None = None,
                     round_id: int | None = None) -> Entry:
        """As :meth:`append`, returning the whole row."""
        return self._append(kind, dict(data or {}), round_id, self._wall_ns())

    def _append(self, kind: str, data: dict[str, Any], round_id: int | None,
                wall: int) -> Entry:
        if self._readonly:
            raise JournalError(f"{self.path} was opened read-only")
        if not kind:
            raise ValueError("journal event kind must not be empty")
        try:
            text = canonical_json(data)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"journal event {kind!r} data is not JSON: {exc}") from exc
        seq = self._last_seq + 1
        mono = self._mono_ns()
        mac = row_mac(self._key, self._last_mac, seq, wall, mono, self._boot_id, round_id,
                      kind, text)
        try:
            self._db.execute(
                "INSERT INTO events (seq, wall_ns, mono_ns, boot_id, round_id, kind, data, mac)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (seq, wall, mono, self._boot_id, round_id, kind, text, mac),
            )
        except sqlite3.OperationalError as exc:
            raise JournalIOError(f"journal write failed ({self.path}): {exc}") from exc
        except sqlite3.DatabaseError as exc:
            raise JournalCorrupt(f"journal write failed ({self.path}): {exc}") from exc
        self._last_seq = seq
        self._last_mac = bytes.fromhex(mac)
        self._last_wall_ns = max(self._last_wall_ns, wall)
        entry = Entry(seq, wall, mono, self._boot_id, round_id, kind, data, mac)
        for listener in self._listeners:
            listener(entry)
        return entry

    def check_clock(self, floor_ns: int) -> list[str]:
        """Warnings (also journaled) for a wall clock before ``floor_ns`` or behind the journal."""
        now = self._wall_ns()
        warnings: list[str] = []
        if now < floor_ns:
            warnings.append("wall clock is unset (before the configured floor date)")
        if now < self._last_wall_ns:
            warnings.append(
                f"wall clock is {(self._last_wall_ns - now) / 1e9:.3f} s behind the journal's"
                " last row: it jumped backwards"
            )
        for text in warnings:
            self._append("clock.warning", {"warning": text, "wall_ns": now}, None, now)
        return warnings

    # -- reading -------------------------------------------------------------------------------

    def events(self, kinds: Iterable[str] | None = None, since_seq: int = 0,
               round_id: int | None = None) -> Iterator[Entry]:
        """Rows in sequence order, optionally only some kinds, after ``since_seq``, one round."""
        sql = ("SELECT seq, wall_ns, mono_ns, boot_id, round_id, kind, data, mac FROM events"
               " WHERE seq > ?")
        args: list[Any] = [since_seq]
        if kinds is not None:
            kind_list = list(kinds)
            sql += f" AND kind IN ({','.join('?' * len(kind_list))})"
            args.extend(kind_list)
        if round_id is not None:
            sql += " AND round_id = ?"
            args.append(round_id)
        sql += " ORDER BY seq"
        try:
            cursor = self._db.execute(sql, args)
            for row in cursor:
                yield _entry(row)
        except sqlite3.DatabaseError as exc:
            raise JournalCorrupt(f"journal read failed ({self.path}): {exc}") from exc

    def last(self, kinds: Iterable[str]) -> Entry | None:
        """The newest row of any of ``kinds``."""
        kind_list = list(kinds)
        rows = self._read(
            "SELECT seq, wall_ns, mono_ns, boot_id, round_id, kind, data, mac FROM events"
            f" WHERE kind IN ({','.join('?' * len(kind_list))}) ORDER BY seq DESC LIMIT 1",
            kind_list)
        return _entry(rows[0]) if rows else None

    def round_ids(self, count: int) -> list[int]:
        """The ids of the newest ``count`` rounds (by their newest row), oldest first."""
        rows = self._read(
            "SELECT round_id FROM events WHERE round_id IS NOT NULL"
            " GROUP BY round_id ORDER BY MAX(seq) DESC LIMIT ?", (count,))
        return sorted(int(r[0]) for r in rows)

    def _read(self, sql: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row of one query; a damaged database is :class:`JournalCorrupt`, never a bare
        ``sqlite3`` error (callers catch the journal's own errors)."""
        try:
            return self._db.execute(sql, tuple(args)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise JournalCorrupt(f"journal read failed ({self.path}): {exc}") from exc

    def head(self) -> tuple[int, str]:
        """The chain head (sequence number, HMAC hex) an auditor can carry off the device."""
        return self._last_seq, self._last_mac.hex() if self._last_seq else GENESIS.hex()

    def verify(self, expected_head: tuple[int, str] | None = None) -> VerifyResult:
        """Walk the whole chain; name the first row that breaks it.

        With ``expected_head`` (a head printed earlier), also prove that the row it names is still
        there with the same HMAC: a journal truncated or rewritten after it fails.
        """
        prev = GENESIS
        head_mac = GENESIS.hex()
        try:
            expected_seq = self._first_seq()
            anchor = self._archive_anchor() if expected_seq > 1 else None
            stamps = self._read("SELECT data FROM events WHERE kind = 'journal.archived'"
                                " ORDER BY seq DESC LIMIT 1") if expected_seq > 1 else []
        except JournalCorrupt as exc:
            return VerifyResult(False, 0, 0, head_mac, 1, str(exc))
        if expected_seq > 1:
            if anchor is None:
                return VerifyResult(False, 0, 0, head_mac, 1,
                                    f"rows 1..{expected_seq - 1} are missing (deleted)")
            stamp = stamps[0] if stamps else None
            if stamp is None or json.loads(stamp[0]).get("last_mac") != anchor or \
                    json.loads(stamp[0]).get("last_seq") != expected_seq - 1:
                return VerifyResult(False, 0, 0, head_mac, expected_seq,
                                    "archive anchor does not match the journaled archive record")
            prev = bytes.fromhex(anchor)
        result = self._walk(expected_seq - 1, prev)
        if not result.ok:
            return result
        rows, head_seq, head_mac = result.rows, result.head_seq, result.head_mac
        if expected_head is not None:
            want_seq, want_mac = expected_head
            if want_seq > head_seq:
                return VerifyResult(False, rows, head_seq, head_mac, head_seq + 1,
                                    f"journal ends at row {head_seq} but an earlier head named"
                                    f" row {want_seq} (truncated)")
            try:
                found = self._read("SELECT mac FROM events WHERE seq = ?", (want_seq,))
            except JournalCorrupt as exc:
                return VerifyResult(False, rows, head_seq, head_mac, want_seq, str(exc))
            got = found[0] if found else None
            if got is None or not hmac.compare_digest(got[0], want_mac):
                return VerifyResult(False, rows, head_seq, head_mac, want_seq,
                                    f"row {want_seq} differs from the head printed earlier"
                                    " (rewritten)")
        return VerifyResult(True, rows, head_seq, head_mac)

    def archive(self, older_than_ns: int, out_path: str | os.PathLike[str]) -> int:
        """Move rows older than ``older_than_ns`` (wall clock) to a gzip JSON-lines file.

        Only a prefix of the chain moves, and never the newest row. The file's SHA-256, the
        range and the last archived HMAC are journaled (``journal.archived``), and that HMAC
        becomes the anchor from which :meth:`verify` continues, so the chain stays verifiable;
        :func:`verify_archive` checks the file itself. Returns the number of rows archived.
        """
        first = self._first_seq()
        row = self._db.execute(
            "SELECT MAX(seq) FROM events WHERE seq < ? AND seq >= ? AND wall_ns < ?"
            " AND seq < (SELECT MIN(seq) FROM events WHERE wall_ns >= ?)",
            (self._last_seq, first, older_than_ns, older_than_ns)).fetchone()
        last = int(row[0]) if row and row[0] is not None else 0
        if last < first:
            return 0
        prev_anchor = self._archive_anchor() or GENESIS.hex()
        digest = hashlib.sha256()
        out = Path(out_path)
        with gzip.open(out, "wt", encoding="ascii") as fh:
            header = canonical_json({"archive_of": self.path, "first_seq": first,
                                     "last_seq": last, "prev_mac": prev_anchor})
            fh.write(header + "\n")
            for e in self.events(since_seq=first - 1):
                if e.seq > last:
                    break
                fh.write(canonical_json({
                    "seq": e.seq, "wall_ns": e.wall_ns, "mono_ns": e.mono_ns,
                    "boot_id": e.boot_id, "round_id": e.round_id, "kind": e.kind,
                    "data": canonical_json(e.data), "mac": e.mac}) + "\n")
        with open(out, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 16), b""):
                digest.update(chunk)
        os.sync()
        last_mac = self._db.execute("SELECT mac FROM events WHERE seq = ?", (last,)).fetchone()[0]
        self.append("journal.archived", {"file": out.name, "sha256": digest.hexdigest(),
                                         "first_seq": first, "last_seq": last,
                                         "last_mac": last_mac, "prev_mac": prev_anchor})
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('archiving', '1')")
            self._db.execute("DELETE FROM events WHERE seq <= ?", (last,))
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('archive_anchor', ?)",
                             (last_mac,))
            self._db.execute("DELETE FROM meta WHERE key = 'archiving'")
            self._db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            self._db.execute("ROLLBACK")
            raise JournalIOError(f"archiving failed ({self.path}): {exc}") from exc
        return last - first + 1

    def reader(self) -> Journal:
        """A second, read-only connection (for verifying on another thread while appending)."""
        return Journal(self.path, self._key, boot_id=self._boot_id, readonly=True)

    def verify_from(self, seq: int, mac: str) -> VerifyResult:
        """Verify only the rows after ``seq``, trusting the chain up to the row ``seq``, whose
        HMAC must still be ``mac``. Used at start-up from the last full verification's head."""
        if seq == 0:  # the head of an empty journal: the chain starts from the genesis value
            if not hmac.compare_digest(mac, GENESIS.hex()) or self._first_seq() != 1:
                return VerifyResult(False, 0, 0, GENESIS.hex(), 1,
                                    "the journal's start differs from the verified empty head")
            return self._walk(0, GENESIS)
        try:
            found = self._read("SELECT mac FROM events WHERE seq = ?", (seq,))
        except JournalCorrupt as exc:
            return VerifyResult(False, 0, 0, GENESIS.hex(), seq, str(exc))
        got = found[0] if found else None
        if got is None or not hmac.compare_digest(got[0], mac):
            return VerifyResult(False, 0, 0, GENESIS.hex(), seq,
                                f"row {seq} differs from the last verified head (rewritten)")
        return self._walk(seq, bytes.fromhex(mac))

    def _walk(self, after_seq: int, prev: bytes) -> VerifyResult:
        """Check every row after ``after_seq`` chains from ``prev``; name the first break."""
        expected_seq = after_seq + 1
        rows = 0
        head_seq, head_mac = after_seq, prev.hex()
        try:
            cursor = self._db.execute(
                "SELECT seq, wall_ns, mono_ns, boot_id, round_id, kind, data, mac FROM events"
                " WHERE seq > ? ORDER BY rowid", (after_seq,))
            for row in cursor:
                seq, wall, mono, boot, rnd, kind, text, mac = row
                if seq != expected_seq:
                    problem = (f"row {expected_seq} is missing (deleted)" if seq > expected_seq
                               else f"row {seq} is out of order (reordered)")
                    return VerifyResult(False, rows, head_seq, head_mac, expected_seq, problem)
                good = row_mac(self._key, prev, seq, wall, mono, boot, rnd, kind, text)
                if not hmac.compare_digest(good, mac):
                    return VerifyResult(False, rows, head_seq, head_mac, seq,
                                        f"row {seq} ({kind}) does not match its HMAC (edited)")
                prev = bytes.fromhex(mac)
                rows += 1
                head_seq, head_mac = seq, mac
                expected_seq += 1
        except sqlite3.DatabaseError as exc:
            return VerifyResult(False, rows, head_seq, head_mac, expected_seq,
                                f"database unreadable after row {head_seq}: {exc}")
        return VerifyResult(True, rows, head_seq, head_mac)

    def _first_seq(self) -> int:
        rows = self._read("SELECT MIN(seq) FROM events")
        return int(rows[0][0]) if rows and rows[0][0] is not None else 1

    def _archive_anchor(self) -> str | None:
        rows = self._read("SELECT value FROM meta WHERE key = 'archive_anchor'")
        return str(rows[0][0]) if rows else None

    def close(self) -> None:
        """Close the database (every row is already synced)."""
        self._db.close()


def _entry(row: tuple[Any, ...]) -> Entry:
    seq, wall, mono, boot, rnd, kind, text, mac = row
    return Entry(seq, wall, mono, boot, rnd, kind, json.loads(text), mac)


def verify_archive(path: str | os.PathLike[str], key: bytes, sha256: str | None = None) -> str:
    """Check an archive file's hash (when given) and its rows' chain; return a description.

    Raises :class:`JournalCorrupt` naming the first bad row.
    """
    data = Path(path).read_bytes()
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise JournalCorrupt(f"archive {path}: SHA-256 differs from the journaled one")
    lines = gzip.decompress(data).decode("ascii").splitlines()
    header = json.loads(lines[0])
    prev = bytes.fromhex(header["prev_mac"])
    expected = header["first_seq"]
    for line in lines[1:]:
        r = json.loads(line)
        if r["seq"] != expected:
            raise JournalCorrupt(f"archive {path}: row {expected} is missing")
        mac = row_mac(key, prev, r["seq"], r["wall_ns"], r["mono_ns"], r["boot_id"],
                      r["round_id"], r["kind"], r["data"])
        if not hmac.compare_digest(mac, r["mac"]):
            raise JournalCorrupt(f"archive {path}: row {r['seq']} does not match its HMAC")
        prev = bytes.fromhex(mac)
        expected += 1
    if expected - 1 != header["last_seq"]:
        raise JournalCorrupt(f"archive {path}: ends at row {expected - 1}, header says "
                             f"{header['last_seq']}")
    return f"archive verified: rows {header['first_seq']}-{header['last_seq']}"
