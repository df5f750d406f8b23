"""Player bank and co-bank: 5324.50(g); N.J.A.C. 13:69F-10.8.

Worked examples in cents for every branch of the center-of-table settlement ((g)(14)-(18)), the
dealer's wager ((g)(8)), who may bank ((g)(1)-(4)) and the rotation of the offer ((g)(3)), plus
hypothesis properties: the ledger always sums to zero, the center always nets to zero, no balance
goes negative, and every player is settled exactly as :func:`settle_wager` settles the wager.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.games.paigow.banking import (
    CENTER,
    DEALER,
    HOUSE,
    BankingError,
    BankRotation,
    BankRoundSettlement,
    BankShortfallError,
    BankWager,
    Transfer,
    bank_hand_set_by,
    bank_ineligibility,
    dealer_wager_against_bank,
    require_bank_eligible,
    settle_bank_round,
)
from controller.games.paigow.errors import PaigowError
from controller.games.paigow.settlement import PaigowRules, SettlementError, settle_wager

BANK = PaigowRules(player_bank_offered=True, co_bank_offered=True)
BANK_Q = PaigowRules(player_bank_offered=True, co_bank_offered=True, round_vig_to_quarter=True)


def W(player: str, stake: int, outcome: str) -> BankWager:
    return BankWager(player=player, stake_cents=stake, outcome=outcome)


def co_bank_round(wagers: list[BankWager], chips: int) -> BankRoundSettlement:
    """A round co-banked by the dealer and seat6, which puts up ``chips`` cents ((g)(16))."""
    return settle_bank_round(wagers, bank="seat6", bank_chips_cents=chips, rules=BANK, co_bank=True)


# ---------------------------------------------------------------------------------------------
# Player bank, (g)(14), (g)(15), (g)(17), (g)(18)
# ---------------------------------------------------------------------------------------------


def test_player_bank_surplus_is_charged_five_percent_then_goes_to_the_bank() -> None:
    """(g)(15): "All losing wagers shall be collected and placed in the center of the table. ...
    all winning wagers, including the dealer's wager, shall be paid by the dealer with the chips
    located in the center of the table. ... If ... there is a surplus in the center of the table,
    this amount shall be charged a five percent vigorish ... Once the vigorish has been paid, the
    remaining amount shall be given to the bank."

    Dealer's $15 loses (moved to the center, (g)(14)); seat1 $20 loses; seat2 $10 wins; seat3 $5
    pushes. Center $35, winners $10, surplus $25, vigorish $1.25, bank receives $23.75. Seat2
    pays 50c vigorish to the house ((g)(18))."""
    s = settle_bank_round(
        [W("seat1", 2000, "lose"), W("seat2", 1000, "win"), W("seat3", 500, "push")],
        bank="seat4",
        bank_chips_cents=10_000,
        rules=BANK,
        dealer_wager_cents=1500,
        dealer_outcome="lose",
    )
    assert s.transfers == (
        Transfer(HOUSE, CENTER, 1500, "dealer's losing wager to the center (g)(14)"),
        Transfer("seat1", CENTER, 2000, "losing wager to the center (g)(15)-(16)"),
        Transfer(CENTER, "seat2", 1000, "winning wager paid 1:1 from the center"),
        Transfer("seat2", HOUSE, 50, "vigorish on the amount won (g)(18), (f)(10)"),
        Transfer(CENTER, HOUSE, 125, "vigorish on the surplus (g)(15)-(16), (f)(10)"),
        Transfer(CENTER, "seat4", 2375, "remaining surplus to the bank (g)(15)-(16)"),
    )
    assert (s.collected_cents, s.winning_cents, s.surplus_cents, s.shortfall_cents) == (
        3500,
        1000,
        2500,
        0,
    )
    assert (s.surplus_vig_cents, s.bank_receives_cents, s.player_vig_cents) == (125, 2375, 50)
    assert s.net() == {HOUSE: -1325, "seat1": -2000, "seat2": 950, "seat4": 2375}
    assert sum(s.net().values()) == 0
    assert s.bank_chips_after_cents == 12_375


def test_player_bank_shortfall_is_covered_by_the_bank() -> None:
    """(g)(15): "If the chips in the center of the table become exhausted before all winning
    wagers have been paid, the dealer shall collect from the bank an amount equal to the
    remaining winning wagers".  (g)(17): the dealer's win goes back to the chip tray.

    Seat1 $30 wins, seat2 $10 loses, the dealer's $20 wins. Center $10, winners $50: the bank
    puts in $40. Seat1 nets $28.50 after $1.50 vigorish; the house +$20 +$1.50."""
    s = settle_bank_round(
        [W("seat1", 3000, "win"), W("seat2", 1000, "lose")],
        bank="seat5",
        bank_chips_cents=5000,
        rules=BANK,
        dealer_wager_cents=2000,
        dealer_outcome="win",
    )
    assert Transfer("seat5", CENTER, 4000, "bank covers the shortfall (g)(15)") in s.transfers
    assert Transfer(CENTER, HOUSE, 2000, "dealer's winning wager to the chip tray (g)(17)") in (
        s.transfers
    )
    assert (s.shortfall_cents, s.bank_shortfall_cents, s.house_shortfall_cents) == (4000, 4000, 0)
    assert (s.surplus_cents, s.bank_receives_cents) == (0, 0)
    assert s.net() == {"seat1": 2850, "seat2": -1000, "seat5": -4000, HOUSE: 2150}
    assert s.bank_chips_after_cents == 1000


def test_player_bank_shortfall_exactly_the_banks_chips() -> None:
    s = settle_bank_round(
        [W("seat1", 3000, "win"), W("seat2", 1000, "lose")],
        bank="seat5",
        bank_chips_cents=2000,
        rules=BANK,
    )
    assert s.bank_chips_after_cents == 0
    assert s.net()["seat5"] == -2000


def test_player_bank_shortfall_it_cannot_cover_is_an_error() -> None:
    """Never a negative balance: the bank must put in $20.00 but has $19.99 on the table."""
    with pytest.raises(
        BankShortfallError, match=r"must put 2000 cents .*\(g\)\(15\).* only 1999"
    ) as e:
        settle_bank_round(
            [W("seat1", 3000, "win"), W("seat2", 1000, "lose")],
            bank="seat5",
            bank_chips_cents=1999,
            rules=BANK,
        )
    assert (e.value.needed_cents, e.value.available_cents) == (2000, 1999)
    assert isinstance(e.value, ValueError) and isinstance(e.value, PaigowError)


def test_player_bank_balanced_center() -> None:
    """Losers exactly pay the winners: no shortfall, no surplus, nothing to the bank."""
    s = settle_bank_round(
        [W("seat1", 1000, "win"), W("seat2", 1000, "lose")],
        bank="seat3",
        bank_chips_cents=0,
        rules=BANK,
    )
    assert (s.shortfall_cents, s.surplus_cents, s.bank_receives_cents) == (0, 0, 0)
    assert s.net() == {"seat1": 950, "seat2": -1000, HOUSE: 50}


def test_dealer_push_goes_back_to_the_tray() -> None:
    """(g)(14): "If the dealer pushes, the dealer shall return the amount wagered by the dealer
    against the bank to the chip tray" -- no money moves."""
    s = settle_bank_round(
        [W("seat1", 1000, "push")],
        bank="seat2",
        bank_chips_cents=0,
        rules=BANK,
        dealer_wager_cents=1000,
        dealer_outcome="push",
    )
    assert s.transfers == ()
    assert s.net() == {}


