"""The console's ``houseway`` is the pai gow table's question (the console holds no game rules):
the house way's hands for four tiles, under the ``paigow.house_way_policy`` setting, with nothing
journaled and no round touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.games.paigow.houseway import set_hand
from controller.tables.table import Refused

from .helpers import make_rig


def test_houseway_answers_the_house_ways_hands_and_journals_nothing(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    rows = len(rig.rows(""))
    tiles = ["1-2", "4-5", "2-4", "6-6"]
    lines = rig.table.query("houseway", tiles)
    decision = set_hand(tiles, None)  # the rules engine, asked directly
    assert lines[0] == (
        f"high {' '.join(map(str, decision.high))}  low {' '.join(map(str, decision.low))}"
    )
    assert lines[1] == f"by {decision.reason} (house way default)"
    assert len(rig.rows("")) == rows


@pytest.mark.parametrize(
    "args, code",
    [
        (["7-8", "1-1", "2-2", "3-3"], "SYNTAX"),
        (["1-2", "1-2", "3-3", "4-4"], "RANGE"),
        (["1-1", "2-2", "3-3"], "SYNTAX"),
    ],
)
def test_a_bad_houseway_line_is_refused_with_its_code(
    tmp_path: Path, args: list[str], code: str
) -> None:
    rig = make_rig(tmp_path)
    with pytest.raises(Refused) as caught:
        rig.table.query("houseway", args)
    assert caught.value.code == code


def test_another_games_question_is_unknown(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    with pytest.raises(Refused) as caught:
        rig.table.query("odds", [])
    assert caught.value.code == "UNKNOWN"


def test_a_guard_runs_once_per_input(tmp_path: Path) -> None:
    """The refusal's question and the machine's conditions are one evaluation of each guard
    (controller/tables/kernel/refusal.py): counted on ``no more bets``, whose two transitions
    (a player bank or not) both read the same guard."""
    rig = make_rig(tmp_path)
    rig.press("shuffled")
    calls: list[str] = []
    guards = rig.table.model.guards
    original = guards._guards["player_banks"]  # noqa: SLF001

    def counted(event: object) -> str | None:
        calls.append("player_banks")
        return original(event)

    guards._guards["player_banks"] = counted  # noqa: SLF001
    rig.press("no_more_bets")
    assert rig.state == "no_more_bets"
    assert calls == ["player_banks"]
