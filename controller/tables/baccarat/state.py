"""What the baccarat table knows: ``ShoeData`` (journaled in snapshots) and the objects rebuilt
from it (the shoe's inventory, the sequence monitor, the cover-card rule, the burn and the coup in
progress, the vigorish ledger) with the settings the shoe and the coup run under.

One ``ShoeState`` is owned by the table and handed to each collaborator that reads or changes it;
nothing else holds game state.
"""

from __future__ import annotations

from controller.config.settings import BaccaratShoeOptions, ConfigStore, RuleSettings
from controller.games import baccarat
from controller.games.baccarat.shoe import (
    BurnProgress,
    CardBeyondShoe,
    CoupInProgress,
    LastHandRule,
    ShoeComposition,
)
from controller.games.baccarat.shoe_passing import SeatRing
from controller.games.baccarat.vig_ledger import VigLedger
from controller.tables.baccarat.data import ShoeData
from controller.tables.baccarat.integrity import SequenceMonitor


class ShoeState:
    """The table's data and its derived objects; ``rebuild`` makes them agree after a snapshot
    or a replay."""

    def __init__(self, settings: ConfigStore | None, seats: int) -> None:
        self._settings_store = settings
        self.data = ShoeData()
        #: the shoe's decks: the setting as the shoe started (5324.20(a)(4)), not as it is now
        self.decks: int = self.settings_at(None).baccarat.decks
        self.ring = SeatRing.numbered(seats)
        self.rules: baccarat.Rules
        self.deferred_vig = False
        self.opts: BaccaratShoeOptions
        self.composition: ShoeComposition | None = None
        self.monitor = SequenceMonitor()
        self.last_hand = LastHandRule(1)
        self.burn: BurnProgress | None = None
        self.coup = CoupInProgress()
        self.ledger = VigLedger()
        self.apply_settings()

    # -- settings ------------------------------------------------------------------------------

    def settings_at(self, seq: int | None) -> RuleSettings:
        """The settings as of journal row ``seq`` (None: the current ones)."""
        store = self._settings_store
        if store is None:
            return RuleSettings()
        return store.current() if seq is None else store.as_of(seq)

    def apply_settings(self) -> None:
        """The rules and shoe readings of the coup's snapshot (data.settings_seq)."""
        s = self.settings_at(self.data.settings_seq)
        self.rules = s.baccarat_rules()
        self.deferred_vig = bool(s.baccarat.deferred_vig)
        self.opts = s.baccarat_shoe_options()

    def take_settings(self, input_seq: int, shoe: bool) -> dict[str, object]:
        """Snapshot the settings at this input (a shoe's or a coup's start); never mid-round."""
        d = self.data
        d.settings_seq = input_seq
        if shoe:
            d.shoe_settings_seq = input_seq
        self.apply_settings()
        o = self.opts
        return {
            "hands_after_cover": self.last_hand.hands_after_cover,
            "error_card_count": o.error_card_count.value,
            "face_up_burn_from": o.face_up_burn_from.value,
            "offer_back_to_previous": o.offer_back_to_previous,
            "dead_hand_compels_pass": o.dead_hand_compels_pass,
            "vig_percent": self.rules.vig_percent,
            "tie_pays": self.rules.tie_pays,
            "deferred_vig": self.deferred_vig,
        }

    # -- derived objects -----------------------------------------------------------------------

    def rebuild(self, machine_state: str) -> None:
        """Rebuild every derived object from ``data`` (after a snapshot, a replay or a new
        shoe); ``machine_state`` tells whether a burn is in progress."""
        d = self.data
        self.apply_settings()
        self.composition = None
        self.monitor = SequenceMonitor()
        # a shoe's composition is its decks as it started: a `config set baccarat.decks` takes
        # the next shoe, never the cards already in the shoe (nor, after a restart, this shoe)
        shoe_settings = self.settings_at(d.shoe_settings_seq)
        self.decks = shoe_settings.baccarat.decks
        if d.shoe_in_play:
            self.composition = ShoeComposition(self.decks)
            for code in d.cards_out:
                try:
                    self.composition.remove(code)
                except CardBeyondShoe:
                    pass  # the foreign card that halted the game; its fault is in d.faults
                self.monitor.add(code)
        cover_rule = shoe_settings.baccarat.hands_after_cover
        self.last_hand = LastHandRule(cover_rule)
        for mark in d.marks:
            if mark == "C":
                self.last_hand.cover_card()
            else:
                self.last_hand.hand_complete()
        self.burn = None
        if d.burn_face_up is not None or machine_state == "burn":
            if d.burn_face_up is None:
                self.burn = BurnProgress()
            else:
                self.burn = BurnProgress(face_up=d.burn_face_up, count=d.burn_count)
                for code in d.burned:
                    self.burn.add(code)
        self.coup = CoupInProgress(d.coup)
        ledger = VigLedger(step_cents=self.rules.vig_step_cents or 25)
        for seat, cents in d.ledger.items():
            ledger = ledger.owe(int(seat), cents)
        self.ledger = ledger

    def cards_left(self) -> int:
        return self.composition.cards_left if self.composition is not None else 0

    def record_ledger(self) -> None:
        """Copy the ledger into ``data`` (it is journaled in snapshots and settlement rows)."""
        self.data.ledger = {str(k): v for k, v in self.ledger.by_seat.items()}

    def clear_burn(self) -> None:
        d = self.data
        d.burn_face_up, d.burn_count, d.burned = None, None, []
        self.burn = None
