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
from typing import Any, Protocol


class _Journal(Protocol):
    def append(
        self, kind: str, data: Mapping[str, Any] | None = None, round_id: int | None = None
    ) -> int: ...


@dataclass
class _Fold:
    kind: str
    round_id: int | None
    opened: float
    first_ts: int
    last_ts: int = 0
    count: int = 0
    last: dict[str, Any] = field(default_factory=dict)


class Summaries:
    """Folds repeats of a key into one counted row per ``interval_s`` (see the module doc)."""

    def __init__(
        self,
        journal: _Journal,
        interval_s: float = 60.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        self._journal = journal
        self.interval_s = interval_s
        self._clock = clock
        self._wall_ns = wall_ns
        self._folds: dict[str, _Fold] = {}

    def note(
        self, kind: str, key: str, detail: Mapping[str, Any], round_id: int | None = None
    ) -> bool:
        """Record one event. The first of ``key`` in an interval is journaled now, as ``kind``
        with ``detail`` and ``count`` 1 (returns True); a repeat is only counted (False)."""
        fold = self._folds.get(key)
        now = self._wall_ns()
        if fold is None:
            self._journal.append(kind, {**detail, "count": 1}, round_id)
            self._folds[key] = _Fold(kind, round_id, self._clock(), now)
            return True
        if not fold.count:
            fold.first_ts = now  # the first repeat: the journaled event is not counted again
        fold.count += 1
        fold.last_ts = now
        fold.last = dict(detail)
        fold.round_id = round_id
        return False

    def pending(self) -> int:
        """Repeats counted and not yet journaled."""
        return sum(f.count for f in self._folds.values())

    def flush(self, force: bool = False) -> int:
        """Journal one counted row per key whose interval ended (every key with ``force``);
        returns the rows written."""
        now = self._clock()
        written = 0
        for key, fold in list(self._folds.items()):
            if not force and now - fold.opened < self.interval_s:
                continue
            if fold.count:
                self._journal.append(
                    fold.kind,
                    {
                        **fold.last,
                        "count": fold.count,
                        "folded": True,
                        "first_ts": fold.first_ts,
                        "last_ts": fold.last_ts,
                        "interval_s": round(now - fold.opened, 3),
                    },
                    fold.round_id,
                )
                written += 1
            del self._folds[key]
        return written
