"""The pai gow table's definition as data: the layout of its positions, the states, the
transitions and their guards' names, the inputs that send each trigger, the recovery rule per
state and the console words. Pure data and small pure functions; the machine
(:mod:`controller.tables.paigow.machine`), the table (:mod:`controller.tables.paigow.table`) and
the generated docs (:mod:`controller.tables.paigow.markdown`) are built from it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Final

# ---------------------------------------------------------------------------------------------
# The table's layout
# ---------------------------------------------------------------------------------------------

#: Betting positions, numbered counter-clockwise from the one farthest to the dealer's right
#: (5324.50(a)(1): no more than six).
SEATS: Final = 6
#: Physical positions counter-clockwise from the dealer: 1 the dealer, 2-7 seats 1-6, 8 the dead
#: hand: eight hands of four tiles (5324.50(e)(3)-(4)). Seat lamps are keyed by seat (1-6), so
#: a start at the dealer or the dead hand lights no lamp.
DEALER_POSITION: Final = 1
DEAD_HAND_POSITION: Final = 8
POSITIONS: Final = 8
ALL_SEATS: Final = tuple(range(1, SEATS + 1))


def physical_position(ordinal: int, bank_seat: int | None) -> int:
    """The physical position (1 dealer, 2-7 seats, 8 dead hand) of the ``ordinal``-th position
    counted counter-clockwise from the dealer ((e)(3)) or, when a player banks, from the bank
    ((g)(10); 13:69F-10.8(j))."""
    base = DEALER_POSITION if bank_seat is None else bank_seat + 1
    return (base - 1 + ordinal - 1) % POSITIONS + 1


def seat_of(position: int | None) -> int | None:
    """The seat (1-6; seat lamps are keyed by seat) at a physical position, None for the
    dealer and the dead hand, which have no lamp."""
    if position is None or not DEALER_POSITION < position < DEAD_HAND_POSITION:
        return None
    return position - 1


def position_name(position: int) -> str:
    if position == DEALER_POSITION:
        return "dealer"
    if position == DEAD_HAND_POSITION:
        return "dead hand"
    return f"seat {position - 1}"


def start_words(ordinal: int, bank_seat: int | None, position: int) -> str:
    """The start of the deal in words that cannot be misread, as the console's draw reply and
    the monitor say it: ``count 3 from the bank (seat 1): first stack to seat 3`` (the count
    starts at the bank's position, else the dealer's: 5324.50(e)(3), (g)(10))."""
    origin = "the dealer" if bank_seat is None else f"the bank (seat {bank_seat})"
    name = position_name(position)
    to = name if name.startswith("seat") else f"the {name}"
    return f"count {ordinal} from {origin}: first stack to {to}"


# ---------------------------------------------------------------------------------------------
# The machine definition (data: the docs and the tests are generated from it)
# ---------------------------------------------------------------------------------------------

#: (state, what is happening at the table, regulation)
STATES: Final[tuple[tuple[str, str, str], ...]] = (
    ("inspection", "idle table: tiles face up in 16 pairs for inspection", "(d)(2), (d)(7)"),
    (
        "washing",
        "tiles face down: the wash and the eight stacks; (d)(5) reshuffle on exposure",
        "(d)(3)-(6)",
    ),
    ("betting", "stacks formed; wagers placed; the bank offered in rotation", "(c)(3), (g)(2)-(6)"),
    (
        "bank_style",
        '"no more bets"; a player banks and may choose the style of delivery',
        "(e)(1), (g)(9)",
    ),
    (
        "no_more_bets",
        '"no more bets"; style fixed; waiting for the draw or the dice total',
        "(e)(1), (a)(3)-(4)",
    ),
    (
        "dealing",
        "number shown; tiles dealt; unwagered stacks collected with the dead hand",
        "(e)(2)-(5), (g)(10)-(12)",
    ),
    (
        "setting_hands",
        "deal complete, number blanked; players set their hands",
        "(e)(6), (f)(1)-(2), (h)",
    ),
    (
        "dealer_hands",
        "dealer's or bank's hands set; surrender; exposure and settlement",
        "(f)(3)-(11), (g)(14)-(18)",
    ),
)
STATE_NAMES: Final = tuple(s for s, _, _ in STATES)
#: States in which a round is under way (configuration changes are refused).
IN_ROUND: Final = frozenset(STATE_NAMES[2:])


@dataclass(frozen=True)
class Step:
    """One transition of the machine: ``trigger`` from ``source`` to ``dest`` when every guard
    in ``conditions`` allows it (each guard is a ``why_<name>`` method of :class:`PaigowRound`),
    and the ``effect`` it has on the round's record and the bank rotation (a name in
    :data:`controller.tables.paigow.machine.EFFECTS`; ``state_only``: the state alone changes)."""

    trigger: str
    source: str
    dest: str
    conditions: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()
    _: KW_ONLY
    effect: str


_PRE_DRAW = ("bank_style", "no_more_bets")
_DEALT = ("dealing", "setting_hands")

TRANSITIONS: Final[tuple[Step, ...]] = (
    Step("open", "inspection", "washing", effect="new_game"),
    Step("shuffled", "inspection", "betting", effect="new_game"),
    Step("shuffled", "washing", "betting", effect="stacks_formed"),
    Step("idle", "washing", "inspection", effect="restack"),
    *(
        Step("expose_stacking", s, "washing", effect="rewash")
        for s in ("washing", "betting", *_PRE_DRAW)
    ),
    Step("bank", "betting", "betting", ("bank_allowed",), effect="player_bank"),
    Step("cobank", "betting", "betting", ("cobank_allowed",), effect="co_bank"),
    Step("no_bank", "betting", "betting", effect="house_bank"),
    Step(
        "no_more_bets",
        "betting",
        "bank_style",
        ("player_banks", "wagers_consistent"),
        effect="default_style",
    ),
    Step(
        "no_more_bets",
        "betting",
        "no_more_bets",
        ("wagers_consistent",),
        ("player_banks",),
        effect="default_style",
    ),
    Step("style", "bank_style", "no_more_bets", ("style_offered",), effect="style_chosen"),
    *(Step("draw", s, "dealing", ("rng_mode",), effect="rng_start") for s in _PRE_DRAW),
    *(
        Step("dice", s, "dealing", ("dice_mode", "dice_complete"), effect="dice_start")
        for s in _PRE_DRAW
    ),
    Step("dealt", "dealing", "setting_hands", effect="state_only"),
    *(Step("expose_player", s, s, ("players_tile",), effect="seat_exposed") for s in _DEALT),
    *(Step("void_hand", s, s, ("hand_exposed",), effect="hand_void") for s in _DEALT),
    *(
        Step("expose_void", s, "washing", ("exposure_voids",), effect="void_by_exposure")
        for s in (*_DEALT, "dealer_hands")
    ),
    Step("wager", "betting", "betting", ("wager_allowed",), effect="wager"),
    Step("hands_set", "setting_hands", "dealer_hands", effect="state_only"),
    Step("tiles", "dealer_hands", "dealer_hands", ("tiles_allowed",), effect="hands"),
    Step("surrender", "dealer_hands", "dealer_hands", ("surrender_allowed",), effect="surrender"),
    Step("settled", "dealer_hands", "washing", ("entries_complete",), effect="settle"),
    *(Step("void", s, "washing", ("void_allowed",), effect="void") for s in STATE_NAMES[2:]),
)
TRIGGERS: Final = tuple(dict.fromkeys(t.trigger for t in TRANSITIONS))


@dataclass(frozen=True)
class Input:
    """Which device sends a trigger: the dealer's button, the console command, the data."""

    button: str
    console: str
    data: str


