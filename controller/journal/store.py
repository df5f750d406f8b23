"""The table's append-only, hash-chained journal: storage (docs/journal.md).

SQLite in WAL mode with ``synchronous=FULL``: a commit returns only after the WAL is on stable
storage, so the controller acts on an event (shows a number, acknowledges a card) only after it
is journaled. An input and everything it causes are ONE transaction (:meth:`Journal.transaction`,
one commit, one sync); outputs registered with :meth:`Journal.after_commit` run only after that
commit succeeded, never when it failed. An :meth:`Journal.append` outside a transaction is its
own transaction (one sync), as before.

Each row carries ``hash = SHA-256(prev hash || canonical row)`` (controller/journal/chain.py), so
the chain needs no secret; signed heads (controller/journal/heads.py) bind it to the table's key,
and the anchor file (controller/journal/anchor.py) holds the newest of them outside the database.
Rows are ordered by their sequence number, never by the wall clock (a Pi has no real-time clock).

Storage is kept small: kinds and boot ids are stored once and referenced, the hash as 32 bytes
(``prev`` is the previous row's hash, read back, not stored twice), 2 KiB pages (a commit writes
a few KiB, not tens). The connection owned by the loop never checkpoints on its own when the
application runs the checkpoints on a worker (``autocheckpoint=False``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, NamedTuple, TypeAlias

from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

from controller.fields.readers import FieldError, as_int, as_str
from controller.journal.chain import GENESIS, Row, canonical, row_hash
from controller.journal.heads import SignedHead

FORMAT: Final = "2"
PAGE_SIZE: Final = 2048
#: A wall clock that moves this far against the monotonic clock between two ticks has jumped.
CLOCK_JUMP_NS: Final = 2_000_000_000
#: The newest kinds' rows, looked up by index; the columns a Row is built from.
_COLUMNS: Final = "r.seq, r.ts, r.boot, r.mono, r.kind, r.round, r.data, r.hash, p.hash"
_FROM: Final = "FROM rows r LEFT JOIN rows p ON p.seq = r.seq - 1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS kinds (id INTEGER PRIMARY KEY, kind TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS boots (id INTEGER PRIMARY KEY, boot TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS rows (
    seq   INTEGER PRIMARY KEY,
    ts    INTEGER NOT NULL,
    boot  INTEGER NOT NULL,
    mono  INTEGER NOT NULL,
    kind  INTEGER NOT NULL,
    round INTEGER,
    data  TEXT NOT NULL,
    hash  BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS rows_kind ON rows(kind);
CREATE INDEX IF NOT EXISTS rows_round ON rows(round) WHERE round IS NOT NULL;
CREATE TABLE IF NOT EXISTS heads (
    seq    INTEGER PRIMARY KEY,
    hash   BLOB NOT NULL,
    ts     INTEGER NOT NULL,
    sig    BLOB NOT NULL,   -- r || s, 64 bytes (DER when read back)
    key_id BLOB NOT NULL,   -- 8 bytes (16 hex digits when read back)
    counter INTEGER         -- the TPM counter's value signed into the head, or NULL
);
CREATE TRIGGER IF NOT EXISTS rows_no_update BEFORE UPDATE ON rows
    BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS rows_no_delete BEFORE DELETE ON rows
    WHEN (SELECT value FROM meta WHERE key = 'archiving') IS NOT '1'
    BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS heads_no_update BEFORE UPDATE ON heads
    BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS heads_no_delete BEFORE DELETE ON heads
    WHEN (SELECT value FROM meta WHERE key = 'archiving') IS NOT '1'
    BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS kinds_no_update BEFORE UPDATE ON kinds
    BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS boots_no_update BEFORE UPDATE ON boots
    BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;
"""


#: A value SQLite stores and gives back (a parameter of a statement, a column of a result).
SQLValue: TypeAlias = str | bytes | int | float | None
#: One result row as SQLite gives it: narrowed where it is read.
SQLRow: TypeAlias = tuple[object, ...]


class JournalError(Exception):
    """Base error of the journal."""


class JournalIOError(JournalError, OSError):
    """The journal could not be read or written (disk full, I/O error, permissions)."""


