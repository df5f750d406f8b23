"""The collector's store: every table's rows, signed heads and alarms, in SQLite (one file, the
default) or PostgreSQL (a floor's shared database, psycopg 3), behind one class.

The same SQL runs on both (``?`` placeholders become ``%s`` for psycopg). Writes are grouped in
transactions by the caller (:meth:`Store.commit`): the collector acknowledges a batch of MQTT
messages to the broker only after the batch is committed, so a collector killed at any point
loses nothing the broker handed it. Rows are keyed by (site, table, seq): a duplicate is never a
second row.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeAlias, TypedDict
from urllib.parse import unquote, urlsplit

from controller.feed.messages import RowMessage, decode_row, row_payload
from controller.fields.readers import (
    as_int,
    as_str,
    int_of,
    map_of,
    opt_map_of,
    parse_object,
    str_of,
)
from controller.journal.chain import canonical

if TYPE_CHECKING:
    import psycopg

#: A row as the database drivers return it; read with :func:`_int`, ``str`` and the readers.
DBRow: TypeAlias = tuple[object, ...]
#: A row held for a gap, as :func:`~controller.feed.messages.decode_row` gives it (the
#: verifier keeps held rows in that type).
HeldRow: TypeAlias = RowMessage

#: The schema; ``{serial}`` and ``{blob}`` differ between the dialects.
_SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS feed_tables (
        site TEXT NOT NULL, table_id TEXT NOT NULL,
        frontier_seq BIGINT NOT NULL DEFAULT 0, frontier_hash TEXT NOT NULL DEFAULT '',
        head_seq BIGINT NOT NULL DEFAULT 0, head_hash TEXT NOT NULL DEFAULT '',
        signed_seq BIGINT NOT NULL DEFAULT 0,
        last_round BIGINT, last_row_ts BIGINT, last_seen_ns BIGINT,
        status TEXT NOT NULL DEFAULT '', status_ts BIGINT,
        silent INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (site, table_id))""",
    """CREATE TABLE IF NOT EXISTS feed_rows (
        site TEXT NOT NULL, table_id TEXT NOT NULL, seq BIGINT NOT NULL,
        ts BIGINT NOT NULL, boot TEXT NOT NULL, mono BIGINT NOT NULL, kind TEXT NOT NULL,
        round BIGINT, data TEXT NOT NULL, prev TEXT NOT NULL, hash TEXT NOT NULL,
        received_ns BIGINT NOT NULL, gap_before INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (site, table_id, seq))""",
    """CREATE TABLE IF NOT EXISTS feed_pending (
        site TEXT NOT NULL, table_id TEXT NOT NULL, seq BIGINT NOT NULL,
        row_json TEXT NOT NULL, received_ns BIGINT NOT NULL,
        PRIMARY KEY (site, table_id, seq))""",
    """CREATE TABLE IF NOT EXISTS feed_heads (
        site TEXT NOT NULL, table_id TEXT NOT NULL, seq BIGINT NOT NULL,
        hash TEXT NOT NULL, ts BIGINT NOT NULL, sig TEXT NOT NULL, key_id TEXT NOT NULL,
        received_ns BIGINT NOT NULL, matched INTEGER,
        PRIMARY KEY (site, table_id, seq))""",
    """CREATE TABLE IF NOT EXISTS feed_alarms (
        id {serial}, ts_ns BIGINT NOT NULL, site TEXT NOT NULL, table_id TEXT NOT NULL,
        kind TEXT NOT NULL, detail TEXT NOT NULL, count INTEGER NOT NULL DEFAULT 1,
        last_ns BIGINT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS feed_alarms_table ON feed_alarms (site, table_id, kind, id)",
    "CREATE TABLE IF NOT EXISTS feed_schema (version INTEGER NOT NULL)",
    # each collector's own health (docs/feed.md "The floor page"): whether it holds the broker,
    # since when, and when it last said so; created by any version that knows it, read by the
    # page, so a store made before it needs no migration
    """CREATE TABLE IF NOT EXISTS feed_collector_health (
        client_id TEXT NOT NULL, site TEXT NOT NULL, connected INTEGER NOT NULL,
        since_ns BIGINT NOT NULL, updated_ns BIGINT NOT NULL, detail TEXT NOT NULL,
        PRIMARY KEY (client_id, site))""",
    # who acknowledged an alarm on the floor page, when, with what note
    """CREATE TABLE IF NOT EXISTS feed_alarm_acks (
        alarm_id BIGINT NOT NULL, ts_ns BIGINT NOT NULL, by_name TEXT NOT NULL,
        note TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (alarm_id, ts_ns))""",
    # the newest meters each table published (docs/feed.md "Events and meters"): the table's
    # word, kept once per table, replaced only by meters folded to a later row
    """CREATE TABLE IF NOT EXISTS feed_meters (
        site TEXT NOT NULL, table_id TEXT NOT NULL, seq BIGINT NOT NULL,
        received_ns BIGINT NOT NULL, meters TEXT NOT NULL, PRIMARY KEY (site, table_id))""",
    # the coded events each table published, once per row and code (delivery is at least once)
    """CREATE TABLE IF NOT EXISTS feed_table_events (
        site TEXT NOT NULL, table_id TEXT NOT NULL, seq BIGINT NOT NULL, code INTEGER NOT NULL,
        ts BIGINT NOT NULL, round BIGINT, name TEXT NOT NULL, severity TEXT NOT NULL,
        details TEXT NOT NULL, received_ns BIGINT NOT NULL,
        PRIMARY KEY (site, table_id, seq, code))""",
    # what the floor page reads again each second: only what arrived since its last read
    "CREATE INDEX IF NOT EXISTS feed_meters_received ON feed_meters (received_ns)",
    "CREATE INDEX IF NOT EXISTS feed_table_events_received ON feed_table_events (received_ns)",
    # many collectors on one PostgreSQL (controller/feed/share.py): who is alive, who serves
    # which table; created at every open (an earlier store gains them without a migration)
    """CREATE TABLE IF NOT EXISTS collector_members (
        site TEXT NOT NULL, holder TEXT NOT NULL, client_id TEXT NOT NULL,
        expires_ns BIGINT NOT NULL, adopted_by TEXT,
        PRIMARY KEY (site, holder))""",
    """CREATE TABLE IF NOT EXISTS collector_leases (
        site TEXT NOT NULL, table_id TEXT NOT NULL, holder TEXT NOT NULL,
        expires_ns BIGINT NOT NULL, offered INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (site, table_id))""",
)
_ROW_COLUMNS: Final = (
    "site, table_id, seq, ts, boot, mono, kind, round, data, prev, hash, received_ns, gap_before"
)


_HEAD_COLUMNS: Final = "site, table_id, seq, hash, ts, sig, key_id, received_ns, matched"
#: The key of the PostgreSQL advisory lock that makes one instance at a time create or migrate
#: the schema (two ``CREATE TABLE IF NOT EXISTS`` at once can both try to create the table).
SCHEMA_LOCK: Final = 0x7443_6665_6564  # "tCfeed"
#: The schema's version now; a store at an older one is migrated on open (:data:`_MIGRATIONS`).
SCHEMA_VERSION: Final = 2
#: What takes a store from version N - 1 to N (a store made before ``feed_schema`` existed is
#: at version 1: the tables above without the columns and tables added since).
_MIGRATIONS: Final = {
    2: (
        # a diverged table (docs/feed.md "A diverged table"): since when, from which seq
        "ALTER TABLE feed_tables ADD COLUMN forked_ns BIGINT",
        "ALTER TABLE feed_tables ADD COLUMN forked_seq BIGINT",
        # what diverged from the table's record: kept apart, never its rows or heads
        """CREATE TABLE IF NOT EXISTS feed_evidence (
            id {serial}, site TEXT NOT NULL, table_id TEXT NOT NULL, channel TEXT NOT NULL,
            seq BIGINT NOT NULL, hash TEXT NOT NULL, message TEXT NOT NULL,
            received_ns BIGINT NOT NULL, reason TEXT NOT NULL,
            UNIQUE (site, table_id, channel, seq, hash))""",
        # who acknowledged a diverged table, when, and what they found
        """CREATE TABLE IF NOT EXISTS feed_acks (
            id {serial}, ts_ns BIGINT NOT NULL, site TEXT NOT NULL, table_id TEXT NOT NULL,
            forked_ns BIGINT NOT NULL, by_name TEXT NOT NULL, note TEXT NOT NULL)""",
    ),
}
_SERIAL: Final = {
    "sqlite": "INTEGER PRIMARY KEY AUTOINCREMENT",
    "postgresql": "BIGSERIAL PRIMARY KEY",
}
_TABLE_COLUMNS: Final = (
    "frontier_seq",
    "frontier_hash",
    "head_seq",
    "head_hash",
    "signed_seq",
    "last_round",
    "last_row_ts",
    "last_seen_ns",
    "status",
    "status_ts",
    "silent",
    "forked_ns",
    "forked_seq",
)


class StoreError(Exception):
    """The store cannot be opened, read or written (a bad URL, a database that is down)."""


@dataclass
class TableRecord:
    """What the collector keeps about one table between messages (``feed_tables``)."""

    site: str
    table: str
    frontier_seq: int = 0  # every row from the chain's base through here is stored
    frontier_hash: str = ""
    head_seq: int = 0  # the highest validly signed head seen
    head_hash: str = ""
    signed_seq: int = 0  # the highest head whose hash matched the stored row
    last_round: int | None = None
    last_row_ts: int | None = None
    last_seen_ns: int | None = None
    status: str = ""
    status_ts: int | None = None
    silent: bool = False
    forked_ns: int | None = None  # when it last diverged from its record (None: never)
    forked_seq: int | None = None  # the seq of the first message that diverged then


@dataclass(frozen=True)
class Ack:
    """A person's acknowledgement of a diverged table (``floor --ack``)."""

    ts_ns: int
    site: str
    table: str
    forked_ns: int
    by: str
    note: str


