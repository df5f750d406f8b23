"""The feed's derived messages (docs/feed.md "Events and meters"): for each journal row the
publisher sends, the coded events it raises (``tc/<site>/<table>/events``, QoS 1) and, after a
round or a coup closes and whenever the backlog is sent with meters changed, the meters (retained
on ``tc/<site>/<table>/meters``). Runs on the publisher's thread, never the loop's.

The first row it is given may be far into the journal (the feed resumes from its position): it
first folds the archive and the rows before it, on the publisher's read-only connection."""

from __future__ import annotations

import collections
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Final, Literal, Protocol

from controller.feed.messages import went_back
from controller.fields.readers import int_of, opt_int_of, opt_map_of
from controller.floor.events import EventReader
from controller.floor.meters import (
    ROUND_CLOSING_KINDS,
    MeterFold,
    MeterRow,
    MetersView,
    PlainRow,
    archived_rows,
)

#: Rows whose events are kept to be sent again when the feed re-sends rows (a reconnection).
REMEMBER: Final = 1000

Message = tuple[Literal["events", "meters"], bytes]


class RowSource(Protocol):
    """A read-only journal (controller/journal/store.py Journal)."""

    def events(
        self, kinds: Iterable[str] | None = None, since_seq: int = 0, round_id: int | None = None
    ) -> Iterator[MeterRow]: ...
    def close(self) -> None: ...


def _payload(body: Mapping[str, object]) -> bytes:
    return json.dumps({"v": 1, **body}, sort_keys=True, separators=(",", ":")).encode("utf-8")


class FloorFeed:
    """:class:`controller.feed.publisher.Derived` for a table."""

    def __init__(
        self,
        table: str,
        open_reader: Callable[[], RowSource],
        archive: Path | None,
        *,
        high_path: Path | None = None,
        report: Callable[[list[str]], None] | None = None,
    ) -> None:
        self.table = table
        self._open_reader = open_reader
        self._archive = archive
        #: The lifetime meters last published, kept beside the anchor (on its second medium):
        #: a journal restored from an older copy has lower meters than this file.
        self._high_path = high_path
        self._report = report
        self._checked = False
        self.meters = MeterFold()
        self.reader = EventReader()
        self._primed = False
        self._sent_meters_at = -1
        self._recent: collections.OrderedDict[int, list[bytes]] = collections.OrderedDict()

    def _prime(self, before_seq: int) -> None:
        """Fold everything before ``before_seq`` (its events were sent by an earlier run). A
        read that fails leaves the feed unprimed (tried again with the next row): a partial
        fold would publish meters lower than the journal's."""
        meters, reader = MeterFold(), EventReader()
        if self._archive is not None:
            for row in archived_rows(self._archive):
                if row.seq < before_seq:
                    meters.add(row)
                    reader.events(row)
        source = self._open_reader()
        try:
            for r in source.events():
                if r.seq >= before_seq:
                    break
                meters.add(r)
                reader.events(r)
        finally:
            source.close()
        self.meters, self.reader, self._primed = meters, reader, True

    def after_row(self, row: Mapping[str, object]) -> list[Message]:
        seq = int_of(row, "seq")
        if not self._primed:
            self._prime(seq)
        if seq in self._recent:  # sent again after a reconnection: its events too
            return [("events", p) for p in self._recent[seq]]
        plain = PlainRow(
            seq, str(row["kind"]), opt_int_of(row, "round"), opt_map_of(row, "data") or {}
        )
        self.meters.add(plain)
        events = [
            _payload({"table": self.table, **e.as_dict()})
            for e in self.reader.events(plain, opt_int_of(row, "ts") or 0)
        ]
        if events:
            self._recent[seq] = events
            while len(self._recent) > REMEMBER:
                self._recent.popitem(last=False)
        out: list[Message] = [("events", p) for p in events]
        if plain.kind in ROUND_CLOSING_KINDS:
            out.append(self._meters_message())
        return out

    def idle(self) -> list[Message]:
        """The backlog is sent: the fold has read the whole journal. The first time, the meters
        are compared with the last published (:meth:`_check_high`)."""
        if not self._primed:
            return []
        if not self._checked:
            self._checked = True
            self._check_high()
            self._sent_meters_at = -1  # published again now: the comparison's new reference
        if self._sent_meters_at == self.meters.last_seq:
            return []
        return [self._meters_message()]

    def meters_now(self) -> list[Message]:
        """The meters as folded so far (the host's ``meters``), once the fold is primed."""
        return [self._meters_message()] if self._primed else []

    def _check_high(self) -> None:
        if self._high_path is None or self._report is None:
            return
        try:
            high: object = json.loads(self._high_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # none yet, or cut short by a power cut: nothing to compare with
        lifetime = high.get("lifetime") if isinstance(high, dict) else None
        if not isinstance(lifetime, dict):
            return
        before = {str(k): int(v) for k, v in lifetime.items() if isinstance(v, int)}
        back = went_back(self.meters.lifetime, before)
        if back:
            self._report(back)

    def _meters_message(self) -> Message:
        self._sent_meters_at = self.meters.last_seq
        body = self.meters.as_dict()
        self._keep_high(body)
        return ("meters", _payload({"table": self.table, **body}))

    def _keep_high(self, body: MetersView) -> None:
        """Write the lifetime meters being published (a rename; no sync: a value lost in a
        power cut only makes the next comparison weaker, never wrong)."""
        if self._high_path is None or not self._checked:
            return
        tmp = self._high_path.with_name(self._high_path.name + ".tmp")
        try:
            tmp.write_text(
                json.dumps({"seq": body["seq"], "lifetime": body["lifetime"]}), encoding="utf-8"
            )
            tmp.replace(self._high_path)
        except OSError:
            pass
