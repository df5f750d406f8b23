"""The baccarat table: the shoe and the coup as a ``transitions`` state machine, 9 NYCRR 5324.20.

Fed card by card by the serial card shoe (drivers/serial_shoe.py), the dealer's buttons and the
technician console; applies the drawing rules of (f)(10)-(13) (controller.games.baccarat), the
irregularities of (i), the cover card of (f)(9), settles wagers in integer cents and journals every
input and every decision. docs/baccarat-table.md has the state table and the recovery rules.

Durability (DESIGN.md "Durability and trust"): every input is journaled BEFORE it is acted on;
a shoe frame is journaled, then acknowledged to the shoe, then applied. The table is rebuilt at
start-up from the last snapshot row (written at coup boundaries) plus the input rows after it,
replayed through the same code with the journal, the display and the alarms switched off, so a
resumed coup has exactly the cards it had. Decision rows that a power cut kept from the journal
are written during that replay (marked ``recovered``).
"""

from __future__ import annotations

import collections
import copy
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from transitions import Machine, MachineError

from controller.config import BaccaratShoeOptions, RuleSettings
from controller.games import baccarat
from controller.games.baccarat.irregularities import (
    BurnFrom,
    Remedy,
    Ruling,
    Then,
    drawn_in_excess,
    face_up_in_shoe,
    player_third_in_error,
)
from controller.games.baccarat.shoe import (
    BurnProgress,
    CardBeyondShoe,
    CoupInProgress,
    CoupStep,
    CoverCard,
    LastHandRule,
    ShoeComposition,
    ShoeStatus,
    void_for_short_shoe,
)
from controller.games.baccarat.shoe_passing import (
    SeatRing,
    after_round,
    opening_offer_order,
    passing_offer_order,
)
from controller.games.baccarat.vig_ledger import VigLedger
from controller.journal import Entry, JournalError

# The monitor lives in controller.shoe_integrity; its names stay importable from here for
# bench/bench_baccarat_table.py and older imports.
from controller.shoe_integrity import (  # noqa: F401
    RANK_RUN_ALARM,
    REPEAT_WINDOW_ALARM,
    SUIT_RUN_ALARM,
    SequenceMonitor,
    expected_alarm_rate,
    shuffled_shoe_alarm_rates,
)
from controller.table import Refused, TableContext

log = logging.getLogger("controller.baccarat")

# --- journal kinds ------------------------------------------------------------------------------

#: Inputs, journaled before they are acted on and replayed by recover().
K_SESSION: Final = "shoe.session"
K_FRAME: Final = "shoe.frame"
K_BUTTON: Final = "baccarat.button"
K_ACTION: Final = "baccarat.action"
INPUT_KINDS: Final = (K_SESSION, K_FRAME, K_BUTTON, K_ACTION)
#: Logged, never replayed: the link and the watchdog belong to the process that saw them.
K_REFUSED_FRAME: Final = "shoe.refused"
K_LINK: Final = "shoe.link"
K_WATCHDOG: Final = "shoe.watchdog"
#: Inputs refused while the application holds a fault: a new shoe, a new coup, wagers, taking
#: the shoe. Cards still arriving are handled (they are physically out of the shoe).
_STOPPED_BY_FAULT: Final = frozenset({"shuffled", "no_more_bets", "bet", "curator"})
K_REFUSED: Final = "baccarat.refused"  # an input the state did not allow (skipped on replay)
K_SIM: Final = "baccarat.sim"  # test/technician stimulus (never replayed)
K_RECOVERY: Final = "baccarat.recovery"
K_SNAPSHOT: Final = "baccarat.snapshot"
#: Rows that are not decisions of the state machine (everything else "baccarat.*" is one).
_NOT_DECISIONS: Final = frozenset({K_BUTTON, K_ACTION, K_REFUSED, K_SIM, K_RECOVERY,
                                   "baccarat.unknown_event"})

SNAPSHOT_VERSION: Final = 1

# --- the certified sequence ---------------------------------------------------------------------

#: Every state, in the order of a shoe. docs/baccarat-table.md describes each.
STATES: Final = (
    "shuffle",       # 5324.20(c)(1): shuffling and inspecting; waits for the "shuffled" button
    "burn",          # (e): first card face up, as many more burned; also (i)(1)(i), (i)(3)
    "offering",      # (f)(1): the shoe offered from seat 1 counter-clockwise
    "betting",       # (b)(2)-(3): wagers open
    "dealing",       # (f)(4)-(5): "no more bets", "cards": the four initial cards
    "player_third",  # (f)(11): the player's hand draws
    "banker_third",  # (f)(12)-(13): the banker's hand draws
    "settling",      # (g)(1)-(2): result announced; losing wagers collected, winners paid
    "passing",       # (h)(1)-(2): the shoe passes (the banker's hand lost, or the curator's option)
    "halted",        # integrity fault: no play until a technician clears it
)

_COUP_STATES: Final = ("dealing", "player_third", "banker_third")

#: (trigger, source(s), dest, conditions). The first transition whose conditions hold is taken.
TRANSITIONS: Final[tuple[tuple[str, str | tuple[str, ...], str, tuple[str, ...]], ...]] = (
    ("shuffled", "shuffle", "burn", ("vig_clear",)),
    ("burn_card", "burn", "burn", ("burn_unfinished",)),
    ("burn_card", "burn", "offering", ("burn_opens_shoe",)),
    ("burn_card", "burn", "betting", ()),
    ("accept_shoe", ("offering", "passing"), "betting", ()),
    ("nobody_accepts", ("offering", "passing"), "shuffle", ()),
    ("pass_shoe", "betting", "passing", ()),
    ("remedy_burn", "betting", "burn", ("disclosed_pending",)),
    ("remedy_dead_hand", "betting", "dealing", ("dead_hand_allowed",)),
    ("no_more_bets", "betting", "dealing", ("can_deal",)),
    ("deal_card", "dealing", "dealing", ("expects_initial",)),
    ("deal_card", "dealing", "player_third", ("expects_player_draw",)),
    ("deal_card", ("dealing", "player_third"), "banker_third", ("expects_banker_draw",)),
    ("deal_card", ("dealing", "player_third", "banker_third"), "settling", ("coup_complete",)),
    ("settled", "settling", "shuffle", ("shoe_finished",)),
    ("settled", "settling", "passing", ("must_pass",)),
    ("settled", "settling", "betting", ()),
    ("void_round", ("betting", "dealing", "player_third", "banker_third", "settling"), "shuffle",
     ()),
    ("halt", STATES, "halted", ()),
    ("technician_clear", "halted", "shuffle", ()),
)

