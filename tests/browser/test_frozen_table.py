"""A frozen table does not look live: the real controller on sim-paigow is stopped with SIGSTOP
(its event stream stays open, so the browser sees no error) and the page in headless Chromium
dims all of itself, header included, under "NO SIGNAL FROM THE TABLE" within a few seconds;
SIGCONT and it comes back by itself (docs/scoreboard.md "Safety")."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.scoreboard.pages import SILENCE_S
from tests.hil.rig import Rig

from .conftest import Page, scoreboard_url

FROZEN_S = 8.0

LOOK = """
const op = (sel) => parseFloat(getComputedStyle(document.querySelector(sel)).opacity);
const notice = document.getElementById("silent");
return {silent: document.body.classList.contains("silent"),
        stale: document.body.classList.contains("stale"),
        header: op("body > header"), main: op("body > main"),
        notice: getComputedStyle(notice).display !== "none" ? notice.textContent : ""};
"""


def look(page: Page) -> dict[str, Any]:
    result: dict[str, Any] = page.js(LOOK)
    return result


def test_a_frozen_controller_dims_the_whole_page_and_it_comes_back(
    table: Callable[..., Rig], monitor: Callable[[], Any], tmp_path: Path
) -> None:
    rig = table("paigow")
    page = Page(monitor(), scoreboard_url(rig), tmp_path)
    live = page.wait(lambda: (lambda s: s if not s["silent"] else None)(look(page)), "a live page")
    assert live["header"] == 1.0 and live["main"] == 1.0 and live["notice"] == ""
    frozen_at = time.monotonic()
    os.kill(rig.pid, signal.SIGSTOP)
    try:
        dimmed = page.wait(
            lambda: (lambda s: s if s["silent"] else None)(look(page)),
            "the no-signal notice",
            timeout=SILENCE_S + 3.0,
        )
        noticed_s = time.monotonic() - frozen_at
        assert SILENCE_S - 1.5 <= noticed_s <= SILENCE_S + 3.0, noticed_s
        assert dimmed["header"] < 0.5 and dimmed["main"] < 0.5
        assert dimmed["notice"] == "NO SIGNAL FROM THE TABLE"
        assert not dimmed["stale"]  # the connection itself never failed
        page.screenshot("scoreboard-no-signal.png")
        time.sleep(max(0.0, FROZEN_S - (time.monotonic() - frozen_at)))
        assert look(page)["silent"]
    finally:
        os.kill(rig.pid, signal.SIGCONT)
    back = page.wait(
        lambda: (lambda s: s if not s["silent"] else None)(look(page)),
        "the page live again",
        timeout=5.0,
    )
    assert back["header"] == 1.0 and back["main"] == 1.0 and back["notice"] == ""
    assert rig.status()["state"] == "inspection"
