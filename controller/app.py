"""The application object: builds everything from a hardware profile and runs the one loop.

Drivers run their own threads (serial readers, GPIO edge callbacks, the console port) and only
post events to ``self.queue``; the loop thread takes them one at a time and is the only thread
that touches table state, the journal or the configuration (docs/design.md, the data flow). Nothing
lives at module level, so a second Application in the same process starts clean.
"""

from __future__ import annotations

import functools
import importlib
import logging
import queue
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Protocol, TypeVar

from controller.events import (
    Call,
    ConsoleLine,
    ConsolePortBack,
    ConsolePortLost,
    ConsoleRejected,
    Shutdown,
)
from controller.fields.readers import opt_int_of
from controller.floor.control import HostCommandReceived, HostCommands, HostCommandsFlooded
from controller.journal.store import Journal, JournalError
from controller.journal.summary import Summaries
from controller.journal.trust import JournalTrust, acknowledgment_lines, open_journal
from controller.journal.verify import VerifyResult
from controller.loop.faults import Faults
from controller.loop.replies import DeferredReplies, PendingReply
from controller.sdnotify import Notifier
from controller.startup.checks import StartupChecks
from controller.tables.gate import CARRY_KINDS, DisableLatch, DoorWatch, PlayGate
from controller.tables.table import Devices, Refused, Table, TableContext
from drivers.board import CONDITIONS, BoardCondition, BoardMonitor, detect_rtc
from drivers.door import DoorChanged
from drivers.power_fail import PowerFailChanged
from drivers.serial_display import REOPEN_MAX_S, DeviceLinkChanged

if TYPE_CHECKING:  # the publisher (ssl, paho) is imported only when a profile names a broker
    from controller.config.profile import Profile
    from controller.console.interpreter import Console
    from controller.devices import BuiltDevices
    from controller.feed.publisher import Publisher
    from controller.rng.certified import CertifiedRng
    from controller.rng.cycle import BackgroundCycle
    from controller.tables.baccarat.table import BaccaratTable
    from controller.tables.paigow.table import PaigowTable
    from controller.tables.startpos.table import StartposTable

log = logging.getLogger("controller")
T = TypeVar("T")

TICK_S = 0.1
#: How long a console reply may wait for the events its command caused (simulated devices).
REPLY_WAIT_S = 5.0
#: game -> (module, class) of its table; imported only for the game the profile names.
TABLES: Final[Mapping[str, tuple[str, str]]] = MappingProxyType(
    {
        "paigow": ("controller.tables.paigow.table", "PaigowTable"),
        "baccarat": ("controller.tables.baccarat.table", "BaccaratTable"),
        "startpos": ("controller.tables.startpos.table", "StartposTable"),
    }
)


class Publication:
    """The table's published view, for readers on other threads (the scoreboard server).

    The loop thread alone calls :meth:`publish`, after each event it handled and after recovery,
    with the table's :meth:`~controller.tables.table.Table.published` view; when the view
    changed it becomes the next version and waiting readers wake. Readers get ``(version,
    view)`` pairs and never touch the table. A view is handed over whole: the table builds new
    objects for each call, so nothing a reader holds changes under it.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._version = 0
        self._view: Mapping[str, object] = MappingProxyType({})
        self._published_ns = 0
        self._beats = 0
        self._beat_ns = 0
        self._closed = False

    def publish(self, view: Mapping[str, object]) -> bool:
        """Store ``view`` as a new version if it differs from the last; True when it did.
        Every call is also the loop's beat (:meth:`beat`), changed or not."""
        # Only the loop thread writes _view, so it compares without the lock; readers wait
        # only for the swap.
        with self._cond:
            self._beats += 1
            self._beat_ns = time.monotonic_ns()
        if view == self._view:
            return False
        with self._cond:
            self._version += 1
            self._view = view
            self._published_ns = time.monotonic_ns()
            self._cond.notify_all()
        return True

    def latest(self) -> tuple[int, Mapping[str, object]]:
        """The current version number (0: nothing published yet) and its view."""
        with self._cond:
            return self._version, self._view

    def published_ns(self) -> int:
        """``time.monotonic_ns()`` when the current version was stored (for the benchmarks)."""
        with self._cond:
            return self._published_ns

    def beat(self) -> tuple[int, int]:
        """How many times the loop thread published (each tick and each event), and
        ``time.monotonic_ns()`` at the last: the scoreboard's heartbeat is sent only while
        this moves, so a frozen or hung loop stops it whatever the server's threads do."""
        with self._cond:
            return self._beats, self._beat_ns

    def wait_newer(self, version: int, timeout: float) -> tuple[int, Mapping[str, object]]:
        """Wait up to ``timeout`` seconds for a version newer than ``version`` (or for
        :meth:`close`); return the current one either way."""
        with self._cond:
            self._cond.wait_for(lambda: self._version > version or self._closed, timeout)
            return self._version, self._view

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Wake every waiting reader for good (shutdown)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class ConsoleOutput(Protocol):
    """A console transport as the application sees it (controller/console/transport.py): it
    posts its lines itself; the application writes alarms to it and closes it."""

    name: str

    def send_unsolicited(self, lines: list[str]) -> None: ...

    def close(self) -> None: ...


