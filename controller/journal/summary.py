"""Counted summary rows: repeated events folded into one row per interval (docs/journal.md).

A console flooded with lines without a login, a technician repeating ``verify SEED``, a shoe's
refused frames: each is worth knowing, none is worth a synced row each time. The first event of a
key is journaled at once (count 1); the repeats within the interval are counted, and one row with
the count, the first and last time and the last detail is written when the interval ends (the loop's
tick calls :meth:`Summaries.flush`) or at a boundary (``flush(force=True)``). Nothing is lost: the
counts add up to every event.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol


class _Journal(Protocol):
    def append(
        self, kind: str, data: Mapping[str, object] | None = None, round_id: int | None = None
    ) -> int: ...


@dataclass
class _Fold:
    kind: str
    round_id: int | None
    opened: float
    first_ts: int
    last_ts: int = 0
    written: int = 0  # events journaled at once in this interval
    count: int = 0  # events counted since, not yet journaled
    last: dict[str, object] = field(default_factory=dict)


class Summaries:
    """Folds repeats of a key into one counted row per ``interval_s`` (see the module doc).

    One helper for the application (console floods, repeated ``verify``) and the tables (a
    shoe's refused frames, link and watchdog changes). ``stamped`` rows carry the first and last
    wall-clock times of the repeats; ``digits`` rounds the row's ``interval_s``. With
    ``roll_on_note`` an event after its key's interval ended writes the old count first (a table
    whose events carry their own time); otherwise the loop's tick does (:meth:`flush`).
    """

    def __init__(
        self,
        journal: _Journal,
        interval_s: float = 60.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_ns: Callable[[], int] = time.time_ns,
        stamped: bool = True,
        digits: int = 3,
        roll_on_note: bool = False,
    ) -> None:
        self._journal = journal
        self.interval_s = interval_s
        self._clock = clock
        self._wall_ns = wall_ns
        self._stamped = stamped
        self._digits = digits
        self._roll = roll_on_note
        self.folds: dict[str, _Fold] = {}

    def note(
        self,
        kind: str,
        key: str,
        detail: Mapping[str, object],
        round_id: int | None = None,
        *,
        now_ns: int | None = None,
        at_once: int = 1,
    ) -> bool:
        """Record one event (at ``now_ns`` on the monotonic clock, or now). The first
        ``at_once`` of ``key`` in an interval are journaled now, as ``kind`` with ``detail`` and
        ``count`` 1 (returns True); a repeat after them is only counted (False)."""
        now = self._clock() if now_ns is None else now_ns / 1e9
        fold = self.folds.get(key)
        if fold is not None and self._roll and now - fold.opened >= self.interval_s:
            self._write(fold, now)
            del self.folds[key]
            fold = None
        wall = self._wall_ns()
        if fold is None:
            fold = self.folds[key] = _Fold(kind, round_id, now, wall)
        if fold.written < at_once and not fold.count:
            fold.written += 1
            self._journal.append(kind, {**detail, "count": 1}, round_id)
            return True
        if not fold.count:
            fold.first_ts = wall  # the first repeat: the journaled event is not counted again
        fold.count += 1
        fold.last_ts = wall
        fold.last = dict(detail)
        fold.round_id = round_id
        return False

    def pending(self) -> int:
        """Repeats counted and not yet journaled."""
        return sum(f.count for f in self.folds.values())

    def flush(self, force: bool = False, now_ns: int | None = None) -> int:
        """Journal one counted row per key whose interval ended (every key with ``force``);
        returns the rows written."""
        now = self._clock() if now_ns is None else now_ns / 1e9
        written = 0
        for key, fold in list(self.folds.items()):
            if not force and now - fold.opened < self.interval_s:
                continue
            written += self._write(fold, now)
            del self.folds[key]
        return written

    def _write(self, fold: _Fold, now: float) -> int:
        if not fold.count:
            return 0
        row: dict[str, object] = {**fold.last, "count": fold.count, "folded": True}
        if self._stamped:
            row["first_ts"], row["last_ts"] = fold.first_ts, fold.last_ts
        row["interval_s"] = round(now - fold.opened, self._digits)
        self._journal.append(fold.kind, row, fold.round_id)
        return 1
