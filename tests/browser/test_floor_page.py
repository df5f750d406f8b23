"""The surveillance room's page in headless Chromium against the real thing: a real Mosquitto
(TLS, client certificates, the ACL), the real ``table-controller collect`` process, its SQLite
store and the real ``table-controller floor --serve`` process (docs/feed.md "The floor page").

Three tables feed the collector. One is restored from a copy and plays on (the publisher sends
its journal again from row 1): the page shows it ``forked``; the filters (table, what a table
shows, alarm kind) narrow the lists. A person signs in on the page and
acknowledges its alarm and its divergence with a note: the store records their name. The
broker stops: the page says the collector lost it and shows every table ``unknown``, not
offline; the broker comes back and so do the tables."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from controller.feed.publisher import Publisher
from controller.feed.store import Store
from tests.feed_journal import TableJournal
from tests.feed_rig import ROOT, collect_process, kill, publisher, wait_for, write_keys

from .conftest import Page

if TYPE_CHECKING:
    from tests.services.mosquitto import MosquittoBroker

SITE = "site1"
NAME, PASSWORD = "J. Doe", "surveillance shift 3"
SLOW_S = 60.0  # the publishers' reconnection backoff after the broker is back

ROWS = """
return Array.from(document.querySelectorAll("#tables tr")).map(
  (r) => Object.assign({}, r.dataset));
"""
ALARMS = """
return Array.from(document.querySelectorAll("#alarms tr")).map(
  (r) => Object.assign({}, r.dataset));
