"""The pai gow table's console grammar (docs/paigow-table.md): console words -> (trigger, data).
A malformed line is refused through the ``refuse`` the table passes in, which journals it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from controller.games.paigow.dealing import DELIVERY_STYLES
from controller.games.paigow.tiles import tile
from controller.tables.paigow.definition import DEALER_POSITION, SEATS, VOIDING_EXPOSURES
from controller.tables.table import RefusalCode, Refused

#: The largest stake the console takes, in cents ($1,000,000): a typo guard, not a table limit.
MAX_STAKE_CENTS: Final = 100_000_000


def _is_whole(word: str) -> bool:
    """ASCII digits only: ``str.isdigit`` also takes ``²`` or ``١``, which ``int`` refuses or
    reads as a number nobody typed at the table."""
    return word.isascii() and word.isdigit()


def _hand_words(word: str) -> list[str]:
    """One hand as typed: ``4-5,6-6``, ``4-5+6-6`` or ``4-5-6-6`` -> ``["4-5", "6-6"]``."""
    for sep in (",", "+"):
        if sep in word:
            return word.split(sep)
    pips = word.split("-")
    if len(pips) == 4:
        return [f"{pips[0]}-{pips[1]}", f"{pips[2]}-{pips[3]}"]
    return [word]


def parse_action(
    name: str, args: list[str], refuse: Callable[[str, str, str], Refused]
) -> tuple[str, dict[str, object]]:
    """Console words -> (trigger, data); a malformed line raises ``refuse(head, reason, code)``
    (the table's, which journals the refusal)."""
    words = name.split() + args
    head, rest = (words[0].lower(), words[1:]) if words else ("", [])

    def bad(reason: str, code: str = "SYNTAX") -> Refused:
        return refuse(head or "?", reason, code)

    def seat_of(tokens: list[str], usage: str) -> int:
        if len(tokens) == 2 and tokens[0] == "seat":
            tokens = tokens[1:]
        if len(tokens) != 1 or not _is_whole(tokens[0]):
            raise bad(f"usage: {usage}")
        seat = int(tokens[0])
        if not 1 <= seat <= SEATS:
            raise bad(f"seat must be 1-{SEATS}, got {seat}", RefusalCode.RANGE)
        return seat

    if head in ("open", "idle", "no-bank") and not rest:
        return head.replace("-", "_"), {}
    if head == "void":
        if rest[:1] == ["seat"] or (len(rest) == 1 and rest[0].isdigit()):
            return "void_hand", {"seat": seat_of(rest, "void [REASON] | void seat N")}
        return "void", {"reason": " ".join(rest)[:200] or None}
    if head in ("bank", "cobank"):
        return head, {"seat": seat_of(rest, f"{head} seat N")}
    if head == "surrender":
        return "surrender", {"seat": seat_of(rest, "surrender seat N")}
    if head == "style":
        if len(rest) != 1:
            raise bad("usage: style NAME")
        style = rest[0].replace("-", "_").lower()
        if style not in DELIVERY_STYLES:
            raise bad(
                f"unknown style {rest[0]!r}; one of {', '.join(DELIVERY_STYLES)}", RefusalCode.RANGE
            )
        return "style", {"style": style}
    if head == "dice":
        if len(rest) not in (1, 3) or not all(_is_whole(r) for r in rest):
            raise bad("usage: dice TOTAL (3-18) | dice A B C (each 1-6)")
        dice = [int(r) for r in rest]
        if len(dice) == 1 and not 3 <= dice[0] <= 18:
            raise bad(f"a total of three dice is 3-18, got {dice[0]}", RefusalCode.RANGE)
        if len(dice) == 3 and not all(1 <= d <= 6 for d in dice):
            raise bad(f"each die is 1-6, got {dice}", RefusalCode.RANGE)
        return "dice", {"dice": dice}
    if head == "expose":
        if rest[:1] == ["stacking"] and len(rest) == 1:
            return "expose_stacking", {}
        if rest[:1] == ["player"]:
            return "expose_player", {"seat": seat_of(rest[1:], "expose player N")}
        if rest[:1] == ["unwagered"] and len(rest) == 2:
            return "expose_void", {
                "whose": "unwagered",
                "area": seat_of(rest[1:], "expose unwagered N"),
            }
        if rest[:1] and rest[0] in VOIDING_EXPOSURES and len(rest) == 1:
            return "expose_void", {"whose": rest[0]}
        raise bad("usage: expose stacking | player N | dealer | bank | dead | unwagered [N]")
    if head == "wager":
        return "wager", parse_wager(rest, bad)
    if head in ("tiles", "hands"):
        return "tiles", parse_tiles(head, rest, bad)
    if head == "test-mode" and rest in (["on"], ["off"]):
        return "test_mode", {"on": rest == ["on"]}
    if head == "sim" and rest[:1] == ["button"] and len(rest) <= 2:
        return "sim_button", {"button": rest[1] if len(rest) == 2 else None}
    if head == "sim":
        raise refuse(head, "usage: sim button NAME", RefusalCode.SYNTAX)
    if head == "shift" and rest == ["start"]:
        return "shift_start", {}
    if head == "shift":
        raise refuse(head, "usage: shift start", RefusalCode.SYNTAX)
    raise refuse(head or "?", f"no pai gow table action {' '.join(words)!r}", RefusalCode.UNKNOWN)


def parse_wager(rest: list[str], bad: Callable[..., Refused]) -> dict[str, object]:
    usage = "usage: wager SEAT CENTS [AREA] | wager dealer CENTS (whole cents; 0 withdraws)"
    if rest[:1] == ["seat"]:
        rest = rest[1:]
    if len(rest) not in (2, 3) or (rest[0] == "dealer" and len(rest) != 2):
        raise bad(usage)
    if not all(r.isdigit() and r.isascii() for r in rest[1:]) or not (
        rest[0] == "dealer" or (rest[0].isdigit() and rest[0].isascii())
    ):
        raise bad(f"{usage}: amounts are whole cents, e.g. 2500 for $25.00")
    cents = int(rest[1])
    if cents > MAX_STAKE_CENTS:
        raise bad(
            f"{cents} cents is more than the console takes ({MAX_STAKE_CENTS})", RefusalCode.RANGE
        )
    if rest[0] == "dealer":
        return {"seat": "dealer", "area": DEALER_POSITION, "cents": cents}
    seat = int(rest[0])
    area = int(rest[2]) if len(rest) == 3 else seat
    for name, n in (("seat", seat), ("area", area)):
        if not 1 <= n <= SEATS:
            raise bad(f"{name} must be 1-{SEATS}, got {n}", RefusalCode.RANGE)
    return {"seat": seat, "area": area, "cents": cents}


def parse_tiles(head: str, rest: list[str], bad: Callable[..., Refused]) -> dict[str, object]:
    """``tiles WHO T1 T2 T3 T4 [HIGH=Ta,Tb]`` or ``hands WHO HIGH LOW`` (a hand is
    ``Ta,Tb``, ``Ta+Tb`` or ``a-b-c-d``; or the four tiles, high hand first)."""
    usage = (
        "usage: tiles dealer|bank|N T1 T2 T3 T4 [HIGH=Ta,Tb] | "
        "hands bank|N Ta-Tb Tc-Td (tiles like 4-5)"
    )
    if not rest:
        raise bad(usage)
    who, words = rest[0].lower(), rest[1:]
    whose: str | int
    if who in ("dealer", "bank"):
        whose = who
    elif who.isdigit() and who.isascii() and 1 <= int(who) <= SEATS:
        whose = int(who)
    else:
        raise bad(f"{usage}: {rest[0]!r} is not dealer, bank or an area 1-{SEATS}")
    high: list[str] | None = None
    try:
        if head == "tiles":
            marks = [w for w in words if w.lower().startswith("high=")]
            plain = [w for w in words if not w.lower().startswith("high=")]
            if len(plain) != 4 or len(marks) > 1:
                raise bad(usage)
            four = [str(tile(t)) for t in plain]
            if marks:
                high = [str(tile(t)) for t in marks[0][5:].split(",")]
                if len(high) != 2:
                    raise bad("HIGH= names the two tiles of the high hand: HIGH=Ta,Tb")
        else:
            if whose == "dealer":
                raise bad(
                    "the dealer's hands are set by the house way (5324.50(f)(4)): "
                    "`tiles dealer T1 T2 T3 T4`",
                    "STATE",
                )
            hands = (
                [_hand_words(w) for w in words]
                if len(words) == 2
                else [words[:2], words[2:]]
                if len(words) == 4
                else None
            )
            if hands is None or any(len(h) != 2 for h in hands):
                raise bad(usage)
            four = [str(tile(t)) for h in hands for t in h]
            high = four[:2]
    except ValueError as exc:  # TileError: a tile that does not exist
        raise bad(str(exc)) from None
    return {"whose": whose, "tiles": four, "high": high}


def house_way_lines(args: list[str], policy: str) -> list[str]:
    """``houseway T1 T2 T3 T4``: how the house way ``policy`` sets four tiles (two lines: the
    hands, and the rule that set them); a malformed line raises Refused (SYNTAX, RANGE)."""
    from controller.games.paigow.errors import TileError
    from controller.games.paigow.houseway import set_hand

    if len(args) != 4:
        raise Refused("usage: houseway T1 T2 T3 T4 (tiles like 4-5)", RefusalCode.SYNTAX)
    try:
        decision = set_hand(args, None if policy == "default" else policy)
    except TileError as exc:
        raise Refused(str(exc), RefusalCode.SYNTAX) from None
    except ValueError as exc:
        raise Refused(str(exc), RefusalCode.RANGE) from None
    high = " ".join(str(t) for t in decision.high)
    low = " ".join(str(t) for t in decision.low)
    return [f"high {high}  low {low}", f"by {decision.reason} (house way {policy})"]
