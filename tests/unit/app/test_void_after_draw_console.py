"""Voids after the draw through the console of the real application (issue 15 item 8,
docs/console.md, docs/paigow-table.md "Voids after the draw"): every command that voids a round
after the draw -- ``void REASON`` and the (i)(2) ``expose dealer|bank|dead|unwagered`` -- answers
``ERR AUTH`` to a technician, and for a supervisor raises ``!ALARM`` on every console, journals
the alarm and is counted by ``status``; before the draw nothing changes."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.app import Application
from controller.config.profile import load_profile
from controller.events import ConsoleLine, Shutdown

ROOT = Path(__file__).resolve().parents[3]
PIN = "48151623"
SUPER_PIN = "27182818"


class Watcher:
    """Another console: what the table says unasked (``!`` lines)."""

    name = "watcher"

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._lock = threading.Lock()

    def send_unsolicited(self, lines: list[str]) -> None:
        with self._lock:
            self.lines.extend(lines)

    def close(self) -> None:
        """Nothing to close: the test reads what it was sent."""

    def alarms(self) -> list[str]:
        with self._lock:
            return [line for line in self.lines if line.startswith("!ALARM")]


class Console:
    """One serial console's lines and replies, as its transport would carry them."""

    def __init__(self, app: Application) -> None:
        self.app = app

    def ask(self, text: str, timeout: float = 30.0) -> list[str]:
        done = threading.Event()
        box: list[list[str]] = []

        def reply(lines: list[str]) -> None:
            box.append(lines)
            done.set()

        self.app.post(ConsoleLine(text, reply, "serial", lambda _lines: None))
        assert done.wait(timeout), f"no reply to {text!r}"
        return box[0]

    def ok(self, text: str) -> list[str]:
        lines = self.ask(text)
        assert lines[-1] == "OK", (text, lines)
        return lines

    def err(self, text: str, code: str) -> str:
        lines = self.ask(text)
        assert lines[-1].startswith(f"ERR {code} "), (text, lines)
        return lines[-1]

    def status(self, key: str) -> str:
        found = [line for line in self.ok("status") if line.startswith(f"{key}: ")]
        assert len(found) == 1, found
        return found[0]


def _running(
    profile: str, state: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Application, Console, Watcher]]:
    """The application on ``profile`` running its loop, a technician logged in and a
    supervisor PIN set; shut down and closed after."""
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    app = Application(load_profile(ROOT / "hw_profiles" / profile), state, console_port="none")
    watcher = Watcher()
    app.attach_console(watcher)
    app.start()
    loop = threading.Thread(target=app.run, daemon=True)
    loop.start()
    console = Console(app)
    try:
        console.ok(f"passwd {PIN}")  # a technician, logged in
        console.ok(f"passwd supervisor {SUPER_PIN}")
        yield app, console, watcher
    finally:
        app.post(Shutdown("test over"))
        loop.join(10)
        app.close()


@pytest.fixture
def table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Application, Console, Watcher]]:
    yield from _running("sim-paigow.toml", tmp_path, monkeypatch)


def test_before_the_draw_a_technician_voids_as_before(
    table: tuple[Application, Console, Watcher],
) -> None:
    app, console, watcher = table
    console.ok("sim button shuffled")
    console.ok("expose stacking")  # (d)(5): a re-wash, not a void of a drawn number
    console.ok("sim button shuffled")
    console.ok("sim button no_more_bets")
    assert console.ok("void")[0] == "round 2 washing"
    app.call(lambda: None)
    assert watcher.alarms() == []
    assert app.journal.last(["paigow.void_after_draw"]) is None
    assert console.status("voids_after_draw") == "voids_after_draw: 0 this shift"


@pytest.fixture
def baccarat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Application, Console, Watcher]]:
    yield from _running("sim-baccarat.toml", tmp_path, monkeypatch)


def test_a_baccarat_void_during_a_coup_needs_the_supervisor_raises_an_alarm_and_is_counted(
    baccarat: tuple[Application, Console, Watcher],
) -> None:
    """Baccarat's `void` once a card of the coup is out: the same path as pai gow's void after
    the draw (docs/baccarat-table.md "Voids during a coup")."""
    app, console, watcher = baccarat
    for line in (
        "sim button shuffled",
        "sim shoe deal burn",
        "curator 1",
        "sim button no_more_bets",
        "sim shoe deal 2",
    ):
        console.ok(line)
    assert console.status("state") == "state: dealing"
    cards = console.status("coup_cards")
    said = console.err("void shoe jammed", "AUTH")
    assert "a void during a coup needs a supervisor's login" in said
    assert console.status("state") == "state: dealing"
    assert console.status("coup_cards") == cards
    assert console.status("voids_mid_coup") == "voids_mid_coup: 0 this shift"
    assert watcher.alarms() == []
    assert console.ok(f"login {SUPER_PIN}")[0] == "logged in as supervisor"
    assert console.ok("void shoe jammed")[:2] == [
        "round void; reshuffle",
        "a void during a coup: alarmed, 1 this shift",
    ]
    app.call(lambda: None)  # the alarm goes out after the commit
    alarms = watcher.alarms()
    assert len(alarms) == 1, watcher.lines
    assert alarms[0].startswith("!ALARM void during a coup: shoe 1 coup 1 (cards ")
    assert "voided by supervisor@serial: shoe jammed" in alarms[0]
    assert alarms[0].endswith("; 1 void during a coup this shift")
    row = app.journal.last(["baccarat.void_mid_coup"])
    assert row is not None and row.data["who"] == "supervisor@serial"
    assert len(row.data["cards"]) == 2 and row.data["shift_count"] == 1
    assert console.status("voids_mid_coup") == "voids_mid_coup: 1 this shift (alarmed)"