class Application:
    """One table controller: profile, journal, settings, devices, table, console, loop."""

    #: The console may hand back a reply that is ready later (see ``_answer``).
    defers_replies = True

    def __init__(
        self,
        profile: Profile,
        state_dir: str | Path,
        *,
        console_port: str | None = None,
        notifier: Notifier | None = None,
        output: Callable[[str], None] | None = None,
    ) -> None:
        self.profile = profile
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        # SimpleQueue: its put() is reentrant, so the SIGTERM handler (controller/cli.py) may
        # post while the loop thread it interrupted is inside a queue operation; queue.Queue's
        # put() would wait forever for the lock that same thread holds.
        self.queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self.notifier = notifier or Notifier()
        self.stop_event = threading.Event()
        self.started_mono = time.monotonic()
        #: Faults held besides the table's (controller/loop/faults.py).
        self.app_faults = Faults(lambda kind, data: self.journal.append(kind, data), self.alarm)
        self.console_port = console_port or profile.console.port
        self._output = output
        self._consoles: list[ConsoleOutput] = []
        self._interpreter: Console | None = None
        #: Console replies that wait for a worker or for the events they caused.
        self.replies = DeferredReplies(self._guarded, REPLY_WAIT_S)
        self._alarm_lock = threading.Lock()
        #: source -> port of serial consoles whose device is gone (being reopened)
        self.console_ports_down: dict[str, str] = {}
        #: device -> the fault a serial device missing or lost is (drivers/serial_display.py
        #: reopens it): listed with the faults until the device is back, which clears it
        self.devices_down: dict[str, str] = {}
        self.loop_thread_id: int | None = None
        #: What the table's monitor shows, for the scoreboard server's threads.
        self.publication = Publication()
        self._publish_error: str | None = None
        self._limits_of: object = None  # the settings _limits were read from
        self._limits: tuple[tuple[str, int, int], ...] = ()
        self._status_lines: dict[str, Callable[[], str]] = {}
        #: The host feed's publisher (docs/feed.md), started with the table when the profile
        #: has a [feed] section.
        self.feed: Publisher | None = None
        #: The host's signed commands, when the profile commissions a host key.
        self.host_commands: HostCommands | None = None

        jset = profile.journal
        # The journal, its signer, the notary that signs heads and the background worker
        # (controller/journal/trust.py). A journal that cannot be trusted to go on (its key
        # missing, another key, another table) refuses the start: StartRefused.
        from controller.program.manifest import profile_is_sealed

        opened = open_journal(
            jset,
            self._state_path,
            jset.table_id or profile.name,
            sealed=profile_is_sealed(profile.source_files),
        )
        self.journal = opened.journal
        from drivers.counter import open_counter

        self.trust = JournalTrust(
            opened,
            jset,
            self._state_path,
            post=lambda fn: self.post(Call(fn)),
            raise_fault=self._raise_fault,
            # the table's latches, and the board's meters (the newest row of each kind)
            carry_kinds=lambda: (
                *_table_class(profile.game).carry_kinds,
                *((kind,) for kind in METER_KINDS),
                *CARRY_KINDS,
            ),
            snapshot_kinds=_snapshot_kinds(profile.game),
            counter=open_counter(jset.counter, jset.counter_index),
        )
        self.add_status("tpm counter", self.trust.counter_line)
        if self.trust.counter is None:
            log.warning("journal: %s", self.trust.counter_line())
        #: Repeated events (refused console lines) folded into counted rows.
        self.summaries = Summaries(self.journal)
        #: The start-up checks (controller/startup/): each journals what it found and raises
        #: what stops play as a fault; the RNG's runs in :meth:`start`.
        self.startup = StartupChecks(self.journal, self.trust, profile, self._raise_fault)
        self.last_verify: VerifyResult = self.startup.journal_verdict()
        self.release = self.startup.install_log()
        self.add_status("release", self.release.describe)
        self.startup.findings()
        self.startup.clock()

        from controller.config.settings import ConfigStore

        self.config = ConfigStore(self.journal, profile.rules)
        self.startup.settings(self.config)
        self.startup.program()

        from controller.devices import BuiltDevices

        self.devices = BuiltDevices(Devices())
        #: The board's power and clock: undervoltage, throttling, the UPS's signal, the RTC.
        self.power = PowerWatch(self.journal, self.alarm, self.trust.sync_now)
        #: Every reason no new round starts (controller/tables/gate.py): the UPS, the host's latch,
        #: the door (added with the table's devices).
        self.gate = PlayGate()
        self.gate.add(self.power.new_round_hold)
        self.disable_latch = DisableLatch(self.journal, self.alarm)
        self.gate.add(self.disable_latch.hold)
        #: The table's outputs that show CLOSED (its display): run after a latch's change.
        self._closed_watchers: list[Callable[[], None]] = []
        self.disable_latch.watchers.append(self._closed_changed)
        self.door: DoorWatch | None = None
        self.rng: CertifiedRng | None = None
        #: rng.background_cycle (docs/rng.md "Cycling and seeding"): started after the start-up
        #: test, stopped first at close
        self.rng_cycle: BackgroundCycle | None = None
        try:
            self.table: Table = self._build_table()
        except Exception as exc:
            # A device the profile names could not be brought up (a GPIO library not
            # installed): journaled, what was opened closed again. A serial port that is not
            # there is not one: its driver opens it when it appears (a fault meanwhile).
            from controller.devices import close_devices

            close_devices(self.devices)
            try:
                self.journal.append(
                    "app.device_error", {"device": "start", "error": str(exc)[:500]}
                )
            finally:
                self.trust.close()
                self.journal.close()
            raise

    # -- construction ------------------------------------------------------------------------

    def _state_path(self, name: str) -> Path:
        """A state file named in the profile's [journal]: inside the state directory (or, for
        the anchor, under the profile's second medium) once symlinks are resolved; the profile
        refuses absolute paths and '..' (controller/config/profile.py), this refuses a symlink
        that leads out."""
        p = Path(name)
        path = p if p.is_absolute() else self.state_dir / p
        resolved = path.resolve()
        roots = [self.state_dir.resolve()]
        medium = getattr(self.profile.journal, "second_medium", None)
        if medium:
            roots.append(Path(medium).resolve())
        if not any(resolved.is_relative_to(root) for root in roots):
            raise JournalError(
                f"{name} resolves to {resolved}, outside the state directory "
                f"{roots[0]}: refused (a symlink out of it?)"
            )
        return path

    def _build_table(self) -> Table:
        from controller.devices import build_devices

        self.devices = build_devices(self.profile, self.post, self.state_dir)
        ctx = TableContext(
            journal=self.journal,
            settings=self.config,
            devices=self.devices.table,
            alarm=self.alarm,
            announce=self.announce,
            post=self.post,
            profile=self.profile,
            app_faults=lambda: list(self.app_faults),
            decision_hold=self._decision_hold,
            new_round_hold=self.gate.new_round_hold,
            closed=self.closed_reason,
            watch_closed=self._closed_watchers.append,
            number_display_down=lambda: self.devices_down.get("display"),
        )
        if self.profile.game in ("paigow", "startpos"):
            from controller.rng.certified import CertifiedRng

            hw = self.profile.rng.hwrng_path
            self.rng = CertifiedRng(hwrng_path=hw) if hw else CertifiedRng()
            ctx.rng = self.rng
            if self.profile.rng.background_cycle:
                from controller.rng.cycle import BackgroundCycle

                self.rng_cycle = BackgroundCycle(self.rng)
        table: Table = _table_class(self.profile.game)(ctx)
        self.power.attach(self.devices)
        self.add_status("power", self.power.power_line)
        self.add_status("clock", self.power.clock_line)
        if self.devices.power_fail is not None:
            self.add_status("power_fail", self.power.ups_line)
        door = self.devices.door
        if door is not None and self.profile.door is not None:
            self.door = DoorWatch(
                self.journal, self.alarm, door.pin, hold_play=self.profile.door.hold_play
            )
            self.gate.add(self.door.hold)
            self.door.watchers.append(self._closed_changed)
            self.add_status("door", self.door.line)
        self.add_status("play", self.disable_latch.line)
        return table

    # -- threads hand events in through here -------------------------------------------------

    def post(self, event: object) -> None:
        """Thread-safe: queue one event for the loop."""
        self.queue.put(event)

    def call(self, fn: Callable[[], object], timeout: float = 5.0) -> object:
        """Run ``fn`` on the loop thread and return its result (for tests and tools)."""
        if threading.get_ident() == self.loop_thread_id:
            return fn()
        box: queue.Queue[object] = queue.Queue(maxsize=1)
        self.post(Call(fn, box.put))
        try:
            result = box.get(timeout=timeout)
        except queue.Empty as exc:
            raise TimeoutError(f"loop did not run the call within {timeout} s") from exc
        if isinstance(result, BaseException):
            raise result
        return result

    def alarm(self, text: str) -> None:
        """An unsolicited line for every console (``!`` prefix), journaled by the caller; in a
        transaction it goes out once that is committed (an output, like any other)."""
        self.journal.after_commit(functools.partial(self._send_alarm, text))

    def _send_alarm(self, text: str) -> None:
        log.warning("!%s", text)
        self.announce([text], None)

    def announce(self, lines: list[str], skip: str | None) -> None:
        """Unsolicited ``!`` lines for every console but ``skip`` (the console whose reply
        already carries them), written whole, never inside a reply."""
        marked = ["!" + line for line in lines]
        with self._alarm_lock:
            for console in self._consoles:
                if skip is None or console.name != skip:
                    console.send_unsolicited(marked)
            if self._output is not None:
                for line in marked:
                    self._output(line)

    def attach_console(self, console: ConsoleOutput) -> None:
        """Register a console transport for alarms (it posts ConsoleLine events itself)."""
        self._consoles.append(console)

    def journal_fault(self, exc: JournalError) -> None:
        """A journal read or write failed: latch a fault and alarm (it cannot be journaled)."""
        log.error("journal error: %s", exc)
        text = f"journal: {exc}"
        if self.app_faults.latch(text):
            self._send_alarm(f"FAULT {text}")  # now: the transaction it was in is lost

    def acknowledge_journal(self, who: str) -> list[str]:
        """A supervisor acknowledges the journal's findings (``fault clear``; the console
        asks for the role): journaled with what was found; the table then voids the round the
        journal can no longer vouch for (``journal_untrusted``: the rows lost, the first row
        no signed head vouches for), so no round is drawn twice, and counts a lost or
        rewritten decision as a void after the draw. Returns the console lines."""
        if not self.trust.findings:
            return []
        lost = self.trust.rows_lost()
        rewritten_from = self.trust.unvouched_from()
        record = self.trust.acknowledge(who)
        lines = acknowledgment_lines(record)
        lines.extend(self.table.journal_untrusted(lost, who, rewritten_from))
        return lines

    def _raise_fault(self, text: str) -> None:
        self.app_faults.raise_fault(text, "app")

    # -- the loop ----------------------------------------------------------------------------

    def start(self) -> list[str]:
        """Recover the table from the journal, run the RNG's start-up health test, and report
        what was resumed or voided (all before READY=1)."""
        self._console()  # a lockout left by the last run is read back now
        notes: list[str] = self._in_transaction(self.table.recover) or []
        if self.rng is not None:
            notes.append(self.startup.rng(self.rng))
        if self.rng_cycle is not None:
            self.rng_cycle.start()
            notes.append("RNG background cycling on (rng.background_cycle)")
        self.trust.start()  # the journal's notary and background worker
        self.power.start()  # the board's sensors, read on a thread of their own
        self._start_feed()
        for note in notes:
            log.info("recovery: %s", note)
        self._publish()
        return notes

    def sim_door(self, want_open: bool) -> str:
        """``sim door open|close``: drive the simulated door switch as the switch would drive
        its pin (a ``gpio_backend = "sim"`` profile with a ``[devices.door]``); ValueError
        otherwise. The change is posted to the loop (its alarm follows)."""
        from drivers.sim.gpio import SimGPIO

        door = self.devices.door
        gpio = self.devices.gpio
        if door is None or self.profile.door is None:
            raise ValueError("this table's profile has no door switch ([devices.door])")
        if not isinstance(gpio, SimGPIO):
            raise ValueError('sim door needs a simulated table (gpio_backend = "sim")')
        open_level = gpio.LOW if self.profile.door.active_low else gpio.HIGH
        closed_level = gpio.HIGH if open_level == gpio.LOW else gpio.LOW
        gpio.drive(door.pin, open_level if want_open else closed_level)
        door.poll()
        return f"door switch {'opened' if want_open else 'closed'} (GPIO {door.pin})"

    def _host_commands(self, feed: Publisher) -> HostCommands:
        """The host's signed commands (docs/host-commands.md), checked against the profile's
        ``[feed] host_key``."""
        from controller.floor.commands import CommandChecker
        from controller.floor.control import HostCommands, file_hmac, recall_lines
        from controller.journal.heads import load_public_key
        from controller.program import manifest as mf

        settings = self.profile.feed
        assert settings is not None and settings.host_key is not None
        text = settings.host_key
        pem = text.encode() if text.lstrip().startswith("-----BEGIN") else Path(text).read_bytes()
        checker = CommandChecker(settings.table, load_public_key(pem), settings.command_max_age_s)
        depth = int(self.config.current().recall_depth)
        return HostCommands(
            self.journal,
            self.summaries,
            checker,
            self.disable_latch,
            send_reply=feed.send_reply,
            request_meters=feed.request_meters,
            request_replay=feed.request_replay,
            recall=recall_lines(self.journal, depth),
            hmac=file_hmac(mf.installed_root(), list(self.profile.source_files)),
            post=lambda fn: self.post(Call(fn)),
        )

    def _meters_went_back(self, back: list[str]) -> None:
        """Loop: the journal's meters are lower than those last published (docs/meters.md
        "Never back"): the journal was restored from an older copy. Journaled (the coded
        event 220) and alarmed on every console."""
        self.journal.append("meters.went_back", {"meters": back[:50]})
        self.alarm(
            "ALARM meters went back (the journal restored from an older copy?): "
            + "; ".join(back[:5])
        )

    def _start_feed(self) -> None:
        """The host feed (docs/feed.md), when the profile names a broker: a publisher thread
        reading the journal on a read-only connection of its own, woken after each commit (it
        sets an Event: the loop never waits for the broker). ``status`` shows its state."""
        if self.profile.feed is None or self.feed is not None:
            return
        from controller.feed.broker import BrokerError
        from controller.feed.publisher import publisher_for

        try:
            from controller.floor.feed import FloorFeed

            derived = FloorFeed(
                self.profile.feed.table,
                self.journal.reader,
                self.trust.archive_dir,
                high_path=self.trust.anchor_path.with_name("meters.published"),
                report=lambda back: self.post(Call(lambda: self._meters_went_back(back))),
            )
            link = None
            if self.profile.feed.host_key is not None:
                from controller.feed.publisher import CommandLink
                from controller.floor.control import HostCommandReceived, HostCommandsFlooded

                link = CommandLink(
                    received=lambda payload: self.post(HostCommandReceived(payload)),
                    flooded=lambda n: self.post(HostCommandsFlooded(n)),
                    per_minute=self.profile.feed.commands_per_minute,
                )
            feed = publisher_for(
                self.profile.feed,
                self.state_dir,
                self.journal.reader,
                derived=derived,
                commands=link,
            )
        except BrokerError as exc:
            self._raise_fault(f"feed: {exc}")
            return
        self.feed = feed
        if link is not None:
            self.host_commands = self._host_commands(feed)
        self.journal.add_commit_listener(feed.wake)
        self.add_status("feed", lambda: feed.state().describe(self.journal.last_seq))
        feed.start()

    @property
    def transactional(self) -> bool:
        """True when the table journals each loop event as one transaction, its outputs after
        the commit (docs/journal.md "One sync per decision"); a table says so itself."""
        return self.table.journal_transactions

    def _in_transaction(self, fn: Callable[[], T]) -> T | None:
        """Run ``fn`` as one journal transaction (when the table takes part): one commit, one
        sync; the signed heads that arrived meanwhile are stored with it. A failed commit is a
        journal fault, and what the loop holds in memory is re-read from the journal."""
        if not self.transactional:
            return fn()
        result: T | None = None
        try:
            with self.journal.transaction():
                result = fn()
                self.trust.store_heads()
        except JournalError as exc:
            self._rolled_back(exc)
        return result

    def _rolled_back(self, exc: JournalError) -> None:
        self.journal_fault(exc)
        try:
            self.config.replay()
        except JournalError:
            pass
        if self._interpreter is not None:
            self._interpreter.forget_sessions()

    def _publish(self) -> None:
        """Hand the table's current view to the publication (see :class:`Publication`). A
        failing view never stops the loop; it is journaled and alarmed once per distinct
        error, not at every tick."""
        try:
            self.publication.publish(self._monitor_view())
        except Exception as exc:  # noqa: BLE001 - the monitor must never stop the table
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            if detail != self._publish_error:
                self._publish_error = detail
                log.exception("published view failed")
                self._guarded(
                    functools.partial(
                        self.journal.append,
                        "app.publish_error",
                        {"error": detail, "trace": traceback.format_exc()[-2000:]},
                    )
                )
                self.alarm(f"ERROR scoreboard view: {detail}")
        else:
            self._publish_error = None

    def _monitor_view(self) -> dict[str, object]:
        """The table's view with the posted limits of its wagers (rule settings, so a
        ``config set`` shows on the monitor at once); new objects every call."""
        settings = self.config.current()
        if settings is not self._limits_of:
            self._limits_of = settings
            self._limits = tuple(
                (w.wager, w.min_cents, w.max_cents)
                for w in settings.wager_limits(self.profile.game)
            )
        view = dict(self.table.published())
        view["limits"] = [{"wager": w, "min": lo, "max": hi} for w, lo, hi in self._limits]
        view["devices_down"] = sorted(self.devices_down)
        closed = self.closed_reason()
        if closed is not None:
            view["closed"] = closed
        return view

    def closed_reason(self) -> str | None:
        """Why the table is CLOSED (its display between rounds, the monitor's banner), or None:
        the host's ``disable`` (its reason), else the door holding play
        (docs/host-commands.md "CLOSED on the display and the monitor")."""
        if self.disable_latch.reason is not None:
            return self.disable_latch.reason
        return self.door.closed() if self.door is not None else None

    def _closed_changed(self) -> None:
        """A latch changed, its row committed: the table's display shows or lifts CLOSED."""
        for fn in self._closed_watchers:
            fn()

    def run(self, *, max_events: int | None = None) -> None:
        """Serve events until Shutdown arrives or ``stop_event`` is set."""
        self.loop_thread_id = threading.get_ident()
        handled = 0
        next_tick = time.monotonic()
        while not self.stop_event.is_set():
            timeout = max(0.0, next_tick - time.monotonic())
            try:
                event = self.queue.get(timeout=timeout)
            except queue.Empty:
                event = None
            if event is not None:
                if isinstance(event, Shutdown):
                    self._in_transaction(lambda: self._guarded(self.trust.store_heads))
                    self._guarded(
                        functools.partial(
                            self.journal.append, "app.shutdown", {"reason": event.reason}
                        )
                    )
                    break
                self.dispatch(event)
                self._publish()
                handled += 1
                if max_events is not None and handled >= max_events:
                    break
            now = time.monotonic()
            if self.replies:
                self._flush_replies(now)
            if now >= next_tick:
                next_tick = now + TICK_S
                self._in_transaction(lambda: self._guarded(self._tick))
                self._publish()
                self.notifier.watchdog(now)

    def _tick(self) -> None:
        self.summaries.flush()
        jumped = self.journal.watch_clock()
        if jumped is not None:
            log.warning("clock: %s", jumped)
        self.trust.tick()
        if self._interpreter is not None:
            self._interpreter.tick()
        buttons = self.devices.buttons
        if buttons is not None:
            buttons.poll()  # re-arms a button whose release edge was lost (drivers/buttons.py)
        ups = self.devices.power_fail
        if ups is not None:
            ups.poll()  # posts a change of the UPS's signal whose edge was lost
        door = self.devices.door
        if door is not None:
            door.poll()  # posts a change of the door's switch whose edge was lost
        self.table.tick(time.monotonic_ns())

    def dispatch(self, event: object) -> None:
        """Handle one event as one journal transaction (see :meth:`_in_transaction`); any
        failure is journaled and reported, never fatal to the loop."""
        self._in_transaction(lambda: self._dispatch(event))

    def _dispatch(self, event: object) -> None:
        if isinstance(event, Call):
            if event.done is None:
                self._guarded(event.fn)
                return
            try:
                result: object = event.fn()
            except JournalError as exc:
                self.journal_fault(exc)
                result = exc
            except Exception as exc:  # noqa: BLE001 - handed back to the caller
                result = exc
            done = event.done
            self.journal.after_commit(lambda: done(result))
            self.journal.on_rollback(
                lambda: done(JournalError("the journal could not record this (commit failed)"))
            )
            return
        if isinstance(event, ConsoleLine):
            self._guarded(lambda: self._answer(event))
            return
        if isinstance(event, ConsoleRejected):
            self._guarded(lambda: self._journal_rejected(event))
            return
        if isinstance(event, ConsolePortLost | ConsolePortBack):
            self._guarded(lambda: self._console_port(event))
            return
        if isinstance(event, BoardCondition | PowerFailChanged):
            self._guarded(lambda: self.power.handle(event))
            return
        if isinstance(event, HostCommandReceived | HostCommandsFlooded):
            commands = self.host_commands
            if commands is not None:
                self._guarded(lambda: commands.handle(event))
            return
        if isinstance(event, DoorChanged):
            door = self.door
            if door is not None:
                self._guarded(lambda: door.handle(event))
            return
        if isinstance(event, DeviceLinkChanged):
            self._guarded(lambda: self._device_link(event))
            return
        self._guarded(lambda: self.table.handle(event))

    def _journal_rejected(self, event: ConsoleRejected) -> None:
        """Journal refused console lines: the first at once, then one counted row a minute
        (controller/journal/summary.py): a flood must not become a synced write per line, and
        every refused line is counted in the journal."""
        self.summaries.note(
            "console.rejected",
            f"rejected {event.source} {event.reason}",
            {"source": event.source, "reason": event.reason},
        )

    def reply(self, reply: Callable[[list[str]], None], lines: list[str]) -> None:
        """Send a console reply once the transaction it answers is committed; if the commit
        fails, the reply says so instead."""
        self.journal.after_commit(lambda: reply(lines))
        self.journal.on_rollback(
            lambda: reply(["ERR IO the journal could not record this (commit failed)"])
        )

    def _console_port(self, event: ConsolePortLost | ConsolePortBack) -> None:
        """A serial console's device went or came back: journaled, and said on every console
        (the one that went cannot hear it; the journal and the others can)."""
        if isinstance(event, ConsolePortLost):
            self.console_ports_down[event.source] = event.port
            self.journal.append(
                "console.port_lost",
                {"source": event.source, "port": event.port, "reason": event.reason},
            )
            self.alarm(f"ALARM console port {event.port} gone ({event.reason}); reopening")
            return
        if self.console_ports_down.pop(event.source, None) is None:
            return
        self.journal.append("console.port_back", {"source": event.source, "port": event.port})
        self.alarm(f"console port {event.port} is back")

    def _device_link(self, event: DeviceLinkChanged) -> None:
        """A serial device (a display) missing or lost, or back: a fault while it is gone,
        journaled both ways (``fault.raised`` / ``fault.cleared``, so the feed carries them),
        said on every console, listed by ``status`` and published to the monitor. It clears
        itself when the device answers again; play is not stopped by it (a number display
        down makes the dice stand in for the RNG's draw: TableContext.number_display_down)."""
        name = event.device.replace("_", " ")
        if not event.up:
            if event.device in self.devices_down:
                return
            # What a technician reads in `status`: the device, its port, what to check, and
            # that nothing needs clearing (docs/configuration.md "Stable device names").
            text = (
                f"{name} not connected on {event.port} ({event.reason}): check its cable and"
                " that its USB adapter is in the USB port the profile's name stands for;"
                f" tried again every {REOPEN_MAX_S:.0f} s at most, clears itself when it is back"
            )
            self.devices_down[event.device] = text
            self.journal.append(
                "fault.raised",
                {"fault": text, "source": "device", "device": event.device, "port": event.port},
            )
            self.alarm(f"FAULT {text}")
            return
        if event.device not in self.devices_down:
            return
        text = self.devices_down.pop(event.device)
        self.journal.append(
            "fault.cleared",
            {"fault": text, "who": "device", "device": event.device, "port": event.port},
        )
        self.alarm(f"{name} on {event.port} is back: fault cleared")

    def _answer(self, event: ConsoleLine) -> None:
        """Reply now, or later without blocking the loop: when the command runs on a worker
        thread (``journal verify`` walks the whole chain, ``rng capture`` reads its bytes), or
        when the table says the command's effect arrives later as events (a simulated button's
        press, a simulated shoe's frames)."""
        lines: list[str] = self._console().execute(event.text, event.source, replies_later=True)
        deferred = self._interpreter.take_deferred() if self._interpreter is not None else None
        if deferred is not None:
            self.replies.add(
                PendingReply(
                    deferred.ready,
                    time.monotonic() + deferred.timeout_s,
                    event.reply,
                    deferred.render,
                    deferred.progress,
                    event.progress,
                )
            )
            return
        waiter = self.table.take_reply_waiter()
        if waiter is None:
            self.reply(event.reply, lines)
            return
        finish = waiter.finish
        self.replies.add(
            PendingReply(
                waiter.ready, time.monotonic() + REPLY_WAIT_S, event.reply, lambda: finish(lines)
            )
        )
        self.journal.after_commit(lambda: self._flush_replies(time.monotonic()))

    def _flush_replies(self, now: float) -> None:
        self.replies.flush(now)

    def _console(self) -> Console:
        """The console's interpreter (one for every console), made on first use."""
        if self._interpreter is None:
            module = importlib.import_module("controller.console.interpreter")
            self._interpreter = module.Console(self)
        return self._interpreter

    def console_execute(self, text: str, source: str) -> list[str]:
        """Run one console line through the console's command table."""
        result: list[str] = self._console().execute(text, source)
        return result

    def _guarded(self, fn: Callable[[], object]) -> None:
        try:
            fn()
        except Refused as exc:
            # Tables journal refusals themselves; this is only a safety net.
            log.info("refused: %s", exc.reason)
        except JournalError as exc:
            self.journal_fault(exc)
        except Exception as exc:  # noqa: BLE001 - the loop must survive any handler bug
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            log.exception("handler failed")
            try:
                self.journal.append(
                    "app.error", {"error": detail, "trace": traceback.format_exc()[-2000:]}
                )
            except JournalError:
                pass
            self.alarm(f"ERROR {detail}")

    # -- facts for the console ---------------------------------------------------------------

    def faults(self) -> list[str]:
        return [*self.app_faults, *self.devices_down.values(), *self.table.faults()]

    def _decision_hold(self) -> str | None:
        """Loop: why the next draw or coup is withheld, or None (docs/feed.md "Holding play for
        the feed"): the broker has not acknowledged the journal up to the last decision for
        more than ``[feed] hold_decisions_unacked_s``. Reads the publisher's snapshot only."""
        feed = self.profile.feed
        limit = feed.hold_decisions_unacked_s if feed is not None else 0
        decided = self.trust.last_decision
        if not limit or decided is None:
            return None
        seq, at = decided
        acked = self.feed.state().acked_seq if self.feed is not None else 0
        waited = time.monotonic() - at
        if acked >= seq or waited <= limit:
            return None
        return (
            f"withheld: the floor's broker has not acknowledged the last decision (journal"
            f" row {seq}, acknowledged up to {acked}) for {waited:.0f} s, and this table's"
            f" profile holds play after {limit} s ([feed] hold_decisions_unacked_s): bring"
            " the feed back (status shows it), then press the button again"
        )

    def add_status(self, key: str, line: Callable[[], str]) -> None:
        """A line the wiring adds to ``status`` (the scoreboard's address and counters)."""
        self._status_lines[key] = line

    def status(self) -> dict[str, str]:
        info = {"game": self.profile.game, "profile": self.profile.name}
        info.update(self.table.status())
        for key, line in self._status_lines.items():
            info[key] = line()
        faults = self.faults()
        info["faults"] = "; ".join(faults) if faults else "none"
        for source, port in sorted(self.console_ports_down.items()):
            info[f"console {source}"] = f"{port} gone, reopening"
        return info

    def close(self) -> None:
        """Stop drivers and close the journal (rows are already synced)."""
        self.stop_event.set()
        if self.rng_cycle is not None:
            self.rng_cycle.stop()
        self.publication.close()
        if self._interpreter is not None:
            self._guarded(self._interpreter.close)  # the lockout time left, for the next start
        try:
            self.table.close()
        finally:
            from controller.devices import close_devices

            for error in close_devices(self.devices):
                log.warning("closing devices: %s", error)
                self._guarded(
                    functools.partial(
                        self.journal.append, "app.device_error", {"device": "close", "error": error}
                    )
                )
            for console in self._consoles:
                console.close()
            self.notifier.stopping()
            try:
                self.trust.close()  # signs and stores the last heads
            finally:
                if self.feed is not None:
                    self.feed.stop()  # sends them and the backlog (a few seconds at most)
                self.journal.close()


