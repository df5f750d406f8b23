"""The table's end of the card shoe's serial link: each frame the driver accepted is journaled,
then acknowledged to the shoe, then played; refused frames, the link's state and the watchdog are
journaled and said (DESIGN.md "Reference shoe protocol", docs/shoe-protocol.md).
"""

from __future__ import annotations

from typing import Any

from controller.journal.store import JournalError
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
from drivers.shoe_events import (
    ShoeFrameAccepted,
    ShoeFrameRefused,
    ShoeLinkChanged,
    ShoeSession,
    ShoeWatchdog,
)

SHOE_EVENTS = (ShoeFrameAccepted, ShoeSession, ShoeFrameRefused, ShoeLinkChanged, ShoeWatchdog)


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
        self.up = False
        self.watchdog_ok = True

    def handle(self, event: object) -> None:
        """One event of the shoe driver (one of :data:`SHOE_EVENTS`)."""
        if isinstance(event, ShoeFrameAccepted):
            self._frame(event)
        elif isinstance(event, ShoeSession):
            row: dict[str, Any] = {"seq": event.seq, "model": event.model,
                                   "firmware": event.firmware}
            if event.raw:
                row["raw"] = event.raw.decode("ascii", "replace")
            seq = self._rec.log(K_SESSION, row)
            if self.reader is not None:
                self.reader.acknowledge(event.seq)
            self._rec.input_seq = seq
            self._play.apply_session(event.model)
        elif isinstance(event, ShoeFrameRefused):
            self._rec.log(K_REFUSED_FRAME, {"reason": event.reason, "detail": event.detail,
                                            "raw": event.raw.decode("ascii", "replace")[:120],
                                            "expected_seq": event.expected_seq,
                                            "nak_sent": event.nak_sent})
        elif isinstance(event, ShoeLinkChanged):
            self.up = event.up
            self._rec.log(K_LINK, {"up": event.up, "reason": event.reason})
            if not event.up:
                self._rec.alarm(f"SHOE LINK DOWN {event.reason}")
        elif isinstance(event, ShoeWatchdog):
            self.watchdog_ok = event.ok
            self._rec.log(K_WATCHDOG, {"ok": event.ok,
                                       "silent_for_s": round(event.silent_for_s, 3)})
            if not event.ok:
                self._rec.alarm("SHOE SILENT: no valid frame for more than the watchdog period;"
                                " no cards are accepted until the shoe is back")
                self._view.show("SHOE OFFLINE", "WAIT FOR THE SHOE")
            else:
                self._view.show_state()

    def _frame(self, event: ShoeFrameAccepted) -> None:
        if self._resync_from is not None:
            if event.seq != self._resync_from:
                return  # queued before the resync: the shoe resends it in order
            self._resync_from = None
        row: dict[str, Any] = {"seq": event.seq, "type": event.type,
                               "fields": list(event.fields), "known": event.known}
        if event.raw:
            row["raw"] = event.raw.decode("ascii", "replace")
        try:
            seq = self._rec.log(K_FRAME, row)
        except JournalError:
            # Not journaled, so never acknowledged and never acted on: have the shoe send it
            # again (it still holds it) instead of letting a later cumulative $ACK cover it. The
            # JournalError goes on to the application as a fault.
            self._resync_from = event.seq
            if self.reader is not None:
                self.reader.resync(event.seq)
            raise
        if self.reader is not None:
            self.reader.acknowledge(event.seq)
        self._rec.input_seq = seq
        self._play.apply_frame(event.type, list(event.fields), event.known)

    def stop(self) -> None:
        if self.reader is not None:
            self.reader.stop(timeout=2.0)
