"""``table-controller floor --serve ADDRESS``: the surveillance room's live page of a site, read
from the collector's store (docs/feed.md "The floor page").

Every table (game, round, state, last result, online/offline, integrity), the open alarms with
their first and last time and count, the collectors' own broker connection, and the two things
a person may do: acknowledge a forked table's divergence or an alarm, with their name (the one
they signed in with) and a note. Everything else is read-only.

Why the standard library, as the table's own monitor (controller/scoreboard/server.py): one
page, one JSON document, one server-sent event stream and four small POSTs need no framework;
the page's script and style are inline, nothing comes from anywhere else.

Threads: one polls the store every :data:`POLL_S` and publishes a snapshot when anything
changed; one per connection serves. The store connection is the poller's, shared with the
acknowledgements under a lock. Each event stream sends the whole snapshot once, then only the
tables that changed, so 1,000 tables cost the browser a row or two a second, and the page draws
one page of 100 rows (controller/feed/floorhtml.py) at a time.

A table's presence is what its own status said (``online``/``offline``) only while a collector
of its site holds the broker and said so within :data:`HEALTH_STALE_S`; otherwise nothing can
be known of it and it is ``unknown`` (a broker outage must not look like a floor gone dark).
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Final, TypedDict
from urllib.parse import parse_qs, urlsplit

from controller.config.profile import GAMES
from controller.feed.floor import (
    CLOSING_KINDS,
    HEALTH_STALE_S,
    ROUND_LOOKBACK,
    TABLE_DISABLED,
    TABLE_ENABLED,
    AckError,
    acknowledge,
    is_forked,
    meters_summary,
    row_state,
)
from controller.feed.floorauth import Session, Sessions, UserError, load_users, verify
from controller.feed.floorhtml import PAGE
from controller.feed.store import (
    AlarmAck,
    Store,
    StoredRow,
    StoreError,
    TableEvent,
    TableRecord,
)
from controller.fields.readers import as_map

log = logging.getLogger("controller.feed.floorpage")

#: How often the store is read.
POLL_S: Final = 1.0
#: Open alarms sent to the page at most (the newest; the page says how many there are).
ALARMS_SHOWN: Final = 300
#: What the tables published is read again this far back each poll (collectors' clock skew).
REREAD_S: Final = 5.0
#: Event streams at once; more are answered 503.
MAX_STREAMS: Final = 64
#: A comment on an idle event stream this often, so proxies keep it open.
KEEPALIVE_S: Final = 15.0
#: A client that stops reading is dropped after this long; a request's head must come within it.
SOCKET_TIMEOUT_S: Final = 10.0
MAX_BODY: Final = 8192
MAX_QUERY: Final = 512
MAX_NOTE: Final = 2000
#: Integrity, worst first (the page's sort and its filter).
INTEGRITY: Final = ("forked", "bad signature", "gap", "silent", "ok")
PRESENCE: Final = ("online", "offline", "unknown")
#: What a filter value may hold: a table name's characters (tc/<site>/<table>/...).
_FILTER_RE: Final = re.compile(r"[A-Za-z0-9 ._:/@-]{0,64}")
COOKIE: Final = "tc_floor"


class RequestError(Exception):
    """A request refused with its HTTP status and a sentence saying why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# -- the snapshot ------------------------------------------------------------------------------


class EventView(TypedDict):
    """A table's newest event, as the page shows it."""

    code: int
    name: str
    severity: str
    ts: int


class DisabledView(TypedDict):
    """Since when and why the host took a table out of play."""

    since: int
    reason: str


class DerivedView(TypedDict):
    """What a table publishes of itself, as the page shows it (docs/feed.md "Events and
    meters")."""

    meters: str
    event: EventView | None
    disabled: DisabledView | None


class TableView(DerivedView):
    """One table's row of the page."""

    id: str
    site: str
    table: str
    game: str
    round: int | None
    state: str
    result: str
    presence: str
    integrity: str
    seen: int | None
    rows: int
    signed: int
    forked: int | None
    fork_acked: bool
    forked_seq: int | None


class CollectorView(TypedDict):
    """A collector's broker connection, as the page shows it."""

    id: str
    site: str
    connected: bool
    fresh: bool
    since: int
    updated: int
    detail: str