#: The journal's kinds of the board's conditions (docs/power-and-storage.md); each row carries
#: the meter: how many times the condition began, counted over the journal's whole life.
BOARD_KINDS: Final[Mapping[str, str]] = MappingProxyType(
    {"undervoltage": "power.undervoltage", "throttled": "power.throttled"}
)
POWER_FAIL_KIND: Final = "power.fail"
#: The rows whose ``count`` is a meter: an archive carries the newest of each forward.
METER_KINDS: Final = (*BOARD_KINDS.values(), POWER_FAIL_KIND)


class PowerWatch:
    """The board's power and clock as the loop sees them: undervoltage and throttling (posted
    by the board's monitor thread), the UPS's power-fail signal (posted by its GPIO input), the
    RTC. Loop thread only: each change is journaled with its meter and said on every console;
    while the UPS's signal is asserted no new round starts and the journal is synced at once."""

    def __init__(
        self,
        journal: Journal,
        alarm: Callable[[str], None],
        sync_now: Callable[[str], None],
    ) -> None:
        self._journal = journal
        self._alarm = alarm
        self._sync_now = sync_now
        self.active: dict[str, str] = {}  # condition -> what was read when it began
        #: Meters: times each condition began (the journal's last row of its kind says).
        self.counts: dict[str, int] = {}
        for kind in METER_KINDS:
            row = journal.last([kind])
            self.counts[kind] = (opt_int_of(row.data, "count") or 0) if row is not None else 0
        self.ups_pin: int | None = None
        self.ups_asserted = False
        self._monitor: BoardMonitor | None = None
        self._rtc_roots: tuple[Path, Path] | None = None

    def attach(self, devices: BuiltDevices) -> None:
        """Take the devices :func:`controller.devices.build_devices` made."""
        self._monitor = devices.board
        self._rtc_roots = devices.rtc
        ups = devices.power_fail
        if ups is not None:
            self.ups_pin = ups.pin

    def start(self) -> None:
        if self._monitor is not None:
            self._monitor.start()

    def handle(self, event: BoardCondition | PowerFailChanged) -> None:
        if isinstance(event, PowerFailChanged):
            self._power_fail(event)
            return
        kind = BOARD_KINDS.get(event.condition)
        if kind is None or (event.condition in self.active) == event.active:
            return
        if event.active:
            self.active[event.condition] = event.detail
            self.counts[kind] += 1
        else:
            self.active.pop(event.condition, None)
        self._journal.append(
            kind, {"active": event.active, "detail": event.detail, "count": self.counts[kind]}
        )
        what = "undervoltage" if event.condition == "undervoltage" else "throttling (heat)"
        if event.active:
            self._alarm(
                f"ALARM {what} began: {event.detail}; {self.counts[kind]} time"
                f"{'' if self.counts[kind] == 1 else 's'} in this journal"
            )
        else:
            self._alarm(f"{what} ended: {event.detail}")

    def _power_fail(self, event: PowerFailChanged) -> None:
        if event.asserted == self.ups_asserted:
            return
        self.ups_asserted = event.asserted
        if event.asserted:
            self.counts[POWER_FAIL_KIND] += 1
        self._journal.append(
            POWER_FAIL_KIND,
            {"asserted": event.asserted, "pin": event.pin, "count": self.counts[POWER_FAIL_KIND]},
        )
        if event.asserted:
            # the row above is synced at its commit; then a signed, anchored head of it, a
            # checkpoint and a sync of the file systems, before the UPS's battery runs out
            self._journal.after_commit(lambda: self._sync_now("power-fail"))
            self._alarm(
                f"ALARM power failing (UPS signal on GPIO {event.pin}): no new round;"
                " the journal is synced"
            )
        else:
            self._alarm(f"power back (UPS signal on GPIO {event.pin} dropped): rounds may start")

    def new_round_hold(self) -> str | None:
        """Why no new round may start now (the table's refusal says it), or None."""
        if not self.ups_asserted:
            return None
        return f"power failing: no new round (UPS signal on GPIO {self.ups_pin})"

    def power_line(self) -> str:
        """``status``: the board's power and heat."""
        uv = self.counts[BOARD_KINDS["undervoltage"]]
        hot = self.counts[BOARD_KINDS["throttled"]]
        meters = f"undervoltage {uv} time{'' if uv == 1 else 's'}, throttling {hot}"
        now = [f"{c.upper()} NOW" for c in CONDITIONS if c in self.active]
        last = self._monitor.last if self._monitor is not None else None
        if last is not None and last.undervoltage is None and not now:
            now = ["no undervoltage sensor (hwmon rpi_volt) found"]
        temp = (
            f"; SoC {last.temp_mc / 1000:.1f} C"
            if last is not None and last.temp_mc is not None
            else ""
        )
        return f"{'; '.join(now) or 'ok'}{temp} (journal: {meters})"

    def ups_line(self) -> str:
        state = "ASSERTED: no new round" if self.ups_asserted else "clear"
        n = self.counts[POWER_FAIL_KIND]
        times = f"{n} power failure{'' if n == 1 else 's'} in this journal"
        return f"UPS signal on GPIO {self.ups_pin} {state} ({times})"

    def clock_line(self) -> str:
        """``status``: where the wall clock comes from."""
        if self._rtc_roots is None:
            return "no RTC looked for"
        rtc = detect_rtc(*self._rtc_roots)
        if rtc is None:
            return "no RTC, time from NTP/fake-hwclock"
        notes = []
        if not rtc.node:
            notes.append(f"no /dev/{rtc.device}")
        if not rtc.set_clock_at_boot:
            notes.append("it did not set the clock at boot")
        return f"RTC {rtc.device} ({rtc.name})" + (f"; {', '.join(notes)}" if notes else "")


def _table_class(
    game: str,
) -> type[PaigowTable] | type[BaccaratTable] | type[StartposTable]:
    """The table class of ``game`` (imported only for the game the profile names)."""
    if game == "paigow":
        from controller.tables.paigow.table import PaigowTable

        return PaigowTable
    if game == "baccarat":
        from controller.tables.baccarat.table import BaccaratTable

        return BaccaratTable
    if game == "startpos":
        from controller.tables.startpos.table import StartposTable

        return StartposTable
    raise ValueError(f"no table for game {game!r}; games are {', '.join(TABLES)}")


def _snapshot_kinds(game: str) -> tuple[str, ...]:
    """The kinds of the rows a table recovers from (an archive never cuts past the newest):
    the table's class says (``snapshot_kinds``)."""
    return tuple(_table_class(game).snapshot_kinds)
