"""The baccarat table's journal kinds and its persistent data (``ShoeData``, serialised in
snapshot rows; ``Replay``, the replay's bookkeeping).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, NotRequired, TypedDict, TypeVar

from controller.fields.readers import (
    FieldError,
    Fields,
    as_map,
    as_str,
    bool_of,
    int_of,
    ints_of,
    opt_int_of,
    opt_list_of,
    opt_map_of,
    opt_str_of,
    str_of,
    strs_of,
)

T = TypeVar("T")

# --- journal kinds ------------------------------------------------------------------------------

#: Inputs, journaled before they are acted on and replayed by recover().
K_SESSION: Final = "shoe.session"
K_FRAME: Final = "shoe.frame"
K_BUTTON: Final = "baccarat.button"
K_ACTION: Final = "baccarat.action"
INPUT_KINDS: Final = (K_SESSION, K_FRAME, K_BUTTON, K_ACTION)
#: The rows that name where the shoe's session stands (the SEQ after the newest is resumed).
#: Heartbeats have no rows (shoe protocol revision 3: they are outside the sequence).
POSITION_KINDS: Final = (K_SESSION, K_FRAME)
#: Logged as counted summaries, never replayed: refused frames, the link and the watchdog
#: belong to the process that saw them.
K_REFUSED_FRAME: Final = "shoe.refused"
K_LINK: Final = "shoe.link"
K_WATCHDOG: Final = "shoe.watchdog"
#: `remedy dead` (5324.20(i)(1)(ii)): a disclosed card is a dead hand and a coup is dealt, a
#: new coup as `no_more_bets` starts one.
DEAD_HAND_REMEDY: Final = "remedy dead"
#: Inputs that start a new coup: its cards come after them.
NEW_COUP_INPUTS: Final = frozenset({"no_more_bets", DEAD_HAND_REMEDY})
#: Inputs refused while the application holds a fault: a new shoe, a new coup, wagers, taking
#: the shoe. Cards still arriving are handled (they are physically out of the shoe).
STOPPED_BY_FAULT: Final = frozenset({"shuffled", "bet", "curator", *NEW_COUP_INPUTS})
#: Inputs that start a new shoe or a new coup: refused while a UPS says the power is failing,
#: the enclosure door or the host holds play (a coup under way is finished: its cards are out).
NEW_ROUND_INPUTS: Final = frozenset({"shuffled", *NEW_COUP_INPUTS})
K_REFUSED: Final = "baccarat.refused"  # an input the state did not allow (skipped on replay)
K_SIM: Final = "baccarat.sim"  # test/technician stimulus (never replayed)
K_RECOVERY: Final = "baccarat.recovery"
K_SNAPSHOT: Final = "baccarat.snapshot"
#: Rows that are not decisions of the state machine (everything else "baccarat.*" is one).
NOT_DECISIONS: Final = frozenset(
    {K_BUTTON, K_ACTION, K_REFUSED, K_SIM, K_RECOVERY, "baccarat.unknown_event"}
)

#: 2: compact (cards as one string, default fields left out), shoe protocol revision 2.
SNAPSHOT_VERSION: Final = 2
#: A snapshot at every shoe boundary, and at a coup boundary every this many coups.
SNAPSHOT_EVERY: Final = 10


class PendingCard(TypedDict):
    """A card held for the next hand (5324.20(i)): drawn in excess, or face up in the shoe."""

    card: str
    kind: str  # "face_up", "excess" or "player_third"
    disclosed: bool
    fate: str  # a games.baccarat Fate's value
    burn_more: NotRequired[int]  # player_third: the cards burnt if it is disclosed
    count: NotRequired[str]  # player_third: the error_card_count it was ruled under
    remedy: NotRequired[str]  # set when disclosed


@dataclass
class ShoeData:
    """Everything the table knows besides the machine's state; serialised in snapshot rows."""

    shoe_no: int = 0
    coup_no: int = 0
    round_id: int | None = None
    cards_out: list[str] = field(default_factory=list)  # every card out of this shoe, in order
    marks: list[str] = field(default_factory=list)  # "C" cover card, "H" hand complete
    burn_face_up: str | None = None
    burn_count: int | None = None
    burned: list[str] = field(default_factory=list)
    burn_reason: str = "shoe"
    coup: list[str] = field(default_factory=list)
    dead_hand: bool = False
    pending: list[PendingCard] = field(default_factory=list)  # cards held for the next hand
    face_up_next: bool = False
    bets: dict[str, dict[str, int]] = field(default_factory=dict)
    ledger: dict[str, int] = field(default_factory=dict)
    curator: int | None = None
    last_result: str = ""
    #: This shoe's results for the scoreboard, one ``roads.Result.code`` per coup ("B", "Tpn").
    results: list[str] = field(default_factory=list)
    last_winner: str = ""
    #: The last coup's totals, player then banker (the monitor's ``P 5 - B 7``); [] before one.
    last_totals: list[int] = field(default_factory=list)
    announce: tuple[str, str] = ("", "")
    compelled_pass: bool = False
    shoe_done: bool = False
    faults: list[str] = field(default_factory=list)
    shoe_faults: list[str] = field(default_factory=list)
    shoe_in_play: bool = False
    #: Coups voided with cards out (a supervisor's `void`) this shift, counted until a
    #: supervisor's `shift start` (docs/baccarat-table.md "Voids during a coup").
    voids_mid_coup: int = 0
    # A new shoe session (the SID) seen at a quiet moment, until the dealer confirms with
    # `shoe resume` that no card left the shoe while it was off (docs/design.md).
    shoe_unconfirmed: str | None = None
    # The journal rows whose settings this shoe (hands_after_cover) and this coup (the rules,
    # the irregularity readings, shoe passing) use: ConfigStore.as_of(seq). None: the current.
    shoe_settings_seq: int | None = None
    settings_seq: int | None = None

    def to_json(self) -> dict[str, object]:
        """Compact: the fields that differ from their defaults; the cards out of the shoe and
        the marks as strings (two characters a card: up to 832 bytes for 8 decks)."""
        out: dict[str, object] = {}
        blank = ShoeData()
        for name, value in self.__dict__.items():
            if value == getattr(blank, name):
                continue
            if name in ("cards_out", "marks"):
                value = "".join(value)
            out[name] = copy.deepcopy(value)
        return out

    @classmethod
    def from_json(cls, data: Fields) -> ShoeData:
        """The data of a snapshot row (:meth:`to_json`'s form: a field left out is its
        default); a field of another type is a :class:`FieldError` naming it."""
        bets = opt_map_of(data, "bets") or {}
        shown = data.get("announce") or ("", "")  # a tuple here, a list once through JSON
        if not isinstance(shown, (list, tuple)) or len(shown) != 2:
            raise FieldError(f"'announce' must be two lines, not {shown!r}")
        pending = opt_list_of(data, "pending") or []
        return cls(
            shoe_no=_or(data, "shoe_no", int_of, 0),
            coup_no=_or(data, "coup_no", int_of, 0),
            round_id=opt_int_of(data, "round_id"),
            cards_out=_split(data, "cards_out", 2),
            marks=_split(data, "marks", 1),
            burn_face_up=opt_str_of(data, "burn_face_up"),
            burn_count=opt_int_of(data, "burn_count"),
            burned=_or(data, "burned", strs_of, []),
            burn_reason=_or(data, "burn_reason", str_of, "shoe"),
            coup=_or(data, "coup", strs_of, []),
            dead_hand=_or(data, "dead_hand", bool_of, False),
            pending=[_pending(card, i) for i, card in enumerate(pending)],
            face_up_next=_or(data, "face_up_next", bool_of, False),
            bets={seat: _cents(as_map(v, f"'bets'[{seat!r}]")) for seat, v in bets.items()},
            ledger=_cents(opt_map_of(data, "ledger") or {}),
            curator=opt_int_of(data, "curator"),
            last_result=_or(data, "last_result", str_of, ""),
            results=_or(data, "results", strs_of, []),
            last_winner=_or(data, "last_winner", str_of, ""),
            last_totals=_or(data, "last_totals", ints_of, []),
            announce=(as_str(shown[0], "'announce'[0]"), as_str(shown[1], "'announce'[1]")),
            compelled_pass=_or(data, "compelled_pass", bool_of, False),
            shoe_done=_or(data, "shoe_done", bool_of, False),
            faults=_or(data, "faults", strs_of, []),
            shoe_faults=_or(data, "shoe_faults", strs_of, []),
            shoe_in_play=_or(data, "shoe_in_play", bool_of, False),
            voids_mid_coup=_or(data, "voids_mid_coup", int_of, 0),
            shoe_unconfirmed=opt_str_of(data, "shoe_unconfirmed"),
            shoe_settings_seq=opt_int_of(data, "shoe_settings_seq"),
            settings_seq=opt_int_of(data, "settings_seq"),
        )


