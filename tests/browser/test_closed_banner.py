"""CLOSED on the monitor (docs/scoreboard.md "CLOSED"): while no new round may start, because
of the host's ``disable`` or, here, the enclosure door holding play (the same view key), the
page shows a CLOSED banner with the reason in its languages, and drops it once play may
resume (``door ack``). Headless Chromium against the real controller on each sim profile."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.scoreboard.labels import LABELS
from tests.hil.rig import Rig

from .conftest import Page, scoreboard_url

DOOR = 'scoreboard.languages = ["en", "zh-Hant"]\n[devices.door]\npin = 3\n'

LOOK = """
const el = document.getElementById("closed");
return {shown: getComputedStyle(el).display !== "none" && el.offsetHeight > 0,
        spans: Array.from(el.querySelectorAll("span")).map((s) => [s.lang, s.textContent])};
"""


def look(page: Page) -> dict[str, Any]:
    result: dict[str, Any] = page.js(LOOK)
    return result


@pytest.mark.parametrize("game", ["paigow", "baccarat"])
def test_the_closed_banner_appears_with_the_reason_and_goes(
    game: str, table: Callable[..., Rig], monitor: Callable[..., Any], tmp_path: Path
) -> None:
    rig = table(game, DOOR)
    rig.login()
    page = Page(monitor(), scoreboard_url(rig), tmp_path)
    page.wait(lambda: page.version() > 0, "the first view")
    # the sim's door is shut at power-up: no banner until it opens
    page.wait(lambda: not look(page)["shown"], "no banner while play may start")
    rig.ok("sim door open")
    shown = page.wait(lambda: (lambda s: s if s["shown"] else None)(look(page)), "the banner")
    english, chinese = LABELS["table_closed"][0], LABELS["table_closed"][1]
    assert shown["spans"] == [
        ["en", english.format(reason="enclosure door open")],
        ["zh-Hant", chinese.format(reason="").rstrip(": ")],
    ]
    page.screenshot(f"scoreboard-{game}-closed.png")
    rig.ok("sim door close")
    rig.ok("door ack")
    page.wait(lambda: not look(page)["shown"], "the banner gone")
