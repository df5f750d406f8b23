"""The pai gow round as a ``transitions`` state machine: :class:`PaigowRound`, the model and the
only holder of the table's state, with its guards (``why_*`` methods: a reason text, or None when
allowed), its effects (``effect_*`` methods, by name in :data:`EFFECTS`: what a transition does
to the round's record and the bank rotation) and its one ``before`` callback that runs the
transition's effect and journals the outcome before the state changes; and
:func:`build_machine`, the machine over it from
:data:`controller.tables.paigow.definition.TRANSITIONS`."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Final

from transitions import EventData, Machine

from controller.fields.readers import int_of, ints_of, map_of, str_of, strs_of
from controller.games.paigow.banking import DEALER, BankRotation
from controller.games.paigow.dealing import DEFAULT_DELIVERY_STYLE
from controller.games.paigow.errors import PaigowError
from controller.tables.kernel.refusal import Guards
from controller.tables.paigow.definition import (
    ALL_SEATS,
    POSITIONS,
    SEATS,
    STATE_NAMES,
    TRANSITIONS,
    physical_position,
)
from controller.tables.paigow.entries import (
    apply_wager,
    compute_settlement,
    entry_problems,
    has_entries,
    set_hands,
    tiles_problem,
    wager_consistency,
    wager_on,
    wager_problem,
)
from controller.tables.paigow.record import RoundRecord, Snapshot, full_record, full_rotation
from controller.tables.paigow.replies import exposed_hand

if TYPE_CHECKING:
    from controller.config.settings import RuleSettings

#: How a refusal of a void after the draw for want of a supervisor begins (the console answers
#: it ERR AUTH: a login question, not the state's).
NEEDS_SUPERVISOR = "a void after the draw needs a supervisor's login at the console"


def needs_supervisor(number: int, command: str) -> str:
    """Why ``command`` (a void of the round) is refused after ``number`` was drawn to anyone
    but a supervisor (issue 15: a number voided could be drawn again)."""
    return f"the number {number} is out: {NEEDS_SUPERVISOR} (`{command}`)"


@dataclass
class Change:
    """What a transition's effect makes of the round, for :meth:`PaigowRound.commit` to journal
    and keep: the record (a copy the effect edits), the rotation, the fact row's kind and what
    else it carries, and whether it closes the round (the next round starts)."""

    record: RoundRecord
    rotation: BankRotation
    kind: str = "paigow.state"
    closing: bool = False
    extra: dict[str, object] = field(default_factory=dict)


def _place_start(record: RoundRecord, ordinal: int) -> None:
    """The ``ordinal``-th position counted from the bank's position when a player banks, else
    from the dealer's (5324.50(e)(3), (g)(10))."""
    record.start_ordinal = ordinal
    seat = record.bank_seat if record.bank != "house" else None
    record.start_position = physical_position(ordinal, seat)
    record.counted_from = "dealer" if seat is None else f"bank (seat {seat})"