class JournalCorrupt(JournalError):
    """The journal file is not a readable journal, or its chain does not verify."""


class JournalRevision1(JournalError):
    """The file is a revision-1 (HMAC-chained) journal: the application sets it aside."""


def _raw_sig(der_hex: str) -> bytes:
    """A DER ECDSA signature (hex) as the 64 bytes r || s the heads table keeps."""
    r, s = decode_dss_signature(bytes.fromhex(der_hex))
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def _der_sig(raw: bytes) -> str:
    """The DER (hex) of a stored r || s."""
    if len(raw) != 64:
        return raw.hex()  # not a stored signature: shown as it is, and it will not verify
    return encode_dss_signature(
        int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")
    ).hex()


def _blob(value: object, what: str) -> bytes:
    """A BLOB column (a hash, a signature, a key id) as bytes; anything else is a damaged
    database."""
    if not isinstance(value, bytes):
        raise JournalCorrupt(f"{what} is not a blob but {type(value).__name__}")
    return value


def _opt_int(value: object, what: str) -> int | None:
    """A nullable INTEGER column."""
    return None if value is None else as_int(value, what)


class RawRow(NamedTuple):
    """A row as stored, for the verifiers (:meth:`Journal.raw_rows`): the columns the hash
    covers are left as SQLite gives them, so an edited type is found by the hash, not here."""

    seq: int
    ts: object
    boot: str
    mono: object
    kind: str
    round: object
    text: object
    hash: bytes


