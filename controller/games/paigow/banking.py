"""Player bank and co-bank in pai gow tiles: who may bank, the counter-clockwise offer and its
rotation, the dealer's wager against the bank, and the center-of-table settlement in cents.

Pure rules: no I/O, no clock, no randomness; outcomes are ``"win" | "push" | "lose"`` strings from
the wagering side's point of view (a player's or the dealer's) against the bank.

Sources (``/work/shared/seeds``): 9 NYCRR 5324.50(g)(1)-(8), (g)(14)-(18); N.J.A.C.
13:69F-10.8(a)-(h), (n)-(r).

Money rules (all integer cents)
-------------------------------
Player bank, (g)(14)-(15), (g)(17)-(18):

* the dealer's losing wager goes from the chip tray to the center; a push goes back to the tray;
* every losing player wager goes to the center;
* every winning wager, the dealer's included, is paid 1:1 from the center; if the center runs
  short, the bank puts the remaining amount (the *shortfall*) into the center;
* each winning player pays the vigorish on the amount won to the house ((g)(18), same rounding as
  :func:`settlement.commission`); the dealer's win goes back to the chip tray ((g)(17));
* a *surplus* left in the center is charged the vigorish ((f)(10) rounding applies: "in
  accordance with subdivision (f)"), paid to the house; the rest goes to the bank.

Co-bank, (g)(16): no dealer wager ((g)(5)); a shortfall is covered half by the co-bank, half by
the house (chip tray); of a surplus, half goes into the chip tray first, the vigorish is charged on
the remaining half, and what is left goes to the co-bank.

**Odd cents go to the house.** Halving an odd number of cents leaves one cent over. In a surplus
the house's half is the larger one (``ceil(S/2)``). In a shortfall the co-bank's half is the larger
one (``ceil(R/2)``) and the house's the smaller -- the odd cent is always decided in the house's
favour, the same direction as the vigorish rounding.

**A shortfall the bank cannot cover** (its part is more than ``bank_chips_cents``) raises
:class:`BankShortfallError`; no balance ever goes negative. (g)(4)(ii) should prevent it; the
error is the last line of defence.

The odd cent of a co-bank shortfall is the setting ``PaigowRules.co_bank_shortfall_odd_cent``
(``"co_bank"``, the default described above, or ``"house"``).

**Surrender against a player bank**: (f)(5) has the dealer collect a surrendered wager, but (g)
does not say whether it goes to the chip tray or to the center. ``PaigowRules.
surrender_against_bank`` names the choice: ``"refuse"`` (the default: :class:`BankingError`),
``"center"`` (collected into the center like a losing wager, (g)(15)-(16)) or ``"house"`` (to
the chip tray, as (f)(7) places collected wagers; it then pays no winner).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal

from controller.games.paigow.settlement import (
    LOSE,
    PUSH,
    SURRENDER,
    WIN,
    PaigowRules,
    SettlementError,
    commission,
)

__all__ = [
    "BankingError",
    "BankShortfallError",
    "HOUSE",
    "CENTER",
    "DEALER",
    "BankWager",
    "Transfer",
    "BankRoundSettlement",
    "settle_bank_round",
    "dealer_wager_against_bank",
    "bank_hand_set_by",
    "bank_ineligibility",
    "require_bank_eligible",
    "BankRotation",
]

#: The gaming facility (chip tray / table inventory container) as a party in a ledger.
HOUSE: Final = "house"
#: The center of the table, a pass-through: its net over a settled round is always zero.
CENTER: Final = "center"
#: The dealer's place in the bank rotation (:class:`BankRotation`); seats are 1..n.
DEALER: Final = 0

_RESERVED = (HOUSE, CENTER)


class BankingError(SettlementError):
    """A banking rule refuses the request (a player who may not bank, a dealer wager with a
    co-bank, a wager from the bank against itself, ...). A ``ValueError``; the message names the
    rule."""


class BankShortfallError(BankingError):
    """The bank must put more into the center than it has on the table ((g)(15), (g)(16))."""

    def __init__(self, message: str, *, needed_cents: int, available_cents: int) -> None:
        super().__init__(message)
        self.needed_cents = needed_cents
        self.available_cents = available_cents


def _check_cents(name: str, value: object, *, positive: bool) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BankingError(
            f"{name} must be a whole number of cents (int), got {type(value).__name__} {value!r}"
        )
    if positive and value <= 0:
        raise BankingError(f"{name} must be a positive number of cents, got {value}")
    if value < 0:
        raise BankingError(f"{name} must not be negative, got {value}")
    return value


def _check_party(name: str, party: object) -> str:
    if not isinstance(party, str) or not party:
        raise BankingError(f"{name} must be a non-empty string naming a party, got {party!r}")
    if party in _RESERVED:
        raise BankingError(f"{name} {party!r} is reserved for the house / the center")
    return party


# ---------------------------------------------------------------------------------------------
# Center-of-table settlement, (g)(14)-(18)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BankWager:
    """A player's wager against the bank: ``player`` names the party (e.g. ``"seat3"``; a player
    on two areas has two wagers with the same name), ``outcome`` is the player's against the
    bank."""

    player: str
    stake_cents: int
    outcome: str


@dataclass(frozen=True, slots=True)
class Transfer:
    """``cents`` moved from ``payer`` to ``payee``, with the rule that moves it."""

    payer: str
    payee: str
    cents: int
    reason: str


@dataclass(frozen=True, slots=True)
class BankRoundSettlement:
    """The ledger of one bank round. ``transfers`` are in the order the dealer makes them;
    ``net()`` sums them per party (the center nets to zero and is left out) and always sums to
    zero."""

    transfers: tuple[Transfer, ...]
    co_bank: bool
    collected_cents: int  # losing wagers (the dealer's included) put in the center
    winning_cents: int  # winning wagers (the dealer's included) paid from the center
    shortfall_cents: int
    bank_shortfall_cents: int  # the bank's (co-bank's) part of the shortfall
    house_shortfall_cents: int  # the house's part (co-bank only)
    surplus_cents: int
    house_half_cents: int  # (g)(16): the half of the surplus put in the chip tray first
    surplus_vig_cents: int
    bank_receives_cents: int  # what is given to the bank at the end
    bank_chips_after_cents: int
    player_vig_cents: int  # vigorish paid by winning players, (g)(18)

    def net(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for t in self.transfers:
            totals[t.payer] = totals.get(t.payer, 0) - t.cents
            totals[t.payee] = totals.get(t.payee, 0) + t.cents
        center = totals.pop(CENTER, 0)
        assert center == 0, f"center nets {center}"
        return totals


def settle_bank_round(
    wagers: Sequence[BankWager],
    *,
    bank: str,
    bank_chips_cents: int,
    rules: PaigowRules,
    co_bank: bool = False,
    dealer_wager_cents: int = 0,
    dealer_outcome: str | None = None,
) -> BankRoundSettlement:
    """Settle a round banked by a player (``co_bank=False``, (g)(15)) or co-banked with the house
    (``co_bank=True``, (g)(16)).

    ``wagers``: the other players' wagers against the bank. ``bank``: the banking player's party
    name; ``bank_chips_cents``: the chips the bank has on the table. ``dealer_wager_cents`` /
    ``dealer_outcome``: the dealer's wager against the bank ((g)(8), (g)(14)) and its outcome
    from the dealer's side; none with a co-bank ((g)(5)).

    Raises :class:`BankShortfallError` if the bank's part of a shortfall exceeds its chips, and
    :class:`BankingError` for anything the rules do not allow.
    """
    if not isinstance(rules, PaigowRules):
        raise BankingError(f"rules must be a PaigowRules, got {type(rules).__name__}")
    if not rules.player_bank_offered:
        raise BankingError("these rules do not offer a player bank (5324.50(g)(1))")
    if co_bank and not rules.co_bank_offered:
        raise BankingError("these rules do not offer co-banking (5324.50(g)(5))")
    bank = _check_party("bank", bank)
    chips = _check_cents("bank_chips_cents", bank_chips_cents, positive=False)
    dealer_stake = _check_cents("dealer_wager_cents", dealer_wager_cents, positive=False)
    if co_bank and dealer_stake:
        raise BankingError(
            "the dealer may not place a wager against a co-bank (5324.50(g)(5), (g)(8))"
        )
    if dealer_stake and dealer_outcome not in (WIN, PUSH, LOSE):
        raise BankingError(
            f"dealer_outcome must be 'win', 'push' or 'lose' for a dealer wager of "
            f"{dealer_stake} cents, got {dealer_outcome!r}"
        )
    if not dealer_stake and dealer_outcome is not None:
        raise BankingError(f"dealer_outcome {dealer_outcome!r} given but the dealer has no wager")
    if isinstance(wagers, (str, bytes)) or not isinstance(wagers, Sequence):
        raise BankingError("wagers must be a sequence of BankWager")
    for i, w in enumerate(wagers):
        if not isinstance(w, BankWager):
            raise BankingError(f"wagers[{i}] must be a BankWager, got {type(w).__name__}")
        _check_party(f"wagers[{i}].player", w.player)
        _check_cents(f"stake of {w.player}", w.stake_cents, positive=True)
        if w.player == bank:
            raise BankingError(
                f"{bank} is the bank and cannot wager against the bank; a banking player "
                "wagers on one betting area only (5324.50(g)(6))"
            )
        if w.outcome == SURRENDER:
            if not rules.surrender_offered:
                raise BankingError(
                    f"{w.player}: surrender is not offered under these rules (5324.50(f)(5))"
                )
            if rules.surrender_against_bank == "refuse":
                raise BankingError(
                    f"{w.player}: surrender against a player bank is not settled -- (f)(5) does "
                    "not say whether the wager goes to the chip tray or to the center "
                    "(setting surrender_against_bank is 'refuse')"
                )
        elif w.outcome not in (WIN, PUSH, LOSE):
            raise BankingError(
                f"{w.player}: outcome must be 'win', 'push' or 'lose', got {w.outcome!r}"
            )

    transfers: list[Transfer] = []

    def move(payer: str, payee: str, cents: int, reason: str) -> None:
        if cents:
            transfers.append(Transfer(payer, payee, cents, reason))

    # (g)(14): the dealer's hand against the bank comes first.
    collected = 0
    winning = 0
    if dealer_stake and dealer_outcome == LOSE:
        move(HOUSE, CENTER, dealer_stake, "dealer's losing wager to the center (g)(14)")
        collected += dealer_stake
    elif dealer_stake and dealer_outcome == WIN:
        winning += dealer_stake
    # (g)(15)/(16): losing wagers collected and placed in the center.
    for w in wagers:
        if w.outcome == LOSE:
            move(w.player, CENTER, w.stake_cents, "losing wager to the center (g)(15)-(16)")
            collected += w.stake_cents
        elif w.outcome == SURRENDER and rules.surrender_against_bank == "center":
            move(w.player, CENTER, w.stake_cents, "surrendered wager to the center (f)(5)")
            collected += w.stake_cents
        elif w.outcome == SURRENDER:
            move(w.player, HOUSE, w.stake_cents, "surrendered wager to the chip tray (f)(5)")
        elif w.outcome == WIN:
            winning += w.stake_cents

    # The center runs short: the bank (or the co-bank and the house, half each) makes it up.
    shortfall = max(0, winning - collected)
    if co_bank:
        if rules.co_bank_shortfall_odd_cent == "house":
            bank_part = shortfall // 2  # the house puts in the odd cent
        else:
            bank_part = (shortfall + 1) // 2  # the odd cent in the house's favour
        house_part = shortfall - bank_part
    else:
        bank_part, house_part = shortfall, 0
    if bank_part > chips:
        rule = "(g)(16)" if co_bank else "(g)(15)"
        raise BankShortfallError(
            f"the bank {bank} must put {bank_part} cents into the center {rule} but has only "
            f"{chips} cents on the table",
            needed_cents=bank_part,
            available_cents=chips,
        )
    move(
        bank,
        CENTER,
        bank_part,
        "bank covers the shortfall " + ("(g)(16)" if co_bank else "(g)(15)"),
    )
    move(HOUSE, CENTER, house_part, "house covers half the shortfall (g)(16)")

    # Winning wagers paid 1:1 from the center; each winning player pays the vigorish (g)(18).
    player_vig = 0
    if dealer_stake and dealer_outcome == WIN:
        move(CENTER, HOUSE, dealer_stake, "dealer's winning wager to the chip tray (g)(17)")
    for w in wagers:
        if w.outcome == WIN:
            move(CENTER, w.player, w.stake_cents, "winning wager paid 1:1 from the center")
            vig = commission(w.stake_cents, rules)
            move(w.player, HOUSE, vig, "vigorish on the amount won (g)(18), (f)(10)")
            player_vig += vig

    # The surplus.
    surplus = max(0, collected - winning)
    if co_bank:
        house_half = (surplus + 1) // 2  # the odd cent to the house
        move(CENTER, HOUSE, house_half, "half the surplus to the chip tray (g)(16)")
        rest = surplus - house_half
    else:
        house_half = 0
        rest = surplus
    surplus_vig = commission(rest, rules)
    move(CENTER, HOUSE, surplus_vig, "vigorish on the surplus (g)(15)-(16), (f)(10)")
    to_bank = rest - surplus_vig
    move(CENTER, bank, to_bank, "remaining surplus to the bank (g)(15)-(16)")

    return BankRoundSettlement(
        transfers=tuple(transfers),
        co_bank=co_bank,
        collected_cents=collected,
        winning_cents=winning,
        shortfall_cents=shortfall,
        bank_shortfall_cents=bank_part,
        house_shortfall_cents=house_part,
        surplus_cents=surplus,
        house_half_cents=house_half,
        surplus_vig_cents=surplus_vig,
        bank_receives_cents=to_bank,
        bank_chips_after_cents=chips - bank_part + to_bank,
        player_vig_cents=player_vig,
    )


def dealer_wager_against_bank(
    *,
    last_wager_cents: int,
    co_bank: bool,
    bank_directs_cents: int | None = None,
    approved_amount_cents: int | None = None,
) -> int:
    """The amount the dealer wagers against a player bank, (g)(8) / 13:69F-10.8(h).

    "an amount equal to the last wager made by such player against the dealer" -- or
    ``approved_amount_cents`` when the casino has another amount approved. "The bank may direct
    that the sum wagered by the dealer be a lesser amount or that the dealer places no wager":
    ``bank_directs_cents`` (0 = no wager), never more than that amount. With a co-bank, 0: "the
    dealer shall not remove any chips from the chip tray".
    """
    last = _check_cents("last_wager_cents", last_wager_cents, positive=False)
    if co_bank:
        if bank_directs_cents:
            raise BankingError(
                "the dealer places no wager against a co-bank (5324.50(g)(5), (g)(8)); "
                f"got bank_directs_cents={bank_directs_cents}"
            )
        return 0
    base = last
    if approved_amount_cents is not None:
        base = _check_cents("approved_amount_cents", approved_amount_cents, positive=False)
    if bank_directs_cents is None:
        return base
    directed = _check_cents("bank_directs_cents", bank_directs_cents, positive=False)
    if directed > base:
        raise BankingError(
            f"the bank may direct only a lesser dealer wager or none (5324.50(g)(8)): "
            f"{directed} cents is more than {base} cents"
        )
    return directed


def bank_hand_set_by(co_bank: bool) -> Literal["dealer", "bank"]:
    """Who sets the bank's two hands: the dealer with a co-bank ((g)(5): "When the dealer is
    co-banking, the dealer shall be responsible for setting the hand of the bank", by the house
    way, 13:69F-10.8(e)); otherwise the banking player ((f)(3))."""
    return "dealer" if co_bank else "bank"


# ---------------------------------------------------------------------------------------------
# Who may bank, (g)(1)-(4)
# ---------------------------------------------------------------------------------------------


def bank_ineligibility(
    *,
    rules: PaigowRules,
    first_round_after_restack: bool,
    banked_previous_round: bool,
    wagered_in_last_house_banked_round: bool,
    chips_on_table_cents: int,
    other_players_wagers_cents: int,
) -> tuple[str, ...]:
    """Every reason a player may not bank this round; empty if the player may.

    (g)(1) the casino offers the bank; (g)(2) not the first round after a restack; (g)(3) not two
    consecutive rounds; (g)(4)(i) "placed a wager against the dealer during the last round of
    play in which there was no player banking the game"; (g)(4)(ii) "sufficient chips on the
    table to cover all of the wagers placed by other players at the table for that round" (read
    literally: all of them, co-bank or not; the dealer's wager is not a player's wager).
    """
    if not isinstance(rules, PaigowRules):
        raise BankingError(f"rules must be a PaigowRules, got {type(rules).__name__}")
    chips = _check_cents("chips_on_table_cents", chips_on_table_cents, positive=False)
    others = _check_cents("other_players_wagers_cents", other_players_wagers_cents, positive=False)
    reasons: list[str] = []
    if not rules.player_bank_offered:
        reasons.append("the casino does not offer the bank (5324.50(g)(1))")
    if first_round_after_restack:
        reasons.append("no player may bank the first round after a restack (5324.50(g)(2))")
    if banked_previous_round:
        reasons.append("no player may bank two consecutive rounds (5324.50(g)(3))")
    if not wagered_in_last_house_banked_round:
        reasons.append(
            "the player placed no wager against the dealer in the last round with no player "
            "bank (5324.50(g)(4)(i))"
        )
    if chips < others:
        reasons.append(
            f"the player has {chips} cents on the table, less than the {others} cents wagered "
            "by the other players (5324.50(g)(4)(ii))"
        )
    return tuple(reasons)


def require_bank_eligible(
    *,
    rules: PaigowRules,
    first_round_after_restack: bool,
    banked_previous_round: bool,
    wagered_in_last_house_banked_round: bool,
    chips_on_table_cents: int,
    other_players_wagers_cents: int,
) -> None:
    """:func:`bank_ineligibility` that raises :class:`BankingError` listing every reason."""
    reasons = bank_ineligibility(
        rules=rules,
        first_round_after_restack=first_round_after_restack,
        banked_previous_round=banked_previous_round,
        wagered_in_last_house_banked_round=wagered_in_last_house_banked_round,
        chips_on_table_cents=chips_on_table_cents,
        other_players_wagers_cents=other_players_wagers_cents,
    )
    if reasons:
        raise BankingError("may not bank: " + "; ".join(reasons))


# ---------------------------------------------------------------------------------------------
# The offer and its rotation, (g)(2)-(3); 13:69F-10.8(b)-(c)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BankRotation:
    """Where the offer of the bank stands between rounds. Immutable; a state machine keeps one
    and replaces it with :meth:`next_state` after each round.

    Seats are numbered ``1..seats`` counter-clockwise, seat 1 being "the player farthest to the
    right of the dealer". ``first_offer`` is the seat to be offered the bank first this round, or
    :data:`DEALER` when the rotation has returned to the dealer (the house banks the round).

    Reading of (g)(3) / 13:69F-10.8(c):

    * "offer the bank to each player until a player accepts": :meth:`offer_order` lists the
      occupied seats from ``first_offer`` counter-clockwise, wrapping round to seat 1, leaving
      out the player who banked the previous round ("In no event may any player be the bank for
      two consecutive rounds"). Players who fail (g)(4) are left for the caller to skip (see
      :func:`bank_ineligibility`).
    * "If the first player offered the bank accepts, the player seated to the right of such
      player shall be offered the bank first on the next round" and "The initial offer ... shall
      rotate counterclockwise around the table until the offer returns to the dealer": the next
      ``first_offer`` is the seat after the first player offered this round, whoever accepted.
      After the last seat (or if no player from ``first_offer`` to the last seat could be
      offered) the rotation returns to the dealer: with
      ``includes_dealer`` (``PaigowRules.bank_rotation_includes_dealer``) the house banks that
      round and the rotation restarts at seat 1; without, it restarts at seat 1 at once.
    * (g)(2): the first round after a restack offers no player the bank; the next round starts
      with seat 1.
    """

    seats: int = 6
    first_offer: int = 1
    last_banker: int | None = None
    restack_round: bool = True
    includes_dealer: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.seats, bool) or not isinstance(self.seats, int) or self.seats < 1:
            raise BankingError(f"seats must be a positive int, got {self.seats!r}")
        if self.first_offer != DEALER:
            self._check_seat("first_offer", self.first_offer)
        if self.first_offer == DEALER and not self.includes_dealer:
            raise BankingError("first_offer is the dealer but the rotation excludes the dealer")
        if self.last_banker is not None:
            self._check_seat("last_banker", self.last_banker)

    def _check_seat(self, name: str, seat: object) -> int:
        if isinstance(seat, bool) or not isinstance(seat, int) or not 1 <= seat <= self.seats:
            raise BankingError(f"{name} must be a seat 1-{self.seats}, got {seat!r}")
        return seat

    @classmethod
    def after_restack(cls, rules: PaigowRules, seats: int = 6) -> BankRotation:
        """The state for the first round after the tiles are restacked ((g)(2))."""
        return cls(
            seats=seats, restack_round=True, includes_dealer=rules.bank_rotation_includes_dealer
        )

    def restacked(self) -> BankRotation:
        """The same table after a restack: the next round offers no player the bank."""
        return replace(self, first_offer=1, last_banker=None, restack_round=True)

    def _occupied(self, occupied: Iterable[int]) -> frozenset[int]:
        if isinstance(occupied, (str, bytes)):
            raise BankingError("occupied must be a collection of seat numbers")
        return frozenset(self._check_seat("occupied seat", s) for s in occupied)

    def offer_order(self, occupied: Collection[int]) -> tuple[int, ...]:
        """The seats to offer the bank this round, in order; empty if no player may bank."""
        seats = self._occupied(occupied)
        if self.restack_round or self.first_offer == DEALER:
            return ()
        start = self.first_offer
        cycle = list(range(start, self.seats + 1)) + list(range(1, start))
        return tuple(s for s in cycle if s in seats and s != self.last_banker)

    def next_state(self, occupied: Collection[int], banker: int | None) -> BankRotation:
        """The state for the next round, given this round's occupied seats and the seat that
        banked it (None: the house banked). Refuses a banker who was not offered the bank."""
        order = self.offer_order(occupied)
        if banker is not None:
            self._check_seat("banker", banker)
            if banker not in order:
                why = (
                    "no player may bank the first round after a restack (5324.50(g)(2))"
                    if self.restack_round
                    else "the rotation is with the dealer this round (5324.50(g)(3))"
                    if self.first_offer == DEALER
                    else "no player may bank two consecutive rounds (5324.50(g)(3))"
                    if banker == self.last_banker
                    else "the seat is not occupied"
                )
                raise BankingError(f"seat {banker} may not bank this round: {why}")
        if self.restack_round or self.first_offer == DEALER:
            nxt = 1
        else:
            # The first player offered before the offer passes the dealer (seats after the
            # last one wrap round past the dealer: the rotation has reached the dealer).
            ahead = [s for s in order if s >= self.first_offer]
            nxt = ahead[0] + 1 if ahead else self.seats + 1
            if nxt > self.seats:
                nxt = DEALER if self.includes_dealer else 1
        return replace(self, first_offer=nxt, last_banker=banker, restack_round=False)