#: Which input sends each trigger and what it carries (docs/baccarat-table.md is built from it).
TRIGGER_INPUTS: Final[dict[str, str]] = {
    "shuffled": "dealer button `shuffled` (no data)",
    "burn_card": "shoe frame `$CARD,seq,RS` (the card)",
    "accept_shoe": "console `curator SEAT` (the seat that accepts)",
    "nobody_accepts": "console `nobody` (no player accepts: (h)(2))",
    "pass_shoe": "console `pass [ordered]` (curator's option, or ordered (h)(1)(ii))",
    "remedy_burn": "console `remedy burn` (after a disclosed card)",
    "remedy_dead_hand": "console `remedy dead` (after a disclosed card)",
    "no_more_bets": "dealer button `no_more_bets` (no data)",
    "deal_card": "shoe frame `$CARD,seq,RS` (the card)",
    "settled": "dealer button `settled` (no data)",
    "void_round": "shoe `$COVR` behind the last card, too few cards (i)(4), console `void`",
    "halt": "foreign card, `$FLT,seq,UNREAD`, unshuffled sequence, shoe power-cycle mid-coup",
    "technician_clear": "console `clear` (technician)",
}


class TableModel:
    """The state machine's model: the state and the facts its guards read. The table fills the
    facts in before it fires a trigger; the guards only read them (nothing here can fail)."""

    state: str

    def __init__(self) -> None:
        self.vig_owed = False
        self.burn_left = 1
        self.burn_reason = "shoe"
        self.expecting = CoupStep.PLAYER_CARD
        self.shoe_done = False
        self.compelled_pass = False
        self.pending_disclosed = False
        self.pending_count = 0
        self.deal_ok = True

    def vig_clear(self) -> bool:
        """5324.20(d)(2): all deferred vigorish collected before the cards are reshuffled."""
        return not self.vig_owed

    def burn_unfinished(self) -> bool:
        return self.burn_left > 0

    def burn_opens_shoe(self) -> bool:
        return self.burn_reason == "shoe"

    def disclosed_pending(self) -> bool:
        return self.pending_disclosed

    def dead_hand_allowed(self) -> bool:
        return self.pending_disclosed and self.deal_ok

    def can_deal(self) -> bool:
        return self.deal_ok and not self.pending_disclosed

    def expects_initial(self) -> bool:
        return self.expecting in (CoupStep.PLAYER_CARD, CoupStep.BANKER_CARD)

    def expects_player_draw(self) -> bool:
        return self.expecting is CoupStep.PLAYER_DRAWS

    def expects_banker_draw(self) -> bool:
        return self.expecting is CoupStep.BANKER_DRAWS

    def coup_complete(self) -> bool:
        return self.expecting is CoupStep.COMPLETE

    def shoe_finished(self) -> bool:
        return self.shoe_done

    def must_pass(self) -> bool:
        return self.compelled_pass


def build_machine(model: TableModel, initial: str = "shuffle") -> Machine:
    """The certified sequence on ``model``: no auto transitions, guards in ``conditions``."""
    machine = Machine(model=model, states=list(STATES), initial=initial,
                      auto_transitions=False, ignore_invalid_triggers=False)
    for trigger, source, dest, conditions in TRANSITIONS:
        machine.add_transition(trigger, list(source) if isinstance(source, tuple) else source,
                               dest, conditions=list(conditions))
    return machine


def mermaid() -> str:
    """The state machine as a Mermaid diagram (docs/baccarat-table.md holds a copy; a test checks
    they match, so a change to the certified sequence is a reviewable diff)."""
    lines = ["stateDiagram-v2", "    [*] --> shuffle"]
    for trigger, source, dest, conditions in TRANSITIONS:
        sources = source if isinstance(source, tuple) else (source,)
        label = trigger + (f" [{', '.join(conditions)}]" if conditions else "")
        for s in sources:
            lines.append(f"    {s} --> {dest}: {label}")
    return "\n".join(lines) + "\n"


# --- the table's data ---------------------------------------------------------------------------


@dataclass
class ShoeData:
    """Everything the table knows besides the machine's state; serialised in snapshot rows."""

    shoe_no: int = 0
    coup_no: int = 0
    round_id: int | None = None
    cards_out: list[str] = field(default_factory=list)   # every card out of this shoe, in order
    marks: list[str] = field(default_factory=list)       # "C" cover card, "H" hand complete
    burn_face_up: str | None = None
    burn_count: int | None = None
    burned: list[str] = field(default_factory=list)
    burn_reason: str = "shoe"
    coup: list[str] = field(default_factory=list)
    dead_hand: bool = False
    pending: list[dict[str, Any]] = field(default_factory=list)  # cards held for the next hand
    face_up_next: bool = False
    bets: dict[str, dict[str, int]] = field(default_factory=dict)
    ledger: dict[str, int] = field(default_factory=dict)
    curator: int | None = None
    last_result: str = ""
    last_winner: str = ""
    announce: tuple[str, str] = ("", "")
    compelled_pass: bool = False
    shoe_done: bool = False
    faults: list[str] = field(default_factory=list)
    shoe_faults: list[str] = field(default_factory=list)
    shoe_in_play: bool = False
    # The journal rows whose settings this shoe (hands_after_cover) and this coup (the rules,
    # the irregularity readings, shoe passing) use: ConfigStore.as_of(seq). None: the current.
    shoe_settings_seq: int | None = None
    settings_seq: int | None = None

    def to_json(self) -> dict[str, Any]:
        return copy.deepcopy(self.__dict__)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ShoeData:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass
class _Replay:
    """Replay bookkeeping: how many decision rows the journal already holds for this input."""

    budget: int = 0
    written: int = 0


def _raw_frame(data: dict[str, Any], rebuild: Callable[[dict[str, Any]], bytes]) -> bytes:
    """A journaled frame's bytes as the shoe sent them (rows before "raw" was kept: re-encoded,
    which is byte-exact for a shoe that writes SEQ without leading zeros)."""
    raw = data.get("raw")
    return str(raw).encode("ascii", "replace") if raw else rebuild(data)


