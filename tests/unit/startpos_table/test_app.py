"""The starting-position table in the real application on the shipped profiles: the scripted
dealer deals it, a restart after the draw shows the same number (never drawn again), and the
monitor's number page reads its published view."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.app import Application
from controller.cli import simulate
from controller.config.profile import load_profile
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
