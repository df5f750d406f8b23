"""``table-controller floor``: one line per table from the collector's store: its last round,
when it was last heard, its backlog as the collector sees it, and its alarms."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from controller.feed.store import Store, TableRecord

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


def _state(row: Mapping[str, Any]) -> str | None:
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


def round_in_progress(rows: Sequence[Mapping[str, Any]]) -> int | None:
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


def floor_lines(
    store: Store, *, site: str | None = None, now_ns: int | None = None, last_alarms: int = 0
) -> list[str]:
    """The floor view; with ``last_alarms``, the newest alarms after it."""
    now = time.time_ns() if now_ns is None else now_ns
    alarms = store.alarm_counts()
    pending = store.pending_counts()
    records = [r for r in store.tables() if site is None or r.site == site]
    rows = [HEADER]
    for rec in records:
        status = rec.status or "-"
        if rec.silent:
            status += " SILENT"
        key = (rec.site, rec.table)
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
