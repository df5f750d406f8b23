"""One input, one unit of work (docs/journal.md "One sync per decision").

The application opens one journal transaction around each event it hands a table. Inside it the
table's unit of work:

* carries the input on the first row it causes (or journals it alone when it causes none, or as
  its own row first when the game's records name the input's row, as baccarat's round ids do);
* registers, before the transaction's first row, how to put the table's memory back if the
  commit fails (one memo, one restore per transaction);
* runs the input's outputs (display, lamps, console lines, the shoe's ``$ACK``) only after the
  commit, and its undo steps only if the commit fails;
* stays silent (no outputs, no alarms, no heads asked for) while recovery replays journaled
  inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from controller.journal.store import Journal

T = TypeVar("T")

#: A row's data as the journal stores it (JSON: values of any JSON type).
RowData = Mapping[str, object]


class UnitOfWork:
    """The journal as one table sees it while it handles one input at a time."""

    def __init__(self, journal: Journal, round_id: Callable[[], int | None]) -> None:
        self.journal = journal
        self._round_id = round_id
        #: Takes a copy of the table's memory and returns what puts it back (set by the table).
        self.memo: Callable[[], Callable[[], None]] | None = None
        #: The row that carries the input being handled (a round id, a settings snapshot).
        self.input_seq = 0
        self._pending: dict[str, object] | None = None
        self._end: list[Callable[[], None]] = []
        self._memo_txn = -1
        self._once: dict[str, int] = {}
        self.replaying = False

    # -- the input -----------------------------------------------------------------------------

    def take(self, data: RowData, act: Callable[[], T], alone: Callable[[], RowData]) -> T:
        """Handle one input: ``act`` journals it with the first row it causes; an input that
        caused no row is journaled alone, with ``alone()`` (its kind's data), at the end."""
        self._pending = dict(data)
        try:
            return act()
        finally:
            self.end()
            if self._pending is not None:
                pending = self._pending
                extra = alone()
                kind = str(extra.get("kind", "input"))
                self.append(kind, {**pending, **{k: v for k, v in extra.items() if k != "kind"}})

    def begin(self, kind: str, data: RowData) -> int:
        """An input journaled as its own row before it acts (its seq names what it causes)."""
        seq = self.append(kind, data)
        self.input_seq = seq
        return seq

    def at_end(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` each time an input ends (a game's rows that close the input)."""
        self._end.append(fn)

    def end(self) -> None:
        """The input is handled: the game's closing steps (each input, refused or not)."""
        for fn in self._end:
            fn()

    def carry(self, data: RowData) -> dict[str, object]:
        """``data`` with the input being handled, if no row carries it yet."""
        pending, self._pending = self._pending, None
        return {**data, "input": pending} if pending is not None else dict(data)

    def drop_input(self) -> None:
        """Forget the input being handled (it was journaled some other way)."""
        self._pending = None

    # -- rows ----------------------------------------------------------------------------------

    def append(self, kind: str, data: RowData, round_id: int | None = None) -> int:
        """Journal a row (carrying the input if it is the input's first), after the memo."""
        self.remember()
        rid = self._round_id() if round_id is None else round_id
        return self.journal.append(kind, self.carry(data), round_id=rid)

    def remember(self) -> None:
        """Once per journal transaction: how to put the table back if its commit fails."""
        journal = self.journal
        if self.memo is None or not journal.in_transaction:
            return
        number = journal.transaction_number
        if self._memo_txn == number:
            return
        self._memo_txn = number
        restore_table = self.memo()
        pending, input_seq = self._pending, self.input_seq

        def restore() -> None:
            self._pending, self.input_seq = pending, input_seq
            restore_table()

        journal.on_rollback(restore)

    # -- outputs -------------------------------------------------------------------------------

    def output(self, fn: Callable[[], object]) -> None:
        """Run an output once what this input journaled is committed (at once outside a
        transaction); never if the commit fails, never while replaying."""
        if not self.replaying:
            self.journal.after_commit(fn)

    def output_once(self, key: str, fn: Callable[[], object]) -> None:
        """As :meth:`output`, once per transaction for ``key`` (a refresh of every output)."""
        journal = self.journal
        if journal.in_transaction:
            number = journal.transaction_number
            if self._once.get(key) == number:
                return
            self._once[key] = number
        self.output(fn)

    def undo(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` if what this input journaled does not reach the journal: when the
        commit fails (after the memory is put back), or at once outside a transaction."""
        if self.journal.in_transaction:
            self.journal.on_rollback(fn)
        else:
            fn()

    def head(self, reason: str) -> None:
        """Ask for a signed head after this input's commit (never while replaying)."""
        if not self.replaying:
            self.journal.want_head(reason)
