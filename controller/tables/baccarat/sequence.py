"""The certified sequence at work: the ``transitions`` machine on a ``TableModel`` whose guard facts
are filled in from the table's state before every trigger, and whose every move is journaled.
"""

from __future__ import annotations

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
        m.ledger = s.ledger
        m.burn_left = s.burn.remaining if s.burn is not None else 0
        m.burn_reason = d.burn_reason
        m.expecting = s.coup.expecting
        m.shoe_done = d.shoe_done
        m.compelled_pass = d.compelled_pass
        m.pending_disclosed = any(p["disclosed"] for p in d.pending)
        m.pending_count = len(d.pending)
        m.faults = tuple(d.faults)
        m.shoe_faults = tuple(d.shoe_faults)
        m.shoe_unconfirmed = d.shoe_unconfirmed

    def fire(self, trigger: str) -> None:
        """Fire ``trigger`` after syncing the guards' facts; Refused when no transition applies.
        One verdict: each guard runs once, for the refusal and as the machine's condition."""
        self.sync()
        before = self.current
        with self._model.guards.verdict():
            reason = self.refusal(trigger)
            if reason is not None:
                raise Refused(reason)
            moved = bool(getattr(self._model, trigger)())
        if not moved:  # pragma: no cover - refusal() asks the machine's own guards
            raise Refused(f"not now (state {before})")
        self._record.moved(before, self.current, trigger)

    def refusal(self, trigger: str) -> str | None:
        """Why ``trigger`` is refused now (None: allowed), from the guards the machine evaluates,
        without firing: the reasons of the guards that hold back each of its transitions; a
        trigger the state does not take gets the inputs it takes (a refusal never names a
        trigger or a guard)."""
        state = self.current
        steps = [c for t, src, _, c in TRANSITIONS if t == trigger and _from(src, state)]
        if not steps:
            return self._takes(state)
        reasons: list[str] = []
        for conditions in steps:
            failed = [w for w in map(self._why, conditions) if w is not None]
            if not failed:
                return None
            reasons.extend(failed)
        return "; ".join(dict.fromkeys(reasons))

    def _takes(self, state: str) -> str:
        """What ``state`` takes now: a card's guards are read once the card is added, so the
        shoe's cards are always listed; the dealer's inputs only when their guards hold (no
        `remedy burn` without a disclosed card)."""
        possible = [t for t, src, _, _ in TRANSITIONS if t in SAID and _from(src, state)]
        taken = [
            t
            for t, src, _, conditions in TRANSITIONS
            if t in possible
            and _from(src, state)
            and (t in _CARDS or all(self._why(c) is None for c in conditions))
        ]
        if not taken and possible:
            return f"the table is in state {state}: {self.refusal(possible[0])}"
        if state == "betting" and not self._state.data.dead_hand:
            taken.insert(1, "bet")
        words = ", ".join(dict.fromkeys(SAID[t] for t in taken)) or "nothing"
        return f"the table is in state {state}, where it takes {words}"

    def _why(self, guard: str) -> str | None:
        """Guard ``guard``'s reason (no event: the guards read the model's facts)."""
        return self._model.guards.why(guard, None)


#: The triggers a card from the shoe sends.
_CARDS = frozenset({"burn_card", "deal_card"})


def _from(source: str | tuple[str, ...], state: str) -> bool:
    """Whether a transition's ``source`` (one state or several) is ``state``."""
    return state == source or (isinstance(source, tuple) and state in source)
