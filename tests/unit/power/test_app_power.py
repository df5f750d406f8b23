"""The board's power and clock in the running application: undervoltage read from a simulated
hwmon file is journaled as an event with its meter and shown by ``status``, its end clears it; a
UPS's power-fail signal on a GPIO stops new rounds with a refusal that says why, asks for the
journal's sync, and is cleared when the signal drops; ``status`` names the RTC."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.app import Application
from controller.config.profile import load_profile
from drivers.board import BoardCondition
from drivers.buttons import ButtonPressed
from drivers.power_fail import BOUNCE_MS, PowerFailChanged

ROOT = Path(__file__).resolve().parents[3]
UPS_PIN = 10


def _profile(tmp: Path, game: str, extra: str = "") -> Path:
    path = tmp / f"power-{game}.toml"
    path.write_text(
        f'include = "{ROOT / "hw_profiles" / f"sim-{game}.toml"}"\n'
        "[board]\n"
        'hwmon = "sim"\n'
        'rtc = "sim"\n'
        "poll_s = 60.0\n"
        "[devices.power_fail]\n"
        f"pin = {UPS_PIN}\n" + extra
    )
    return path


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Application]:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    application = Application(
        load_profile(_profile(tmp_path, "paigow")), tmp_path / "state", console_port="none"
    )
    yield application
    application.close()


def _drain(app: Application) -> list[object]:
    """Handle what the drivers posted (on this thread, as the loop would)."""
    handled = []
    while not app.queue.empty():
        event = app.queue.get_nowait()
        app.dispatch(event)
        handled.append(event)
    return handled


def test_undervoltage_from_the_hwmon_file_is_journaled_shown_and_cleared(
    app: Application,
) -> None:
    board, monitor = app.devices.board_sim, app.devices.board
    monitor.poll_once()
    _drain(app)
    assert app.journal.last(["power.undervoltage"]) is None
    assert app.status()["power"].startswith("ok")

    board.undervoltage(True)  # the firmware's alarm: in0_lcrit_alarm reads 1
    monitor.poll_once()
    assert any(isinstance(e, BoardCondition) for e in _drain(app))
    row = app.journal.last(["power.undervoltage"])
    assert row is not None
    assert (row.data["active"], row.data["count"]) == (True, 1)
    assert "UNDERVOLTAGE NOW" in app.status()["power"]

    board.undervoltage(False)
    monitor.poll_once()
    _drain(app)
    row = app.journal.last(["power.undervoltage"])
    assert row is not None and (row.data["active"], row.data["count"]) == (False, 1)
    assert "UNDERVOLTAGE" not in app.status()["power"]
    assert "undervoltage 1 time" in app.status()["power"]

    board.undervoltage(True)  # a second episode: the meter counts it
    monitor.poll_once()
    _drain(app)
    row = app.journal.last(["power.undervoltage"])
    assert row is not None and row.data["count"] == 2


def test_the_meter_survives_a_restart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    profile = load_profile(_profile(tmp_path, "paigow"))
    first = Application(profile, tmp_path / "state", console_port="none")
    try:
        first.devices.board_sim.undervoltage(True)
        first.devices.board.poll_once()
        _drain(first)
    finally:
        first.close()
    again = Application(profile, tmp_path / "state", console_port="none")
    try:
        again.devices.board_sim.undervoltage(False)
        again.devices.board_sim.undervoltage(True)
        again.devices.board.poll_once()  # began again, as this process first reads it
        _drain(again)
        row = again.journal.last(["power.undervoltage"])
        assert row is not None and row.data["count"] == 2
    finally:
        again.close()


def test_the_ups_signal_stops_new_rounds_until_it_drops(app: Application) -> None:
    gpio = app.devices.gpio
    synced: list[str] = []
    app.power._sync_now = synced.append  # what the journal is asked to do, not the worker
    app.start()
    gpio.drive(UPS_PIN, gpio.LOW)  # the UPS pulls its line low on battery (active_low)
    gpio.clock.advance(BOUNCE_MS)  # the edge is reported once the line was stable (rpi-lgpio)
    assert any(isinstance(e, PowerFailChanged) and e.asserted for e in _drain(app))
    row = app.journal.last(["power.fail"])
    assert row is not None and (row.data["asserted"], row.data["pin"]) == (True, UPS_PIN)
    assert synced == ["power-fail"]
    assert "ASSERTED" in app.status()["power_fail"]

    app.dispatch(ButtonPressed("shuffled", time.monotonic_ns()))
    refused = app.journal.last(["paigow.refused"])
    assert refused is not None
    assert refused.data["trigger"] == "shuffled"
    assert refused.data["reason"] == f"power failing: no new round (UPS signal on GPIO {UPS_PIN})"
    assert app.table.status()["state"] == "inspection"

    gpio.drive(UPS_PIN, gpio.HIGH)  # mains back, within the edge's debounce on the sim clock:
    app.devices.power_fail.poll()  # the loop's tick re-reads the level
    _drain(app)
    row = app.journal.last(["power.fail"])
    assert row is not None and row.data["asserted"] is False
    app.dispatch(ButtonPressed("shuffled", time.monotonic_ns()))
    assert app.table.status()["state"] == "betting"


def test_a_round_under_way_goes_on_while_the_ups_signal_is_asserted(app: Application) -> None:
    app.start()
    app.dispatch(ButtonPressed("shuffled", time.monotonic_ns()))
    assert app.table.status()["state"] == "betting"
    app.dispatch(PowerFailChanged(True, UPS_PIN))
    app.dispatch(ButtonPressed("no_more_bets", time.monotonic_ns()))
    assert app.table.status()["state"] == "no_more_bets"


def test_status_names_the_rtc(app: Application) -> None:
    assert app.status()["clock"] == "RTC rtc0 (rpi-rtc)"


def test_status_without_an_rtc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    path = tmp_path / "bare.toml"
    path.write_text(
        f'include = "{ROOT / "hw_profiles" / "sim-paigow.toml"}"\n'
        f'[board]\nhwmon = "{tmp_path / "no-hwmon"}"\nrtc = "{tmp_path / "no-rtc"}"\n'
    )
    app = Application(load_profile(path), tmp_path / "state", console_port="none")
    try:
        status = app.status()
        assert status["clock"] == "no RTC, time from NTP/fake-hwclock"
        assert "no undervoltage sensor" in status["power"]
        assert "power_fail" not in status
    finally:
        app.close()


def test_an_archive_carries_the_meters_forward(app: Application) -> None:
    app.devices.board_sim.undervoltage(True)
    app.devices.board.poll_once()
    _drain(app)
    counted = app.journal.last(["power.undervoltage"])
    assert counted is not None
    # the archive moves every row up to here out of the live journal
    app.trust.carry_forward(app.journal.last_seq)  # (this thread stands in for the loop)
    carried = app.journal.last(["power.undervoltage"])
    assert carried is not None and carried.seq > counted.seq
    assert (carried.data["count"], carried.data["carried_from"]) == (1, counted.seq)
