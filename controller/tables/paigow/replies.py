"""What the pai gow table says an accepted input changed, in the regulation's words, as data: a
template per reply (``str.format`` fields: ``rid`` the round, ``seat``, ``whose``, ``reason``,
``reshuffles``, ``bank_seat``). :class:`controller.tables.paigow.table.PaigowTable` chooses the
reply (the trigger, or ``trigger/variant`` where the state says more) and fills the fields; the
console and the tests read these words, so they change only on purpose."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

CONFIRMATIONS: Final[Mapping[str, str]] = {
    "open": "tiles face down for the wash and the eight stacks (5324.50(d)(3)-(4))",
    "idle": "tiles face up in 16 pairs for inspection (5324.50(d)(7))",
    "shuffled": "the wash is done and the eight stacks formed: betting is open",
    "shuffled/rewash": (
        "the wash is done and the eight stacks formed (the (d)(5) re-wash is done): betting is open"
    ),
    "expose_stacking": (
        "a tile was exposed while stacking: every tile is re-washed and re-stacked "
        "(5324.50(d)(5)); {reshuffles} this round"
    ),
    "bank": (
        "seat {seat} banks round {rid}: the count starts at seat {seat}'s "
        "position (5324.50(g)(10)); the dealer may wager against it (g)(8)"
    ),
    "cobank": (
        "seat {seat} co-banks round {rid}: the house covers half of the winning "
        "wagers, and the dealer sets the bank's hands (5324.50(g)(5))"
    ),
    "no_bank": "the house banks round {rid}",
    "no_more_bets/bank": (
        "no more bets: seat {bank_seat} (the bank) may choose the style of "
        "delivery (`style NAME`); draw deals house way from the right"
    ),
    "no_more_bets/dice": "no more bets: enter the dice total (`dice T`)",
    "no_more_bets/rng": "no more bets: press draw",
    "dealt": (
        "the deal is complete: the number is blanked (5324.50(e)(6)); the players set their hands"
    ),
    "hands_set": "the players' hands are set: the dealer's tiles are turned over (5324.50(f)(3))",
    "hands_set/bank": (
        "the players' hands are set: the bank's tiles are turned over (5324.50(f)(3))"
    ),
    "expose_player": (
        "a tile of the hand of area {seat} was exposed: {player} may void that hand without "
        "looking (`void seat {seat}`) or play it (5324.50(i)(1))"
    ),
    "void_hand": (
        "the hand of area {seat} is void; {player}'s wager on it is returned (5324.50(i)(1))"
    ),
    "surrender": (
        "area {seat} surrenders: its wager is collected and its tiles stacked "
        "unexposed (5324.50(f)(5))"
    ),
    "expose_void": (
        "round {rid} voided: a tile of the {whose} was exposed;"
        " every hand is void and the tiles are re-shuffled (5324.50(i)(2))"
    ),
    "void": "round {rid} voided ({reason}): every wager stands returned",
    "settled": ("round {rid} settled: the dealer's confirmation (no wagers or tiles were entered)"),
}

#: Why a round voided by an exposed tile after its draw was voided, as its alarm says.
EXPOSURE_VOID_REASON: Final = "a tile of the {whose} was exposed (5324.50(i)(2))"


def exposed_hand(kwargs: Mapping[str, object]) -> str:
    """The hand an ``expose dealer|bank|dead|unwagered [N]`` names: ``unwagered hand of area
    4``, ``dealer hand``."""
    area = kwargs.get("area")
    return f"{kwargs.get('whose')} hand" + ("" if area is None else f" of area {area}")


def confirmation(reply: str, **fields: object) -> list[str]:
    """The lines of ``reply`` with its fields filled (none for a reply not in the table: the
    state line says it all)."""
    template = CONFIRMATIONS.get(reply)
    return [] if template is None else [template.format(**fields)]