def test_surplus_vigorish_follows_the_quarter_rounding() -> None:
    """(g)(15): the surplus is charged "a five percent vigorish in accordance with subdivision
    (f)", so the (f)(10) rounding applies: $11.00 surplus -> 55c -> 75c; bank gets $10.25."""
    s = settle_bank_round(
        [W("seat1", 1100, "lose")], bank="seat2", bank_chips_cents=0, rules=BANK_Q
    )
    assert (s.surplus_vig_cents, s.bank_receives_cents) == (75, 1025)


def test_player_on_two_areas_has_two_wagers() -> None:
    s = settle_bank_round(
        [W("seat1", 1000, "win"), W("seat1", 500, "lose")],
        bank="seat3",
        bank_chips_cents=1000,
        rules=BANK,
    )
    assert s.net() == {"seat1": 450, "seat3": -500, HOUSE: 50}


# ---------------------------------------------------------------------------------------------
# Co-bank, (g)(16)
# ---------------------------------------------------------------------------------------------


def test_co_bank_surplus_half_to_the_tray_then_five_percent_then_the_co_bank() -> None:
    """(g)(16): "If ... there is a surplus in the center of the table, this amount shall be
    counted and the dealer shall place one-half of such amount into the chip tray. The dealer
    shall collect a five percent vigorish ... on the remaining amount and place the vigorish
    amount in the chip tray. The remaining amount shall then be given to the co-bank."

    Seat1 $20 and seat2 $10 lose, seat3 $10 wins. Surplus $20: $10 to the tray, 50c vigorish on
    the other $10, $9.50 to the co-bank."""
    s = co_bank_round(
        [W("seat1", 2000, "lose"), W("seat2", 1000, "lose"), W("seat3", 1000, "win")], 5000
    )
    assert (s.surplus_cents, s.house_half_cents, s.surplus_vig_cents, s.bank_receives_cents) == (
        2000,
        1000,
        50,
        950,
    )
    assert s.transfers[-3:] == (
        Transfer(CENTER, HOUSE, 1000, "half the surplus to the chip tray (g)(16)"),
        Transfer(CENTER, HOUSE, 50, "vigorish on the surplus (g)(15)-(16), (f)(10)"),
        Transfer(CENTER, "seat6", 950, "remaining surplus to the bank (g)(15)-(16)"),
    )
    assert s.net() == {"seat1": -2000, "seat2": -1000, "seat3": 950, HOUSE: 1100, "seat6": 950}


