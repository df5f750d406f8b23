"""The certified sequence at work: the ``transitions`` machine on a ``TableModel`` whose guard facts
are filled in from the table's state before every trigger, and whose every move is journaled.
"""

from __future__ import annotations

from transitions import MachineError

from controller.tables.baccarat.machine import TableModel, build_machine
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
            allowed = sorted(
                t for t in self._machine.get_triggers(before) if not t.startswith("to_")
            )
            raise Refused(
                f"{trigger} is not allowed in state {before}"
                f" (allowed: {', '.join(allowed) or 'none'})"
            ) from None
        if not moved:
            raise Refused(f"{trigger} refused in state {before}: {self._why_not(trigger)}")
        self._record.moved(before, self.current, trigger)

    def _why_not(self, trigger: str) -> str:
        s = self._state
        d = s.data
        if trigger == "shuffled":
            return f"vigorish is owed: {s.ledger.by_seat} (5324.20(d)(2))"
        if d.faults:
            return f"fault: {'; '.join(d.faults)}"
        if d.shoe_faults:
            return f"shoe fault: {', '.join(d.shoe_faults)}"
        if d.shoe_unconfirmed is not None:
            return f"a new shoe session {d.shoe_unconfirmed}: confirm it with `shoe resume`"
        if any(p["disclosed"] for p in d.pending):
            return "a disclosed card: choose `remedy burn` or `remedy dead` first (5324.20(i)(1))"
        return "its conditions do not hold"
