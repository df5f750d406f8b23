"""Headless Chromium (Debian's ``chromium`` and ``chromium-driver`` packages; nothing is
downloaded) driven by Selenium against the real controller process on the sim profiles.

A test that cannot get its browser says so (tests/services: it fails under CI, where
``TC_REQUIRE_SERVICES=1``, and is skipped elsewhere with the reason). Screenshots go to the
test's directory and, when ``TC_SCREENSHOTS`` names a directory, there too (docs/scoreboard.md:
how docs/img was made).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hil.rig import PROFILES, PtyMaster, Rig, override_profile

WIDTH, HEIGHT = 1920, 1080  # the table's monitor
PAGE_TIMEOUT_S = 30.0
WAIT_S = 15.0


SMALL = (1024, 600)  # the smallest monitor the page is made for (a 7-inch panel)


@pytest.fixture
def monitor(chromium_browser: Any) -> Callable[..., Any]:
    """A factory of headless Chromium WebDrivers (tests/services' ``chromium_browser``: Debian's
    browser and driver, nothing downloaded) whose viewport is exactly a monitor in kiosk mode,
    1080p unless ``size`` says otherwise; the services fixture quits them all at the end of the
    test."""

    def make(size: tuple[int, int] = (WIDTH, HEIGHT)) -> Any:
        width, height = size
        driver = chromium_browser.new_driver(
            width=width,
            height=height,
            extra_args=("--hide-scrollbars", "--force-device-scale-factor=1"),
        )
        driver.set_page_load_timeout(PAGE_TIMEOUT_S)
        driver.set_script_timeout(PAGE_TIMEOUT_S)
        # A headless window's size includes its toolbars: set the viewport itself.
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        return driver

    return make


class Page:
    """One scoreboard page in the browser, read through its DOM."""

    def __init__(self, driver: Any, url: str, shots: Path) -> None:
        self.driver = driver
        self.url = url
        self.shots = shots
        driver.get(url)
        self.wait(lambda: self.version() >= 1, "the first event")

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def version(self) -> int:
        return int(self.js("return Number(document.body.dataset.version || 0)"))

    def wait(self, ready: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = ready()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"page never showed {what} within {timeout} s")
            time.sleep(0.05)

    def data(self, selector: str) -> list[dict[str, str]]:
        """The ``data-*`` attributes of every element matching ``selector``, in DOM order."""
        result: list[dict[str, str]] = self.js(
            "return Array.from(document.querySelectorAll(arguments[0]))"
            ".map(e => Object.assign({}, e.dataset));",
            selector,
        )
        return result

    def text(self, element_id: str) -> str:
        return str(self.js("return document.getElementById(arguments[0]).textContent", element_id))

    def font_px(self, element_id: str) -> float:
        return float(
            self.js(
                "return parseFloat(getComputedStyle("
                "document.getElementById(arguments[0])).fontSize)",
                element_id,
            )
        )

    def off_screen(self, selector: str) -> list[dict[str, Any]]:
        """The elements matching ``selector`` that are not wholly on the screen: outside the
        viewport, outside their road's panel (clipped), or hidden."""
        found: list[dict[str, Any]] = self.js(OFF_SCREEN, selector)
        return found

    def foreign_resources(self) -> list[str]:
        """Everything the page loaded from anywhere but its own server."""
        names: list[str] = self.js(
            "return performance.getEntriesByType('resource').map(e => e.name)"
        )
        origin = self.url.rstrip("/")
        return [n for n in names if not n.startswith(origin + "/")]

    def screenshot(self, name: str) -> Path:
        path = self.shots / name
        self.driver.save_screenshot(str(path))
        keep = os.environ.get("TC_SCREENSHOTS")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(keep) / name)
        return path


#: For every element matching the selector: its box against the viewport and against the
#: SVG (the road's panel) it is drawn in; a cell partly outside either is off the screen.
OFF_SCREEN = """
const out = [];
for (const e of document.querySelectorAll(arguments[0])) {
  const r = e.getBoundingClientRect();
  const svg = e.ownerSVGElement;
  const p = svg ? svg.getBoundingClientRect() : {left: 0, top: 0, right: innerWidth,
                                                 bottom: innerHeight};
  const slack = 1;
  const inside = (b) => r.left >= b.left - slack && r.top >= b.top - slack &&
    r.right <= b.right + slack && r.bottom <= b.bottom + slack;
  const shown = r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== "hidden";
  if (!shown || !inside({left: 0, top: 0, right: innerWidth, bottom: innerHeight}) ||
      !inside(p)) {
    out.push(Object.assign({left: r.left, top: r.top, right: r.right, bottom: r.bottom},
                           e.dataset));
  }
}
return out;
"""


def scoreboard_url(rig: Rig) -> str:
    """The page's address, as the controller reports it on ``status``."""
    line = rig.status()["scoreboard"]
    return line.split()[0]


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Callable[..., Rig]]:
    """``table(game, extra="", port=0, state="state")`` -> the real controller on sim-GAME with
    its console on a pseudo-terminal, its scoreboard on ``port`` (0: any free port) and its
    journal in the test's folder ``state`` (another table: another folder)."""
    rigs: list[Rig] = []

    def make(game: str, extra: str = "", port: int = 0, state: str = "state") -> Rig:
        pty = PtyMaster()
        folder = tmp_path / f"rig{len(rigs)}"
        folder.mkdir()
        rig = Rig(
            override_profile(
                folder, PROFILES / f"sim-{game}.toml", pty.slave_path, extra, scoreboard_port=port
            ),
            tmp_path / state,
            pty,
        )
        rigs.append(rig)
        return rig.start()

    yield make
    for rig in rigs:
        rig.close()