def _or(data: Fields, key: str, read: Callable[[Fields, str], T], default: T) -> T:
    """The field ``key`` read by ``read``, or ``default`` when the snapshot leaves it out."""
    return default if data.get(key) is None else read(data, key)


def _split(data: Fields, key: str, width: int) -> list[str]:
    """A list of strings :meth:`ShoeData.to_json` wrote as one string (a card: 2 characters)."""
    value = data.get(key)
    if isinstance(value, str):
        return [value[i : i + width] for i in range(0, len(value), width)]
    return _or(data, key, strs_of, [])


def _cents(amounts: Fields) -> dict[str, int]:
    """A table of cents by name (a seat's bets, the vigorish owed by seat)."""
    return {name: int_of(amounts, name) for name in amounts}


def _pending(value: object, i: int) -> PendingCard:
    held = as_map(value, f"'pending'[{i}]")
    card: PendingCard = {
        "card": str_of(held, "card"),
        "kind": str_of(held, "kind"),
        "disclosed": bool_of(held, "disclosed"),
        "fate": str_of(held, "fate"),
    }
    if "burn_more" in held:
        card["burn_more"] = int_of(held, "burn_more")
    if "count" in held:
        card["count"] = str_of(held, "count")
    if "remedy" in held:
        card["remedy"] = str_of(held, "remedy")
    return card


@dataclass
class Replay:
    """Replay bookkeeping: how many decision rows the journal already holds for this input."""

    budget: int = 0
    written: int = 0
