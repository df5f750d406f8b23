"""The drawing rules, cell by cell: 9 NYCRR 5324.20(f)(10)-(13)."""

import pytest

from controller.games import baccarat
from controller.games.baccarat import TotalError

# 5324.20(f)(13), transcribed from the seed: banker total -> (draws when the player's third card
# is, stays when it is). The seed's first row is cut short ("0,1,2 | 0,1,2,3,4,5,6,7"); a banker
# with 0, 1 or 2 always draws, as every published analysis assumes (issue 3), so 8 and 9 draw too.
F13 = {
    0: ({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, set()),
    1: ({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, set()),
    2: ({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, set()),
    3: ({0, 1, 2, 3, 4, 5, 6, 7, 9}, {8}),
    4: ({2, 3, 4, 5, 6, 7}, {0, 1, 8, 9}),
    5: ({4, 5, 6, 7}, {0, 1, 2, 3, 8, 9}),
    6: ({6, 7}, {0, 1, 2, 3, 4, 5, 8, 9}),
    7: (set(), set(range(10))),  # "Stands"
    8: (set(), set(range(10))),  # "Natural stand"
    9: (set(), set(range(10))),
}


def test_f13_transcription_is_a_partition() -> None:
    for draws, stays in F13.values():
        assert draws | stays == set(range(10)) and not draws & stays


@pytest.mark.parametrize("banker", range(10))
@pytest.mark.parametrize("third", range(10))
def test_f13_every_cell(banker: int, third: int) -> None:
    # 5324.20(f)(13): every (banker total, player's third card value) cell.
    draws, _ = F13[banker]
    assert baccarat.banker_draws(banker, third) is (third in draws)
    assert baccarat.BANKER_DRAWS[banker][third] is (third in draws)


@pytest.mark.parametrize("third", range(10))
@pytest.mark.parametrize("banker", [0, 1, 2])
def test_f13_cut_row_banker_0_1_2_always_draws(banker: int, third: int) -> None:
    # The seed's row is cut after 7; 8 and 9 are the cells it lost (issue 3).
    assert baccarat.banker_draws(banker, third)


@pytest.mark.parametrize("total", range(10))
def test_f11_player(total: int) -> None:
    # 5324.20(f)(11): "0 to 5 Draws", "6 to 9 Stays".
    assert baccarat.player_draws(total) is (total <= 5)


@pytest.mark.parametrize("banker", range(10))
def test_f12_banker_when_player_stood(banker: int) -> None:
    # 5324.20(f)(12): draws on 0-5, stands on 6-9.
    assert baccarat.banker_draws(banker, None) is (banker <= 5)


@pytest.mark.parametrize("total", range(10))
def test_f10_naturals(total: int) -> None:
    assert baccarat.is_natural(total) is (total in (8, 9))


@pytest.mark.parametrize("bad", [-1, 10, True, 3.0, "3", None])
def test_out_of_range_is_refused(bad: object) -> None:
    with pytest.raises(TotalError):
        baccarat.player_draws(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        baccarat.banker_draws(bad, 3)  # type: ignore[arg-type]
    if bad is not None:
        with pytest.raises(ValueError):
            baccarat.banker_draws(3, bad)  # type: ignore[arg-type]
