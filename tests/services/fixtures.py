"""pytest fixtures that start real services (registered for the whole suite by tests/conftest.py).

Every fixture is function-scoped, runs its service on 127.0.0.1 on free ports in a fresh
directory, and stops it and removes the directory at teardown. A service whose Debian package is
absent fails the test under TC_REQUIRE_SERVICES (``.ci/run`` sets it) and is skipped loudly
otherwise; one that is present but does not start always fails, with its log.

- ``mosquitto_broker`` -> MosquittoBroker (tests/services/mosquitto.py): TLS listener with
  client certificates, CN = MQTT user name, ACL ``tc/+/%u/#``; ``make_mosquitto_broker(site=,
  plain=, tls=, persistence=)`` makes more (``plain=True`` adds an anonymous plain-TCP listener;
  ``persistence=True`` keeps sessions and queued messages across ``stop()``/``start()``).
- ``postgres_server`` -> PostgresServer (tests/services/postgres.py); ``postgres_url`` -> its
  ``postgresql://`` URL.
- ``softhsm_token`` -> SoftHsmToken (tests/services/softhsm.py), SOFTHSM2_CONF set for the test.
- ``chromium_browser`` -> ChromiumBrowser (tests/services/chromium.py), a WebDriver factory.
- ``swtpm_tpm`` -> SwTpm (tests/services/swtpm.py), a software TPM 2.0; ``.tcti`` names it for
  tpm2-tools (part ``swtpm``: the swtpm and tpm2-tools packages).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest

from tests.services._common import missing

if TYPE_CHECKING:
    from tests.services.chromium import ChromiumBrowser
    from tests.services.mosquitto import MosquittoBroker
    from tests.services.postgres import PostgresServer
    from tests.services.softhsm import SoftHsmToken
    from tests.services.swtpm import SwTpm


@pytest.fixture
def make_mosquitto_broker() -> Iterator[Callable[..., MosquittoBroker]]:
    """``make_mosquitto_broker(site="site1", plain=False, tls=True, persistence=False)`` -> a
    started broker."""
    from tests.services.mosquitto import MosquittoBroker, find_mosquitto

    if find_mosquitto() is None:
        missing("mosquitto", "/usr/sbin/mosquitto", "mosquitto")
    made: list[MosquittoBroker] = []

    def make(
        *, site: str = "site1", plain: bool = False, tls: bool = True, persistence: bool = False
    ) -> MosquittoBroker:
        broker = MosquittoBroker.create(site=site, plain=plain, tls=tls, persistence=persistence)
        made.append(broker)
        return broker

    yield make
    for broker in made:
        broker.close()


@pytest.fixture
def mosquitto_broker(make_mosquitto_broker: Callable[..., MosquittoBroker]) -> MosquittoBroker:
    """A started Mosquitto: TLS only, site ``site1``."""
    return make_mosquitto_broker()


@pytest.fixture
def postgres_server() -> Iterator[PostgresServer]:
    """A started PostgreSQL with the database ``tc_test``; ``.url`` is its URL."""
    from tests.services.postgres import PostgresServer, find_bin_dir

    if find_bin_dir() is None:
        missing("postgres", "initdb/postgres (/usr/lib/postgresql/*/bin)", "postgresql")
    server = PostgresServer.create()
    yield server
    server.close()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """``postgresql://tc:PASSWORD@127.0.0.1:PORT/tc_test`` of a started server."""
    return postgres_server.url


@pytest.fixture
def softhsm_token(monkeypatch: pytest.MonkeyPatch) -> Iterator[SoftHsmToken]:
    """A SoftHSM2 token labelled ``tc-test``; SOFTHSM2_CONF points at it during the test."""
    from tests.services.softhsm import SoftHsmToken, find_module, find_util

    if find_util() is None:
        missing("softhsm", "softhsm2-util", "softhsm2")
    if find_module() is None:
        missing("softhsm", "libsofthsm2.so", "softhsm2")
    token = SoftHsmToken.create()
    monkeypatch.setenv("SOFTHSM2_CONF", str(token.conf_path))
    yield token
    token.close()


@pytest.fixture
def chromium_browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChromiumBrowser]:
    """A WebDriver factory for Debian's headless Chromium: ``chromium_browser()`` -> driver."""
    from tests.services.chromium import ChromiumBrowser, find_chromedriver, find_chromium

    if find_chromium() is None:
        missing("chromium", "/usr/bin/chromium", "chromium")
    if find_chromedriver() is None:
        missing("chromium", "/usr/bin/chromedriver", "chromium-driver")
    monkeypatch.setenv("SE_OFFLINE", "true")
    browser = ChromiumBrowser.create()
    yield browser
    browser.quit_all()


@pytest.fixture
def swtpm_tpm() -> Iterator[SwTpm]:
    """A started software TPM 2.0 on 127.0.0.1 with its own NV state."""
    from tests.services.swtpm import SwTpm, find_swtpm, find_tpm2_tools

    if find_swtpm() is None:
        missing("swtpm", "swtpm", "swtpm")
    if find_tpm2_tools() is None:
        missing("swtpm", "tpm2_nvincrement", "tpm2-tools")
    tpm = SwTpm.create()
    yield tpm
    tpm.close()
