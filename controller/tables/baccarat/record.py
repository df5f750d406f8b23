"""The baccarat table's voice: journal rows, alarms and the replay switch.

While recovery replays journaled inputs, decision rows the journal already holds are counted, not
written again (a power cut may have kept the last few from the journal: those are written, marked
``recovered``), and alarms stay silent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from controller.journal.store import Journal
from controller.tables.baccarat.data import Replay, ShoeData


class Record:
    """Journals decisions and inputs for one table; knows whether recovery is replaying."""

    def __init__(self, journal: Journal, data: Callable[[], ShoeData],
                 alarm: Callable[[str], None],
                 announce: Callable[[list[str], str | None], None] = lambda lines, skip: None
                 ) -> None:
        self.journal = journal
        self._data = data
        self._alarm = alarm
        self._announce = announce
        self.replay: Replay | None = None
        #: The journal row of the input being handled (a coup's round id, a settings snapshot).
        self.input_seq = 0

    @property
    def replaying(self) -> bool:
        return self.replay is not None

    def emit(self, kind: str, data: dict[str, Any], round_id: int | None = None) -> None:
        """Journal a decision row (in the current round unless ``round_id`` names another), or
        during replay count it against the rows already there."""
        rid = self._data().round_id if round_id is None else round_id
        rp = self.replay
        if rp is not None:
            rp.written += 1
            if rp.written <= rp.budget:
                return
            data = {**data, "recovered": True}
        self.journal.append(kind, data, rid)

    def log(self, kind: str, data: dict[str, Any]) -> int:
        """Journal a row that is not replayed (inputs are journaled as they arrive)."""
        return self.journal.append(kind, data, self._data().round_id)

    def alarm(self, text: str) -> None:
        """An unsolicited console line, never while replaying."""
        if self.replay is None:
            self._alarm(text)

    def say(self, text: str) -> None:
        """An unsolicited console line that is news, not an alarm (what the dealer display
        shows), never while replaying."""
        if self.replay is None:
            self._announce([text], None)
