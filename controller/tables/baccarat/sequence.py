"""The certified sequence at work: the ``transitions`` machine on a ``TableModel`` whose guard facts
are filled in from the table's state before every trigger, and whose every move is journaled.
"""

from __future__ import annotations

from transitions import MachineError

from controller.tables.baccarat.machine import SAID, TRANSITIONS, TableModel, build_machine
from controller.tables.baccarat.record import Record
from controller.tables.baccarat.state import ShoeState
from controller.tables.table import Refused


class Sequence:
    """Fires triggers on the baccarat machine; an out-of-order trigger is Refused with a reason."""

    def __init__(self, state: ShoeState, record: Record) -> None:
        self._state = state
        self._record = record
        self._model = TableModel()
        self._machine = build_machine(self._model)

    @property
    def current(self) -> str:
        return str(self._model.state)

    def restore(self, name: str) -> None:
        """Put the machine in a journaled state (recovery from a snapshot)."""
        self._machine.set_state(name)

    def sync(self) -> None:
        """Copy the facts the guards read from the table's state into the model."""
        m, s = self._model, self._state
        d = s.data
        m.vig_owed = not s.ledger.clear
        m.burn_left = s.burn.remaining if s.burn is not None else 0
        m.burn_reason = d.burn_reason
        m.expecting = s.coup.expecting
        m.shoe_done = d.shoe_done
        m.compelled_pass = d.compelled_pass
        m.pending_disclosed = any(p["disclosed"] for p in d.pending)
        m.pending_count = len(d.pending)
        m.deal_ok = not d.faults and not d.shoe_faults and d.shoe_unconfirmed is None

    def fire(self, trigger: str) -> None:
        """Fire ``trigger`` after syncing the guards' facts; Refused when no transition applies."""
        self.sync()
        before = self.current
        try:
            moved = bool(getattr(self._model, trigger)())
        except MachineError:
            # what the state takes now: a card's guards are read once the card is added, so
            # the shoe's cards are always listed; the dealer's inputs only when their guards
            # hold (no `remedy burn` without a disclosed card)
            model = self._model
            possible = [t for t, src, _, _ in TRANSITIONS if t in SAID and _from(src, before)]
            taken = [
                t
                for t, src, _, conditions in TRANSITIONS
                if t in possible
                and _from(src, before)
                and (t in _CARDS or all(bool(getattr(model, c)()) for c in conditions))
            ]
            if not taken and possible:
                raise Refused(
                    f"the table is in state {before}: {self._why_not(possible[0], before)}"
                ) from None
            if before == "betting" and not self._state.data.dead_hand:
                taken.insert(1, "bet")
            words = ", ".join(dict.fromkeys(SAID[t] for t in taken)) or "nothing"
            raise Refused(f"the table is in state {before}, where it takes {words}") from None
        if not moved:
            raise Refused(self._why_not(trigger, before))
        self._record.moved(before, self.current, trigger)

    def _why_not(self, trigger: str, state: str) -> str:
        """Why a trigger the state takes was refused, in the words of the regulation and the
        buttons and commands that put it right (a refusal never names a trigger or a guard)."""
        s = self._state
        d = s.data
        if trigger == "shuffled":
            owed = ", ".join(
                f"seat {seat} ${cents // 100}.{cents % 100:02d}"
                for seat, cents in sorted(s.ledger.by_seat.items())
            )
            first = min(s.ledger.by_seat) if s.ledger.by_seat else "SEAT"
            return (
                f"deferred vigorish is owed ({owed}): collect it before the cards are"
                f" reshuffled, `collect {first}` (5324.20(d)(2))"
            )
        if d.faults:
            return f"the table is halted: {'; '.join(d.faults)} (`clear` once it is put right)"
        if d.shoe_faults:
            return f"the shoe reports a fault: {', '.join(d.shoe_faults)}"
        if d.shoe_unconfirmed is not None:
            return f"a new shoe session {d.shoe_unconfirmed}: confirm it with `shoe resume`"
        if any(p["disclosed"] for p in d.pending):
            return "a disclosed card: choose `remedy burn` or `remedy dead` first (5324.20(i)(1))"
        return f"not now (state {state})"


#: The triggers a card from the shoe sends.
_CARDS = frozenset({"burn_card", "deal_card"})


def _from(source: str | tuple[str, ...], state: str) -> bool:
    """Whether a transition's ``source`` (one state or several) is ``state``."""
    return state == source or (isinstance(source, tuple) and state in source)
