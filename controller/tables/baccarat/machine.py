"""The baccarat table's certified sequence, 9 NYCRR 5324.20: the states, the transitions and
their guards (``TableModel``: each a reason, or None when it allows), what recover() does in each
state, and the Mermaid diagram docs/baccarat-table.md holds a copy of.
"""

from __future__ import annotations

from typing import Final

from transitions import Machine

from controller.games.baccarat.shoe import CoupStep
from controller.games.baccarat.vig_ledger import VigLedger
from controller.tables.kernel.refusal import Guards

# --- the certified sequence ---------------------------------------------------------------------

#: Every state, in the order of a shoe. docs/baccarat-table.md describes each.
STATES: Final = (
    "shuffle",  # 5324.20(c)(1): shuffling and inspecting; waits for the "shuffled" button
    "burn",  # (e): first card face up, as many more burned; also (i)(1)(i), (i)(3)
    "offering",  # (f)(1): the shoe offered from seat 1 counter-clockwise
    "betting",  # (b)(2)-(3): wagers open
    "dealing",  # (f)(4)-(5): "no more bets", "cards": the four initial cards
    "player_third",  # (f)(11): the player's hand draws
    "banker_third",  # (f)(12)-(13): the banker's hand draws
    "settling",  # (g)(1)-(2): result announced; losing wagers collected, winners paid
    "passing",  # (h)(1)-(2): the shoe passes (the banker's hand lost, or the curator's option)
    "halted",  # integrity fault: no play until a technician clears it
)

COUP_STATES: Final = ("dealing", "player_third", "banker_third")

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
    (
        "void_round",
        ("betting", "dealing", "player_third", "banker_third", "settling"),
        "shuffle",
        (),
    ),
    ("halt", STATES, "halted", ()),
    ("technician_clear", "halted", "shuffle", ()),
)

#: Which input sends each trigger and what it carries (docs/baccarat-table.md is built from it).
TRIGGER_INPUTS: Final[dict[str, str]] = {
    "shuffled": "dealer button `shuffled` (no data)",
    "burn_card": "shoe frame `$CARD,seq,SID,RS` (the card)",
    "accept_shoe": "console `curator SEAT` (the seat that accepts)",
    "nobody_accepts": "console `nobody` (no player accepts: (h)(2))",
    "pass_shoe": "console `pass [ordered]` (curator's option, or ordered (h)(1)(ii))",
    "remedy_burn": "console `remedy burn` (after a disclosed card)",
    "remedy_dead_hand": "console `remedy dead` (after a disclosed card)",
    "no_more_bets": "dealer button `no_more_bets` (no data)",
    "deal_card": "shoe frame `$CARD,seq,SID,RS` (the card)",
    "settled": "dealer button `settled` (no data)",
    "void_round": "shoe `$COVR` behind the last card, too few cards (i)(4), console `void`",
    "halt": "foreign card, `$FLT,seq,SID,UNREAD`, unshuffled sequence, shoe power-cycle mid-coup",
    "technician_clear": "console `clear` (technician)",
}


#: How a person sends each trigger, as a refusal names it: the dealer's button, the console
#: command or the shoe (never the trigger's own name: docs/console.md, "Refusals"). ``halt`` is
#: nobody's input: the table halts on an integrity fault.
SAID: Final[dict[str, str]] = {
    "shuffled": "the shuffled button",
    "burn_card": "a card from the shoe",
    "accept_shoe": "`curator SEAT`",
    "nobody_accepts": "`nobody`",
    "pass_shoe": "`pass [ordered]`",
    "remedy_burn": "`remedy burn`",
    "remedy_dead_hand": "`remedy dead`",
    "no_more_bets": "the no_more_bets button",
    "deal_card": "a card from the shoe",
    "settled": "the settled button",
    "void_round": "`void [REASON]`",
    "technician_clear": "`clear`",
    "bet": "`bet SEAT WAGER CENTS`",  # not a trigger: a wager while betting
}


#: Why an input waits for a disclosed card's remedy, 5324.20(i)(1).
DISCLOSED: Final = "a disclosed card: choose `remedy burn` or `remedy dead` first (5324.20(i)(1))"


