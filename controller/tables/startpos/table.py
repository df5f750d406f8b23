"""The starting-position table: the round's order (:mod:`.round`) behind the buttons, the
console and the number display, on the journal (docs/startpos-table.md).

It keeps no rules engine of ours: the game is the profile's ``[startpos]`` layout (the range,
the positions, who counts as one, the direction, whether an empty position counts).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from controller.rng.certified import RngFault
from controller.tables.startpos.layout import Direction, StartLayout
from controller.tables.startpos.round import ROW_KINDS, StartposRound
from controller.tables.table import (
    ActionHelp,
    PressWaiter,
    RefusalCode,
    Refused,
    ReplyWaiter,
    TableContext,
)
from drivers.buttons import ButtonPressed

REFUSED_KIND: Final = "startpos.refused"
INPUT_KIND: Final = "startpos.input"
#: The RNG found in fault at a draw (event 120, the meter faults.rng) and cleared (event 121):
#: one row each time, as pai gow's (docs/events.md).
RNG_FAULT_KIND: Final = "startpos.rng_fault"
RNG_CLEARED_KIND: Final = "startpos.rng_fault_cleared"
#: A supervisor's ``shift start``: the meters' shift counts start again (docs/meters.md).
SHIFT_KIND: Final = "startpos.shift_start"
IN_ROUND: Final = frozenset({"closed", "dealing", "playing"})

ACTION_HELP: Final[Mapping[str, tuple[str, str, str]]] = {
    "dice": (
        "dice A B C",
        "the three dice's values while the RNG is in fault (13:69F-31.11(b)): their total is"
        " counted from position one",
        "dice 2 3 3",
    ),
    "void": (
        "void [REASON]",
        "void the round (after the draw: a supervisor, with a reason)",
        "void cards dropped",
    ),
    "shift": (
        "shift start",
        "a supervisor starts a shift: the meters' shift counts start again",
        "shift start",
    ),
    "sim": ("sim button NAME", "press a dealer button on the simulated GPIO", "sim button draw"),
}


def layout_of(ctx: TableContext) -> StartLayout:
    """The profile's ``[startpos]`` layout (13:69F-31.11(c)'s by default)."""
    from controller.config.profile import StartposSettings

    s = ctx.profile.startpos if ctx.profile is not None else None
    s = s or StartposSettings()
    direction: Direction = "clockwise" if s.direction == "clockwise" else "counterclockwise"
    return StartLayout(s.range, s.positions, s.one, direction, s.count_empty)


class StartposTable:
    """A starting-position table (the application's :class:`~controller.tables.table.Table`)."""

    game = "startpos"
    journal_transactions = True
    snapshot_kinds: tuple[str, ...] = ROW_KINDS
    carry_kinds: tuple[tuple[str, ...], ...] = ()

    def __init__(self, ctx: TableContext) -> None:
        self._ctx = ctx
        self._journal = ctx.journal
        self._display = ctx.devices.display
        self._rng = ctx.rng
        self.round = StartposRound(
            ctx.journal,
            layout_of(ctx),
            ctx.rng,
            self._show,
            display_down=ctx.number_display_down,
            fault_latched=lambda: self._latched,
        )
        self._sim_press: PressWaiter | None = None
        self._reply_waiter: ReplyWaiter | None = None
        #: the RNG fault is journaled (a startpos.rng_fault row not yet cleared)
        self._fault_journaled = False
        #: a fault journaled before a restart, not cleared since: the dice stand in until a
        #: technician's `fault clear` passes the RNG's test (the RNG's own latch is in memory)
        self._latched: str | None = None
        ctx.watch_closed(self._refresh)

    # -- outputs -------------------------------------------------------------------------------

    def _show(self, number: int | None) -> None:
        """The number, or blank; while the table is CLOSED (the host's ``disable``, the door)
        and no round is under way, the lone middle bar, as at pai gow tiles (one digit cannot
        spell CLOSED: docs/host-commands.md)."""
        display = self._display
        if display is None:
            return
        try:
            if number is not None:
                display.show(number)
            elif self._ctx.closed() is not None and not self.round_in_progress():
                display.fault()
            else:
                display.blank()
        except OSError as exc:
            self._ctx.alarm(f"display: {exc}")

    def _refresh(self) -> None:
        """Show what the round says now (the CLOSED latch changed, or a restart)."""
        now = self.round.now
        self._show(now.number if now.state == "dealing" else None)

    # -- inputs --------------------------------------------------------------------------------

    def _holds(self, name: str) -> None:
        """What stops a round input whatever the state (faults, the play gate, the feed)."""
        faults = self._ctx.app_faults()
        if faults and name != "void":
            raise Refused(f"play stopped until a technician clears: {faults[0]}", RefusalCode.FAULT)
        if name == "no_more_bets":
            why = self._ctx.new_round_hold()
            if why is not None:
                raise Refused(why, RefusalCode.HOLD)
        if name in ("draw", "dice"):
            why = self._ctx.decision_hold()
            if why is not None:
                raise Refused(why, RefusalCode.HOLD)

    def _take(self, data: Mapping[str, object], act: Callable[[], list[str]]) -> list[str]:
        """One input: journaled with its first row, or alone with its refusal."""
        outcome: list[str] = []
        refusal: list[Refused] = []

        def run() -> None:
            try:
                outcome.extend(act())
            except Refused as exc:
                refusal.append(exc)

        def alone() -> dict[str, object]:
            """An input that journaled no round row: its refusal, or the input (a console's
            ``sim button``, whose press is the next input)."""
            if not refusal:
                return {"kind": INPUT_KIND, "state": self.round.now.state}
            return {
                "kind": REFUSED_KIND,
                "reason": refusal[0].reason,
                "code": refusal[0].code,
                "state": self.round.now.state,
            }

        button = data.get("button")
        args = data.get("args")
        self.round.opening = button == "no_more_bets" or (
            data.get("action") == "sim" and args == ["button", "no_more_bets"]
        )
        try:
            self.round.uow.take(data, run, alone)
        finally:
            self.round.opening = False
        self._journal_rng_fault()
        if refusal:
            raise refusal[0]
        return outcome

    def _fault_unjournaled(self) -> None:
        self._fault_journaled = False

    def _journal_rng_fault(self) -> None:
        """The RNG found in fault by an input (a refused draw, the dice), once until it is
        cleared: a row (event 120, faults.rng) and the alarm every console hears."""
        if self._fault_journaled or self._rng is None or not self._rng.faulted:
            return
        reason = self._rng.fault_reason
        # a fault is journaled once until cleared; a row the commit loses is written again
        self._journal.on_rollback(self._fault_unjournaled)
        self.round.uow.append(RNG_FAULT_KIND, {"reason": reason})
        self._fault_journaled = True
        said = f"FAULT RNG: {reason}; dice mode (13:69F-31.11(b): `dice A B C`) until cleared"
        self._journal.after_commit(lambda: self._ctx.alarm(said))

    def handle(self, event: object) -> None:
        """A dealer button: journaled, then acted on; a refusal is journaled and said on the
        consoles, never raised to the loop."""
        if not isinstance(event, ButtonPressed):
            self.round.uow.append(
                REFUSED_KIND,
                {"reason": f"not an input of this table: {type(event).__name__}", "code": "SYNTAX"},
            )
            return
        name = event.name
        press = self._sim_press
        if press is not None and (press.button != name or press.done):
            press = None
        skip = press.source if press is not None else None

        def act() -> list[str]:
            self._holds(name)
            return self.round.press(name, reason="voided by the dealer (button)")

        try:
            lines = self._take({"button": name, "mono_ns": event.monotonic_ns}, act)
        except Refused as exc:
            said = [f"REFUSED {name}: {exc.reason}"]
            self._journal.after_commit(lambda: self._ctx.announce(said, skip))
            if press is not None:
                press.finish([], exc)
            return
        out = [f"BUTTON {name}: {line}" for line in lines]
        self._journal.after_commit(lambda: self._ctx.announce(out, skip))
        if press is not None:
            press.finish(lines, None)

    def action(self, name: str, args: list[str], who: str) -> list[str]:
        """``dice A B C``, ``void [REASON]``, ``sim button NAME``; raises :class:`Refused`."""

        def act() -> list[str]:
            if name == "sim":
                if not args or args[0] != "button":
                    raise Refused("usage: `sim button NAME`", RefusalCode.SYNTAX)
                return self._sim_button(args[1] if len(args) > 1 else None, who)
            if name == "shift":
                return self._shift_start(args, who)
            self._holds(name)
            if name == "dice":
                try:
                    dice = tuple(int(a) for a in args)
                except ValueError:
                    raise Refused("usage: `dice A B C`, each 1 to 6", RefusalCode.SYNTAX) from None
                return self.round.press("dice", dice=dice)
            if name == "void":
                return self.round.press(
                    "void", supervisor=who.startswith("supervisor@"), reason=" ".join(args)
                )
            raise Refused(f"no action {name[:32]!r} at this table", RefusalCode.UNKNOWN)

        return self._take(
            {"source": "console", "action": name, "args": list(args), "who": who}, act
        )

    def _shift_start(self, args: list[str], who: str) -> list[str]:
        if args != ["start"]:
            raise Refused("usage: shift start", RefusalCode.SYNTAX)
        if not who.startswith("supervisor@"):
            raise Refused(
                "a supervisor's login is needed to start a shift (login SUPERVISOR-PIN)",
                RefusalCode.AUTH,
            )
        self.round.uow.append(SHIFT_KIND, {"who": who})
        return [f"shift started by {who}: the meters' shift counts start from 0"]

    def _sim_button(self, button: str | None, who: str) -> list[str]:
        sim = self._ctx.devices.sim
        names = ", ".join(sim.button_names)
        if not sim.can_press():
            raise Refused("the buttons are not on the simulated GPIO", RefusalCode.STATE)
        if button is None or button not in sim.button_names:
            raise Refused(f"`sim button NAME`; buttons: {names}", RefusalCode.RANGE)
        waiting = PressWaiter(button, who.partition("@")[2] or None)
        self._sim_press = waiting
        self._reply_waiter = waiting.waiter()
        pin = sim.press(button)
        return [f"pressed {button} (BCM {pin})"]

    def take_reply_waiter(self) -> ReplyWaiter | None:
        waiter, self._reply_waiter = self._reply_waiter, None
        return waiter

    def action_help(self) -> Mapping[str, ActionHelp]:
        return {word: ActionHelp(*entry) for word, entry in ACTION_HELP.items()}

    def action_names(self) -> tuple[str, ...]:
        return tuple(ACTION_HELP)

    def query(self, name: str, args: list[str]) -> list[str]:
        raise Refused(f"the starting-position table has no {name[:32]!r}", RefusalCode.UNKNOWN)

    # -- recovery, status, the monitor ---------------------------------------------------------

    def recover(self) -> list[str]:
        self.round.uow.replaying = True
        try:
            lines = self.round.recover()
        finally:
            self.round.uow.replaying = False
        fault = self._journal.last([RNG_FAULT_KIND, RNG_CLEARED_KIND])
        self._fault_journaled = fault is not None and fault.kind == RNG_FAULT_KIND
        if fault is not None and fault.kind == RNG_FAULT_KIND:
            reason = fault.data.get("reason")
            self._latched = f"{reason} (latched before the restart)" if reason else "latched"
            lines.append(f"RNG fault still latched: {self._latched}; `fault clear` after its test")
        self._refresh()
        return lines

    def journal_untrusted(
        self, lost: int, who: str, rewritten_from: int | None = None
    ) -> list[str]:
        """A supervisor acknowledged lost rows: a round under way is voided (its number may be
        among them; it is never drawn again in the same round)."""
        if self.round.now.state == "betting":
            return []
        lines = self.round.press(
            "void", supervisor=True, reason=f"journal: {lost} rows lost (acknowledged by {who})"
        )
        return lines

    def tick(self, now_ns: int) -> None:
        """Nothing timed: the number stays shown until ``dealt``."""

    def _fault(self) -> str | None:
        rng = self._rng
        if rng is None:
            return "no RNG fitted"
        return rng.fault_reason if rng.faulted else self._latched

    def _start_mode(self) -> str:
        if self._fault() is not None:
            return "dice (RNG fault)"
        if self._ctx.number_display_down() is not None:
            return "dice (number display not connected)"
        return "rng"

    def status(self) -> dict[str, str]:
        now = self.round.now
        return {
            "state": now.state,
            "round": str(now.round),
            "number": "-" if now.number is None else str(now.number),
            "source": now.source or "-",
            "start_position": now.start or "-",
            "range": f"1-{self.round.layout.range_n}",
        }

    def published(self) -> dict[str, object]:
        """The monitor's number page: the number and where the deal starts, only while the
        display shows them (the draw until ``dealt``)."""
        now = self.round.now
        showing = now.state == "dealing" and now.number is not None and now.start is not None
        layout = self.round.layout
        # The page's words: the count's place (1: position one) and the seat it names (a
        # betting position's number; none for the dealer), counted from the bank's seat when a
        # player's position is one.
        ring = layout.order(layout.positions)
        count = ring.index(now.start) + 1 if showing and now.start in ring else None
        seat = int(now.start) if showing and now.start and now.start.isdigit() else None
        bank_seat = int(layout.one) if layout.one.isdigit() else None
        return {
            "game": self.game,
            "state": now.state,
            "round": now.round,
            "start_mode": self._start_mode(),
            "dice_mode": self._start_mode() != "rng",
            "showing": showing,
            "number": now.number if showing else None,
            "source": now.source if showing else None,
            "start_position": count,
            "position_name": now.start if showing else None,
            "seat": seat,
            "bank": "house" if bank_seat is None else "player",
            "bank_seat": bank_seat,
            "test_mode": False,
            "fault": self._fault() is not None and self._rng is not None,
        }

    def round_in_progress(self) -> bool:
        return self.round.now.state in IN_ROUND

    def faults(self) -> list[str]:
        fault = self._fault()
        return [f"RNG: {fault}"] if fault is not None and self._rng is not None else []

    def clear_fault(self, who: str) -> list[str]:
        """Clear the RNG fault only after its self-test passes."""
        rng = self._rng
        if rng is None or (not rng.faulted and self._latched is None):
            return ["no RNG fault"]
        try:
            report = rng.self_test()
            if report.passed:
                rng.clear_fault()
        except RngFault as exc:
            raise Refused(f"RNG fault not cleared: {exc.reason}", RefusalCode.FAULT) from exc
        if not report.passed:
            raise Refused(f"RNG fault not cleared: {report.format()}", RefusalCode.FAULT)
        if self._fault_journaled:
            self.round.uow.append(RNG_CLEARED_KIND, {"who": who})
            self._fault_journaled = False
        self._latched = None
        return [report.format(), "RNG fault cleared"]

    def close(self) -> None:
        """Nothing of its own to stop: the application closes the devices it built."""
