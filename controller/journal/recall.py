"""Game recall: the last rounds with every journaled input that decided them.

Rounds are identified by the round id every table stamps on its journal rows, so a disputed
hand can be rebuilt from the tiles or cards as they were entered or read (5324.50(f)(11)). The
rounds are found by walking back from the newest row, and each round's rows are read by the
index on the round: a recall costs the same with ten rows or ten million.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from controller.journal.chain import Row
from controller.journal.store import Journal


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """One round's journal rows in sequence order."""

    round_id: int
    events: tuple[Row, ...]

    def summary(self) -> str:
        """One line: the round, its rows, and the row that closed it if there is one."""
        closing = [e for e in self.events if e.kind.endswith((".settled", ".result", ".voided"))]
        count = len(self.events)
        tail = (
            f"; closed by {closing[-1].kind} (row {closing[-1].seq})" if closing else "; not closed"
        )
        return (
            f"round {self.round_id}: rows {self.events[0].seq}-{self.events[-1].seq}"
            f" ({count} row{'' if count == 1 else 's'}){tail}"
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "round": self.round_id,
            "events": [
                {
                    "seq": e.seq,
                    "ts": e.ts,
                    "boot": e.boot,
                    "kind": e.kind,
                    "data": e.data,
                    "hash": e.hash,
                }
                for e in self.events
            ],
        }


def last_round_ids(journal: Journal, count: int) -> list[int]:
    """The ids of the newest ``count`` rounds, oldest first."""
    return journal.round_ids(count)


def recall(journal: Journal, count: int) -> list[RoundRecord]:
    """The last ``count`` rounds with all their rows."""
    return [
        RoundRecord(rid, tuple(journal.events(round_id=rid)))
        for rid in last_round_ids(journal, count)
    ]


#: What recall leaves out of a row: the whole-table snapshot recovery reads (the JSON export,
#: ``table-controller journal export``, has it) and a bug's traceback.
RECALL_HIDDEN: Final = ("snapshot", "trace")
#: Console width recall wraps at (a technician's 80-column terminal).
RECALL_WIDTH: Final = 80


def format_recall(
    records: list[RoundRecord], detail: bool = True, width: int = RECALL_WIDTH
) -> list[str]:
    """Console lines for ``recall [N]``: per round a summary line, then one entry per row
    (``seq kind key=value ...``, empty values left out), wrapped to ``width`` columns."""
    lines: list[str] = []
    for record in records:
        lines.append(record.summary())
        if not detail:
            continue
        for e in record.events:
            words = [
                f"{key}={_value_text(value)}"
                for key, value in sorted(e.data.items())
                if key not in RECALL_HIDDEN and _shown(value)
            ]
            lines.extend(
                textwrap.wrap(
                    " ".join([str(e.seq), e.kind, *words]),
                    width,
                    initial_indent="  ",
                    subsequent_indent="      ",
                    break_on_hyphens=False,
                )
            )
    return lines


def format_recall_json(records: list[RoundRecord]) -> list[str]:
    """``recall N json``, for a program on the console: per round its summary line, then a row a
    line, ``seq kind {data}`` (compact JSON, the snapshot left out), never wrapped."""
    lines: list[str] = []
    for record in records:
        lines.append(record.summary())
        for e in record.events:
            shown = {k: v for k, v in e.data.items() if k not in RECALL_HIDDEN}
            lines.append(
                f"  {e.seq} {e.kind} {json.dumps(shown, sort_keys=True, separators=(',', ':'))}"
            )
    return lines


def _shown(value: object) -> bool:
    return value is not None and value != [] and value != {} and value != ""


def _pruned(value: object) -> object:
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if _shown(v) and v is not False}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def _value_text(value: object) -> str:
    """A value as recall shows it: text bare (quoted when it has spaces), the rest as compact
    JSON without empty fields."""
    if isinstance(value, str):
        return value if value and " " not in value else json.dumps(value)
    # ", " lets a long value wrap after a comma instead of inside a word
    return json.dumps(_pruned(value), sort_keys=True, separators=(", ", ":"))


def export_jsonl(journal: Journal, rounds: int = 0) -> Iterator[str]:
    """JSON lines: one per round when ``rounds`` > 0, else one per journal row with every field
    and its chain links (``prev``, ``hash``), which ``journal verify`` and the collector check."""
    if rounds > 0:
        for record in recall(journal, rounds):
            yield json.dumps(record.as_dict(), sort_keys=True, separators=(",", ":"))
        return
    for e in journal.events():
        yield json.dumps(e.as_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
