"""What every game table offers the application, and what the application gives a table.

A table owns one game's state machine. It is driven only from the loop thread: ``handle`` takes
one input event (a button, a shoe frame, a console action), journals it and any decision it makes
before acting on it, and refuses an out-of-order input with a reason rather than raising.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Final, Protocol

from controller.journal.store import Journal
from controller.tables.kernel.sim import SimControls
from drivers.dealer_display import DealerDisplay
from drivers.number_display import NumberDisplay
from drivers.seat_lamps import SeatLamps
from drivers.shoe_protocol import SessionPosition

if TYPE_CHECKING:
    from controller.config.profile import Profile
    from controller.config.settings import ConfigStore
    from controller.rng.certified import CertifiedRng


class TableError(Exception):
    """Base error of the table layer."""


class RefusalCode(StrEnum):
    """Why an input or a command is refused, in one word: the code of a console's
    ``ERR <CODE> <reason>`` reply (docs/console.md) and of a table's refusal rows."""

    SYNTAX = "SYNTAX"  # the line is malformed
    UNKNOWN = "UNKNOWN"  # no such command, action or button
    AUTH = "AUTH"  # a login (or a supervisor's) is needed
    LOCKED = "LOCKED"  # the console's login is locked out
    RANGE = "RANGE"  # a value out of its range
    STATE = "STATE"  # not in the table's present state
    FAULT = "FAULT"  # a fault stops it until a technician clears it
    IO = "IO"  # a device or file could not be read or written
    # no new round while play is held: the enclosure door, a UPS power-fail, the host's disable,
    # the feed's decision hold; not a fault (nothing to clear): the same input works once lifted
    HOLD = "HOLD"


#: The codes a console reply carries.
CONSOLE_CODES: Final = tuple(code.value for code in RefusalCode)


class Refused(TableError):
    """An input the table's current state does not allow; ``reason`` says why (journaled)."""

    def __init__(self, reason: str, code: RefusalCode | str = RefusalCode.STATE) -> None:
        super().__init__(reason)
        self.reason = reason
        #: A :class:`RefusalCode` (a stand-in's other word is said as STATE by the console).
        self.code = str(code)


class ShoeReader(Protocol):
    """The shoe's serial link as a table drives it (drivers/serial_shoe.SerialShoe)."""

    def start(self) -> None: ...
    def stop(self, timeout: float = 2.0) -> bool: ...
    def acknowledge(self, sid: str, seq: int) -> None: ...
    def resync(self, seq: int) -> None: ...


class OpenShoe(Protocol):
    """Builds the shoe reader, resuming the journaled session (``$NAK,next,SID``)."""

    def __call__(self, *, resume: SessionPosition | None) -> ShoeReader: ...


@dataclass(frozen=True)
class Devices:
    """The drivers the profile names (None when not fitted), built by controller/devices.py,
    and the simulator's controls (empty on real hardware)."""

    display: NumberDisplay | None = None
    seat_lamps: SeatLamps | None = None
    dealer_display: DealerDisplay | None = None
    #: Opens the shoe's reader: the baccarat table does, knowing from its journal where the
    #: shoe resumes.
    open_shoe: OpenShoe | None = None
    sim: SimControls = field(default_factory=SimControls)


@dataclass
class TableContext:
    """Everything a table may touch: the journal, settings, outputs and the alarm channel."""

    journal: Journal
    settings: ConfigStore
    devices: Devices = field(default_factory=Devices)
    alarm: Callable[[str], None] = lambda text: None  # unsolicited "!" console line
    #: Unsolicited "!" lines for every console but the one named (None: every console): what a
    #: button did is said unasked everywhere, except on the console whose ``sim button`` pressed
    #: it, which hears it in its reply.
    announce: Callable[[list[str], str | None], None] = lambda lines, skip: None
    post: Callable[[object], None] = lambda event: None  # queue an event for the loop
    #: Faults the application holds (journal, program manifest, settings) that stop play until
    #: a technician clears them; a table refuses round inputs while this is non-empty.
    app_faults: Callable[[], list[str]] = lambda: []
    #: Why the next decision (a pai gow draw, a baccarat coup) is withheld now, or None: the
    #: profile's ``[feed] hold_decisions_unacked_s`` while the broker lags (read-only state).
    decision_hold: Callable[[], str | None] = lambda: None
    #: Why no new round (pai gow) or coup or shoe (baccarat) may start now, or None: a UPS's
    #: power-fail signal is asserted (docs/power-and-storage.md). A round under way goes on.
    new_round_hold: Callable[[], str | None] = lambda: None
    #: Why the table is CLOSED now (the host's ``disable``, the door holding play), or None:
    #: between rounds its display shows CLOSED (docs/host-commands.md).
    closed: Callable[[], str | None] = lambda: None
    #: Registers what the table runs (on the loop thread, after the commit) when that changes.
    watch_closed: Callable[[Callable[[], None]], None] = lambda fn: None
    #: Why the table's number display cannot show a number now (its serial link is down), or
    #: None: pai gow's RNG may not draw a number no one can see (5324.50(a)(4)).
    number_display_down: Callable[[], str | None] = lambda: None
    rng: CertifiedRng | None = None  # pai gow's draws
    profile: Profile | None = None