def _dollars(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}${cents // 100}.{cents % 100:02d}"


def _fit(text: str) -> str:
    """One dealer-display line: printable ASCII, no '|', at most 20 characters."""
    clean = "".join(ch if " " <= ch <= "~" and ch != "|" else "?" for ch in text)
    return clean[:20]


# --- the table ----------------------------------------------------------------------------------


class BaccaratTable:
    """controller.table.Table for baccarat. Driven only from the application's loop thread."""

    game = "baccarat"

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
        url = ctx.devices.get("shoe_url")
        if self._shoe is None and url is not None:
            from drivers.serial_shoe import SerialShoe
            shoe_settings = ctx.devices.get("shoe_settings")
            self._shoe = SerialShoe(
                url, self._poster(), baud=getattr(shoe_settings, "baud", 9600),
                resume_seq=self.resume_seq(), known_session=self.known_session(),
                watchdog_s=getattr(shoe_settings, "watchdog_s", 3.0))
            self._shoe.start()
        sim = ctx.devices.get("shoe_sim")
        if sim is not None:
            sim.start()

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

    def _show(self, first: str, second: str = "") -> None:
        if self._replay is not None or self._display is None:
            return
        try:
            self._display.show([_fit(first), _fit(second)])
        except Exception as exc:  # noqa: BLE001 - a display failure must not stop the table
            log.warning("dealer display: %s", exc)

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

    def handle(self, event: object) -> None:
        """One input from a driver: journal it first, then act (Refused is journaled)."""
        from drivers.buttons import ButtonPressed
        from drivers.shoe_events import (
            ShoeFrameAccepted,
            ShoeFrameRefused,
            ShoeLinkChanged,
            ShoeSession,
            ShoeWatchdog,
        )
        if isinstance(event, ShoeFrameAccepted):
            if self._resync_from is not None:
                if event.seq != self._resync_from:
                    return  # queued before the resync: the shoe resends it in order
                self._resync_from = None
            row: dict[str, Any] = {"seq": event.seq, "type": event.type,
                                   "fields": list(event.fields), "known": event.known}
            if event.raw:
                row["raw"] = event.raw.decode("ascii", "replace")
            try:
                seq = self._journal.append(K_FRAME, row, self._d.round_id)
            except JournalError:
                # Not journaled, so never acknowledged and never acted on: have the shoe send
                # it again (it still holds it) instead of letting a later cumulative $ACK
                # cover it. The JournalError goes on to the application as a fault.
                self._resync_from = event.seq
                if self._shoe is not None:
                    self._shoe.resync(event.seq)
                raise
            if self._shoe is not None:
                self._shoe.acknowledge(event.seq)
            self._input_seq = seq
            self._apply_frame(event.type, list(event.fields), event.known)
        elif isinstance(event, ShoeSession):
            row = {"seq": event.seq, "model": event.model, "firmware": event.firmware}
            if event.raw:
                row["raw"] = event.raw.decode("ascii", "replace")
            seq = self._journal.append(K_SESSION, row, self._d.round_id)
            if self._shoe is not None:
                self._shoe.acknowledge(event.seq)
            self._input_seq = seq
            self._apply_session(event.model)
        elif isinstance(event, ShoeFrameRefused):
            self._log(K_REFUSED_FRAME, {"reason": event.reason, "detail": event.detail,
                                        "raw": event.raw.decode("ascii", "replace")[:120],
                                        "expected_seq": event.expected_seq,
                                        "nak_sent": event.nak_sent})
        elif isinstance(event, ShoeLinkChanged):
            self._link_up = event.up
            self._log(K_LINK, {"up": event.up, "reason": event.reason})
            if not event.up:
                self._alarm(f"SHOE LINK DOWN {event.reason}")
        elif isinstance(event, ShoeWatchdog):
            self._watchdog_ok = event.ok
            self._log(K_WATCHDOG, {"ok": event.ok, "silent_for_s": round(event.silent_for_s, 3)})
            if not event.ok:
                self._alarm("SHOE SILENT: no valid frame for more than the watchdog period;"
                            " no cards are accepted until the shoe is back")
                self._show("SHOE OFFLINE", "WAIT FOR THE SHOE")
            else:
                self._show_state()
        elif isinstance(event, ButtonPressed):
            seq = self._journal.append(K_BUTTON, {"name": event.name}, self._d.round_id)
            self._input_seq = seq
            self._guarded_input(seq, lambda: self._apply_button_unless_fault(event.name))
        else:
            self._log("baccarat.unknown_event", {"type": type(event).__name__})

    def _guarded_input(self, seq: int, fn: Callable[[], list[str]]) -> list[str]:
        try:
            return fn()
        except Refused as exc:
            if self._replay is None:
                self._journal.append(K_REFUSED, {"input": seq, "reason": exc.reason},
                                     self._d.round_id)
            raise

    def action(self, name: str, args: list[str], who: str) -> list[str]:
        """A console action. ``sim ...`` drives the simulated devices (never replayed)."""
        if name == "sim":
            self._log(K_SIM, {"args": args, "who": who})
            return self._sim(args)
        if name == "odds":
            return self.odds()
        if name not in _ACTIONS:
            raise Refused(f"unknown baccarat action {name!r}; actions are"
                          f" {', '.join(sorted(_ACTIONS))}", "UNKNOWN")
        seq = self._journal.append(K_ACTION, {"name": name, "args": list(args), "who": who},
                                   self._d.round_id)
        self._input_seq = seq
        return self._guarded_input(seq, lambda: self._apply_action_unless_fault(
            name, list(args), who))

    def _play_stopped(self, what: str) -> None:
        """Refuse an input that starts or advances play while the application holds a fault
        (journal, program, settings). Live only: a refused input is skipped on replay."""
        if self._replay is None and what in _STOPPED_BY_FAULT:
            blocking = self._ctx.app_faults()
            if blocking:
                raise Refused("play is stopped by a fault a technician must clear: "
                              + "; ".join(blocking), "FAULT")

    def _apply_button_unless_fault(self, name: str) -> list[str]:
        self._play_stopped(name)
        return self._apply_button(name)

    def _apply_action_unless_fault(self, name: str, args: list[str], who: str) -> list[str]:
        self._play_stopped(name)
        return self._apply_action(name, args, who)

    def tick(self, now_ns: int) -> None:
        """Nothing is timed at the table: the shoe driver keeps the watchdog."""

    def status(self) -> dict[str, str]:
        d = self._d
        left = self._composition.cards_left if self._composition is not None else 0
        return {
            "state": self._model_state(),
            "shoe": str(d.shoe_no),
            "coup": str(d.coup_no),
            "round": "" if d.round_id is None else str(d.round_id),
            "cards_left": str(left),
            "curator": "" if d.curator is None else str(d.curator),
            "last_result": d.last_result or "none",
            "last_hand": "yes" if self._last_hand.last_hand else "no",
            "vig_owed_cents": str(self._ledger.total_owed()),
            "shoe_link": "up" if self._link_up else "down",
            "table_faults": "; ".join(self.faults()) or "none",
        }

    def round_in_progress(self) -> bool:
        return self._model_state() in (*_COUP_STATES, "settling") or bool(self._d.bets)

    def faults(self) -> list[str]:
        out = list(self._d.faults)
        out += [f"shoe fault {f}" for f in self._d.shoe_faults]
        if not self._watchdog_ok:
            out.append("shoe watchdog: no valid frame")
        return out

    def clear_fault(self, who: str) -> list[str]:
        if not self._d.faults:
            raise Refused("no table fault to clear", "STATE")
        return self.action("clear", [], who)

    def close(self) -> None:
        if self._shoe is not None:
            self._shoe.stop(timeout=2.0)
        sim = self._ctx.devices.get("shoe_sim")
        if sim is not None:
            sim.stop(timeout=2.0)

    def odds(self) -> list[str]:
        """The exact odds of the next coup from the cards left in the shoe."""
        if self._composition is None:
            raise Refused("no shoe in play", "STATE")
        try:
            left: dict[object, int] = {k: v for k, v in self._composition.values().items()}
            odds = baccarat.exact_odds(left, self._rules)
        except baccarat.CompositionError as exc:
            raise Refused(str(exc), "STATE") from None
        lines = [f"cards left {self._composition.cards_left}"]
        for key in ("banker", "player", "tie", "player_natural", "banker_natural"):
            lines.append(f"{key} {float(odds[key]):.6f}")
        for key in sorted(k for k in odds if k.startswith("edge:")):
            value: Fraction = odds[key]
            lines.append(f"{key} {float(value) * 100:+.4f}%")
        return lines

    def resume_seq(self) -> int | None:
        """The shoe SEQ after the last one journaled (SerialShoe NAKs it on start)."""
        last = self._journal.last([K_FRAME, K_SESSION])
        if last is None:
            return None
        return (int(last.data["seq"]) + 1) % 10000

    def known_session(self) -> list[bytes] | None:
        """The journaled shoe session as raw frames: the last ``$HELO`` and the frames accepted
        after it (the last 1024). SerialShoe compares a resent ``$HELO`` and its followers with
        them, so a crash between journaling and acknowledging counts nothing twice."""
        from drivers.shoe_protocol import HISTORY, Frame, ShoeProtocolError, encode, parse_frame
        helo = self._journal.last([K_SESSION])
        if helo is None:
            return None

        def valid(raw: bytes) -> bool:
            return isinstance(parse_frame(raw), Frame)

        try:
            first = _raw_frame(helo.data, lambda d: encode(
                "HELO", int(d["seq"]), str(d.get("model", "")), str(d.get("firmware", ""))))
            frames: collections.deque[bytes] = collections.deque(maxlen=HISTORY - 1)
            for e in self._journal.events(kinds=[K_FRAME], since_seq=helo.seq):
                raw = _raw_frame(e.data, lambda d: encode(
                    str(d["type"]), int(d["seq"]), *[str(f) for f in d.get("fields", [])]))
                if valid(raw):
                    frames.append(raw)
        except (ShoeProtocolError, KeyError, ValueError) as exc:
            log.warning("journaled shoe session unusable: %s", exc)
            return None
        return [first, *frames] if valid(first) else None

    # -- shoe frames ---------------------------------------------------------------------------

    def _apply_session(self, model: str) -> None:
        # DESIGN.md: $HELO only on power-up: the shoe's unacknowledged frames are gone, so a card
        # may have left it unrecorded. Mid-coup that cannot go on.
        if self._model_state() in _COUP_STATES:
            self._halt(f"the shoe ({model}) power-cycled mid-coup: cards may have left it"
                       " unread")

    def _apply_frame(self, ftype: str, fields: list[str], known: bool) -> None:
        if not known:
            self._emit("baccarat.frame.unknown", {"type": ftype, "fields": fields})
            return
        if ftype == "HBT":
            return
        if ftype == "CARD":
            code = fields[0] if fields else ""
            try:
                card = baccarat.card(code)
            except baccarat.CardError as exc:
                self._halt(f"the shoe sent {code!r}, not a card: {exc}")
                return
            self._card(card.code)
        elif ftype == "COVR":
            self._cover()
        elif ftype == "FLT":
            self._shoe_fault(fields[0] if fields else "")

    def _shoe_fault(self, code: str) -> None:
        d = self._d
        if code == "UNREAD":
            # A card left the shoe and nobody knows which: the inventory and the coup are lost.
            self._emit("baccarat.integrity", {"problem": "unreadable card", "code": code})
            self._halt("a card left the shoe unread ($FLT UNREAD)")
        elif code == "FACEUP":
            d.face_up_next = True
            self._emit("baccarat.irregularity", {"section": "5324.20(i)(1)",
                                                 "problem": "a card found face up in the shoe"})
        elif code == "CLR":
            d.shoe_faults = []
            self._emit("baccarat.shoe_fault", {"code": "CLR", "active": []})
            self._show_state()
        else:
            if code not in d.shoe_faults:
                d.shoe_faults.append(code)
            self._emit("baccarat.shoe_fault", {"code": code, "active": list(d.shoe_faults)})
            self._alarm(f"SHOE FAULT {code}")
            self._show("SHOE FAULT", code)

    def _cover(self) -> None:
        d = self._d
        if not d.shoe_in_play:
            self._emit("baccarat.cover", {"ignored": "no shoe in play"})
            return
        try:
            kind = self._last_hand.cover_card()
        except baccarat.BaccaratError as exc:
            self._halt(f"cover card: {exc}")
            return
        d.marks.append("C")
        self._emit("baccarat.cover", {"kind": kind.value, "section": "5324.20(f)(9)"})
        if kind is CoverCard.BOTTOM:
            d.shoe_done = True
            if self._model_state() in _COUP_STATES:
                self._void("the cards ran out before the coup was complete (5324.20(i)(4))")
        else:
            self._show_state()

    # -- cards ---------------------------------------------------------------------------------

    def _card(self, code: str) -> None:
        d = self._d
        state = self._model_state()
        if not d.shoe_in_play:
            # Between shoes: not part of any inventory. Journaled and alarmed, never dropped.
            self._emit("baccarat.irregularity", {"card": code, "state": state,
                                                 "problem": "a card read with no shoe in play"})
            self._alarm(f"CARD {code} read with no shoe in play")
            return
        d.cards_out.append(code)
        assert self._composition is not None
        try:
            self._composition.remove(code)
        except CardBeyondShoe as exc:
            self._emit("baccarat.integrity", {"card": code, "problem": str(exc)})
            self._halt(f"inventory: {exc}")
            return
        for alarm in self._monitor.add(code):
            self._emit("baccarat.integrity", {"card": code, "problem": alarm})
            self._halt(f"unshuffled sequence: {alarm}")
            return
        if state == "halted":
            self._emit("baccarat.card", {"card": code, "use": "held: table halted"})
            self._alarm(f"CARD {code} while halted")
            return
        if d.face_up_next:
            d.face_up_next = False
            ruling = face_up_in_shoe(code, disclosed=False)
            self._emit("baccarat.card", {"card": code, "use": ruling.fate.value,
                                         "section": ruling.section})
            # 5324.20(i)(1): it is never the first card of a hand; the dealer may disclose it.
            d.pending.append({"card": code, "kind": "face_up", "disclosed": False,
                              "fate": "discard"})
            return
        if state == "burn":
            self._burn_card(code)
        elif state in _COUP_STATES:
            self._coup_card(code)
        else:
            self._excess_card(code, state)

    def _burn_card(self, code: str) -> None:
        d = self._d
        assert self._burn is not None
        left = self._burn.add(code)
        if self._burn.cards_used == 1 and d.burn_face_up is None:
            d.burn_face_up = code
        else:
            d.burned.append(code)
        self._emit("baccarat.burn", {"card": code, "left": left,
                                     "face_up": self._burn.face_up.code
                                     if self._burn.face_up else None,
                                     "section": "5324.20(e)" if d.burn_reason == "shoe"
                                     else "5324.20(i)"})
        self._fire("burn_card")
        if left == 0:
            self._emit("baccarat.burn.done", {"face_up": d.burn_face_up, "burned": d.burned,
                                              "count": len(d.burned), "reason": d.burn_reason})
            d.burn_face_up, d.burn_count, d.burned = None, None, []
            self._burn = None
            d.burn_reason = "shoe"
            self._snapshot()
        self._show_state()

    def _coup_card(self, code: str) -> None:
        d = self._d
        before = self._coup.copy()
        step = self._coup.add(code)
        d.coup.append(code)
        n = len(d.coup)
        calls = [c.value for c in self._coup.calls[len(before.calls):]]
        self._emit("baccarat.card", {"card": code, "n": n, "next": step.value, "calls": calls,
                                     "player": [c.code for c in self._coup.player],
                                     "banker": [c.code for c in self._coup.banker]})
        self._fire("deal_card")
        if step is CoupStep.COMPLETE:
            self._result()
            return
        left = self._composition.cards_left if self._composition is not None else 0
        if void_for_short_shoe(self._coup, left):
            self._void(f"{left} cards left cannot finish the coup (5324.20(i)(4))")
            return
        self._show_state()

    def _excess_card(self, code: str, state: str) -> None:
        """A card when none is expected: 5324.20(i)(3) right after a coup the player stood in,
        else (i)(2). Not disclosed, it is the first card of the next hand."""
        d = self._d
        ruling: Ruling
        extra: dict[str, Any] = {}
        if (state == "settling" and not d.pending and not d.dead_hand and len(d.coup) == 4):
            # Both hands stood on their first two cards: the card went to the player in error.
            four = CoupInProgress(d.coup)
            ruling = player_third_in_error(four, code, disclosed=False)
            extra["burn_more"] = player_third_in_error(
                four, code, disclosed=True, count=self._opts.error_card_count).burn_more
            extra["count"] = self._opts.error_card_count.value
            kind = "player_third"
        else:
            ruling = drawn_in_excess(code, disclosed=False)
            kind = "excess"
        d.pending.append({"card": code, "kind": kind, "disclosed": False,
                          "fate": ruling.fate.value, **extra})
        self._emit("baccarat.irregularity", {"card": code, "state": state, "kind": kind,
                                             "section": ruling.section,
                                             "fate": ruling.fate.value})
        self._alarm(f"IRREGULARITY {code}: {kind.replace('_', ' ')} ({ruling.section});"
                    " press disclose if it was seen")
        if len([p for p in d.pending if p["fate"] != "discard"]) >= 4:
            self._halt("four cards drawn in excess before a hand")
            return
        self._show("CARD IN EXCESS " + code, "NEXT HAND 1ST CARD")

    # -- the coup ------------------------------------------------------------------------------

    def _start_coup(self, dead: bool) -> None:
        d = self._d
        d.coup_no += 1
        d.round_id = self._input_seq
        d.dead_hand = dead
        d.coup = []
        self._coup = CoupInProgress()
        if dead:
            d.bets = {}
        first = [p for p in d.pending if p["fate"] == "first card of the next hand"
                 and not p["disclosed"]]
        d.pending = []
        self._emit("baccarat.coup.start", {"shoe": d.shoe_no, "coup": d.coup_no,
                                           "dead_hand": dead, "bets": d.bets,
                                           "curator": d.curator,
                                           "last_hand": self._last_hand.last_hand,
                                           "carried": [p["card"] for p in first],
                                           "settings": self._take_settings(shoe=False)})
        for p in first:
            # 5324.20(i)(2)-(3): the card drawn in excess is the first card of this hand.
            self._coup.add(p["card"])
            d.coup.append(p["card"])
            self._emit("baccarat.card", {"card": p["card"], "n": len(d.coup),
                                         "next": self._coup.expecting.value, "carried": True})

    def _result(self) -> None:
        d = self._d
        coup = self._coup.result()
        text = self._result_text(coup)
        d.last_result = f"{coup}"
        d.last_winner = coup.winner
        self._emit("baccarat.coup.result", {
            "shoe": d.shoe_no, "coup": d.coup_no, "cards": list(d.coup),
            "player": [c.code for c in coup.player], "banker": [c.code for c in coup.banker],
            "player_total": coup.player_total, "banker_total": coup.banker_total,
            "winner": coup.winner, "natural": coup.natural, "dead_hand": d.dead_hand,
            "announce": text})
        status = self._last_hand.hand_complete()
        d.marks.append("H")
        if status is ShoeStatus.RESHUFFLE:
            d.shoe_done = True
        passing = after_round(coup.winner, wagered=not d.dead_hand,
                              dead_hand_compels=self._opts.dead_hand_compels_pass)
        d.compelled_pass = passing.passes
        self._settle(coup)
        if status is ShoeStatus.LAST_HAND:
            self._emit("baccarat.last_hand", {"section": "5324.20(f)(9)"})
        d.announce = (text, f"P {coup.player_total}  B {coup.banker_total}"
                      + ("  LAST HAND" if status is ShoeStatus.LAST_HAND else ""))
        self._show(*d.announce)

    @staticmethod
    def _result_text(coup: baccarat.Coup) -> str:
        if coup.winner == "tie":
            return "TIE HAND"
        return f"{coup.winner.upper()} WINS {max(coup.player_total, coup.banker_total)}"

    def _settle(self, coup: baccarat.Coup) -> None:
        """5324.20(g)(2): every wager settled in cents; a banker win's vigorish collected or,
        with deferred vigorish, marked per seat with lammers (d)(2)."""
        d = self._d
        lines = []
        for seat in sorted(d.bets, key=int, reverse=True):
            for wager, stake in sorted(d.bets[seat].items()):
                s = baccarat.settle_with_commission(wager, stake, coup, self._rules)
                deferred = bool(s.commission and self._deferred_vig)
                if deferred:
                    self._ledger = self._ledger.owe(int(seat), s.commission)
                lines.append({"seat": int(seat), "wager": wager, "stake_cents": stake,
                              "net_cents": s.net, "commission_cents": s.commission,
                              "paid_cents": s.before_vigorish if deferred else s.net,
                              "vig_deferred": deferred})
        d.ledger = {str(k): v for k, v in self._ledger.by_seat.items()}
        self._emit("baccarat.settlement", {"lines": lines, "ledger": d.ledger,
                                           "dead_hand": d.dead_hand})

    def _void(self, reason: str) -> None:
        d = self._d
        self._emit("baccarat.coup.voided", {"shoe": d.shoe_no, "coup": d.coup_no,
                                            "cards": list(d.coup), "reason": reason,
                                            "bets_returned": d.bets})
        self._fire("void_round")
        self._end_shoe("void: " + reason)

    def _halt(self, reason: str) -> None:
        d = self._d
        if reason not in d.faults:
            d.faults.append(reason)
        if self._model_state() in (*_COUP_STATES, "settling") and d.round_id is not None:
            self._emit("baccarat.coup.voided", {"shoe": d.shoe_no, "coup": d.coup_no,
                                                "cards": list(d.coup), "reason": reason,
                                                "bets_returned": d.bets})
            d.bets = {}
            d.coup = []
            self._coup = CoupInProgress()
        self._emit("baccarat.fault", {"fault": reason, "faults": list(d.faults)})
        if self._model_state() != "halted":
            self._fire("halt")
        self._alarm(f"FAULT {reason}")
        self._show("GAME HALTED", reason)

    def _end_shoe(self, why: str) -> None:
        """The shoe leaves play (reshuffle). Deferred vigorish stays on the ledger until
        collected; the "shuffled" button is refused until then, 5324.20(d)(2)."""
        d = self._d
        d.shoe_in_play = False
        d.burn_face_up, d.burn_count, d.burned, d.burn_reason = None, None, [], "shoe"
        self._burn = None
        d.bets = {}
        d.coup = []
        d.pending = []
        d.round_id = None
        d.face_up_next = False
        d.shoe_done = False
        d.compelled_pass = False
        self._coup = CoupInProgress()
        self._emit("baccarat.shoe.end", {"shoe": d.shoe_no, "why": why,
                                         "cards_out": len(d.cards_out)}, round_id=None)
        self._snapshot()
        self._show_state()

    # -- buttons and console actions -----------------------------------------------------------

    def _apply_button(self, name: str) -> list[str]:
        d = self._d
        if name == "shuffled":
            self._fire("shuffled")
            d.shoe_no += 1
            d.coup_no = 0
            d.cards_out, d.marks, d.faults = [], [], []
            d.burn_face_up, d.burn_count, d.burned = None, None, []
            d.shoe_in_play = True
            d.burn_reason = "shoe"
            d.curator = None
            d.shoe_settings_seq = d.settings_seq = self._input_seq
            self._rebuild_derived()
            self._burn = BurnProgress()
            self._sync_model()
            self._emit("baccarat.shoe.start", {"shoe": d.shoe_no, "decks": self._decks,
                                               "settings": self._take_settings(shoe=True)},
                       round_id=None)
            self._show_state()
            return [f"shoe {d.shoe_no}: burn the first card (5324.20(e))"]
        if name == "no_more_bets":
            if not self._watchdog_ok:
                raise Refused("the shoe is silent (watchdog): no cards are accepted", "FAULT")
            left = self._composition.cards_left if self._composition is not None else 0
            self._fire("no_more_bets")
            self._start_coup(dead=False)
            if void_for_short_shoe(self._coup, left):
                self._void(f"{left} cards left cannot finish a coup (5324.20(i)(4))")
                return ["round void: too few cards (5324.20(i)(4))"]
            self._show_state()
            return [f"coup {d.coup_no}: cards"]
        if name == "settled":
            self._fire("settled")
            self._emit("baccarat.coup.settled", {"shoe": d.shoe_no, "coup": d.coup_no,
                                                 "result": d.last_result,
                                                 "dead_hand": d.dead_hand})
            d.bets = {}
            d.dead_hand = False
            d.coup = []
            self._coup = CoupInProgress()
            d.round_id = None
            state = self._model_state()
            if state == "shuffle":
                self._end_shoe("last hand dealt (5324.20(f)(9))")
            else:
                if state == "passing":
                    d.compelled_pass = False
                self._snapshot()
                self._show_state()
            return [f"settled; next: {state}"]
        if name == "disclose":
            return self._disclose()
        raise Refused(f"no dealer button {name!r} at baccarat", "UNKNOWN")

    def _disclose(self) -> list[str]:
        """The card held for the next hand was seen: 5324.20(i)(1)-(3)."""
        d = self._d
        undisclosed = [p for p in d.pending if not p["disclosed"]]
        if not undisclosed:
            raise Refused("no card is held for the next hand: nothing to disclose")
        p = undisclosed[-1]
        p["disclosed"] = True
        p["fate"] = "discard"
        if p["kind"] == "player_third":
            p["remedy"] = "burn_more"  # 5324.20(i)(3): burn_more was fixed when it was dealt
        self._emit("baccarat.disclosed", {"card": p["card"], "kind": p["kind"],
                                          "remedy": p.get("remedy", "dealer's choice")})
        self._sync_model()
        self._show("DISCLOSED " + p["card"], "REMEDY BURN OR DEAD"
                   if p["kind"] != "player_third" else "BURN FACE UP")
        return [f"{p['card']} disclosed; console: remedy burn"
                + ("" if p["kind"] == "player_third" else " | remedy dead")]

    def _apply_action(self, name: str, args: list[str], who: str) -> list[str]:
        d = self._d
        if name == "bet":
            return self._bet(args)
        if name == "curator":
            seat = self._seat(args)
            self._fire("accept_shoe")
            prev = d.curator
            d.curator = seat
            order = (opening_offer_order(self._ring, self._ring.seats_ccw) if prev is None
                     else passing_offer_order(self._ring, self._ring.seats_ccw, prev,
                                              offer_back=self._opts.offer_back_to_previous))
            self._emit("baccarat.curator", {"seat": seat, "previous": prev,
                                            "offer_order": list(order),
                                            "section": "5324.20(f)(1)-(2)" if prev is None
                                            else "5324.20(h)(2)"})
            self._show_state()
            return [f"seat {seat} holds the shoe"]
        if name == "nobody":
            self._fire("nobody_accepts")
            self._end_shoe("no player accepted the shoe (5324.20(h)(2))")
            return ["the cards are turned over (5324.20(h)(2))"]
        if name == "pass":
            self._fire("pass_shoe")
            ordered = bool(args and args[0] == "ordered")
            self._emit("baccarat.pass", {"curator": d.curator, "ordered": ordered,
                                         "section": "5324.20(h)(1)(ii)" if ordered
                                         else "5324.20(h)(1)"})
            self._show_state()
            return ["the shoe passes"]
        if name == "disclose":
            return self._disclose()
        if name == "remedy":
            return self._remedy(args)
        if name == "collect":
            seat = self._seat(args)
            cents, self._ledger = self._ledger.collect(seat)
            d.ledger = {str(k): v for k, v in self._ledger.by_seat.items()}
            self._emit("baccarat.vig.collected", {"seat": seat, "cents": cents,
                                                  "ledger": d.ledger})
            return [f"seat {seat}: collected {_dollars(cents)}"]
        if name == "void":
            if self._model_state() not in ("betting", *_COUP_STATES, "settling"):
                raise Refused(f"no round to void in state {self._model_state()}")
            self._void("voided by " + who + (": " + " ".join(args) if args else ""))
            return ["round void; reshuffle"]
        if name == "clear":
            if not d.faults:
                raise Refused("no table fault to clear")
            self._fire("technician_clear")
            cleared = list(d.faults)
            d.faults = []
            self._emit("baccarat.fault.cleared", {"faults": cleared, "who": who})
            self._end_shoe("integrity fault cleared by " + who + "; the shoe is reshuffled")
            return [f"cleared: {'; '.join(cleared)}"]
        raise Refused(f"unknown action {name!r}", "UNKNOWN")  # pragma: no cover

    def _seat(self, args: Sequence[str]) -> int:
        if not args or not args[0].isdigit() or int(args[0]) not in self._ring.seats_ccw:
            raise Refused(f"a seat number {self._ring.seats_ccw[0]}-{self._ring.seats_ccw[-1]}"
                          " is needed", "SYNTAX")
        return int(args[0])

    def _bet(self, args: list[str]) -> list[str]:
        d = self._d
        if self._model_state() != "betting":
            # 5324.20(b)(3): no wager after "no more bets".
            raise Refused(f"wagers are taken only while betting (state {self._model_state()})")
        if d.dead_hand:
            raise Refused("nobody wagers on this hand (5324.20(i)(1)(ii))")
        if len(args) != 3 or not args[2].lstrip("-").isdigit():
            raise Refused("usage: bet SEAT WAGER CENTS", "SYNTAX")
        seat = self._seat(args)
        wager, cents = args[1], int(args[2])
        try:
            baccarat.check_wager(wager, cents, self._rules)
        except baccarat.WagerError as exc:
            raise Refused(str(exc), "RANGE") from None
        seat_bets = d.bets.setdefault(str(seat), {})
        seat_bets[wager] = cents
        self._emit("baccarat.bet", {"seat": seat, "wager": wager, "cents": cents})
        return [f"seat {seat} {wager} {_dollars(cents)}"]

    def _remedy(self, args: list[str]) -> list[str]:
        d = self._d
        disclosed = [p for p in d.pending if p["disclosed"]]
        if not disclosed:
            raise Refused("no disclosed card calls for a remedy")
        choice = args[0] if args else ""
        p = disclosed[-1]
        if p.get("remedy") == "burn_more":
            if choice != "burn":
                raise Refused("5324.20(i)(3): the disclosed card and as many more as its value"
                              " are burned: `remedy burn`")
            d.burn_reason = "error_card"
            self._fire("remedy_burn")
            d.pending = [q for q in d.pending if not q["disclosed"]]
            self._burn = BurnProgress(face_up=p["card"], count=int(p["burn_more"]))
            d.burn_face_up, d.burn_count, d.burned = p["card"], int(p["burn_more"]), []
            self._emit("baccarat.remedy", {"card": p["card"], "remedy": "burn_more",
                                           "count": p["burn_more"], "section": "5324.20(i)(3)"})
            self._finish_burn_if_empty()
            return [f"burn {p['burn_more']} more cards"]
        if choice not in ("burn", "dead"):
            raise Refused("usage: remedy burn | remedy dead (5324.20(i)(1)(i)-(ii))", "SYNTAX")
        remedy = Remedy.BURN if choice == "burn" else Remedy.DEAD_HAND
        burn_from = self._opts.face_up_burn_from if p["kind"] == "face_up" else BurnFrom.NEXT_CARD
        ruling = face_up_in_shoe(p["card"], disclosed=True, remedy=remedy, burn_from=burn_from)
        if ruling.then is Then.BURN_MORE:
            # baccarat.face_up_burn_from = face_up_card: the card found face up is the burn's
            # first card, and as many more as its value are burned (5324.20(i)(1)(i))
            d.burn_reason = "choice"
            self._fire("remedy_burn")
            d.pending = [q for q in d.pending if not q["disclosed"]]
            self._burn = BurnProgress(face_up=p["card"], count=ruling.burn_more)
            d.burn_face_up, d.burn_count, d.burned = p["card"], ruling.burn_more, []
            self._emit("baccarat.remedy", {"card": p["card"], "remedy": remedy.value,
                                           "burn_from": burn_from.value,
                                           "count": ruling.burn_more,
                                           "section": ruling.section})
            self._finish_burn_if_empty()
            return [f"remedy: burn {p['card']} and {ruling.burn_more} more cards"]
        d.burn_reason = "choice"
        if remedy is Remedy.BURN:
            self._fire("remedy_burn")
            self._burn = BurnProgress()
            d.burn_face_up, d.burn_count, d.burned = None, None, []
        else:
            self._fire("remedy_dead_hand")
        d.pending = [q for q in d.pending if not q["disclosed"]]
        self._emit("baccarat.remedy", {"card": p["card"], "remedy": remedy.value,
                                       "section": ruling.section})
        if remedy is Remedy.DEAD_HAND:
            d.burn_reason = "shoe"
            self._start_coup(dead=True)
        self._show_state()
        return [f"remedy: {remedy.value}"]

    def _finish_burn_if_empty(self) -> None:
        d = self._d
        if self._burn is not None and self._burn.done:
            self._emit("baccarat.burn.done", {"face_up": d.burn_face_up, "burned": [],
                                              "count": 0, "reason": d.burn_reason})
            d.burn_face_up, d.burn_count = None, None
            self._burn = None
            self._fire("burn_card")
            d.burn_reason = "shoe"
        self._show_state()

    # -- the simulated devices -----------------------------------------------------------------

    def _sim(self, args: list[str]) -> list[str]:
        devices = self._ctx.devices
        if len(args) >= 2 and args[0] == "shoe":
            sim = devices.get("shoe_sim")
            if sim is None:
                raise Refused("no simulated shoe in this profile", "STATE")
            verb, rest = args[1], args[2:]
            # The reply waits until the shoe's frames have been journaled and handled, so a
            # scripted console session sees their effect on the next line.
            self._reply_waiter = lambda: sim.status().unacked == 0
            if verb == "deal" and rest and rest[0] in ("coup", "burn"):
                n = self._cards_needed(rest[0], sim.peek(_PEEK))
                return [f"dealt {rest[0]}: " + " ".join(sim.deal(n))]
            if verb == "deal":
                n = int(rest[0]) if rest and rest[0].isdigit() else 1
                return ["dealt " + " ".join(sim.deal(n))]
            if verb == "card" and rest:
                sim.deal_card(rest[0].upper())
                return [f"dealt {rest[0].upper()}"]
            if verb == "fault" and rest:
                reply = self._sim_fault(sim, rest[0].lower())
                if rest[0].lower() == "power":
                    # the new $HELO is held until a frame after it differs from the journaled
                    # session (docs/shoe-protocol.md): nothing to wait for until cards follow
                    self._reply_waiter = None
                return [reply]
            raise Refused("usage: sim shoe deal [N|coup|burn] | card RS | fault KIND", "SYNTAX")
        if len(args) == 2 and args[0] == "button":
            pins = devices.get("button_pins") or {}
            gpio = devices.get("gpio")
            if args[1] not in pins or gpio is None:
                raise Refused(f"no button {args[1]!r}; buttons are {sorted(pins)}", "SYNTAX")
            pin = pins[args[1]]
            clock = getattr(gpio, "clock", None)
            gpio.drive(pin, 0)
            if clock is not None:
                clock.advance(100)
            gpio.drive(pin, 1)
            if clock is not None:
                clock.advance(100)
            return [f"pressed {args[1]}"]
        raise Refused("usage: sim shoe ... | sim button NAME", "SYNTAX")

    def _cards_needed(self, what: str, upcoming: Sequence[str]) -> int:
        """How many of the ``upcoming`` shoe cards finish the burn or the coup in progress, as
        this table will take them (a card announced face up is discarded first): the simulated
        dealer's ``sim shoe deal burn|coup``."""
        state = self._model_state()
        skip = self._d.face_up_next
        if what == "burn":
            if state != "burn":
                raise Refused(f"no burn in progress (state {state})", "STATE")
            burn = (BurnProgress() if self._burn is None or self._burn.face_up is None
                    else BurnProgress(face_up=self._burn.face_up, count=self._d.burn_count))
            if self._burn is not None:
                for burned in self._burn.burned:
                    burn.add(burned)
            done: Callable[[], bool] = lambda: burn.done  # noqa: E731
            take: Callable[[str], object] = burn.add
        else:
            if state == "burn":
                raise Refused("the burn comes first: sim shoe deal burn", "STATE")
            if state not in _COUP_STATES:
                raise Refused(f"no coup in progress (state {state}): press no_more_bets first",
                              "STATE")
            coup = self._coup.copy()
            done, take = (lambda: coup.complete), coup.add
        used = 0
        for card in upcoming:
            if done():
                break
            used += 1
            if skip:
                skip = False
                continue
            take(card)
        if not done():
            raise Refused(f"the simulated shoe has too few cards left to finish the {what}",
                          "STATE")
        return used

    def take_reply_waiter(self) -> Callable[[], bool] | None:
        """For the application: a readiness test for the last console action's reply, once."""
        waiter, self._reply_waiter = self._reply_waiter, None
        return waiter

    @staticmethod
    def _sim_fault(sim: Any, kind: str) -> str:
        simple: dict[str, Callable[[], object]] = {
            "checksum": sim.fault_checksum, "drop": sim.fault_drop,
            "duplicate": sim.fault_duplicate, "garbage": sim.send_garbage,
            "disconnect": lambda: sim.disconnect(0.5), "unread": sim.deal_unreadable,
            "foreign": sim.deal_foreign, "faceup": sim.deal_face_up,
            "power": sim.power_cycle,
        }
        if kind in simple:
            simple[kind]()
            return f"fault {kind}"
        sim.fault(kind.upper())
        return f"fault {kind.upper()}"

    # -- display -------------------------------------------------------------------------------

    def _show_state(self) -> None:
        d = self._d
        state = self._model_state()
        if state == "shuffle":
            owed = self._ledger.total_owed()
            self._show("SHUFFLE AND INSPECT", f"VIG OWED {_dollars(owed)}" if owed
                       else "THEN PRESS SHUFFLED")
        elif state == "burn":
            burn = self._burn
            if burn is None or burn.face_up is None:
                self._show("BURN: FIRST CARD", "FACE UP")
            else:
                self._show(f"BURN {burn.face_up.code}: {burn.remaining} MORE", "")
        elif state == "offering":
            self._show("OFFER THE SHOE", "FROM SEAT 1")
        elif state == "passing":
            self._show("PASS THE SHOE", f"FROM SEAT {d.curator}" if d.curator else "")
        elif state == "betting":
            self._show("PLACE YOUR BETS", "LAST HAND" if self._last_hand.last_hand
                       else f"COUP {d.coup_no + 1}")
        elif state in _COUP_STATES:
            self._show(*self._next_call())
        elif state == "settling":
            self._show(*d.announce)
        elif state == "halted":
            self._show("GAME HALTED", d.faults[0] if d.faults else "")

    def _next_call(self) -> tuple[str, str]:
        coup = self._coup
        totals = f"P {coup.player_total} B {coup.banker_total}" if len(coup.cards) >= 4 else ""
        exp = coup.expecting
        if exp is CoupStep.PLAYER_CARD:
            return ("DEAD HAND" if self._d.dead_hand else "CARDS", "PLAYER CARD")
        if exp is CoupStep.BANKER_CARD:
            return ("CARDS", "BANKER CARD")
        if exp is CoupStep.PLAYER_DRAWS:
            return ("PLAYER DRAWS", totals)
        stood = CoupStep.PLAYER_STANDS in coup.calls
        return ("PLAYER STANDS" if stood else "BANKER DRAWS",
                "BANKER DRAWS" if stood else totals)

    # -- snapshots and recovery ----------------------------------------------------------------

    def _snapshot(self) -> None:
        self._emit(K_SNAPSHOT, {"version": SNAPSHOT_VERSION, "state": self._model_state(),
                                "data": self._d.to_json()}, round_id=None)

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

    # -- for tests and tools -------------------------------------------------------------------

    @property
    def state(self) -> str:
        return self._model_state()

    @property
    def data(self) -> ShoeData:
        """A copy of the table's data (tests read it; nothing outside changes it)."""
        return ShoeData.from_json(copy.deepcopy(self._d.to_json()))

    @property
    def ledger(self) -> VigLedger:
        return self._ledger


#: Cards the simulated dealer looks ahead: a burn takes at most 11, a coup 6, plus a face-up one.
_PEEK: Final = 12

_ACTIONS: Final = frozenset({"bet", "curator", "nobody", "pass", "disclose", "remedy", "collect",
                             "void", "clear"})

#: What recover() does in each state (docs/baccarat-table.md repeats it).
RECOVERY_RULES: Final[dict[str, str]] = {
    "shuffle": "resume: wait for the shuffled button (deferred vigorish still owed stays owed)",
    "burn": "resume: the same face-up card and the cards burned so far; the shoe resends the"
            " rest",
    "offering": "resume: the shoe is offered again from the seat the journal shows",
    "betting": "resume: the wagers journaled for this coup stand",
    "dealing": "resume: the same initial cards; the shoe resends any card not acknowledged",
    "player_third": "resume: the player's hand still draws its third card",
    "banker_third": "resume: the banker's hand still draws its third card",
    "settling": "resume: the result and the settlement rows stand; wait for settled",
    "passing": "resume: the shoe is offered to the next seat",
    "halted": "resume halted: the fault stays until a technician clears it",
}
