"""The simulated dealer: the technician console's ``sim shoe deal|card|fault ...`` and
``sim button NAME`` actions, which drive the simulated shoe and buttons (never replayed).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence as Seq
from typing import Final

from controller.games.baccarat.shoe import BurnProgress
from controller.tables.baccarat.machine import COUP_STATES
from controller.tables.baccarat.sequence import Sequence
from controller.tables.baccarat.state import ShoeState
from controller.tables.kernel.sim import SimControls, SimShoeControls
from controller.tables.table import PressWaiter, RefusalCode, Refused, ReplyWaiter
from drivers.errors import DriverError

#: Cards the simulated dealer looks ahead: a burn takes at most 11, a coup 6, plus a face-up one.
PEEK: Final = 12


class SimDealer:
    """Drives the simulated devices the wiring built (the shoe's twin, the button pins)."""

    def __init__(self, sim: SimControls, state: ShoeState, sequence: Sequence) -> None:
        self._controls = sim
        self._s = state
        self._seq = sequence
        self._waiter: ReplyWaiter | None = None
        self._press: PressWaiter | None = None

    # -- the simulated devices -----------------------------------------------------------------

    def run(self, args: list[str], who: str = "") -> list[str]:
        """One ``sim ...`` console action (``who``: ``role@source`` of the console)."""
        controls = self._controls
        if len(args) >= 2 and args[0] == "shoe":
            sim = controls.shoe
            if sim is None:
                raise Refused("no simulated shoe in this profile", RefusalCode.STATE)
            verb, rest = args[1], args[2:]
            try:
                reply = self._shoe(sim, verb, rest)
            except DriverError as exc:  # an empty shoe, a locked gate, an unknown fault
                raise Refused(f"simulated shoe: {exc}", RefusalCode.STATE) from None
            # The reply waits until the shoe's frames have been journaled and handled, so a
            # scripted console session sees their effect on the next line.
            self._waiter = ReplyWaiter(sim.delivered)
            return reply
        if len(args) in (1, 2) and args[0] == "button":
            names = controls.button_names
            if len(args) == 1:
                raise Refused(
                    f"usage: sim button NAME; buttons: {', '.join(names)}", RefusalCode.SYNTAX
                )
            if args[1] not in names or not controls.can_press():
                raise Refused(
                    f"no button {args[1]!r}; buttons: {', '.join(names)}", RefusalCode.SYNTAX
                )
            # The reply waits for the press (the GPIO driver posts it to the loop's queue) and
            # says what it did; that console hears it there, not as `!` lines.
            self._press = PressWaiter(args[1], who.partition("@")[2] or None)
            self._waiter = self._press.waiter()
            controls.press(args[1])  # as the profile wires it: active level, bounce time
            return [f"pressed {args[1]}"]
        raise Refused("usage: sim shoe ... | sim button NAME", RefusalCode.SYNTAX)

    def _shoe(self, sim: SimShoeControls, verb: str, rest: list[str]) -> list[str]:
        if verb == "deal" and rest and rest[0] in ("coup", "burn"):
            n = self._cards_needed(rest[0], sim.peek(PEEK))
            return [f"dealt {rest[0]}: " + " ".join(sim.deal(n))]
        if verb == "deal" and len(rest) <= 1 and all(r.isdigit() for r in rest):
            return ["dealt " + " ".join(sim.deal(int(rest[0]) if rest else 1))]
        if verb == "card" and len(rest) == 1:
            sim.deal_card(rest[0].upper())
            return [f"dealt {rest[0].upper()}"]
        if verb == "fault" and len(rest) == 1:
            # one vocabulary with the standalone shoe and the docs (drivers.sim.shoe.FAULTS)
            return [sim.inject(rest[0].lower())]
        if verb == "load" and not rest:
            return [f"loaded {sim.load()} cards, shuffled"]
        raise Refused(
            "usage: sim shoe deal [N|coup|burn] | card RS | load | fault KIND", RefusalCode.SYNTAX
        )

    def _cards_needed(self, what: str, upcoming: Seq[str]) -> int:
        """How many of the ``upcoming`` shoe cards finish the burn or the coup in progress, as
        this table will take them (a card announced face up is discarded first): the simulated
        dealer's ``sim shoe deal burn|coup``."""
        state = self._seq.current
        skip = self._s.data.face_up_next
        if what == "burn":
            if state != "burn":
                raise Refused(f"no burn in progress (state {state})", RefusalCode.STATE)
            burn = (
                BurnProgress()
                if self._s.burn is None or self._s.burn.face_up is None
                else BurnProgress(face_up=self._s.burn.face_up, count=self._s.data.burn_count)
            )
            if self._s.burn is not None:
                for burned in self._s.burn.burned:
                    burn.add(burned)
            done: Callable[[], bool] = lambda: burn.done  # noqa: E731
            take: Callable[[str], object] = burn.add
        else:
            if state == "burn":
                raise Refused("the burn comes first: sim shoe deal burn", RefusalCode.STATE)
            if state not in COUP_STATES:
                raise Refused(
                    f"no coup in progress (state {state}): press no_more_bets first", "STATE"
                )
            coup = self._s.coup.copy()
            done, take = (lambda: coup.complete), coup.add
        used = 0
        for card in upcoming:
            if done():
                break
            used += 1
            if skip:
                skip = False
                continue
            take(card)
        if not done():
            raise Refused(
                f"the simulated shoe has too few cards left to finish the {what}", "STATE"
            )
        return used

    def take_reply_waiter(self) -> ReplyWaiter | None:
        """For the application: what the last console action's reply waits for, once."""
        waiter, self._waiter = self._waiter, None
        return waiter

    def take_press(self, button: str) -> PressWaiter | None:
        """The ``sim button`` press waiting for ``button``'s press, once."""
        press = self._press
        if press is None or press.button != button or press.done:
            return None
        self._press = None
        return press