@dataclass(frozen=True)
class ActionHelp:
    """What the console's ``help`` says of one table action: its syntax, what it does, and an
    example a technician can type as it is."""

    syntax: str
    summary: str
    example: str


@dataclass(frozen=True)
class ReplyWaiter:
    """A console reply that waits for the events its command caused (a simulated button's
    press, a simulated shoe's frames): ``ready`` says they were handled; ``finish`` turns the
    command's own reply (ending ``OK``) into the reply sent then, e.g. with what they did."""

    ready: Callable[[], bool]
    finish: Callable[[list[str]], list[str]] = lambda lines: lines


@dataclass
class PressWaiter:
    """A simulated button press (``sim button NAME``) waiting for the loop to handle it: the
    button, the console that pressed it (which hears the outcome in its reply, not as ``!``
    lines), and the outcome once the table has handled the press."""

    button: str
    source: str | None
    done: bool = False
    lines: list[str] = field(default_factory=list)
    refused: Refused | None = None

    def finish(self, lines: list[str], refused: Refused | None) -> None:
        self.lines, self.refused, self.done = list(lines), refused, True

    def waiter(self) -> ReplyWaiter:
        """The console reply's waiter: ready once the press is handled."""
        return ReplyWaiter(lambda: self.done, self.reply)

    def reply(self, reply: list[str]) -> list[str]:
        """The console's reply (``pressed ...``, ``OK``) with what the press did; a refused
        press ends ``ERR``."""
        if not self.done or not reply or reply[-1] != "OK":
            return reply
        if self.refused is not None:
            code = self.refused.code if self.refused.code != "UNKNOWN" else "STATE"
            return [*reply[:-1], f"ERR {code} {self.button} refused: {self.refused.reason}"]
        return [*reply[:-1], *self.lines, "OK"]


class Table(Protocol):
    """The interface the application and the console rely on: everything they call."""

    game: str
    #: The application journals each event as one transaction (docs/journal.md).
    journal_transactions: bool
    #: The rows recovery starts from (an archive keeps the newest live), and the rows an
    #: archive carries forward when older (a fault latch, the shoe's session).
    snapshot_kinds: tuple[str, ...]
    carry_kinds: tuple[tuple[str, ...], ...]

    def journal_untrusted(
        self, lost: int, who: str, rewritten_from: int | None = None
    ) -> list[str]:
        """A supervisor acknowledged a journal finding: void what the journal cannot vouch for;
        return what was done."""
        ...

    def take_reply_waiter(self) -> ReplyWaiter | None:
        """What the last console action's reply waits for (a simulated press), once."""
        ...

    def action_help(self) -> Mapping[str, ActionHelp]:
        """What ``help`` says of each console action of this table."""
        ...

    def action_names(self) -> tuple[str, ...]:
        """The console words :meth:`action` takes (the console routes these here)."""
        ...

    def query(self, name: str, args: list[str]) -> list[str]:
        """A question of the game that needs no login and journals nothing (the console's
        ``houseway`` at pai gow, ``odds`` at baccarat); raises Refused (SYNTAX, RANGE, STATE,
        UNKNOWN for another game's question)."""
        ...

    def recover(self) -> list[str]:
        """Rebuild state from the journal after a start; return what was resumed or voided."""
        ...

    def handle(self, event: object) -> None:
        """Take one input event from a driver (journal first, then act)."""
        ...

    def action(self, name: str, args: list[str], who: str) -> list[str]:
        """A console action (``sim ...``, dealer overrides); raises Refused with a reason."""
        ...

    def tick(self, now_ns: int) -> None:
        """Called from the loop at least every 200 ms for timers (watchdogs, display blanking)."""
        ...

    def status(self) -> dict[str, str]:
        """State, round, last RNG number or coup, faults: for ``status`` on the console."""
        ...

    def published(self) -> Mapping[str, object]:
        """What the table's monitor shows (controller/scoreboard), as JSON-able data: built
        from the table's own state (never a journal walk: it runs after every event), as new
        objects each call (another thread reads them after the loop has moved on). The
        application publishes it when it changed (controller.app.Publication)."""
        ...

    def round_in_progress(self) -> bool:
        """True while configuration changes must be refused."""
        ...

    def faults(self) -> list[str]:
        """Active faults that stop play until a technician clears them."""
        ...

    def clear_fault(self, who: str) -> list[str]:
        """Clear what can be cleared (after its self-test passes); raise Refused otherwise."""
        ...

    def close(self) -> None:
        """Stop the table's drivers (called once at shutdown)."""
        ...
