"""The baccarat table's core: its construction, the settings of the shoe and the coup, the
objects rebuilt from ``ShoeData``, the journal (silent while replaying) and the state machine's
firing. The other baccarat_* modules build BaccaratTable on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from transitions import MachineError

from controller.config.settings import BaccaratShoeOptions, RuleSettings
from controller.games.baccarat.shoe import (
    BurnProgress,
    CardBeyondShoe,
    CoupInProgress,
    LastHandRule,
    ShoeComposition,
)
from controller.games.baccarat.shoe_passing import SeatRing
from controller.games.baccarat.vig_ledger import VigLedger
from controller.tables.baccarat.data import K_SNAPSHOT, SNAPSHOT_VERSION, ShoeData, _Replay
from controller.tables.baccarat.integrity import SequenceMonitor
from controller.tables.baccarat.machine import TableModel, build_machine
from controller.tables.table import Refused, TableContext


class BaccaratTableCore:
    """BaccaratTable's state and the helpers every part of it uses."""

    def __init__(self, ctx: TableContext) -> None:
        self._ctx = ctx
        self._reply_waiter: Callable[[], bool] | None = None
        self._journal = ctx.journal
        self._model = TableModel()
        self._machine = build_machine(self._model)
        self._d = ShoeData()
        self._replay: _Replay | None = None
        self._resync_from: int | None = None  # a shoe SEQ that could not be journaled
        self._input_seq = 0
        self._link_up = False
        self._watchdog_ok = True
        self._display = ctx.devices.get("dealer_display")
        settings = ctx.settings.current() if ctx.settings is not None else None
        self._decks: int = settings.baccarat.decks if settings is not None else 8
        self._ring = SeatRing.numbered(int(ctx.devices.get("seats", 8)))
        self._rebuild_derived()
        self._shoe: Any = ctx.devices.get("shoe_reader")

    def _poster(self) -> Callable[[object], None]:
        post = self._ctx.devices.get("post")  # tests may hand in their own queue
        result: Callable[[object], None] = post if post is not None else self._ctx.post
        return result

    # -- derived objects (rebuilt from ShoeData after a snapshot or a replay) -------------------

    def _settings_at(self, seq: int | None) -> RuleSettings:
        """The settings as of journal row ``seq`` (None: the current ones)."""
        store = self._ctx.settings
        if store is None:
            return RuleSettings()
        if seq is None or not hasattr(store, "as_of"):
            current: RuleSettings = store.current()
            return current
        at: RuleSettings = store.as_of(seq)
        return at

    def _take_settings(self, shoe: bool) -> dict[str, Any]:
        """Snapshot the settings at this input (a shoe's or a coup's start); never mid-round."""
        d = self._d
        d.settings_seq = self._input_seq
        if shoe:
            d.shoe_settings_seq = self._input_seq
        self._apply_settings()
        o = self._opts
        return {"hands_after_cover": self._last_hand.hands_after_cover,
                "error_card_count": o.error_card_count.value,
                "face_up_burn_from": o.face_up_burn_from.value,
                "offer_back_to_previous": o.offer_back_to_previous,
                "dead_hand_compels_pass": o.dead_hand_compels_pass,
                "vig_percent": self._rules.vig_percent, "tie_pays": self._rules.tie_pays,
                "deferred_vig": self._deferred_vig}

    def _apply_settings(self) -> None:
        """The rules and shoe readings of the coup's snapshot (d.settings_seq)."""
        s = self._settings_at(self._d.settings_seq)
        self._rules = s.baccarat_rules()
        self._deferred_vig = bool(s.baccarat.deferred_vig)
        self._opts: BaccaratShoeOptions = s.baccarat_shoe_options()

    def _rebuild_derived(self) -> None:
        d = self._d
        self._apply_settings()
        self._composition: ShoeComposition | None = None
        self._monitor = SequenceMonitor()
        if d.shoe_in_play:
            self._composition = ShoeComposition(self._decks)
            for code in d.cards_out:
                try:
                    self._composition.remove(code)
                except CardBeyondShoe:
                    pass  # the foreign card that halted the game; its fault is in d.faults
                self._monitor.add(code)
        cover_rule = self._settings_at(d.shoe_settings_seq).baccarat.hands_after_cover
        self._last_hand = LastHandRule(cover_rule)
        for mark in d.marks:
            if mark == "C":
                self._last_hand.cover_card()
            else:
                self._last_hand.hand_complete()
        self._burn: BurnProgress | None = None
        if d.burn_face_up is not None or self._model_state() == "burn":
            if d.burn_face_up is None:
                self._burn = BurnProgress()
            else:
                self._burn = BurnProgress(face_up=d.burn_face_up, count=d.burn_count)
                for code in d.burned:
                    self._burn.add(code)
        self._coup = CoupInProgress(d.coup)
        ledger = VigLedger(step_cents=self._rules.vig_step_cents or 25)
        for seat, cents in d.ledger.items():
            ledger = ledger.owe(int(seat), cents)
        self._ledger = ledger
        self._sync_model()

    def _model_state(self) -> str:
        return str(self._model.state)

    def _sync_model(self) -> None:
        m, d = self._model, self._d
        m.vig_owed = not self._ledger.clear
        m.burn_left = self._burn.remaining if self._burn is not None else 0
        m.burn_reason = d.burn_reason
        m.expecting = self._coup.expecting
        m.shoe_done = d.shoe_done
        m.compelled_pass = d.compelled_pass
        m.pending_disclosed = any(p["disclosed"] for p in d.pending)
        m.pending_count = len(d.pending)
        m.deal_ok = not d.faults and not d.shoe_faults

    # -- journal, display, alarm (all silent while replaying) ----------------------------------

    def _emit(self, kind: str, data: dict[str, Any], round_id: int | None = None) -> None:
        """Journal a decision row, or during replay count it against the rows already there."""
        rid = self._d.round_id if round_id is None else round_id
        rp = self._replay
        if rp is not None:
            rp.written += 1
            if rp.written <= rp.budget:
                return
            data = {**data, "recovered": True}
        self._journal.append(kind, data, rid)

    def _log(self, kind: str, data: dict[str, Any]) -> int:
        """Journal a row that is not replayed (inputs are journaled by handle())."""
        return self._journal.append(kind, data, self._d.round_id)

    def _alarm(self, text: str) -> None:
        if self._replay is None:
            self._ctx.alarm(text)

    def _fire(self, trigger: str) -> None:
        """Fire ``trigger`` after syncing the guards' facts; Refused when no transition applies."""
        self._sync_model()
        before = self._model_state()
        try:
            moved = bool(getattr(self._model, trigger)())
        except MachineError as exc:
            raise Refused(f"{trigger} is not allowed in state {before}: {exc.value}") from None
        if not moved:
            raise Refused(f"{trigger} refused in state {before}: {self._why_not(trigger)}")
        self._emit("baccarat.state", {"from": before, "to": self._model_state(),
                                      "trigger": trigger})

    def _why_not(self, trigger: str) -> str:
        d = self._d
        if trigger == "shuffled":
            return f"vigorish is owed: {self._ledger.by_seat} (5324.20(d)(2))"
        if d.faults:
            return f"fault: {'; '.join(d.faults)}"
        if d.shoe_faults:
            return f"shoe fault: {', '.join(d.shoe_faults)}"
        if any(p["disclosed"] for p in d.pending):
            return "a disclosed card: choose `remedy burn` or `remedy dead` first (5324.20(i)(1))"
        return "its conditions do not hold"

    # -- Table protocol ------------------------------------------------------------------------

    def _snapshot(self) -> None:
        self._emit(K_SNAPSHOT, {"version": SNAPSHOT_VERSION, "state": self._model_state(),
                                "data": self._d.to_json()}, round_id=None)