#: Every trigger and the inputs that send it (docs/paigow-table.md; no trigger lacks a device).
INPUTS: Final[Mapping[str, Input]] = {
    "open": Input("-", "`open`", "none: the first player arrived (d)(3)"),
    "shuffled": Input("`shuffled`", "`sim button shuffled`", "none: wash done, 8 stacks formed"),
    "idle": Input("-", "`idle`", "none: no gaming activity (d)(7)"),
    "expose_stacking": Input("-", "`expose stacking`", "none: a tile turned over (d)(5)"),
    "bank": Input("-", "`bank seat N`", "seat 1-6 that accepts the bank (g)(3)"),
    "cobank": Input("-", "`cobank seat N`", "seat 1-6, house covers half (g)(5)"),
    "no_bank": Input("-", "`no-bank`", "none: the house banks"),
    "no_more_bets": Input("`no_more_bets`", "`sim button no_more_bets`", "none"),
    "wager": Input(
        "-",
        "`wager SEAT CENTS [AREA]`, `wager dealer CENTS`",
        "stake in whole cents on area 1-6 (default the seat's own; two adjacent "
        "areas (h), the bank's chips on its own area only (g)(6)); the dealer's "
        "wager against a player bank (g)(8); 0 withdraws",
    ),
    "style": Input("-", "`style NAME`", "one of the ten styles (g)(11)(i)-(x)"),
    "draw": Input("`draw`", "`sim button draw`", "none; the RNG's number 1-8 and raw bytes"),
    "dice": Input("-", "`dice T` or `dice A B C`", "total 3-18, or three dice 1-6 (a)(3)"),
    "dealt": Input("`dealt`", "`sim button dealt`", "none: deal and (e)(5) collection done"),
    "expose_player": Input("-", "`expose player N`", "seat 1-6 whose tile the dealer exposed"),
    "void_hand": Input("-", "`void seat N`", "seat 1-6 that voids its hand (i)(1)"),
    "expose_void": Input(
        "-",
        "`expose dealer|bank|dead|unwagered [N]`",
        "whose tile was exposed (i)(2); it voids the round after the draw: "
        "only a supervisor, at the console (raises an alarm)",
    ),
    "hands_set": Input("`hands_set`", "`sim button hands_set`", "none"),
    "tiles": Input(
        "-",
        "`tiles dealer|bank|N T1 T2 T3 T4 [HIGH=Ta,Tb]`, `hands bank|N Ta-Tb Tc-Td`",
        "four tiles; the dealer's (and a co-bank's) split computed by the house way "
        "(f)(4), (g)(5); a player's or bank's high hand as set (f)(1), (f)(3)",
    ),
    "surrender": Input("-", "`surrender seat N`", "seat 1-6 (f)(5)"),
    "settled": Input(
        "`settled`",
        "`sim button settled`",
        "none; with entries, the settlement in cents (f)(7)-(10), (g)(14)-(18)",
    ),
    "void": Input(
        "`void` (optional)",
        "`void [REASON]`",
        "none: the dealer voids the round; after the draw only a supervisor, at the "
        "console, with a reason (raises an alarm)",
    ),
}

