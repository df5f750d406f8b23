"""The pai gow round as a ``transitions`` state machine: :class:`PaigowRound`, the model and the
only holder of the table's state, with its guards (``why_*`` methods: a reason text, or None when
allowed) and its one ``before`` callback that journals each transition's outcome before the
state changes; and :func:`build_machine`, the machine over it from
:data:`controller.tables.paigow.definition.TRANSITIONS`."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import asdict, replace
from typing import TYPE_CHECKING

from transitions import EventData, Machine

from controller.fields.readers import map_of, str_of
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

if TYPE_CHECKING:
    from controller.config.settings import RuleSettings

#: How a refusal of a void after the draw for want of a supervisor begins (the console answers
#: it ERR AUTH: a login question, not the state's).
NEEDS_SUPERVISOR = "a void after the draw needs a supervisor's login at the console"


def needs_supervisor(number: int, command: str) -> str:
    """Why ``command`` (a void of the round) is refused after ``number`` was drawn to anyone
    but a supervisor (issue 15: a number voided could be drawn again)."""
    return f"the number {number} is out: {NEEDS_SUPERVISOR} (`{command}`)"


class PaigowRound:
    """The machine's model: the only holder of the table's state (see module docstring)."""

    state: str  # set by transitions.Machine

    def __init__(
        self,
        commit: Callable[[str, str, Snapshot, Snapshot, bool, dict[str, object]], None],
        settings: Callable[[], RuleSettings],
        rng_faulted: Callable[[], bool],
    ) -> None:
        self._commit_row = commit
        self._settings = settings
        self._rng_faulted = rng_faulted
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
        """5324.50(a)(3): dice where the setting requires the shaker, or while the RNG is in
        fault (docs/design.md "Certified RNG")."""
        return bool(
            self._settings().start_mode == "dice"
            or self.rng_fault is not None
            or self._rng_faulted()
        )

    def start_mode(self) -> str:
        if self._settings().start_mode == "dice":
            return "dice"
        return "dice (RNG fault)" if self.dice_required() else "rng"

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
        if self.dice_required():
            return (
                f"the RNG is in fault ({self.rng_fault or 'latched'}): the dealer enters the "
                "dice total (5324.50(a)(3)): `dice T`"
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
        return None

    def why_hand_exposed(self, event: EventData) -> str | None:
        seat = int(event.kwargs["seat"])
        if seat not in self.record.exposed_seats:
            return f"no tile of seat {seat} was exposed by the dealer (5324.50(i)(1))"
        if seat in self.record.voided_seats:
            return f"seat {seat}'s hand is already void"
        return None

    def why_exposure_voids(self, event: EventData) -> str | None:
        """(i)(2): an exposed house, bank, dead or unwagered tile voids every hand. It is only
        ever after the draw, so like any void after it (issue 15) only a supervisor may say so
        (the exposure is the reason; docs/paigow-table.md "Voids after the draw")."""
        whose = str(event.kwargs["whose"])
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

    def commit(self, event: EventData) -> None:
        """Compute the transition's outcome, journal it (may raise: the state then stays), and
        keep it. The machine sets ``state`` after this returns."""
        trigger = event.event.name
        assert event.transition is not None
        dest = str(event.transition.dest)
        record = copy.deepcopy(self.record)  # lists are copied too
        rotation = self.rotation
        kwargs = dict(event.kwargs)
        kind = "paigow.state"
        closing = False
        next_round = self.round_id
        extra: dict[str, object] = {}
        if trigger == "open" or (trigger == "shuffled" and self.state == "inspection"):
            record.start_of_game = True
            rotation = self._restacked(rotation)
        elif trigger == "idle":
            rotation = self._restacked(rotation)
        elif trigger == "expose_stacking":
            record.reshuffles += 1
            record.reshuffle_pending = True
        elif trigger == "shuffled":
            record.reshuffle_pending = False
        elif trigger in ("bank", "cobank"):
            record.bank = "player" if trigger == "bank" else "cobank"
            record.bank_seat = int(kwargs["seat"])
        elif trigger == "no_bank":
            record.bank, record.bank_seat = "house", None
        elif trigger == "no_more_bets":
            record.style, record.style_by = DEFAULT_DELIVERY_STYLE, "default"
        elif trigger == "style":
            record.style, record.style_by = str(kwargs["style"]), "bank"
        elif trigger in ("draw", "dice"):
            if trigger == "draw":
                kind = "paigow.drawn"
                record.mode, record.number, record.raw = (
                    "rng",
                    int(kwargs["number"]),
                    str(kwargs["raw"]),
                )
                record.start_ordinal = record.number
            else:
                kind = "paigow.dice"
                dice = [int(d) for d in kwargs["dice"]]
                total = sum(dice) if len(dice) == 3 else dice[0]
                record.mode, record.dice, record.dice_total = "dice", dice, total
                record.start_ordinal = record.number = (total - 1) % POSITIONS + 1  # (e)(3)
                if self.dragons_eye():
                    record.triples = len(set(dice)) == 1
            seat = record.bank_seat if record.bank != "house" else None
            record.start_position = physical_position(record.start_ordinal, seat)
            record.counted_from = "dealer" if seat is None else f"bank (seat {seat})"
        elif trigger == "expose_player":
            seat = int(kwargs["seat"])
            if seat not in record.exposed_seats:
                record.exposed_seats.append(seat)
        elif trigger == "void_hand":
            record.voided_seats.append(int(kwargs["seat"]))
        elif trigger == "surrender":
            record.surrendered_seats.append(int(kwargs["seat"]))
        elif trigger == "wager":
            apply_wager(record, kwargs.get("seat"), int(kwargs["area"]), int(kwargs["cents"]))
        elif trigger == "tiles":
            key = str(kwargs["whose"])
            if key in record.hands:
                extra["replaces"] = record.hands[key]
            record.hands[key] = set_hands(
                record, kwargs["whose"], list(kwargs["tiles"]), kwargs.get("high"), self._settings()
            )
        elif trigger in ("settled", "void", "expose_void"):
            closing = True
            kind = "paigow.settled" if trigger == "settled" else "paigow.voided"
            if trigger == "void":
                record.closing_reason = str(kwargs.get("reason") or "voided by the dealer")
            elif "settlement_seq" in kwargs:
                record.settlement_seq = int(kwargs["settlement_seq"])
            if trigger == "expose_void":
                whose = str(kwargs["whose"])
                record.closing_reason = (
                    f"a tile of the {whose} hand was exposed: every hand is "
                    "void and the tiles are re-shuffled (5324.50(i)(2))"
                )
            banker = record.bank_seat if record.bank != "house" else None
            rotation = rotation.next_state(ALL_SEATS, banker)
            next_round = self.round_id + 1
            extra["record"] = asdict(record)
        if closing:
            new_record = RoundRecord(round_id=next_round)
        else:
            new_record = record
        after = Snapshot.of(dest, next_round, new_record, rotation)
        self._commit_row(kind, trigger, self.snapshot(), after, closing, extra)
        self.record, self.rotation, self.round_id = new_record, rotation, next_round

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


def build_machine(model: PaigowRound, initial: str = "inspection") -> Machine:
    """The machine over ``model``: no auto transitions, guards in conditions, one ``before``."""
    transitions = [
        {
            "trigger": t.trigger,
            "source": t.source,
            "dest": t.dest,
            "conditions": [model._ok(c) for c in t.conditions],  # noqa: SLF001 - own model
            "unless": [model._ok(c) for c in t.unless],  # noqa: SLF001
            "before": "commit",
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
