"""Recovery for the baccarat table: rebuild it from the last snapshot row (written at coup
boundaries) and replay the inputs journaled after it through the same code, with the journal's
decision rows counted instead of written and the display and alarms silent
(docs/baccarat-table.md, "Recovery"); and the journaled shoe position SerialShoe resumes from.
"""

from __future__ import annotations

from controller.fields.readers import int_of, map_of, opt_int_of, opt_list_of, str_of
from controller.journal.chain import Row
from controller.tables.baccarat.actions import DealerActions
from controller.tables.baccarat.coup import CoupPlay
from controller.tables.baccarat.data import (
    INPUT_KINDS,
    K_ACTION,
    K_BUTTON,
    K_FRAME,
    K_RECOVERY,
    K_REFUSED,
    K_SESSION,
    K_SNAPSHOT,
    NOT_DECISIONS,
    POSITION_KINDS,
    SNAPSHOT_VERSION,
    Replay,
    ShoeData,
)
from controller.tables.baccarat.display import Presenter
from controller.tables.baccarat.machine import COUP_STATES, RECOVERY_RULES
from controller.tables.baccarat.record import Record
from controller.tables.baccarat.sequence import Sequence
from controller.tables.baccarat.state import ShoeState
from controller.tables.table import Refused
from drivers.shoe_protocol import SessionPosition, is_sid, next_seq


class Recovery:
    """Rebuilds the table from its journal after a start."""

    def __init__(
        self,
        state: ShoeState,
        sequence: Sequence,
        record: Record,
        view: Presenter,
        play: CoupPlay,
        actions: DealerActions,
    ) -> None:
        self._s = state
        self._seq = sequence
        self._rec = record
        self._view = view
        self._play = play
        self._actions = actions

    def resume_position(self) -> SessionPosition | None:
        """The journaled shoe session (its ``shoe.session`` row) and the SEQ after its newest
        row (a frame or the session itself): SerialShoe sends
        ``$NAK,next,SID`` from it on start."""
        session = self._rec.journal.last([K_SESSION])
        last = self._rec.journal.last(list(POSITION_KINDS))
        if session is None or last is None or not is_sid(session.data.get("sid")):
            return None  # no session yet: the shoe's $HELO starts one
        return SessionPosition(
            str_of(session.data, "sid"), next_seq(int_of(last.data, "seq") % 10000)
        )

    def recover(self) -> list[str]:
        """Rebuild the table from the last snapshot and the inputs journaled after it; resume
        the coup in progress with the same cards (docs/baccarat-table.md, "Recovery")."""
        snap = self._rec.journal.last([K_SNAPSHOT])
        since = 0
        if snap is not None and snap.data.get("version") == SNAPSHOT_VERSION:
            self._s.data = ShoeData.from_json(map_of(snap.data, "data"))
            self._seq.restore(str_of(snap.data, "state"))
            self._s.rebuild(self._seq.current)
            since = snap.seq
        refused = {
            opt_int_of(e.data, "input") or 0
            for e in self._rec.journal.events(kinds=[K_REFUSED], since_seq=since)
        }
        rows = [
            e
            for e in self._rec.journal.events(since_seq=since)
            if e.kind in INPUT_KINDS or self._is_decision(e.kind)
        ]
        inputs = [i for i, e in enumerate(rows) if e.kind in INPUT_KINDS]
        replayed = 0
        problems: list[str] = []
        for n, i in enumerate(inputs):
            entry = rows[i]
            end = inputs[n + 1] if n + 1 < len(inputs) else len(rows)
            if entry.seq in refused:
                continue
            self._rec.replay = Replay(budget=end - i - 1)
            try:
                self._replay_one(entry)
                self._rec.work.end()
            except Refused:
                self._rec.work.end()  # refused live too (its refusal row may not be written)
            except Exception as exc:  # noqa: BLE001 - a handler bug must not stop the start
                problems.append(f"row {entry.seq} ({entry.kind}): {type(exc).__name__}: {exc}")
            finally:
                self._rec.replay = None
            replayed += 1
        notes = [
            f"baccarat: state {self._seq.current}, shoe {self._s.data.shoe_no},"
            f" coup {self._s.data.coup_no}, {replayed} inputs replayed since row {since}"
        ]
        state = self._seq.current
        rule = RECOVERY_RULES.get(state, "resume")
        if state in COUP_STATES:
            notes.append(
                f"coup {self._s.data.coup_no} resumes with {len(self._s.data.coup)} cards:"
                f" {' '.join(self._s.data.coup) or '-'}"
            )
        for problem in problems:
            self._play.halt(f"recovery could not replay {problem}")
        if self._s.data.faults:
            notes.append(f"faults still active: {'; '.join(self._s.data.faults)}")
            self._rec.alarm(f"FAULT {'; '.join(self._s.data.faults)}")
        d = self._s.data
        self._rec.journal.append(
            K_RECOVERY,
            {
                "state": state,
                "rule": rule,
                "notes": notes,
                "coup": list(d.coup),
                "faults": list(d.faults),
            },
            d.round_id,
        )
        self._view.show_state()
        return notes

    @staticmethod
    def _is_decision(kind: str) -> bool:
        return kind.startswith("baccarat.") and kind not in NOT_DECISIONS

    def _replay_one(self, entry: Row) -> None:
        self._rec.work.input_seq = entry.seq
        data = entry.data
        if entry.kind == K_FRAME:
            self._play.apply_frame(
                str(data["type"]),
                [str(f) for f in opt_list_of(data, "fields") or []],
                bool(data.get("known", True)),
            )
        elif entry.kind == K_SESSION:
            self._play.apply_session(
                str(data.get("sid", "")),
                str(data.get("model", "")),
                renewed=data.get("previous") is not None,
            )
        elif entry.kind == K_BUTTON:
            self._actions.button(str(data["name"]))
        elif entry.kind == K_ACTION:
            self._actions.action(
                str(data["name"]),
                [str(a) for a in opt_list_of(data, "args") or []],
                str(data.get("who", "")),
            )
