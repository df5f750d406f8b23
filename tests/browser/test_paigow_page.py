"""The pai gow monitor page in headless Chromium against the real controller on sim-paigow:
the number the RNG drew (as the journal and ``status`` say), its starting position and seat and
the delivery style, blank once the deal is complete (5324.50(e)(6)), "DICE" in dice mode, a
page that reconnects after the controller restarts, nothing loaded from outside."""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.tables.paigow.definition import position_name, seat_of
from tests.hil.rig import Rig

from .conftest import HEIGHT, Page, scoreboard_url

#: 2 m from a 1080p monitor, a character needs about 43 px (docs/scoreboard.md).
READABLE_PX = 43


def press(rig: Rig, button: str, state: str | tuple[str, ...]) -> dict[str, str]:
    rig.ok(f"sim button {button}")
    return rig.wait_status("state", state)


def number_shown(page: Page) -> str:
    return page.data("#number")[0]["number"]


def test_the_drawn_number_then_blank_after_the_deal(
    table: Callable[..., Rig], monitor: Callable[[], Any], tmp_path: Path
) -> None:
    rig = table("paigow")
    rig.login()
    page = Page(monitor(), scoreboard_url(rig), tmp_path)
    assert number_shown(page) == "" and page.data("#mode")[0]["mode"] == "rng"
    assert page.foreign_resources() == []
    press(rig, "shuffled", "betting")
    press(rig, "no_more_bets", ("no_more_bets", "bank_style"))
    status = press(rig, "draw", "dealing")
    number = int(status["number"])
    position = int(status["start_position"].split()[0])
    page.wait(lambda: number_shown(page) == str(number), f"the number {number}")
    start = page.data("#start")[0]
    assert start["position"] == str(position)
    assert start["seat"] == ("" if seat_of(position) is None else str(seat_of(position)))
    assert position_name(position).upper() in page.text("start")
    assert page.data("#style")[0]["style"] == "house_way_from_right"
    assert page.text("number") == str(number)
    # Readable at 2 m: the number fills half the screen, the position line is large.
    assert page.font_px("number") >= 0.4 * HEIGHT
    assert page.font_px("start") >= READABLE_PX
    page.screenshot("paigow-drawn.png")
    press(rig, "dealt", "setting_hands")
    page.wait(lambda: number_shown(page) == "", "the number blanked after dealt")
    assert page.text("number") == "" and page.text("start") == ""
    page.screenshot("paigow-blank.png")


def test_dice_mode_shows_dice_then_the_count(
    table: Callable[..., Rig], monitor: Callable[[], Any], tmp_path: Path
) -> None:
    rig = table("paigow")
    rig.login()
    rig.ok("config set start_mode dice")
    page = Page(monitor(), scoreboard_url(rig), tmp_path)
    press(rig, "shuffled", "betting")
    press(rig, "no_more_bets", ("no_more_bets", "bank_style"))
    page.wait(lambda: page.data("#mode")[0]["mode"] == "dice", "dice mode")
    page.wait(lambda: page.text("number") == "DICE", "DICE in the number's place")
    assert number_shown(page) == ""
    rig.ok("dice 4 5 6")
    # (e)(3): 15 counted counter-clockwise from the dealer as one ends at position 7, seat 6.
    page.wait(lambda: number_shown(page) == "7", "the count of the dice")
    assert page.data("#start")[0]["seat"] == "6"
    assert "4 + 5 + 6 = 15" in page.text("detail")
    page.screenshot("paigow-dice.png")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_page_reconnects_and_catches_up_after_a_restart(
    table: Callable[..., Rig], monitor: Callable[[], Any], tmp_path: Path
) -> None:
    port = _free_port()
    rig = table("paigow", port=port)
    rig.login()
    page = Page(monitor(), scoreboard_url(rig), tmp_path)
    press(rig, "shuffled", "betting")
    press(rig, "no_more_bets", ("no_more_bets", "bank_style"))
    number = press(rig, "draw", "dealing")["number"]
    page.wait(lambda: number_shown(page) == number, "the number")
    os.kill(rig.pid, signal.SIGKILL)  # a power cut
    rig.stop()
    page.wait(
        lambda: page.js("return document.body.classList.contains('stale')"),
        "the connection-lost banner",
    )
    again = table("paigow", port=port)  # same journal, same port
    # Recovery shows the same number (a power cycle never re-rolls); the page reconnects by
    # itself and takes the current state from the first event.
    page.wait(
        lambda: not page.js("return document.body.classList.contains('stale')"),
        "the page reconnected",
        timeout=30.0,
    )
    assert number_shown(page) == number
    again.login()
    press(again, "dealt", "setting_hands")
    page.wait(lambda: number_shown(page) == "", "blank after dealt")