def test_co_bank_odd_cent_of_a_surplus_goes_to_the_house() -> None:
    """Surplus $10.01: the tray's half is $5.01 (the odd cent to the house), 5% of the other
    $5.00 is 25c, the co-bank gets $4.75."""
    s = co_bank_round([W("seat1", 2001, "lose"), W("seat2", 1000, "win")], 0)
    assert (s.surplus_cents, s.house_half_cents, s.surplus_vig_cents, s.bank_receives_cents) == (
        1001,
        501,
        25,
        475,
    )


def test_co_bank_shortfall_half_and_half() -> None:
    """(g)(16): "the dealer shall collect from the co-bank, an amount equal to one-half of the
    remaining winning wagers ... The dealer shall remove an amount equal to one-half of the
    remaining winning wagers from the chip tray".

    Seat1 $30 wins, seat2 $10 loses: shortfall $20, $10 from the co-bank, $10 from the tray."""
    s = co_bank_round([W("seat1", 3000, "win"), W("seat2", 1000, "lose")], 1000)
    assert (s.shortfall_cents, s.bank_shortfall_cents, s.house_shortfall_cents) == (
        2000,
        1000,
        1000,
    )
    assert Transfer("seat6", CENTER, 1000, "bank covers the shortfall (g)(16)") in s.transfers
    assert Transfer(HOUSE, CENTER, 1000, "house covers half the shortfall (g)(16)") in s.transfers
    assert s.net() == {"seat1": 2850, "seat2": -1000, "seat6": -1000, HOUSE: -850}
    assert s.bank_chips_after_cents == 0


