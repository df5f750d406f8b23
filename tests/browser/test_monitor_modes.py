"""The monitor's modes, in headless Chromium against the real controller on sim-paigow: the
idle screen after the profile's minutes without a change at the table (entered between rounds
only, moving against burn-in, left at once at the next event), and the page of another table
shown as wrong on a monitor that expects this one (docs/scoreboard.md)."""

from __future__ import annotations

import json
import os
import signal
import socket
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.scoreboard.pages import IDLE_SLIDE_S
from tests.hil.rig import Rig

from .conftest import Page, scoreboard_url

IDLE_S = 3.0  # idle_minutes = 0.05
IDLE_EXTRA = (
    "scoreboard.idle_minutes = 0.05\n"
    'scoreboard.table_name = "PAI GOW 3"\n'
    'scoreboard.idle_text = ["WELCOME", "歡迎光臨"]\n'
    'scoreboard.languages = ["en", "zh-Hant"]\n'
)

LOOK = """
const box = document.getElementById("idle-box");
return {idle: document.body.classList.contains("idle"),
        board: getComputedStyle(document.querySelector("body > main")).display,
        slide: box.dataset.slide, text: box.textContent, at: box.style.transform,
        number: document.getElementById("number").dataset.number};
"""


def look(page: Page) -> dict[str, Any]:
    result: dict[str, Any] = page.js(LOOK)
    return result


def test_the_idle_screen_comes_between_rounds_moves_and_goes_at_the_next_event(
    table: Callable[..., Rig], monitor: Callable[..., Any], tmp_path: Path
) -> None:
    rig = table("paigow", IDLE_EXTRA)
    rig.login()
    page = Page(monitor(), scoreboard_url(rig), tmp_path)
    # nothing happens at the table (inspection): the idle screen after IDLE_S
    idle = page.wait(lambda: (lambda s: s if s["idle"] else None)(look(page)), "idle", 15.0)
    assert idle["board"] == "none" and idle["slide"] == "name"
    assert "PAI GOW 3" in idle["text"] and "PAI GOW" in idle["text"]
    page.screenshot("scoreboard-idle.png")
    # the next slide (the limits), somewhere else on the screen
    moved = page.wait(
        lambda: (lambda s: s if s["slide"] != "name" else None)(look(page)),
        "the next slide",
        IDLE_SLIDE_S + 5.0,
    )
    assert moved["slide"] == "limits" and "$25 - $5,000" in moved["text"]
    assert moved["at"] != idle["at"]
    # the next event brings the board back at once
    pressed = time.monotonic()
    rig.ok("sim button shuffled")
    back = page.wait(lambda: (lambda s: s if not s["idle"] else None)(look(page)), "the board")
    assert time.monotonic() - pressed < 2.0
    assert back["board"] != "none"
    # a round in progress (the number shown) never gives way to the idle screen
    rig.ok("sim button no_more_bets")
    number = rig.ok("sim button draw")
    assert any(line.startswith("rng ") for line in number)
    page.wait(lambda: look(page)["number"] != "", "the number")
    time.sleep(IDLE_S + 3.0)
    assert not look(page)["idle"]
    # dealt, hands set, settled: between rounds again (washing), then idle again
    for button in ("dealt", "hands_set", "settled"):
        rig.ok(f"sim button {button}")
    page.wait(lambda: look(page)["idle"], "idle again", 15.0)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_monitor_shown_another_table_s_page_says_it_is_the_wrong_table(
    table: Callable[..., Rig], monitor: Callable[..., Any], tmp_path: Path
) -> None:
    """The kiosk of table PG-A on its port; PG-A stops and PG-B starts on the same port (the
    case that once showed another table's page with nothing to tell it): the kiosk's page,
    which expects PG-A (its address says so), reconnects and shows WRONG TABLE, not PG-B's
    number as PG-A's."""
    port = _free_port()
    a = table("paigow", 'name = "PG-A"\n', port=port, state="state-a")
    url = scoreboard_url(a)
    page = Page(monitor(), url + "?table=PG-A", tmp_path)
    assert page.js("return document.body.dataset.table") == "PG-A"
    assert not page.js("return document.body.classList.contains('wrong')")
    with urllib.request.urlopen(url + "state", timeout=10) as reply:
        assert json.loads(reply.read())["table"] == "PG-A"
    os.kill(a.pid, signal.SIGTERM)
    a.stop()
    b = table("paigow", 'name = "PG-B"\n', port=port, state="state-b")
    with urllib.request.urlopen(url + "state", timeout=10) as reply:
        assert json.loads(reply.read())["table"] == "PG-B"
    page.wait(lambda: page.js("return document.body.classList.contains('wrong')"), "WRONG", 30)
    shown = page.js(
        "return {detail: document.getElementById('wrong').textContent,"
        " board: getComputedStyle(document.querySelector('body > main')).visibility,"
        " shown: document.body.dataset.shownTable}"
    )
    assert "WRONG TABLE" in shown["detail"]
    assert "TABLE PG-B" in shown["detail"] and "EXPECTS TABLE PG-A" in shown["detail"]
    assert shown["board"] == "hidden" and shown["shown"] == "PG-B"
    page.screenshot("scoreboard-wrong-table.png")
    # a monitor that expects PG-B, or nothing in particular, shows PG-B's page
    right = Page(monitor(), url + "?table=PG-B", tmp_path)
    assert not right.js("return document.body.classList.contains('wrong')")
    assert b.status()["state"] == "inspection"
