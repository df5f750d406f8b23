"""The Chromium fixture: Debian's headless Chromium through Debian's chromedriver loads a page
from a local http.server, the DOM is read, and a screenshot is written."""

from __future__ import annotations

from pathlib import Path

from selenium.webdriver.common.by import By

from tests.services.chromium import ChromiumBrowser, serve_directory

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>table 07</title></head>
<body><h1 id="state">dealing</h1><p id="number">6</p>
<script>document.getElementById("number").dataset.seen = "js ran";</script>
</body></html>
"""


def test_a_local_page_loads_its_dom_reads_and_a_screenshot_is_written(
    chromium_browser: ChromiumBrowser, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(PAGE)
    driver = chromium_browser.new_driver()
    with serve_directory(site) as base:
        driver.get(f"{base}/index.html")
        assert driver.title == "table 07"
        assert driver.find_element(By.ID, "state").text == "dealing"
        number = driver.find_element(By.ID, "number")
        assert number.text == "6"
        assert number.get_attribute("data-seen") == "js ran"
        size = driver.get_window_size()
        assert (size["width"], size["height"]) == (1920, 1080)
        shot = tmp_path / "table.png"
        assert driver.save_screenshot(str(shot))
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
    caps = driver.capabilities
    assert caps["browserName"] in ("chrome", "chromium")
    assert chromium_browser.driver_path.endswith("chromedriver")


def test_two_drivers_have_separate_profiles(
    chromium_browser: ChromiumBrowser, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(PAGE)
    a = chromium_browser.new_driver(width=800, height=600)
    b = chromium_browser()
    with serve_directory(site) as base:
        a.get(f"{base}/index.html")
        a.execute_script("localStorage.setItem('k', 'a')")
        b.get(f"{base}/index.html")
        assert b.execute_script("return localStorage.getItem('k')") is None
    assert a.get_window_size()["width"] == 800
