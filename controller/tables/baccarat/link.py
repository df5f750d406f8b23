"""The table's end of the card shoe's serial link (docs/design.md "Reference shoe protocol, revision
2", docs/shoe-protocol.md): each frame the driver accepted is journaled, then acknowledged to the
shoe, then played; a new session is journaled with where the old one stood and handed to the
table's rules; heartbeats, refused frames, the link's state and the watchdog are journaled as
counted summaries.

Only what is journaled is ever acknowledged: a restarted controller resumes with
``$NAK,next,SID`` from its journal, and a shoe cannot resend a frame it was told was accepted.
Heartbeats are not journaled one by one: the driver answers each with an ``$ACK`` of the last
journaled SEQ (so the shoe does not resend), and a ``shoe.heartbeats`` row carrying the last
heartbeat's SEQ is journaled at most once a minute, or sooner when the shoe's buffer could fill.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, Final

from controller.journal.store import JournalError
from controller.journal.summary import Summaries
from controller.tables.baccarat.coup import CoupPlay
from controller.tables.baccarat.data import (
    K_FRAME,
    K_HEARTBEATS,
    K_LINK,
    K_REFUSED_FRAME,
    K_SESSION,
    K_WATCHDOG,
)
from controller.tables.baccarat.display import Presenter
from controller.tables.baccarat.record import Record
from drivers.shoe_events import (
    ShoeFrameAccepted,
    ShoeFrameRefused,
    ShoeLinkChanged,
    ShoeSession,
    ShoeWatchdog,
)
from drivers.shoe_protocol import SessionPosition, is_sid, next_seq

SHOE_EVENTS = (ShoeFrameAccepted, ShoeSession, ShoeFrameRefused, ShoeLinkChanged, ShoeWatchdog)

#: A shoe holds 64 or more unacknowledged frames (docs/design.md). Heartbeats taken since the last
#: journaled row are acknowledged by the next row; one is written once this many are waiting, so
#: the shoe never holds more than 60 + what is in flight: a margin of 4 frames (4 s of 1 Hz
#: heartbeats) for the row's commit and the $ACK to reach it.
HEARTBEATS_PER_ROW: Final = 60
#: ... and at most once a minute (an idle table: <= 60 rows an hour at 1 Hz heartbeats).
HEARTBEAT_ROW_NS: Final = 60 * 10**9
#: The interval of the counted summaries of refused frames, the link and the watchdog.
SUMMARY_NS: Final = 60 * 10**9
RAW_KEPT: Final = 48  # bytes of a refused frame kept in its summary row


#: A link that goes down and up (or a watchdog that trips and recovers) a few times a minute is
#: journaled change by change; more than this many of one kind a minute is chatter, counted.
CHANGES_AT_ONCE: Final = 4


class _RecordRows:
    """The table's record as the counted summaries' journal: rows in the current round,
    through the input's unit of work (rolled back with it)."""

    def __init__(self, record: Record) -> None:
        self._rec = record

    def append(
        self, kind: str, data: Mapping[str, Any] | None = None, round_id: int | None = None
    ) -> int:
        return self._rec.log(kind, dict(data or {}))


def link_summaries(record: Record) -> Summaries:
    """Counted summary rows (controller/journal/summary.py): the first ``at_once`` events of a
    key in an interval are journaled at once (``count`` 1, so an operator sees them); the rest
    are counted and journaled as one row (``count``, ``folded``) when the interval ends (the
    next event of the key, or ``flush`` from the loop's tick). A crash loses at most the counts
    of one interval, never the first event."""
    return Summaries(
        _RecordRows(record), SUMMARY_NS / 1e9, stamped=False, digits=1, roll_on_note=True
    )