"""


def _rows(page: Page) -> dict[str, dict[str, str]]:
    return {r["id"]: r for r in page.js(ROWS)}


def _alarms(page: Page) -> list[dict[str, str]]:
    found: list[dict[str, str]] = page.js(ALARMS)
    return found


class FloorProcess:
    """``table-controller floor --serve 127.0.0.1:0`` and the address it prints."""

    def __init__(self, store_url: str, users: Path, log: Path) -> None:
        self.log = log
        out = open(log, "ab")  # noqa: SIM115 - the child holds it
        try:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "controller",
                    "floor",
                    "--serve",
                    "127.0.0.1:0",
                    "--store",
                    store_url,
                    "--site",
                    SITE,
                    "--users",
                    str(users),
                ],
                cwd=ROOT,
                stdout=out,
                stderr=out,
            )
        finally:
            out.close()
        wait_for(lambda: "floor page on " in log.read_text(), 30, "the floor page's address")
        self.url = log.read_text().split("floor page on ", 1)[1].split()[0]

    def stop(self) -> None:
        self.proc.terminate()
        assert self.proc.wait(15) == 0, self.log.read_text()


@pytest.fixture
def floor_rig(
    make_mosquitto_broker: Callable[..., MosquittoBroker], tmp_path: Path
) -> Iterator[dict[str, Any]]:
    broker = make_mosquitto_broker(persistence=True)
    store_url = f"sqlite:///{tmp_path / 'collector.sqlite'}"
    journals = {name: TableJournal(name) for name in ("table-07", "table-08", "table-09")}
    keys = write_keys(tmp_path / "keys", *journals.values())
    collect_log = tmp_path / "collect.log"
    collector = collect_process(broker, store_url, keys, collect_log)
    # its session starts with its subscription: rows published before it are not kept for it
    wait_for(lambda: "subscribed to" in collect_log.read_text(), 30, "the collector subscribed")
    users = tmp_path / "floor.users"
    added = subprocess.run(
        [sys.executable, "-m", "controller", "floor", "--users", str(users), "--add-user", NAME],
        input=PASSWORD + "\n",
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert added.returncode == 0, added.stderr
    pubs: dict[str, Publisher] = {}
    for name, journal in journals.items():
        journal.rounds(2)
        journal.sign()
        state = tmp_path / name
        state.mkdir()
        pubs[name] = publisher(broker, journal, name, state)
    floor = FloorProcess(store_url, users, tmp_path / "floor.log")
    rig = {
        "broker": broker,
        "store_url": store_url,
        "journals": journals,
        "pubs": pubs,
        "floor": floor,
        "tmp": tmp_path,
    }
    try:
        yield rig
    finally:
        for pub in rig["pubs"].values():
            pub.stop()
        floor.stop()
        kill(collector, 15)


def _healthy(page: Page, names: set[str]) -> dict[str, dict[str, str]] | None:
    rows = _rows(page)
    ok = set(rows) == names and all(
        r["presence"] == "online" and r["integrity"] == "ok" and r["rows"] == r["signed"] == "6"
        for r in rows.values()
    )
    return rows if ok else None


def test_the_floor_page_shows_a_fork_an_acknowledgement_and_a_broker_outage(
    floor_rig: dict[str, Any], monitor: Callable[..., Any], tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    names = {f"{SITE}/{n}" for n in floor_rig["journals"]}
    page = Page(monitor((1600, 900)), floor_rig["floor"].url + "/", tmp_path)
    page.wait(lambda: _healthy(page, names), "three tables online, ok, signed to row 6", SLOW_S)
    assert page.js("return document.body.dataset.broker") == "connected"
    assert page.foreign_resources() == []
    page.screenshot("floor-page.png")

    # table-07 restored from a copy at row 3 and played on; its feed position lost with it,
    # so its publisher sends its journal again from row 1
    store_url, tmp = floor_rig["store_url"], floor_rig["tmp"]
    t7: TableJournal = floor_rig["journals"]["table-07"]
    first = [r.hash for r in t7.rows]
    floor_rig["pubs"]["table-07"].stop()
    t7.rollback(3)
    t7.rounds(3)
    t7.sign()
    restored = tmp / "table-07-restored"
    restored.mkdir()
    floor_rig["pubs"]["table-07"] = publisher(floor_rig["broker"], t7, "table-07", restored)
    forked = page.wait(
        lambda: (lambda r: r if r.get("integrity") == "forked" else None)(
            _rows(page).get(f"{SITE}/table-07", {})
        ),
        "table-07 forked",
        timeout=SLOW_S,
    )
    assert forked["presence"] == "online"
    # forked tables sort first; the others stay ok
    assert page.js(ROWS)[0]["id"] == f"{SITE}/table-07"
    assert all(r["integrity"] == "ok" for i, r in _rows(page).items() if i != f"{SITE}/table-07")
    alarm = page.wait(
        lambda: next((a for a in _alarms(page) if a["table"] == f"{SITE}/table-07"), None),
        "table-07's alarm",
    )
    assert alarm["kind"] in ("fork", "rollback")
    # not signed in: nothing to press
    assert page.driver.find_elements(By.CSS_SELECTOR, "button.ack-alarm") == []
    page.screenshot("floor-forked.png")

    # the filters: by table name, by what a table shows, by alarm kind (kept in the address)
    box = page.driver.find_element(By.ID, "f-table")
    box.send_keys("table-08")
    page.wait(lambda: set(_rows(page)) == {f"{SITE}/table-08"}, "only table-08")
    assert _alarms(page) == []  # table-07's alarm is not table-08's
    assert "table=table-08" in page.driver.current_url
    box.clear()
    box.send_keys(" ")  # an input event with the box empty again
    page.wait(lambda: set(_rows(page)) == names, "every table again")
    pick = "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'));"
    page.js(pick, page.driver.find_element(By.ID, "f-integrity"), "forked")
    page.wait(lambda: set(_rows(page)) == {f"{SITE}/table-07"}, "only the forked table")
    page.js(pick, page.driver.find_element(By.ID, "f-integrity"), "")
    other = "gap" if alarm["kind"] != "gap" else "fork"
    page.js(pick, page.driver.find_element(By.ID, "f-kind"), alarm["kind"])
    page.wait(lambda: len(_alarms(page)) == 1, "the alarm of its kind")
    page.js(
        "const o = document.createElement('option'); o.textContent = arguments[1];"
        " arguments[0].appendChild(o);",
        page.driver.find_element(By.ID, "f-kind"),
        other,
    )
    page.js(pick, page.driver.find_element(By.ID, "f-kind"), other)
    page.wait(lambda: _alarms(page) == [], "no alarm of another kind")
    page.js(pick, page.driver.find_element(By.ID, "f-kind"), "")
    page.wait(lambda: len(_alarms(page)) == 1 and set(_rows(page)) == names, "no filter")

    # sign in on the page, then acknowledge the alarm with a note
    page.driver.find_element(By.ID, "l-name").send_keys(NAME)
    page.driver.find_element(By.ID, "l-pass").send_keys("not the password")
    page.driver.find_element(By.ID, "l-go").click()
    page.wait(lambda: page.text("l-msg") == "wrong name or password", "the refusal")
    page.driver.find_element(By.ID, "l-pass").clear()
    page.driver.find_element(By.ID, "l-pass").send_keys(PASSWORD)
    page.driver.find_element(By.ID, "l-go").click()
    page.wait(lambda: page.text("s-name") == NAME, "signed in")
    button = page.wait(
        lambda: page.driver.find_elements(
            By.CSS_SELECTOR, f'button.ack-alarm[data-alarm="{alarm["alarm"]}"]'
        ),
        "the alarm's Acknowledge button",
    )
    button[0].click()
    page.driver.find_element(By.ID, "ack-note").send_keys("restored from a backup by IT")
    page.screenshot("floor-acknowledge.png")
    page.driver.find_element(By.ID, "ack-go").click()
    page.wait(lambda: all(a["alarm"] != alarm["alarm"] for a in _alarms(page)), "the alarm closed")
    # and the table's divergence
    page.driver.find_element(By.CSS_SELECTOR, "button.ack-table").click()
    page.driver.find_element(By.ID, "ack-note").send_keys("record kept; device re-imaged")
    page.driver.find_element(By.ID, "ack-go").click()
    page.wait(
        lambda: _rows(page)[f"{SITE}/table-07"]["integrity"] != "forked",
        "the divergence acknowledged",
    )
    store = Store.open(store_url)
    try:
        acked = store.alarm_acks()[int(alarm["alarm"])]
        assert (acked.by, acked.note) == (NAME, "restored from a backup by IT")
        assert [(a.table, a.by, a.note) for a in store.acks()] == [
            ("table-07", NAME, "record kept; device re-imaged")
        ]
        # the record is what was verified first: rows 1-6 of the first history
        assert [r["hash"] for r in store.rows(SITE, "table-07")] == first
    finally:
        store.close()

    # the broker goes away: the collector says so, and nothing is known of the tables
    broker: MosquittoBroker = floor_rig["broker"]
    broker.stop()
    page.wait(lambda: page.js("return document.body.dataset.broker") == "lost", "the broker lost")
    rows = page.wait(
        lambda: (lambda r: r if all(x["presence"] == "unknown" for x in r.values()) else None)(
            _rows(page)
        ),
        "every table unknown",
    )
    assert set(rows) == names
    assert "LOST" in page.text("broker")
    page.screenshot("floor-broker-lost.png")
    broker.start()
    page.wait(
        lambda: page.js("return document.body.dataset.broker") == "connected",
        "the broker back",
        timeout=SLOW_S,
    )
    page.wait(
        lambda: (lambda r: r if all(x["presence"] == "online" for x in r.values()) else None)(
            _rows(page)
        ),
        "the tables online again",
        timeout=SLOW_S,
    )