class AlarmView(TypedDict):
    """An open alarm, as the page shows it."""

    id: int
    site: str
    table: str
    kind: str
    detail: str
    first: int
    last: int
    count: int


class Snapshot(TypedDict):
    """The page's data (``/api/state``, the event stream)."""

    now: int
    site: str | None
    collectors: list[CollectorView]
    broker: str
    tables: list[TableView]
    alarms: list[AlarmView]
    alarms_total: int


class MetersView(TypedDict):
    """A table's every meter: [name, lifetime, this shift] (``/api/meters``)."""

    table: str
    seq: int
    summary: str
    meters: list[list[str | int]]


@dataclass
class _Seen:
    """What was read of a table's newest rows, kept until its frontier moves."""

    frontier: int
    game: str
    state: str
    result: str


def _game(rows: list[StoredRow]) -> str:
    """The table's game: the newest row a game wrote (``paigow.*``, ``baccarat.*``, ...), not
    the newest row (after a stop that is ``app.shutdown``, after a scrub ``journal.*``)."""
    for row in reversed(rows):
        prefix = str(row["kind"]).partition(".")[0]
        if prefix in GAMES:
            return prefix
    return ""


def _result(row: Mapping[str, object]) -> str:
    kind = str(row.get("kind", ""))
    what = "voided" if kind.endswith(".voided") else "settled"
    noun = "coup" if kind.startswith("baccarat.") else "round"
    data = row.get("data")
    number = row.get("round")
    if isinstance(data, dict) and isinstance(data.get("coup"), int):
        number = data["coup"]
    return f"{noun} {number} {what}" if number is not None else what


def filter_query(query: str) -> dict[str, str]:
    """The page's filter from its query string (``table``, ``integrity``, ``kind``); anything
    else, too long, repeated or holding other characters is a :class:`RequestError` (400)."""
    if len(query) > MAX_QUERY:
        raise RequestError(400, f"the query string is longer than {MAX_QUERY} characters")
    try:
        fields = parse_qs(query, keep_blank_values=True, strict_parsing=False, max_num_fields=8)
    except ValueError as exc:
        raise RequestError(400, f"the query string cannot be read: {exc}") from None
    out: dict[str, str] = {}
    for name, values in fields.items():
        if name not in ("table", "integrity", "kind"):
            raise RequestError(400, f"unknown filter {name[:40]!r}: table, integrity or kind")
        if len(values) != 1:
            raise RequestError(400, f"the filter {name} is given more than once")
        value = values[0]
        if not _FILTER_RE.fullmatch(value):
            raise RequestError(
                400, f"the filter {name} holds characters no table or kind name has (or is long)"
            )
        if name == "integrity" and value and value not in INTEGRITY + PRESENCE:
            raise RequestError(400, f"integrity is one of {', '.join(INTEGRITY + PRESENCE)}")
        out[name] = value
    return out


