"""The pai gow table: the round's order as a ``transitions`` state machine, its journal and outputs.

One round runs, in the order 9 NYCRR 5324.50 writes it: tiles face up for inspection ((d)(2),
(d)(7)), the wash and stacking ((d)(3)-(6)), betting and the offer of the bank ((c)(3), (g)(3)),
"no more bets" ((e)(1)), the bank's choice of delivery style when a player banks ((g)(9)), the
draw of the certified RNG ((a)(4)) or the dealer's entry of the dice total ((a)(3)), the deal and
the collection of unwagered stacks ((e)(4)-(5)), the players setting their hands ((f)(1)-(2)),
the dealer's or bank's hands, surrender and settlement ((f)(3)-(11), (g)(14)-(16)), and the
next round's wash.

Who does what (docs/design.md "State machines", "One owner of state"):

* :class:`PaigowRound` is the model: every fact of the table (state, round id, the round's record,
  the bank rotation, the latched RNG fault) lives there and nowhere else. Its guards are pure
  ``why_*`` methods (a reason text, or None when allowed); the machine's ``conditions`` call them.
  Its one ``before`` callback journals the transition's outcome -- a *fact row* carrying the whole
  snapshot -- before the state changes; if the journal write fails the state does not change.
  Nothing runs in ``on_enter``/``after`` that can fail.
* :class:`PaigowTable` is the :class:`controller.tables.table.Table` the application drives from
  its one loop thread: it journals every input (button or console) with its round id *before*
  acting, journals every refusal with its reason, draws from the RNG before firing ``draw`` (so
  the draw is journaled before it is shown), and drives the display and seat lamps from the model.

Journal rows (every one carries the round id; recall groups by it). One input and everything it
causes are one transaction of the journal (the application opens it around each event; this
table says ``journal_transactions``): one commit, one sync, and the display, the lamps and the
alarms are driven only after that commit (``Journal.after_commit``); a commit that fails puts the
model back as it was before the input.

* every input (a button press or console action) is carried, as ``input``, by the first row it
  causes (a fact row, a refusal, a settlement); an input that causes no other row is journaled
  alone as ``paigow.input``;
* ``paigow.refused`` -- a refused input: the trigger, the state, the reason;
* fact rows ``paigow.state``, ``paigow.drawn`` (the RNG value and raw bytes) and
  ``paigow.dice``: the transition (trigger, from, state) and only the record's and rotation's
  fields it changed (``record``, ``rotation``);
* snapshot rows ``paigow.settled`` / ``paigow.voided`` (the round's closing rows: the closed
  round's ``record`` and the ``snapshot`` of the table after it, a round boundary, where a
  signed head is asked for) and ``paigow.recovered`` (each start-up): recovery reads the newest
  snapshot row and replays the fact rows after it;
* ``paigow.settlement`` -- at ``settled``, when wagers or tiles were entered: every wager's line
  (seat, area, stake, outcome, commission, net cents) and the ledger, journaled before the
  closing row (which names it by ``record.settlement_seq``);
* ``paigow.rng_fault`` / ``paigow.rng_fault_cleared`` -- the fault latch survives a power cycle;
* ``paigow.device_error`` -- the display or a lamp could not be driven.

Money (optional entries; docs/paigow-table.md "Wagers, tiles and settlement"): the dealer or a
pit/surveillance operator may enter the wagers (``wager``) during betting and the tiles
(``tiles`` / ``hands``) once the dealer's hands are turned over. They are machine triggers like
any other (journaled input, guard, fact row with the whole record), so recall shows them and a
restart keeps them. The table sets the dealer's (and a co-bank's) hands by the house way itself
and, at ``settled``, computes every outcome and the settlement in integer cents with the rules
engine (``controller/games/paigow``). Once anything is entered, ``settled`` is refused until the
entries are complete and consistent. Nothing entered: ``settled`` is the dealer's confirmation.

The round's pieces live in modules of their own in this package: the definition as data
(``definition``), the round's record (``record``), the machine and its model (``machine``), the
wager and tile entries and the settlement (``entries``), the console grammar (``commands``), the
scripted dealer (``script``) and the docs/paigow-table.md tables and diagram, generated and
snapshot-tested (``markdown``).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Final, TypeVar, cast

from controller.fields.readers import int_of, map_of, opt_int_of, opt_map_of, opt_str_of
from controller.games.paigow.banking import DEALER, BankingError, BankRotation
from controller.games.paigow.settlement import AreaWager, setting_order
from controller.tables.kernel.unit_of_work import RowData, UnitOfWork
from controller.tables.paigow.commands import house_way_lines, parse_action
from controller.tables.paigow.definition import (
    ACTION_HELP,
    ACTION_NAMES,
    BUTTON_TRIGGERS,
    IN_ROUND,
    INPUTS,
    NEW_ROUND_TRIGGERS,
    PLAY_UNDER_FAULT,
    RECOVERY_RULES,
    SAID,
    SEATS,
    STATE_NAMES,
    TRANSITIONS,
    Step,
    position_name,
    said,
    seat_of,
    start_words,
)
from controller.tables.paigow.entries import (
    compute_settlement,
    has_entries,
    settlement_summary,
)
from controller.tables.paigow.machine import NEEDS_SUPERVISOR, PaigowRound, build_machine
from controller.tables.paigow.record import (
    RoundRecord,
    Snapshot,
    changed,
    compact_record,
    compact_snapshot,
    load_snapshot,
)
from controller.tables.paigow.replies import EXPOSURE_VOID_REASON, confirmation, exposed_hand
from controller.tables.table import (
    ActionHelp,
    PressWaiter,
    RefusalCode,
    Refused,
    ReplyWaiter,
    TableContext,
)
from drivers.buttons import ButtonPressed

if TYPE_CHECKING:
    from transitions import EventData

    from controller.config.settings import RuleSettings

T = TypeVar("T")

#: How long the power-up lamp test lights every segment before the display shows the state.
LAMP_TEST_NS: Final = 1_000_000_000


#: Rows that carry the whole table state (recovery starts from the newest).
SNAPSHOT_KINDS: Final = ("paigow.settled", "paigow.voided", "paigow.recovered")
#: Rows that carry a transition's changes (replayed after the snapshot).
CHANGE_KINDS: Final = ("paigow.state", "paigow.drawn", "paigow.dice")
FACT_KINDS: Final = CHANGE_KINDS + SNAPSHOT_KINDS
FAULT_KINDS: Final = ("paigow.rng_fault", "paigow.rng_fault_cleared")
#: The fewest journal rows from a state to a draw (each input is one row: ``shuffled``, ``no
#: more bets``, the draw); rows lost from a state at least this many may have held its draw.
ROWS_TO_A_DRAW: Final[Mapping[str, int]] = {
    "inspection": 3,
    "washing": 3,
    "betting": 2,
    "bank_style": 1,
    "no_more_bets": 1,
}


def _player_of(rec: RoundRecord, area: object) -> str:
    """Who decides for the hand of ``area`` (5324.50(i)(1)): the seat whose wager is on it (a
    player may wager on two areas, (h)); the area's own seat when nobody wagered there."""
    seats = sorted({w["seat"] for w in rec.wagers if w["area"] == area})
    if not seats or seats == [area]:
        return f"seat {area}"
    return " and ".join(f"seat {s}" for s in seats)