#: The dealer's buttons that move a round on (the void button aborts one): a refusal names the
#: one that waits, and why.
BUTTON_TRIGGERS: Final = frozenset(
    t for t, i in INPUTS.items() if i.button.startswith("`") and t != "void"
)

#: How a person sends each trigger, as a refusal names it: the dealer's button or the console
#: command (never the trigger's own name: docs/console.md, "Refusals").
SAID: Final[Mapping[str, str]] = {
    "open": "`open`",
    "shuffled": "the shuffled button",
    "idle": "`idle`",
    "expose_stacking": "`expose stacking`",
    "bank": "`bank seat N`",
    "cobank": "`cobank seat N`",
    "no_bank": "`no-bank`",
    "no_more_bets": "the no_more_bets button",
    "wager": "`wager SEAT CENTS [AREA]`",
    "style": "`style NAME`",
    "draw": "the draw button",
    "dice": "`dice T`",
    "dealt": "the dealt button",
    "expose_player": "`expose player N`",
    "void_hand": "`void seat N`",
    "expose_void": "`expose dealer|bank|dead|unwagered`",
    "hands_set": "the hands_set button",
    "tiles": "`tiles ...` or `hands ...`",
    "surrender": "`surrender seat N`",
    "settled": "the settled button",
    "void": "`void [REASON]`",
}


def said(triggers: list[str] | tuple[str, ...]) -> str:
    """The inputs that send ``triggers``, in the person's words, once each, in order."""
    return ", ".join(dict.fromkeys(SAID[t] for t in triggers))


#: What recovery does with a round found in each state after a restart, and why.
RECOVERY_RULES: Final[Mapping[str, tuple[str, str]]] = {
    "inspection": ("resume", "no round is under way; the tiles are face up"),
    "washing": ("resume", "no wager and no number yet; a pending (d)(5) reshuffle stays pending"),
    "betting": (
        "resume",
        "the wagers (and their entries) and the bank's marker are on the layout; nothing drawn",
    ),
    "bank_style": ("resume", "no number drawn yet; the bank may still choose the style"),
    "no_more_bets": ("resume", "no number drawn yet; the draw or dice entry is still to come"),
    "dealing": ("resume", "the journaled number is shown again: a power cycle never re-rolls"),
    "setting_hands": ("resume", "the deal is complete and the number was blanked (e)(6)"),
    "dealer_hands": (
        "resume",
        "the hands are on the layout; the entered tiles are kept; settlement continues",
    ),
    "(unreadable)": (
        "void",
        "a snapshot this firmware cannot read: the round is voided and the "
        "tiles re-washed, never guessed",
    ),
}

