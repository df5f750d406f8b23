"""The scoreboard in the real ``table-controller run`` process: the bound address journaled and on
``status``; a port already taken is a fault of the monitor (on ``status``, alarmed, journaled)
while the table plays on, until the port is free; a non-loopback address is warned about at
start; the pages are only read."""

from __future__ import annotations

import json
import socket
import sqlite3
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.scoreboard.server import BIND_RETRY_S
from tests.hil.rig import PROFILES, PtyMaster, Rig, override_profile


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., Rig]]:
    rigs: list[Rig] = []

    def make(port: int = 0, extra: str = "") -> Rig:
        pty = PtyMaster()
        folder = tmp_path / f"p{len(rigs)}"
        folder.mkdir()
        rig = Rig(
            override_profile(
                folder, PROFILES / "sim-paigow.toml", pty.slave_path, extra, scoreboard_port=port
            ),
            tmp_path / f"state{len(rigs)}",
            pty,
        )
        rigs.append(rig)
        return rig.start()

    yield make
    for rig in rigs:
        rig.close()


def journal_rows(rig: Rig, kind: str) -> list[dict[str, object]]:
    db = sqlite3.connect(f"file:{rig.state_dir / 'journal.sqlite'}?mode=ro", uri=True)
    try:
        return [
            json.loads(r[0])
            for r in db.execute(
                "SELECT r.data FROM rows r JOIN kinds k ON k.id = r.kind WHERE k.kind = ?"
                " ORDER BY r.seq",
                (kind,),
            )
        ]
    finally:
        db.close()


def test_the_bound_port_is_journaled_and_on_status(start: Callable[..., Rig]) -> None:
    rig = start()
    url = rig.status()["scoreboard"].split()[0]
    row = journal_rows(rig, "scoreboard.start")[-1]
    assert url == row["url"] and row["address"] == "127.0.0.1" and int(row["port"]) > 0
    assert any(line == f"scoreboard: {url}" for line in rig.stderr_lines)
    with urllib.request.urlopen(url + "state", timeout=10) as reply:
        doc = json.loads(reply.read())
    assert doc["game"] == "paigow" and doc["state"] == "inspection" and doc["version"] >= 1
    # Read-only: a POST changes nothing and is refused.
    request = urllib.request.Request(url, data=b"draw", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 405
    assert rig.status()["state"] == "inspection"
    assert "refused 1" in rig.status()["scoreboard"]


def test_a_taken_port_is_a_fault_of_the_monitor_until_it_is_free(
    start: Callable[..., Rig],
) -> None:
    """The port taken: a fault line on ``status``, ``!ALARM`` on the console, journaled; the
    table plays on; once the port is free (tried again every BIND_RETRY_S) the monitor is
    served, journaled and said, and ``status`` shows its address."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        rig = start(port=port)
        status = rig.status()
        line = status["scoreboard"]
        assert line.startswith(f"FAULT not served on 127.0.0.1:{port}: "), line
        assert "in use" in line.lower() and "the table plays on" in line
        assert status["state"] == "inspection"
        # on the console (the alarm waits for the consoles to be up)
        assert any(
            a.startswith(f"!ALARM scoreboard not served on 127.0.0.1:{port}") for a in rig.alarms
        ), rig.alarms
        error = journal_rows(rig, "scoreboard.error")[-1]
        assert error["port"] == port and "in use" in str(error["error"]).lower()
        assert not journal_rows(rig, "scoreboard.start")
        rig.login()
        rig.ok("sim button shuffled")
        rig.wait_status("state", "betting")  # the game goes on
    finally:
        holder.close()
    deadline = time.monotonic() + BIND_RETRY_S + 10
    while not rig.status()["scoreboard"].startswith("http://"):
        assert time.monotonic() < deadline, "the monitor was not served once the port was free"
        time.sleep(0.5)
    url = rig.status()["scoreboard"].split()[0]
    assert url == f"http://127.0.0.1:{port}/"
    started = journal_rows(rig, "scoreboard.start")[-1]
    assert started["port"] == port and started["url"] == url
    rig.command("status")  # collects the unsolicited lines that came meanwhile
    assert any(a.startswith(f"!scoreboard served on {url}") for a in rig.alarms), rig.alarms
    with urllib.request.urlopen(url + "state", timeout=10) as reply:
        assert json.loads(reply.read())["state"] == "betting"


def test_a_non_loopback_address_is_warned_about_at_start(start: Callable[..., Rig]) -> None:
    # 0.0.0.0 is accepted (a profile's choice) and said out loud.
    rig = start(extra='scoreboard.address = "0.0.0.0"')
    assert any(
        line.startswith('WARNING scoreboard.address = "0.0.0.0" is not loopback')
        for line in rig.stderr_lines
    )
    assert rig.status()["scoreboard"].startswith("http://0.0.0.0:")