class PaigowRound:
    """The machine's model: the only holder of the table's state (see module docstring)."""

    state: str  # set by transitions.Machine

    def __init__(
        self,
        commit: Callable[[str, str, Snapshot, Snapshot, bool, dict[str, object]], None],
        settings: Callable[[], RuleSettings],
        rng_faulted: Callable[[], bool],
        display_down: Callable[[], str | None] = lambda: None,
    ) -> None:
        self._commit_row = commit
        self._settings = settings
        self._rng_faulted = rng_faulted
        #: why the number display cannot show a number now (its link is down), or None
        self._display_down = display_down
        self.round_id = 1
        self.record = RoundRecord(round_id=1, start_of_game=True)
        self.rotation = BankRotation(seats=SEATS)
        self.rng_fault: str | None = None  # latched by the table, survives a restart
        #: The guards by the names the definition gives them (controller/tables/kernel/refusal.py):
        #: the machine's conditions and the refusal's reasons, each evaluated once per verdict.
        self.guards = Guards(
            {
                "bank_allowed": self.why_bank_allowed,
                "cobank_allowed": self.why_cobank_allowed,
                "player_banks": self.why_player_banks,
                "wagers_consistent": self.why_wagers_consistent,
                "style_offered": self.why_style_offered,
                "rng_mode": self.why_rng_mode,
                "dice_mode": self.why_dice_mode,
                "dice_complete": self.why_dice_complete,
                "players_tile": self.why_players_tile,
                "hand_exposed": self.why_hand_exposed,
                "exposure_voids": self.why_exposure_voids,
                "surrender_allowed": self.why_surrender_allowed,
                "wager_allowed": self.why_wager_allowed,
                "tiles_allowed": self.why_tiles_allowed,
                "void_allowed": self.why_void_allowed,
                "entries_complete": self.why_entries_complete,
            }
        )

    # -- facts derived from settings and the fault latch ----------------------------------------

    def dice_required(self) -> bool:
        """5324.50(a)(3): dice where the setting requires the shaker, while the RNG is in
        fault (docs/design.md "Certified RNG"), or while the number display is not connected:
        (a)(4)'s generator "selects and displays" its number, and one that cannot be shown is no
        alternative to the shaker."""
        return bool(
            self._settings().start_mode == "dice"
            or self.rng_fault is not None
            or self._rng_faulted()
            or self._display_down() is not None
        )

    def start_mode(self) -> str:
        if self._settings().start_mode == "dice":
            return "dice"
        if self.rng_fault is not None or self._rng_faulted():
            return "dice (RNG fault)"
        return "dice (number display not connected)" if self.dice_required() else "rng"

    def dragons_eye(self) -> bool:
        """13:69F-10.7(l): the variation needs a dice roll, so only in the shaker's dice mode."""
        s = self._settings()
        return bool(s.paigow.dragons_eye and s.start_mode == "dice")

    # -- guards: a reason text when refused, None when allowed ----------------------------------

    def why_bank_allowed(self, event: EventData) -> str | None:
        if not self._settings().paigow.bank_offered:
            return "the casino does not offer the bank (5324.50(g)(1), paigow.bank_offered)"
        return self._seat_may_bank(int(event.kwargs["seat"]))

    def why_cobank_allowed(self, event: EventData) -> str | None:
        p = self._settings().paigow
        if not (p.bank_offered and p.cobank_offered):
            return "the casino does not offer co-banking (5324.50(g)(5), paigow.cobank_offered)"
        return self._seat_may_bank(int(event.kwargs["seat"]))

    def _seat_may_bank(self, seat: int) -> str | None:
        rot = self.rotation
        if rot.restack_round:
            return (
                "no player may bank the first round after the tiles were restacked (5324.50(g)(2))"
            )
        if rot.first_offer == DEALER:
            return "the offer of the bank has returned to the dealer this round (5324.50(g)(3))"
        if seat == rot.last_banker:
            return f"seat {seat} banked the last round: never two in a row (5324.50(g)(3))"
        return None

    def why_player_banks(self, event: EventData) -> str | None:
        return None if self.record.bank != "house" else "the house banks this round"

    def why_wagers_consistent(self, event: EventData) -> str | None:
        problems = wager_consistency(self.record)
        return "; ".join(problems) if problems else None

    def why_style_offered(self, event: EventData) -> str | None:
        name = str(event.kwargs["style"])
        if name not in self._settings().paigow.delivery_styles:
            return f"style {name} is not offered here (paigow.delivery_styles)"
        return None

    def why_rng_mode(self, event: EventData) -> str | None:
        if self._settings().start_mode == "dice":
            return "start_mode is dice: the dealer enters the dice total (5324.50(a)(3)): `dice T`"
        if self.rng_fault is not None or self._rng_faulted():
            return (
                f"the RNG is in fault ({self.rng_fault or 'latched'}): the dealer enters the "
                "dice total (5324.50(a)(3)): `dice T`"
            )
        if self.dice_required():
            return (
                "the number display is not connected: the RNG's number is shown as it is drawn"
                " (5324.50(a)(4)); reconnect the display (status shows it), or the dealer"
                " enters the shaker's dice total (5324.50(a)(3)): `dice T`"
            )
        return None

    def why_dice_mode(self, event: EventData) -> str | None:
        if not self.dice_required():
            return "the RNG selects the starting position (5324.50(a)(4)): press draw"
        return None

    def why_dice_complete(self, event: EventData) -> str | None:
        if self.dragons_eye() and len(event.kwargs["dice"]) != 3:
            return "dragon's eye (13:69F-10.7(l)) needs the three dice: `dice A B C`"
        return None

    def why_players_tile(self, event: EventData) -> str | None:
        seat = int(event.kwargs["seat"])
        if self.record.bank != "house" and seat == self.record.bank_seat:
            return f"seat {seat} is the bank: `expose bank` (5324.50(i)(2))"
        wagers = self.record.wagers
        if wagers and not any(w["area"] == seat for w in wagers):
            # (i)(1) is a player's hand; a position with no wager is (i)(2)'s
            return (
                f"no wager is on area {seat}: a tile of a position with no wager voids every"
                f" hand (5324.50(i)(2)): `expose unwagered {seat}`"
            )
        return None

    def why_hand_exposed(self, event: EventData) -> str | None:
        seat = int(event.kwargs["seat"])
        if seat not in self.record.exposed_seats:
            return f"no tile of the hand of area {seat} was exposed by the dealer (5324.50(i)(1))"
        if seat in self.record.voided_seats:
            return f"seat {seat}'s hand is already void"
        return None

    def why_exposure_voids(self, event: EventData) -> str | None:
        """(i)(2): an exposed house, bank, dead or unwagered tile voids every hand. It is only
        ever after the draw, so like any void after it (issue 15) only a supervisor may say so
        (the exposure is the reason; docs/paigow-table.md "Voids after the draw")."""
        whose = str(event.kwargs["whose"])
        area = event.kwargs.get("area")
        if whose == "unwagered" and any(w["area"] == area for w in self.record.wagers):
            return (
                f"a wager is on area {area}: its player decides for the hand (5324.50(i)(1)):"
                f" `expose player {area}`"
            )
        if whose == "bank" and self.record.bank == "house":
            return "no player banks this round: `expose dealer` for the house's tiles"
        if whose == "dealer" and self.state == "dealer_hands":
            return "the dealer's tiles are turned over in this state (5324.50(f)(3))"
        if whose == "bank" and self.state == "dealer_hands":
            return "the bank's tiles are turned over in this state (5324.50(f)(3))"
        if self.record.number is not None and not event.kwargs.get("supervisor"):
            return needs_supervisor(self.record.number, f"expose {whose}")
        return None

    def why_surrender_allowed(self, event: EventData) -> str | None:
        seat = int(event.kwargs["seat"])
        p = self._settings().paigow
        rec = self.record
        if not p.surrender_offered:
            return "surrender is not offered here (5324.50(f)(5), paigow.surrender_offered)"
        if rec.bank != "house" and p.surrender_against_bank == "refuse":
            return (
                "surrender against a player bank is not settled: (f)(5) does not say where "
                "the wager goes (paigow.surrender_against_bank = refuse)"
            )
        if rec.bank != "house" and seat == rec.bank_seat:
            return f"seat {seat} is the bank: the bank does not surrender"
        if seat in rec.surrendered_seats or seat in rec.voided_seats:
            return f"seat {seat} has no live wager to surrender"
        if has_entries(rec) and wager_on(rec, seat) is None:
            return f"no wager was entered on area {seat}"
        if str(seat) in rec.hands:
            return (
                f"area {seat}'s hands were exposed (entered): too late to surrender (5324.50(f)(5))"
            )
        return None

    def why_wager_allowed(self, event: EventData) -> str | None:
        return wager_problem(
            self.record,
            event.kwargs.get("seat"),
            int(event.kwargs["area"]),
            int(event.kwargs["cents"]),
        )

    def why_tiles_allowed(self, event: EventData) -> str | None:
        high = event.kwargs.get("high")
        return tiles_problem(
            self.record,
            event.kwargs["whose"],
            list(event.kwargs["tiles"]),
            None if high is None else list(high),
            self._settings(),
        )

    def why_void_allowed(self, event: EventData) -> str | None:
        """Before the draw the dealer voids a round at will. After it (the number is out) a
        void would let a number be drawn again: only a supervisor, at the console, with a
        reason (it raises an alarm; docs/paigow-table.md "Voids after the draw")."""
        number = self.record.number
        if number is None:
            return None
        if not event.kwargs.get("supervisor"):
            return needs_supervisor(number, "void REASON")
        if not str(event.kwargs.get("reason") or "").strip():
            return f"the number {number} is out: say why (`void REASON`)"
        return None

    def why_entries_complete(self, event: EventData) -> str | None:
        if not has_entries(self.record):
            return None
        problems = entry_problems(self.record)
        if problems:
            return "the entries are incomplete or inconsistent: " + "; ".join(problems)
        try:
            compute_settlement(self.record, self._settings())
        except (PaigowError, ValueError) as exc:
            return f"the settlement cannot be computed: {exc}"
        return None

    def _ok(self, name: str) -> Callable[[EventData], bool]:
        return self.guards.ok(name)

    # -- the one `before` callback: journal the outcome, then take it ---------------------------

    def _restacked(self, rotation: BankRotation) -> BankRotation:
        """The rotation after a restack, reading paigow.bank_rotation_includes_dealer then (the
        setting applies from the start of the next game, like every change between rounds)."""
        includes = bool(self._settings().paigow.bank_rotation_includes_dealer)
        return replace(rotation.restacked(), includes_dealer=includes)

    def commit(self, effect: str, event: EventData) -> None:
        """Compute the transition's outcome with its ``effect`` (:data:`EFFECTS`), journal it
        (may raise: the state then stays), and keep it. The machine sets ``state`` after this
        returns."""
        assert event.transition is not None
        change = Change(copy.deepcopy(self.record), self.rotation)  # lists are copied too
        EFFECTS[effect](self, change, event.kwargs)
        next_round, record = self.round_id, change.record
        if change.closing:
            next_round += 1
            record = RoundRecord(round_id=next_round)
        after = Snapshot.of(str(event.transition.dest), next_round, record, change.rotation)
        self._commit_row(
            change.kind, event.event.name, self.snapshot(), after, change.closing, change.extra
        )
        self.record, self.rotation, self.round_id = record, change.rotation, next_round

    # -- effects: what each transition does to the record and the rotation (EFFECTS) ------------

    def effect_state_only(self, change: Change, kwargs: Mapping[str, object]) -> None:
        """Only the state changes (the deal complete, the hands set)."""

    def effect_new_game(self, change: Change, kwargs: Mapping[str, object]) -> None:
        """From inspection: a new game; the tiles were restacked ((d)(3), (g)(2))."""
        change.record.start_of_game = True
        change.rotation = self._restacked(change.rotation)

    def effect_restack(self, change: Change, kwargs: Mapping[str, object]) -> None:
        """Back to inspection (d)(7): the next game starts with the tiles restacked."""
        change.rotation = self._restacked(change.rotation)

    def effect_rewash(self, change: Change, kwargs: Mapping[str, object]) -> None:
        """(d)(5): a tile exposed while stacking; every tile is re-washed."""
        change.record.reshuffles += 1
        change.record.reshuffle_pending = True

    def effect_stacks_formed(self, change: Change, kwargs: Mapping[str, object]) -> None:
        change.record.reshuffle_pending = False

    def effect_player_bank(self, change: Change, kwargs: Mapping[str, object]) -> None:
        change.record.bank, change.record.bank_seat = "player", int_of(kwargs, "seat")

    def effect_co_bank(self, change: Change, kwargs: Mapping[str, object]) -> None:
        change.record.bank, change.record.bank_seat = "cobank", int_of(kwargs, "seat")

    def effect_house_bank(self, change: Change, kwargs: Mapping[str, object]) -> None:
        change.record.bank, change.record.bank_seat = "house", None

    def effect_default_style(self, change: Change, kwargs: Mapping[str, object]) -> None:
        change.record.style, change.record.style_by = DEFAULT_DELIVERY_STYLE, "default"

    def effect_style_chosen(self, change: Change, kwargs: Mapping[str, object]) -> None:
        change.record.style, change.record.style_by = str(kwargs["style"]), "bank"

    def effect_rng_start(self, change: Change, kwargs: Mapping[str, object]) -> None:
        """The RNG's number (a)(4), journaled with its raw bytes."""
        change.kind = "paigow.drawn"
        record = change.record
        record.mode, record.number, record.raw = "rng", int_of(kwargs, "number"), str(kwargs["raw"])
        _place_start(record, record.number)

    def effect_dice_start(self, change: Change, kwargs: Mapping[str, object]) -> None:
        """The dice total (a)(3): the count of (e)(3) from it; triples for dragon's eye."""
        change.kind = "paigow.dice"
        record = change.record
        dice = ints_of(kwargs, "dice")
        total = sum(dice) if len(dice) == 3 else dice[0]
        record.mode, record.dice, record.dice_total = "dice", dice, total
        record.number = (total - 1) % POSITIONS + 1  # (e)(3)
        if self.dragons_eye():
            record.triples = len(set(dice)) == 1
        _place_start(record, record.number)

    def effect_seat_exposed(self, change: Change, kwargs: Mapping[str, object]) -> None:
        seat = int_of(kwargs, "seat")
        if seat not in change.record.exposed_seats:
            change.record.exposed_seats.append(seat)

    def effect_hand_void(self, change: Change, kwargs: Mapping[str, object]) -> None:
        change.record.voided_seats.append(int_of(kwargs, "seat"))

    def effect_surrender(self, change: Change, kwargs: Mapping[str, object]) -> None:
        change.record.surrendered_seats.append(int_of(kwargs, "seat"))

    def effect_wager(self, change: Change, kwargs: Mapping[str, object]) -> None:
        apply_wager(
            change.record, kwargs.get("seat"), int_of(kwargs, "area"), int_of(kwargs, "cents")
        )

    def effect_hands(self, change: Change, kwargs: Mapping[str, object]) -> None:
        """A hand's tiles; a hand entered again names the one it replaces."""
        record, key = change.record, str(kwargs["whose"])
        if key in record.hands:
            change.extra["replaces"] = record.hands[key]
        high = None if kwargs.get("high") is None else strs_of(kwargs, "high")
        tiles = strs_of(kwargs, "tiles")
        record.hands[key] = set_hands(record, kwargs["whose"], tiles, high, self._settings())

    def effect_settle(self, change: Change, kwargs: Mapping[str, object]) -> None:
        """The round settled; with entries, the ``paigow.settlement`` row's seq."""
        if "settlement_seq" in kwargs:
            change.record.settlement_seq = int_of(kwargs, "settlement_seq")
        self._close(change, "paigow.settled")

    def effect_void(self, change: Change, kwargs: Mapping[str, object]) -> None:
        change.record.closing_reason = str(kwargs.get("reason") or "voided by the dealer")
        self._close(change, "paigow.voided")

    def effect_void_by_exposure(self, change: Change, kwargs: Mapping[str, object]) -> None:
        """(i)(2): an exposed dealer's, bank's, dead or unwagered tile voids every hand."""
        change.record.closing_reason = (
            f"a tile of the {exposed_hand(kwargs)} was exposed: every hand is "
            "void and the tiles are re-shuffled (5324.50(i)(2))"
        )
        self._close(change, "paigow.voided")

    def _close(self, change: Change, kind: str) -> None:
        """The round's closing row: the closed round's record; the bank's offer moves on."""
        record = change.record
        change.kind, change.closing = kind, True
        banker = record.bank_seat if record.bank != "house" else None
        change.rotation = change.rotation.next_state(ALL_SEATS, banker)
        change.extra["record"] = asdict(record)

    def load(self, snap: Snapshot) -> None:
        """Take a journaled snapshot (recovery)."""
        self.round_id = snap.round_id
        self.record = copy.deepcopy(snap.record)
        self.rotation = snap.rotation

    def apply(self, row_data: Mapping[str, object]) -> str:
        """Replay one fact row after the snapshot: its changed fields; returns its state.
        ``TypeError`` or a ``ValueError`` (``FieldError``) when it is not one."""
        if "record" in row_data:
            self.record = full_record({**asdict(self.record), **map_of(row_data, "record")})
        if "rotation" in row_data:
            self.rotation = full_rotation({**asdict(self.rotation), **map_of(row_data, "rotation")})
        return str_of(row_data, "state")

    def snapshot(self) -> Snapshot:
        return Snapshot.of(self.state, self.round_id, self.record, self.rotation)


