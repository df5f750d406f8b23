"""``table-controller floor``: one line per table from the collector's store: its last round,
when it was last heard, its backlog as the collector sees it, and its alarms."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Final

from controller.feed.store import Ack, Store, TableEvent, TableRecord
from controller.fields.readers import as_int, as_map

#: The states in which a pai gow round (its definition's ``IN_ROUND``) or a baccarat coup (its
#: machine's ``COUP_STATES`` and ``settling``) is under way, by the row kinds' game. The feed
#: reads the tables' rows without importing the tables; tests/unit/feed/test_poison.py keeps
#: these equal to the definitions.
ROUND_STATES: Final = {
    "paigow": frozenset(
        ("betting", "bank_style", "no_more_bets", "dealing", "setting_hands", "dealer_hands")
    ),
    "baccarat": frozenset(("dealing", "player_third", "banker_third", "settling")),
}
#: The rows that close a round or a coup.
CLOSING_KINDS: Final = frozenset(
    ("paigow.settled", "paigow.voided", "baccarat.coup.settled", "baccarat.coup.voided")
)
#: How many of a table's newest stored rows are read to tell whether a round is under way.
ROUND_LOOKBACK: Final = 64

#: A collector that has not recorded its broker connection for this long is not counted (it
#: records it every 2 s: controller/feed/collect.py HEALTH_S).
HEALTH_STALE_S: Final = 10.0

#: The catalogue's codes (controller/floor/events.py) for the host taking a table out of play
#: and putting it back: the newer of the two a table published says whether it is disabled.
TABLE_DISABLED: Final = 190
TABLE_ENABLED: Final = 191

HEADER = ("table", "status", "last round", "last seen", "rows", "backlog", "signed", "alarms")


def _age(now_ns: int, then_ns: int | None) -> str:
    if then_ns is None:
        return "never"
    seconds = max(0, (now_ns - then_ns) // 1_000_000_000)
    stamp = datetime.fromtimestamp(then_ns / 1e9, UTC).strftime("%H:%M:%SZ")
    if seconds < 120:
        return f"{stamp} ({seconds} s ago)"
    if seconds < 7200:
        return f"{stamp} ({seconds // 60} min ago)"
    return f"{stamp} ({seconds // 3600} h ago)"


def backlog(rec: TableRecord, pending: int) -> int:
    """Rows the collector knows of but has not stored in order: those held behind a gap, and
    those up to the newest signed head that have not arrived."""
    return max(pending, rec.head_seq - rec.frontier_seq, 0)


def _state(row: Mapping[str, object]) -> str | None:
    """The table state a row records: pai gow's ``state``, baccarat's last move's target."""
    data = row.get("data")
    if not isinstance(data, dict):
        return None
    state = data.get("state")
    if isinstance(state, str):
        return state
    moved = data.get("moved")
    if isinstance(moved, list) and moved and isinstance(moved[-1], str):
        return moved[-1].rpartition(">")[2]
    return None


#: The table state a row records (the floor page's "state" column).
row_state = _state


def round_in_progress(rows: Sequence[Mapping[str, object]]) -> int | None:
    """The round under way at the newest of ``rows`` (a table's stored rows in order), or None:
    the newest row that closes a round, or that records the table's state, decides."""
    for row in reversed(rows):
        kind = str(row.get("kind", ""))
        if kind in CLOSING_KINDS:
            return None
        state = _state(row)
        if state is None:
            continue
        rnd = row.get("round")
        if state in ROUND_STATES.get(kind.partition(".")[0], ()) and isinstance(rnd, int):
            return rnd
        return None
    return None


class AckError(ValueError):
    """An acknowledgement that cannot be recorded (no such table, not forked, no name)."""


def is_forked(store: Store, rec: TableRecord) -> bool:
    """True while the table's divergence from its record is not acknowledged."""
    return rec.forked_ns is not None and not store.acknowledged(rec.site, rec.table, rec.forked_ns)


def acknowledge(
    store: Store,
    table: str,
    by: str,
    note: str,
    *,
    site: str | None = None,
    now_ns: int | None = None,
) -> Ack:
    """Record that ``by`` investigated the forked ``table`` (``floor --ack``): who, when, the
    note. The table's record and the evidence stay as they are, and so does the collector's
    judgement: the record ends where the table diverged (docs/feed.md "A diverged table")."""
    by, note = by.strip(), note.strip()
    if not by or not note:
        raise AckError("an acknowledgement needs the name of who investigated (--by) and a note")
    found = [r for r in store.tables() if r.table == table and (site is None or r.site == site)]
    if not found:
        raise AckError(f"no table {table!r} in the store" + (f" for site {site}" if site else ""))
    if len(found) > 1:
        raise AckError(f"table {table!r} is on several sites: name one with --site")
    rec = found[0]
    if rec.forked_ns is None:
        raise AckError(f"table {rec.site}/{table} is not forked: nothing to acknowledge")
    if not is_forked(store, rec):
        done = [a for a in store.acks(rec.site, rec.table) if a.forked_ns == rec.forked_ns]
        who = f" by {done[-1].by} at {_stamp(done[-1].ts_ns)}" if done else ""
        raise AckError(
            f"table {rec.site}/{table} is forked and already acknowledged{who}: nothing more"
            " to acknowledge"
        )
    ack = Ack(
        time.time_ns() if now_ns is None else now_ns, rec.site, table, rec.forked_ns, by, note
    )
    store.add_ack(ack)
    store.commit()
    return ack


