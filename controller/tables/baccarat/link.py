"""The table's end of the card shoe's serial link (docs/design.md "Reference shoe protocol, revision
3", docs/shoe-protocol.md): each frame the driver accepted is journaled, then acknowledged to the
shoe, then played; a new session is journaled with where the old one stood and handed to the
table's rules; refused frames, the link's state and the watchdog are journaled as counted
summaries.

Only what is journaled is ever acknowledged: a restarted controller resumes with
``$NAK,next,SID`` from its journal, and a shoe cannot resend a frame it was told was accepted.
Heartbeats never reach the table (revision 3: they take no SEQ and feed the driver's watchdog),
so an idle table journals nothing and the SEQs of the frame rows of a session are contiguous.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Final

from controller.journal.store import JournalError
from controller.journal.summary import Summaries
from controller.tables.baccarat.coup import CoupPlay
from controller.tables.baccarat.data import (
    K_FRAME,
    K_LINK,
    K_REFUSED_FRAME,
    K_SESSION,
    K_WATCHDOG,
)
from controller.tables.baccarat.display import Presenter
from controller.tables.baccarat.record import Record
from controller.tables.table import ShoeReader
from drivers.shoe_events import (
    ShoeFrameAccepted,
    ShoeFrameRefused,
    ShoeLinkChanged,
    ShoeSession,
    ShoeWatchdog,
)
from drivers.shoe_protocol import REVISION, SessionPosition, is_sid, next_seq

SHOE_EVENTS = (ShoeFrameAccepted, ShoeSession, ShoeFrameRefused, ShoeLinkChanged, ShoeWatchdog)
#: What a technician checks when the shoe's port is down (the driver reopens it by itself;
#: docs/configuration.md "Stable device names").
SHOE_LINK_HINT: Final = (
    ": check its cable and that its USB adapter is in the USB port the profile's name stands for;"
    " reopened until it answers"
)

#: The interval of the counted summaries of refused frames, the link and the watchdog.
SUMMARY_NS: Final = 60 * 10**9
RAW_KEPT: Final = 48  # bytes of a refused frame kept in its summary row
#: The refusal reason of a $HELO of another protocol revision (drivers.shoe_protocol.Verdict).
REFUSED_REVISION: Final = "bad_revision"


#: A link that goes down and up (or a watchdog that trips and recovers) a few times a minute is
#: journaled change by change; more than this many of one kind a minute is chatter, counted.
CHANGES_AT_ONCE: Final = 4


class _RecordRows:
    """The table's record as the counted summaries' journal: rows in the current round,
    through the input's unit of work (rolled back with it)."""

    def __init__(self, record: Record) -> None:
        self._rec = record

    def append(
        self, kind: str, data: Mapping[str, object] | None = None, round_id: int | None = None
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

    def __init__(
        self, reader: ShoeReader | None, record: Record, play: CoupPlay, view: Presenter
    ) -> None:
        #: The shoe reader (drivers.serial_shoe.SerialShoe, or a test's stand-in); None when the
        #: table has no shoe yet.
        self.reader = reader
        self._rec = record
        self._play = play
        self._view = view
        self._resync_from: int | None = None  # a shoe SEQ that could not be journaled
        self._await_session = False  # a new session's HELO could not be journaled
        self._refused_helo: str | None = None  # the $HELO last refused (said once on the console)
        #: Why the shoe on the line is refused (its $HELO names another protocol revision), until
        #: a shoe that speaks ours starts a session; shown by ``status`` as a shoe fault.
        self.refused: str | None = None
        self.up = False
        #: Why the link is down (the driver's words: the port and the errno's), "" when up.
        self.down_reason = ""
        self.watchdog_ok = True
        #: Where the journaled session stands: its SID and the SEQ after its newest row
        #: (recovery sets it from the journal; the reader resumes from it).
        self.position: SessionPosition | None = None
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
            self._frame(event)
        elif isinstance(event, ShoeSession):
            self._await_session = False
            self._resync_from = None
            self._session(event)
        elif isinstance(event, ShoeFrameRefused):
            detail: dict[str, object] = {
                "reason": event.reason,
                "detail": event.detail[:80],
                "raw": event.raw[:RAW_KEPT].decode("ascii", "replace"),
            }
            if event.expected_seq is not None:
                detail["expected_seq"] = event.expected_seq
            if event.reason == REFUSED_REVISION and self._refuse_shoe(event, detail):
                return
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
            self.down_reason = "" if event.up else event.reason
            if not event.up:
                self._rec.alarm(f"SHOE LINK DOWN {event.reason}{SHOE_LINK_HINT}")
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

    def _refuse_shoe(self, event: ShoeFrameRefused, detail: dict[str, object]) -> bool:
        """docs/design.md: a $HELO names the protocol revision it speaks; a shoe of another
        revision (or none) is refused as a whole, so neither end half-understands the other.
        A $HELO not refused before is journaled at once and said on the console and the
        dealer display; its resends (every 500 ms) are counted like any refused frame (False).
        None of that shoe's frames is ever accepted (they are of no session we know)."""
        raw = event.raw[:RAW_KEPT].decode("ascii", "replace")  # as ``detail`` has it
        if raw == self._refused_helo:
            return False
        self._refused_helo = raw
        self.refused = event.detail
        self._rec.log(K_REFUSED_FRAME, {**detail, "count": 1})
        self._rec.alarm(
            f"SHOE REFUSED: {event.detail}. None of its cards is accepted: fit a shoe that"
            f" speaks shoe protocol revision {REVISION}"
        )
        self._view.show("SHOE REFUSED", f"PROTOCOL REV {REVISION} ONLY")
        return True

    def tick(self, now_ns: int) -> None:
        """The loop's timer: summary rows whose interval ended."""
        self.summaries.flush(now_ns=now_ns)

    # -- frames --------------------------------------------------------------------------------

    def _session(self, event: ShoeSession) -> None:
        """docs/design.md: a $HELO of a new SID starts a new session; it is journaled with where the
        old session stood, acknowledged, and the table's rules decide what it means."""
        previous = event.previous or self.position
        self.refused = self._refused_helo = None  # a shoe that speaks our revision
        row: dict[str, object] = {
            "sid": event.sid,
            "seq": event.seq,
            "model": event.model,
            "firmware": event.firmware,
        }
        if previous is not None:
            row["previous"] = {"sid": previous.sid, "last_seq": (previous.next_seq - 1) % 10000}
        seq = self._position_row(K_SESSION, row, event.sid, event.seq)
        self._rec.work.input_seq = seq
        self._play.apply_session(event.sid, event.model, renewed=previous is not None)

    def _frame(self, event: ShoeFrameAccepted) -> None:
        # the SID is that of the session row before it (rows are small: docs/design.md)
        row: dict[str, object] = {
            "seq": event.seq,
            "type": event.type,
            "fields": list(event.fields),
        }
        if not event.known:
            row["known"] = False
        seq = self._position_row(K_FRAME, row, event.sid, event.seq)
        self._rec.work.input_seq = seq
        self._play.apply_frame(event.type, list(event.fields), event.known)

    def _position_row(self, kind: str, row: Mapping[str, object], sid: str, shoe_seq: int) -> int:
        """Journal a row that names the shoe's position; acknowledge it to the shoe once it is
        committed (an output). Returns the journal row's seq."""

        def not_journaled() -> None:
            # Never acknowledged, never acted on (the memory is put back): have the shoe send
            # it again (it still holds it) instead of letting a later cumulative $ACK cover it.
            # The JournalError goes on to the application as a fault.
            if kind == K_SESSION:
                self._await_session = True  # the reader forgets the session; its HELO returns
            else:
                self._resync_from = shoe_seq
            if self.reader is not None:
                self.reader.resync(shoe_seq)

        try:
            seq = self._rec.log(kind, row)
        except JournalError:
            self._rec.undo(not_journaled)
            raise
        if self._rec.journal.in_transaction:
            self._rec.undo(not_journaled)  # the commit may still fail
        self.position = SessionPosition(sid, next_seq(shoe_seq)) if is_sid(sid) else None
        reader = self.reader
        if reader is not None:
            self._rec.output(lambda: reader.acknowledge(sid, shoe_seq))  # after the commit
        return seq

    def memo(self) -> Callable[[], None]:
        """A copy of what the link remembers (not the resync state), and what puts it back."""
        kept = (self.position, self.up, self.watchdog_ok, self._refused_helo, self.refused)
        folds = copy.deepcopy(self.summaries.folds)

        def restore() -> None:
            (self.position, self.up, self.watchdog_ok, self._refused_helo, self.refused) = kept
            self.summaries.folds = folds

        return restore

    def stop(self) -> None:
        self.summaries.flush(force=True, now_ns=0)
        if self.reader is not None:
            self.reader.stop(timeout=2.0)