@dataclass(frozen=True)
class Evidence:
    """A message that diverged from a table's record, kept apart (``feed_evidence``)."""

    channel: str
    seq: int
    hash: str
    message: dict[str, object]
    received_ns: int
    reason: str


@dataclass(frozen=True)
class Alarm:
    """One stored alarm (repeats of a kind for a table within a window raise ``count``)."""

    id: int
    ts_ns: int
    site: str
    table: str
    kind: str
    detail: str
    count: int
    last_ns: int


@dataclass(frozen=True)
class CollectorHealth:
    """A collector's own report of its broker connection (``feed_collector_health``)."""

    client_id: str
    site: str
    connected: bool
    since_ns: int  # when ``connected`` last changed
    updated_ns: int  # when the collector last reported it
    detail: str


@dataclass(frozen=True)
class TableEvent:
    """A coded event a table published (``feed_table_events``; controller/floor/events.py)."""

    site: str
    table: str
    seq: int
    code: int
    ts: int
    round: int | None
    name: str
    severity: str
    details: dict[str, object]


@dataclass(frozen=True)
class AlarmAck:
    """A person's acknowledgement of one alarm (the floor page)."""

    alarm_id: int
    ts_ns: int
    by: str
    note: str
    count: int  # the alarm's count when acknowledged: a repeat after it opens the alarm again


class StoredRow(RowMessage):
    """A stored row as its feed fields (docs/journal.md "Row"), and whether a gap preceded it."""

    gap_before: bool


class StoredMeters(TypedDict):
    """A table's stored meters: the meters message's fields (docs/meters.md)."""

    table: str
    seq: int
    game: str
    release: dict[str, str | None] | None
    shift_from_seq: int
    lifetime: dict[str, int]
    shift: dict[str, int]


def _int(value: object) -> int:
    """A stored integer column (both drivers give ``int``)."""
    return as_int(value, "a stored integer column")


def _opt_int(value: object) -> int | None:
    return None if value is None else _int(value)


def _counters(obj: Mapping[str, object], name: str) -> dict[str, int]:
    return {k: as_int(v, f"{name}.{k}") for k, v in map_of(obj, name).items()}