class TableModel:
    """The state machine's model: the state, the facts its guards read and the guards. The table
    fills the facts in before it fires a trigger; the guards only read them (nothing here can
    fail).

    Each guard (``why_*``) returns why it holds its transitions back, in the words of the
    regulation and the buttons and commands that put it right (never a trigger's or a guard's
    name), or None when it allows them: the same function is the machine's condition and the
    refusal's reason (controller/tables/kernel/refusal.py). A guard reads the facts, not its
    event: no baccarat input carries data a guard weighs.
    """

    state: str

    def __init__(self) -> None:
        self.ledger = VigLedger()
        self.burn_left = 1
        self.burn_reason = "shoe"
        self.expecting = CoupStep.PLAYER_CARD
        self.shoe_done = False
        self.compelled_pass = False
        self.pending_disclosed = False
        self.pending_count = 0
        self.faults: tuple[str, ...] = ()
        self.shoe_faults: tuple[str, ...] = ()
        self.shoe_unconfirmed: str | None = None
        #: The guards by the names TRANSITIONS gives them, each evaluated once per verdict.
        self.guards = Guards(
            {
                "vig_clear": self.why_vig_clear,
                "burn_unfinished": self.why_burn_unfinished,
                "burn_opens_shoe": self.why_burn_opens_shoe,
                "disclosed_pending": self.why_disclosed_pending,
                "dead_hand_allowed": self.why_dead_hand_allowed,
                "can_deal": self.why_can_deal,
                "expects_initial": self.why_expects_initial,
                "expects_player_draw": self.why_expects_player_draw,
                "expects_banker_draw": self.why_expects_banker_draw,
                "coup_complete": self.why_coup_complete,
                "shoe_finished": self.why_shoe_finished,
                "must_pass": self.why_must_pass,
            }
        )

    # -- what stops play, and the reason of a guard that only routes an input -------------------

    def _why_no_play(self) -> str | None:
        """A table fault, a shoe fault or a shoe session not yet confirmed: no card is dealt."""
        if self.faults:
            return f"the table is halted: {'; '.join(self.faults)} (`clear` once it is put right)"
        if self.shoe_faults:
            return f"the shoe reports a fault: {', '.join(self.shoe_faults)}"
        if self.shoe_unconfirmed is not None:
            return f"a new shoe session {self.shoe_unconfirmed}: confirm it with `shoe resume`"
        return None

    def _not_now(self) -> str:
        """Why an input is held back when no guard of its own says more: what stops play, a
        disclosed card awaiting its remedy, or not in this state."""
        return (
            self._why_no_play()
            or (DISCLOSED if self.pending_disclosed else None)
            or f"not now (state {self.state})"
        )

    # -- guards: the reason when refused, None when allowed -------------------------------------

    def why_vig_clear(self, event: object) -> str | None:
        """5324.20(d)(2): all deferred vigorish collected before the cards are reshuffled."""
        owed = self.ledger.by_seat
        if not owed:
            return None
        each = ", ".join(
            f"seat {seat} ${cents // 100}.{cents % 100:02d}" for seat, cents in sorted(owed.items())
        )
        return (
            f"deferred vigorish is owed ({each}): collect it before the cards are"
            f" reshuffled, `collect {min(owed)}` (5324.20(d)(2))"
        )

    def why_burn_unfinished(self, event: object) -> str | None:
        return None if self.burn_left > 0 else self._not_now()

    def why_burn_opens_shoe(self, event: object) -> str | None:
        return None if self.burn_reason == "shoe" else self._not_now()

    def why_disclosed_pending(self, event: object) -> str | None:
        return None if self.pending_disclosed else self._not_now()

    def why_dead_hand_allowed(self, event: object) -> str | None:
        blocked = self._why_no_play()
        if blocked is not None:
            return blocked
        return None if self.pending_disclosed else f"not now (state {self.state})"

    def why_can_deal(self, event: object) -> str | None:
        return self._why_no_play() or (DISCLOSED if self.pending_disclosed else None)

    def why_expects_initial(self, event: object) -> str | None:
        initial = self.expecting in (CoupStep.PLAYER_CARD, CoupStep.BANKER_CARD)
        return None if initial else self._not_now()

    def why_expects_player_draw(self, event: object) -> str | None:
        return None if self.expecting is CoupStep.PLAYER_DRAWS else self._not_now()

    def why_expects_banker_draw(self, event: object) -> str | None:
        return None if self.expecting is CoupStep.BANKER_DRAWS else self._not_now()

    def why_coup_complete(self, event: object) -> str | None:
        return None if self.expecting is CoupStep.COMPLETE else self._not_now()

    def why_shoe_finished(self, event: object) -> str | None:
        return None if self.shoe_done else self._not_now()

    def why_must_pass(self, event: object) -> str | None:
        return None if self.compelled_pass else self._not_now()


def build_machine(model: TableModel, initial: str = "shuffle") -> Machine:
    """The certified sequence on ``model``: no auto transitions, its guards in ``conditions``
    (each handed the machine's event, which it does not read)."""
    machine = Machine(
        model=model,
        states=list(STATES),
        initial=initial,
        auto_transitions=False,
        send_event=True,
        ignore_invalid_triggers=False,
    )
    for trigger, source, dest, conditions in TRANSITIONS:
        machine.add_transition(
            trigger,
            list(source) if isinstance(source, tuple) else source,
            dest,
            conditions=[model.guards.ok(c) for c in conditions],
        )
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


#: What recover() does in each state (docs/baccarat-table.md repeats it).
RECOVERY_RULES: Final[dict[str, str]] = {
    "shuffle": "resume: wait for the shuffled button (deferred vigorish still owed stays owed)",
    "burn": "resume: the same face-up card and the cards burned so far; the shoe resends the rest",
    "offering": "resume: the shoe is offered again from the seat the journal shows",
    "betting": "resume: the wagers journaled for this coup stand",
    "dealing": "resume: the same initial cards; the shoe resends any card not acknowledged",
    "player_third": "resume: the player's hand still draws its third card",
    "banker_third": "resume: the banker's hand still draws its third card",
    "settling": "resume: the result and the settlement rows stand; wait for settled",
    "passing": "resume: the shoe is offered to the next seat",
    "halted": "resume halted: the fault stays until a technician clears it",
}
