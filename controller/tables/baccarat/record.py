"""The baccarat table's voice: journal rows, alarms and the replay switch.

While recovery replays journaled inputs, decision rows the journal already holds are counted, not
written again (a power cut may have kept the last few from the journal: those are written, marked
``recovered``), and alarms stay silent.

A move of the certified sequence is journaled in the decision row that follows it within the
same input (``"moved": ["from>to"]``; the input names the trigger), or, if none follows, in a
``baccarat.state`` row at the end of the input: every move is journaled, without a row of its
own each (docs/design.md "Durability and trust": rows are small).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from controller.journal.store import Journal
from controller.tables.baccarat.data import Replay, ShoeData


class Record:
    """Journals decisions and inputs for one table; knows whether recovery is replaying."""

    def __init__(
        self,
        journal: Journal,
        data: Callable[[], ShoeData],
        alarm: Callable[[str], None],
        announce: Callable[[list[str], str | None], None] = lambda lines, skip: None,
    ) -> None:
        self.journal = journal
        self._data = data
        self._alarm = alarm
        self._announce = announce
        self.replay: Replay | None = None
        #: The journal row of the input being handled (a coup's round id, a settings snapshot).
        self.input_seq = 0
        self._moves: list[str] = []  # moves of the sequence not yet journaled
        #: Takes a copy of the table's memory and returns what puts it back: registered once per
        #: journal transaction, run if its commit fails (the table sets it).
        self.memo: Callable[[], Callable[[], None]] | None = None
        self._memo_txn = -1

    @property
    def replaying(self) -> bool:
        return self.replay is not None

    def moved(self, before: str, after: str, trigger: str) -> None:
        """A move of the certified sequence: journaled with the next decision row. A move to
        the same state (each card of a burn or a coup) is the decision row itself."""
        if before != after:
            self._moves.append(f"{before}>{after}")

    def end_input(self) -> None:
        """The input is handled: a move no decision row carried gets a row of its own."""
        if self._moves:
            self.emit("baccarat.state", {})

    def emit(self, kind: str, data: dict[str, Any], round_id: int | None = None) -> None:
        """Journal a decision row (in the current round unless ``round_id`` names another), or
        during replay count it against the rows already there. It carries the moves of the
        sequence since the last row."""
        if self._moves:
            data = {**data, "moved": self._moves}
            self._moves = []
        rid = self._data().round_id if round_id is None else round_id
        rp = self.replay
        if rp is not None:
            rp.written += 1
            if rp.written <= rp.budget:
                return
            data = {**data, "recovered": True}
        self._remember()
        self.journal.append(kind, data, rid)

    def log(self, kind: str, data: dict[str, Any]) -> int:
        """Journal a row that is not replayed (inputs are journaled as they arrive)."""
        self._remember()
        return self.journal.append(kind, data, self._data().round_id)

    def _remember(self) -> None:
        """Before the first row of a journal transaction: how to put the table's memory back
        if the commit fails (docs/journal.md, "One sync per decision")."""
        journal = self.journal
        if (
            self.memo is None
            or not journal.in_transaction
            or self._memo_txn == journal.transaction_number
        ):
            return
        self._memo_txn = journal.transaction_number
        restore_table = self.memo()
        moves, input_seq = list(self._moves), self.input_seq

        def restore() -> None:
            self._moves, self.input_seq = moves, input_seq
            restore_table()

        journal.on_rollback(restore)

    def output(self, fn: Callable[[], object]) -> None:
        """Run an output of this input (the shoe's ``$ACK``, the dealer display, a console
        line) once what it journaled is committed: one transaction per loop event, so after
        its one commit (``journal.after_commit``; at once outside a transaction, where each row
        is synced as it is appended). Never if the commit fails."""
        self.journal.after_commit(fn)

    def undo(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` if what this input journaled does not reach the journal: when the
        transaction's commit fails (after the memory is put back), or at once outside one (a
        row that failed there was its own transaction)."""
        if self.journal.in_transaction:
            self.journal.on_rollback(fn)
        else:
            fn()

    def head(self, reason: str) -> None:
        """Ask for a signed head after this input's commit: ``boundary`` at a coup's or a
        shoe's end, ``decision`` for a result the anchor must learn of soon (docs/design.md)."""
        if self.replay is None:
            self.journal.want_head(reason)

    def alarm(self, text: str) -> None:
        """An unsolicited console line, never while replaying."""
        if self.replay is None:
            self._alarm(text)

    def say(self, text: str) -> None:
        """An unsolicited console line that is news, not an alarm (what the dealer display
        shows), never while replaying."""
        if self.replay is None:
            self.output(lambda: self._announce([text], None))
