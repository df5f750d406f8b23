"""``ShoeData`` through a snapshot row: what ``to_json`` writes ``from_json`` reads back, and a
field of another type is an error naming it (controller/tables/baccarat/data.py)."""

from __future__ import annotations

import json

import pytest

from controller.fields.readers import FieldError
from controller.tables.baccarat.data import ShoeData


def _through_json(data: ShoeData) -> dict[str, object]:
    loaded: dict[str, object] = json.loads(json.dumps(data.to_json()))
    return loaded


def test_a_snapshot_reads_back_what_it_wrote() -> None:
    data = ShoeData(
        shoe_no=3,
        coup_no=12,
        round_id=901,
        cards_out=["AS", "TD", "9H", "KC"],
        marks=["H", "C", "H"],
        burn_face_up="7S",
        burn_count=7,
        burned=["2C"],
        coup=["AS", "TD"],
        dead_hand=True,
        pending=[
            {"card": "5H", "kind": "excess", "disclosed": False, "fate": "discard"},
            {
                "card": "6D",
                "kind": "player_third",
                "disclosed": True,
                "fate": "first card of the next hand",
                "burn_more": 6,
                "count": "burn",
                "remedy": "burn_more",
            },
        ],
        face_up_next=True,
        bets={"3": {"banker": 2500}, "1": {"player": 1000, "tie": 500}},
        ledger={"3": 125},
        curator=4,
        last_result="BANKER WINS 7",
        results=["B", "Tpn"],
        last_winner="banker",
        last_totals=[5, 7],
        announce=("BANKER WINS 7", "P 5  B 7"),
        compelled_pass=True,
        shoe_done=True,
        faults=["foreign card"],
        shoe_faults=["a shoe fault"],
        shoe_in_play=True,
        voids_mid_coup=2,
        shoe_unconfirmed="S0001",
        shoe_settings_seq=40,
        settings_seq=880,
    )
    assert ShoeData.from_json(_through_json(data)) == data
    assert ShoeData.from_json(_through_json(ShoeData())) == ShoeData()


def test_a_field_of_another_type_is_an_error_naming_it() -> None:
    with pytest.raises(FieldError, match="'coup_no'"):
        ShoeData.from_json({"coup_no": "12"})
    with pytest.raises(FieldError, match="'disclosed'"):
        ShoeData.from_json({"pending": [{"card": "5H", "kind": "excess", "fate": "discard"}]})
    with pytest.raises(FieldError, match="announce"):
        ShoeData.from_json({"announce": ["one line"]})
