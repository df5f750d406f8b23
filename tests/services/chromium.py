"""Headless Chromium driven by Selenium through Debian's chromedriver, never a downloaded one.

    browser = ChromiumBrowser.create()       # finds /usr/bin/chromium and /usr/bin/chromedriver
    driver = browser.new_driver()            # a selenium WebDriver (also: browser())
    driver = browser.new_driver(width=800, height=600, extra_args=["--lang=fr"])
    browser.binary, browser.driver_path, browser.version
    browser.quit_all()                       # every driver it made (the fixture does it)

    with serve_directory(path) as base_url:  # http.server on 127.0.0.1, a free port, a thread
        driver.get(base_url + "/index.html")

Selenium Manager is never asked for anything: the chromedriver path is given to ``Service``
and the fixture sets ``SE_OFFLINE=true`` as well. Each driver gets a fresh ``--user-data-dir``,
a 1920x1080 window (under --headless=new the page's viewport, and so a screenshot, is 1920x937:
the window less its toolbars), and these switches: --headless=new --no-sandbox --disable-gpu
--disable-quic --no-first-run --disable-background-networking --disable-component-update
--disable-sync --disable-dev-shm-usage. Page loads and scripts time out after 30 s, driver
calls after 120 s (Selenium's own limit).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import subprocess
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tests.services._common import private_dir, remove_dir, which

ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)
PAGE_LOAD_TIMEOUT_S = 30
SCRIPT_TIMEOUT_S = 30


def find_chromium() -> str | None:
    return which("/usr/bin/chromium", "chromium", "chromium-browser")


def find_chromedriver() -> str | None:
    return which("/usr/bin/chromedriver", "chromedriver")


class ChromiumBrowser:
    def __init__(self, binary: str, driver_path: str) -> None:
        self.binary = binary
        self.driver_path = driver_path
        self._drivers: list[Any] = []
        self._dirs: list[Path] = []

    @classmethod
    def create(cls) -> ChromiumBrowser:
        binary, driver = find_chromium(), find_chromedriver()
        if binary is None or driver is None:
            raise FileNotFoundError(
                "chromium / chromedriver (Debian packages 'chromium', 'chromium-driver')"
            )
        return cls(binary, driver)

    @functools.cached_property
    def version(self) -> str:
        out = subprocess.run(
            [self.driver_path, "--version"], capture_output=True, text=True, timeout=30
        )
        return out.stdout.strip()

    def new_driver(
        self, *, width: int = 1920, height: int = 1080, extra_args: Iterable[str] = ()
    ) -> Any:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        profile = private_dir("tc-chromium-")
        self._dirs.append(profile)
        options = webdriver.ChromeOptions()
        options.binary_location = self.binary
        for arg in (
            *ARGS,
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            *extra_args,
        ):
            options.add_argument(arg)
        service = Service(
            executable_path=self.driver_path, log_output=str(profile / "chromedriver.log")
        )
        driver = webdriver.Chrome(service=service, options=options)
        self._drivers.append(driver)
        driver.set_page_load_timeout(PAGE_LOAD_TIMEOUT_S)
        driver.set_script_timeout(SCRIPT_TIMEOUT_S)
        return driver

    __call__ = new_driver

    def quit_all(self) -> None:
        errors = []
        for driver in self._drivers:
            try:
                driver.quit()  # stops chromedriver (waits at most 60 s), which ends Chromium
            except Exception as e:  # noqa: BLE001 (quit every one, report the first)
                errors.append(e)
        self._drivers.clear()
        for d in self._dirs:
            remove_dir(d)
        self._dirs.clear()
        if errors:
            raise errors[0]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@contextlib.contextmanager
def serve_directory(directory: Path, timeout: float = 10.0) -> Iterator[str]:
    """Serve ``directory`` over HTTP on 127.0.0.1 (a free port) in a thread; the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.timeout = timeout
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True, name="tc-http"
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()  # returns once serve_forever has seen it (within poll_interval)
        server.server_close()
        thread.join(timeout)
