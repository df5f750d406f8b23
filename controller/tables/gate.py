"""One gate for "no new round": every reason a new round, coup or shoe may not start, in one place.

A table asks :meth:`PlayGate.new_round_hold` before it opens a round (``TableContext``); the
round under way always finishes. The reasons are kept here, each with its own latch:

* the UPS's power-fail signal (``controller.app.PowerWatch``, docs/power-and-storage.md);
* the table disabled by the host (:class:`DisableLatch`: the host's signed ``disable``,
  docs/host-commands.md), lifted by the host's ``enable`` or a supervisor's ``table enable``;
* the enclosure door (:class:`DoorWatch`, docs/console.md "The door"): open, or opened and not yet
  acknowledged with ``door ack``, when the profile's ``[devices.door] hold_play`` says so.

Each latch is rebuilt from the journal at start (its last row says), so it survives a restart.
While the host's latch is set (or the door holds play) the table's display shows CLOSED between
rounds and the monitor a CLOSED banner (docs/host-commands.md "CLOSED on the display and the
monitor"): each latch runs its ``watchers`` once the row that changed it is committed.
Loop thread only.
"""

from __future__ import annotations

from collections.abc import Callable

from controller.fields.readers import opt_int_of
from controller.journal.store import Journal
from drivers.door import DoorChanged

#: The rows of the host's latch (docs/events.md: 190 table disabled, 191 table enabled).
DISABLED_KIND = "table.disabled"
ENABLED_KIND = "table.enabled"
#: The door's rows (docs/events.md: 110 door open, 111 door closed).
DOOR_OPENED_KIND = "door.opened"
DOOR_CLOSED_KIND = "door.closed"
DOOR_ACK_KIND = "door.acknowledged"
#: The latches' rows an archive carries forward (the newest of each group): they survive retention.
CARRY_KINDS: tuple[tuple[str, ...], ...] = (
    (DISABLED_KIND, ENABLED_KIND),
    (DOOR_OPENED_KIND, DOOR_CLOSED_KIND, DOOR_ACK_KIND),
    (DOOR_OPENED_KIND,),
    # the last accepted host command: its seq bounds replays (docs/host-commands.md)
    ("host.command",),
)


def _changed(journal: Journal, watchers: list[Callable[[], None]]) -> None:
    """A latch changed: its watchers run once the row that says so is committed."""
    for fn in watchers:
        journal.after_commit(fn)


class PlayGate:
    """Every reason no new round may start; the table's refusal says them all."""

    def __init__(self) -> None:
        self._holds: list[Callable[[], str | None]] = []

    def add(self, hold: Callable[[], str | None]) -> None:
        """One more reason: ``hold`` says why no new round may start now, or None."""
        self._holds.append(hold)

    def reasons(self) -> list[str]:
        return [r for r in (h() for h in self._holds) if r is not None]

    def new_round_hold(self) -> str | None:
        """Why no new round may start now (every reason, ``; `` apart), or None."""
        reasons = self.reasons()
        return "; ".join(reasons) if reasons else None


class DisableLatch:
    """The table taken out of play by the host: journaled, so it survives a restart; while set
    no new round starts, the display and the monitor show CLOSED."""

    def __init__(self, journal: Journal, alarm: Callable[[str], None]) -> None:
        self._journal = journal
        self._alarm = alarm
        #: Run after the commit of each change (the table's display shows or lifts CLOSED).
        self.watchers: list[Callable[[], None]] = []
        row = journal.last([DISABLED_KIND, ENABLED_KIND])
        self.reason: str | None = (
            str(row.data.get("reason", ""))
            if row is not None and row.kind == DISABLED_KIND
            else None
        )

    @property
    def disabled(self) -> bool:
        return self.reason is not None

    def disable(self, reason: str, source: str, who: str) -> bool:
        """Set the latch (journaled); False when it was set already (nothing journaled)."""
        if self.reason is not None:
            return False
        self._journal.append(DISABLED_KIND, {"reason": reason, "source": source, "who": who})
        self.reason = reason
        self._alarm(f"ALARM table CLOSED by {who}: {reason}; no new round until enabled")
        _changed(self._journal, self.watchers)
        return True

    def enable(self, source: str, who: str) -> bool:
        """Lift the latch (journaled); False when it was not set."""
        if self.reason is None:
            return False
        self._journal.append(ENABLED_KIND, {"source": source, "who": who, "was": self.reason})
        self.reason = None
        self._alarm(f"table enabled by {who}: rounds may start")
        _changed(self._journal, self.watchers)
        return True

    def hold(self) -> str | None:
        if self.reason is None:
            return None
        return (
            f"CLOSED by the host ({self.reason}): no new round until the host's enable"
            " or a supervisor's `table enable`"
        )

    def line(self) -> str:
        """``status``."""
        return f"CLOSED: {self.reason}" if self.reason is not None else "open for play"