#: Console words :meth:`PaigowTable.action` takes.
ACTION_NAMES: Final = (
    "open",
    "idle",
    "no-bank",
    "void",
    "bank",
    "cobank",
    "surrender",
    "style",
    "dice",
    "expose",
    "sim",
    "test-mode",
    "wager",
    "tiles",
    "hands",
    "shift",
)

#: What ``help`` says of each console action: syntax, what it does, an example to type.
ACTION_HELP: Final[Mapping[str, tuple[str, str, str]]] = {
    "open": (
        "open",
        "the first player arrived: tiles face down for the wash (5324.50(d)(3))",
        "open",
    ),
    "idle": ("idle", "no gaming activity: tiles face up for inspection (5324.50(d)(7))", "idle"),
    "bank": ("bank seat N", "seat N accepts the bank this round (5324.50(g)(3))", "bank seat 2"),
    "cobank": (
        "cobank seat N",
        "seat N banks with the house covering half (5324.50(g)(5))",
        "cobank seat 2",
    ),
    "no-bank": ("no-bank", "the house banks this round (undoes bank/cobank)", "no-bank"),
    "wager": (
        "wager SEAT CENTS [AREA] | wager dealer CENTS",
        "enter a stake in whole cents while betting; 0 withdraws it",
        "wager 3 2500",
    ),
    "style": (
        "style NAME",
        "a banking player's style of delivery (5324.50(g)(9)): "
        + ", ".join(("house_way_from_right", "jung_quat", "...")),
        "style jung_quat",
    ),
    "dice": (
        "dice TOTAL | dice A B C",
        "the dice total when the dealer shakes the dice (5324.50(a)(3))",
        "dice 11",
    ),
    "expose": (
        "expose stacking | player N | dealer | bank | dead | unwagered [N]",
        "a tile was exposed: (d)(5) re-wash, (i)(1) the player may void, (i)(2) every "
        "hand void (after the draw: a supervisor, raising an alarm)",
        "expose player 3",
    ),
    "void": (
        "void [REASON] | void seat N",
        "void the round (after the draw: a supervisor, with a reason) or seat N's "
        "exposed hand (5324.50(i)(1))",
        "void seat 3",
    ),
    "surrender": (
        "surrender seat N",
        "seat N surrenders its wager (5324.50(f)(5))",
        "surrender seat 4",
    ),
    "tiles": (
        "tiles dealer|bank|N T1 T2 T3 T4 [HIGH=Ta,Tb]",
        "a hand's four tiles; the dealer's set by the house way (5324.50(f)(4))",
        "tiles dealer 1-2 2-4 6-6 5-5",
    ),
    "hands": (
        "hands bank|N Ta-Tb Tc-Td",
        "a hand as the player set it: high, then low",
        "hands 3 4-5,6-6 1-3,2-2",
    ),
    "sim": (
        "sim button NAME",
        "press a dealer's button on the simulated table",
        "sim button shuffled",
    ),
    "shift": (
        "shift start",
        "a supervisor starts a shift: the count of voids after a draw starts again",
        "shift start",
    ),
}

#: (i)(2): an exposed tile of these voids every hand and forces a reshuffle.
VOIDING_EXPOSURES: Final = ("dealer", "bank", "dead", "unwagered")


#: While the application holds a fault (journal, program, settings: controller/app.py) play
#: stops; the dealer may still void the round or a hand and report an exposed tile.
PLAY_UNDER_FAULT: Final = frozenset(
    {"void", "void_hand", "expose_void", "expose_player", "expose_stacking"}
)

#: The triggers that start a new round: the wash done and the eight stacks formed
#: (5324.50(d)(4)) open the next round's betting; refused while a UPS says the power is failing.
NEW_ROUND_TRIGGERS: Final = frozenset({"shuffled"})
