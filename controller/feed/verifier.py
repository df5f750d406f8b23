"""The collector's judgement: each feed message checked against what was already received,
then stored or refused with an alarm (docs/feed.md "What the collector checks").

- A row's ``hash`` must be what its fields and ``prev`` compute (chain.py), and its ``prev``
  the stored hash of the row before: otherwise the row breaks the chain (``chain``).
- A row at a seq already stored is a duplicate when its hash is the same (dropped quietly:
  delivery is at least once) and a ``fork`` when it differs.
- A row that arrives before the rows it follows waits in ``feed_pending``; when the missing rows
  have not come after ``gap_timeout_s`` the ``gap`` is alarmed and the rows after it are stored,
  the first flagged ``gap_before`` (a late arrival still fills the hole).
- A head must be signed by the table's registered key (``bad-signature``); it is judged against
  the stored record, not by the order it arrives in: another hash than the stored row at its seq
  is a ``rollback`` when a higher head was already received and a ``fork`` otherwise, another hash
  at a seen head a ``fork``; a lower head that matches, or whose row is not stored yet, is not.
- After a ``fork`` or ``rollback`` (or a right-hashed row at the next seq with another ``prev``)
  the table is diverged (docs/feed.md "A diverged table"): the history verified first stays its
  record, and what diverges goes to ``feed_evidence``, never to its rows or heads; its rows are
  no longer held for a gap, so a gap timeout never joins the two histories.
- A table with no registered key is an ``unknown-table``; a payload that is not a feed message is
  ``malformed``; a table that sends nothing that verifies for ``silence_s`` is ``silent``.
- "Last seen" is the time of the newest message that proved the table alive: a row stored on
  the chain, a newly stored head whose signature verifies, or an ``online`` status (docs/design.md
  "Host feed (MQTT)": the publisher repeats it every minute; only the table's own certificate
  may publish on its topics, by the broker's TLS and ACL, so an idle table that is connected is
  heard, and is not alarmed every night). A refused, held or duplicate message does not count:
  a forged head or a replay never keeps a silent table looking alive; ``offline`` (the will)
  does not either.

Nothing here touches the network: the runner hands messages in (:meth:`Verifier.handle`) and
commits the store after a batch. Bad input is never an exception out of ``handle``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

from controller.feed.alarms import AlarmEvent, alarm_topic
from controller.feed.floor import ROUND_LOOKBACK, round_in_progress
from controller.feed.keys import KeyRing
from controller.feed.messages import (
    HOST_CHANNELS,
    HeadMessage,
    MessageError,
    RowMessage,
    as_meters,
    as_row,
    decode_event,
    decode_head,
    decode_meters,
    decode_row,
    decode_status,
    parse_topic,
    went_back,
)
from controller.feed.store import Store, StoreError, TableRecord
from controller.journal.chain import ChainError, row_hash_and_data
from controller.journal.heads import verify_head

#: Alarm kinds (docs/feed.md "Alarms").
ALARM_KINDS: Final = (
    "gap",
    "fork",
    "rollback",
    "chain",
    "bad-signature",
    "unknown-table",
    "malformed",
    "silent",
    "offline-in-round",
    "counter-reused",
    "counter-back",
    "counter-gap",
    "meters-back",
)
UNKNOWN: Final = "?"


@dataclass(frozen=True)
class VerifierSettings:
    """How long a gap may stay open, silence may last, and one alarm absorbs its repeats."""

    site: str
    gap_timeout_s: float = 60.0
    silence_s: float = 900.0
    coalesce_s: float = 60.0


#: Counter values remembered per table (a head about every minute: days of them).
COUNTERS_KEPT: Final = 8192


@dataclass
class _Table:
    rec: TableRecord
    pending: dict[int, RowMessage] = field(default_factory=dict)
    gap_since_ns: int | None = None
    gap_alarmed: bool = False
    heads_waiting: dict[int, str] = field(default_factory=dict)
    #: The TPM counter (docs/feed.md "The TPM counter"): the heads seen by value (the newest
    #: COUNTERS_KEPT), the highest value and its head's seq, values skipped (first, last, since).
    counters: dict[int, tuple[int, str]] = field(default_factory=dict)
    counter_high: tuple[int, int] | None = None
    counter_gaps: list[tuple[int, int, int]] = field(default_factory=list)
    #: The alarm kinds raised for the table's current divergence (each raised once).
    diverged_kinds: set[str] = field(default_factory=set)


@dataclass
class _Open:
    """An alarm absorbing its repeats: its stored id, when it was last raised, how many times,
    and how many of those were sent out (``events``) and when."""

    alarm_id: int
    detail: str
    last_ns: int
    count: int = 1
    sent_count: int = 1
    sent_ns: int = 0


@dataclass
class Counters:
    """What the verifier did since it started (printed by the collector)."""

    messages: int = 0
    rows_stored: int = 0
    duplicates: int = 0
    heads_stored: int = 0
    refused: int = 0
    alarms: int = 0
    evidence: int = 0
    meters_stored: int = 0
    events_stored: int = 0
    #: host commands and their replies seen on the site's topics (passed over, never stored)
    host_messages: int = 0


class Verifier:
    """Checks and stores one site's messages; keeps each table's chain position in memory and
    in the store (so a restarted collector resumes exactly)."""

    def __init__(
        self,
        store: Store,
        keys: KeyRing,
        settings: VerifierSettings,
        *,
        on_alarm: Callable[[str], None] = print,
        wall_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        self.store = store
        self.keys = keys
        self.settings = settings
        self._on_alarm = on_alarm
        self._wall_ns = wall_ns
        self._alarm_topic = alarm_topic(settings.site)
        self.counters = Counters()
        #: Silence and gaps are timed from here at the earliest: what a collector that was
        #: away receives first is what the broker kept for it, not the tables' silence.
        self.started_ns = wall_ns()
        self._tables: dict[str, _Table] = {}
        self._open_alarms: dict[tuple[str, str], _Open] = {}
        #: Alarms raised since the last :meth:`take_events` (sent out after the commit).
        self.events: list[AlarmEvent] = []
        self._dirty: set[str] = set()
        #: The tables this verifier times (gaps, silence): None, every table; with many
        #: collectors, the ones this instance leases (the others are another's to alarm).
        self.scope: set[str] | None = None
        self.reload()

    # -- state ------------------------------------------------------------------------------

    def reload(self) -> None:
        """(Re)read every table's position from the store: at start, and after a failed commit
        (what was in memory may be ahead of what is stored)."""
        site = self.settings.site
        self._tables = {rec.table: _Table(rec) for rec in self.store.tables() if rec.site == site}
        for t in self._tables.values():
            if t.rec.forked_ns is not None:  # diverged before: alarmed then, evidence now
                t.diverged_kinds = {"fork", "rollback"}
        self._dirty.clear()
        self._open_alarms.clear()  # a rolled-back batch may have held the alarm rows
        self.events.clear()  # and raised these: the retry raises them again
        now = self._wall_ns()
        for s, table, row, received in self.store.pending():
            if s == site and table in self._tables:
                t = self._tables[table]
                held = as_row(row)  # stored as it was verified: read back with its types
                t.pending[held["seq"]] = held
                t.gap_since_ns = max(min(t.gap_since_ns or now, received), self.started_ns)
        for s, table, seq, hash_ in self.store.unmatched_heads():
            if s == site and table in self._tables:
                self._tables[table].heads_waiting[seq] = hash_

    def _table(self, table: str) -> _Table:
        t = self._tables.get(table)
        if t is None:
            t = self._tables[table] = _Table(TableRecord(self.settings.site, table))
            self._dirty.add(table)
        return t

    def flush(self) -> None:
        """Write every changed table position (the runner calls it before committing)."""
        self.store.save_tables(self._tables[name].rec for name in sorted(self._dirty))
        self._dirty.clear()

    def table_records(self) -> list[TableRecord]:
        return [t.rec for t in self._tables.values()]

    # -- alarms -----------------------------------------------------------------------------

    def alarm(self, table: str, kind: str, detail: str) -> None:
        """Store and print an alarm; repeats of one kind for one table within ``coalesce_s``
        raise the stored alarm's count instead of adding rows (a rolled-back table would
        otherwise raise one per row)."""
        now = self._wall_ns()
        self.counters.alarms += 1
        key = (table, kind)
        open_ = self._open_alarms.get(key)
        window = int(self.settings.coalesce_s * 1e9)
        if open_ is None:
            # raised before this verifier's memory (a restart, or another collector that
            # served the table until it stopped): the stored alarm absorbs the repeat
            stored = self.store.latest_alarm(self.settings.site, table, kind)
            if stored is not None and now - stored.last_ns < window:
                open_ = self._open_alarms[key] = _Open(
                    stored.id, stored.detail, stored.last_ns, stored.count, stored.count, now
                )
        if open_ is not None and now - open_.last_ns < window:
            self.store.repeat_alarm(open_.alarm_id, now)
            open_.last_ns = now
            open_.count += 1
            return
        alarm_id = self.store.add_alarm(now, self.settings.site, table, kind, detail)
        self._open_alarms[key] = _Open(alarm_id, detail, now, sent_ns=now)
        self.events.append(AlarmEvent(self.settings.site, table, kind, detail, now))
        stamp = datetime.fromtimestamp(now / 1e9, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self._on_alarm(f"ALARM {stamp} {self.settings.site}/{table} {kind}: {detail}")

    def _repeats(self, now: int) -> None:
        """An alarm raised again since it was last sent out: sent again with its count, at most
        once a coalescing window (a rolled-back table raises one per row: the pager hears of
        it once a minute, not seventy times)."""
        window = int(self.settings.coalesce_s * 1e9)
        for (table, kind), o in self._open_alarms.items():
            if o.count > o.sent_count and now - o.sent_ns >= window:
                o.sent_count, o.sent_ns = o.count, now
                self.events.append(
                    AlarmEvent(self.settings.site, table, kind, o.detail, o.last_ns, o.count)
                )

    def take_events(self) -> list[AlarmEvent]:
        """The alarms raised since the last call (the runner sends them once committed)."""
        out, self.events = self.events, []
        return out

    # -- messages ---------------------------------------------------------------------------

    def handle(self, topic: str, payload: bytes) -> None:
        """Check one message and store it or refuse it with an alarm; never raises for bad
        input (the store's own errors do propagate: the runner retries the batch)."""
        if topic == self._alarm_topic:
            return  # the collectors' own alarms (docs/feed.md "Alarms out"), not a table's
        self.counters.messages += 1
        try:
            where = parse_topic(topic)
        except MessageError as exc:
            self._refuse(UNKNOWN, "malformed", str(exc))
            return
        if where.site != self.settings.site:
            return  # not subscribed to; a broker's stray delivery
        if where.channel in HOST_CHANNELS:
            self.counters.host_messages += 1
            return  # the host's commands and the table's replies: not the table's record
        table = where.table
        if self.keys.get(table) is None:
            problem = self.keys.problems.get(table)
            self._refuse(
                table,
                "unknown-table",
                problem or f"no key {table}.pem in {self.keys.directory} (not commissioned)",
            )
            return
        try:
            if where.channel in ("events", "meters"):
                self._derived(table, where.channel, payload)
            elif where.channel == "rows":
                self._row(table, decode_row(payload))
            elif where.channel == "heads":
                self._head(table, decode_head(payload))
            else:
                status = decode_status(payload)
                t = self._table(table)
                if status["state"] == "offline" and t.rec.status != "offline":
                    self._offline(t)
                t.rec.status, t.rec.status_ts = status["state"], status["ts"]
                self._dirty.add(table)
                if status["state"] == "online":
                    self._seen(table)
        except MessageError as exc:
            self._refuse(table, "malformed", f"{where.channel}: {exc}")
        except StoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - one message never stops the collector
            self._refuse(table, "malformed", f"{where.channel}: {type(exc).__name__}")

    def _derived(self, table: str, channel: str, payload: bytes) -> None:
        """A meters or events message: the table's word (docs/feed.md "Events and meters"),
        checked for its shape and that it names the table of its topic, then kept (the newest
        meters; each event once). It proves nothing about the table's record and does not count
        as the table heard: only the signed rows and heads do."""
        if channel == "events":
            event = decode_event(payload)
            self._names(table, event["table"])
            if self.store.add_table_event(self.settings.site, table, event, self._wall_ns()):
                self.counters.events_stored += 1
            return
        meters = decode_meters(payload)
        self._names(table, meters["table"])
        now = self._wall_ns()
        stored = self.store.meters_of(self.settings.site, table)
        before = None if stored is None else as_meters(stored)
        if before is not None and before["seq"] < meters["seq"]:
            back = went_back(meters["lifetime"], before["lifetime"])
            if back:  # a lifetime meter never goes back (docs/meters.md)
                self.alarm(
                    table,
                    "meters-back",
                    f"meters at row {meters['seq']} below those at row {before['seq']}: "
                    + ", ".join(back[:10]),
                )
        self.store.save_meters(self.settings.site, table, meters, now)
        self.counters.meters_stored += 1

    @staticmethod
    def _names(table: str, named: str) -> None:
        """A derived message names the table of its topic, or it is malformed."""
        if named != table:
            raise MessageError(f"names table {named!r:.40} on {table!r}'s topic")

    def _offline(self, t: _Table) -> None:
        """The table's ``offline`` (its will, or its clean stop) while its stored rows show a
        round under way: the round's end is not on the feed."""
        rec = t.rec
        rows = self.store.rows(rec.site, rec.table, max(0, rec.frontier_seq - ROUND_LOOKBACK))
        rnd = round_in_progress(rows)
        if rnd is not None:
            self.alarm(
                rec.table,
                "offline-in-round",
                f"went offline during round {rnd} (stored rows to {rec.frontier_seq})",
            )

    def refuse_malformed(self, topic: str, detail: str) -> None:
        """A message the store could not hold (the runner isolated it): ``malformed`` for the
        table its topic names."""
        try:
            table = parse_topic(topic).table
        except MessageError:
            table = UNKNOWN
        self._refuse(table, "malformed", detail)

    def _refuse(self, table: str, kind: str, detail: str) -> None:
        self.counters.refused += 1
        self.alarm(table, kind, detail)

    def _seen(self, table: str) -> None:
        """The table proved it is alive (a verified row or head, an online status): last seen,
        not silent."""
        t = self._table(table)
        t.rec.last_seen_ns = self._wall_ns()
        if t.rec.silent:
            t.rec.silent = False
        self._dirty.add(table)

    # -- rows -------------------------------------------------------------------------------

    def _row(self, table: str, row: RowMessage) -> None:
        t = self._table(table)
        seq = row["seq"]
        try:
            computed, data_text = row_hash_and_data(row["prev"], row)
        except ChainError as exc:
            self._refuse(table, "malformed", f"row {seq}: {exc}")
            return
        if computed != row["hash"]:
            self._refuse(
                table,
                "chain",
                f"row {seq}: its hash does not match its content (changed after it was written)",
            )
            return
        rec = t.rec
        if rec.frontier_seq and seq <= rec.frontier_seq:
            self._old_row(t, row)
            return
        held = t.pending.get(seq)
        if held is not None:
            if held["hash"] == row["hash"]:
                self.counters.duplicates += 1
            else:
                self._diverge(
                    t,
                    "rows",
                    row,
                    "fork",
                    f"row {seq} arrived twice with different hashes"
                    f" ({held['hash'][:12]}.. then {row['hash'][:12]}..)",
                )
            return
        if self._follows(t, row):
            self._store_row(t, row, gap_before=False, data_text=data_text)
            self._seen(table)
            self._drain(t)
        elif self._forked(t):
            # a diverged table: only rows that extend its record in order are its rows; the
            # others are the other history's, kept apart and never held for a gap to join
            self._evidence(t, "rows", row, "does not extend the table's record")
        elif rec.frontier_seq and seq == rec.frontier_seq + 1:
            # its hash is right for its content: a second successor of the stored row, so
            # another history (rows held after it would chain on it: no gap may join them)
            self._diverge(
                t,
                "rows",
                row,
                "chain",
                f"row {seq} does not follow the stored row"
                f" {rec.frontier_seq}: its prev {row['prev'][:12]}.."
                f" is not {rec.frontier_hash[:12]}..",
            )
        else:
            self._hold(t, row)

    def _follows(self, t: _Table, row: RowMessage) -> bool:
        """True when ``row`` extends the stored chain (or starts it: seq 1)."""
        rec = t.rec
        if not rec.frontier_seq:
            # the first row of a journal; its prev is the genesis or, after a revision-1
            # journal, that journal's head (docs/journal.md "Row")
            return row["seq"] == 1
        return row["seq"] == rec.frontier_seq + 1 and row["prev"] == rec.frontier_hash

    def _store_row(
        self, t: _Table, row: RowMessage, *, gap_before: bool, data_text: str | None = None
    ) -> None:
        rec = t.rec
        self.store.add_row(rec.site, rec.table, row, self._wall_ns(), gap_before, data_text)
        self.counters.rows_stored += 1
        rec.frontier_seq, rec.frontier_hash = row["seq"], row["hash"]
        if row["round"] is not None:
            rec.last_round = row["round"]
        rec.last_row_ts = row["ts"]
        self._dirty.add(rec.table)
        waiting = t.heads_waiting.pop(rec.frontier_seq, None)
        if waiting is not None:
            self._match_head(t, rec.frontier_seq, waiting, row["hash"])

    def _hold(self, t: _Table, row: RowMessage) -> None:
        seq = row["seq"]
        t.pending[seq] = row
        self.store.add_pending(t.rec.site, t.rec.table, row, self._wall_ns())
        if t.gap_since_ns is None:
            t.gap_since_ns = self._wall_ns()

    def _drain(self, t: _Table) -> None:
        """Store held rows that now follow the chain, in order."""
        rec = t.rec
        while rec.frontier_seq + 1 in t.pending:
            row = t.pending.pop(rec.frontier_seq + 1)
            self.store.drop_pending(rec.site, rec.table, row["seq"])
            if row["prev"] != rec.frontier_hash:
                self._refuse(
                    rec.table,
                    "chain",
                    f"row {row['seq']} does not follow row {rec.frontier_seq}: prev differs",
                )
                break
            self._store_row(t, row, gap_before=False)
        if not t.pending:
            t.gap_since_ns, t.gap_alarmed = None, False
        elif rec.frontier_seq + 1 not in t.pending:
            # another hole further on: its clock starts now
            t.gap_since_ns, t.gap_alarmed = self._wall_ns(), False

    def _old_row(self, t: _Table, row: RowMessage) -> None:
        """A row at or below the frontier: a duplicate, a fork, or a late row filling a gap
        that was passed over."""
        rec = t.rec
        seq = row["seq"]
        stored = self.store.row_link(rec.site, rec.table, seq)
        if stored is not None:
            if stored[1] == row["hash"]:
                self.counters.duplicates += 1
            else:
                self._diverge(
                    t,
                    "rows",
                    row,
                    "fork",
                    f"row {seq} differs from the stored row {seq}"
                    f" ({row['hash'][:12]}.. vs {stored[1][:12]}..):"
                    " the table's journal was rewritten or rolled"
                    " back",
                )
            return
        before = self.store.row_link(rec.site, rec.table, seq - 1) if seq > 1 else None
        after = self.store.row_link(rec.site, rec.table, seq + 1)
        if (before is not None and before[1] != row["prev"]) or (
            after is not None and after[0] != row["hash"]
        ):
            self._refuse(
                rec.table, "chain", f"late row {seq} does not fit between the stored rows around it"
            )
            return
        self.store.add_row(
            rec.site, rec.table, row, self._wall_ns(), gap_before=before is None and seq > 1
        )
        self.counters.rows_stored += 1
        self._seen(rec.table)
        waiting = t.heads_waiting.pop(seq, None)
        if waiting is not None:
            self._match_head(t, seq, waiting, row["hash"])

    # -- heads ------------------------------------------------------------------------------

    def _head(self, table: str, head: HeadMessage) -> None:
        t = self._table(table)
        rec = t.rec
        seq = head["seq"]
        if head["table"] != table:
            self._refuse(
                table, "malformed", f"head names table {head['table']!r} on {table!r}'s topic"
            )
            return
        key = self.keys.get(table)
        assert key is not None  # handle() refused unknown tables
        if head["key_id"] != key.key_id:
            self._refuse(
                table,
                "bad-signature",
                f"head {seq} is signed by key {head['key_id']}, the table's key is {key.key_id}",
            )
            return
        if not verify_head(head, head["sig"], key.key):
            self._refuse(
                table,
                "bad-signature",
                f"head {seq}: the signature does not verify with the table's key",
            )
            return
        # judged against the stored record, not against the order of arrival: a table
        # re-sending its journal from row 1 sends heads lower than the retained newest one
        # every stored head is at most ``head_seq`` (the highest stored, also after one is
        # moved to the evidence): a higher one needs no look-up (one round trip a head)
        known = None if seq > rec.head_seq else self.store.head_hash(rec.site, table, seq)
        if known is not None:
            if known == head["hash"]:
                self.counters.duplicates += 1
            else:
                self._diverge(
                    t,
                    "heads",
                    head,
                    "fork",
                    f"signed head {seq} names {head['hash'][:12]}..,"
                    f" an earlier signed head {seq} named"
                    f" {known[:12]}..",
                )
            return
        stored = self.store.row_link(rec.site, table, seq)
        if stored is not None and stored[1] != head["hash"]:
            if seq < rec.head_seq:
                self._diverge(
                    t,
                    "heads",
                    head,
                    "rollback",
                    f"signed head {seq} names {head['hash'][:12]}.., the stored row {seq}"
                    f" hashes to {stored[1][:12]}.. and signed head {rec.head_seq} was already"
                    " received: the table's journal went back",
                )
            else:
                self._diverge(
                    t,
                    "heads",
                    head,
                    "fork",
                    f"signed head {seq} names {head['hash'][:12]}.., the"
                    f" stored row {seq} hashes to {stored[1][:12]}..",
                )
            return
        if stored is None and self._forked(t):
            # no stored row to judge it by, on a diverged table: the other history's
            self._evidence(t, "heads", head, "no stored row to match, the table diverged")
            return
        counter = head.get("counter")
        if counter is not None:
            self._counter(t, seq, head["hash"], counter)
        self.store.add_head(rec.site, table, head, self._wall_ns(), None)
        self.counters.heads_stored += 1
        if seq > rec.head_seq:
            rec.head_seq, rec.head_hash = seq, head["hash"]
        self._seen(table)
        if stored is not None:
            self._match_head(t, seq, head["hash"], stored[1])
        else:
            t.heads_waiting[seq] = head["hash"]

    # -- a diverged table (docs/feed.md "A diverged table") -----------------------------------

    def _forked(self, t: _Table) -> bool:
        """True once the table diverged from its record: from then on only what extends the
        record in order, or matches it, is the table's; the rest is evidence. An
        acknowledgement (``floor --ack``) answers the alarm; it does not join the histories."""
        return t.rec.forked_ns is not None

    def _evidence(
        self, t: _Table, channel: str, message: Mapping[str, object], reason: str
    ) -> None:
        rec = t.rec
        self.store.add_evidence(rec.site, rec.table, channel, message, self._wall_ns(), reason)
        self.counters.evidence += 1

    def _diverge(
        self,
        t: _Table,
        channel: str,
        message: RowMessage | HeadMessage,
        kind: str,
        detail: str,
    ) -> None:
        """A validly formed message naming another history than the table's record: kept
        apart as evidence, alarmed, and the table is forked from then on."""
        self.counters.refused += 1
        self._evidence(t, channel, message, f"{kind}: {detail}")
        self._go_forked(t, message["seq"])
        # one alarm of each kind for one divergence: the other history's every row and head
        # is evidence, not a new alarm
        if kind not in t.diverged_kinds:
            t.diverged_kinds.add(kind)
            self.alarm(t.rec.table, kind, detail)

    def _go_forked(self, t: _Table, seq: int) -> None:
        """The table diverged: it shows ``forked`` until acknowledged. What it sent that the
        record could not yet judge (rows held for a gap, heads waiting for their row) goes to
        the evidence: a gap timeout never joins the two histories."""
        if self._forked(t):
            return
        rec = t.rec
        rec.forked_ns, rec.forked_seq = self._wall_ns(), seq
        t.diverged_kinds = set()
        self._dirty.add(rec.table)
        for held_seq in sorted(t.pending):
            row = t.pending.pop(held_seq)
            self.store.drop_pending(rec.site, rec.table, held_seq)
            self._evidence(t, "rows", row, "held for a gap when the table diverged")
        t.gap_since_ns, t.gap_alarmed = None, False
        for waiting in sorted(t.heads_waiting):
            self._unhead(t, waiting, "waiting for its row when the table diverged")

    def _unhead(self, t: _Table, seq: int, reason: str) -> None:
        """Move the stored head at ``seq`` to the evidence; the newest head is then the
        highest one left."""
        rec = t.rec
        t.heads_waiting.pop(seq, None)
        head = self.store.head(rec.site, rec.table, seq)
        if head is not None:
            self._evidence(t, "heads", head, reason)
            self.store.drop_head(rec.site, rec.table, seq)
        rec.head_seq, rec.head_hash = self.store.highest_head(rec.site, rec.table)
        self._dirty.add(rec.table)

    def _counter(self, t: _Table, seq: int, hash_: str, value: int) -> None:
        """A verified head's TPM counter: each value belongs to one head, and the values count
        up one by one with the heads (the table increments the counter for every head it
        anchors and publishes them all). A value seen on another head, or below one already
        seen, means two journals were signed with one counter: the table's state was restored
        from a copy and played on. A skipped value waits for the gap timeout (``tick``)."""
        table = t.rec.table
        seen = t.counters.get(value)
        if seen is not None and seen != (seq, hash_):
            self.alarm(
                table,
                "counter-reused",
                f"signed heads {seen[0]} and {seq} both carry"
                f" TPM counter {value}: two journals signed"
                " with one counter (the table's state restored"
                " from a copy and played on)",
            )
        filled = [g for g in t.counter_gaps if g[0] <= value <= g[1]]
        for lo, hi, since in filled:
            t.counter_gaps.remove((lo, hi, since))
            t.counter_gaps += [
                (a, b, since) for a, b in ((lo, value - 1), (value + 1, hi)) if a <= b
            ]
        high = t.counter_high
        if high is not None and value < high[0] and not filled and seen is None:
            self.alarm(
                table,
                "counter-back",
                f"signed head {seq} carries TPM counter {value},"
                f" below the {high[0]} of signed head {high[1]}"
                " already received: the table's state was"
                " restored from a copy",
            )
        if high is not None and value > high[0] + 1:
            t.counter_gaps.append((high[0] + 1, value - 1, self._wall_ns()))
        if high is None or value > high[0]:
            t.counter_high = (value, seq)
        t.counters[value] = (seq, hash_)
        if len(t.counters) > COUNTERS_KEPT:
            del t.counters[min(t.counters)]

    def _counter_gaps(self, t: _Table, now: int, gap_ns: int) -> None:
        """Skipped counter values older than the gap timeout: heads the table anchored never
        arrived (round-trip of the backlog over)."""
        for lo, hi, since in [g for g in t.counter_gaps if now - g[2] >= gap_ns]:
            t.counter_gaps.remove((lo, hi, since))
            which = f"{lo}" if lo == hi else f"{lo}-{hi}"
            self.alarm(
                t.rec.table,
                "counter-gap",
                f"TPM counter {which} never arrived within"
                f" {(now - since) / 1e9:.0f} s: signed heads"
                " the table anchored are missing (its state"
                " restored from a copy while the feed was"
                " down, or heads withdrawn after a journal"
                " finding)",
            )

    def _match_head(self, t: _Table, seq: int, head_hash: str, row_hash_: str) -> None:
        """A signed head and the stored row at its seq: they agree, or the table forked."""
        rec = t.rec
        if head_hash == row_hash_:
            self.store.set_head_matched(rec.site, rec.table, seq, True)
            rec.signed_seq = max(rec.signed_seq, seq)
            self._dirty.add(rec.table)
            return
        # the row extends the record (its chain verified); the head that came before it
        # names another history: it leaves the table's heads for the evidence
        self._unhead(t, seq, "its row, stored on the record, hashes otherwise")
        self._go_forked(t, seq)
        if "fork" not in t.diverged_kinds:
            t.diverged_kinds.add("fork")
            self.alarm(
                rec.table,
                "fork",
                f"signed head {seq} names {head_hash[:12]}.., the"
                f" stored row {seq} hashes to {row_hash_[:12]}..",
            )

    # -- time -------------------------------------------------------------------------------

    def tick(self) -> None:
        """Gaps that did not fill and tables gone silent (the runner calls it every second)."""
        now = self._wall_ns()
        gap_ns = int(self.settings.gap_timeout_s * 1e9)
        silence_ns = int(self.settings.silence_s * 1e9)
        self._repeats(now)
        for t in list(self._tables.values()):
            rec = t.rec
            if self.scope is not None and rec.table not in self.scope:
                continue
            if (
                t.pending
                and t.gap_since_ns is not None
                and now - t.gap_since_ns >= gap_ns
                and not self._forked(t)
            ):
                self._close_gap(t)
            if t.counter_gaps:
                self._counter_gaps(t, now, gap_ns)
            # A table that sent only messages that did not verify (forged heads, replays) is
            # timed from the collector's start: it is silent as surely as one never heard.
            heard = max(rec.last_seen_ns or 0, self.started_ns)
            if not rec.silent and now - heard >= silence_ns:
                rec.silent = True
                self._dirty.add(rec.table)
                what = (
                    "nothing verified (row, head or online status)"
                    if rec.last_seen_ns is not None
                    else "nothing verified (row, head or online status) yet"
                )
                self.alarm(
                    rec.table,
                    "silent",
                    f"{what} for {(now - heard) / 1e9:.0f} s (status {rec.status or 'unknown'})",
                )

    def _close_gap(self, t: _Table) -> None:
        """The rows before the lowest held row did not come: alarm, then store the held rows
        from there on (the first flagged ``gap_before``)."""
        rec = t.rec
        first = min(t.pending)
        missing = (
            f"{rec.frontier_seq + 1}..{first - 1}"
            if first - 1 > rec.frontier_seq + 1
            else f"{first - 1}"
        )
        waited = (self._wall_ns() - (t.gap_since_ns or 0)) / 1e9
        self.alarm(
            rec.table,
            "gap",
            f"rows {missing} did not arrive within {waited:.0f} s;"
            f" rows from {first} stored after the gap",
        )
        row = t.pending.pop(first)
        self.store.drop_pending(rec.site, rec.table, first)
        self._store_row(t, row, gap_before=True)
        t.gap_since_ns = None
        self._drain(t)
