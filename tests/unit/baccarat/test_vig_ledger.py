"""Deferred vigorish per seat, the lammers of 9 NYCRR 5324.20(d)(2)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.games.baccarat.errors import BaccaratError
from controller.games.baccarat.vig_ledger import LedgerError, VigLedger, VigorishOutstanding
from controller.games.baccarat.wagers import Rules


def test_owe_and_collect_per_seat() -> None:
    """(d)(2): "The amount of any vigorish not collected at the time of the winning payout shall
    be evidenced by the placement of coins or lammers reflecting the amount owed imprinted thereon,
    along with the seat number of the player owing such vigorish." At 5%, a $25 banker win owes
    $1.25 (five 25-cent lammers); a later $10 win at the same seat owes 50 cents more."""
    ledger = VigLedger.for_rules(Rules(vig_percent=5))
    ledger = ledger.owe(3, 125).owe(7, 25).owe(3, 50)
    assert ledger.owed(3) == 175 and ledger.lammers(3) == 7
    assert ledger.by_seat == {3: 175, 7: 25}
    assert ledger.total_owed() == 200
    cents, after = ledger.collect(3)
    assert cents == 175 and after.by_seat == {7: 25}
    assert ledger.owed(3) == 175  # immutable: the old ledger is unchanged
    assert after.collect(5) == (0, after)


def test_four_percent_lammers_are_20_cents() -> None:
    """(d)(2)(ii): "When four percent vigorish is in effect, the gaming facility shall use 20-cent
    denomination lammers"."""
    ledger = VigLedger.for_rules(Rules(vig_percent=4))
    assert ledger.step_cents == 20
    assert ledger.owe(1, 40).lammers(1) == 2
    with pytest.raises(LedgerError, match="20-cent lammers"):
        ledger.owe(1, 25)


def test_ez_table_has_no_ledger() -> None:
    """(d)(3): "If the gaming facility offers EZ baccarat, no vigorish shall be collected."""
    with pytest.raises(LedgerError, match=r"\(d\)\(3\)"):
        VigLedger.for_rules(Rules(ez=True))


@pytest.mark.parametrize(
    ("seat", "cents"),
    [(0, 25), (-1, 25), (True, 25), (1, 0), (1, -25), (1, 30), (1, 25.0), ("1", 25)],
)
def test_bad_seat_or_amount_refused(seat: object, cents: object) -> None:
    with pytest.raises(LedgerError) as e:
        VigLedger().owe(seat, cents)  # type: ignore[arg-type]
    assert isinstance(e.value, BaccaratError) and isinstance(e.value, ValueError)


def test_bad_step_refused() -> None:
    with pytest.raises(LedgerError):
        VigLedger(step_cents=5)


def test_shoe_refuses_reshuffle_while_vigorish_is_owed() -> None:
    """(d)(2): "all outstanding vigorish shall be collected prior to reshuffling the cards in a
    shoe." The error names every seat and amount."""
    ledger = VigLedger().owe(2, 125).owe(9, 50)
    assert not ledger.clear
    with pytest.raises(VigorishOutstanding) as e:
        ledger.require_clear()
    msg = str(e.value)
    assert "seat 2 owes $1.25 (5 lammers)" in msg and "seat 9 owes $0.50 (2 lammers)" in msg
    assert "$1.75 in all" in msg and "5324.20(d)(2)" in msg
    assert e.value.owed == {2: 125, 9: 50}
    collected, empty = ledger.collect_all()
    assert collected == {2: 125, 9: 50} and empty.clear and empty.total_owed() == 0
    empty.require_clear()  # nothing owed: no error


@settings(max_examples=100)
@given(st.lists(st.tuples(st.integers(1, 14), st.integers(1, 40)), max_size=30))
def test_ledger_totals_match_sum_of_entries(entries: list[tuple[int, int]]) -> None:
    """Whatever is owed and collected, the ledger's total is the sum of what was marked less what
    was collected, and collecting every seat empties it."""
    ledger = VigLedger()
    marked: dict[int, int] = {}
    for seat, lammers in entries:
        ledger = ledger.owe(seat, 25 * lammers)
        marked[seat] = marked.get(seat, 0) + 25 * lammers
    assert ledger.by_seat == marked and ledger.total_owed() == sum(marked.values())
    taken = 0
    for seat in list(marked):
        cents, ledger = ledger.collect(seat)
        taken += cents
    assert taken == sum(marked.values()) and ledger.clear