class DoorWatch:
    """The enclosure door: each opening journaled with its meter (``door.opened``: event 110
    and ``!ALARM``), each closing (111). With ``hold_play`` no new round starts while it is
    open, nor after, until a technician's ``door ack`` (journaled)."""

    def __init__(
        self, journal: Journal, alarm: Callable[[str], None], pin: int, *, hold_play: bool
    ) -> None:
        self._journal = journal
        self._alarm = alarm
        self.pin = pin
        self.hold_play = hold_play
        #: Run after the commit of each change that starts or ends the hold on play.
        self.watchers: list[Callable[[], None]] = []
        row = journal.last([DOOR_OPENED_KIND, DOOR_CLOSED_KIND, DOOR_ACK_KIND])
        opened = journal.last([DOOR_OPENED_KIND])
        self.count = (opt_int_of(opened.data, "count") or 0) if opened is not None else 0
        self.open = row is not None and row.kind == DOOR_OPENED_KIND
        #: Opened since the last ``door ack``.
        self.unacknowledged = row is not None and row.kind != DOOR_ACK_KIND

    def handle(self, event: DoorChanged) -> None:
        if event.open == self.open:
            return
        self.open = event.open
        if event.open:
            self.count += 1
            self.unacknowledged = True
            self._journal.append(DOOR_OPENED_KIND, {"pin": event.pin, "count": self.count})
            then = " no new round until it is closed and `door ack`" if self.hold_play else ""
            self._alarm(f"ALARM enclosure door OPEN (GPIO {event.pin}):{then or ' play goes on'}")
        else:
            self._journal.append(DOOR_CLOSED_KIND, {"pin": event.pin, "count": self.count})
            then = "; `door ack` lets rounds start" if self.hold_play else ""
            self._alarm(f"enclosure door closed (GPIO {event.pin}){then}")
        if self.hold_play:
            _changed(self._journal, self.watchers)

    def acknowledge(self, who: str) -> str:
        """``door ack``: refused (ValueError with the reason) while the door is open."""
        if self.open:
            raise ValueError("the enclosure door is open: close it, then `door ack`")
        if not self.unacknowledged:
            return "nothing to acknowledge: the door has not been opened since the last `door ack`"
        self._journal.append(DOOR_ACK_KIND, {"who": who, "count": self.count})
        self.unacknowledged = False
        if self.hold_play:
            _changed(self._journal, self.watchers)
        return f"door acknowledged by {who}: rounds may start"

    def hold(self) -> str | None:
        if not self.hold_play:
            return None
        if self.open:
            return "the enclosure door is open: no new round until it is closed and `door ack`"
        if self.unacknowledged:
            return "the enclosure door was opened: no new round until `door ack`"
        return None

    def closed(self) -> str | None:
        """What the display and the monitor say while the door holds play (CLOSED), or None."""
        if not self.hold_play or not (self.open or self.unacknowledged):
            return None
        return "enclosure door open" if self.open else "enclosure door opened: awaiting door ack"

    def line(self) -> str:
        """``status``."""
        state = "OPEN" if self.open else "closed"
        ack = ", not yet acknowledged (`door ack`)" if self.unacknowledged and not self.open else ""
        times = f"{self.count} opening{'' if self.count == 1 else 's'} in this journal"
        return f"{state}{ack} (GPIO {self.pin}; {times})"