def _meters(text: object) -> StoredMeters:
    """Stored meters (the JSON :meth:`Store.save_meters` wrote) as their fields."""
    obj = parse_object(as_str(text, "the stored meters"))
    release = opt_map_of(obj, "release")
    return {
        "table": str_of(obj, "table"),
        "seq": int_of(obj, "seq"),
        "game": str_of(obj, "game"),
        "release": None
        if release is None
        else {k: None if v is None else as_str(v, f"release.{k}") for k, v in release.items()},
        "shift_from_seq": int_of(obj, "shift_from_seq"),
        "lifetime": _counters(obj, "lifetime"),
        "shift": _counters(obj, "shift"),
    }


def _event(site: str, table: str, r: DBRow) -> TableEvent:
    """A stored event from its columns: seq, code, ts, round, name, severity, details."""
    return TableEvent(
        site,
        table,
        _int(r[0]),
        _int(r[1]),
        _int(r[2]),
        _opt_int(r[3]),
        str(r[4]),
        str(r[5]),
        parse_object(as_str(r[6], "the stored details")),
    )


def _alarm(r: DBRow) -> Alarm:
    """A stored alarm from its columns: id, ts_ns, site, table_id, kind, detail, count,
    last_ns."""
    return Alarm(
        _int(r[0]), _int(r[1]), str(r[2]), str(r[3]), str(r[4]), str(r[5]), _int(r[6]), _int(r[7])
    )