#: What each transition does, by the name the definition gives it (``Step.effect``): a method
#: of the model that edits the :class:`Change` from the event's data; nothing here journals or
#: drives an output, so an effect that raises leaves the round as it was.
EFFECTS: Final[Mapping[str, Callable[[PaigowRound, Change, Mapping[str, object]], None]]] = {
    "state_only": PaigowRound.effect_state_only,
    "new_game": PaigowRound.effect_new_game,
    "restack": PaigowRound.effect_restack,
    "rewash": PaigowRound.effect_rewash,
    "stacks_formed": PaigowRound.effect_stacks_formed,
    "player_bank": PaigowRound.effect_player_bank,
    "co_bank": PaigowRound.effect_co_bank,
    "house_bank": PaigowRound.effect_house_bank,
    "default_style": PaigowRound.effect_default_style,
    "style_chosen": PaigowRound.effect_style_chosen,
    "rng_start": PaigowRound.effect_rng_start,
    "dice_start": PaigowRound.effect_dice_start,
    "seat_exposed": PaigowRound.effect_seat_exposed,
    "hand_void": PaigowRound.effect_hand_void,
    "surrender": PaigowRound.effect_surrender,
    "wager": PaigowRound.effect_wager,
    "hands": PaigowRound.effect_hands,
    "settle": PaigowRound.effect_settle,
    "void": PaigowRound.effect_void,
    "void_by_exposure": PaigowRound.effect_void_by_exposure,
}


def build_machine(model: PaigowRound, initial: str = "inspection") -> Machine:
    """The machine over ``model``: no auto transitions, guards in conditions, one ``before``
    (:meth:`PaigowRound.commit` with the transition's effect). A transition naming an effect
    :data:`EFFECTS` lacks is refused here, at start-up, never in a round."""
    unknown = sorted({t.effect for t in TRANSITIONS} - set(EFFECTS))
    if unknown:
        raise ValueError(f"transitions name effects that do not exist: {', '.join(unknown)}")
    transitions = [
        {
            "trigger": t.trigger,
            "source": t.source,
            "dest": t.dest,
            "conditions": [model._ok(c) for c in t.conditions],  # noqa: SLF001 - own model
            "unless": [model._ok(c) for c in t.unless],  # noqa: SLF001
            "before": partial(model.commit, t.effect),
        }
        for t in TRANSITIONS
    ]
    return Machine(
        model=model,
        states=list(STATE_NAMES),
        transitions=transitions,
        initial=initial,
        auto_transitions=False,
        send_event=True,
        ignore_invalid_triggers=False,
    )
