"""`sim button NAME` drives the real DealerButtons driver through SimGPIO; the scripted dealer."""

from __future__ import annotations

import random
import re
from pathlib import Path

from controller.cli import simulate
from controller.tables.paigow.script import run_script
from drivers.buttons import ButtonPressed, DealerButtons

from .helpers import BUTTON_PINS, make_rig, settings

PROFILE = Path(__file__).resolve().parents[3] / "hw_profiles" / "sim-paigow.toml"


def test_sim_button_runs_the_real_driver(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    posted: list[object] = []
    buttons = DealerButtons(rig.gpio, BUTTON_PINS, posted.append, bounce_ms=30)
    for name in ("shuffled", "no_more_bets", "draw", "draw"):
        assert rig.act(f"sim button {name}") == [f"pressed {name} (BCM {BUTTON_PINS[name]})"]
    assert [p.name for p in posted if isinstance(p, ButtonPressed)] == [
        "shuffled",
        "no_more_bets",
        "draw",
        "draw",
    ]
    assert not buttons.is_held("draw")  # released again
    for event in posted:
        rig.table.handle(event)
    assert rig.state == "dealing" and len(rig.rows("paigow.drawn")) == 1
    exc = rig.try_act("sim button nosuch")
    assert exc is not None and exc.code == "RANGE"
    buttons.close()


def test_script_on_a_bare_table(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    lines = run_script(rig.table, 5)
    drawn = rig.rows("paigow.drawn")
    assert len(lines) == 5 == len(drawn)
    for line, row in zip(lines, drawn, strict=True):
        rec = row.data["record"]
        assert line.startswith(
            f"round {row.round}: rng {rec['number']}, starting position {rec['start_position']} ("
        )
    assert rig.state == "washing" and rig.table.model.round_id == 6


def test_script_in_dice_mode(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, settings(start_mode="dice"))
    lines = run_script(rig.table, 3, dice=random.Random(1))
    assert all(re.match(r"round \d: dice \d\+\d\+\d=\d+ \(count [1-8]\)", line) for line in lines)
    assert len(rig.rows("paigow.dice")) == 3


def test_simulate_runs_the_real_application(tmp_path: Path) -> None:
    out: list[str] = []
    assert simulate(str(PROFILE), 3, str(tmp_path), out=out.append) == 0
    rounds = [line for line in out if line.startswith("round ")]
    assert [line.split(":")[0] for line in rounds] == ["round 1", "round 2", "round 3"]
    # The same state directory carries on from the journal: round 4 next.
    out.clear()
    assert simulate(str(PROFILE), 1, str(tmp_path), out=out.append) == 0
    assert out[-1].startswith("round 4: rng ")
