"""The baccarat table's journal kinds and its persistent data (``ShoeData``, serialised in
snapshot rows; ``Replay``, the replay's bookkeeping).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Final

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
STOPPED_BY_FAULT: Final = frozenset({"shuffled", "no_more_bets", "bet", "curator"})
K_REFUSED: Final = "baccarat.refused"  # an input the state did not allow (skipped on replay)
K_SIM: Final = "baccarat.sim"  # test/technician stimulus (never replayed)
K_RECOVERY: Final = "baccarat.recovery"
K_SNAPSHOT: Final = "baccarat.snapshot"
#: Rows that are not decisions of the state machine (everything else "baccarat.*" is one).
NOT_DECISIONS: Final = frozenset({K_BUTTON, K_ACTION, K_REFUSED, K_SIM, K_RECOVERY,
                                  "baccarat.unknown_event"})

SNAPSHOT_VERSION: Final = 1


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
    #: This shoe's results for the scoreboard, one ``roads.Result.code`` per coup ("B", "Tpn").
    results: list[str] = field(default_factory=list)
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
class Replay:
    """Replay bookkeeping: how many decision rows the journal already holds for this input."""

    budget: int = 0
    written: int = 0
