"""The profile's ``[devices.power_fail]`` and ``[board]``: none by default, a pin that is
another device's refused, a root that is not a path refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.config.profile import BoardSettings, ProfileError, load_profile
from tests.unit.config.test_profile import PAIGOW, write


def test_no_power_fail_input_and_sysfs_by_default(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, "t.toml", PAIGOW))
    assert profile.power_fail is None
    assert profile.board == BoardSettings(
        overlays=(), hwmon="/sys/class/hwmon", rtc="/sys/class/rtc", poll_s=2.0, throttle_c=80.0
    )


def test_the_power_fail_pin_and_its_polarity(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + "[devices.power_fail]\npin = 10\nactive_low = false\n")
    profile = load_profile(f)
    assert profile.power_fail is not None
    assert (profile.power_fail.pin, profile.power_fail.active_low) == (10, False)


def test_a_power_fail_pin_used_by_a_button_is_refused(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + "[devices.power_fail]\npin = 9\n")
    with pytest.raises(ProfileError) as refused:
        load_profile(f)
    assert str(refused.value) == (
        f"{f}: devices.power_fail.pin: GPIO 9 is also used by devices.buttons.pins.shuffled ({f})"
    )


def test_a_board_root_that_is_not_an_absolute_path_is_refused(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + '[board]\nhwmon = "sys/class/hwmon"\n')
    with pytest.raises(ProfileError) as refused:
        load_profile(f)
    assert refused.value.key == "board.hwmon"