def test_co_bank_odd_cent_of_a_shortfall_is_decided_for_the_house() -> None:
    """Shortfall $20.01: the co-bank puts in $10.01, the house $10.00."""
    s = co_bank_round([W("seat1", 3001, "win"), W("seat2", 1000, "lose")], 1001)
    assert (s.bank_shortfall_cents, s.house_shortfall_cents) == (1001, 1000)


def test_co_bank_shortfall_it_cannot_cover_is_an_error() -> None:
    with pytest.raises(BankShortfallError, match=r"must put 1001 cents .*\(g\)\(16\).* only 1000"):
        co_bank_round([W("seat1", 3001, "win"), W("seat2", 1000, "lose")], 1000)


def test_no_dealer_wager_against_a_co_bank() -> None:
    """(g)(5): "When co-banking is in effect, the dealer may not place a wager against the
    bank." """
    with pytest.raises(BankingError, match=r"may not place a wager against a co-bank"):
        settle_bank_round(
            [W("seat1", 1000, "win")],
            bank="seat2",
            bank_chips_cents=5000,
            rules=BANK,
            co_bank=True,
            dealer_wager_cents=1000,
            dealer_outcome="lose",
        )


def test_the_dealer_sets_a_co_banks_hand() -> None:
    """(g)(5): "When the dealer is co-banking, the dealer shall be responsible for setting the
    hand of the bank." (f)(3): otherwise "the player banking the game shall ... set the two
    hands"."""
    assert bank_hand_set_by(co_bank=True) == "dealer"
    assert bank_hand_set_by(co_bank=False) == "bank"


