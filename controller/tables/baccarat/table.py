"""The baccarat table: the shoe and the coup as a ``transitions`` state machine, 9 NYCRR 5324.20.

Fed card by card by the serial card shoe (drivers/serial_shoe.py), the dealer's buttons and the
technician console; applies the drawing rules of (f)(10)-(13) (controller.games.baccarat), the
irregularities of (i), the cover card of (f)(9), settles wagers in integer cents and journals every
input and every decision. docs/baccarat-table.md has the state table and the recovery rules.

Durability (DESIGN.md "Durability and trust"): every input is journaled BEFORE it is acted on;
a shoe frame is journaled, then acknowledged to the shoe, then applied. The table is rebuilt at
start-up from the last snapshot row (written at coup boundaries) plus the input rows after it,
replayed through the same code with the journal, the display and the alarms switched off, so a
resumed coup has exactly the cards it had. Decision rows that a power cut kept from the journal
are written during that replay (marked ``recovered``).

This module holds the Table protocol (the inputs, their journaling, status, faults, odds); the
rest is in modules of this package with one job each: ``machine`` (the certified sequence, its
diagram, the recovery rules), ``data`` (journal kinds, ``ShoeData``), ``core`` (settings, derived
objects, journaling, firing), ``display`` (dealer-display text), ``coup`` (shoe frames and the
coup), ``actions`` (buttons and console actions), ``recovery`` (snapshots and recovery),
``sim_dealer`` (``sim`` console actions) and ``integrity`` (the unshuffled-sequence monitor).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from controller.games import baccarat
from controller.games.baccarat.vig_ledger import VigLedger
from controller.journal.store import JournalError
from controller.tables.baccarat.actions import _ACTIONS, ActionsMixin
from controller.tables.baccarat.core import BaccaratTableCore
from controller.tables.baccarat.coup import CoupMixin
from controller.tables.baccarat.data import (
    _NOT_DECISIONS,
    _STOPPED_BY_FAULT,
    INPUT_KINDS,
    K_ACTION,
    K_BUTTON,
    K_FRAME,
    K_LINK,
    K_RECOVERY,
    K_REFUSED,
    K_REFUSED_FRAME,
    K_SESSION,
    K_SIM,
    K_SNAPSHOT,
    K_WATCHDOG,
    SNAPSHOT_VERSION,
    ShoeData,
    _Replay,
)
from controller.tables.baccarat.display import DisplayMixin, _dollars, _fit
from controller.tables.baccarat.integrity import (
    RANK_RUN_ALARM,
    REPEAT_WINDOW_ALARM,
    SUIT_RUN_ALARM,
    SequenceMonitor,
    expected_alarm_rate,
    shuffled_shoe_alarm_rates,
)
from controller.tables.baccarat.machine import (
    _COUP_STATES,
    RECOVERY_RULES,
    STATES,
    TRANSITIONS,
    TRIGGER_INPUTS,
    TableModel,
    build_machine,
    mermaid,
)
from controller.tables.baccarat.recovery import RecoveryMixin
from controller.tables.baccarat.sim_dealer import _PEEK, SimDealerMixin
from controller.tables.table import Refused, TableContext

log = logging.getLogger("controller.baccarat")

#: Every name other code and tests import from this module (the monitor's, from
#: controller.tables.baccarat.integrity, for bench/bench_baccarat_table.py and older imports).
__all__ = [
    "BaccaratTable",
    "BaccaratTableCore",
    "ActionsMixin",
    "CoupMixin",
    "DisplayMixin",
    "RecoveryMixin",
    "SimDealerMixin",
    "K_ACTION",
    "K_BUTTON",
    "K_FRAME",
    "K_LINK",
    "K_RECOVERY",
    "K_REFUSED",
    "K_REFUSED_FRAME",
    "K_SESSION",
    "K_SIM",
    "K_SNAPSHOT",
    "K_WATCHDOG",
    "INPUT_KINDS",
    "SNAPSHOT_VERSION",
    "_NOT_DECISIONS",
    "_STOPPED_BY_FAULT",
    "ShoeData",
    "RECOVERY_RULES",
    "STATES",
    "TRANSITIONS",
    "TRIGGER_INPUTS",
    "_COUP_STATES",
    "TableModel",
    "build_machine",
    "mermaid",
    "_ACTIONS",
    "_PEEK",
    "_dollars",
    "_fit",
    "_Replay",
    "RANK_RUN_ALARM",
    "REPEAT_WINDOW_ALARM",
    "SUIT_RUN_ALARM",
    "SequenceMonitor",
    "expected_alarm_rate",
    "shuffled_shoe_alarm_rates",
    "log",
]


class BaccaratTable(SimDealerMixin, RecoveryMixin):
    """The baccarat Table. Driven only from the application's loop thread."""

    game = "baccarat"

    def __init__(self, ctx: TableContext) -> None:
        super().__init__(ctx)
        url = ctx.devices.get("shoe_url")
        if self._shoe is None and url is not None:
            from drivers.serial_shoe import SerialShoe
            shoe_settings = ctx.devices.get("shoe_settings")
            self._shoe = SerialShoe(
                url, self._poster(), baud=getattr(shoe_settings, "baud", 9600),
                # The journaled session is NOT handed over (known_session=): a shoe that
                # powered up while the controller was down sends a byte-identical $HELO,0, and
                # treating it as the old session re-acknowledged old SEQs to the new shoe, which
                # then dropped frames never journaled (lost cards; bench/crash_trials.py).
                # A crash before the HELO's ACK is still covered: the restarted controller
                # NAKs the SEQ after the last journaled frame and the shoe resends from there
                # (tests/unit/baccarat_table/test_shoe_restart.py). docs/shoe-protocol.md.
                resume_seq=self.resume_seq(), known_session=None,
                watchdog_s=getattr(shoe_settings, "watchdog_s", 3.0))
            self._shoe.start()
        sim = ctx.devices.get("shoe_sim")
        if sim is not None:
            sim.start()

    def handle(self, event: object) -> None:
        """One input from a driver: journal it first, then act (Refused is journaled)."""
        from drivers.buttons import ButtonPressed
        from drivers.shoe_events import (
            ShoeFrameAccepted,
            ShoeFrameRefused,
            ShoeLinkChanged,
            ShoeSession,
            ShoeWatchdog,
        )
        if isinstance(event, ShoeFrameAccepted):
            if self._resync_from is not None:
                if event.seq != self._resync_from:
                    return  # queued before the resync: the shoe resends it in order
                self._resync_from = None
            row: dict[str, Any] = {"seq": event.seq, "type": event.type,
                                   "fields": list(event.fields), "known": event.known}
            if event.raw:
                row["raw"] = event.raw.decode("ascii", "replace")
            try:
                seq = self._journal.append(K_FRAME, row, self._d.round_id)
            except JournalError:
                # Not journaled, so never acknowledged and never acted on: have the shoe send
                # it again (it still holds it) instead of letting a later cumulative $ACK
                # cover it. The JournalError goes on to the application as a fault.
                self._resync_from = event.seq
                if self._shoe is not None:
                    self._shoe.resync(event.seq)
                raise
            if self._shoe is not None:
                self._shoe.acknowledge(event.seq)
            self._input_seq = seq
            self._apply_frame(event.type, list(event.fields), event.known)
        elif isinstance(event, ShoeSession):
            row = {"seq": event.seq, "model": event.model, "firmware": event.firmware}
            if event.raw:
                row["raw"] = event.raw.decode("ascii", "replace")
            seq = self._journal.append(K_SESSION, row, self._d.round_id)
            if self._shoe is not None:
                self._shoe.acknowledge(event.seq)
            self._input_seq = seq
            self._apply_session(event.model)
        elif isinstance(event, ShoeFrameRefused):
            self._log(K_REFUSED_FRAME, {"reason": event.reason, "detail": event.detail,
                                        "raw": event.raw.decode("ascii", "replace")[:120],
                                        "expected_seq": event.expected_seq,
                                        "nak_sent": event.nak_sent})
        elif isinstance(event, ShoeLinkChanged):
            self._link_up = event.up
            self._log(K_LINK, {"up": event.up, "reason": event.reason})
            if not event.up:
                self._alarm(f"SHOE LINK DOWN {event.reason}")
        elif isinstance(event, ShoeWatchdog):
            self._watchdog_ok = event.ok
            self._log(K_WATCHDOG, {"ok": event.ok, "silent_for_s": round(event.silent_for_s, 3)})
            if not event.ok:
                self._alarm("SHOE SILENT: no valid frame for more than the watchdog period;"
                            " no cards are accepted until the shoe is back")
                self._show("SHOE OFFLINE", "WAIT FOR THE SHOE")
            else:
                self._show_state()
        elif isinstance(event, ButtonPressed):
            seq = self._journal.append(K_BUTTON, {"name": event.name}, self._d.round_id)
            self._input_seq = seq
            self._guarded_input(seq, lambda: self._apply_button_unless_fault(event.name))
        else:
            self._log("baccarat.unknown_event", {"type": type(event).__name__})

    def _guarded_input(self, seq: int, fn: Callable[[], list[str]]) -> list[str]:
        try:
            return fn()
        except Refused as exc:
            if self._replay is None:
                self._journal.append(K_REFUSED, {"input": seq, "reason": exc.reason},
                                     self._d.round_id)
            raise

    def action(self, name: str, args: list[str], who: str) -> list[str]:
        """A console action. ``sim ...`` drives the simulated devices (never replayed)."""
        if name == "sim":
            self._log(K_SIM, {"args": args, "who": who})
            return self._sim(args)
        if name == "odds":
            return self.odds()
        if name not in _ACTIONS:
            raise Refused(f"unknown baccarat action {name!r}; actions are"
                          f" {', '.join(sorted(_ACTIONS))}", "UNKNOWN")
        seq = self._journal.append(K_ACTION, {"name": name, "args": list(args), "who": who},
                                   self._d.round_id)
        self._input_seq = seq
        return self._guarded_input(seq, lambda: self._apply_action_unless_fault(
            name, list(args), who))

    def _play_stopped(self, what: str) -> None:
        """Refuse an input that starts or advances play while the application holds a fault
        (journal, program, settings). Live only: a refused input is skipped on replay."""
        if self._replay is None and what in _STOPPED_BY_FAULT:
            blocking = self._ctx.app_faults()
            if blocking:
                raise Refused("play is stopped by a fault a technician must clear: "
                              + "; ".join(blocking), "FAULT")

    def _apply_button_unless_fault(self, name: str) -> list[str]:
        self._play_stopped(name)
        return self._apply_button(name)

    def _apply_action_unless_fault(self, name: str, args: list[str], who: str) -> list[str]:
        self._play_stopped(name)
        return self._apply_action(name, args, who)

    def tick(self, now_ns: int) -> None:
        """Nothing is timed at the table: the shoe driver keeps the watchdog."""

    def status(self) -> dict[str, str]:
        d = self._d
        left = self._composition.cards_left if self._composition is not None else 0
        return {
            "state": self._model_state(),
            "shoe": str(d.shoe_no),
            "coup": str(d.coup_no),
            "round": "-" if d.round_id is None else str(d.round_id),
            "cards_left": str(left),
            "curator": "" if d.curator is None else str(d.curator),
            "last_result": d.last_result or "none",
            "last_hand": "yes" if self._last_hand.last_hand else "no",
            "vig_owed_cents": str(self._ledger.total_owed()),
            "shoe_link": "up" if self._link_up else "down",
            "table_faults": "; ".join(self.faults()) or "none",
        }

    def round_in_progress(self) -> bool:
        return self._model_state() in (*_COUP_STATES, "settling") or bool(self._d.bets)

    def faults(self) -> list[str]:
        out = list(self._d.faults)
        out += [f"shoe fault {f}" for f in self._d.shoe_faults]
        if not self._watchdog_ok:
            out.append("shoe watchdog: no valid frame")
        return out

    def clear_fault(self, who: str) -> list[str]:
        if not self._d.faults:
            raise Refused("no table fault to clear", "STATE")
        return self.action("clear", [], who)

    def close(self) -> None:
        if self._shoe is not None:
            self._shoe.stop(timeout=2.0)
        sim = self._ctx.devices.get("shoe_sim")
        if sim is not None:
            sim.stop(timeout=2.0)

    def odds(self) -> list[str]:
        """The exact odds of the next coup from the cards left in the shoe."""
        if self._composition is None:
            raise Refused("no shoe in play", "STATE")
        try:
            left: dict[object, int] = {k: v for k, v in self._composition.values().items()}
            odds = baccarat.exact_odds(left, self._rules)
        except baccarat.CompositionError as exc:
            raise Refused(str(exc), "STATE") from None
        lines = [f"cards left {self._composition.cards_left}"]
        for key in ("banker", "player", "tie", "player_natural", "banker_natural"):
            lines.append(f"{key} {float(odds[key]):.6f}")
        for key in sorted(k for k in odds if k.startswith("edge:")):
            value: Fraction = odds[key]
            lines.append(f"{key} {float(value) * 100:+.4f}%")
        return lines

    # -- for tests and tools -------------------------------------------------------------------

    @property
    def state(self) -> str:
        return self._model_state()

    @property
    def data(self) -> ShoeData:
        """A copy of the table's data (tests read it; nothing outside changes it)."""
        return ShoeData.from_json(copy.deepcopy(self._d.to_json()))

    @property
    def ledger(self) -> VigLedger:
        return self._ledger