class Store:
    """One connection to the collector's database (SQLite or PostgreSQL)."""

    def __init__(
        self,
        conn: sqlite3.Connection | psycopg.Connection[DBRow],
        dialect: str,
        url: str,
    ) -> None:
        self._conn = conn
        #: Rows added in this transaction and not yet sent (:meth:`add_row`): sent in one
        #: ``executemany`` before anything reads ``feed_rows`` and at the commit.
        self._rows: list[DBRow] = []
        #: Those rows' (prev, hash) by (site, table, seq): :meth:`row_link` answers from here.
        self._row_links: dict[tuple[str, str, int], tuple[str, str]] = {}
        #: Heads added in this transaction and not yet sent (:meth:`add_head`), by (site,
        #: table, seq): sent together (:meth:`_many`) before the next statement on
        #: ``feed_heads`` and at the commit; :meth:`set_head_matched` on one changes it here.
        self._heads: dict[tuple[str, str, int], list[object]] = {}
        #: Table positions saved in this transaction and not yet sent (:meth:`save_tables`),
        #: the newest by (site, table): sent like the heads.
        self._positions: dict[tuple[str, str], tuple[object, ...]] = {}
        #: PostgreSQL: the temporary tables made for copying into (``feed_rows_in``, ...).
        self._temp: set[str] = set()
        #: PostgreSQL: batches whose straight COPY met a row stored already (another instance's,
        #: a lease taken over) and went through the temporary table instead.
        self.copy_conflicts = 0
        self.dialect = dialect
        self.url = url
        self._create()

    @classmethod
    def open(cls, url: str) -> Store:
        """``sqlite:///PATH`` (``sqlite:////abs/path``, or a plain path) or
        ``postgresql://user@host:port/db`` (``postgresql:///?service=NAME`` for a service file
        entry). The password is not in the URL: libpq finds it where it usually does,
        ``PGPASSFILE`` (default ``~/.pgpass``), the service file's ``password``/``passfile``, or
        ``PGPASSWORD`` (a URL that still carries one works, but shows it in ``ps``)."""
        parts = urlsplit(url)
        if parts.scheme in ("postgresql", "postgres"):
            try:
                import psycopg
            except ImportError:
                raise StoreError(
                    "PostgreSQL needs psycopg 3: pip install 'table-controller[collector]'"
                ) from None
            try:
                conn = psycopg.connect(url, connect_timeout=10)
            except psycopg.Error as exc:
                raise StoreError(f"cannot connect to {_redact(url)}: {exc}") from None
            return cls(conn, "postgresql", url)
        if parts.scheme in ("sqlite", ""):
            path = unquote(parts.path) if parts.scheme else url
            if parts.scheme and parts.netloc:
                raise StoreError(f"{url}: write sqlite:///relative/path or sqlite:////abs/path")
            if parts.scheme:
                path = path[1:] if path.startswith("/") else path
            if not path:
                raise StoreError(f"{url}: no database file named")
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            try:
                lite = sqlite3.connect(path, timeout=10.0, check_same_thread=False)
                lite.execute("PRAGMA journal_mode=WAL")
                # a batch is acknowledged to the broker only after its commit is on disk
                lite.execute("PRAGMA synchronous=FULL")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot open {path}: {exc}") from None
            return cls(lite, "sqlite", url)
        raise StoreError(f"{url}: the store must be sqlite:///PATH or postgresql://...")

    # -- plumbing ---------------------------------------------------------------------------

    def path_of(self) -> str:
        """The SQLite store's file (the URL's path); the URL itself for PostgreSQL."""
        if self.dialect != "sqlite":
            return self.url
        parts = urlsplit(self.url)
        if not parts.scheme:
            return self.url
        path = unquote(parts.path)
        return path[1:] if path.startswith("/") else path

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.dialect == "postgresql" else sql

    def _errors(self) -> tuple[type[BaseException], ...]:
        if self.dialect == "postgresql":
            import psycopg

            return (psycopg.Error,)
        return (sqlite3.Error,)

    def execute(
        self, sql: str, args: tuple[object, ...] = (), *, send_rows: bool = True
    ) -> list[DBRow]:
        """Run one statement; its rows when it returns any (SELECT, RETURNING). A database
        error is :class:`StoreError`. A statement on ``feed_rows`` first sends the rows kept by
        :meth:`add_row` (``send_rows`` false: the caller knows they do not matter to it)."""
        if send_rows and self._rows and "feed_rows" in sql:
            self._send_rows()
        if self._heads and "feed_heads" in sql:
            self._send_heads()
        if self._positions and "feed_tables" in sql:
            self._send_positions()
        returns = sql.lstrip().upper().startswith("SELECT") or " RETURNING " in sql.upper()
        errors: tuple[type[BaseException], ...] = (*self._errors(), OverflowError, ValueError)
        try:
            cur = self._conn.execute(self._sql(sql), args)
            return list(cur.fetchall()) if returns else []
        except errors as exc:
            # OverflowError, ValueError (UnicodeEncodeError): a value the driver cannot bind
            raise StoreError(f"{self.dialect}: {type(exc).__name__}: {exc}") from exc

    def _send_rows(self) -> None:
        """The rows :meth:`add_row` kept (a row another instance stored already, a lease taken
        over, is not a second row); on PostgreSQL straight into ``feed_rows`` when none is."""
        rows, self._rows = self._rows, []
        self._row_links.clear()
        self._many("feed_rows", _ROW_COLUMNS, rows, "(site, table_id, seq) DO NOTHING", True)

    def _send_heads(self) -> None:
        """The heads :meth:`add_head` kept. A head stored already (another instance's, or one
        sent earlier in the transaction) stays as it is, except that a kept head's match with
        its row (:meth:`set_head_matched`) is recorded on it, as the ``UPDATE`` it stands for."""
        heads, self._heads = [tuple(h) for h in self._heads.values()], {}
        self._many(
            "feed_heads",
            _HEAD_COLUMNS,
            heads,
            "(site, table_id, seq) DO UPDATE SET matched = COALESCE(excluded.matched,"
            " feed_heads.matched)",
        )

    def _send_positions(self) -> None:
        """The table positions :meth:`save_tables` kept (each replaces the stored one)."""
        rows, self._positions = list(self._positions.values()), {}
        updates = ", ".join(f"{c} = excluded.{c}" for c in _TABLE_COLUMNS)
        columns = f"site, table_id, {', '.join(_TABLE_COLUMNS)}"
        self._many("feed_tables", columns, rows, f"(site, table_id) DO UPDATE SET {updates}")

    def _many(
        self,
        table: str,
        columns: str,
        rows: list[tuple[object, ...]],
        conflict: str,
        straight: bool = False,
    ) -> None:
        """Many rows into ``table``: PostgreSQL by ``COPY`` (:meth:`_copy_straight` first when
        ``straight``, else or then :meth:`_copy_in`), or in its pipeline (no ``COPY`` there)
        and SQLite by one ``executemany`` (one statement prepared once, the rows streamed). A
        database error is :class:`StoreError`."""
        errors: tuple[type[BaseException], ...] = (*self._errors(), OverflowError, ValueError)
        conn = self._conn
        try:
            if not isinstance(conn, sqlite3.Connection) and not conn.pgconn.pipeline_status:
                with conn.cursor() as cur:
                    if not (straight and self._copy_straight(cur, table, columns, rows)):
                        self._copy_in(cur, table, columns, rows, conflict)
                return
            marks = ", ".join("?" * (columns.count(",") + 1))
            sql = f"INSERT INTO {table} ({columns}) VALUES ({marks}) ON CONFLICT {conflict}"
            with contextlib.closing(self._conn.cursor()) as cur:
                cur.executemany(self._sql(sql), rows)
        except errors as exc:
            raise StoreError(f"{self.dialect}: {type(exc).__name__}: {exc}") from exc

    def _copy_straight(
        self,
        cur: psycopg.Cursor[DBRow],
        table: str,
        columns: str,
        rows: list[tuple[object, ...]],
    ) -> bool:
        """PostgreSQL, outside the pipeline: ``rows`` by one ``COPY`` straight into ``table``
        under a savepoint; False when one is there already (a lease taken over): the savepoint
        undid the ``COPY`` and :attr:`copy_conflicts` counts it."""
        import psycopg

        cur.execute("SAVEPOINT straight_copy")
        try:
            with cur.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        except psycopg.errors.UniqueViolation:
            cur.execute("ROLLBACK TO SAVEPOINT straight_copy")
            self.copy_conflicts += 1
            return False
        cur.execute("RELEASE SAVEPOINT straight_copy")
        return True

    def _copy_in(
        self,
        cur: psycopg.Cursor[DBRow],
        table: str,
        columns: str,
        rows: Iterable[tuple[object, ...]],
        conflict: str,
    ) -> None:
        """PostgreSQL, outside the pipeline: ``rows`` by ``COPY`` into a temporary table shaped
        as ``table``, then moved into it by one ``INSERT ... ON CONFLICT`` (a ``COPY`` cannot
        skip or update a row the table holds; a statement a row costs a round of the driver)."""
        temp = f"{table}_in"
        if temp not in self._temp:
            cur.execute(
                f"CREATE TEMPORARY TABLE IF NOT EXISTS {temp}"
                f" (LIKE {table} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
            )
            self._temp.add(temp)
        with cur.copy(f"COPY {temp} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cur.execute(
            f"WITH moved AS (DELETE FROM {temp} RETURNING {columns})"
            f" INSERT INTO {table} ({columns}) SELECT {columns} FROM moved ON CONFLICT {conflict}"
        )

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Around a batch of writes: PostgreSQL's pipeline mode (statements go out without
        waiting for each answer; a read waits for what it needs); nothing for SQLite. An error
        the pipeline reports only at its end is a :class:`StoreError` too."""
        conn = self._conn
        if isinstance(conn, sqlite3.Connection):
            yield
            return
        try:
            with conn.pipeline():
                yield
        except self._errors() as exc:
            raise StoreError(f"{self.dialect}: {exc}") from exc

    def ping(self) -> bool:
        """True when the database answers (after a failed batch: a bad row, or the store)."""
        try:
            self.rollback()
            self.execute("SELECT 1")
            self.rollback()
        except StoreError:
            return False
        return True

    def _create(self) -> None:
        if self.dialect == "postgresql":
            # held to this transaction's commit: instances starting together create and
            # migrate the schema one after the other, the later ones finding it made
            self.execute("SELECT pg_advisory_xact_lock(?)", (SCHEMA_LOCK,))
        for statement in _SCHEMA:
            self.execute(statement.format(serial=_SERIAL[self.dialect]))
        versions = self.execute("SELECT version FROM feed_schema")
        version = _int(versions[0][0]) if versions else 1
        if version > SCHEMA_VERSION:
            self.rollback()
            raise StoreError(
                f"the store's schema is version {version}, newer than this collector's"
                f" {SCHEMA_VERSION}: upgrade the collector"
            )
        for target in range(version + 1, SCHEMA_VERSION + 1):
            for statement in _MIGRATIONS[target]:
                self.execute(statement.format(serial=_SERIAL[self.dialect]))
        if not versions:
            self.execute("INSERT INTO feed_schema (version) VALUES (?)", (SCHEMA_VERSION,))
        elif version < SCHEMA_VERSION:
            self.execute("UPDATE feed_schema SET version = ?", (SCHEMA_VERSION,))
        self.commit()

    def schema_version(self) -> int:
        return _int(self.execute("SELECT version FROM feed_schema")[0][0])

    def commit(self) -> None:
        if self._rows:
            self._send_rows()
        if self._heads:
            self._send_heads()
        if self._positions:
            self._send_positions()
        try:
            self._conn.commit()
        except self._errors() as exc:
            raise StoreError(f"{self.dialect}: commit failed: {exc}") from exc

    def rollback(self) -> None:
        self._rows = []
        self._row_links.clear()
        self._heads = {}
        self._positions = {}
        self._temp = set()  # a temporary table made in the transaction is gone
        try:
            self._conn.rollback()
        except self._errors() as exc:
            raise StoreError(f"{self.dialect}: rollback failed: {exc}") from exc

    def close(self) -> None:
        try:
            self._conn.close()
        except self._errors():
            pass

    # -- tables -----------------------------------------------------------------------------

    def tables(self) -> list[TableRecord]:
        cols = ", ".join(_TABLE_COLUMNS)
        out = []
        for r in self.execute(
            f"SELECT site, table_id, {cols} FROM feed_tables ORDER BY site, table_id"
        ):
            # the columns in the order of _TABLE_COLUMNS
            out.append(
                TableRecord(
                    str(r[0]),
                    str(r[1]),
                    frontier_seq=_int(r[2]),
                    frontier_hash=str(r[3]),
                    head_seq=_int(r[4]),
                    head_hash=str(r[5]),
                    signed_seq=_int(r[6]),
                    last_round=_opt_int(r[7]),
                    last_row_ts=_opt_int(r[8]),
                    last_seen_ns=_opt_int(r[9]),
                    status=str(r[10]),
                    status_ts=_opt_int(r[11]),
                    silent=bool(r[12]),
                    forked_ns=_opt_int(r[13]),
                    forked_seq=_opt_int(r[14]),
                )
            )
        return out

    def save_table(self, rec: TableRecord) -> None:
        self.save_tables([rec])

    def save_tables(self, recs: Iterable[TableRecord]) -> None:
        """Store tables' positions in this transaction (sent together before the next
        statement on ``feed_tables``, or at the commit: a batch changes hundreds)."""
        for rec in recs:
            self._positions[(rec.site, rec.table)] = (
                rec.site,
                rec.table,
                *(
                    int(v) if isinstance(v, bool) else v
                    for v in (getattr(rec, c) for c in _TABLE_COLUMNS)
                ),
            )

    # -- rows -------------------------------------------------------------------------------

    def add_row(
        self,
        site: str,
        table: str,
        row: RowMessage,
        received_ns: int,
        gap_before: bool = False,
        data_text: str | None = None,
    ) -> None:
        """Store a row in this transaction (sent with the others before the next read of the
        rows, or at the commit; an error in it comes out of that call). ``data`` is stored as
        its canonical JSON text: ``data_text`` when the caller has it from hashing the row."""
        self._row_links[(site, table, int_of(row, "seq"))] = (str(row["prev"]), str(row["hash"]))
        self._rows.append(
            (
                site,
                table,
                row["seq"],
                row["ts"],
                row["boot"],
                row["mono"],
                row["kind"],
                row["round"],
                data_text if data_text is not None else canonical(row["data"]).decode(),
                row["prev"],
                row["hash"],
                received_ns,
                int(gap_before),
            )
        )

    def row_link(self, site: str, table: str, seq: int) -> tuple[str, str] | None:
        """The stored row's (prev, hash) at ``seq``, or None."""
        kept = self._row_links.get((site, table, seq))
        if kept is not None:
            return kept
        # not among the rows kept for sending: the database's answer is the whole answer
        rows = self.execute(
            "SELECT prev, hash FROM feed_rows WHERE site = ? AND table_id = ? AND seq = ?",
            (site, table, seq),
            send_rows=False,
        )
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    def rows(
        self, site: str, table: str, after_seq: int = 0, limit: int = 1_000_000
    ) -> list[StoredRow]:
        """Stored rows in order, as their feed fields (for audits and tests)."""
        out: list[StoredRow] = []
        for r in self.execute(
            "SELECT seq, ts, boot, mono, kind, round, data, prev, hash, gap_before"
            " FROM feed_rows WHERE site = ? AND table_id = ? AND seq > ? ORDER BY seq"
            " LIMIT ?",
            (site, table, after_seq, limit),
        ):
            out.append(
                {
                    "seq": _int(r[0]),
                    "ts": _int(r[1]),
                    "boot": str(r[2]),
                    "mono": _int(r[3]),
                    "kind": str(r[4]),
                    "round": _opt_int(r[5]),
                    "data": parse_object(as_str(r[6], "a stored row's data")),
                    "prev": str(r[7]),
                    "hash": str(r[8]),
                    "gap_before": bool(r[9]),
                }
            )
        return out

    def row_count(self, site: str | None = None, table: str | None = None) -> int:
        sql = "SELECT COUNT(*) FROM feed_rows"
        args: tuple[str, ...] = ()
        if site is not None and table is not None:
            sql, args = sql + " WHERE site = ? AND table_id = ?", (site, table)
        return _int(self.execute(sql, args)[0][0])

    def add_pending(
        self, site: str, table: str, row: Mapping[str, object], received_ns: int
    ) -> None:
        self.execute(
            "INSERT INTO feed_pending (site, table_id, seq, row_json, received_ns)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (site, table_id, seq) DO NOTHING",
            (site, table, row["seq"], json.dumps(dict(row)), received_ns),
        )

    def drop_pending(self, site: str, table: str, seq: int) -> None:
        self.execute(
            "DELETE FROM feed_pending WHERE site = ? AND table_id = ? AND seq = ?",
            (site, table, seq),
        )

    def pending(self) -> Iterator[tuple[str, str, HeldRow, int]]:
        """Every row held back for want of the rows before it: (site, table, row, received);
        each row is read as the message it came in (controller/feed/messages.py)."""
        for site, table, text, received in self.execute(
            "SELECT site, table_id, row_json, received_ns FROM feed_pending"
            " ORDER BY site, table_id, seq"
        ):
            held = parse_object(as_str(text, "a held row"))
            yield str(site), str(table), decode_row(row_payload(held)), _int(received)

    # -- heads ------------------------------------------------------------------------------

    def add_head(
        self,
        site: str,
        table: str,
        head: Mapping[str, object],
        received_ns: int,
        matched: bool | None,
    ) -> None:
        """Store a signed head in this transaction (sent with the others before the next
        statement on the heads, or at the commit; an error in it comes out of that call). A
        head another instance stored already is not a second head."""
        seq = int_of(head, "seq")
        key = (site, table, seq)
        if key in self._heads:
            return  # the first one stays, as the database keeps it
        self._heads[key] = [
            site,
            table,
            seq,
            head["hash"],
            head["ts"],
            head["sig"],
            head["key_id"],
            received_ns,
            None if matched is None else int(matched),
        ]

    def head_hash(self, site: str, table: str, seq: int) -> str | None:
        rows = self.execute(
            "SELECT hash FROM feed_heads WHERE site = ? AND table_id = ? AND seq = ?",
            (site, table, seq),
        )
        return str(rows[0][0]) if rows else None

    def set_head_matched(self, site: str, table: str, seq: int, matched: bool) -> None:
        kept = self._heads.get((site, table, seq))
        if kept is not None:
            kept[-1] = int(matched)
            return
        self.execute(
            "UPDATE feed_heads SET matched = ? WHERE site = ? AND table_id = ? AND seq = ?",
            (int(matched), site, table, seq),
        )

    def unmatched_heads(self) -> list[tuple[str, str, int, str]]:
        """Heads whose row has not arrived yet: (site, table, seq, hash)."""
        return [
            (str(a), str(b), _int(c), str(d))
            for a, b, c, d in self.execute(
                "SELECT site, table_id, seq, hash FROM feed_heads WHERE matched IS NULL"
            )
        ]

    def head(self, site: str, table: str, seq: int) -> dict[str, object] | None:
        """The stored head at ``seq`` as its feed fields (without the TPM counter), or None."""
        rows = self.execute(
            "SELECT seq, hash, ts, sig, key_id FROM feed_heads"
            " WHERE site = ? AND table_id = ? AND seq = ?",
            (site, table, seq),
        )
        if not rows:
            return None
        r = rows[0]
        return {
            "table": table,
            "seq": _int(r[0]),
            "hash": str(r[1]),
            "ts": _int(r[2]),
            "sig": str(r[3]),
            "key_id": str(r[4]),
        }

    def drop_head(self, site: str, table: str, seq: int) -> None:
        self.execute(
            "DELETE FROM feed_heads WHERE site = ? AND table_id = ? AND seq = ?",
            (site, table, seq),
        )

    def highest_head(self, site: str, table: str) -> tuple[int, str]:
        """The highest stored head's (seq, hash), or (0, "")."""
        rows = self.execute(
            "SELECT seq, hash FROM feed_heads WHERE site = ? AND table_id = ?"
            " ORDER BY seq DESC LIMIT 1",
            (site, table),
        )
        return (_int(rows[0][0]), str(rows[0][1])) if rows else (0, "")

    # -- what diverged, and its acknowledgement -----------------------------------------------

    def add_evidence(
        self,
        site: str,
        table: str,
        channel: str,
        message: Mapping[str, object],
        received_ns: int,
        reason: str,
    ) -> None:
        """Keep a message that diverged from the table's record (once per seq and hash)."""
        self.execute(
            "INSERT INTO feed_evidence (site, table_id, channel, seq, hash, message, received_ns,"
            " reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (site, table_id, channel, seq, hash) DO NOTHING",
            (
                site,
                table,
                channel,
                message["seq"],
                message["hash"],
                json.dumps(dict(message), sort_keys=True, ensure_ascii=False),
                received_ns,
                reason[:2000],
            ),
        )

    def evidence(self, site: str, table: str) -> list[Evidence]:
        return [
            Evidence(
                str(r[0]),
                _int(r[1]),
                str(r[2]),
                parse_object(as_str(r[3], "a stored message")),
                _int(r[4]),
                str(r[5]),
            )
            for r in self.execute(
                "SELECT channel, seq, hash, message, received_ns, reason FROM feed_evidence"
                " WHERE site = ? AND table_id = ? ORDER BY id",
                (site, table),
            )
        ]

    def evidence_counts(self) -> dict[tuple[str, str], int]:
        return {
            (str(s), str(t)): _int(n)
            for s, t, n in self.execute(
                "SELECT site, table_id, COUNT(*) FROM feed_evidence GROUP BY site, table_id"
            )
        }

    def add_ack(self, ack: Ack) -> None:
        self.execute(
            "INSERT INTO feed_acks (ts_ns, site, table_id, forked_ns, by_name, note)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (ack.ts_ns, ack.site, ack.table, ack.forked_ns, ack.by[:200], ack.note[:2000]),
        )

    def acks(self, site: str | None = None, table: str | None = None) -> list[Ack]:
        sql = "SELECT ts_ns, site, table_id, forked_ns, by_name, note FROM feed_acks WHERE 1 = 1"
        args: list[object] = []
        for column, value in (("site", site), ("table_id", table)):
            if value is not None:
                sql += f" AND {column} = ?"
                args.append(value)
        return [
            Ack(_int(r[0]), str(r[1]), str(r[2]), _int(r[3]), str(r[4]), str(r[5]))
            for r in self.execute(sql + " ORDER BY id", tuple(args))
        ]

    def acknowledged(self, site: str, table: str, forked_ns: int) -> bool:
        """True when someone acknowledged the table's divergence of ``forked_ns``."""
        return bool(
            self.execute(
                "SELECT 1 FROM feed_acks WHERE site = ? AND table_id = ? AND forked_ns = ?",
                (site, table, forked_ns),
            )
        )

    # -- alarms -----------------------------------------------------------------------------

    def add_alarm(self, ts_ns: int, site: str, table: str, kind: str, detail: str) -> int:
        rows = self.execute(
            "INSERT INTO feed_alarms (ts_ns, site, table_id, kind, detail,"
            " count, last_ns) VALUES (?, ?, ?, ?, ?, 1, ?) RETURNING id",
            (ts_ns, site, table, kind, detail[:2000], ts_ns),
        )
        return _int(rows[0][0])

    def repeat_alarm(self, alarm_id: int, ts_ns: int) -> None:
        self.execute(
            "UPDATE feed_alarms SET count = count + 1, last_ns = ? WHERE id = ?", (ts_ns, alarm_id)
        )

    def alarms(
        self, site: str | None = None, table: str | None = None, kind: str | None = None
    ) -> list[Alarm]:
        sql = (
            "SELECT id, ts_ns, site, table_id, kind, detail, count, last_ns FROM feed_alarms"
            " WHERE 1 = 1"
        )
        args: list[object] = []
        for column, value in (("site", site), ("table_id", table), ("kind", kind)):
            if value is not None:
                sql += f" AND {column} = ?"
                args.append(value)
        return [_alarm(r) for r in self.execute(sql + " ORDER BY id", tuple(args))]

    def latest_alarm(self, site: str, table: str, kind: str) -> Alarm | None:
        """The newest stored alarm of ``kind`` for the table, or None."""
        rows = self.execute(
            "SELECT id, ts_ns, site, table_id, kind, detail, count, last_ns FROM feed_alarms"
            " WHERE site = ? AND table_id = ? AND kind = ? ORDER BY id DESC LIMIT 1",
            (site, table, kind),
        )
        if not rows:
            return None
        return _alarm(rows[0])

    def alarm_counts(self) -> dict[tuple[str, str], int]:
        return {
            (str(s), str(t)): _int(n)
            for s, t, n in self.execute(
                "SELECT site, table_id, SUM(count) FROM feed_alarms GROUP BY site, table_id"
            )
        }

    def add_alarm_ack(self, ack: AlarmAck) -> None:
        self.execute(
            "INSERT INTO feed_alarm_acks (alarm_id, ts_ns, by_name, note, count)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (alarm_id, ts_ns) DO NOTHING",
            (ack.alarm_id, ack.ts_ns, ack.by[:200], ack.note[:2000], ack.count),
        )

    def alarm_acks(self) -> dict[int, AlarmAck]:
        """The newest acknowledgement of each acknowledged alarm, by alarm id."""
        out: dict[int, AlarmAck] = {}
        for r in self.execute(
            "SELECT alarm_id, ts_ns, by_name, note, count FROM feed_alarm_acks"
            " ORDER BY alarm_id, ts_ns"
        ):
            out[_int(r[0])] = AlarmAck(_int(r[0]), _int(r[1]), str(r[2]), str(r[3]), _int(r[4]))
        return out

    def open_alarms(self, limit: int) -> tuple[list[Alarm], int]:
        """The alarms nobody acknowledged since they last fired (a repeat after an
        acknowledgement opens one again), newest first (at most
        ``limit``), and how many there are in all."""
        where = (
            " FROM feed_alarms a WHERE NOT EXISTS (SELECT 1 FROM feed_alarm_acks k"
            " WHERE k.alarm_id = a.id AND k.count >= a.count)"
        )
        total = _int(self.execute("SELECT COUNT(*)" + where)[0][0])
        return [
            _alarm(r)
            for r in self.execute(
                "SELECT a.id, a.ts_ns, a.site, a.table_id, a.kind, a.detail, a.count, a.last_ns"
                + where
                + " ORDER BY a.last_ns DESC, a.id DESC LIMIT ?",
                (limit,),
            )
        ], total

    def open_alarm_kinds(self) -> dict[tuple[str, str], set[str]]:
        """The kinds of each table's open alarms (see :meth:`open_alarms`)."""
        out: dict[tuple[str, str], set[str]] = {}
        for site, table, kind in self.execute(
            "SELECT DISTINCT a.site, a.table_id, a.kind FROM feed_alarms a WHERE NOT EXISTS"
            " (SELECT 1 FROM feed_alarm_acks k WHERE k.alarm_id = a.id AND k.count >= a.count)"
        ):
            out.setdefault((str(site), str(table)), set()).add(str(kind))
        return out

    def alarm(self, alarm_id: int) -> Alarm | None:
        rows = self.execute(
            "SELECT id, ts_ns, site, table_id, kind, detail, count, last_ns FROM feed_alarms"
            " WHERE id = ?",
            (alarm_id,),
        )
        if not rows:
            return None
        return _alarm(rows[0])

    # -- the collectors' own health -----------------------------------------------------------

    def set_health(
        self, client_id: str, site: str, connected: bool, now_ns: int, detail: str = ""
    ) -> None:
        """Record that collector ``client_id`` holds the broker (or not) at ``now_ns``;
        ``since_ns`` moves only when ``connected`` changes."""
        self.execute(
            "INSERT INTO feed_collector_health (client_id, site, connected, since_ns,"
            " updated_ns, detail) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (client_id, site)"
            " DO UPDATE SET since_ns = CASE WHEN feed_collector_health.connected ="
            " excluded.connected THEN feed_collector_health.since_ns ELSE excluded.since_ns END,"
            " connected = excluded.connected, updated_ns = excluded.updated_ns,"
            " detail = excluded.detail",
            (client_id, site, int(connected), now_ns, now_ns, detail[:500]),
        )

    def health(self) -> list[CollectorHealth]:
        return [
            CollectorHealth(str(r[0]), str(r[1]), bool(r[2]), _int(r[3]), _int(r[4]), str(r[5]))
            for r in self.execute(
                "SELECT client_id, site, connected, since_ns, updated_ns, detail"
                " FROM feed_collector_health ORDER BY site, client_id"
            )
        ]

    def save_meters(
        self, site: str, table: str, meters: Mapping[str, object], received_ns: int
    ) -> None:
        """Keep a table's meters unless those stored were folded to a later row (a retained
        message delivered again, or late, never replaces newer ones)."""
        self.execute(
            "INSERT INTO feed_meters (site, table_id, seq, received_ns, meters)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (site, table_id) DO UPDATE SET"
            " seq = excluded.seq, received_ns = excluded.received_ns, meters = excluded.meters"
            " WHERE feed_meters.seq <= excluded.seq",
            (
                site,
                table,
                int_of(meters, "seq"),
                received_ns,
                json.dumps(dict(meters), sort_keys=True, ensure_ascii=False),
            ),
        )

    def meters_of(self, site: str, table: str) -> StoredMeters | None:
        """A table's newest stored meters, or None."""
        found = self.execute(
            "SELECT meters FROM feed_meters WHERE site = ? AND table_id = ?", (site, table)
        )
        return _meters(found[0][0]) if found else None

    def meters(self) -> dict[tuple[str, str], StoredMeters]:
        """Every table's newest stored meters (the message's fields)."""
        return {
            (str(s), str(t)): _meters(m)
            for s, t, m in self.execute("SELECT site, table_id, meters FROM feed_meters")
        }

    def add_table_event(
        self, site: str, table: str, event: Mapping[str, object], received_ns: int
    ) -> bool:
        """Keep a coded event once per (table, row, code); True when it was new."""
        new = self.execute(
            "INSERT INTO feed_table_events (site, table_id, seq, code, ts, round, name,"
            " severity, details, received_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (site, table_id, seq, code) DO NOTHING RETURNING seq",
            (
                site,
                table,
                int_of(event, "seq"),
                int_of(event, "code"),
                int_of(event, "ts"),
                event["round"],
                str(event["name"]),
                str(event["severity"]),
                json.dumps(event["details"], sort_keys=True, ensure_ascii=False),
                received_ns,
            ),
        )
        return bool(new)

    def table_events(
        self, site: str, table: str, codes: tuple[int, ...] = (), limit: int = 50
    ) -> list[TableEvent]:
        """A table's newest ``limit`` events (of ``codes`` when given), newest first."""
        where = ""
        args: tuple[object, ...] = (site, table)
        if codes:
            where = f" AND code IN ({', '.join('?' for _ in codes)})"
            args += tuple(codes)
        return [
            _event(site, table, r)
            for r in self.execute(
                "SELECT seq, code, ts, round, name, severity, details FROM feed_table_events"
                f" WHERE site = ? AND table_id = ?{where} ORDER BY seq DESC, code DESC LIMIT ?",
                (*args, limit),
            )
        ]

    def meters_since(self, received_ns: int) -> list[tuple[int, str, str, StoredMeters]]:
        """Meters stored (or replaced) at or after ``received_ns``: (when, site, table, the
        message)."""
        return [
            (_int(r[0]), str(r[1]), str(r[2]), _meters(r[3]))
            for r in self.execute(
                "SELECT received_ns, site, table_id, meters FROM feed_meters"
                " WHERE received_ns >= ?",
                (received_ns,),
            )
        ]

    def table_events_since(self, received_ns: int) -> list[tuple[int, TableEvent]]:
        """Events stored at or after ``received_ns``: (when, the event)."""
        return [
            (_int(r[0]), _event(str(r[1]), str(r[2]), r[3:]))
            for r in self.execute(
                "SELECT received_ns, site, table_id, seq, code, ts, round, name, severity,"
                " details FROM feed_table_events WHERE received_ns >= ?",
                (received_ns,),
            )
        ]

    def newest_received(self) -> int:
        """The newest ``received_ns`` of the stored meters and events (0: none)."""
        found = self.execute(
            "SELECT MAX(received_ns) FROM feed_meters UNION ALL"
            " SELECT MAX(received_ns) FROM feed_table_events"
        )
        return max((_int(r[0]) for r in found if r[0] is not None), default=0)

    def newest_events(self, codes: tuple[int, ...] = ()) -> dict[tuple[str, str], TableEvent]:
        """Every table's newest event (of ``codes`` when given): by row, then by code."""
        where = f" WHERE code IN ({', '.join('?' for _ in codes)})" if codes else ""
        return {
            (str(r[0]), str(r[1])): _event(str(r[0]), str(r[1]), r[2:])
            for r in self.execute(
                "SELECT site, table_id, seq, code, ts, round, name, severity, details FROM"
                " (SELECT site, table_id, seq, code, ts, round, name, severity, details,"
                " ROW_NUMBER() OVER (PARTITION BY site, table_id ORDER BY seq DESC, code DESC)"
                f" AS n FROM feed_table_events{where}) AS e WHERE n = 1",
                tuple(codes),
            )
        }

    def newest_rows(self, site: str, table: str, limit: int) -> list[StoredRow]:
        """A table's newest ``limit`` stored rows, oldest first (the floor page)."""
        newest = self.execute(
            "SELECT seq FROM feed_rows WHERE site = ? AND table_id = ? ORDER BY seq DESC"
            " LIMIT 1 OFFSET ?",
            (site, table, max(0, limit - 1)),
        )
        after = _int(newest[0][0]) - 1 if newest else 0
        return self.rows(site, table, after_seq=after, limit=limit)

    def pending_counts(self) -> dict[tuple[str, str], int]:
        return {
            (str(s), str(t)): _int(n)
            for s, t, n in self.execute(
                "SELECT site, table_id, COUNT(*) FROM feed_pending GROUP BY site, table_id"
            )
        }


def password_warning(url: str) -> str | None:
    """A warning when a store URL carries its password (anyone on the machine reads a command
    line with ``ps``), or None."""
    parts = urlsplit(url)
    if parts.scheme in ("postgresql", "postgres") and parts.password:
        return (
            "the store URL carries a password, which any user of this machine can read with ps:"
            " put it in a password file (PGPASSFILE or ~/.pgpass) or a service file instead"
            ' (docs/feed.md "The collector")'
        )
    return None


def _redact(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        return url.replace(f":{parts.password}@", ":***@")
    return url
