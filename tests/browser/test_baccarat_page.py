"""The baccarat monitor page in headless Chromium against the real controller on sim-baccarat
(eight decks, a fixed shuffle of 85 coups): a whole shoe dealt through the console, and the
page's DOM -- every cell of the bead plate, the big road and the three derived roads, the
counts and percentages, the shoe and coup numbers, the last coup's totals, the limits -- equal
to ``controller.games.baccarat.roads`` applied to the results the journal records (each coup's
code worked out from its cards by the test); at the end of the shoe every coup's cell is on
the 1920x1080 screen, and on a 1024x600 one too, in Chinese."""

from __future__ import annotations

import json
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

from .conftest import SMALL, Page, scoreboard_url

MAX_COUPS = 120
#: Eight decks and a fixed shuffle of the simulated shoe (sim_seed 83: 85 coups, 46 big-road
#: columns, a streak of seven with its dragon tail, ties and both pairs), so every run deals
#: the same shoe: one longer than the board's standard 40 columns, which must grow to hold it.
PROFILE_EXTRA = (
    'scoreboard.table_name = "BACCARAT 7"\n'
    "scoreboard.idle_minutes = 0\n"
    "[rules.baccarat]\ndecks = 8\ntie_max_cents = 100000\n\n"
    "[devices.shoe]\nsim_seed = 83\n"
)
ROADS = ("bead", "big", "big_eye_boy", "small_road", "cockroach_pig")
READABLE_PX = 43  # 2 m from a 1080p monitor (docs/scoreboard.md)


def journaled(rig: Rig, shoe: int) -> list[dict[str, Any]]:
    """This shoe's coup result rows (read-only, as an auditor)."""
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
    return [r for r in rows if r["shoe"] == shoe]


def journaled_codes(rig: Rig, shoe: int) -> list[str]:
    return [expected_code(r) for r in journaled(rig, shoe)]


def dom_roads(page: Page) -> dict[str, list[dict[str, str]]]:
    return {name: page.data(f'[data-road="{name}"]') for name in ROADS}


def check_board(page: Page, rig: Rig, shoe: int, coup: int) -> list[str]:
    rows = journaled(rig, shoe)
    codes = [expected_code(r) for r in rows]
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
        # the percentage of the coups, within rounding (banker, player, tie add up to 100)
        shown = int(page.text(f"pct-{key}").rstrip("%"))
        assert abs(shown - 100 * value / coup) < 1, key
    assert sum(int(page.text(f"pct-{k}").rstrip("%")) for k in ("banker", "player", "tie")) == 100
    assert page.text("shoe") == str(shoe)
    last = rows[-1]
    assert page.text("last-totals") == f"P {last['player_total']} - B {last['banker_total']}"
    return codes


@pytest.mark.slow
def test_a_whole_shoe_on_one_screen_is_the_roads_of_its_results(
    table: Callable[..., Rig], monitor: Callable[..., Any], tmp_path: Path
) -> None:
    rig = table("baccarat", PROFILE_EXTRA)
    rig.shoe = ConsoleShoe(rig)
    rig.login()
    rig.wait_status("shoe_link", "up")
    page = Page(monitor(), scoreboard_url(rig), tmp_path)
    assert page.foreign_resources() == []
    assert page.text("table-name") == "BACCARAT 7"
    # the limits sign: the profile's, as config show has them (cents)
    limits = {d["wager"]: (int(d["min"]), int(d["max"])) for d in page.data("#limits .lim")}
    assert limits == {"banker": (2500, 500000), "player": (2500, 500000), "tie": (500, 100000)}
    open_shoe(rig)
    page.wait(lambda: page.text("shoe") == "1", "shoe 1")
    for coup in range(1, MAX_COUPS + 1):
        # betting: the coup to come, as the dealer display says it
        page.wait(lambda n=coup: page.text("coup") == str(n), f"coup {coup} to come")
        assert (
            f"!DISPLAY PLACE YOUR BETS / COUP {coup}" in rig.alarms
            or coup == 1
            or ("LAST HAND" in rig.alarms[-1])
        )
        press(rig, "no_more_bets", "dealing")
        rig.shoe.deal_coup()
        if coup == 24:
            # Settling: the result is on the board and announced.
            rig.wait_status("state", "settling")
            check_board(page, rig, 1, coup)
            announced = rig.status()["last_result"].rsplit(": ", 1)[1].upper()
            page.wait(lambda w=announced: w in page.text("announce"), "the result announced")
            # the ask, in the roads themselves: the next cell if banker / if player wins
            asked = page.wait(lambda: page.data(".ghost"), "the ask's cells")
            assert {a["askRoad"] for a in asked} >= {"bead", "big"}
            page.screenshot("baccarat-mid-shoe.png")
        status = settle(rig, coup)
        if status["state"] == "shuffle":
            break
    else:
        pytest.fail(f"the shoe did not end within {MAX_COUPS} coups")
    codes = check_board(page, rig, 1, coup)
    assert all(c[0] in "BPT" for c in codes) and coup >= 80
    # The whole shoe on one screen: every coup's cell present (above) and on the screen
    # (not scrolled off, not clipped by its panel), the big road wider than 30 columns.
    assert page.off_screen("[data-road]") == []
    big_cols = max(int(c["col"]) for c in page.data('[data-road="big"]')) + 1
    assert big_cols > 40 and int(page.js("return document.body.dataset.bigCols")) >= big_cols
    assert int(page.js("return document.body.dataset.beadCols")) >= 15  # 6 x 15 and more
    # The shoe has ended: no ask, in the roads or beside them.
    page.wait(lambda: page.js("return document.body.classList.contains('ended')"), "no ask")
    assert page.data(".ghost") == []
    # Readable at 2 m: the header's figures and the counts.
    for element in ("coup", "count-banker", "count-tie", "last-totals"):
        assert page.font_px(element) >= READABLE_PX, element
    page.screenshot("scoreboard-baccarat.png")
    # The same board on a 7-inch 1024x600 panel, in Chinese (traditional) and English: the
    # whole shoe still on its screen.
    small = Page(monitor(SMALL), scoreboard_url(rig) + "?lang=zh-Hant,en", tmp_path)
    small.wait(lambda: len(small.data('[data-road="bead"]')) == coup, "the shoe, small")
    assert dom_roads(small) == expected_cells(codes)
    assert small.off_screen("[data-road]") == []
    assert small.text("count-banker") == page.text("count-banker")
    assert small.js("return document.documentElement.lang") == "zh-Hant"
    small.screenshot("scoreboard-baccarat-1024x600-zh.png")
    # The next shoe starts an empty board (the shuffled button; its burn is not dealt: the
    # simulated shoe holds one shoe's cards).
    press(rig, "shuffled", "burn")
    page.wait(
        lambda: page.text("shoe") == "2" and not page.data("[data-road]"),
        "an empty board for shoe 2",
    )
    assert page.text("last-totals") == "-"
