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

from collections.abc import Callable, Mapping

from controller.journal.store import Journal
from controller.tables.baccarat.data import Replay, ShoeData
from controller.tables.kernel.unit_of_work import UnitOfWork


class Record:
    """Journals decisions and inputs for one table; knows whether recovery is replaying.

    The input's unit of work (its row, the memo once per transaction, outputs after the commit)
    is the kernel's (:class:`controller.tables.kernel.unit_of_work.UnitOfWork`, ``work``); this
    adds baccarat's own: the moves of the certified sequence and the replay's row budget."""

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
        self._replay: Replay | None = None
        self._moves: list[str] = []  # moves of the sequence not yet journaled
        #: The unit of work of each input: ``work.input_seq`` is the journal row of the input
        #: being handled (a coup's round id, a settings snapshot).
        self.work = UnitOfWork(journal, lambda: self._data().round_id)
        # a move no decision row carried gets a row of its own when the input ends
        self.work.at_end(self._moves_row)
        #: Takes a copy of the table's memory and returns what puts it back: registered once per
        #: journal transaction, run if its commit fails (the table sets it).
        self.memo: Callable[[], Callable[[], None]] | None = None
        self.work.memo = self._memo

    @property
    def replay(self) -> Replay | None:
        return self._replay

    @replay.setter
    def replay(self, value: Replay | None) -> None:
        self._replay = value
        self.work.replaying = value is not None

    @property
    def replaying(self) -> bool:
        return self._replay is not None

    def _memo(self) -> Callable[[], None]:
        restore_table = self.memo() if self.memo is not None else (lambda: None)
        moves = list(self._moves)

        def restore() -> None:
            self._moves = moves
            restore_table()

        return restore

    def moved(self, before: str, after: str, trigger: str) -> None:
        """A move of the certified sequence: journaled with the next decision row. A move to
        the same state (each card of a burn or a coup) is the decision row itself."""
        if before != after:
            self._moves.append(f"{before}>{after}")

    def _moves_row(self) -> None:
        if self._moves:
            self.emit("baccarat.state", {})

    def emit(self, kind: str, data: Mapping[str, object], round_id: int | None = None) -> None:
        """Journal a decision row (in the current round unless ``round_id`` names another), or
        during replay count it against the rows already there. It carries the moves of the
        sequence since the last row."""
        if self._moves:
            data = {**data, "moved": self._moves}
            self._moves = []
        rp = self._replay
        if rp is not None:
            rp.written += 1
            if rp.written <= rp.budget:
                return
            data = {**data, "recovered": True}
        self.work.append(kind, data, round_id)

    def log(self, kind: str, data: Mapping[str, object]) -> int:
        """Journal a row that is not replayed (inputs are journaled as they arrive)."""
        return self.work.append(kind, data)

    def output(self, fn: Callable[[], object]) -> None:
        """Run an output of this input (the shoe's ``$ACK``, the dealer display, a console
        line) once what it journaled is committed: one transaction per loop event, so after
        its one commit (``journal.after_commit``; at once outside a transaction, where each row
        is synced as it is appended). Never if the commit fails."""
        self.journal.after_commit(fn)

    def undo(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` if what this input journaled does not reach the journal."""
        self.work.undo(fn)

    def head(self, reason: str) -> None:
        """Ask for a signed head after this input's commit: ``boundary`` at a coup's or a
        shoe's end, ``decision`` for a result the anchor must learn of soon (docs/design.md)."""
        self.work.head(reason)

    def alarm(self, text: str) -> None:
        """An unsolicited console line, never while replaying."""
        if self._replay is None:
            self._alarm(text)

    def say(self, text: str) -> None:
        """An unsolicited console line that is news, not an alarm (what the dealer display
        shows), never while replaying."""
        if self._replay is None:
            self.output(lambda: self._announce([text], None))