# ---------------------------------------------------------------------------------------------
# Bad input to the settlement
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wagers", "kwargs", "error", "message"),
    [
        ([W("seat2", 1000, "win")], {}, BankingError, "seat2 is the bank and cannot wager"),
        ([W("seat1", 1000, "surrender")], {}, BankingError, "seat1: surrender against a player"),
        ([W("seat1", 1000, "won")], {}, BankingError, "seat1: outcome must be .* got 'won'"),
        ([W("seat1", 0, "win")], {}, BankingError, "stake of seat1 must be a positive"),
        ([W("house", 1000, "win")], {}, BankingError, "reserved"),
        ([], {"dealer_wager_cents": 500}, BankingError, "dealer_outcome must be"),
        ([], {"dealer_outcome": "win"}, BankingError, "the dealer has no wager"),
        ([], {"bank_chips_cents": -1}, BankingError, "bank_chips_cents must not be negative"),
        ([], {"co_bank": True, "rules": PaigowRules(player_bank_offered=True)}, BankingError,
         "do not offer co-banking"),
        ([], {"rules": PaigowRules()}, BankingError, "do not offer a player bank"),
        ("seat1", {}, BankingError, "sequence of BankWager"),
        ([("seat1", 1000, "win")], {}, BankingError, r"wagers\[0\] must be a BankWager"),
    ],
)  # fmt: skip
def test_bad_bank_round(
    wagers: list[BankWager], kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    args: dict[str, object] = {"bank": "seat2", "bank_chips_cents": 10_000, "rules": BANK}
    args.update(kwargs)
    with pytest.raises(error, match=message):
        settle_bank_round(wagers, **args)  # type: ignore[arg-type]


def test_banking_errors_are_settlement_value_errors() -> None:
    assert issubclass(BankingError, SettlementError)
    assert issubclass(BankShortfallError, BankingError)
    assert issubclass(BankingError, ValueError) and issubclass(BankingError, PaigowError)


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------

wager_st = st.builds(
    BankWager,
    player=st.sampled_from(["seat1", "seat2", "seat3", "seat5", "seat6"]),
    stake_cents=st.integers(1, 500_000),
    outcome=st.sampled_from(["win", "push", "lose"]),
)


@given(
    wagers=st.lists(wager_st, max_size=6),
    chips=st.integers(0, 2_000_000),
    co_bank=st.booleans(),
    quarter=st.booleans(),
    dealer=st.tuples(st.integers(0, 500_000), st.sampled_from(["win", "push", "lose"])),
)
def test_ledger_properties(
    wagers: list[BankWager],
    chips: int,
    co_bank: bool,
    quarter: bool,
    dealer: tuple[int, str],
) -> None:
    rules = BANK_Q if quarter else BANK
    d_stake, d_outcome = (0, None) if co_bank or dealer[0] == 0 else dealer
    try:
        s = settle_bank_round(
            wagers,
            bank="seat4",
            bank_chips_cents=chips,
            rules=rules,
            co_bank=co_bank,
            dealer_wager_cents=d_stake,
            dealer_outcome=d_outcome,
        )
    except BankShortfallError as e:
        assert e.needed_cents > e.available_cents == chips
        return
    net = s.net()  # asserts the center nets to zero
    assert sum(net.values()) == 0
    assert all(t.cents > 0 for t in s.transfers)
    # no negative balance: the bank never pays in more than it has
    assert s.bank_chips_after_cents == chips + net.get("seat4", 0) >= 0
    # each player is settled exactly as a single wager is
    for player in {w.player for w in wagers}:
        expected = sum(
            settle_wager(w.outcome, w.stake_cents, rules) for w in wagers if w.player == player
        )
        assert net.get(player, 0) == expected
    # center accounting
    assert s.collected_cents + s.shortfall_cents == s.winning_cents + s.surplus_cents
    assert s.shortfall_cents == s.bank_shortfall_cents + s.house_shortfall_cents
    assert min(s.shortfall_cents, s.surplus_cents) == 0
    # the surplus charge: at most 5% of what it is charged on plus one rounding step
    charged = s.surplus_cents - s.house_half_cents
    assert 0 <= s.surplus_vig_cents <= charged
    assert s.surplus_vig_cents * 100 < charged * 5 + (25 if quarter else 1) * 100
    assert s.bank_receives_cents == charged - s.surplus_vig_cents
    if co_bank:  # odd cents: the house's half of a surplus is never the smaller one ...
        assert s.house_half_cents - (s.surplus_cents - s.house_half_cents) in (0, 1)
        # ... and the house's half of a shortfall never the larger one
        assert s.bank_shortfall_cents - s.house_shortfall_cents in (0, 1)
    else:
        assert s.house_half_cents == s.house_shortfall_cents == 0


# ---------------------------------------------------------------------------------------------
# The dealer's wager against a player bank, (g)(8)
# ---------------------------------------------------------------------------------------------


def test_dealer_wager_defaults_to_the_players_last_wager() -> None:
    """(g)(8): "remove chips from the chip tray in an amount equal to the last wager made by
    such player against the dealer or in another amount, which shall be submitted to the
    commission for approval"."""
    assert dealer_wager_against_bank(last_wager_cents=2500, co_bank=False) == 2500
    assert (
        dealer_wager_against_bank(last_wager_cents=2500, co_bank=False, approved_amount_cents=5000)
        == 5000
    )


def test_bank_may_direct_a_lesser_dealer_wager_or_none() -> None:
    """(g)(8): "The bank may direct that the sum wagered by the dealer be a lesser amount or that
    the dealer places no wager during that round of play." """
    assert (
        dealer_wager_against_bank(last_wager_cents=2500, co_bank=False, bank_directs_cents=1000)
        == 1000
    )
    assert (
        dealer_wager_against_bank(last_wager_cents=2500, co_bank=False, bank_directs_cents=0) == 0
    )
    with pytest.raises(
        BankingError, match="only a lesser dealer wager or none.*3000 cents is more than 2500"
    ):
        dealer_wager_against_bank(last_wager_cents=2500, co_bank=False, bank_directs_cents=3000)


def test_no_dealer_wager_with_a_co_bank() -> None:
    """(g)(8): "If co-banking is in effect, the dealer shall not remove any chips from the chip
    tray pursuant to this subdivision." """
    assert dealer_wager_against_bank(last_wager_cents=2500, co_bank=True) == 0
    with pytest.raises(BankingError, match="no wager against a co-bank"):
        dealer_wager_against_bank(last_wager_cents=2500, co_bank=True, bank_directs_cents=500)


# ---------------------------------------------------------------------------------------------
# Who may bank, (g)(1)-(4)
# ---------------------------------------------------------------------------------------------

OK = dict(
    rules=BANK,
    first_round_after_restack=False,
    banked_previous_round=False,
    wagered_in_last_house_banked_round=True,
    chips_on_table_cents=10_000,
    other_players_wagers_cents=10_000,
)


def test_eligible_player() -> None:
    """(g)(4)(ii): "sufficient chips on the table to cover all of the wagers placed by other
    players" -- exactly enough is enough."""
    assert bank_ineligibility(**OK) == ()  # type: ignore[arg-type]
    require_bank_eligible(**OK)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"rules": PaigowRules()}, r"does not offer the bank \(5324.50\(g\)\(1\)\)"),
        ({"first_round_after_restack": True}, r"first round after a restack .*\(g\)\(2\)"),
        ({"banked_previous_round": True}, r"two consecutive rounds .*\(g\)\(3\)"),
        ({"wagered_in_last_house_banked_round": False},
         r"no wager against the dealer .*\(g\)\(4\)\(i\)"),
        ({"chips_on_table_cents": 9_999},
         r"9999 cents .* less than the 10000 cents .*\(g\)\(4\)\(ii\)"),
    ],
)  # fmt: skip
def test_each_reason_not_to_bank(change: dict[str, object], reason: str) -> None:
    args = {**OK, **change}
    reasons = bank_ineligibility(**args)  # type: ignore[arg-type]
    assert len(reasons) == 1
    with pytest.raises(BankingError, match=reason):
        require_bank_eligible(**args)  # type: ignore[arg-type]


