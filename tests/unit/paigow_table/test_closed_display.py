"""The host's ``disable`` on pai gow's one-digit number display, in the running application
(docs/host-commands.md "CLOSED on the display and the monitor"): one digit cannot spell CLOSED,
so between rounds it shows the lone middle bar "-" (drivers/number_display.py: no digit 1-8 is
within two segments of it); a round under way finishes first; ``enable`` (here a supervisor's
``table enable``) blanks it again, as between rounds. The door holding play does the same."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.app import Application
from controller.config.profile import load_profile
from drivers.buttons import ButtonPressed
from drivers.door import DoorChanged
from drivers.number_display import DIGIT_SEGMENTS, FAULT_SEGMENTS, SevenSegmentDisplay

ROOT = Path(__file__).resolve().parents[3]
DOOR_PIN = 3
SUPERVISOR_PIN = "97531864"


def _started(tmp_path: Path) -> Application:
    profile = tmp_path / "door-paigow.toml"
    profile.write_text(
        f'include = "{ROOT / "hw_profiles" / "sim-paigow.toml"}"\n'
        f"[devices.door]\npin = {DOOR_PIN}\n"
    )
    application = Application(load_profile(profile), tmp_path / "state", console_port="none")
    application.start()
    application.table.tick(time.monotonic_ns() + 10**12)  # the power-up lamp test is over
    return application


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Application]:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    application = _started(tmp_path)
    yield application
    application.close()


def _lit(app: Application) -> frozenset[str]:
    display = app.devices.table.display
    assert isinstance(display, SevenSegmentDisplay)
    return display.read_back()


def _press(app: Application, name: str) -> None:
    app.dispatch(ButtonPressed(name, time.monotonic_ns()))


def _say(app: Application, text: str) -> list[str]:
    lines = app.console_execute(text, "serial")
    assert app._console().take_deferred() is None
    return lines


def _supervisor_enables(app: Application) -> None:
    assert _say(app, "passwd 24681357")[-1] == "OK"
    assert _say(app, f"passwd supervisor {SUPERVISOR_PIN}")[-1] == "OK"
    assert _say(app, f"login {SUPERVISOR_PIN}")[-1] == "OK"
    assert _say(app, "table enable")[-1] == "OK"


def test_disable_between_rounds_shows_the_bar_and_enable_blanks_it(app: Application) -> None:
    assert _lit(app) == frozenset()
    assert app.disable_latch.disable("audit", "host", "host")
    assert _lit(app) == FAULT_SEGMENTS
    assert app._monitor_view()["closed"] == "audit"
    _press(app, "shuffled")
    assert app.table.status()["state"] != "betting"  # refused: no new round
    assert _lit(app) == FAULT_SEGMENTS
    _supervisor_enables(app)
    assert _lit(app) == frozenset()
    assert "closed" not in app._monitor_view()


def test_a_round_under_way_finishes_and_then_the_bar_shows(app: Application) -> None:
    _press(app, "shuffled")
    assert app.table.status()["state"] == "betting"
    assert app.disable_latch.disable("audit", "host", "host")
    assert _lit(app) == frozenset()  # the round goes on: no bar over it
    _press(app, "no_more_bets")
    _press(app, "draw")
    number = int(app.table.status()["number"])
    assert _lit(app) == DIGIT_SEGMENTS[number]  # the drawn number, not CLOSED
    for name in ("dealt", "hands_set", "settled"):
        _press(app, name)
    assert not app.table.round_in_progress()
    assert _lit(app) == FAULT_SEGMENTS


def test_the_door_holding_play_shows_the_bar_until_door_ack(app: Application) -> None:
    app.dispatch(DoorChanged(True, DOOR_PIN))
    assert _lit(app) == FAULT_SEGMENTS
    assert app._monitor_view()["closed"] == "enclosure door open"
    app.dispatch(DoorChanged(False, DOOR_PIN))
    assert _lit(app) == FAULT_SEGMENTS  # closed, not yet acknowledged
    assert _say(app, "passwd 24681357")[-1] == "OK"
    assert _say(app, "door ack")[-1] == "OK"
    assert _lit(app) == frozenset()
    assert "closed" not in app._monitor_view()


def test_a_restart_while_disabled_shows_the_bar_after_the_lamp_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    first = _started(tmp_path)
    try:
        assert first.disable_latch.disable("audit", "host", "host")
    finally:
        first.close()
    again = _started(tmp_path)
    try:
        assert again.disable_latch.reason == "audit"
        assert _lit(again) == FAULT_SEGMENTS
    finally:
        again.close()
