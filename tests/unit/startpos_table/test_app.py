"""The starting-position table in the real application on the shipped profiles: the scripted
dealer deals it, a restart after the draw shows the same number (never drawn again), and the
monitor's number page reads its published view."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.app import Application
from controller.cli import simulate
from controller.config.profile import load_profile
from controller.floor.events import EventReader
from controller.floor.meters import MeterFold, chi_square
from controller.journal.recall import recall
from controller.scoreboard.content import document
from controller.tables.startpos.table import StartposTable
from controller.tables.table import Refused
from drivers.buttons import ButtonPressed

ROOT = Path(__file__).parents[3]
ASIA = ROOT / "hw_profiles" / "sim-asia-poker.toml"
# The betting position each number names, counted independently from 13:69F-31.11(c): the
# dealer is one, then betting positions 1, 2, ... counterclockwise.
EXPECTED = {1: "dealer", **{n: str(n - 1) for n in range(2, 8)}}


@pytest.mark.parametrize("profile", ["sim-asia-poker.toml", "sim-paigow-poker.toml"])
def test_simulate_deals_three_rounds(tmp_path: Path, profile: str) -> None:
    said: list[str] = []
    code = simulate(str(ROOT / "hw_profiles" / profile), 3, str(tmp_path), said.append)
    rounds = [line for line in said if line.startswith("round ")]
    assert code == 0 and len(rounds) == 3
    for line in rounds:
        number = int(line.split(": rng ")[1].split(",")[0])
        assert line.endswith(f"the deal starts at {EXPECTED[number]}")


def _app(state: Path) -> tuple[Application, StartposTable]:
    app = Application(load_profile(ASIA), str(state), console_port="none")
    app.start()
    table = app.table
    assert isinstance(table, StartposTable)
    return app, table


def _press(app: Application, table: StartposTable, name: str) -> None:
    with app.journal.transaction():
        table.handle(ButtonPressed(name, 0))


def test_a_restart_after_the_draw_shows_the_same_number(tmp_path: Path) -> None:
    app, table = _app(tmp_path)
    _press(app, table, "no_more_bets")
    _press(app, table, "draw")
    number, start = table.round.now.number, table.round.now.start
    assert number is not None and start == EXPECTED[number]
    app.close()  # the power cut: nothing more is written

    app2, again = _app(tmp_path)
    assert (again.round.now.number, again.round.now.start) == (number, start)
    _press(app2, again, "draw")  # refused: one draw per round
    assert again.round.now.number == number
    refused = app2.journal.last(["startpos.refused"])
    assert refused is not None and "one draw per round" in str(refused.data["reason"])
    # the number page: the count from the dealer, and who gets the first stack
    doc = document(1, again.published())
    assert doc["number"] == number and doc["showing"] is True
    to = ["the_dealer", {}] if start == "dealer" else ["seat", {"n": int(start)}]
    assert doc["start"] == {
        "key": "count_from",
        "vars": {"n": number, "from": ["the_dealer", {}], "to": to},
    }
    _press(app2, again, "dealt")
    assert document(2, again.published()).get("number") is None  # blanked after the deal
    _press(app2, again, "settled")
    # recall: the round's rows, the draw made before the restart among them, closed
    (record,) = recall(app2.journal, 1)
    kinds = [row.kind for row in record.events]
    assert kinds.count("startpos.drawn") == 1 and kinds[-1] == "startpos.settled"
    assert "closed by startpos.settled" in record.summary()
    app2.close()


def test_closed_shows_the_bar_between_rounds_never_over_a_number(tmp_path: Path) -> None:
    from drivers.number_display import FAULT_SEGMENTS, SevenSegmentDisplay

    app, table = _app(tmp_path)
    display = app.devices.table.display
    assert isinstance(display, SevenSegmentDisplay)
    app.dispatch(ButtonPressed("no_more_bets", 0))
    assert app.disable_latch.disable("audit", "host", "host")
    assert display.read_back() == frozenset()  # the round under way goes on
    app.dispatch(ButtonPressed("draw", 0))
    assert table.round.now.number is not None and display.read_back() != FAULT_SEGMENTS
    for name in ("dealt", "settled"):
        app.dispatch(ButtonPressed(name, 0))
    assert display.read_back() == FAULT_SEGMENTS  # CLOSED between rounds: the lone bar
    app.dispatch(ButtonPressed("no_more_bets", 0))
    assert table.round.now.state == "betting"  # no new round while CLOSED
    app.close()


def test_a_console_input_is_journaled_as_what_it_was(tmp_path: Path) -> None:
    app, table = _app(tmp_path)
    with app.journal.transaction():
        table.action("sim", ["button", "no_more_bets"], "technician@serial")
    row = app.journal.last(["startpos.input", "startpos.refused"])
    assert row is not None and row.kind == "startpos.input"
    with app.journal.transaction(), pytest.raises(Refused, match="press no_more_bets"):
        table.action("dice", ["1", "2", "3"], "technician@serial")
    row = app.journal.last(["startpos.input", "startpos.refused"])
    assert row is not None and row.kind == "startpos.refused"
    assert "press no_more_bets" in row.data["reason"]
    app.close()


def _act(app: Application, table: StartposTable, name: str, args: list[str], who: str) -> None:
    with app.journal.transaction():
        table.action(name, args, who)


def test_meters_and_events_count_this_table_as_every_table(tmp_path: Path) -> None:
    """docs/meters.md and docs/events.md on the starting-position table: rounds played, voids
    before and after the draw (170), the RNG's fault (120, faults.rng) and its clearing (121),
    the dice, power lost during a round (101), a supervisor's shift start, and the chi-square of
    its numbers over 1 to its range (7 for Asia poker)."""
    app, table = _app(tmp_path)
    _press(app, table, "no_more_bets")
    _press(app, table, "draw")
    first = table.round.now
    _press(app, table, "dealt")
    _press(app, table, "settled")
    _press(app, table, "no_more_bets")
    _press(app, table, "draw")
    out = table.round.now.number
    _act(app, table, "void", ["tiles", "dropped"], "supervisor@serial")  # after the draw
    _press(app, table, "no_more_bets")
    _press(app, table, "void")  # before the draw: the dealer's button
    assert app.rng is not None
    app.rng._latch("stuck source (test)")
    _press(app, table, "no_more_bets")
    _press(app, table, "draw")  # refused: the RNG is in fault, the fault journaled once
    _press(app, table, "draw")
    _act(app, table, "dice", ["2", "3", "3"], "dealer@serial")
    _press(app, table, "dealt")
    _press(app, table, "settled")
    with app.journal.transaction():
        table.clear_fault("technician@serial")
    _press(app, table, "no_more_bets")
    app.close()  # the power cut with bets closed: nothing more is written
    app2, again = _app(tmp_path)
    assert again.round.now.state == "closed"
    _act(app2, again, "shift", ["start"], "supervisor@serial")
    reader = app2.journal.reader()
    try:
        rows = list(reader.events())
    finally:
        reader.close()
    fold = MeterFold().add_all(rows)
    life = fold.lifetime
    assert first.number is not None and out is not None
    drawn = [first.number, out]
    assert {k: v for k, v in life.items() if k.startswith("startpos.rng.")} == {
        f"startpos.rng.{n}": drawn.count(n) for n in set(drawn)
    }
    assert (
        life["startpos.games_played"],
        life["startpos.voided_after_draw"],
        life["startpos.voided_before_draw"],
        life["startpos.dice_rounds"],
        life["faults.rng"],
        life["power_lost_mid_round"],
        life["power_ups"],
    ) == (2, 1, 1, 1, 1, 1, 2)
    assert fold.shift == {}  # the supervisor's shift start
    assert [f"startpos.rng.{n}" for n in range(1, 8)] == [
        n for n in fold.names() if n.startswith("startpos.rng.")
    ]
    assert not any(n.startswith("paigow.") for n in fold.names())
    chi = chi_square(fold).lines("RNG numbers")
    assert chi[1].startswith("counts 1-7: ") and "(6 degrees of freedom)" in chi[2]
    reader_ = EventReader()
    codes = [e.code for r in rows for e in reader_.events(r)]
    assert [codes.count(c) for c in (100, 101, 120, 121, 170)] == [2, 1, 1, 1, 1]
    (void,) = [e for r in rows for e in EventReader().events(r) if e.code == 170]
    assert void.details["number_out"] == out
    app2.close()


def test_recall_lists_a_console_input_with_the_round_it_opens(tmp_path: Path) -> None:
    app, table = _app(tmp_path)
    for name in ("no_more_bets", "draw", "dealt", "settled"):
        _press(app, table, name)
    _act(app, table, "sim", ["button", "no_more_bets"], "technician@serial")
    row = app.journal.last(["startpos.input"])
    assert row is not None and row.round == 2  # round 1 is closed: the press opens round 2
    app.close()


def test_an_rng_fault_stays_latched_across_a_restart_until_cleared(tmp_path: Path) -> None:
    """As at pai gow tiles: a fault journaled before a power cut still stands after it (the
    RNG's own latch is in memory): the draw is refused and the dice taken until a technician's
    `fault clear` (event 121); a later fault is journaled again (120)."""
    app, table = _app(tmp_path)
    assert app.rng is not None
    app.rng._latch("stuck source (test)")
    _press(app, table, "no_more_bets")
    _press(app, table, "draw")  # refused: the fault journaled
    app.close()
    app2, again = _app(tmp_path)
    assert app2.rng is not None and not app2.rng.faulted  # a new process, a fresh RNG
    assert again.faults() and again.published()["dice_mode"] is True
    _press(app2, again, "draw")
    assert app2.journal.last(["startpos.drawn"]) is None  # still refused
    _act(app2, again, "dice", ["1", "2", "3"], "dealer@serial")
    for name in ("dealt", "settled"):
        _press(app2, again, name)
    with app2.journal.transaction():
        assert again.clear_fault("technician@serial")[-1] == "RNG fault cleared"
    assert not again.faults() and again.published()["dice_mode"] is False
    app2.rng._latch("stuck again (test)")
    _press(app2, again, "no_more_bets")
    _press(app2, again, "draw")
    kinds = [
        r.kind for r in app2.journal.events(["startpos.rng_fault", "startpos.rng_fault_cleared"])
    ]
    assert kinds == ["startpos.rng_fault", "startpos.rng_fault_cleared", "startpos.rng_fault"]
    app2.close()


def test_rows_between_rounds_belong_to_the_last_round_but_the_opening_input(
    tmp_path: Path,
) -> None:
    app, table = _app(tmp_path)
    for name in ("no_more_bets", "draw", "dealt", "settled"):
        _press(app, table, name)
    _press(app, table, "draw")  # refused between rounds: round 1's, no round 2 opened
    _act(app, table, "shift", ["start"], "supervisor@serial")
    refused = app.journal.last(["startpos.refused"])
    shift = app.journal.last(["startpos.shift_start"])
    assert refused is not None and refused.round == 1
    assert shift is not None and shift.round == 1
    (newest,) = recall(app.journal, 1)
    assert "not closed" not in newest.summary()
    app.close()