def test_all_reasons_are_listed() -> None:
    args = {**OK, "first_round_after_restack": True, "chips_on_table_cents": 0}
    assert len(bank_ineligibility(**args)) == 2  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# The offer and its rotation, (g)(2)-(3)
# ---------------------------------------------------------------------------------------------

ALL = {1, 2, 3, 4, 5, 6}


def test_no_player_banks_the_first_round_after_a_restack() -> None:
    """(g)(2): "A player may not be the bank at the first round of play after the dealer is
    required to restack and shuffle the tiles"."""
    rot = BankRotation.after_restack(BANK)
    assert rot.offer_order(ALL) == ()
    with pytest.raises(BankingError, match=r"seat 1 may not bank .*\(g\)\(2\)"):
        rot.next_state(ALL, banker=1)


def test_second_round_starts_with_the_player_farthest_to_the_right() -> None:
    """(g)(3): "The dealer shall, starting with the player farthest to the right of the dealer in
    a counter-clockwise rotation, offer the bank to each player until a player accepts"."""
    rot = BankRotation.after_restack(BANK).next_state(ALL, banker=None)
    assert rot.offer_order(ALL) == (1, 2, 3, 4, 5, 6)


def test_first_offered_accepts_then_the_next_player_is_offered_first() -> None:
    """(g)(3): "If the first player offered the bank accepts, the player seated to the right of
    such player shall be offered the bank first on the next round of play." ... "In no event may
    any player be the bank for two consecutive rounds of play." """
    rot = BankRotation(first_offer=1, restack_round=False)
    rot = rot.next_state(ALL, banker=1)
    assert rot.first_offer == 2 and rot.last_banker == 1
    assert rot.offer_order(ALL) == (2, 3, 4, 5, 6)  # seat 1 banked last round
    with pytest.raises(BankingError, match=r"seat 1 may not bank .*two consecutive rounds"):
        rot.next_state(ALL, banker=1)


