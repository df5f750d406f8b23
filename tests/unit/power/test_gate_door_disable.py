"""One gate for "no new round" (controller/tables/gate.py) in the running application: the enclosure
door (docs/console.md "The enclosure door": open is event 110, a meter and an alarm; no new round
until closed and `door ack`), and the host's disable latch (docs/host-commands.md: CLOSED until
the host's enable or a supervisor's `table enable`; it survives a restart). A round under way
always finishes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.app import Application
from controller.config.profile import ProfileError, load_profile
from controller.floor.events import EventReader
from controller.floor.meters import MeterFold, MeterRow
from drivers.buttons import ButtonPressed
from drivers.door import DoorChanged

ROOT = Path(__file__).resolve().parents[3]
DOOR_PIN = 3


def _profile(tmp: Path, extra: str = "") -> Path:
    path = tmp / "door-paigow.toml"
    path.write_text(
        f'include = "{ROOT / "hw_profiles" / "sim-paigow.toml"}"\n'
        "[devices.door]\n"
        f"pin = {DOOR_PIN}\n" + extra
    )
    return path


def _app(tmp: Path, extra: str = "") -> Application:
    return Application(load_profile(_profile(tmp, extra)), tmp / "state", console_port="none")


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Application]:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    application = _app(tmp_path)
    yield application
    application.close()


def _drain(app: Application) -> list[object]:
    handled = []
    while not app.queue.empty():
        event = app.queue.get_nowait()
        app.dispatch(event)
        handled.append(event)
    return handled


def _say(app: Application, text: str) -> list[str]:
    lines = app.console_execute(text, "serial")
    deferred = app._console().take_deferred()
    if deferred is None:
        return lines
    deadline = time.monotonic() + 30
    while not deferred.ready():
        assert time.monotonic() < deadline, f"no reply to {text.split()[0]!r}"
        time.sleep(0.01)
    rendered: list[str] = deferred.render()
    return rendered


def _shuffled(app: Application) -> str | None:
    """Press `shuffled` (opens betting); the refusal's reason, or None when betting opened."""
    before = app.journal.last(["paigow.refused"])
    app.dispatch(ButtonPressed("shuffled", time.monotonic_ns()))
    after = app.journal.last(["paigow.refused"])
    if after is not None and (before is None or after.seq != before.seq):
        return str(after.data["reason"])
    assert app.table.status()["state"] == "betting"
    return None


def _rows(app: Application) -> list[MeterRow]:
    reader = app.journal.reader()
    try:
        return list(reader.events())
    finally:
        reader.close()


def test_the_door_stops_new_rounds_until_closed_and_acknowledged(app: Application) -> None:
    app.start()
    # the simulated door is shut at power-up: nothing raised before `sim door open`
    assert not any(isinstance(e, DoorChanged) for e in _drain(app))
    assert app.journal.last(["door.opened"]) is None
    assert "OPEN" not in app.status()["door"]
    alarms: list[str] = []
    app._send_alarm = alarms.append  # type: ignore[method-assign]  # what every console hears
    assert _say(app, "passwd 24681357")[-1] == "OK"
    assert _say(app, "sim door open") == [f"door switch opened (GPIO {DOOR_PIN})", "OK"]
    assert any(isinstance(e, DoorChanged) and e.open for e in _drain(app))
    row = app.journal.last(["door.opened"])
    assert row is not None and (row.data["pin"], row.data["count"]) == (DOOR_PIN, 1)
    assert any(a.startswith("ALARM enclosure door OPEN") for a in alarms), alarms
    reason = _shuffled(app)
    assert reason is not None and "door" in reason and "`door ack`" in reason
    assert _say(app, "door ack")[-1].startswith("ERR STATE the enclosure door is open")
    assert _say(app, "sim door close")[-1] == "OK"
    _drain(app)
    assert app.journal.last(["door.closed"]) is not None
    reason = _shuffled(app)
    assert reason is not None and "`door ack`" in reason  # closed, not yet acknowledged
    assert _say(app, "door ack")[-1] == "OK"
    assert app.journal.last(["door.acknowledged"]) is not None
    assert _shuffled(app) is None
    # the event (110, 111) and the meter, read back from the journal's rows
    fold = MeterFold().add_all(_rows(app))
    assert fold.lifetime["door_openings"] == 1
    reader = EventReader()
    codes = [e.code for r in _rows(app) for e in reader.events(r)]
    assert codes.count(110) == 1 and codes.count(111) == 1
    assert "OPEN" not in app.status()["door"]


def test_a_round_under_way_finishes_with_the_door_open(app: Application) -> None:
    app.start()
    assert _shuffled(app) is None
    app.dispatch(DoorChanged(True, DOOR_PIN))
    app.dispatch(ButtonPressed("no_more_bets", time.monotonic_ns()))
    assert app.table.status()["state"] == "no_more_bets"


def test_hold_play_false_lets_play_go_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    app = _app(tmp_path, "hold_play = false\n")
    try:
        app.start()
        app.dispatch(DoorChanged(True, DOOR_PIN))
        assert app.journal.last(["door.opened"]) is not None
        assert _shuffled(app) is None
    finally:
        app.close()


def test_the_unacknowledged_door_survives_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    first = _app(tmp_path)
    try:
        first.start()
        first.dispatch(DoorChanged(True, DOOR_PIN))
        first.dispatch(DoorChanged(False, DOOR_PIN))
    finally:
        first.close()
    again = _app(tmp_path)
    try:
        again.start()
        reason = _shuffled(again)
        assert reason is not None and "`door ack`" in reason
    finally:
        again.close()


def test_the_door_pin_may_not_be_a_buttons_pin(tmp_path: Path) -> None:
    buttons = load_profile(ROOT / "hw_profiles" / "sim-paigow.toml").buttons
    assert buttons is not None
    taken = next(iter(buttons.pins.values()))
    path = tmp_path / "clash.toml"
    path.write_text(
        f'include = "{ROOT / "hw_profiles" / "sim-paigow.toml"}"\n[devices.door]\npin = {taken}\n'
    )
    with pytest.raises(ProfileError, match=str(taken)):
        load_profile(path)


def test_disable_latch_holds_play_survives_a_restart_and_a_supervisor_lifts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    first = _app(tmp_path)
    try:
        first.start()
        assert _shuffled(first) is None  # a round under way finishes: the latch holds the next
        assert first.disable_latch.disable("audit", "host", "host")
        assert first._monitor_view()["closed"] == "audit"
        first.dispatch(ButtonPressed("no_more_bets", time.monotonic_ns()))
        assert first.table.status()["state"] == "no_more_bets"
    finally:
        first.close()
    again = _app(tmp_path)
    try:
        again.start()
        assert again.status()["play"] == "CLOSED: audit"
        assert _say(again, "passwd 24681357")[-1] == "OK"
        refused = _say(again, "table enable")[-1]
        assert refused.startswith("ERR AUTH") and "supervisor" in refused
        assert _say(again, "passwd supervisor 97531864")[-1] == "OK"
        assert _say(again, "login 97531864")[-1] == "OK"
        assert _say(again, "table enable")[-1] == "OK"
        assert again.status()["play"] == "open for play"
        reader = EventReader()
        codes = [e.code for r in _rows(again) for e in reader.events(r)]
        assert codes.count(190) == 1 and codes.count(191) == 1
    finally:
        again.close()