class ShoeLink:
    """Journals and acknowledges the shoe's frames and hands them to the coup."""

    def __init__(self, reader: Any, record: Record, play: CoupPlay, view: Presenter) -> None:
        #: The shoe reader (drivers.serial_shoe.SerialShoe, or a test's stand-in); None when the
        #: table has no shoe yet.
        self.reader = reader
        self._rec = record
        self._play = play
        self._view = view
        self._resync_from: int | None = None  # a shoe SEQ that could not be journaled
        self._await_session = False  # a new session's HELO could not be journaled
        self.up = False
        self.watchdog_ok = True
        #: Where the journaled session stands: its SID and the SEQ after its newest row
        #: (recovery sets it from the journal; the reader resumes from it).
        self.position: SessionPosition | None = None
        self._beats = 0  # heartbeats accepted since the newest position row
        self._first_beat: int | None = None
        self._row_ns: int | None = None  # when the newest position row was journaled
        self.summaries = link_summaries(record)

    def handle(self, event: object) -> None:
        """One event of the shoe driver (one of :data:`SHOE_EVENTS`)."""
        if isinstance(event, ShoeFrameAccepted):
            if self._await_session:
                return  # the new session's $HELO could not be journaled: it comes again
            if self._resync_from is not None:
                if event.seq != self._resync_from:
                    return  # queued before the resync: the shoe resends it in order
                self._resync_from = None
            if event.type == "HBT" and event.known:
                self._heartbeat(event)
            else:
                self._frame(event)
        elif isinstance(event, ShoeSession):
            self._await_session = False
            self._resync_from = None
            self._session(event)
        elif isinstance(event, ShoeFrameRefused):
            detail: dict[str, Any] = {
                "reason": event.reason,
                "detail": event.detail[:80],
                "raw": event.raw[:RAW_KEPT].decode("ascii", "replace"),
            }
            if event.expected_seq is not None:
                detail["expected_seq"] = event.expected_seq
            self.summaries.note(
                K_REFUSED_FRAME, f"refused:{event.reason}", detail, now_ns=event.monotonic_ns
            )
        elif isinstance(event, ShoeLinkChanged):
            self.up = event.up
            self.summaries.note(
                K_LINK,
                f"link:{event.up}",
                {"up": event.up, "reason": event.reason[:80]},
                now_ns=event.monotonic_ns,
                at_once=CHANGES_AT_ONCE,
            )
            if not event.up:
                self._rec.alarm(f"SHOE LINK DOWN {event.reason}")
        elif isinstance(event, ShoeWatchdog):
            self.watchdog_ok = event.ok
            self.summaries.note(
                K_WATCHDOG,
                f"watchdog:{event.ok}",
                {"ok": event.ok, "silent_for_s": round(event.silent_for_s, 1)},
                now_ns=event.monotonic_ns,
                at_once=CHANGES_AT_ONCE,
            )
            if not event.ok:
                self._rec.alarm(
                    "SHOE SILENT: no valid frame for more than the watchdog period;"
                    " no cards are accepted until the shoe is back"
                )
                self._view.show("SHOE OFFLINE", "WAIT FOR THE SHOE")
            else:
                self._view.show_state()

    def tick(self, now_ns: int) -> None:
        """The loop's timer: summary rows whose interval ended."""
        self.summaries.flush(now_ns=now_ns)

    # -- frames --------------------------------------------------------------------------------

    def _session(self, event: ShoeSession) -> None:
        """docs/design.md: a $HELO of a new SID starts a new session; it is journaled with where the
        old session stood, acknowledged, and the table's rules decide what it means."""
        previous = event.previous or self.position
        row: dict[str, Any] = {
            "sid": event.sid,
            "seq": event.seq,
            "model": event.model,
            "firmware": event.firmware,
        }
        if previous is not None:
            row["previous"] = {"sid": previous.sid, "last_seq": (previous.next_seq - 1) % 10000}
        seq = self._position_row(K_SESSION, row, event.sid, event.seq, event.monotonic_ns)
        self._rec.work.input_seq = seq
        self._play.apply_session(event.sid, event.model, renewed=previous is not None)

    def _heartbeat(self, event: ShoeFrameAccepted) -> None:
        """Counted, not journaled one by one (the driver keeps the shoe from resending); the
        summary row is the heartbeats' durable position and their acknowledgement."""
        if self._first_beat is None:
            self._first_beat = event.seq
        self._beats += 1
        if self._row_ns is None:
            self._row_ns = event.monotonic_ns
        if (
            self._beats >= HEARTBEATS_PER_ROW
            or event.monotonic_ns - self._row_ns >= HEARTBEAT_ROW_NS
        ):
            self._position_row(
                K_HEARTBEATS,
                {
                    "sid": event.sid,
                    "seq": event.seq,
                    "first_seq": self._first_beat,
                    "count": self._beats,
                },
                event.sid,
                event.seq,
                event.monotonic_ns,
            )

    def _frame(self, event: ShoeFrameAccepted) -> None:
        # the SID is that of the session row before it (rows are small: docs/design.md)
        row: dict[str, Any] = {"seq": event.seq, "type": event.type, "fields": list(event.fields)}
        if not event.known:
            row["known"] = False
        seq = self._position_row(K_FRAME, row, event.sid, event.seq, event.monotonic_ns)
        self._rec.work.input_seq = seq
        self._play.apply_frame(event.type, list(event.fields), event.known)

    def _position_row(
        self, kind: str, row: dict[str, Any], sid: str, shoe_seq: int, now_ns: int
    ) -> int:
        """Journal a row that names the shoe's position; acknowledge it to the shoe once it is
        committed (an output). Returns the journal row's seq."""
        first = self._first_beat if kind == K_HEARTBEATS else shoe_seq
        assert first is not None

        def not_journaled() -> None:
            # Never acknowledged, never acted on (the memory is put back): have the shoe send
            # it again (it still holds it) instead of letting a later cumulative $ACK cover it.
            # The JournalError goes on to the application as a fault.
            if kind == K_SESSION:
                self._await_session = True  # the reader forgets the session; its HELO returns
            else:
                self._resync_from = first
            self._beats, self._first_beat = 0, None
            if self.reader is not None:
                self.reader.resync(first)

        try:
            seq = self._rec.log(kind, row)
        except JournalError:
            self._rec.undo(not_journaled)
            raise
        if self._rec.journal.in_transaction:
            self._rec.undo(not_journaled)  # the commit may still fail
        self.position = SessionPosition(sid, next_seq(shoe_seq)) if is_sid(sid) else None
        self._beats, self._first_beat, self._row_ns = 0, None, now_ns
        reader = self.reader
        if reader is not None:
            self._rec.output(lambda: reader.acknowledge(sid, shoe_seq))  # after the commit
        return seq

    def memo(self) -> Callable[[], None]:
        """A copy of what the link remembers (not the resync state), and what puts it back."""
        kept = (
            self.position,
            self._beats,
            self._first_beat,
            self._row_ns,
            self.up,
            self.watchdog_ok,
        )
        folds = copy.deepcopy(self.summaries.folds)

        def restore() -> None:
            (
                self.position,
                self._beats,
                self._first_beat,
                self._row_ns,
                self.up,
                self.watchdog_ok,
            ) = kept
            self.summaries.folds = folds

        return restore

    def stop(self) -> None:
        self.summaries.flush(force=True, now_ns=0)
        if self.reader is not None:
            self.reader.stop(timeout=2.0)