def test_initial_offer_rotates_whoever_accepts() -> None:
    """(g)(3): "The initial offer to be the bank shall rotate counterclockwise around the table"
    -- seat 2 is offered first and passes, seat 3 accepts: seat 3 is first next round."""
    rot = BankRotation(first_offer=2, restack_round=False).next_state(ALL, banker=4)
    assert rot.first_offer == 3
    assert rot.offer_order(ALL) == (3, 5, 6, 1, 2)


def test_rotation_returns_to_the_dealer() -> None:
    """(g)(3): "... until the offer returns to the dealer": after seat 6 the house banks one
    round, then the rotation starts again with the player farthest to the right."""
    rot = BankRotation(first_offer=6, restack_round=False).next_state(ALL, banker=None)
    assert rot.first_offer == DEALER
    assert rot.offer_order(ALL) == ()
    with pytest.raises(BankingError, match="with the dealer this round"):
        rot.next_state(ALL, banker=2)
    rot = rot.next_state(ALL, banker=None)
    assert rot.first_offer == 1 and rot.offer_order(ALL) == (1, 2, 3, 4, 5, 6)


def test_rotation_without_a_dealer_turn() -> None:
    rules = PaigowRules(player_bank_offered=True, bank_rotation_includes_dealer=False)
    rot = BankRotation(first_offer=6, restack_round=False, includes_dealer=False)
    assert rot.next_state(ALL, banker=None).first_offer == 1
    assert BankRotation.after_restack(rules).includes_dealer is False


def test_empty_seats_are_skipped() -> None:
    occupied = {2, 5}
    rot = BankRotation(first_offer=3, restack_round=False)
    assert rot.offer_order(occupied) == (5, 2)
    rot = rot.next_state(occupied, banker=5)
    assert rot.first_offer == 6  # the seat to the right of seat 5, the first player offered
    assert rot.offer_order(occupied) == (2,)  # seat 5 banked last round
    # nobody from seat 6 to the last seat: the rotation has reached the dealer
    assert rot.next_state(occupied, banker=2).first_offer == DEALER


def test_restacked_resets_the_rotation() -> None:
    rot = BankRotation(first_offer=4, last_banker=3, restack_round=False).restacked()
    assert rot.offer_order(ALL) == ()
    assert rot.next_state(ALL, banker=None) == BankRotation(
        first_offer=1, last_banker=None, restack_round=False
    )


def test_rotation_bad_input() -> None:
    rot = BankRotation(first_offer=1, restack_round=False)
    with pytest.raises(BankingError, match="occupied seat must be a seat 1-6, got 7"):
        rot.offer_order({7})
    with pytest.raises(BankingError, match="seat 3 may not bank .*not occupied"):
        rot.next_state({1, 2}, banker=3)
    with pytest.raises(BankingError, match="seats must be a positive int"):
        BankRotation(seats=0)
    with pytest.raises(BankingError, match="first_offer must be a seat 1-6, got 9"):
        BankRotation(first_offer=9)


@given(
    occupied=st.lists(st.sets(st.integers(1, 6)), min_size=1, max_size=30),
    choices=st.lists(st.integers(0, 6), min_size=30, max_size=30),
    includes_dealer=st.booleans(),
)
def test_no_player_ever_banks_two_rounds_in_a_row(
    occupied: list[set[int]], choices: list[int], includes_dealer: bool
) -> None:
    rot = BankRotation(includes_dealer=includes_dealer)  # the first round after a restack
    last: int | None = None
    for seats, choice in zip(occupied, choices, strict=False):
        order = rot.offer_order(seats)
        banker = order[choice % len(order)] if order and choice else None
        assert banker is None or banker != last
        rot = rot.next_state(seats, banker)
        last = banker


# ---------------------------------------------------------------------------------------------
# Review: named settings for what (g)(16) and (f)(5) leave open in a bank round
# ---------------------------------------------------------------------------------------------


