"""The baccarat monitor page in headless Chromium against the real controller on sim-baccarat
(six decks): a whole shoe dealt through the console, and the page's DOM -- every cell of the
bead plate, the big road and the three derived roads, the counts, the shoe and coup numbers --
equal to ``controller.games.baccarat.roads`` applied to the results the journal records
(each coup's code worked out from its cards by the test)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.games.baccarat import roads
from tests.hil.rig import Rig
from tests.hil.shoe import ConsoleShoe
from tests.hil.test_baccarat import open_shoe, press, settle
from tests.unit.scoreboard.expected import expected_cells, expected_code

from .conftest import Page, scoreboard_url

MAX_COUPS = 120
#: Six decks (the fewest 5324.20(a)(4) allows: a whole shoe in fewer coups) and a fixed shuffle
#: of the simulated shoe, so every run deals the same shoe (its first 24 coups have ties, both
#: pairs and a dragon tail: what docs/img/scoreboard-baccarat.png shows).
PROFILE_EXTRA = "[rules.baccarat]\ndecks = 6\n\n[devices.shoe]\nsim_seed = 128\n"
ROADS = ("bead", "big", "big_eye_boy", "small_road", "cockroach_pig")
READABLE_PX = 43  # 2 m from a 1080p monitor (docs/scoreboard.md)


def journaled_codes(rig: Rig, shoe: int) -> list[str]:
    """This shoe's results from the journal's coup result rows (read-only, as an auditor)."""
    import json

    db = sqlite3.connect(f"file:{rig.state_dir / 'journal.sqlite'}?mode=ro", uri=True)
    try:
        rows = [
            json.loads(r[0])
            for r in db.execute(
                "SELECT r.data FROM rows r JOIN kinds k ON k.id = r.kind"
                " WHERE k.kind = 'baccarat.coup.result' ORDER BY r.seq"
            )
        ]
    finally:
        db.close()
    return [expected_code(r) for r in rows if r["shoe"] == shoe]


def dom_roads(page: Page) -> dict[str, list[dict[str, str]]]:
    return {name: page.data(f'[data-road="{name}"]') for name in ROADS}


def check_board(page: Page, rig: Rig, shoe: int, coup: int) -> list[str]:
    codes = journaled_codes(rig, shoe)
    assert len(codes) == coup
    page.wait(
        lambda: page.text("coup") == str(coup) and len(page.data('[data-road="bead"]')) == coup,
        f"coup {coup} on the page",
    )
    assert dom_roads(page) == expected_cells(codes)
    c = roads.counts(roads.Result.from_code(x) for x in codes)
    for key, value in (
        ("banker", c.banker),
        ("player", c.player),
        ("tie", c.tie),
        ("banker_pair", c.banker_pair),
        ("player_pair", c.player_pair),
    ):
        assert page.text(f"count-{key}") == str(value), key
    assert page.text("shoe") == str(shoe)
    return codes


@pytest.mark.slow
def test_a_shoe_on_the_board_is_the_roads_of_its_results(
    table: Callable[..., Rig], monitor: Callable[[], Any], tmp_path: Path
) -> None:
    rig = table("baccarat", PROFILE_EXTRA)
    rig.shoe = ConsoleShoe(rig)
    rig.login()
    rig.wait_status("shoe_link", "up")
    page = Page(monitor(), scoreboard_url(rig), tmp_path)
    assert page.foreign_resources() == []
    open_shoe(rig)
    page.wait(lambda: page.text("shoe") == "1", "shoe 1")
    for coup in range(1, MAX_COUPS + 1):
        press(rig, "no_more_bets", "dealing")
        rig.shoe.deal_coup()
        if coup == 24:
            # Settling: the result is on the board and announced (what docs/img shows).
            rig.wait_status("state", "settling")
            check_board(page, rig, 1, coup)
            announced = rig.status()["last_result"].rsplit(": ", 1)[1].upper()
            page.wait(lambda w=announced: w in page.text("announce"), "the result announced")
            page.screenshot("baccarat-mid-shoe.png")
        status = settle(rig, coup)
        if status["state"] == "shuffle":
            break
    else:
        pytest.fail(f"the shoe did not end within {MAX_COUPS} coups")
    codes = check_board(page, rig, 1, coup)
    assert all(c[0] in "BPT" for c in codes) and coup >= 40
    # Readable at 2 m: the header's figures and the counts.
    for element in ("coup", "count-banker", "count-tie"):
        assert page.font_px(element) >= READABLE_PX, element
    page.screenshot("baccarat-end-of-shoe.png")
    # The next shoe starts an empty board (the shuffled button; its burn is not dealt: the
    # simulated shoe holds one shoe's cards).
    press(rig, "shuffled", "burn")
    page.wait(
        lambda: page.text("shoe") == "2" and not page.data("[data-road]"),
        "an empty board for shoe 2",
    )
