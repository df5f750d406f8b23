"""The round's optional money entries: the checks on the wagers and tiles entered
(docs/paigow-table.md "Wagers, tiles and settlement"), the hands they set, and the settlement in
integer cents computed from them with the rules engine (``controller/games/paigow``). Pure: the
record and the settings in, text or data out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, NotRequired, TypedDict

from controller.games.paigow.banking import HOUSE, BankWager, settle_bank_round
from controller.games.paigow.errors import PaigowError
from controller.games.paigow.houseway import set_hand
from controller.games.paigow.outcome import outcome as hand_outcome
from controller.games.paigow.ranking import compare
from controller.games.paigow.settlement import (
    SettlementError,
    check_two_areas,
    commission,
    settle_wager,
)
from controller.games.paigow.tiles import check_tiles
from controller.tables.paigow.definition import SEATS
from controller.tables.paigow.record import HandEntry, RoundRecord, WagerEntry

if TYPE_CHECKING:
    from controller.config.settings import RuleSettings


class SettlementLine(TypedDict):
    """One wager's settlement: ``seat`` is the seat number or ``"dealer"`` (the dealer's
    wager against a player bank, on no area)."""

    seat: int | str
    area: int | None
    stake: int
    outcome: str
    commission: int
    net: int
    hands: HandEntry | None


class Settlement(TypedDict):
    """The ``paigow.settlement`` row: every wager's line and the ledger; a player bank's or
    co-bank's round also the center's figures (5324.50(g)(14)-(18))."""

    bank: str
    bank_seat: int | None
    rules: dict[str, object]
    banker_hands: HandEntry | None
    lines: list[SettlementLine]
    ledger: dict[str, int]
    transfers: list[dict[str, object]]
    shortfall: NotRequired[int]
    bank_shortfall: NotRequired[int]
    house_shortfall: NotRequired[int]
    surplus: NotRequired[int]
    house_half: NotRequired[int]
    surplus_vig: NotRequired[int]
    bank_receives: NotRequired[int]
    bank_chips: NotRequired[int | None]
    bank_chips_after: NotRequired[int]


def banker_entry(rec: RoundRecord) -> str:
    """The command that enters the banker's tiles this round, as a refusal suggests it: the
    dealer's by the house way (f)(4); a co-bank's by the house way too, the dealer setting them
    (g)(5); a banking player's as the player set them (f)(3), which ``tiles bank`` without
    ``HIGH=`` refuses."""
    if rec.bank == "house":
        return "`tiles dealer T1 T2 T3 T4`"
    if rec.bank == "cobank":
        return "`tiles bank T1 T2 T3 T4`"
    return "`hands bank Ta-Tb Tc-Td`"


def has_entries(rec: RoundRecord) -> bool:
    """Whether anything was entered this round (entering is optional; once begun, complete)."""
    return bool(rec.wagers or rec.dealer_wager is not None or rec.hands)


def wager_on(rec: RoundRecord, area: int) -> WagerEntry | None:
    return next((w for w in rec.wagers if w["area"] == area), None)


def _bank_chips(rec: RoundRecord) -> int | None:
    """A player bank's chips on the table: the banking seat's entry on its own area."""
    if rec.bank == "house":
        return None
    w = wager_on(rec, int(rec.bank_seat or 0))
    return None if w is None or w["seat"] != rec.bank_seat else w["cents"]


def _player_wagers(rec: RoundRecord) -> list[WagerEntry]:
    """The wagers against the dealer or the bank (the bank's own chips left out), by area."""
    bank = rec.bank_seat if rec.bank != "house" else None
    return sorted((w for w in rec.wagers if w["seat"] != bank), key=lambda w: w["area"])


def _with_wager(wagers: list[WagerEntry], seat: int, area: int, cents: int) -> list[WagerEntry]:
    out = [w for w in wagers if not (w["seat"] == seat and w["area"] == area)]
    if cents:
        out.append(WagerEntry(seat=seat, area=area, cents=cents))
    return sorted(out, key=lambda w: w["area"])


def wager_problem(rec: RoundRecord, who: object, area: int, cents: int) -> str | None:
    """Why ``wager`` is refused: the layout (h), the bank (g)(6), (g)(8), (g)(5)."""
    if who == "dealer":
        if rec.bank == "house":
            return (
                "the dealer wagers only against a player bank (5324.50(g)(8)); the house "
                "banks this round"
            )
        if rec.bank == "cobank":
            return "with a co-bank the dealer places no wager against the bank (5324.50(g)(5))"
        if cents == 0 and rec.dealer_wager is None:
            return "the dealer has no wager to withdraw"
        return None
    seat = int(str(who))
    current = wager_on(rec, area)
    if cents == 0:
        if current is None or current["seat"] != seat:
            return f"seat {seat} has no wager on area {area} to withdraw"
        return None
    if current is not None and current["seat"] != seat:
        return f"area {area} holds seat {current['seat']}'s wager"
    banking = rec.bank != "house"
    is_bank = banking and seat == rec.bank_seat
    if is_bank and area != seat:
        return (
            f"seat {seat} is the bank: its chips stay on its own area {seat}; a banking "
            "player may wager on only one betting area (5324.50(g)(6), (h)(4))"
        )
    if banking and area == rec.bank_seat and not is_bank:
        return f"area {area} is the bank's (seat {rec.bank_seat})"
    areas = sorted({w["area"] for w in rec.wagers if w["seat"] == seat} | {area})
    try:
        check_two_areas(areas, seats=SEATS, is_bank=is_bank)
    except SettlementError as exc:
        return str(exc)
    return None


def apply_wager(rec: RoundRecord, who: object, area: int, cents: int) -> None:
    if who == "dealer":
        rec.dealer_wager = cents or None
    else:
        rec.wagers = _with_wager(rec.wagers, int(str(who)), area, cents)


def wager_consistency(rec: RoundRecord) -> list[str]:
    """At "no more bets": the wagers fit the bank's declaration, and a player bank covers
    them (5324.50(g)(4)(ii), (g)(5)-(6), (g)(8), (h))."""
    if not has_entries(rec):
        return []
    problems: list[str] = []
    if rec.dealer_wager is not None and rec.bank != "player":
        problems.append(
            "the dealer wagers only against a player bank (5324.50(g)(5), (g)(8)): `wager dealer 0`"
        )
    seats = sorted({w["seat"] for w in rec.wagers})
    banking = rec.bank != "house"
    for seat in seats:
        areas = [w["area"] for w in rec.wagers if w["seat"] == seat]
        is_bank = banking and seat == rec.bank_seat
        try:
            check_two_areas(areas, seats=SEATS, is_bank=is_bank)
        except SettlementError as exc:
            problems.append(f"seat {seat}: {exc}")
        if is_bank and areas != [seat]:
            problems.append(f"seat {seat} is the bank: its chips belong on its own area {seat}")
    if banking:
        held = wager_on(rec, int(rec.bank_seat or 0))
        if held is not None and held["seat"] != rec.bank_seat:
            problems.append(
                f"area {rec.bank_seat} is the bank's, but holds seat {held['seat']}'s wager"
            )
        chips = _bank_chips(rec)
        others = sum(w["cents"] for w in _player_wagers(rec))
        dealer = rec.dealer_wager or 0
        if chips is None:
            problems.append(
                f"the bank's chips are not entered: `wager {rec.bank_seat} CENTS` "
                "(5324.50(g)(4)(ii))"
            )
        elif chips < others + dealer:
            problems.append(
                f"the bank's {chips} cents do not cover the {others} cents wagered by the other "
                f"players"
                + (f" and the dealer's {dealer} cents" if dealer else "")
                + " (5324.50(g)(4)(ii), (g)(15))"
            )
    return problems


def _split(tiles: Sequence[str], high: Sequence[str]) -> list[str] | str:
    """The low hand: ``tiles`` less ``high``; or the reason ``high`` is not two of them."""
    rest = list(tiles)
    for t in high:
        if t not in rest:
            return f"HIGH tile {t} is not one of the tiles {' '.join(tiles)}"
        rest.remove(t)
    return rest


def _policy(settings: RuleSettings) -> str | None:
    name = str(settings.paigow.house_way_policy)
    return None if name == "default" else name


def tiles_problem(
    rec: RoundRecord,
    whose: object,
    tiles: list[str],
    high: list[str] | None,
    settings: RuleSettings,
) -> str | None:
    """Why ``tiles`` is refused: who sets which hands (f)(1)-(4), (g)(5); the order of exposure
    (f)(6); the set (no tile more often than the 32 tiles hold it)."""
    if not rec.wagers and rec.dealer_wager is None:
        return (
            "no wager was entered this round (wagers are entered while betting), so no "
            "tiles are: the settled button is the dealer's confirmation"
        )
    banker = "dealer" if rec.bank == "house" else "bank"
    if whose == "dealer":
        if rec.bank == "cobank":
            return (
                "with a co-bank the dealer has no wager; the dealer sets the bank's hands "
                "(5324.50(g)(5)): `tiles bank T1 T2 T3 T4`"
            )
        if rec.bank == "player" and rec.dealer_wager is None:
            return (
                "the dealer placed no wager against the bank: its tiles are not played "
                "(5324.50(g)(8), (g)(14))"
            )
        if high is not None:
            return (
                "the dealer sets the dealer's hands by the house way (5324.50(f)(4)) and "
                "may not deviate: the table computes them; omit HIGH="
            )
    elif whose == "bank":
        if rec.bank == "house":
            return "the house banks this round: `tiles dealer T1 T2 T3 T4`"
        if rec.bank == "cobank" and high is not None:
            return (
                "with a co-bank the dealer sets the bank's hands by the house way "
                "(5324.50(g)(5)): the table computes them; omit HIGH="
            )
        if rec.bank == "player" and high is None:
            return "the banking player sets the bank's hands (5324.50(f)(3)): add HIGH=Ta,Tb"
    else:
        area = int(str(whose))
        if rec.bank != "house" and area == rec.bank_seat:
            return f"area {area} is the bank's: {banker_entry(rec)}"
        if wager_on(rec, area) is None:
            return (
                f"no wager was entered on area {area}: its stack was collected unexposed "
                "(5324.50(e)(5))"
            )
        if area in rec.voided_seats:
            return f"area {area}'s hand is void (5324.50(i)(1))"
        if area in rec.surrendered_seats:
            return (
                f"area {area} surrendered: its tiles were collected unexposed (5324.50(f)(5)(ii))"
            )
        if high is None:
            return "the player sets the hands (5324.50(f)(1)-(2)): add HIGH=Ta,Tb"
        if banker not in rec.hands:
            return (
                f"the {banker}'s hands come first: each player's hands are exposed once "
                f"the {banker}'s are set (5324.50(f)(6), (g)(15)-(16)): {banker_entry(rec)}"
            )
    others = [t for k, h in rec.hands.items() if k != str(whose) for t in h["tiles"]]
    try:
        check_tiles([*others, *tiles], len(others) + 4, "the round's entered tiles")
    except (PaigowError, ValueError) as exc:
        return str(exc)
    if high is None:
        try:
            set_hand(tiles, _policy(settings))
        except (PaigowError, ValueError) as exc:
            return str(exc)
        return None
    low = _split(tiles, high)
    if isinstance(low, str):
        return low
    if compare(high, low) < 0:
        return (
            f"the high hand {' '.join(high)} ranks below the low hand {' '.join(low)}: "
            "enter the hands as they were set (5324.50(f)(1))"
        )
    return None


def set_hands(
    rec: RoundRecord,
    whose: object,
    tiles: list[str],
    high: Sequence[str] | None,
    settings: RuleSettings,
) -> HandEntry:
    """The entry as journaled: the tiles, the two hands and who set them (with the house way's
    reason when the table set them)."""
    if high is None:
        policy = str(settings.paigow.house_way_policy)
        d = set_hand(tiles, _policy(settings))
        return HandEntry(
            tiles=list(tiles),
            high=[str(t) for t in d.high],
            low=[str(t) for t in d.low],
            set_by=f"house way ({policy})",
            reason=d.reason,
        )
    hi = [str(t) for t in high]
    low = _split(tiles, hi)
    assert not isinstance(low, str)
    return HandEntry(
        tiles=list(tiles), high=hi, low=low, set_by="bank" if whose == "bank" else "player"
    )


def entry_problems(rec: RoundRecord) -> list[str]:
    """What is missing or inconsistent before ``settled`` (empty: complete)."""
    problems = wager_consistency(rec)
    banker = "dealer" if rec.bank == "house" else "bank"
    live = [
        w
        for w in _player_wagers(rec)
        if w["area"] not in rec.voided_seats and w["area"] not in rec.surrendered_seats
    ]
    dealer_plays = rec.bank == "player" and rec.dealer_wager is not None
    if (live or dealer_plays) and banker not in rec.hands:
        problems.append(f"the {banker}'s tiles ({banker_entry(rec)})")
    if dealer_plays and "dealer" not in rec.hands:
        problems.append("the dealer's tiles against the bank (`tiles dealer T1 T2 T3 T4`)")
    missing = [w["area"] for w in live if str(w["area"]) not in rec.hands]
    if missing:
        problems.append(
            "the hands of area " + ", ".join(map(str, missing)) + " (`hands N Ta-Tb Tc-Td`)"
        )
    return problems


def compute_settlement(rec: RoundRecord, settings: RuleSettings) -> Settlement:
    """Every wager's outcome and net cents, and the ledger (who gains and loses what).

    House bank: ``settle_wager`` per wager (f)(7)-(10). Player bank or co-bank:
    ``settle_bank_round`` (g)(14)-(18), the dealer's wager against a player bank first. Lines go
    in the order of (f)(9): from the area farthest to the dealer's right, counter-clockwise.
    Raises ``ValueError`` (the engines' errors) when the round cannot be settled."""
    rules = settings.paigow_rules()
    opts = settings.paigow_outcome_options()
    banker = "dealer" if rec.bank == "house" else "bank"
    bh = rec.hands.get(banker)

    def against_banker(h: HandEntry) -> str:
        assert bh is not None
        return hand_outcome(h["high"], h["low"], bh["high"], bh["low"], **opts)

    lines: list[SettlementLine] = []
    for w in _player_wagers(rec):
        area, stake = w["area"], w["cents"]
        if area in rec.voided_seats:
            oc = "void"  # (i)(1): the player voided the hand; the wager is returned
        elif area in rec.surrendered_seats:
            oc = "surrender"
        else:
            oc = against_banker(rec.hands[str(area)])
        vig = commission(stake, rules) if oc == "win" else 0
        net = 0 if oc == "void" else settle_wager(oc, stake, rules)
        lines.append(
            SettlementLine(
                seat=w["seat"],
                area=area,
                stake=stake,
                outcome=oc,
                commission=vig,
                net=net,
                hands=rec.hands.get(str(area)),
            )
        )
    used: dict[str, object] = {
        "vig_percent": rules.vig_percent,
        "round_vig_to_quarter": rules.round_vig_to_quarter,
        "vig_cent_rounding": rules.vig_cent_rounding,
        "co_bank_shortfall_odd_cent": rules.co_bank_shortfall_odd_cent,
        "surrender_against_bank": rules.surrender_against_bank,
        **opts,
        "house_way_policy": settings.paigow.house_way_policy,
    }
    if rec.bank == "house":
        ledger: dict[str, int] = {}
        for line in lines:
            party = f"seat{line['seat']}"
            ledger[party] = ledger.get(party, 0) + line["net"]
        ledger[HOUSE] = -sum(ledger.values())
        return Settlement(
            bank=rec.bank,
            bank_seat=rec.bank_seat,
            rules=used,
            banker_hands=bh,
            lines=lines,
            ledger=ledger,
            transfers=[],
        )
    dealer_stake = rec.dealer_wager or 0
    dealer_oc = against_banker(rec.hands["dealer"]) if dealer_stake else None
    bank_party = f"seat{rec.bank_seat}"
    ledger_round = settle_bank_round(
        [
            BankWager(f"seat{line['seat']}", line["stake"], line["outcome"])
            for line in lines
            if line["outcome"] != "void"
        ],
        bank=bank_party,
        bank_chips_cents=_bank_chips(rec) or 0,
        rules=rules,
        co_bank=rec.bank == "cobank",
        dealer_wager_cents=dealer_stake,
        dealer_outcome=dealer_oc,
    )
    if dealer_stake:
        net = {"win": dealer_stake, "push": 0, "lose": -dealer_stake}[str(dealer_oc)]
        lines.insert(
            0,
            SettlementLine(
                seat="dealer",
                area=None,
                stake=dealer_stake,
                outcome=str(dealer_oc),
                commission=0,
                net=net,
                hands=rec.hands["dealer"],
            ),
        )
    return Settlement(
        bank=rec.bank,
        bank_seat=rec.bank_seat,
        rules=used,
        banker_hands=bh,
        lines=lines,
        ledger=ledger_round.net(),
        transfers=[asdict(t) for t in ledger_round.transfers],
        shortfall=ledger_round.shortfall_cents,
        bank_shortfall=ledger_round.bank_shortfall_cents,
        house_shortfall=ledger_round.house_shortfall_cents,
        surplus=ledger_round.surplus_cents,
        house_half=ledger_round.house_half_cents,
        surplus_vig=ledger_round.surplus_vig_cents,
        bank_receives=ledger_round.bank_receives_cents,
        bank_chips=_bank_chips(rec),
        bank_chips_after=ledger_round.bank_chips_after_cents,
    )


def _cents(c: int) -> str:
    sign = "-" if c < 0 else "+"
    return f"{sign}${abs(c) // 100}.{abs(c) % 100:02d}"


def settlement_summary(st: Settlement) -> list[str]:
    """Console lines for a computed settlement."""
    out = []
    for line in st["lines"]:
        who = "dealer" if line["seat"] == "dealer" else f"area {line['area']} seat {line['seat']}"
        vig = f" vig {line['commission']}c" if line["commission"] else ""
        out.append(f"{who}: {line['stake']}c {line['outcome']}{vig} net {line['net']:+d}c")
    if st.get("transfers"):
        out.append(
            f"center: shortfall {st['shortfall']}c (bank {st['bank_shortfall']}c, house "
            f"{st['house_shortfall']}c), surplus {st['surplus']}c (house half "
            f"{st['house_half']}c, vig {st['surplus_vig']}c, to bank "
            f"{st['bank_receives']}c)"
        )
    out.append("ledger: " + ", ".join(f"{k} {_cents(v)}" for k, v in sorted(st["ledger"].items())))
    return out
