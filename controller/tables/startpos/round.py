"""The starting-position round: its order, journaled before anything is shown.

The order is pai gow tiles' RNG mode (9 NYCRR 5324.50(a)(4), (e)) as 13:69F-31.11(c) describes
it for Asia poker: bets close (``no_more_bets``), then one number is drawn (``draw``) and
journaled before the display shows it; the count from the layout's position one names where
the deal starts; after the deal (``dealt``) the number is blanked; ``settled`` ends the round.
A number once journaled is never drawn again: a power cut replays it from the journal. While
the RNG is in fault the dealer rolls the dice instead (13:69F-31.11(b)) and enters them
(``dice A B C``). A void before the draw is the dealer's; after it only a supervisor's, with a
reason, as at the pai gow tiles table.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal, Protocol

from controller.fields.readers import FieldError, int_of, opt_int_of, opt_str_of, str_of
from controller.journal.store import Journal
from controller.rng.certified import RngFault
from controller.tables.kernel.unit_of_work import UnitOfWork
from controller.tables.startpos.layout import StartLayout
from controller.tables.table import RefusalCode, Refused

State = Literal["betting", "closed", "dealing", "playing"]
STATES: Final[tuple[State, ...]] = ("betting", "closed", "dealing", "playing")


def _state(text: str) -> State:
    """A journaled round state, checked against :data:`STATES`."""
    for state in STATES:
        if state == text:
            return state
    raise FieldError(f"'state' must be one of {', '.join(STATES)}, not {text!r:.40}")


#: The journal rows of the round's steps, each with the round's whole state, so the newest is
#: the round (recovery reads it back and never draws again); ``.settled`` and ``.voided`` close
#: a round (recall says so).
STEP_KINDS: Final = {
    "no_more_bets": "startpos.no_more_bets",
    "draw": "startpos.drawn",
    "dealt": "startpos.dealt",
    "settled": "startpos.settled",
    "void": "startpos.voided",
}
ROW_KINDS: Final = tuple(STEP_KINDS.values())

#: 13:69F-31.4/31.11(b): three dice.
DICE: Final = 3


class Drawer(Protocol):
    """The certified RNG as the round draws from it (controller.rng.certified.CertifiedRng)."""

    def draw(self, low: int = 1, high: int = 8) -> int: ...
    @property
    def faulted(self) -> bool: ...


@dataclass(frozen=True)
class RoundState:
    """One round as journaled."""

    round: int = 0
    state: State = "betting"
    number: int | None = None
    #: "rng" or "dice" (the dice's total is the count).
    source: str | None = None
    start: str | None = None
    shown: bool = False


class StartposRound:
    """The round's order over one journal (driven from the loop thread only)."""

    def __init__(
        self,
        journal: Journal,
        layout: StartLayout,
        rng: Drawer | None,
        show: Callable[[int | None], None],
        occupied: Callable[[], Collection[str]] = lambda: (),
        display_down: Callable[[], str | None] = lambda: None,
        fault_latched: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.layout = layout
        self._rng = rng
        #: why the number display cannot show a number now, or None: the RNG's number is
        #: selected and displayed (13:69F-31.11(c)); the dice stand in while it cannot be
        self._display_down = display_down
        #: an RNG fault journaled before a restart and not cleared (the RNG's latch is memory)
        self._fault_latched = fault_latched
        self._show = show
        self._occupied = occupied
        self.now = RoundState()
        #: the input being handled opens the next round (set by the table around it)
        self.opening = False
        self.uow = UnitOfWork(journal, self._input_round)
        self.uow.memo = self._memo

    def _input_round(self) -> int | None:
        """The round a row belongs to: the round under way, or the last one between rounds;
        the input that opens the next round (`no_more_bets`, a console's `sim button
        no_more_bets`: :attr:`opening`) is that round's (recall lists it there)."""
        now = self.now
        if now.state == "betting" and self.opening:
            return now.round + 1
        return now.round or None

    def _memo(self) -> Callable[[], None]:
        kept = self.now

        def restore() -> None:
            self.now = kept

        return restore

    # -- recovery ------------------------------------------------------------------------------

    def recover(self) -> list[str]:
        """The round as journaled: a drawn number is shown again, never drawn again."""
        row = self.uow.journal.last(ROW_KINDS)
        if row is None:
            return []
        d = row.data
        self.now = RoundState(
            round=int_of(d, "round"),
            state=_state(str_of(d, "state")),
            number=opt_int_of(d, "number"),
            source=opt_str_of(d, "source"),
            start=opt_str_of(d, "start"),
            shown=bool(d.get("shown")),
        )
        if self.now.shown and self.now.number is not None:
            self._show(self.now.number)
            return [f"round {self.now.round}: number {self.now.number} resumed (not drawn again)"]
        return [f"round {self.now.round}: resumed at {self.now.state}"]

    # -- inputs --------------------------------------------------------------------------------

    def press(
        self, button: str, *, dice: Sequence[int] = (), supervisor: bool = False, reason: str = ""
    ) -> list[str]:
        """One dealer input (a button, or ``dice``/``void`` at the console); raises Refused
        naming what to press instead."""
        steps: dict[str, Callable[[], list[str]]] = {
            "no_more_bets": self._no_more_bets,
            "draw": self._draw,
            "dice": lambda: self._dice(dice),
            "dealt": self._dealt,
            "settled": self._settled,
            "void": lambda: self._void(supervisor, reason),
        }
        step = steps.get(button)
        if step is None:
            raise Refused(f"no button {button!r} at this table", RefusalCode.UNKNOWN)
        return step()

    def _journal(self, new: RoundState, what: str, reason: str = "", **more: object) -> None:
        self.uow.append(
            STEP_KINDS[what],
            {
                "round": new.round,
                "state": new.state,
                "number": new.number,
                "source": new.source,
                "start": new.start,
                "shown": new.shown,
                **({"reason": reason} if reason else {}),
                **more,
            },
            round_id=new.round or None,
        )
        self.now = new

    def _no_more_bets(self) -> list[str]:
        if self.now.state != "betting":
            raise Refused(f"bets are already closed in round {self.now.round}: press settled")
        self._journal(RoundState(round=self.now.round + 1, state="closed"), "no_more_bets")
        return [f"round {self.now.round}: no more bets; press draw"]

    def _before_draw(self) -> None:
        if self.now.state == "betting":
            raise Refused("bets are open: press no_more_bets before draw")
        if self.now.number is not None:
            raise Refused(f"the number {self.now.number} is drawn: one draw per round; press dealt")

    def _draw(self) -> list[str]:
        self._before_draw()
        rng = self._rng
        if rng is None or rng.faulted or self._fault_latched() is not None:
            raise Refused(
                "the RNG is in fault: roll the dice and enter `dice A B C`", RefusalCode.FAULT
            )
        if self._display_down() is not None:
            raise Refused(
                "the number display is not connected: the number is shown as it is drawn"
                " (13:69F-31.11(c)); reconnect it (status shows it), or roll the dice and enter"
                " `dice A B C` (31.11(b))",
                RefusalCode.FAULT,
            )
        try:
            number = rng.draw(1, self.layout.range_n)  # 13:69F-31.11(c): 1 through N
        except RngFault as fault:
            raise Refused(
                f"the RNG failed ({fault}): roll the dice and enter `dice A B C`",
                RefusalCode.FAULT,
            ) from fault
        return self._drawn(number, "rng", self.layout.start(number, self._occupied()))

    def _dice(self, dice: Sequence[int]) -> list[str]:
        self._before_draw()
        rng_works = (
            self._rng is not None and not self._rng.faulted and self._fault_latched() is None
        )
        if rng_works and self._display_down() is None:
            raise Refused(
                "the RNG draws the number: press draw (dice only while it is in fault or the"
                " number display is not connected)"
            )
        if len(dice) != DICE or any(not 1 <= d <= 6 for d in dice):
            raise Refused("enter three dice, each 1 to 6: `dice A B C`", RefusalCode.RANGE)
        total = sum(dice)  # 13:69F-31.11(b)1: total the dice
        return self._drawn(total, "dice", self.layout.count(total, self._occupied()))

    def _drawn(self, number: int, source: str, start: str) -> list[str]:
        # Journaled before shown: the display is an output, run after the commit.
        # the range drawn from goes with the number: the meters' chi-square tests 1 through N
        self._journal(
            replace(
                self.now, state="dealing", number=number, source=source, start=start, shown=True
            ),
            "draw",
            range=self.layout.range_n,
        )
        self.uow.output(lambda: self._show(number))
        return [f"round {self.now.round}: number {number} ({source}); the deal starts at {start}"]

    def _dealt(self) -> list[str]:
        if self.now.state != "dealing":
            raise Refused("no number is out: press draw (or enter `dice A B C`) before dealt")
        self._journal(replace(self.now, state="playing", shown=False), "dealt")
        self.uow.output(lambda: self._show(None))  # the number blanked after the deal
        return [f"round {self.now.round}: dealt; press settled when the round is paid"]

    def _settled(self) -> list[str]:
        if self.now.state != "playing":
            raise Refused("the round is not dealt: press dealt before settled")
        self._journal(RoundState(round=self.now.round, state="betting"), "settled")
        self.uow.output(lambda: self._show(None))  # between rounds (blank, or CLOSED's bar)
        return [f"round {self.now.round}: settled; bets open"]

    def _void(self, supervisor: bool, reason: str) -> list[str]:
        if self.now.state == "betting":
            raise Refused("no round is under way: press no_more_bets to start one")
        number = self.now.number
        if number is not None:
            # As at pai gow tiles: after the draw a void would let a number be drawn again.
            if not supervisor:
                raise Refused(
                    f"the number {number} is out: only a supervisor voids now (`void REASON`)",
                    RefusalCode.AUTH,
                )
            if not reason.strip():
                raise Refused(f"the number {number} is out: say why (`void REASON`)")
        # the number that was out, if one was: a void after the draw (event 170, a meter)
        out = {} if number is None else {"number_out": number, "source_out": self.now.source}
        self._journal(RoundState(round=self.now.round, state="betting"), "void", reason, **out)
        self.uow.output(lambda: self._show(None))
        return [f"round {self.now.round}: void; bets open"]