class PaigowTable:
    """The pai gow :class:`controller.tables.table.Table` (see the module docstring)."""

    game = "paigow"
    #: The application journals each event as one transaction (docs/journal.md).
    journal_transactions: bool = True
    #: What an archive of old rows must keep live (controller/journal/archive.py), and the
    #: rows it carries forward when they are older (the RNG fault latch).
    snapshot_kinds: tuple[str, ...] = SNAPSHOT_KINDS
    carry_kinds: tuple[tuple[str, ...], ...] = (FAULT_KINDS,)

    def __init__(
        self, ctx: TableContext, *, clock_ns: Callable[[], int] = time.monotonic_ns
    ) -> None:
        self._ctx = ctx
        self._journal = ctx.journal
        self._rng = ctx.rng
        self._clock_ns = clock_ns
        self._display = ctx.devices.display
        self._lamps = ctx.devices.seat_lamps
        self.model = PaigowRound(
            self._commit_row, self._settings, self._rng_live_fault, ctx.number_display_down
        )
        self.machine = build_machine(self.model)
        self._lamp_test_until: int | None = None
        self._test_mode = False
        self._display_shown: str | None = None  # what the last !DISPLAY line said
        self._sim_press: PressWaiter | None = None  # a `sim button` waiting for its press
        self._reply_waiter: ReplyWaiter | None = None
        self._voids_after_draw = 0  # this shift (docs "Voids after the draw")
        #: Why the last button press was refused (None: it was not), for tests and tools.
        self.last_refusal: Refused | None = None
        #: One input, one unit of work: the input rides on its first row, one memo per
        #: transaction, outputs after the commit (controller/tables/kernel).
        self._work = UnitOfWork(self._journal, lambda: self.model.round_id)
        self._work.memo = self._memo
        # the host's disable (or the door) closes the table: the display shows it between rounds
        ctx.watch_closed(self._outputs)
        self._power_up_lamp_test()

    # -- helpers ---------------------------------------------------------------------------------

    def _settings(self) -> RuleSettings:
        return self._ctx.settings.current()

    def _rng_live_fault(self) -> bool:
        return self._rng is None or bool(self._rng.faulted)

    def _commit_row(
        self,
        kind: str,
        trigger: str,
        before: Snapshot,
        after: Snapshot,
        closing: bool,
        extra: dict[str, object],
    ) -> None:
        """Journal a transition: a closing row carries the closed round's record and the
        snapshot after it (a round boundary: a signed head is asked for); any other fact row
        only what changed. A draw or a dice total asks for a signed head too, so the anchor
        learns of it soon after its commit (docs/journal.md "What remains")."""
        data: dict[str, object] = {
            "trigger": trigger,
            "from": before.state,
            "state": after.state,
            **extra,
        }
        if closing:
            data["record"] = compact_record(map_of(data, "record"))
            data["snapshot"] = compact_snapshot(after)
        else:
            for part, old, new in (
                ("record", asdict(before.record), asdict(after.record)),
                ("rotation", asdict(before.rotation), asdict(after.rotation)),
            ):
                diff = changed(old, new)
                if diff:
                    data[part] = diff
        self._work.append(kind, data)
        if closing:
            self._journal.want_head("boundary")
        elif kind in ("paigow.drawn", "paigow.dice"):
            self._journal.want_head("decision")

    def _memo(self) -> Callable[[], None]:
        """A copy of the model, and what puts it back if the transaction's commit fails
        (taken once per journal transaction, by the unit of work)."""
        model = self.model
        memo = (
            model.state,
            model.round_id,
            copy.deepcopy(model.record),
            model.rotation,
            model.rng_fault,
            self._test_mode,
        )

        def restore() -> None:
            state, round_id, record, rotation, rng_fault, test_mode = memo
            model.round_id, model.rotation, model.rng_fault = round_id, rotation, rng_fault
            model.record = copy.deepcopy(record)
            self._test_mode = test_mode
            self.machine.set_state(state)

        return restore

    def _outputs(self) -> None:
        """Drive the display and lamps from the model once the journal has it (after the
        transaction's commit, once per transaction; at once outside one)."""
        self._work.output_once("outputs", self._refresh_outputs)

    def _log(self, kind: str, data: RowData) -> int:
        return self._work.append(kind, data)

    def _taking(self, data: RowData, act: Callable[[], T]) -> T:
        """Handle one input: ``act`` journals it with its first row; an input that caused no
        row is journaled alone (``paigow.input``)."""
        return self._work.take(
            data, act, lambda: {"kind": "paigow.input", "state": self.model.state}
        )

    def _device(self, what: str, fn: Callable[[], object]) -> bool:
        """Drive an output; a driver error is journaled and alarmed, never fatal. True when the
        output was driven."""
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - any driver failure: report, keep the loop
            self._log("paigow.device_error", {"device": what, "error": str(exc)})
            self._ctx.alarm(f"FAULT {what}: {exc}")
            return False
        return True

    def _show(self, shown: str, fn: Callable[[], object]) -> None:
        """Drive the display, and say what it now shows on every console when that changed
        (``!DISPLAY 6``, ``!DISPLAY blank``), so the simulated table can be followed without
        asking ``status``."""
        if self._device("display", fn) and shown != self._display_shown:
            self._display_shown = shown
            self._ctx.announce([f"DISPLAY {shown}"], None)  # news, not an alarm

    # -- power-up and outputs ----------------------------------------------------------------------

    def _power_up_lamp_test(self) -> None:
        """Every segment and lamp lit at power-up, so a dead segment is seen (issue 4)."""
        if self._display is not None:
            self._show("test (every segment lit)", self._display.lamp_test)
        if self._lamps is not None:
            self._device("seat lamps", self._lamps.lamp_test)
        self._lamp_test_until = self._clock_ns() + LAMP_TEST_NS

    def _refresh_outputs(self) -> None:
        """Display and lamps from the model: the number from the draw until the deal is complete,
        then blank (5324.50(e)(6)); the fault pattern while the RNG is in fault and no number is
        up. While the table is CLOSED (the host's ``disable``) and no round is under way, the
        one digit cannot spell CLOSED: it shows the lone middle bar "-", no number to take a
        starting position from (docs/host-commands.md); a round under way finishes first."""
        self._lamp_test_until = None
        rec = self.model.record
        showing = self.model.state == "dealing" and rec.number is not None
        display, lamps = self._display, self._lamps
        if display is not None:
            number = rec.number
            if showing and number is not None:
                self._show(str(number), lambda: display.show(number))
            elif self._ctx.closed() is not None and not self.round_in_progress():
                self._show("- (table CLOSED)", display.fault)
            elif self.model.rng_fault is not None or self._rng_live_fault():
                self._show("fault (RNG: dice mode)", display.fault)
            else:
                self._show("blank", display.blank)
        if lamps is not None:
            seat = seat_of(rec.start_position)
            if showing and seat is not None and seat in lamps.positions:
                self._device("seat lamps", lambda: lamps.light(seat))
            else:
                self._device("seat lamps", lamps.all_off)

    # -- firing triggers -----------------------------------------------------------------------

    def refusal(self, trigger: str, **kwargs: object) -> str | None:
        """Why ``trigger`` is refused now (None: allowed). Evaluates the same guards the machine
        evaluates, without firing. The reason names the buttons and commands a person uses
        (:data:`SAID`), never a trigger or a guard: a trigger the state does not take gets
        the inputs it takes; a guard that only chooses between two transitions of the same
        input (``no_more_bets`` with or without a player bank) is never a reason."""
        state = self.model.state
        steps = [t for t in TRANSITIONS if t.trigger == trigger and t.source == state]
        if not steps:
            possible = [t for t in TRANSITIONS if t.source == state]
            allowed = [t.trigger for t in possible if self._may(t)]
            taken = said(allowed or [t.trigger for t in possible])
            # a dealer's button this state takes but not yet (the bank's cover, say) is named
            # with why: the next step is never left unsaid
            waiting = [
                f"{SAID[b]} waits: {reason}"
                for b in dict.fromkeys(t.trigger for t in possible)
                if b in BUTTON_TRIGGERS and b not in allowed and (reason := self.refusal(b))
            ]
            return "; ".join([f"the table is in state {state}, where it takes {taken}", *waiting])
        # a probe stands in for the machine's EventData: the guards read only kwargs, source
        event = cast("EventData", _Probe(kwargs, self.model.state))
        routing = {u for t in steps for u in t.unless}
        reasons = []
        for t in steps:
            why = [self.model.guards.why(c, event) for c in t.conditions]
            failed = [
                w
                for c, w in zip(t.conditions, why, strict=True)
                if w is not None and c not in routing
            ]
            routed = any(w is not None for c, w in zip(t.conditions, why, strict=True)) or any(
                self.model.guards.why(u, event) is None for u in t.unless
            )
            if not routed:
                return None
            reasons.extend(failed)
        return "; ".join(dict.fromkeys(reasons)) or f"not now (state {state})"

    def _may(self, step: Step) -> bool:
        """Whether ``step`` may be taken now as far as its guards can tell without the input's
        data (a guard that needs the seat or the tiles is given the benefit of the doubt, a
        void a supervisor's with a reason): a refusal lists only those (the dice in RNG mode,
        or the draw in dice mode, are not)."""
        probe = cast("EventData", _Probe({"supervisor": True, "reason": "asked"}, self.model.state))
        for name in step.conditions:
            try:
                if self.model.guards.why(name, probe) is not None:
                    return False
            except (KeyError, TypeError, ValueError):
                continue
        return True

    def _refuse(self, trigger: str, reason: str, code: str = "STATE") -> Refused:
        self._log(
            "paigow.refused",
            {"trigger": trigger, "state": self.model.state, "reason": reason, "code": code},
        )
        return Refused(reason, code)

    def _fire(self, trigger: str, **kwargs: object) -> None:
        """Fire an allowed trigger (guards re-checked by the machine; the ``before`` callback
        journals the outcome before the state changes), then drive the outputs. One verdict:
        each guard runs once, for the refusal and as the machine's condition."""
        with self.model.guards.verdict():
            why = self.refusal(trigger, **kwargs)
            if why is not None:
                raise self._refuse(trigger, why)
            fired = getattr(self.model, trigger)(**kwargs)
        if not fired:  # pragma: no cover - refusal() evaluates the same guards
            raise self._refuse(trigger, f"not now (state {self.model.state})")
        self._outputs()

    def _trigger(self, trigger: str, who: str = "dealer", **kwargs: object) -> list[str]:
        """Fire ``trigger`` for ``who`` (``dealer`` for a button, ``role@source`` for the
        console); return what changed, for the reply and the ``!`` lines."""
        if self._test_mode:
            raise self._refuse(trigger, "test mode is on: no round is touched (test-mode off)")
        blocking = self._ctx.app_faults()
        if blocking and trigger not in PLAY_UNDER_FAULT:
            raise self._refuse(
                trigger,
                "play is stopped by a fault a technician must clear: " + "; ".join(blocking),
                "FAULT",
            )
        if trigger in NEW_ROUND_TRIGGERS:
            power = self._ctx.new_round_hold()
            if power is not None:
                raise self._refuse(trigger, power, RefusalCode.HOLD)
        if trigger == "draw":
            held = self._ctx.decision_hold()
            if held is not None:
                raise self._refuse(trigger, held, RefusalCode.HOLD)
            return self._draw()
        if trigger == "settled" and has_entries(self.model.record):
            return self._settle()
        before = (self.model.round_id, copy.deepcopy(self.model.record))
        self._fire(trigger, **kwargs)
        if trigger in ("void", "expose_void") and before[1].number is not None:
            reason = (
                str(kwargs.get("reason") or "")
                if trigger == "void"
                else EXPOSURE_VOID_REASON.format(whose=exposed_hand(kwargs))
            )
            self._alarm_void_after_draw(trigger, before[0], before[1], who, reason)
        return self._describe(trigger, kwargs, before)

    def _alarm_void_after_draw(
        self,
        trigger: str,
        round_id: int,
        rec: RoundRecord,
        who: str,
        reason: str,
        shown: str | None = None,
    ) -> None:
        """A round voided after its number was out could be drawn again: journaled as an
        alarm, said on every console, counted in ``status`` for the shift. ``shown``: what
        was drawn, when the record no longer says (a journal finding)."""
        self._voids_after_draw += 1
        if shown is None:
            shown = (
                f"{rec.mode} {rec.number}" if rec.mode == "rng" else f"dice total {rec.dice_total}"
            )
        self._journal.append(
            "paigow.void_after_draw",
            {
                "trigger": trigger,
                "number": rec.number,
                "mode": rec.mode,
                "who": who,
                "reason": reason,
                "shift_count": self._voids_after_draw,
            },
            round_id=round_id,
        )
        n = self._voids_after_draw
        self._ctx.alarm(
            f"ALARM void after the draw: round {round_id} ({shown} shown) voided by "
            f"{who}: {reason}; {n} void{'' if n == 1 else 's'} after a draw this "
            "shift"
        )

    def _settle(self) -> list[str]:
        """``settled`` with entries: the settlement (computed from the journaled record) is
        journaled as ``paigow.settlement`` before the closing row, which names its seq."""
        why = self.refusal("settled")
        if why is not None:
            raise self._refuse("settled", why)
        round_id = self.model.round_id
        settlement = compute_settlement(self.model.record, self._settings())
        seq = self._log("paigow.settlement", settlement)
        self._fire("settled", settlement_seq=seq)
        return [
            f"round {round_id} settled",
            *settlement_summary(settlement),
            *self._describe("settled", {"settlement_seq": seq}),
        ]

    def _draw(self) -> list[str]:
        """One draw per round (5324.50(a)(4)): refused unless the state allows it; the value and
        raw bytes are journaled (in the ``paigow.drawn`` fact row) before the display shows it."""
        why = self.refusal("draw")
        if why is not None:
            raise self._refuse("draw", why)
        from controller.rng.certified import RngFault

        rng = self._rng
        if rng is None:  # dice mode: the guards refuse a draw first (no RNG is a fault)
            raise self._refuse("draw", "no RNG is fitted: enter the dice total", RefusalCode.FAULT)
        try:
            number, raw = rng.draw_with_raw(1, 8)
        except RngFault as exc:
            self._latch_fault(exc.reason)
            self._outputs()
            raise self._refuse(
                "draw",
                f"RNG fault: {exc.reason}; enter the dice total (5324.50(a)(3)): `dice T`",
                "FAULT",
            ) from exc
        self._fire("draw", number=number, raw=raw.hex())
        return self._describe("draw")

    def _latch_fault(self, reason: str) -> None:
        if self.model.rng_fault is None:
            self._log("paigow.rng_fault", {"reason": reason})
            self.model.rng_fault = reason
            self._ctx.alarm(f"FAULT RNG: {reason}; dice mode (5324.50(a)(3)) until cleared")

    def _describe(
        self,
        trigger: str,
        kwargs: Mapping[str, object] | None = None,
        before: tuple[int, RoundRecord] | None = None,
    ) -> list[str]:
        """The reply to a trigger: the state it left, then what changed, said plainly."""
        rec = self.model.record
        lines = [f"round {self.model.round_id} {self.model.state}"]
        if trigger == "wager":
            lines.extend(self._wager_lines(dict(kwargs or {})))
        if trigger == "tiles":
            h = rec.hands[str((kwargs or {})["whose"])]
            whose = (kwargs or {})["whose"]
            name = whose if whose in ("dealer", "bank") else f"area {whose}"
            how = f"{h['set_by']}: {h['reason']}" if "reason" in h else f"set by the {h['set_by']}"
            lines.append(f"{name}: high {' '.join(h['high'])}  low {' '.join(h['low'])}  ({how})")
        if trigger in ("draw", "dice"):
            lines.append(self._start_line(rec))
            if rec.triples:
                method = self._settings().paigow.dragons_eye_method
                lose = "odd and even" if method == 1 else "odd, even and pai gow"
                lines.append(
                    f"dragon's eye: triples -- {lose} wagers lose (13:69F-10.7(l){method})"
                )
        if trigger in ("style", "draw", "dice") and rec.bank != "house":
            line = f"STYLE round {self.model.round_id}: {rec.style} ({rec.style_by})"
            self._ctx.alarm(line)  # shown for surveillance (g)(9)
            lines.append(line)
        lines.extend(self._confirmation(trigger, dict(kwargs or {}), before))
        return lines

    def _confirmation(
        self, trigger: str, kwargs: Mapping[str, object], before: tuple[int, RoundRecord] | None
    ) -> list[str]:
        """What an accepted input changed at the table, in the regulation's words
        (:data:`controller.tables.paigow.replies.CONFIRMATIONS`)."""
        rec = self.model.record
        rid, old = before if before is not None else (self.model.round_id, rec)
        return confirmation(
            self._reply(trigger, kwargs, old),
            rid=rid,
            seat=kwargs.get("seat"),
            player=_player_of(old, kwargs.get("seat")),
            whose=exposed_hand(kwargs),
            reason=kwargs.get("reason") or "voided by the dealer",
            reshuffles=rec.reshuffles,
            bank_seat=rec.bank_seat,
        )

    def _reply(self, trigger: str, kwargs: Mapping[str, object], old: RoundRecord) -> str:
        """Which confirmation an accepted ``trigger`` gets: its own, or the variant the state
        calls for (``trigger/variant``); a settlement with entries says its lines instead."""
        if trigger == "shuffled" and old.reshuffle_pending:
            return "shuffled/rewash"
        if trigger == "no_more_bets":
            if self.model.state == "bank_style":
                return "no_more_bets/bank"
            return "no_more_bets/dice" if self.model.dice_required() else "no_more_bets/rng"
        if trigger == "hands_set" and self.model.record.bank != "house":
            return "hands_set/bank"
        if trigger == "settled" and "settlement_seq" in kwargs:
            return "settled/entries"
        return trigger

    def _wager_lines(self, kwargs: Mapping[str, object]) -> list[str]:
        rec = self.model.record
        if kwargs.get("seat") == "dealer":
            return [f"dealer's wager against the bank: {rec.dealer_wager or 0}c"]
        seat = int_of(kwargs, "seat")
        mine = [w for w in rec.wagers if w["seat"] == seat]
        out = [
            f"seat {seat}: "
            + (", ".join(f"area {w['area']} {w['cents']}c" for w in mine) or "no wager")
        ]
        if rec.bank != "house" and seat == rec.bank_seat:
            out[0] += " (the bank's chips)"
        if len(mine) == 2:
            first, second = setting_order(
                AreaWager(mine[0]["area"], mine[0]["cents"]),
                AreaWager(mine[1]["area"], mine[1]["cents"]),
            )
            out.append(
                f"seat {seat} sets area {first.area} before area {second.area} (5324.50(h)(2))"
            )
        return out

    @staticmethod
    def _start_line(rec: RoundRecord) -> str:
        source = (
            f"rng {rec.number}"
            if rec.mode == "rng"
            else f"dice {'+'.join(map(str, rec.dice or []))}={rec.dice_total}"
        )
        pos = rec.start_position or 0
        seat = rec.bank_seat if rec.bank != "house" else None
        words = start_words(rec.start_ordinal or 0, seat, pos)
        return f"{source}: {words} (position {pos}), style {rec.style}"

    # -- Table protocol ---------------------------------------------------------------------------

    def recover(self) -> list[str]:
        """Rebuild from the newest snapshot row and the fact rows after it, and the fault latch;
        apply :data:`RECOVERY_RULES`; journal the result as a snapshot (``paigow.recovered``)."""
        notes: list[str] = []
        shift = self._journal.last(["paigow.void_after_draw", "paigow.shift_start"])
        if shift is not None and shift.kind == "paigow.void_after_draw":
            count = opt_int_of(shift.data, "shift_count")
            self._voids_after_draw = 1 if count is None else count
        fault = self._journal.last(FAULT_KINDS)
        if fault is not None and fault.kind == "paigow.rng_fault":
            reason = opt_str_of(fault.data, "reason")
            self.model.rng_fault = "latched before power-down" if reason is None else reason
            notes.append(f"RNG fault still latched: {self.model.rng_fault}")
        row = self._journal.last(SNAPSHOT_KINDS)
        changes = list(
            self._journal.events(kinds=CHANGE_KINDS, since_seq=row.seq if row is not None else 0)
        )
        if row is None and not changes:
            self._commit_recovered("fresh", "no pai gow history in the journal")
            notes.append(f"fresh table: round {self.model.round_id} inspection")
        else:
            try:
                state = "inspection"
                if row is not None:
                    snap = load_snapshot(map_of(row.data, "snapshot"))
                    self.model.load(snap)
                    state = snap.state
                for change in changes:
                    state = self.model.apply(change.data)
                if state not in STATE_NAMES:
                    raise ValueError(f"unknown state {state!r}")
                self.machine.set_state(state)
            except (KeyError, TypeError, ValueError, BankingError) as exc:
                last = changes[-1] if changes else row
                notes.append(
                    self._void_unreadable(last.round if last is not None else None, str(exc))
                )
            else:
                rule, why = RECOVERY_RULES[state]
                self._commit_recovered(rule, why)
                shown = (
                    f", showing {self.model.record.number}" if self.model.state == "dealing" else ""
                )
                notes.append(f"round {self.model.round_id} {state}: {rule} ({why}){shown}")
        if self._lamp_test_until is None:
            self._outputs()
        return notes

    def _commit_recovered(self, rule: str, why: str, **more: object) -> None:
        snap = self.model.snapshot()
        self._log(
            "paigow.recovered",
            {
                "trigger": "power_up",
                "from": snap.state,
                "state": snap.state,
                "rule": rule,
                "reason": why,
                **more,
                "snapshot": compact_snapshot(snap),
            },
        )

    def _void_unreadable(self, round_id: int | None, problem: str) -> str:
        rid = round_id if round_id is not None else 0
        rule, why = RECOVERY_RULES["(unreadable)"]
        self._journal.append(
            "paigow.voided", {"trigger": "power_up", "reason": f"{why}: {problem}"}, round_id=rid
        )
        self.model.round_id = rid + 1
        self.model.record = RoundRecord(round_id=rid + 1, reshuffle_pending=True)
        self.model.rotation = BankRotation(seats=SEATS)
        self.machine.set_state("washing")
        self._commit_recovered(rule, f"{why}: {problem}")
        return f"round {rid}: {rule} ({problem}); round {rid + 1} washing"

    def journal_untrusted(
        self, lost: int, who: str, rewritten_from: int | None = None
    ) -> list[str]:
        """A supervisor acknowledged that the journal lost ``lost`` committed rows (a tail cut,
        a lost WAL) or that rows were rewritten (no signed head vouches for the rows from
        ``rewritten_from`` on): the round the journal shows cannot be trusted (its draw may be
        gone, or another), so a round in progress is voided and the tiles re-shuffled; after a
        loss the round ids also skip past every round the lost rows could have held. No round
        is ever drawn twice. A draw lost or rewritten counts as a void after the draw (the
        alarm, the journaled alarm, the shift's count: :meth:`_lost_draw`)."""
        old_id, state = self.model.round_id, self.model.state
        rec = copy.deepcopy(self.model.record)
        drawn = self._lost_draw(lost, rewritten_from, rec, state)
        lines: list[str] = []
        if lost or state in IN_ROUND:
            lines.append(self._void_untrusted(lost, who, old_id, state))
        if drawn is not None:
            rid, shown = drawn
            what = (
                f"{lost} committed journal rows were lost"
                if lost
                else f"journal rows from row {rewritten_from} were rewritten"
            )
            self._alarm_void_after_draw(
                "journal_finding", rid, rec, who, f"{what} ({shown}); acknowledged", shown
            )
            n = self._voids_after_draw
            lines.append(
                f"round {rid}: a draw lost or rewritten with the journal rows counts"
                f" as a void after the draw ({n} this shift; alarmed)"
            )
        return lines

    def _lost_draw(
        self, lost: int, rewritten_from: int | None, rec: RoundRecord, state: str
    ) -> tuple[int, str] | None:
        """Whether the journal's loss or rewrite took a decision with it: (the round, what it
        showed) or None. The round voided had its number out (the record says so); or the
        rows lost are at least as many as the fewest inputs from the state recovered to a
        draw (:data:`ROWS_TO_A_DRAW`: each is a row), so the draw may be among them; or a
        draw or dice row lies in the rows no signed head vouches for any more."""
        if rec.number is not None and (lost or state in IN_ROUND):
            shown = (
                f"{rec.mode} {rec.number}" if rec.mode == "rng" else f"dice total {rec.dice_total}"
            )
            return self.model.round_id, shown
        if lost and lost >= ROWS_TO_A_DRAW.get(state, 1):
            return self.model.round_id, "its number lost with the journal rows"
        if rewritten_from is not None:
            for row in self._journal.events(
                kinds=("paigow.drawn", "paigow.dice"), since_seq=rewritten_from - 1
            ):
                number = (opt_map_of(row.data, "record") or {}).get("number")
                return int(row.round or 0), f"the number now reading {number} in row {row.seq}"
        return None

    def _void_untrusted(self, lost: int, who: str, old_id: int, state: str) -> str:
        """Void the round the journal cannot vouch for (see :meth:`journal_untrusted`)."""
        self._work.remember()
        new_id = old_id + lost + 1
        what = (
            f"{lost} committed journal rows were lost or rewritten"
            if lost
            else "journal rows were rewritten"
        )
        reason = (
            f"{what} (acknowledged by {who}) in round {old_id} {state}: the round is"
            " void, the tiles are re-shuffled"
        )
        record = asdict(self.model.record)
        record["closing_reason"] = reason
        self.model.round_id = new_id
        self.model.record = RoundRecord(round_id=new_id, reshuffle_pending=True)
        self.machine.set_state("washing")
        self._journal.append(
            "paigow.voided",
            {
                "trigger": "journal_loss",
                "from": state,
                "state": "washing",
                "record": compact_record(record),
                "snapshot": compact_snapshot(self.model.snapshot()),
            },
            round_id=old_id,
        )
        self._journal.want_head("boundary")
        self._outputs()
        return (
            f"round {old_id} ({state}) voided: journal rows lost or rewritten; next round"
            f" {new_id}, washing"
        )

    def handle(self, event: object) -> None:
        """A dealer button (``ButtonPressed``): journaled first, then fired; a refusal is
        journaled and reported as an unsolicited console line, never raised to the loop."""
        if not isinstance(event, ButtonPressed):
            self._log(
                "paigow.refused",
                {
                    "trigger": None,
                    "state": self.model.state,
                    "reason": f"not a pai gow input: {type(event).__name__}",
                    "code": "SYNTAX",
                    "input": {"source": "unknown", "event": type(event).__name__},
                },
            )
            return
        name = event.name
        press = self._sim_press
        if press is not None and (press.button != name or press.done):
            press = None
        skip = press.source if press is not None else None

        def announce(lines: list[str]) -> None:  # an output: after the commit
            self._journal.after_commit(lambda: self._ctx.announce(lines, skip))

        def act() -> None:
            try:
                if name not in INPUTS or INPUTS[name].button == "-":
                    raise self._refuse(name, f"no pai gow button {name!r}", RefusalCode.UNKNOWN)
                kwargs = {"reason": "voided by the dealer (button)"} if name == "void" else {}
                lines = self._trigger(name, "dealer", **kwargs)
            except Refused as exc:
                self.last_refusal = exc
                # said on every console; the one whose `sim button` pressed it hears it as its
                # ERR
                announce([f"REFUSED {name}: {exc.reason}"])
                if press is not None:
                    press.finish([], exc)
                return
            self.last_refusal = None
            announce([f"BUTTON {name}: {line}" for line in lines])
            if press is not None:
                press.finish(lines, None)

        self._taking({"button": name, "mono_ns": event.monotonic_ns}, act)

    def action(self, name: str, args: list[str], who: str) -> list[str]:
        """A console action (grammar in docs/paigow-table.md); raises :class:`Refused`."""

        def act() -> list[str]:
            trigger, kwargs = self._parse(name, list(args))
            if trigger == "test_mode":
                return self._set_test_mode(bool(kwargs["on"]), who)
            if trigger == "sim_button":
                return self._sim_button(opt_str_of(kwargs, "button"), who)
            if trigger == "shift_start":
                return self._shift_start(who)
            if trigger in ("void", "expose_void"):
                # every path that voids the round: after the draw only a supervisor (issue 15)
                kwargs["supervisor"] = who.startswith("supervisor@")
                why = None if kwargs["supervisor"] else self.refusal(trigger, **kwargs)
                if why is not None and NEEDS_SUPERVISOR in why:
                    raise self._refuse(
                        trigger, why, RefusalCode.AUTH
                    )  # a login question, not the state's
            return self._trigger(trigger, who, **kwargs)

        result: list[str] = self._taking(
            {"source": "console", "action": name, "args": list(args), "who": who}, act
        )
        return result

    def take_reply_waiter(self) -> ReplyWaiter | None:
        """For the application: the reply to the last ``sim button`` waits for the press (the
        GPIO driver posts it to the loop's queue) and then says what the button did."""
        waiter, self._reply_waiter = self._reply_waiter, None
        return waiter

    def query(self, name: str, args: list[str]) -> list[str]:
        """``houseway T1 T2 T3 T4``: how the house way (the ``paigow.house_way_policy``
        setting) sets four tiles; nothing is journaled, no round is touched."""
        if name != "houseway":
            raise Refused(f"the pai gow table has no {name[:32]!r}", RefusalCode.UNKNOWN)
        return house_way_lines(args, str(self._settings().get("paigow.house_way_policy")))

    def action_help(self) -> Mapping[str, ActionHelp]:
        """What ``help`` says of each console action (syntax, what it does, an example)."""
        return {word: ActionHelp(*entry) for word, entry in ACTION_HELP.items()}

    def _shift_start(self, who: str) -> list[str]:
        """A supervisor starts a shift: the count of voids after a draw starts again."""
        if not who.startswith("supervisor@"):
            raise self._refuse(
                "shift_start", "a supervisor's login is needed to start a shift", "AUTH"
            )
        self._log("paigow.shift_start", {"who": who, "voids_after_draw": self._voids_after_draw})
        was, self._voids_after_draw = self._voids_after_draw, 0
        return [f"shift started by {who}: voids after a draw counted from 0 (last shift: {was})"]

    def _parse(self, name: str, args: list[str]) -> tuple[str, dict[str, object]]:
        """Console words -> (trigger, data); a malformed line is journaled and refused."""
        return parse_action(name, args, self._refuse)

    def action_names(self) -> tuple[str, ...]:
        """The console words :meth:`action` takes (the console routes these here)."""
        return ACTION_NAMES

    def _set_test_mode(self, on: bool, who: str) -> list[str]:
        """Test mode (issue 7): the display lights every segment so nobody mistakes it for a
        round's number; every round input is refused; leaving it restores the outputs."""
        if on and self.round_in_progress():
            raise self._refuse("test_mode", "a round is in progress", RefusalCode.STATE)
        self._log("paigow.test_mode", {"on": on, "who": who})  # journaled before it applies
        self._test_mode = on
        if on:
            display = self._display
            if display is not None:
                self._journal.after_commit(
                    lambda: self._show("test (every segment lit: test mode)", display.lamp_test)
                )
            return ["test mode on: display shows every segment; round inputs refused"]
        self._outputs()
        return ["test mode off"]

    def _sim_button(self, button: str | None, who: str) -> list[str]:
        """Press a button on the simulated GPIO: the pin goes to its active level and back, so
        the real DealerButtons driver debounces it and posts the press to the loop's queue. The
        reply waits for the press and says what it did (:meth:`take_reply_waiter`)."""
        sim = self._ctx.devices.sim
        names = ", ".join(sim.button_names)
        if not sim.can_press():
            raise self._refuse(
                "sim_button", "the buttons are not on the simulated GPIO", RefusalCode.STATE
            )
        if button is None:
            raise self._refuse(
                "sim_button", f"usage: sim button NAME; buttons: {names}", RefusalCode.SYNTAX
            )
        if button not in sim.button_names:
            raise self._refuse(
                "sim_button", f"no button {button!r}; buttons: {names}", RefusalCode.RANGE
            )
        waiting = PressWaiter(button, who.partition("@")[2] or None)
        self._sim_press = waiting
        self._reply_waiter = waiting.waiter()
        pin = sim.press(button)  # as the profile wires it: active level, bounce time
        return [f"pressed {button} (BCM {pin})"]

    def tick(self, now_ns: int) -> None:
        """End the power-up lamp test after :data:`LAMP_TEST_NS`; latch (journal) an RNG fault
        raised outside a draw (a console self-test), so it survives a power cycle."""
        if self._rng is not None and self._rng.faulted and self.model.rng_fault is None:
            self._latch_fault(str(self._rng.fault_reason))
            self._outputs()
        if self._lamp_test_until is not None and now_ns >= self._lamp_test_until:
            self._lamp_test_until = None
            self._outputs()

    def status(self) -> dict[str, str]:
        rec = self.model.record
        bank = "house" if rec.bank == "house" else f"{rec.bank} seat {rec.bank_seat}"
        rot = self.model.rotation
        offer = (
            "none (first round after restack)"
            if rot.restack_round
            else "dealer"
            if rot.first_offer == DEALER
            else f"seat {rot.first_offer}"
        )
        info = {
            "state": self.model.state,
            "round": str(self.model.round_id),
            "number": "-" if rec.number is None else str(rec.number),
            "start_mode": self.model.start_mode(),
            "bank": bank,
            "bank_offer": offer,
            "style": rec.style,
        }
        last = self._journal.last(["paigow.drawn"])
        info["last_rng"] = (
            "-"
            if last is None
            else f"{int_of(map_of(last.data, 'record'), 'number')} (round {last.round})"
        )
        n = self._voids_after_draw
        info["voids_after_draw"] = f"{n} this shift" + (" (alarmed)" if n else "")
        if has_entries(rec):
            info["entries"] = (
                f"{len(rec.wagers)} wager{'' if len(rec.wagers) == 1 else 's'}"
                + (f", dealer {rec.dealer_wager}c" if rec.dealer_wager else "")
                + f", hands {', '.join(sorted(rec.hands)) or '-'}"
            )
        if rec.start_position is not None:
            info["start_position"] = f"{rec.start_position} ({position_name(rec.start_position)})"
        return info

    def published(self) -> dict[str, object]:
        """The monitor's view: what the 7-segment display shows, with its context. The number,
        the starting position and its seat only while the display shows them (the draw until
        the deal is complete, blank after: 5324.50(e)(6), the shaker covered again)."""
        rec = self.model.record
        showing = self.model.state == "dealing" and rec.number is not None and not self._test_mode
        position = rec.start_position if showing else None
        return {
            "game": self.game,
            "state": self.model.state,
            "round": self.model.round_id,
            "start_mode": self.model.start_mode(),  # "rng", "dice", "dice (RNG fault)"
            "dice_mode": self.model.dice_required(),
            "showing": showing,
            "number": rec.number if showing else None,
            "source": rec.mode if showing else None,
            "dice": list(rec.dice) if showing and rec.dice else None,
            "dice_total": rec.dice_total if showing else None,
            "start_position": position,
            "position_name": position_name(position) if position is not None else None,
            "seat": seat_of(position),
            "style": rec.style,
            "style_by": rec.style_by,
            "bank": rec.bank,
            "bank_seat": rec.bank_seat,
            "test_mode": self._test_mode,
            "fault": self.model.rng_fault is not None or self._rng_live_fault(),
        }

    def round_in_progress(self) -> bool:
        return self.model.state in IN_ROUND

    def faults(self) -> list[str]:
        out = []
        if self.model.rng_fault is not None:
            out.append(f"RNG: {self.model.rng_fault}")
        elif self._rng is not None and self._rng.faulted:
            out.append(f"RNG: {self._rng.fault_reason}")
        return out

    def clear_fault(self, who: str) -> list[str]:
        """Clear the RNG fault only after its self-test passes (issue 4)."""
        result: list[str] = self._taking(
            {"source": "console", "action": "fault clear", "who": who},
            lambda: self._clear_rng_fault(who),
        )
        return result

    def _clear_rng_fault(self, who: str) -> list[str]:
        if self._rng is None:
            raise self._refuse("clear_fault", "no RNG is fitted", RefusalCode.FAULT)
        if self.model.rng_fault is None and not self._rng.faulted:
            return ["no RNG fault"]
        from controller.rng.certified import RngFault

        try:
            report = self._rng.self_test()
            if report.passed:
                self._rng.clear_fault()
        except RngFault as exc:
            raise self._refuse(
                "clear_fault", f"RNG fault not cleared: {exc.reason}", "FAULT"
            ) from exc
        if not report.passed:
            raise self._refuse(
                "clear_fault", f"RNG fault not cleared: {report.format()}", RefusalCode.FAULT
            )
        self._log(
            "paigow.rng_fault_cleared",
            {"who": who, "self_test": report.format(), "was": self.model.rng_fault},
        )
        self.model.rng_fault = None
        self._outputs()
        return [report.format(), "RNG fault cleared"]

    def close(self) -> None:
        """Nothing of its own to stop: the application closes the devices it built."""


@dataclass
class _Probe:
    """A stand-in for ``EventData`` so :meth:`PaigowTable.refusal` runs the guards unfired."""

    kwargs: dict[str, object]
    source: str


def scripted_names() -> Sequence[str]:
    """The dealer buttons of one round, in order (used by controller.tables.paigow.script)."""
    return ("shuffled", "no_more_bets", "draw", "dealt", "hands_set", "settled")
