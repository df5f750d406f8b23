"""The starting-position round's order, on a real journal: the draw journaled before it is
shown, one draw per round, a restart replays the number, dice while the RNG is in fault."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.journal.store import Journal
from controller.rng.certified import RngFault
from controller.tables.startpos.layout import StartLayout
from controller.tables.startpos.round import ROW_KINDS, StartposRound
from controller.tables.table import Refused

# 13:69F-31.11(c): 1 through 7, dealer is one, counterclockwise (betting position 1 next).
ASIA = StartLayout(7, ("dealer", "6", "5", "4", "3", "2", "1"), "dealer")


class FakeRng:
    def __init__(self, numbers: list[int]) -> None:
        self.numbers = numbers
        self.draws = 0
        self.faulted = False
        self.fail = False

    def draw(self, low: int = 1, high: int = 8) -> int:
        assert (low, high) == (1, 7)
        if self.fail:
            raise RngFault("stuck source")
        self.draws += 1
        return self.numbers.pop(0)


def make(path: Path, rng: FakeRng | None, shown: list[int | None]) -> tuple[Journal, StartposRound]:
    journal = Journal(path / "journal.sqlite")
    return journal, StartposRound(journal, ASIA, rng, shown.append)


def press(journal: Journal, rnd: StartposRound, button: str, **kw: object) -> list[str]:
    with journal.transaction():  # the application's one transaction per input
        return rnd.press(button, **kw)  # type: ignore[arg-type]


def test_a_round_in_order_and_the_start_position(tmp_path: Path) -> None:
    shown: list[int | None] = []
    journal, rnd = make(tmp_path, FakeRng([4]), shown)
    press(journal, rnd, "no_more_bets")
    lines = press(journal, rnd, "draw")
    # 4 counted counterclockwise from the dealer (one): dealer, 1, 2, 3 -> betting position 3
    assert rnd.now.start == "3" and "number 4" in lines[0]
    assert shown == [4]
    press(journal, rnd, "dealt")
    assert shown == [4, None]  # blanked after the deal
    press(journal, rnd, "settled")
    assert rnd.now.state == "betting"


@pytest.mark.parametrize(
    ("pressed", "button", "names"),
    [
        ((), "draw", "no_more_bets"),
        ((), "dealt", "draw"),
        ((), "settled", "dealt"),
        (("no_more_bets",), "no_more_bets", "settled"),
        (("no_more_bets", "draw"), "draw", "dealt"),
        (("no_more_bets", "draw"), "settled", "dealt"),
    ],
)
def test_out_of_order_is_refused_naming_the_button(
    tmp_path: Path, pressed: tuple[str, ...], button: str, names: str
) -> None:
    journal, rnd = make(tmp_path, FakeRng([2, 5]), [])
    for b in pressed:
        press(journal, rnd, b)
    with pytest.raises(Refused) as refused:
        press(journal, rnd, button)
    assert names in refused.value.reason


def test_one_draw_per_round(tmp_path: Path) -> None:
    rng = FakeRng([2, 5])
    journal, rnd = make(tmp_path, rng, [])
    press(journal, rnd, "no_more_bets")
    press(journal, rnd, "draw")
    with pytest.raises(Refused, match="one draw per round"):
        press(journal, rnd, "draw")
    assert rng.draws == 1


def test_the_draw_is_journaled_before_it_is_shown(tmp_path: Path) -> None:
    seen: list[object] = []
    journal = Journal(tmp_path / "journal.sqlite")

    def show(number: int | None) -> None:
        row = journal.last(ROW_KINDS)
        seen.append((number, row.data["number"] if row else None, journal.in_transaction))

    rnd = StartposRound(journal, ASIA, FakeRng([6]), show)
    press(journal, rnd, "no_more_bets")
    press(journal, rnd, "draw")
    assert seen == [(6, 6, False)]  # shown after the commit, the journal holding the number


def test_a_failed_commit_shows_nothing_and_draws_again_cleanly(tmp_path: Path) -> None:
    shown: list[int | None] = []
    journal, rnd = make(tmp_path, FakeRng([6, 3]), shown)
    press(journal, rnd, "no_more_bets")
    with pytest.raises(RuntimeError), journal.transaction():
        rnd.press("draw")
        raise RuntimeError("power sag before the commit")
    assert shown == [] and rnd.now.number is None and rnd.now.state == "closed"


def test_a_kill_after_the_draw_replays_the_same_number(tmp_path: Path) -> None:
    rng = FakeRng([5])
    journal, rnd = make(tmp_path, rng, [])
    press(journal, rnd, "no_more_bets")
    press(journal, rnd, "draw")
    journal.close()  # the power cut
    again_rng = FakeRng([1])
    shown: list[int | None] = []
    journal2, again = make(tmp_path, again_rng, shown)
    lines = again.recover()
    assert again.now.number == 5 and shown == [5] and "not drawn again" in lines[0]
    with pytest.raises(Refused, match="one draw per round"):
        press(journal2, again, "draw")
    assert again_rng.draws == 0


def test_dice_while_the_rng_is_in_fault(tmp_path: Path) -> None:
    rng = FakeRng([])
    rng.fail = True
    journal, rnd = make(tmp_path, rng, [])
    press(journal, rnd, "no_more_bets")
    with pytest.raises(Refused, match="dice A B C"):
        press(journal, rnd, "draw")
    rng.faulted = True
    with pytest.raises(Refused, match="three dice"):
        press(journal, rnd, "dice", dice=(1, 7, 2))
    press(journal, rnd, "dice", dice=(2, 3, 3))
    # 13:69F-31.11(b)3.i: "If the dice total eight, the dealer would receive the first card"
    assert rnd.now.number == 8 and rnd.now.start == "dealer"


def test_dice_refused_while_the_rng_works(tmp_path: Path) -> None:
    journal, rnd = make(tmp_path, FakeRng([3]), [])
    press(journal, rnd, "no_more_bets")
    with pytest.raises(Refused, match="press draw"):
        press(journal, rnd, "dice", dice=(1, 2, 3))


def test_void_before_the_draw_is_the_dealers_after_it_a_supervisors(tmp_path: Path) -> None:
    shown: list[int | None] = []
    journal, rnd = make(tmp_path, FakeRng([2]), shown)
    press(journal, rnd, "no_more_bets")
    press(journal, rnd, "void")
    assert rnd.now.state == "betting"
    press(journal, rnd, "no_more_bets")
    press(journal, rnd, "draw")
    with pytest.raises(Refused, match="supervisor"):
        press(journal, rnd, "void")
    with pytest.raises(Refused, match="say why"):
        press(journal, rnd, "void", supervisor=True)
    press(journal, rnd, "void", supervisor=True, reason="cards dropped")
    assert rnd.now.state == "betting" and shown[-1] is None


_INPUTS = st.lists(
    st.tuples(
        st.sampled_from(["no_more_bets", "draw", "dice", "dealt", "settled", "void", "odd", ""]),
        st.lists(st.integers(-2, 9), max_size=4),
        st.booleans(),
        st.text(max_size=8),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(_INPUTS, st.booleans())
def test_any_input_sequence_is_refused_or_taken_never_a_crash(
    tmp_path_factory: pytest.TempPathFactory,
    inputs: list[tuple[str, list[int], bool, str]],
    faulted: bool,
) -> None:
    """Fuzz: whatever the dealer presses, each input is taken or refused with a reason; at most
    one number is drawn per round and every drawn number is 1-7 (RNG) or a dice total 3-18."""
    rng = FakeRng([1, 2, 3, 4, 5, 6, 7] * 4)
    rng.faulted = faulted
    journal, rnd = make(tmp_path_factory.mktemp("fuzz"), rng, [])
    for button, dice, supervisor, reason in inputs:
        try:
            press(journal, rnd, button, dice=dice, supervisor=supervisor, reason=reason)
        except Refused as exc:
            assert exc.reason
    drawn = [row for row in journal.events() if row.kind == "startpos.drawn"]
    rounds = [row.round for row in drawn]
    assert len(rounds) == len(set(rounds))
    for row in drawn:
        n = row.data["number"]
        assert 1 <= n <= 7 if row.data["source"] == "rng" else 3 <= n <= 18
    journal.close()