def read_boot_id() -> str:
    """The kernel's boot ID, so rows from different boots are told apart."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown-" + uuid.uuid4().hex


@dataclass
class _Txn:
    """One open transaction: where the chain stood, what to run after it."""

    start_seq: int
    start_hash: str
    began: bool = False
    failed: JournalError | None = None
    rows: list[Row] = field(default_factory=list)
    new_kinds: list[str] = field(default_factory=list)
    new_boot: bool = False
    heads_wanted: list[str] = field(default_factory=list)
    after: list[Callable[[], object]] = field(default_factory=list)
    undo: list[Callable[[], object]] = field(default_factory=list)


HeadHook = Callable[[int, str, str], None]


class Journal:
    """Append-only, SHA-256-chained event journal. The writer is owned by the loop's thread;
    :meth:`reader` gives read-only connections for other threads."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        boot_id: str | None = None,
        wall_ns: Callable[[], int] = time.time_ns,
        mono_ns: Callable[[], int] = time.monotonic_ns,
        readonly: bool = False,
        immutable: bool = False,
        autocheckpoint: bool = True,
        cache_kib: int | None = None,
    ) -> None:
        self.path = str(path)
        self._boot_id = boot_id or read_boot_id()
        self._wall_ns = wall_ns
        self._mono_ns = mono_ns
        self._readonly = readonly
        self._listeners: list[Callable[[Row], None]] = []
        self._commit_listeners: list[Callable[[], None]] = []
        self._head_hook: HeadHook | None = None
        self._txn: _Txn | None = None
        self._txn_count = 0
        self._kind_ids: dict[str, int] = {}
        self._kind_names: dict[int, str] = {}
        self._boot_ref: int | None = None
        self._boot_names: dict[int, str] = {}
        self._counter_column: bool | None = None
        try:
            if readonly:
                # immutable: a stopped table's file, read with no lock and no -wal or -shm
                # file created beside it (read-only alone creates both on a WAL database)
                uri = Path(self.path).resolve().as_uri() + "?mode=ro"
                uri += "&immutable=1" if immutable else ""
                self._db = sqlite3.connect(
                    uri, uri=True, isolation_level=None, check_same_thread=False
                )
            else:
                self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
                self._create()
                self._db.execute("PRAGMA synchronous=FULL")
                self._db.execute("PRAGMA journal_size_limit=4194304")
                if not autocheckpoint:
                    self._db.execute("PRAGMA wal_autocheckpoint=0")
            self._db.execute("PRAGMA busy_timeout=2000")
            if cache_kib is not None or readonly:
                # a helper connection (a reader, the worker's) reads forward once: a small
                # page cache keeps the table's memory small
                self._db.execute(f"PRAGMA cache_size=-{cache_kib or 256}")
            tables = {
                r[0]
                for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if "events" in tables and "rows" not in tables:
                raise JournalRevision1(f"{self.path} is a revision-1 journal")
            self._load_names()
            last: SQLRow | None = self._db.execute(
                "SELECT seq, hash, ts FROM rows ORDER BY seq DESC LIMIT 1"
            ).fetchone()
            self._genesis = self.meta("genesis") or GENESIS
        except JournalRevision1:
            self._db.close()
            raise
        except sqlite3.DatabaseError as exc:
            try:
                self._db.close()
            except (NameError, AttributeError, sqlite3.Error):
                pass
            raise JournalCorrupt(f"{self.path} is not a readable journal: {exc}") from exc
        self._last_seq: int = as_int(last[0], "seq") if last else 0
        self._last_hash: str = _blob(last[1], "hash").hex() if last else self.base()[1]
        self._last_wall_ns: int = as_int(last[2], "ts") if last else 0
        self._clock_offset_ns: int | None = None

    def _create(self) -> None:
        """A new file gets 2 KiB pages (set before the first table), WAL and the schema."""
        tables = {
            r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if "events" in tables and "rows" not in tables:
            return  # revision 1: reported by the caller, never altered
        if not tables:
            self._db.execute(f"PRAGMA page_size={PAGE_SIZE}")
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        self._db.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (FORMAT,))
        if "counter" not in self._head_columns():
            # a journal from before the TPM counter: its heads keep NULL (signed without one)
            self._db.execute("ALTER TABLE heads ADD COLUMN counter INTEGER")

    def _head_columns(self) -> set[str]:
        return {str(r[1]) for r in self._db.execute("PRAGMA table_info(heads)")}

    # -- names stored once -----------------------------------------------------------------------

    def _load_names(self) -> None:
        self._kind_names = {
            int(i): str(k) for i, k in self._db.execute("SELECT id, kind FROM kinds")
        }
        self._kind_ids = {k: i for i, k in self._kind_names.items()}
        self._boot_names = {
            int(i): str(b) for i, b in self._db.execute("SELECT id, boot FROM boots")
        }
        self._boot_ref = next((i for i, b in self._boot_names.items() if b == self._boot_id), None)

    def _kind_name(self, ref: int) -> str:
        if ref not in self._kind_names:
            self._load_names()  # another connection wrote a new kind since we loaded them
        return self._kind_names.get(ref, f"?kind{ref}")

    def _boot_name(self, ref: int) -> str:
        if ref not in self._boot_names:
            self._load_names()
        return self._boot_names.get(ref, f"?boot{ref}")

    # -- metadata --------------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        rows = self._read("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        """Set a metadata value (table id, key id, genesis) in the current transaction."""
        with self.transaction():
            self._write("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def base(self) -> tuple[int, str]:
        """Where the live rows start: (seq before the first live row, its hash). (0, genesis)
        until rows were archived."""
        text = self.meta("base")
        if text is None:
            return 0, self.meta("genesis") or GENESIS
        seq, _, hash_hex = text.partition(":")
        if not (seq.isascii() and seq.isdigit() and len(seq) <= 18 and len(hash_hex) == 64):
            raise JournalCorrupt(f"the journal's base {text[:80]!r} is not SEQ:HASH ({self.path})")
        return int(seq), hash_hex

    @property
    def genesis(self) -> str:
        return self._genesis

    def begin_after(self, prev_hex: str) -> None:
        """An empty journal that follows another (a revision-1 journal): its first row chains
        from ``prev_hex``, the head of the one before, which that row must name."""
        if self._last_seq or self.first_seq() != 1:
            raise JournalError("only an empty journal can follow another")
        bytes.fromhex(prev_hex)
        self.set_meta("genesis", prev_hex)
        self._genesis = self._last_hash = prev_hex

    # -- writing ---------------------------------------------------------------------------------

    def add_listener(self, listener: Callable[[Row], None]) -> None:
        """Call ``listener`` with every row after its transaction committed (synced)."""
        self._listeners.append(listener)

    def add_commit_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` once after every commit that wrote anything (rows, signed heads,
        metadata), after the transaction's outputs (``after_commit``): the feed's publisher is
        woken so. It must not block."""
        self._commit_listeners.append(listener)

    def set_head_hook(self, hook: HeadHook | None) -> None:
        """Who is told (seq, hash, reason) after a commit that wants a signed head."""
        self._head_hook = hook

    @property
    def last_seq(self) -> int:
        return self._last_seq

    @property
    def last_hash(self) -> str:
        return self._last_hash

    @property
    def boot_id(self) -> str:
        return self._boot_id

    @property
    def in_transaction(self) -> bool:
        return self._txn is not None

    @property
    def transaction_number(self) -> int:
        """Counts transactions opened on this connection (a table registers its undo once)."""
        return self._txn_count

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Everything journaled inside is one commit and one sync; a nested call joins the
        outer one. A commit that fails rolls the rows back, runs the ``on_rollback`` callbacks
        and raises :class:`JournalIOError`; the ``after_commit`` callbacks then never run."""
        if self._txn is not None:
            yield
            return
        txn = _Txn(self._last_seq, self._last_hash)
        self._txn = txn
        self._txn_count += 1
        try:
            yield
        except BaseException:
            self._txn = None
            self._rollback(txn)
            raise
        self._txn = None
        if txn.failed is not None:
            self._rollback(txn)
            raise txn.failed
        self._commit(txn)

    def after_commit(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` once the current transaction is committed (now, outside one)."""
        if self._txn is None:
            fn()
        else:
            self._txn.after.append(fn)

    def on_rollback(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` if the current transaction fails (never outside one)."""
        if self._txn is not None:
            self._txn.undo.append(fn)

    def want_head(self, reason: str) -> None:
        """Ask for a signed head at the end of this transaction (a round or coup boundary, a
        decision such as a draw or a card): the head hook hears of it after the commit."""
        if self._txn is None:
            if self._head_hook is not None and self._last_seq:
                self._head_hook(self._last_seq, self._last_hash, reason)
            return
        self._txn.heads_wanted.append(reason)

    def append(
        self, kind: str, data: Mapping[str, object] | None = None, round_id: int | None = None
    ) -> int:
        """Append one row; outside a transaction it is synced before this returns. Returns its
        sequence number."""
        return self.append_entry(kind, data, round_id).seq

    def append_entry(
        self, kind: str, data: Mapping[str, object] | None = None, round_id: int | None = None
    ) -> Row:
        """As :meth:`append`, returning the whole row."""
        if self._readonly:
            raise JournalError(f"{self.path} was opened read-only")
        if not kind:
            raise ValueError("journal event kind must not be empty")
        body = dict(data or {})
        try:
            text = canonical(body).decode("utf-8")
        except (TypeError, ValueError) as exc:
            raise ValueError(f"journal event {kind!r} data is not JSON: {exc}") from exc
        with self.transaction():
            return self._insert(kind, body, text, round_id, self._wall_ns())

    def _insert(
        self, kind: str, data: dict[str, object], text: str, round_id: int | None, wall: int
    ) -> Row:
        txn = self._txn
        assert txn is not None
        if txn.failed is not None:
            raise txn.failed
        seq = self._last_seq + 1
        mono = self._mono_ns()
        row = Row(seq, wall, self._boot_id, mono, kind, round_id, data, self._last_hash, "")
        digest = row_hash(self._last_hash, row.as_dict())
        kind_ref = self._kind_ids.get(kind)
        if kind_ref is None:
            kind_ref = self._write("INSERT INTO kinds (kind) VALUES (?)", (kind,))
            self._kind_ids[kind], self._kind_names[kind_ref] = kind_ref, kind
            txn.new_kinds.append(kind)
        if self._boot_ref is None:
            self._boot_ref = self._write("INSERT INTO boots (boot) VALUES (?)", (self._boot_id,))
            self._boot_names[self._boot_ref] = self._boot_id
            txn.new_boot = True
        self._write(
            "INSERT INTO rows (seq, ts, boot, mono, kind, round, data, hash)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (seq, wall, self._boot_ref, mono, kind_ref, round_id, text, bytes.fromhex(digest)),
        )
        row = Row(seq, wall, self._boot_id, mono, kind, round_id, data, self._last_hash, digest)
        self._last_seq, self._last_hash = seq, digest
        self._last_wall_ns = max(self._last_wall_ns, wall)
        txn.rows.append(row)
        return row

    def add_heads(self, heads: Iterable[SignedHead]) -> None:
        """Store signed heads (the notary signed them on its thread; the loop stores them)."""
        with self.transaction():
            for h in heads:
                self._write(
                    "INSERT OR IGNORE INTO heads (seq, hash, ts, sig, key_id, counter)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        h.seq,
                        bytes.fromhex(h.hash),
                        h.ts,
                        _raw_sig(h.sig),
                        bytes.fromhex(h.key_id),
                        h.counter,
                    ),
                )

    def _write(self, sql: str, args: tuple[SQLValue, ...]) -> int:
        """One statement inside the current transaction (BEGIN on the first); a failure dooms
        the transaction."""
        txn = self._txn
        assert txn is not None
        if txn.failed is not None:
            raise txn.failed
        try:
            if not txn.began:
                self._db.execute("BEGIN IMMEDIATE")
                txn.began = True
            cursor = self._db.execute(sql, args)
        except sqlite3.OperationalError as exc:
            txn.failed = JournalIOError(f"journal write failed ({self.path}): {exc}")
            raise txn.failed from exc
        except sqlite3.DatabaseError as exc:
            txn.failed = JournalCorrupt(f"journal write failed ({self.path}): {exc}")
            raise txn.failed from exc
        return int(cursor.lastrowid or 0)

    def _commit(self, txn: _Txn) -> None:
        if txn.began:
            try:
                self._db.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                self._rollback(txn)
                raise JournalIOError(f"journal commit failed ({self.path}): {exc}") from exc
        for row in txn.rows:
            for listener in self._listeners:
                listener(row)
        if txn.heads_wanted and self._head_hook is not None and self._last_seq:
            self._head_hook(self._last_seq, self._last_hash, txn.heads_wanted[0])
        try:
            for fn in txn.after:
                fn()
        finally:
            # after the outputs: a thread woken here must not run before the display does
            if txn.began:
                for wrote in self._commit_listeners:
                    wrote()

    def _rollback(self, txn: _Txn) -> None:
        if txn.began:
            try:
                self._db.execute("ROLLBACK")
            except sqlite3.DatabaseError:
                pass  # SQLite may have rolled back already (a full disk does)
        self._last_seq, self._last_hash = txn.start_seq, txn.start_hash
        for kind in txn.new_kinds:
            ref = self._kind_ids.pop(kind, None)
            if ref is not None:
                self._kind_names.pop(ref, None)
        if txn.new_boot:
            if self._boot_ref is not None:
                self._boot_names.pop(self._boot_ref, None)
            self._boot_ref = None
        for fn in txn.undo:
            fn()

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
            data = {"warning": text, "wall_ns": now}
            with self.transaction():
                self._insert("clock.warning", data, canonical(data).decode("utf-8"), None, now)
        return warnings

    def watch_clock(self) -> str | None:
        """Loop, every tick: a wall clock that moved against the monotonic clock by
        :data:`CLOCK_JUMP_NS` or more since the last call (a jump either way: NTP setting a Pi's
        clock, a technician's ``date``) is journaled as a warning when it happens (docs/design.md
        "Time"); returns the warning."""
        offset = self._wall_ns() - self._mono_ns()
        last, self._clock_offset_ns = self._clock_offset_ns, offset
        if last is None or abs(offset - last) < CLOCK_JUMP_NS:
            return None
        step_s = (offset - last) / 1e9
        text = (
            f"wall clock jumped {'forward' if step_s > 0 else 'backwards'} by {abs(step_s):.3f} s"
        )
        now = self._wall_ns()
        data = {"warning": text, "wall_ns": now, "step_s": round(step_s, 3)}
        with self.transaction():
            self._insert("clock.warning", data, canonical(data).decode("utf-8"), None, now)
        return text

    # -- reading ---------------------------------------------------------------------------------

    def _row(self, r: SQLRow, base: tuple[int, str] | None = None) -> Row:
        seq_v, ts, boot, mono, kind, rnd, text, digest, prev = r
        try:
            seq = as_int(seq_v, "seq")
            if prev is None:
                b = base or self.base()
                prev_hex = b[1] if seq == b[0] + 1 else ""
            else:
                prev_hex = _blob(prev, "prev").hex()
            return Row(
                seq,
                as_int(ts, "ts"),
                self._boot_name(as_int(boot, "boot")),
                as_int(mono, "mono"),
                self._kind_name(as_int(kind, "kind")),
                _opt_int(rnd, "round"),
                json.loads(as_str(text, "data")),
                prev_hex,
                _blob(digest, "hash").hex(),
            )
        except (FieldError, ValueError, RecursionError) as exc:  # an edited database
            raise JournalCorrupt(f"journal row {seq_v!r} unreadable ({self.path}): {exc}") from exc

    def events(
        self, kinds: Iterable[str] | None = None, since_seq: int = 0, round_id: int | None = None
    ) -> Iterator[Row]:
        """Rows in sequence order, optionally only some kinds, after ``since_seq``, one round."""
        sql = f"SELECT {_COLUMNS} {_FROM} WHERE r.seq > ?"
        args: list[SQLValue] = [since_seq]
        if kinds is not None:
            refs = self._kind_refs(kinds)
            if not refs:
                return
            sql += f" AND r.kind IN ({','.join('?' * len(refs))})"
            args.extend(refs)
        if round_id is not None:
            sql += " AND r.round = ?"
            args.append(round_id)
        sql += " ORDER BY r.seq"
        base = self.base()
        try:
            cursor = self._db.execute(sql, args)
            for r in cursor:
                yield self._row(r, base)
        except sqlite3.DatabaseError as exc:
            raise JournalCorrupt(f"journal read failed ({self.path}): {exc}") from exc

    def _kind_refs(self, kinds: Iterable[str]) -> list[int]:
        wanted = list(kinds)
        if any(k not in self._kind_ids for k in wanted):
            self._load_names()
        return [self._kind_ids[k] for k in wanted if k in self._kind_ids]

    def last(self, kinds: Iterable[str]) -> Row | None:
        """The newest row of any of ``kinds`` (by the kind index: no scan)."""
        refs = self._kind_refs(kinds)
        best: int | None = None
        for ref in refs:
            rows = self._read("SELECT MAX(seq) FROM rows WHERE kind = ?", (ref,))
            if rows and rows[0][0] is not None:
                best = max(best or 0, as_int(rows[0][0], "seq"))
        return None if best is None else self.row(best)

    def row(self, seq: int) -> Row | None:
        """The row ``seq``, or None."""
        rows = self._read(f"SELECT {_COLUMNS} {_FROM} WHERE r.seq = ?", (seq,))
        return self._row(rows[0]) if rows else None

    def round_ids(self, count: int) -> list[int]:
        """The ids of the newest ``count`` rounds (by their newest row), oldest first. Walks
        back from the newest row, a batch at a time, only as far as ``count`` rounds reach."""
        found: list[int] = []
        upto = self._last_seq + 1
        batch = 256
        while len(found) < count and upto > 0:
            rows = self._read(
                "SELECT seq, round FROM rows WHERE seq < ? AND seq >= ? ORDER BY seq DESC",
                (upto, upto - batch),
            )
            if not rows and self._first_seq_or_none() is None:
                break
            for _, rnd in rows:
                if rnd is not None and rnd not in found:
                    found.append(as_int(rnd, "round"))
                    if len(found) == count:
                        break
            upto -= batch
            batch = min(batch * 2, 65536)
            first = self._first_seq_or_none()
            if first is None or upto <= first:
                break
        return sorted(found)

    def rows_after(self, seq: int, limit: int) -> list[Row]:
        """Up to ``limit`` rows after ``seq``, in order, with ``prev`` and ``hash`` (the feed's
        outbox reads these on a :meth:`reader`)."""
        rows = self._read(
            f"SELECT {_COLUMNS} {_FROM} WHERE r.seq > ? ORDER BY r.seq LIMIT ?", (seq, limit)
        )
        base = self.base()
        return [self._row(r, base) for r in rows]

    def heads_after(self, seq: int, limit: int) -> list[SignedHead]:
        """Up to ``limit`` signed heads after ``seq``, in order."""
        table = self.meta("table") or ""
        # a copy opened read-only may predate the counter column: its heads have none
        if self._counter_column is None:
            self._counter_column = "counter" in self._head_columns()
        counter = "counter" if self._counter_column else "NULL"
        return [
            SignedHead(
                table,
                as_int(s, "seq"),
                _blob(h, "hash").hex(),
                as_int(ts, "ts"),
                _der_sig(_blob(sig, "sig")),
                _blob(k, "key_id").hex(),
                _opt_int(c, "counter"),
            )
            for s, h, ts, sig, k, c in self._read(
                f"SELECT seq, hash, ts, sig, key_id, {counter} FROM heads WHERE seq > ?"
                " ORDER BY seq LIMIT ?",
                (seq, limit),
            )
        ]

    def newest_head(self) -> SignedHead | None:
        """The newest signed head stored in the database."""
        rows = self._read("SELECT MAX(seq) FROM heads")
        if not rows or rows[0][0] is None:
            return None
        found = self.heads_after(as_int(rows[0][0], "seq") - 1, 1)
        return found[0] if found else None

    def head(self) -> tuple[int, str]:
        """The chain's head: (sequence number, hash hex) of the newest row."""
        return self._last_seq, self._last_hash

    def stored_last_seq(self) -> int:
        """The newest row's seq as the file holds it now (a reader's view moves on)."""
        rows = self._read("SELECT MAX(seq) FROM rows")
        return as_int(rows[0][0], "seq") if rows and rows[0][0] is not None else self.base()[0]

    def first_seq(self) -> int:
        """The first live row's seq (1 until rows were archived; last + 1 when empty)."""
        first = self._first_seq_or_none()
        return first if first is not None else self._last_seq + 1

    def _first_seq_or_none(self) -> int | None:
        rows = self._read("SELECT MIN(seq) FROM rows")
        return _opt_int(rows[0][0], "seq") if rows else None

    def seq_at_or_after(self, wall_ns: int) -> int | None:
        """The first row whose wall clock is at or after ``wall_ns`` (archiving): walks the
        rowid tree by bisection on ``ts``, which is monotonic enough for a day's cut."""
        lo, hi = self.first_seq(), self._last_seq
        if hi < lo:
            return None
        while lo < hi:
            mid = (lo + hi) // 2
            rows = self._read("SELECT ts FROM rows WHERE seq >= ? ORDER BY seq LIMIT 1", (mid,))
            if rows and as_int(rows[0][0], "ts") < wall_ns:
                lo = mid + 1
            else:
                hi = mid
        rows = self._read("SELECT ts FROM rows WHERE seq = ?", (lo,))
        return lo if rows and as_int(rows[0][0], "ts") >= wall_ns else None

    def _read(self, sql: str, args: Iterable[SQLValue] = ()) -> list[SQLRow]:
        """Every row of one query; a damaged database is :class:`JournalCorrupt`, never a bare
        ``sqlite3`` error (callers catch the journal's own errors)."""
        try:
            return self._db.execute(sql, tuple(args)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise JournalCorrupt(f"journal read failed ({self.path}): {exc}") from exc

    def raw_rows(self, after_seq: int, limit: int) -> list[RawRow]:
        """The stored rows in ``rowid`` order, for the verifiers: what is stored, not what an
        index says; a row whose references or hash are of another type is
        :class:`JournalCorrupt`."""
        rows = self._read(
            "SELECT seq, ts, boot, mono, kind, round, data, hash FROM rows"
            " WHERE rowid > ? ORDER BY rowid LIMIT ?",
            (after_seq, limit),
        )
        try:
            return [self._raw_row(r) for r in rows]
        except FieldError as exc:
            raise JournalCorrupt(f"journal row unreadable ({self.path}): {exc}") from exc

    def _raw_row(self, r: SQLRow) -> RawRow:
        s, ts, b, m, k, rnd, text, h = r
        return RawRow(
            as_int(s, "seq"),
            ts,
            self._boot_name(as_int(b, "boot")),
            m,
            self._kind_name(as_int(k, "kind")),
            rnd,
            text,
            _blob(h, "hash"),
        )

    def reader(self) -> Journal:
        """A second, read-only connection (for another thread: verifying, the feed)."""
        return Journal(self.path, boot_id=self._boot_id, readonly=True)

    def delete_archived(self, through_seq: int, through_hash: str, batch: int = 500) -> int:
        """Remove rows up to ``through_seq`` (already in a verified, signed archive segment
        and journaled as ``journal.archived``) and the signed heads before it, a batch per
        transaction so the loop's writes never wait long; the live journal now starts after
        ``through_seq`` (its ``base``). For the maintenance connection only."""
        removed = 0
        self._write_now(
            "INSERT OR REPLACE INTO meta VALUES ('base', ?)", (f"{through_seq}:{through_hash}",)
        )
        while True:
            low = self._read("SELECT MIN(seq) FROM rows")
            first = _opt_int(low[0][0], "seq") if low else None
            if first is None or first > through_seq:
                break
            upto = min(through_seq, first + batch - 1)
            removed += self._write_now("DELETE FROM rows WHERE seq <= ?", (upto,))
        self._write_now("DELETE FROM heads WHERE seq < ?", (through_seq,))
        return removed

    def _write_now(self, sql: str, args: tuple[SQLValue, ...]) -> int:
        """One statement as its own transaction, the append-only triggers lifted for it."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('archiving', '1')")
            cursor = self._db.execute(sql, args)
            self._db.execute("DELETE FROM meta WHERE key = 'archiving'")
            self._db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            try:
                self._db.execute("ROLLBACK")
            except sqlite3.DatabaseError:
                pass
            raise JournalIOError(f"archiving failed ({self.path}): {exc}") from exc
        return int(cursor.rowcount or 0)

    def withdraw_heads(self, seqs: Iterable[int]) -> None:
        """Remove stored signed heads a technician's acknowledgment found stale (their rows
        were lost or rewritten; the acknowledgment row lists them): in the current
        transaction, the triggers lifted for it."""
        with self.transaction():
            self._write("INSERT OR REPLACE INTO meta VALUES ('archiving', '1')", ())
            for seq in seqs:
                self._write("DELETE FROM heads WHERE seq = ?", (seq,))
            self._write("DELETE FROM meta WHERE key = 'archiving'", ())

    def stale_heads(self, from_seq: int) -> list[tuple[int, str]]:
        """Stored heads from ``from_seq`` on whose row is gone or has another hash:
        (seq, hash hex)."""
        return [
            (as_int(s, "seq"), _blob(h, "hash").hex())
            for s, h in self._read(
                "SELECT h.seq, h.hash FROM heads h LEFT JOIN rows r ON r.seq = h.seq"
                " WHERE h.seq >= ? AND ((r.seq IS NULL AND h.seq >"
                " (SELECT COALESCE(MAX(seq), 0) FROM rows)) OR (r.seq IS NOT NULL AND"
                " r.hash != h.hash))",
                (from_seq,),
            )
        ]

    def newest_heads(self, limit: int) -> list[SignedHead]:
        """The newest ``limit`` stored heads, oldest first."""
        rows = self._read(
            "SELECT seq FROM heads ORDER BY seq DESC LIMIT 1 OFFSET ?", (max(0, limit - 1),)
        )
        after = as_int(rows[0][0], "seq") - 1 if rows else -1
        return self.heads_after(after, limit)

    def checkpoint(self) -> tuple[int, int]:
        """Copy committed WAL frames into the database file without blocking the writer
        (PASSIVE); returns (frames in the WAL, frames copied). For a maintenance connection."""
        try:
            row = self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.DatabaseError as exc:
            raise JournalIOError(f"checkpoint failed ({self.path}): {exc}") from exc
        return (int(row[1]), int(row[2])) if row else (0, 0)

    def close(self) -> None:
        """Close the database (every committed row is already synced)."""
        self._db.close()