def _table_query(query: str) -> str:
    """``table=SITE/TABLE`` of ``/api/meters`` (a name's characters only, as the filters)."""
    if len(query) > MAX_QUERY:
        raise RequestError(400, f"the query is longer than {MAX_QUERY} characters")
    try:
        parsed = parse_qs(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise RequestError(400, "the query is not name=value pairs") from None
    tables = parsed.get("table", [])
    if set(parsed) != {"table"} or len(tables) != 1:
        raise RequestError(400, "name one table: /api/meters?table=SITE/TABLE")
    if not _FILTER_RE.fullmatch(tables[0]) or "/" not in tables[0]:
        raise RequestError(400, "table is SITE/TABLE")
    return tables[0]


class Snapshots:
    """Reads the store into what the page shows (the poller thread's, and the acks')."""

    def __init__(self, store: Store, site: str | None) -> None:
        self.store = store
        self.site = site
        self._seen: dict[tuple[str, str], _Seen] = {}
        # what the tables publish of themselves, read again only where it arrived since
        self._derived_mark: int | None = None
        self._meters: dict[tuple[str, str], tuple[int, str]] = {}  # seq, summary
        self._games: dict[tuple[str, str], str] = {}  # the game the newest meters name
        self._newest: dict[tuple[str, str], TableEvent] = {}
        self._switch: dict[tuple[str, str], TableEvent] = {}  # newest of 190/191

    def _read_derived(self) -> None:
        """The tables' meters summaries, newest events and disable switches: all at the first
        read, then what arrived since the newest seen (the store's ``received_ns``)."""
        store = self.store
        if self._derived_mark is None:
            mark = store.newest_received()
            self._newest = store.newest_events()
            self._switch = store.newest_events((TABLE_DISABLED, TABLE_ENABLED))
            meters = store.meters_since(0)
        else:
            mark = self._derived_mark
            # re-read the last few seconds too: several collectors' clocks (each stamps what it
            # stores) may differ by that much; what is read twice changes nothing
            since = mark - int(REREAD_S * 1e9)
            for when, e in store.table_events_since(since):
                mark = max(mark, when)
                key = (e.site, e.table)
                if _later(e, self._newest.get(key)):
                    self._newest[key] = e
                if e.code in (TABLE_DISABLED, TABLE_ENABLED) and _later(e, self._switch.get(key)):
                    self._switch[key] = e
            meters = store.meters_since(since)
        for when, site, table, m in meters:
            mark = max(mark, when)
            seq = m["seq"]
            old = self._meters.get((site, table))
            if old is None or old[0] <= seq:
                self._meters[(site, table)] = (seq, meters_summary(m))
                self._games[(site, table)] = m["game"]
        self._derived_mark = mark

    def _rows_seen(self, rec: TableRecord) -> _Seen:
        key = (rec.site, rec.table)
        seen = self._seen.get(key)
        if seen is not None and seen.frontier == rec.frontier_seq:
            return seen
        rows = self.store.newest_rows(rec.site, rec.table, ROUND_LOOKBACK)
        game = _game(rows) or (seen.game if seen else "")
        state, result = "", seen.result if seen else ""
        for row in reversed(rows):
            if not state:
                state = row_state(row) or ""
            if str(row.get("kind")) in CLOSING_KINDS:
                result = _result(row)
                break
        if not state and seen is not None:
            state = seen.state
        fresh = _Seen(rec.frontier_seq, game, state, result)
        self._seen[key] = fresh
        return fresh

    def _derived(self, key: tuple[str, str]) -> DerivedView:
        """A table's meters summary, newest event and whether the host disabled it, as the
        page shows them (each meter is read on demand: :meth:`meters`)."""
        meters, newest, switch = self._meters.get(key), self._newest.get(key), self._switch.get(key)
        out: DerivedView = {
            "meters": meters[1] if meters else "",
            "event": None,
            "disabled": None,
        }
        if newest is not None:
            out["event"] = {
                "code": newest.code,
                "name": newest.name[:120],
                "severity": newest.severity,
                "ts": newest.ts,
            }
        if switch is not None and switch.code == TABLE_DISABLED:
            reason = switch.details.get("reason")
            out["disabled"] = {"since": switch.ts, "reason": str(reason)[:200] if reason else ""}
        return out

    def meters(self, site: str, table: str) -> MetersView | None:
        """A table's every meter, lifetime and this shift (the page's meters view)."""
        m = self.store.meters_of(site, table)
        if m is None:
            return None
        life, shift = m["lifetime"], m["shift"]
        return {
            "table": f"{site}/{table}",
            "seq": m["seq"],
            "summary": meters_summary(m),
            "meters": [[n, life.get(n, 0), shift.get(n, 0)] for n in sorted({*life, *shift})],
        }

    def build(self, now_ns: int | None = None) -> Snapshot:
        """The page's data: collectors, tables, open alarms."""
        now = time.time_ns() if now_ns is None else now_ns
        store = self.store
        collectors = [h for h in store.health() if self.site is None or h.site == self.site]
        stale_ns = int(HEALTH_STALE_S * 1e9)
        holding = {h.site for h in collectors if h.connected and now - h.updated_ns <= stale_ns}
        pending = store.pending_counts()
        alarms, total = store.open_alarms(ALARMS_SHOWN)
        open_kinds = store.open_alarm_kinds()
        # what the tables publish of themselves (docs/feed.md "Events and meters")
        self._read_derived()
        tables: list[TableView] = []
        for rec in store.tables():
            if self.site is not None and rec.site != self.site:
                continue
            key = (rec.site, rec.table)
            seen = self._rows_seen(rec)
            kinds = open_kinds.get(key, set())
            forked = is_forked(store, rec)
            if forked:
                integrity = "forked"
            elif "bad-signature" in kinds:
                integrity = "bad signature"
            elif pending.get(key, 0) or "gap" in kinds:
                integrity = "gap"
            elif rec.silent:
                integrity = "silent"
            else:
                integrity = "ok"
            presence = rec.status if rec.status in ("online", "offline") else "unknown"
            if rec.site not in holding:
                presence = "unknown"
            tables.append(
                {
                    "id": f"{rec.site}/{rec.table}",
                    "site": rec.site,
                    "table": rec.table,
                    # no game row among its newest (started and idle): its meters name it
                    "game": seen.game or self._games.get(key, ""),
                    "round": rec.last_round,
                    "state": seen.state,
                    "result": seen.result,
                    "presence": presence,
                    "integrity": integrity,
                    "seen": rec.last_seen_ns,
                    "rows": rec.frontier_seq,
                    "signed": rec.signed_seq,
                    "forked": rec.forked_ns if forked else None,
                    # acknowledged: the record still ends where the table diverged
                    "fork_acked": rec.forked_ns is not None and not forked,
                    "forked_seq": rec.forked_seq if forked else None,
                    **self._derived(key),
                }
            )
        return {
            "now": now,
            "site": self.site,
            "collectors": [
                {
                    "id": h.client_id,
                    "site": h.site,
                    "connected": h.connected,
                    "fresh": now - h.updated_ns <= stale_ns,
                    "since": h.since_ns,
                    "updated": h.updated_ns,
                    "detail": h.detail,
                }
                for h in collectors
            ],
            "broker": "connected" if holding else ("lost" if collectors else "no collector"),
            "tables": tables,
            "alarms": [
                {
                    "id": a.id,
                    "site": a.site,
                    "table": a.table,
                    "kind": a.kind,
                    "detail": a.detail[:300],
                    "first": a.ts_ns,
                    "last": a.last_ns,
                    "count": a.count,
                }
                for a in alarms
            ],
            "alarms_total": total,
        }


def _unstamped(data: Snapshot | None) -> dict[str, object]:
    """The snapshot but its time (what changed is what a new version is published for)."""
    return {} if data is None else {k: v for k, v in data.items() if k != "now"}


def _later(e: TableEvent, than: TableEvent | None) -> bool:
    """``e`` is a later event of its table than ``than``: by row, then by code."""
    return than is None or (e.seq, e.code) > (than.seq, than.code)


# -- what the poller publishes -----------------------------------------------------------------


@dataclass
class Published:
    """The newest snapshot and its version; streams wait on it."""

    version: int = 0
    data: Snapshot | None = None  # None: the store not read yet
    error: str = ""
    cond: threading.Condition = field(default_factory=threading.Condition)

    def latest(self) -> tuple[int, Snapshot | None, str]:
        with self.cond:
            return self.version, self.data, self.error

    def wait_newer(self, version: int, timeout: float) -> tuple[int, Snapshot | None, str]:
        with self.cond:
            self.cond.wait_for(lambda: self.version != version, timeout)
            return self.version, self.data, self.error


class FloorPage:
    """The page server: the store's poller, the sessions, the HTTP server."""

    def __init__(
        self,
        store_url: str,
        address: tuple[str, int],
        users_path: Path | None,
        *,
        site: str | None = None,
        poll_s: float = POLL_S,
    ) -> None:
        self.store_url = store_url
        self.users_path = users_path
        self.site = site
        self.poll_s = poll_s
        self.sessions = Sessions()
        self.published = Published()
        self.lock = threading.Lock()  # the store: the poller and the acknowledgements
        self._store: Store | None = None
        self._snapshots: Snapshots | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._streams = 0
        self._streams_lock = threading.Lock()
        self.httpd = _Server(self, address)
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        host = str(host)
        return f"http://{'[' + host + ']' if ':' in host else host}:{port}"

    def start(self) -> None:
        self.refresh()
        for target, name in ((self._poll, "floor-poll"), (self._serve, "floor-http")):
            t = threading.Thread(target=target, name=name, daemon=True)
            t.start()
            self._threads.append(t)

    def _serve(self) -> None:
        self.httpd.serve_forever(poll_interval=0.5)

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._threads:  # shutdown() waits for a serve_forever that must have started
            self.httpd.shutdown()
        self.httpd.server_close()
        with self.published.cond:
            self.published.cond.notify_all()
        for t in self._threads:
            t.join(5.0)
        with self.lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    @property
    def closing(self) -> bool:
        return self._stop.is_set()

    # -- the store ------------------------------------------------------------------------

    def _snap(self) -> Snapshots:
        if self._snapshots is None:
            self._store = Store.open(self.store_url)
            self._snapshots = Snapshots(self._store, self.site)
        return self._snapshots

    def _drop_store(self) -> None:
        if self._store is not None:
            self._store.close()
        self._store = None
        self._snapshots = None

    def refresh(self) -> None:
        """Read the store; publish a new version when anything but the time changed."""
        error = ""
        data: Snapshot | None = None
        with self.lock:
            try:
                snaps = self._snap()
                data = snaps.build()
                snaps.store.rollback()  # end the read transaction: the next read sees new rows
            except StoreError as exc:
                error = f"the store does not answer: {exc}"
                self._drop_store()
        pub = self.published
        with pub.cond:
            old = _unstamped(pub.data)
            new = _unstamped(data) if data is not None else old
            if data is not None:
                pub.data = data
            if new != old or error != pub.error or pub.version == 0:
                pub.version += 1
                pub.error = error
                pub.cond.notify_all()

    def _poll(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.poll_s)
            self._wake.clear()
            if self._stop.is_set():
                return
            self.refresh()

    # -- acknowledgements -----------------------------------------------------------------

    def acknowledge(self, who: str, body: Mapping[str, object]) -> dict[str, object]:
        """An acknowledgement by the signed-in ``who``: ``{"alarm": ID, "note": TEXT}`` or
        ``{"table": "SITE/TABLE", "note": TEXT}`` (a forked table's divergence)."""
        note = body.get("note")
        if not isinstance(note, str) or not note.strip():
            raise RequestError(400, "an acknowledgement needs a note saying what was found")
        if len(note) > MAX_NOTE:
            raise RequestError(400, f"the note is longer than {MAX_NOTE} characters")
        alarm, table = body.get("alarm"), body.get("table")
        if (alarm is None) == (table is None):
            raise RequestError(400, 'name either an "alarm" (its number) or a "table" (SITE/TABLE)')
        now = time.time_ns()
        with self.lock:
            try:
                store = self._snap().store
                if alarm is not None:
                    if isinstance(alarm, bool) or not isinstance(alarm, int) or alarm < 1:
                        raise RequestError(400, '"alarm" is an alarm\'s number')
                    found = store.alarm(alarm)
                    if found is None or (self.site is not None and found.site != self.site):
                        raise RequestError(404, f"no alarm {alarm}")
                    store.add_alarm_ack(AlarmAck(alarm, now, who, note.strip(), found.count))
                    store.commit()
                    answer: dict[str, object] = {"acknowledged": "alarm", "alarm": alarm}
                else:
                    if not isinstance(table, str) or "/" not in table or len(table) > 200:
                        raise RequestError(400, '"table" is SITE/TABLE')
                    site, _, name = table.partition("/")
                    if self.site is not None and site != self.site:
                        raise RequestError(404, f"no table {table} on this page")
                    try:
                        ack = acknowledge(store, name, who, note, site=site, now_ns=now)
                    except AckError as exc:
                        raise RequestError(409, str(exc)) from None
                    answer = {"acknowledged": "table", "table": f"{ack.site}/{ack.table}"}
            except StoreError as exc:
                self._drop_store()
                raise RequestError(503, f"the store does not answer: {exc}") from None
            except RequestError:
                if self._store is not None:
                    self._store.rollback()
                raise
        answer["by"] = who
        self._wake.set()
        return answer

    def table_meters(self, table: str) -> MetersView:
        """``/api/meters?table=SITE/TABLE``: that table's every meter (read-only)."""
        site, _, name = table.partition("/")
        if not name or (self.site is not None and site != self.site):
            raise RequestError(404, f"no table {table} on this page")
        with self.lock:
            try:
                snaps = self._snap()
                found = snaps.meters(site, name)
                snaps.store.rollback()
            except StoreError as exc:
                self._drop_store()
                raise RequestError(503, f"the store does not answer: {exc}") from None
        if found is None:
            raise RequestError(404, f"no meters from {table}")
        return found

    def users(self) -> dict[str, str]:
        if self.users_path is None:
            return {}
        return load_users(self.users_path)

    def stream_slot(self, take: bool) -> bool:
        with self._streams_lock:
            if take:
                if self._streams >= MAX_STREAMS:
                    return False
                self._streams += 1
            else:
                self._streams -= 1
            return True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, page: FloorPage, address: tuple[str, int]) -> None:
        self.page = page
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)

    def handle_error(self, request: object, client_address: object) -> None:
        log.debug("floor page: error serving %s", client_address, exc_info=True)


