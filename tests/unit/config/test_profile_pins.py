"""The board's pins: check-profile refuses a device on a pin the TPM's SPI0 or the RTC's I2C1
takes (BOARD_OVERLAYS); the shipped Pi pin map leaves both buses free and puts every output on
a pin that pulls down at power-on; lamp polarity and the simulated GPIO's debounce are profile
settings that reach the drivers."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.cli import main
from controller.config.profile import (
    BOARD_OVERLAYS,
    GPIO_SIM_DEBOUNCE,
    Profile,
    ProfileError,
    check_profile_report,
    load_profile,
)
from controller.devices import build_devices, close_devices
from drivers.sim.gpio import DEBOUNCE_MODES, SimGPIO
from tests.unit.config.test_profile import PAIGOW, ROOT, refused, write

TPM = '[board]\noverlays = ["tpm-slb9670"]\n'
RTC = '[board]\noverlays = ["i2c-rtc"]\n'
#: BCM2835 ARM peripherals, p. 102 (the BCM2711's table agrees): at power-on GPIO 0-8 pull up
#: and GPIO 9-27 pull down; a lamp or segment driver input on 0-8 is on until the program runs.
PULL_DOWN_AT_POWER_ON = range(9, 28)
SPI0 = {7, 8, 9, 10, 11}
I2C1 = {2, 3}
PI_PROFILES = sorted((ROOT / "hw_profiles").glob("rpi*.toml"))


def test_overlay_pins_are_the_buses() -> None:
    # Raspberry Pi documentation, the 40-pin header: SPI0 is GPIO 7-11, I2C1 GPIO 2-3
    assert set(BOARD_OVERLAYS["tpm-slb9670"][1]) == SPI0
    assert set(BOARD_OVERLAYS["i2c-rtc"][1]) == I2C1


def test_a_button_on_spi0_with_the_tpm_is_refused(tmp_path: Path) -> None:
    # PAIGOW's buttons are on GPIO 9, 11 and 8: SPI0 MISO, SCLK and CE0
    f = write(tmp_path, "t.toml", PAIGOW + TPM)
    errors = [str(e) for e in refused(f).errors]
    assert errors == [
        f"{f}: devices.buttons.pins.shuffled: GPIO 9 is SPI0 MISO,"
        " taken by board.overlays tpm-slb9670",
        f"{f}: devices.buttons.pins.no_more_bets: GPIO 11 is SPI0 SCLK,"
        " taken by board.overlays tpm-slb9670",
        f"{f}: devices.buttons.pins.settled: GPIO 8 is SPI0 CE0,"
        " taken by board.overlays tpm-slb9670",
    ]
    load_profile(write(tmp_path, "no-tpm.toml", PAIGOW))  # the same pins without the TPM: fine


def test_check_profile_refuses_the_clash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + TPM)
    assert main(["check-profile", str(f)]) != 0
    assert "GPIO 9 is SPI0 MISO, taken by board.overlays tpm-slb9670" in capsys.readouterr().err


COUNTER = '[journal]\ncounter = "device:/dev/tpmrm0"\n'
ON_A_PI = PAIGOW.replace('gpio_backend = "sim"', 'gpio_backend = "rpi"')


def test_a_tpm_counter_without_the_tpm_overlay_is_warned(tmp_path: Path) -> None:
    """The TPM configured (the journal's counter on /dev/tpmrm0) but its overlay not named:
    check-profile cannot know SPI0 is taken, so it says to name it (PAIGOW's buttons on GPIO
    8, 9 and 11 would then be refused)."""
    f = write(tmp_path, "t.toml", ON_A_PI + COUNTER)
    report = check_profile_report(f).splitlines()
    warnings = [ln for ln in report if ln.startswith("WARNING journal.")]
    assert len(warnings) == 1
    assert 'journal.counter = "device:/dev/tpmrm0"' in warnings[0]
    assert '"tpm-slb9670"' in warnings[0] and "GPIO 7-11" in warnings[0]
    with_overlay = write(
        tmp_path, "u.toml", ON_A_PI + COUNTER.replace("[journal]", TPM + "[journal]")
    )
    assert "GPIO 9 is SPI0 MISO" in str(refused(with_overlay))


def test_a_tpm_counter_with_its_overlay_or_off_a_pi_is_not_warned(tmp_path: Path) -> None:
    moved = ON_A_PI.replace("shuffled = 9, no_more_bets = 11", "shuffled = 24, no_more_bets = 25")
    moved = moved.replace("settled = 8", "settled = 12")
    named = write(tmp_path, "t.toml", moved + TPM + COUNTER)
    assert "WARNING journal." not in check_profile_report(named)
    simulated = write(tmp_path, "u.toml", PAIGOW + COUNTER)  # the simulated GPIO: no header
    assert "WARNING" not in check_profile_report(simulated)


def test_an_output_on_a_pin_that_pulls_up_at_power_on_is_warned(tmp_path: Path) -> None:
    """PAIGOW's digit has segments a and b on GPIO 5 and 6, which pull up at power-on (BCM2835
    ARM peripherals, p. 102): on a Pi they light until the program runs. The buttons on 8 and 9
    are inputs: not warned."""
    f = write(tmp_path, "t.toml", ON_A_PI + "[devices.seat_lamps]\npins = { 1 = 4, 2 = 24 }\n")
    warnings = [ln for ln in check_profile_report(f).splitlines() if ln.startswith("WARNING")]
    keys = [w.split(" = ")[0].removeprefix("WARNING ") for w in warnings]
    assert keys == ["devices.display.pins.a", "devices.display.pins.b", "devices.seat_lamps.pins.1"]
    assert all("pull up at power-on" in w and '"Pin map"' in w for w in warnings)
    for pin in PULL_DOWN_AT_POWER_ON:
        assert str(pin) not in [w.split(" = ")[1].split(":")[0] for w in warnings]
    simulated = write(tmp_path, "u.toml", PAIGOW)  # the simulated GPIO has no power-on
    assert "WARNING" not in check_profile_report(simulated)


def test_a_lamp_on_i2c1_with_an_rtc_is_refused(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + "[devices.seat_lamps]\npins = { 1 = 2 }\n" + RTC)
    assert [str(e) for e in refused(f).errors] == [
        f"{f}: devices.seat_lamps.pins.1: GPIO 2 is I2C1 SDA, taken by board.overlays i2c-rtc"
    ]


def test_an_unknown_overlay_is_refused(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + '[board]\noverlays = ["tpm-slb9673"]\n')
    assert str(refused(f)) == (
        f"{f}: board.overlays[0]: 'tpm-slb9673' is not one of tpm-slb9670, i2c-rtc"
        " (did you mean 'tpm-slb9670'?)"
    )


def device_pins(p: Profile) -> tuple[set[int], set[int]]:
    """(inputs, outputs) the profile wires."""
    inputs = set(p.buttons.pins.values()) if p.buttons else set()
    outputs = set(p.display.pins.values()) if p.display and p.display.pins else set()
    if p.seat_lamps:
        outputs |= set(p.seat_lamps.pins.values())
    return inputs, outputs


@pytest.mark.parametrize("path", PI_PROFILES, ids=lambda p: p.name)
def test_pi_pin_map_leaves_spi0_and_i2c1_free_and_outputs_pull_down(path: Path) -> None:
    p = load_profile(path)
    inputs, outputs = device_pins(p)
    assert not (inputs | outputs) & (SPI0 | I2C1)
    assert outputs and all(pin in PULL_DOWN_AT_POWER_ON for pin in outputs)


@pytest.mark.parametrize("path", [p for p in PI_PROFILES if p.stem.endswith("-tpm")], ids=str)
def test_tpm_variant_is_its_base_with_the_tpm(path: Path) -> None:
    tpm = load_profile(path)
    base = load_profile(path.with_name(path.name.replace("-tpm", "")))
    assert tpm.board.overlays == ("tpm-slb9670",) and base.board.overlays == ()
    assert tpm.journal.counter == "device:/dev/tpmrm0"
    assert device_pins(tpm) == device_pins(base)
    assert (tpm.display, tpm.buttons, tpm.seat_lamps) == (
        base.display,
        base.buttons,
        base.seat_lamps,
    )


def test_every_pi_profile_has_a_tpm_variant() -> None:
    names = {p.stem for p in PI_PROFILES}
    assert {f"{n}-tpm" for n in names if not n.endswith("-tpm")} <= names


def lamps_profile(tmp_path: Path, active_high: str) -> Profile:
    return load_profile(
        write(
            tmp_path,
            "t.toml",
            PAIGOW + f"[devices.seat_lamps]\npins = {{ 1 = 23, 2 = 24 }}\n{active_high}",
        )
    )


@pytest.mark.parametrize(
    "setting, lit_level", [("", 1), ("active_high = true\n", 1), ("active_high = false\n", 0)]
)
def test_lamp_polarity_from_the_profile(tmp_path: Path, setting: str, lit_level: int) -> None:
    p = lamps_profile(tmp_path, setting)
    devices = build_devices(p, lambda e: None, tmp_path)
    try:
        gpio = devices.gpio
        assert isinstance(gpio, SimGPIO)
        assert (gpio.level(23), gpio.level(24)) == (1 - lit_level, 1 - lit_level)  # set up off
        devices.table.seat_lamps.light(2)
        assert (gpio.level(23), gpio.level(24)) == (1 - lit_level, lit_level)
        assert devices.table.seat_lamps.lit() == {2}
    finally:
        close_devices(devices)


def test_lamp_polarity_must_be_a_bool(tmp_path: Path) -> None:
    f = write(
        tmp_path,
        "t.toml",
        PAIGOW + '[devices.seat_lamps]\npins = { 1 = 23 }\nactive_high = "low"\n',
    )
    assert "devices.seat_lamps.active_high: wrong type" in str(refused(f))


def test_the_profile_names_the_simulators_debounce(tmp_path: Path) -> None:
    assert GPIO_SIM_DEBOUNCE == DEBOUNCE_MODES
    for given, mode in (("", "rpi-lgpio"), ('gpio_sim_debounce = "rpi-gpio"\n', "rpi-gpio")):
        p = load_profile(write(tmp_path, "t.toml", given + PAIGOW))
        assert p.gpio_sim_debounce == mode
        devices = build_devices(p, lambda e: None, tmp_path)
        try:
            assert devices.gpio.debounce == mode
        finally:
            close_devices(devices)


def test_the_simulators_debounce_only_with_the_simulator(tmp_path: Path) -> None:
    real = PAIGOW.replace('gpio_backend = "sim"', 'gpio_backend = "rpi"')
    f = write(tmp_path, "t.toml", 'gpio_sim_debounce = "rpi-gpio"\n' + real)
    assert 'gpio_sim_debounce: not allowed: only with gpio_backend = "sim"' in str(refused(f))
    f = write(tmp_path, "u.toml", 'gpio_sim_debounce = "lgpio"\n' + PAIGOW)
    with pytest.raises(ProfileError, match="gpio_sim_debounce: 'lgpio' is not one of"):
        load_profile(f)