def test_co_bank_odd_cent_of_a_shortfall_is_a_named_setting() -> None:
    """(g)(16): "an amount equal to one-half of the remaining winning wagers" from the co-bank and
    "an amount equal to one-half of the remaining winning wagers from the chip tray". A $20.01
    shortfall has no whole-cent half; ``co_bank_shortfall_odd_cent`` says who puts in the odd
    cent: "co_bank" (default: $10.01 co-bank, $10.00 house) or "house" ($10.00 / $10.01)."""
    wagers = [W("seat1", 3001, "win"), W("seat2", 1000, "lose")]
    s = settle_bank_round(wagers, bank="seat6", bank_chips_cents=1001, rules=BANK, co_bank=True)
    assert (s.bank_shortfall_cents, s.house_shortfall_cents) == (1001, 1000)
    rules = PaigowRules(
        player_bank_offered=True, co_bank_offered=True, co_bank_shortfall_odd_cent="house"
    )
    s = settle_bank_round(wagers, bank="seat6", bank_chips_cents=1000, rules=rules, co_bank=True)
    assert (s.bank_shortfall_cents, s.house_shortfall_cents) == (1000, 1001)
    assert s.bank_chips_after_cents == 0
    assert sum(s.net().values()) == 0


def _surrender_rules(where: str) -> PaigowRules:
    return PaigowRules(
        player_bank_offered=True,
        co_bank_offered=True,
        surrender_against_bank=where,  # type: ignore[arg-type]
    )


def test_surrender_against_a_player_bank_to_the_center() -> None:
    """(f)(5): "Once the player has announced an intention to surrender, the dealer shall: (i)
    immediately collect the wager from such player"; (g)(15): "All losing wagers shall be
    collected and placed in the center of the table." With ``surrender_against_bank="center"``
    a surrendered wager goes to the center like a losing one: seat1 surrenders $10, seat2 wins
    $5; the center pays seat2 and the $5 surplus less 25c vigorish goes to the bank."""
    s = settle_bank_round(
        [W("seat1", 1000, "surrender"), W("seat2", 500, "win")],
        bank="seat3",
        bank_chips_cents=0,
        rules=_surrender_rules("center"),
    )
    assert (s.collected_cents, s.surplus_cents, s.bank_receives_cents) == (1000, 500, 475)
    assert s.net() == {"seat1": -1000, "seat2": 475, "seat3": 475, HOUSE: 50}


def test_surrender_against_a_player_bank_to_the_tray() -> None:
    """``surrender_against_bank="house"``: the surrendered wager goes to the chip tray ((f)(7)'s
    place for collected wagers) and not to the center; seat2's win then is a $5 shortfall the
    bank covers."""
    s = settle_bank_round(
        [W("seat1", 1000, "surrender"), W("seat2", 500, "win")],
        bank="seat3",
        bank_chips_cents=500,
        rules=_surrender_rules("house"),
    )
    assert (s.collected_cents, s.shortfall_cents, s.bank_receives_cents) == (0, 500, 0)
    assert s.net() == {"seat1": -1000, "seat2": 475, "seat3": -500, HOUSE: 1025}


def test_surrender_against_a_player_bank_refused_by_default() -> None:
    assert PaigowRules().surrender_against_bank == "refuse"
    with pytest.raises(BankingError, match="surrender_against_bank"):
        settle_bank_round(
            [W("seat1", 1000, "surrender")], bank="seat2", bank_chips_cents=0, rules=BANK
        )
    no_surrender = PaigowRules(
        player_bank_offered=True, surrender_offered=False, surrender_against_bank="center"
    )
    with pytest.raises(BankingError, match="surrender is not offered"):
        settle_bank_round(
            [W("seat1", 1000, "surrender")], bank="seat2", bank_chips_cents=0, rules=no_surrender
        )
