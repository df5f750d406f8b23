"""A result's compact code (how a table keeps a shoe's results for the scoreboard) and the
result of a dealt coup: winner, pairs (a hand's first two cards of one rank) and natural."""

from __future__ import annotations

import itertools

import pytest

from controller.games import baccarat
from controller.games.baccarat import Result, RoadError, result_of


def test_every_result_has_a_code_that_reads_back() -> None:
    seen = set()
    for winner, bp, pp, nat in itertools.product(
        ("banker", "player", "tie"), (False, True), (False, True), (False, True)
    ):
        r = Result(winner, banker_pair=bp, player_pair=pp, natural=nat)  # type: ignore[arg-type]
        assert Result.from_code(r.code) == r
        seen.add(r.code)
    assert len(seen) == 24
    assert Result("banker", player_pair=True, natural=True).code == "Bpn"
    assert Result("tie").code == "T"


@pytest.mark.parametrize("code", ["", "b", "X", "banker", "Bx", "Bnb", "Bpb", "Bbb", "B ", None, 7])
def test_bad_codes_are_refused(code: object) -> None:
    with pytest.raises(RoadError):
        Result.from_code(code)  # type: ignore[arg-type]


def deal(*codes: str) -> baccarat.Coup:
    return baccarat.deal([baccarat.card(c) for c in codes])


def test_result_of_a_coup() -> None:
    # Shoe order: player, banker, player, banker (5324.20(f)(5)).
    # Player 9H 9C = 8 (natural), banker KD QS = 0: player wins, player pair, natural.
    assert result_of(deal("9H", "KD", "9C", "QS")) == Result(
        "player", player_pair=True, natural=True
    )
    # A ten and a king share a value, not a rank: no pair. Banker 5S 5D = 0 and draws.
    coup = deal("TH", "5S", "KC", "5D", "2C", "4H")
    r = result_of(coup)
    assert not r.player_pair and r.banker_pair and not r.natural
    assert r.winner == coup.winner
    # A pair in a hand's third card is no pair: player 2C 3D then 2H.
    r = result_of(deal("2C", "KD", "3D", "QS", "2H", "7C"))
    assert not r.player_pair and not r.banker_pair