_HEADERS: Final = (
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
    ("Cache-Control", "no-store"),
    (
        "Content-Security-Policy",
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline';"
        " connect-src 'self'; img-src data:; form-action 'none'; frame-ancestors 'none'",
    ),
)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    timeout = SOCKET_TIMEOUT_S

    # -- plumbing -------------------------------------------------------------------------

    def _send(
        self, code: int, ctype: str, body: bytes, extra: tuple[tuple[str, str], ...] = ()
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (*_HEADERS, *extra):
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, code: int, obj: object, extra: tuple[tuple[str, str], ...] = ()) -> None:
        self._send(code, "application/json", json.dumps(obj).encode(), extra)

    def _refuse(self, exc: RequestError) -> None:
        self._json(exc.status, {"error": exc.message})

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # the standard library's own refusals (a bad request line, a head too long): JSON too
        self.close_connection = True
        try:
            self._json(code, {"error": message or self.responses.get(code, ("",))[0]})
        except OSError:
            pass

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        log.debug("floor page: %s " + format, self.address_string(), *args)

    def version_string(self) -> str:
        return "table-controller-floor"

    def _cookie(self) -> str | None:
        for part in (self.headers.get("Cookie") or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE:
                return value
        return None

    def _peer(self) -> str:
        return str(self.client_address[0])

    # -- GET --------------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        page = self.server.page
        parts = urlsplit(self.path)
        try:
            if parts.path == "/":
                filter_query(parts.query)
                self._send(200, "text/html; charset=utf-8", PAGE)
            elif parts.path == "/api/state":
                filter_query(parts.query)
                _, data, error = page.published.latest()
                state: dict[str, object] = dict(data) if data is not None else {}
                state["error"] = error
                self._json(200, state)
            elif parts.path == "/api/session":
                session = page.sessions.get(self._cookie())
                self._json(
                    200,
                    {
                        "name": session.name if session else None,
                        "csrf": session.csrf if session else None,
                        "logins": page.users_path is not None,
                    },
                )
            elif parts.path == "/api/meters":
                self._json(200, page.table_meters(_table_query(parts.query)))
            elif parts.path == "/events":
                filter_query(parts.query)
                self._events()
            else:
                raise RequestError(404, "no such page: the floor page is /")
        except RequestError as exc:
            self._refuse(exc)

    def _events(self) -> None:
        page = self.server.page
        if not page.stream_slot(True):
            raise RequestError(503, "too many pages open on this server")
        try:
            self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Accel-Buffering", "no")  # nginx: do not hold the stream
            for name, value in _HEADERS[:3]:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(b"retry: 2000\n\n")
            sent: dict[str, TableView] = {}
            alarms_sent: object = None
            version = -1
            while not page.closing:
                newer, data, error = page.published.wait_newer(version, KEEPALIVE_S)
                if newer == version:
                    self.wfile.write(b": keepalive\n\n")
                    self.wfile.flush()
                    continue
                version = newer
                tables = data["tables"] if data is not None else []
                ids = {t["id"] for t in tables}
                changed = [t for t in tables if sent.get(t["id"]) != t]
                gone = [i for i in sent if i not in ids]
                update: dict[str, object] = {
                    "full": not sent,
                    "now": data["now"] if data is not None else None,
                    "error": error,
                    "collectors": data["collectors"] if data is not None else [],
                    "broker": data["broker"] if data is not None else None,
                    "tables": changed,
                    "gone": gone,
                    "count": len(tables),
                }
                alarms = (
                    (data["alarms"], data["alarms_total"]) if data is not None else (None, None)
                )
                if alarms != alarms_sent:
                    update["alarms"], update["alarms_total"] = alarms
                    alarms_sent = alarms
                for t in changed:
                    sent[t["id"]] = t
                for i in gone:
                    del sent[i]
                body = json.dumps(update, separators=(",", ":"))
                self.wfile.write(f"event: update\nid: {version}\ndata: {body}\n\n".encode())
                self.wfile.flush()
        except (OSError, ValueError):
            pass  # the browser went away, or stopped reading for SOCKET_TIMEOUT_S
        finally:
            page.stream_slot(False)

    # -- POST -------------------------------------------------------------------------------

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        try:
            body = self._body()
            if path == "/api/login":
                self._login(body)
            elif path == "/api/logout":
                self._session_for_post()
                self.server.page.sessions.drop(self._cookie())
                self._json(200, {"signed_out": True}, ((("Set-Cookie", self._set_cookie("")),)))
            elif path == "/api/ack":
                session = self._session_for_post()
                self._json(200, self.server.page.acknowledge(session.name, body))
            else:
                raise RequestError(404, "no such action")
        except RequestError as exc:
            self.close_connection = True
            self._refuse(exc)

    def _body(self) -> dict[str, object]:
        """The POST's JSON object; anything else is refused, and so is a request another site
        could have made a browser send (no JSON type, or another ``Origin``)."""
        origin = self.headers.get("Origin")
        if origin is not None:
            host = self.headers.get("X-Forwarded-Host") or self.headers.get("Host") or ""
            if urlsplit(origin).netloc != host.split(",")[0].strip():
                raise RequestError(403, "this action is taken only from the floor page itself")
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise RequestError(415, "the body must be JSON (Content-Type: application/json)")
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            raise RequestError(411, "a POST needs its Content-Length")
        try:
            length = int(length_text)
        except ValueError:
            raise RequestError(400, "Content-Length is not a number") from None
        if length < 0 or length > MAX_BODY:
            raise RequestError(413, f"the body is longer than {MAX_BODY} bytes")
        raw = self.rfile.read(length)
        if len(raw) != length:
            raise RequestError(400, "the body is shorter than its Content-Length")
        try:
            body: object = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise RequestError(400, f"the body is not JSON: {str(exc)[:120]}") from None
        if not isinstance(body, dict):
            raise RequestError(400, "the body must be a JSON object")
        return as_map(body, "the body")  # a JSON object's keys are strings

    def _session_for_post(self) -> Session:
        session = self.server.page.sessions.get(self._cookie())
        if session is None:
            raise RequestError(401, "sign in first: only a signed-in person acknowledges")
        token = self.headers.get("X-CSRF-Token") or ""
        if not hmac.compare_digest(token.encode(), session.csrf.encode()):
            raise RequestError(403, "this action is taken only from the floor page itself")
        return session

    def _set_cookie(self, token: str) -> str:
        secure = (self.headers.get("X-Forwarded-Proto") or "").lower() == "https"
        age = "" if token else "; Max-Age=0"
        return (
            f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"
            + ("; Secure" if secure else "")
            + age
        )

    def _login(self, body: Mapping[str, object]) -> None:
        page = self.server.page
        name, password = body.get("name"), body.get("password")
        if not isinstance(name, str) or not isinstance(password, str):
            raise RequestError(400, 'sign in with a "name" and a "password"')
        if page.users_path is None:
            raise RequestError(403, "no user list: this page was started without --users")
        peer = self._peer()
        if page.sessions.locked_out(peer):
            raise RequestError(429, "too many wrong passwords: wait a minute")
        try:
            users = page.users()
        except UserError as exc:
            raise RequestError(503, str(exc)) from None
        if not verify(users, name, password):
            page.sessions.failed(peer)
            log.warning("floor page: a wrong name or password from %s", peer)
            raise RequestError(401, "wrong name or password")
        token, session = page.sessions.create(name)
        log.info("floor page: %s signed in from %s", name, peer)
        self._json(
            200, {"name": name, "csrf": session.csrf}, (("Set-Cookie", self._set_cookie(token)),)
        )

    def do_PUT(self) -> None:
        self._json(405, {"error": "the floor page takes GET, and POST for its actions"})

    do_DELETE = do_PATCH = do_OPTIONS = do_PUT


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[V6]:PORT`` or ``:PORT`` (all addresses)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        raise ValueError(f"{text!r}: write HOST:PORT (127.0.0.1:8080, [::1]:8080, :8080)")
    host = host.strip("[]") or "0.0.0.0"
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"{text!r}: the port is not a number") from None
    if not 0 <= number <= 65535:
        raise ValueError(f"{text!r}: the port is not 0-65535")
    return host, number
