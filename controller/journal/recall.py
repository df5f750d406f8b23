"""Game recall: the last rounds with every journaled input that decided them.

Rounds are identified by the ``round_id`` every table stamps on its journal rows, so a disputed
hand can be rebuilt from the tiles or cards as they were entered or read (5324.50(f)(11)).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from controller.journal.store import Entry, Journal


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """One round's journal rows in sequence order."""

    round_id: int
    events: tuple[Entry, ...]

    def summary(self) -> str:
        """One line: round, first/last seq, the outcome row's data if there is one."""
        closing = [e for e in self.events if e.kind.endswith((".settled", ".result", ".voided"))]
        tail = ""
        if closing:
            last = closing[-1]
            tail = f" {last.kind} {json.dumps(last.data, sort_keys=True)}"
        return (f"round {self.round_id}: seq {self.events[0].seq}-{self.events[-1].seq},"
                f" {len(self.events)} events{tail}")

    def as_dict(self) -> dict[str, Any]:
        return {
            "round": self.round_id,
            "events": [
                {"seq": e.seq, "wall_ns": e.wall_ns, "boot_id": e.boot_id, "kind": e.kind,
                 "data": e.data}
                for e in self.events
            ],
        }


def last_round_ids(journal: Journal, count: int) -> list[int]:
    """The ids of the newest ``count`` rounds, oldest first."""
    return journal.round_ids(count)


def recall(journal: Journal, count: int) -> list[RoundRecord]:
    """The last ``count`` rounds with all their rows."""
    return [RoundRecord(rid, tuple(journal.events(round_id=rid)))
            for rid in last_round_ids(journal, count)]


def format_recall(records: list[RoundRecord], detail: bool = True) -> list[str]:
    """Console lines for ``recall [N]``."""
    lines: list[str] = []
    for record in records:
        lines.append(record.summary())
        if detail:
            for e in record.events:
                # The full state snapshot each fact row carries is for recovery and the JSON
                # export; on a console it would drown the inputs that decided the round.
                shown = {k: v for k, v in e.data.items() if k != "snapshot"}
                data = json.dumps(shown, sort_keys=True, separators=(",", ":"))
                lines.append(f"  {e.seq} {e.kind} {data}")
    return lines


def export_jsonl(journal: Journal, rounds: int = 0) -> Iterator[str]:
    """JSON lines: one per round when ``rounds`` > 0, else one per journal row."""
    if rounds > 0:
        for record in recall(journal, rounds):
            yield json.dumps(record.as_dict(), sort_keys=True, separators=(",", ":"))
        return
    for e in journal.events():
        yield json.dumps({"seq": e.seq, "wall_ns": e.wall_ns, "mono_ns": e.mono_ns,
                          "boot_id": e.boot_id, "round": e.round_id, "kind": e.kind,
                          "data": e.data, "mac": e.mac},
                         sort_keys=True, separators=(",", ":"))
