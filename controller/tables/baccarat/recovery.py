"""Recovery for the baccarat table: rebuild it from the last snapshot row (written at coup
boundaries by BaccaratTableCore._snapshot) and replay the inputs journaled after it
(docs/baccarat-table.md, "Recovery"); and the journaled shoe session SerialShoe resumes from.
"""

from __future__ import annotations

import logging

from controller.games.baccarat.shoe import BurnProgress
from controller.journal.store import Entry
from controller.tables.baccarat.actions import ActionsMixin
from controller.tables.baccarat.data import (
    _NOT_DECISIONS,
    INPUT_KINDS,
    K_ACTION,
    K_BUTTON,
    K_FRAME,
    K_RECOVERY,
    K_REFUSED,
    K_SESSION,
    K_SNAPSHOT,
    SNAPSHOT_VERSION,
    ShoeData,
    _Replay,
)
from controller.tables.baccarat.machine import _COUP_STATES, RECOVERY_RULES
from controller.tables.table import Refused

log = logging.getLogger("controller.baccarat")


class RecoveryMixin(ActionsMixin):
    """BaccaratTable's recovery and shoe-session methods."""

    def resume_seq(self) -> int | None:
        """The shoe SEQ after the last one journaled (SerialShoe NAKs it on start)."""
        last = self._journal.last([K_FRAME, K_SESSION])
        if last is None:
            return None
        return (int(last.data["seq"]) + 1) % 10000

    def recover(self) -> list[str]:
        """Rebuild the table from the last snapshot and the inputs journaled after it; resume
        the coup in progress with the same cards (docs/baccarat-table.md, "Recovery")."""
        snap = self._journal.last([K_SNAPSHOT])
        since = 0
        if snap is not None and snap.data.get("version") == SNAPSHOT_VERSION:
            self._d = ShoeData.from_json(snap.data["data"])
            self._machine.set_state(snap.data["state"])
            self._rebuild_derived()
            if self._model_state() == "burn" and self._burn is None:
                self._burn = BurnProgress()
            since = snap.seq
        refused = {int(e.data.get("input", 0))
                   for e in self._journal.events(kinds=[K_REFUSED], since_seq=since)}
        rows = [e for e in self._journal.events(since_seq=since)
                if e.kind in INPUT_KINDS or self._is_decision(e.kind)]
        inputs = [i for i, e in enumerate(rows) if e.kind in INPUT_KINDS]
        replayed = 0
        problems: list[str] = []
        for n, i in enumerate(inputs):
            entry = rows[i]
            end = inputs[n + 1] if n + 1 < len(inputs) else len(rows)
            if entry.seq in refused:
                continue
            self._replay = _Replay(budget=end - i - 1)
            try:
                self._replay_one(entry)
            except Refused:
                pass  # refused live too (its refusal row may not have been written)
            except Exception as exc:  # noqa: BLE001 - a handler bug must not stop the start
                problems.append(f"row {entry.seq} ({entry.kind}): {type(exc).__name__}: {exc}")
            finally:
                self._replay = None
            replayed += 1
        notes = [f"baccarat: state {self._model_state()}, shoe {self._d.shoe_no},"
                 f" coup {self._d.coup_no}, {replayed} inputs replayed since row {since}"]
        state = self._model_state()
        rule = RECOVERY_RULES.get(state, "resume")
        if state in _COUP_STATES:
            notes.append(f"coup {self._d.coup_no} resumes with {len(self._d.coup)} cards:"
                         f" {' '.join(self._d.coup) or '-'}")
        for problem in problems:
            self._halt(f"recovery could not replay {problem}")
        if self._d.faults:
            notes.append(f"faults still active: {'; '.join(self._d.faults)}")
            self._alarm(f"FAULT {'; '.join(self._d.faults)}")
        self._journal.append(K_RECOVERY, {"state": state, "rule": rule, "notes": notes,
                                          "coup": list(self._d.coup),
                                          "faults": list(self._d.faults)}, self._d.round_id)
        self._show_state()
        return notes

    @staticmethod
    def _is_decision(kind: str) -> bool:
        return kind.startswith("baccarat.") and kind not in _NOT_DECISIONS

    def _replay_one(self, entry: Entry) -> None:
        self._input_seq = entry.seq
        data = entry.data
        if entry.kind == K_FRAME:
            self._apply_frame(str(data["type"]), [str(f) for f in data.get("fields", [])],
                              bool(data.get("known", True)))
        elif entry.kind == K_SESSION:
            self._apply_session(str(data.get("model", "")))
        elif entry.kind == K_BUTTON:
            self._apply_button(str(data["name"]))
        elif entry.kind == K_ACTION:
            self._apply_action(str(data["name"]), [str(a) for a in data.get("args", [])],
                               str(data.get("who", "")))