def _stamp(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def disabled(store: Store) -> dict[tuple[str, str], TableEvent]:
    """The tables whose newest disable/enable event is a disable, with that event."""
    latest = store.newest_events((TABLE_DISABLED, TABLE_ENABLED))
    return {k: e for k, e in latest.items() if e.code == TABLE_DISABLED}


def _counts(meters: Mapping[str, object], name: str) -> dict[str, object]:
    value = meters.get(name)
    return as_map(value, name) if isinstance(value, dict) else {}


def meters_summary(meters: Mapping[str, object]) -> str:
    """One line of a table's meters (the message's fields): rounds or coups played and voided,
    lifetime (this shift), power-ups, and the row they were folded to."""
    life, shift = _counts(meters, "lifetime"), _counts(meters, "shift")

    def both(*names: str) -> str:
        lt = sum(as_int(life.get(n, 0), f"lifetime.{n}") for n in names)
        st = sum(as_int(shift.get(n, 0), f"shift.{n}") for n in names)
        return f"{lt} ({st} this shift)"

    game = str(meters.get("game") or "")
    if game == "baccarat":
        played = "coups " + both("baccarat.coups")
        voided = both("baccarat.voided_before_cards", "baccarat.voided_after_cards")
    else:
        played = "games " + both("paigow.games_played")
        voided = both("paigow.voided_before_draw", "paigow.voided_after_draw")
    release = meters.get("release")
    version = release.get("version") if isinstance(release, dict) else None
    return (
        f"{played}, voided {voided}, power-ups {life.get('power_ups', 0)},"
        f" at row {meters.get('seq')}" + (f", release {version}" if version else "")
    )


def _event_text(e: TableEvent) -> str:
    return f"{_stamp(e.ts)} {e.code} {e.name}"


def _broker_line(store: Store, site: str | None, now: int) -> list[str]:
    """A line when no collector says it holds the broker: the statuses are then the last ones
    heard, not the tables' state now (docs/feed.md "The floor page")."""
    collectors = [h for h in store.health() if site is None or h.site == site]
    stale = int(HEALTH_STALE_S * 1e9)
    if any(h.connected and now - h.updated_ns <= stale for h in collectors):
        return []
    said = "; ".join(
        f"{h.client_id} {'silent' if now - h.updated_ns > stale else h.detail or 'no broker'}"
        f" since {_stamp(h.updated_ns if now - h.updated_ns > stale else h.since_ns)}"
        for h in collectors
    )
    return [
        "no collector holds the broker now"
        + (f" ({said})" if said else " (none has reported)")
        + ": the statuses above are the last heard; the tables' presence is unknown"
    ]


def floor_lines(
    store: Store, *, site: str | None = None, now_ns: int | None = None, last_alarms: int = 0
) -> list[str]:
    """The floor view; with ``last_alarms``, the newest alarms after it."""
    now = time.time_ns() if now_ns is None else now_ns
    alarms = store.alarm_counts()
    pending = store.pending_counts()
    evidence = store.evidence_counts()
    off = disabled(store)
    meters = store.meters()
    newest = store.newest_events()
    records = [r for r in store.tables() if site is None or r.site == site]
    rows = [HEADER]
    forked: list[TableRecord] = []
    for rec in records:
        status = rec.status or "-"
        if is_forked(store, rec):
            # neither online nor offline: its messages are not its record's (docs/feed.md
            # "A diverged table")
            status = "FORKED"
            forked.append(rec)
        elif rec.forked_ns is not None:
            status = "forked (acknowledged)"
        if rec.silent:
            status += " SILENT"
        key = (rec.site, rec.table)
        if key in off:
            status += " DISABLED"
        rows.append(
            (
                rec.table if site is not None else f"{rec.site}/{rec.table}",
                status,
                "-" if rec.last_round is None else str(rec.last_round),
                _age(now, rec.last_seen_ns),
                str(rec.frontier_seq),
                str(backlog(rec, pending.get(key, 0))),
                str(rec.signed_seq),
                str(alarms.get(key, 0)),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    if len(rows) == 1:
        lines.append("(no table has been heard yet)")
    for rec in forked:
        name = rec.table if site is not None else f"{rec.site}/{rec.table}"
        lines.append(
            f"{name} FORKED since {_stamp(rec.forked_ns or 0)} at seq {rec.forked_seq}:"
            f" its record is what was verified first (rows to {rec.frontier_seq});"
            f" {evidence.get((rec.site, rec.table), 0)} diverging messages kept apart."
            f" After investigating: table-controller floor --ack {rec.table}"
            " --by NAME --note TEXT"
        )
    if records:
        lines.extend(_broker_line(store, site, now))
    shown = sorted(k for k in {*meters, *newest} if site is None or k[0] == site)
    if shown:
        # what the tables say of themselves (docs/feed.md "Events and meters")
        lines.append("")
        lines.append("meters and last event (as the tables publish them):")
    for key in shown:
        name = key[1] if site is not None else f"{key[0]}/{key[1]}"
        parts = [meters_summary(meters[key]) if key in meters else "no meters yet"]
        if key in newest:
            parts.append("last event " + _event_text(newest[key]))
        if key in off:
            reason = off[key].details.get("reason")
            parts.append(
                f"DISABLED by the host since {_stamp(off[key].ts)}"
                + (f" ({str(reason)[:80]})" if reason else "")
            )
        lines.append(f"  {name}: " + "; ".join(parts))
    if last_alarms:
        recent = store.alarms()[-last_alarms:]
        if recent:
            lines.append("")
            lines.append(f"last {len(recent)} alarms:")
        for a in recent:
            stamp = datetime.fromtimestamp(a.ts_ns / 1e9, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            times = f" (x{a.count})" if a.count > 1 else ""
            lines.append(f"  {stamp} {a.site}/{a.table} {a.kind}{times}: {a.detail}")
    return lines
