"""End-to-end scenarios, written once against the ``rig`` (simulated by default, a real build
with ``--hil``): console login, a configuration change (and its refusal mid-round), recall, a pai
gow round with a draw, and baccarat's shoe link."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hil.rig import PIN, Rig


def test_console_login_and_logout(rig: Rig) -> None:
    rig.err("config set recall_depth 30", "AUTH")
    rig.login()
    rig.ok("logout")
    rig.err("login 00000000", "AUTH")
    rig.ok(f"login {PIN}")
    assert "console: logged in" in "\n".join(rig.ok("status"))


def test_config_change_is_applied_and_journaled(rig: Rig) -> None:
    rig.login()
    assert rig.ok("config set recall_depth 30") == ["recall_depth: 20 -> 30"]
    assert rig.ok("config show recall_depth")[0] == "recall_depth = 30"
    rig.ok("journal verify")


def test_recall_after_start(rig: Rig) -> None:
    lines = rig.ok("recall 1")
    # Pai gow opens round 1 at power-up; a baccarat table has none until the first coup.
    expected = "round 1:" if rig.game == "paigow" else "no rounds in the journal"
    assert lines[0].startswith(expected)
    rig.err("recall 0", "RANGE")


def _paigow_round_to_draw(rig: Rig) -> dict[str, str]:
    rig.login()
    rig.ok("sim button shuffled")
    rig.wait_status("state", "betting")
    rig.ok("sim button no_more_bets")
    rig.wait_status("state", ("no_more_bets", "bank_style"))
    rig.ok("sim button draw")
    return rig.wait_status("state", "dealing")


def test_paigow_round_with_a_draw(make_rig: Callable[..., Rig]) -> None:
    rig = make_rig("paigow")
    if rig.hardware and rig.status().get("gpio", "sim") != "sim":
        pytest.skip("buttons are real on this build: the scenario presses simulated ones")
    status = _paigow_round_to_draw(rig)
    number = status["number"]
    assert number.isdigit() and 1 <= int(number) <= 8
    assert rig.status()["last_rng"].startswith(number)
    recall = "\n".join(rig.ok("recall 1"))
    assert "draw" in recall


def test_config_change_refused_mid_round(make_rig: Callable[..., Rig]) -> None:
    rig = make_rig("paigow")
    if rig.hardware and rig.status().get("gpio", "sim") != "sim":
        pytest.skip("buttons are real on this build: the scenario presses simulated ones")
    _paigow_round_to_draw(rig)
    reply = rig.err("config set recall_depth 40", "STATE")
    assert "round is in progress" in reply.status
    assert rig.ok("config show recall_depth")[0] == "recall_depth = 20"


def test_baccarat_shoe_link_is_up(make_rig: Callable[..., Rig]) -> None:
    rig = make_rig("baccarat")
    rig.wait_status("shoe_link", "up")
    rig.err("odds", "STATE")  # no shoe in play before the shuffle


@pytest.mark.hil
def test_console_survives_a_burst_at_line_rate(rig: Rig) -> None:
    """On real UARTs: 50 commands sent back to back all get their whole reply."""
    rig.port.write(b"status\r\n" * 50)
    for _ in range(50):
        assert rig.read_reply().ok


def test_status_names_the_clock_and_the_power(rig: Rig) -> None:
    # docs/power-and-storage.md: an RTC (the Pi 5's, a DS3231) or none; the board's power and
    # its meters, or that the kernel has no undervoltage sensor (off a Pi)
    status = rig.status()
    assert status["clock"].startswith(("RTC rtc", "no RTC, time from NTP/fake-hwclock"))
    assert "(journal: undervoltage " in status["power"]
    if rig.hardware and _on_a_raspberry_pi():
        # a Pi's firmware reports undervoltage through hwmon rpi_volt: its absence there is a
        # kernel without the driver (a HIL run on pty stand-ins off a Pi has none to find)
        assert "no undervoltage sensor" not in status["power"]


def _on_a_raspberry_pi() -> bool:
    try:
        model = Path("/proc/device-tree/model").read_bytes()
    except OSError:
        return False
    return model.startswith(b"Raspberry Pi")
