"""The baccarat table: the shoe and the coup as a ``transitions`` state machine, 9 NYCRR 5324.20.

Fed card by card by the serial card shoe (drivers/serial_shoe.py), the dealer's buttons and the
technician console; applies the drawing rules of (f)(10)-(13) (controller.games.baccarat), the
irregularities of (i), the cover card of (f)(9), settles wagers in integer cents and journals every
input and every decision. docs/baccarat-table.md has the state table and the recovery rules.

Durability (docs/design.md "Durability and trust"): every input is journaled BEFORE it is acted on;
a shoe frame is journaled, then acknowledged to the shoe, then applied. The table is rebuilt at
start-up from the last snapshot row (written at coup boundaries) plus the input rows after it,
replayed through the same code with the journal, the display and the alarms switched off, so a
resumed coup has exactly the cards it had. Decision rows that a power cut kept from the journal
are written during that replay (marked ``recovered``).

The table is composed of collaborators with one job each, all handed what they need explicitly
(docs/architecture.md): the state (``state.ShoeState``: the data and its derived objects), its
voice (``record.Record``: journal rows, alarms, the replay switch), the certified sequence
(``sequence.Sequence`` on ``machine``), the dealer display (``display.Presenter``), the shoe's
link (``link.ShoeLink``), the coup (``coup.CoupPlay``), the dealer's buttons and console actions
(``actions.DealerActions``), recovery (``recovery.Recovery``) and the simulated dealer
(``sim_dealer.SimDealer``). This module holds the Table protocol: inputs, status, faults, odds.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Final

from controller.games import baccarat
from controller.games.baccarat.vig_ledger import VigLedger
from controller.tables.baccarat.actions import ACTION_HELP, ACTIONS, DealerActions
from controller.tables.baccarat.coup import CoupPlay
from controller.tables.baccarat.data import (
    DEAD_HAND_REMEDY,
    K_ACTION,
    K_BUTTON,
    K_REFUSED,
    K_SESSION,
    K_SIM,
    K_SNAPSHOT,
    NEW_COUP_INPUTS,
    NEW_ROUND_INPUTS,
    STOPPED_BY_FAULT,
    ShoeData,
)
from controller.tables.baccarat.display import Presenter, coup_shown
from controller.tables.baccarat.link import SHOE_EVENTS, SHOE_LINK_HINT, ShoeLink
from controller.tables.baccarat.machine import COUP_STATES
from controller.tables.baccarat.record import Record
from controller.tables.baccarat.recovery import Recovery
from controller.tables.baccarat.sequence import Sequence
from controller.tables.baccarat.sim_dealer import SimDealer
from controller.tables.baccarat.state import ShoeState
from controller.tables.table import ActionHelp, RefusalCode, Refused, ReplyWaiter, TableContext
from drivers.buttons import ButtonPressed
from drivers.shoe_protocol import REVISION, SessionPosition

#: How long the power-up lamp test lights every seat lamp (as the pai gow table's digit and lamps).
LAMP_TEST_NS: Final = 1_000_000_000

#: The seats of the layout the table numbers (the scoreboard's seat ring).
SEATS: Final = 8


class BaccaratTable:
    """The baccarat Table. Driven only from the application's loop thread."""

    game = "baccarat"
    #: The application journals each event as one transaction: a shoe frame and everything it
    #: decides are one commit and one sync, and the shoe's $ACK, the dealer display and the
    #: console lines go out after it (docs/journal.md "One sync per decision").
    journal_transactions: bool = True
    #: What an archive of old rows keeps live: the newest snapshot, and the shoe's session
    #: (its SID: a shoe may stay powered for longer than the retention period).
    snapshot_kinds: tuple[str, ...] = (K_SNAPSHOT,)
    carry_kinds: tuple[tuple[str, ...], ...] = ((K_SESSION,),)

    def __init__(
        self, ctx: TableContext, *, clock_ns: Callable[[], int] = time.monotonic_ns
    ) -> None:
        self._ctx = ctx
        devices = ctx.devices
        #: The seat lamps, when the profile wires them: lit together for the power-up lamp
        #: test, so a dead lamp or driver channel is seen at bring-up (docs/hardware.md
        #: "Bring-up"), dark after it; the baccarat table lights none in play.
        self._lamps = devices.seat_lamps
        self._lamp_test_until: int | None = None
        if self._lamps is not None and self._drive_lamps(self._lamps.lamp_test):
            self._lamp_test_until = clock_ns() + LAMP_TEST_NS
        self._state = ShoeState(ctx.settings, SEATS)
        self._record = Record(ctx.journal, lambda: self._state.data, ctx.alarm, ctx.announce)
        self._sequence = Sequence(self._state, self._record)
        self._view = Presenter(
            devices.dealer_display, self._state, self._sequence, self._record, ctx.closed
        )
        # the host's disable (or the door) closes the table: the display says so between coups
        ctx.watch_closed(self._view.show_state)
        self._play = CoupPlay(self._state, self._sequence, self._record, self._view)
        #: The shoe's serial link (public for tests that stand in for the shoe reader).
        self.link = ShoeLink(None, self._record, self._play, self._view)
        self._actions = DealerActions(
            self._state,
            self._sequence,
            self._record,
            self._view,
            self._play,
            lambda: self.link.watchdog_ok,
        )
        self._recovery = Recovery(
            self._state, self._sequence, self._record, self._view, self._play, self._actions
        )
        self._sim = SimDealer(devices.sim, self._state, self._sequence)
        #: Why the last button press was refused (None: it was not), for tests and tools.
        self.last_refusal: Refused | None = None
        self._record.memo = self._memo
        self._state.rebuild(self._sequence.current)
        self._sequence.sync()
        open_shoe = devices.open_shoe
        self.link.position = self._recovery.resume_position()
        if self.link.reader is None and open_shoe is not None:
            # The reader resumes the journaled session: it sends $NAK,next,SID and accepts
            # that session's frames from there; a shoe of another session (powered up while
            # the controller was down) ignores the NAK and brings its $HELO by its silence
            # resend (docs/design.md, shoe protocol revision 3; docs/shoe-protocol.md).
            self.link.reader = open_shoe(resume=self.link.position)
            self.link.reader.start()
        sim = devices.sim.shoe
        if sim is not None:
            sim.start()

    def _memo(self) -> Callable[[], None]:
        """A copy of the table's memory at a transaction's first row, and what puts it back if
        the commit fails (the journal holds nothing of the transaction then)."""
        data = copy.deepcopy(self._state.data)
        state = self._sequence.current
        link = self.link.memo()

        def restore() -> None:
            self._state.data = copy.deepcopy(data)
            self._sequence.restore(state)
            self._state.rebuild(state)
            self._sequence.sync()
            self._play.forget_settings()
            link()

        return restore

    # -- inputs --------------------------------------------------------------------------------

    def recover(self) -> list[str]:
        """Rebuild the table from the journal; resume the coup in progress with its cards."""
        return self._recovery.recover()

    def resume_position(self) -> SessionPosition | None:
        """The journaled shoe session and the SEQ after its newest row (the shoe reader sends
        ``$NAK,next,SID`` from it on start)."""
        return self._recovery.resume_position()

    def handle(self, event: object) -> None:
        """One input from a driver: journal it first, then act (Refused is journaled)."""
        if isinstance(event, SHOE_EVENTS):
            self.link.handle(event)
            self._record.work.end()
        elif isinstance(event, ButtonPressed):
            self._button(event.name)
        else:
            self._record.log("baccarat.unknown_event", {"type": type(event).__name__})

    def _button(self, name: str) -> None:
        """A dealer's button: journaled, then acted on; what it did (or why it was refused) is
        said on every console as ``!BUTTON``/``!REFUSED`` lines, and in the reply of the
        console whose ``sim button`` pressed it."""
        seq = self._record.log(K_BUTTON, {"name": name})
        self._record.work.input_seq = seq
        press = self._sim.take_press(name)
        skip = press.source if press is not None else None
        try:
            lines = self._guarded_input(seq, lambda: self._button_unless_fault(name))
        except Refused as exc:
            self.last_refusal = exc
            refused = [f"REFUSED {name}: {exc.reason}"]
            self._record.output(lambda: self._ctx.announce(refused, skip))
            if press is not None:
                press.finish([], exc)
            return
        self.last_refusal = None
        said = [f"BUTTON {name}: {line}" for line in lines]
        self._record.output(lambda: self._ctx.announce(said, skip))
        if press is not None:
            press.finish(lines, None)

    def _guarded_input(self, seq: int, fn: Callable[[], list[str]]) -> list[str]:
        try:
            out = fn()
        except Refused as exc:
            self._record.work.end()
            if not self._record.replaying:
                self._record.log(K_REFUSED, {"input": seq, "reason": exc.reason})
            raise
        self._record.work.end()
        return out

    def action(self, name: str, args: list[str], who: str) -> list[str]:
        """A console action. ``sim ...`` drives the simulated devices (never replayed)."""
        if name == "sim":
            if args[:1] != ["button"]:  # a simulated press is journaled as the button's input
                self._record.log(K_SIM, {"args": args, "who": who})
            return self._sim.run(args, who)
        if name == "odds":
            return self.odds()
        if name not in ACTIONS:
            raise Refused(
                f"unknown baccarat action {name!r}; actions are {', '.join(sorted(ACTIONS))}",
                "UNKNOWN",
            )
        seq = self._record.log(K_ACTION, {"name": name, "args": list(args), "who": who})
        self._record.work.input_seq = seq
        return self._guarded_input(seq, lambda: self._action_unless_fault(name, list(args), who))

    def _play_stopped(self, what: str) -> None:
        """Refuse an input that starts or advances play while the application holds a fault
        (journal, program, settings). Live only: a refused input is skipped on replay."""
        if not self._record.replaying and what in STOPPED_BY_FAULT:
            blocking = self._ctx.app_faults()
            if blocking:
                raise Refused(
                    "play is stopped by a fault a technician must clear: " + "; ".join(blocking),
                    "FAULT",
                )
        if not self._record.replaying and what in NEW_ROUND_INPUTS:
            power = self._ctx.new_round_hold()
            if power is not None:
                raise Refused(power, RefusalCode.HOLD)
        if not self._record.replaying and what in NEW_COUP_INPUTS:
            held = self._ctx.decision_hold()  # the coup's cards come after it
            if held is not None:
                raise Refused(held, RefusalCode.HOLD)

    def _button_unless_fault(self, name: str) -> list[str]:
        self._play_stopped(name)
        return self._actions.button(name)

    def _action_unless_fault(self, name: str, args: list[str], who: str) -> list[str]:
        dead_hand = name == "remedy" and args[:1] == ["dead"]
        self._play_stopped(DEAD_HAND_REMEDY if dead_hand else name)
        return self._actions.action(name, args, who)

    def take_reply_waiter(self) -> ReplyWaiter | None:
        """For the application: the last console action's reply waits for what it caused."""
        return self._sim.take_reply_waiter()

    def action_help(self) -> Mapping[str, ActionHelp]:
        """What ``help`` says of each console action (syntax, what it does, an example)."""
        return {word: ActionHelp(*entry) for word, entry in ACTION_HELP.items()}

    def action_names(self) -> tuple[str, ...]:
        """The console words :meth:`action` takes (the console routes these here)."""
        return tuple(sorted({*ACTIONS, "sim", "odds"}))

    def tick(self, now_ns: int) -> None:
        """The shoe link's counted summaries (the shoe driver keeps the watchdog); the end of
        the power-up lamp test."""
        self.link.tick(now_ns)
        if self._lamp_test_until is not None and now_ns >= self._lamp_test_until:
            self._lamp_test_until = None
            if self._lamps is not None:
                self._drive_lamps(self._lamps.all_off)

    def _drive_lamps(self, fn: Callable[[], object]) -> bool:
        """Drive the seat lamps; a driver error is said on every console, never fatal. True
        when they were driven."""
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - a lamp failure must not stop the table
            self._ctx.alarm(f"FAULT seat lamps: {exc}")
            return False
        return True

    # -- facts ---------------------------------------------------------------------------------

    def status(self) -> dict[str, str]:
        s = self._state
        d = s.data
        state = self._sequence.current
        # The coup as the dealer display and the monitor name it (the one to come while bets
        # are open); the round is the journal's id of the coup being dealt or settled (what
        # recall lists), "-" between coups.
        return {
            "state": state,
            "shoe": str(d.shoe_no),
            "coup": str(coup_shown(state, d.coup_no)),
            "round": "-"
            if d.round_id is None
            else f"{d.round_id} (coup {d.coup_no}'s rows in the journal and recall)",
            "cards_left": str(s.cards_left()),
            "curator": "" if d.curator is None else str(d.curator),
            "coup_cards": self._coup_cards(),
            "held_cards": self._held_cards(),
            "last_result": d.last_result or "none",
            "last_hand": "yes" if s.last_hand.last_hand else "no",
            "vig_owed_cents": str(s.ledger.total_owed()),
            "voids_mid_coup": f"{d.voids_mid_coup} this shift"
            + (" (alarmed)" if d.voids_mid_coup else ""),
            "shoe_link": "up"
            if self.link.up
            else f"down ({self.link.down_reason}{SHOE_LINK_HINT})"
            if self.link.down_reason
            else "down",
            "table_faults": "; ".join(self.faults()) or "none",
        }

    def _held_cards(self) -> str:
        """Cards drawn in excess and held for the next hand (5324.20(i)(2), (3)), each with its
        place, and whether it waits for a `disclose` decision: "none" without any."""
        pending = self._state.data.pending
        held = [p for p in pending if p["fate"] != "discard" and not p["disclosed"]]
        places = ("1st", "2nd", "3rd")
        said = [
            f"{p['card']} (the next hand's {places[min(i, 2)]} card; `disclose` if it was seen)"
            for i, p in enumerate(held)
        ]
        said += [
            f"{p['card']} (disclosed: `remedy burn` or `remedy dead`)"
            for p in pending
            if p["disclosed"]
        ]
        return ", ".join(said) or "none"

    def _coup_cards(self) -> str:
        """The coup in progress, hand by hand (``P 4S 2C (6)  B 9H (9)``), or ``-``."""
        coup = self._state.coup
        if not coup.cards:
            return "-"
        player = " ".join(c.code for c in coup.player)
        banker = " ".join(c.code for c in coup.banker) or "-"
        return f"P {player} ({coup.player_total})  B {banker}" + (
            f" ({coup.banker_total})" if coup.banker else ""
        )

    def published(self) -> dict[str, object]:
        """The monitor's view: the shoe and coup numbers (the coup as the dealer display names
        it), this shoe's results (roads.Result codes; controller/scoreboard draws the roads from
        them), the last coup's totals, the state and the result announced. New objects each
        call (the tuples are copies)."""
        d = self._state.data
        state = self._sequence.current
        return {
            "game": self.game,
            "state": state,
            "shoe": d.shoe_no,
            "coup": coup_shown(state, d.coup_no),  # the dealer display's number
            "results": tuple(d.results),
            "last_totals": tuple(d.last_totals),
            "announce": d.announce[0],
            "last_hand": self._state.last_hand.last_hand,
            "halted": bool(d.faults),
        }

    def round_in_progress(self) -> bool:
        return self._sequence.current in (*COUP_STATES, "settling") or bool(self._state.data.bets)

    def faults(self) -> list[str]:
        """What stops play: the table's integrity faults (cleared by a technician, which
        reshuffles) and the shoe's conditions (see clear_fault for what clears each)."""
        d = self._state.data
        out = list(d.faults)
        out += [f"shoe fault {f}" for f in d.shoe_faults]
        if self.link.refused is not None:
            out.append(f"shoe refused: {self.link.refused}")
        if not self.link.watchdog_ok:
            out.append("shoe watchdog: no valid frame")
        if d.shoe_unconfirmed is not None:
            out.append(f"shoe session {d.shoe_unconfirmed} unconfirmed")
        return out

    def journal_untrusted(
        self, lost: int, who: str, rewritten_from: int | None = None
    ) -> list[str]:
        """The application's hook at a supervisor's acknowledgment of a journal finding: a
        card or result lost or rewritten counts as a void during a coup (DealerActions)."""
        return self._actions.journal_untrusted(lost, who, rewritten_from)

    def clear_fault(self, who: str) -> list[str]:
        """Clear the table's integrity faults (the shoe is reshuffled). The shoe's conditions
        are not the console's to clear: the refusal says what clears each one status shows."""
        d = self._state.data
        if not d.faults:
            how = [
                f"shoe fault {f}: the shoe clears it ($FLT,CLR, `sim shoe fault clear` on"
                " the sim profile) or a power cycle of the shoe"
                for f in d.shoe_faults
            ]
            if self.link.refused is not None:
                how.append(
                    f"shoe refused: clears when a shoe that speaks shoe protocol revision"
                    f" {REVISION} powers up"
                )
            if not self.link.watchdog_ok:
                how.append("shoe watchdog: clears when a valid frame of the shoe's session arrives")
            if d.shoe_unconfirmed is not None:
                how.append(
                    f"shoe session {d.shoe_unconfirmed} unconfirmed: the dealer"
                    " confirms with `shoe resume`"
                )
            raise Refused(
                "no table fault to clear" + (": " if how else "") + "; ".join(how), "STATE"
            )
        return self.action("clear", [], who)

    def close(self) -> None:
        self.link.stop()
        sim = self._ctx.devices.sim.shoe
        if sim is not None:
            sim.stop(timeout=2.0)

    def query(self, name: str, args: list[str]) -> list[str]:
        """``odds``: the exact odds of the next coup (nothing journaled)."""
        if name != "odds":
            raise Refused(f"the baccarat table has no {name[:32]!r}", RefusalCode.UNKNOWN)
        return self.odds()

    def odds(self) -> list[str]:
        """The exact odds of the next coup from the cards left in the shoe."""
        composition = self._state.composition
        if composition is None:
            raise Refused("no shoe in play", RefusalCode.STATE)
        try:
            left: dict[object, int] = {k: v for k, v in composition.values().items()}
            odds = baccarat.exact_odds(left, self._state.rules)
        except baccarat.CompositionError as exc:
            raise Refused(str(exc), RefusalCode.STATE) from None
        lines = [f"cards left {composition.cards_left}"]
        for key in ("banker", "player", "tie", "player_natural", "banker_natural"):
            lines.append(f"{key} {float(odds[key]):.6f}")
        for key in sorted(k for k in odds if k.startswith("edge:")):
            value: Fraction = odds[key]
            lines.append(f"{key} {float(value) * 100:+.4f}%")
        return lines

    # -- for tests and tools -------------------------------------------------------------------

    @property
    def state(self) -> str:
        return self._sequence.current

    @property
    def data(self) -> ShoeData:
        """A copy of the table's data (tests read it; nothing outside changes it)."""
        return ShoeData.from_json(copy.deepcopy(self._state.data.to_json()))

    @property
    def ledger(self) -> VigLedger:
        return self._state.ledger
