"""Hardware profiles: each class of mistake is refused with a message naming file, key and
what is wrong; layering merges deeply; every shipped profile loads."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from controller.config.profile import (
    PAIGOW_BUTTONS,
    ProfileError,
    check_profile_report,
    load_profile,
)

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = sorted((ROOT / "hw_profiles").glob("*.toml"))

PAIGOW = """\
game = "paigow"
gpio_backend = "sim"

[devices.display]
driver = "seven-segment"
common = "cathode"
pins = { a = 5, b = 6, c = 13, d = 19, e = 26, f = 16, g = 20 }

[devices.buttons]
pins = { shuffled = 9, no_more_bets = 11, draw = 17, dealt = 27, hands_set = 22, settled = 8 }
"""

BACCARAT = """\
game = "baccarat"
gpio_backend = "sim"

[devices.shoe]
port = "sim"

[devices.dealer_display]
driver = "sim"

[devices.buttons]
pins = { shuffled = 9, no_more_bets = 11, settled = 8 }
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def refused(path: Path) -> ProfileError:
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    return info.value


# -- shipped profiles -----------------------------------------------------------------------------


def test_profiles_are_shipped() -> None:
    names = {p.name for p in SHIPPED}
    assert {
        "sim-paigow.toml",
        "sim-baccarat.toml",
        "rpi4-paigow.toml",
        "rpi5-paigow.toml",
        "rpi4-baccarat.toml",
        "rpi5-baccarat.toml",
    } <= names


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_profile_loads(path: Path) -> None:
    p = load_profile(path)
    assert p.name == path.stem
    assert p.source_files[-1] == str(path)
    if p.game == "paigow":
        assert p.display is not None and p.buttons is not None
        assert set(PAIGOW_BUTTONS) <= set(p.buttons.pins)
    elif p.game == "startpos":
        assert p.display is not None and p.buttons is not None and p.startpos is not None
    else:
        assert p.shoe is not None and p.dealer_display is not None and p.buttons is not None


@pytest.mark.parametrize("board", ["rpi4", "rpi5"])
def test_pi_profiles_take_board_from_the_base(board: str) -> None:
    p = load_profile(ROOT / "hw_profiles" / f"{board}-paigow.toml")
    assert p.gpio_backend == "rpi"
    assert p.source_files[0].endswith(f"boards/{board}-base.toml")
    # Pi 4: serial0 is the header UART; Pi 5: the header UART is ttyAMA0 (serial0 = debug port)
    assert p.console.port == {"rpi4": "/dev/serial0", "rpi5": "/dev/ttyAMA0"}[board]
    assert p.console.baud == 115200
    # Both SoCs have the RNG200 behind /dev/hwrng (systemd/README.md "Pi 4 and Pi 5
    # differences"): a pai gow Pi profile names it, so a generator gone is a fault (docs/rng.md)
    assert p.rng.hwrng_path == "/dev/hwrng"


def test_rpi_baccarat_profile_values() -> None:
    p = load_profile(ROOT / "hw_profiles" / "rpi4-baccarat.toml")
    assert p.shoe is not None and p.shoe.port == "/dev/tc-shoe" and p.shoe.baud == 115200
    assert p.dealer_display is not None and p.dealer_display.driver == "serial-text"
    assert p.dealer_display.port == "/dev/tc-display" and p.dealer_display.ack is True


def test_board_alone_is_not_a_profile() -> None:
    e = refused(ROOT / "hw_profiles" / "boards" / "rpi4-base.toml")
    assert e.key == "game" and "missing" in str(e)


# -- defaults and typed result --------------------------------------------------------------------


def test_minimal_profile_defaults(tmp_path: Path) -> None:
    p = load_profile(write(tmp_path, "t.toml", PAIGOW))
    assert p.name == "t"
    assert p.journal.path == "journal.sqlite" and p.journal.key_path == "journal-key.pem"
    assert p.journal.retain_days == 90 and p.rules.recall_depth == 20
    assert p.journal.clock_floor == datetime.date(2026, 1, 1)
    assert (p.console.port, p.console.baud, p.console.line_editing) == ("stdio", 115200, True)
    assert p.rng.hwrng_path is None
    assert p.buttons is not None and p.buttons.bounce_ms == 30 and p.buttons.active_low
    assert p.display is not None and p.display.pins is not None and "dp" not in p.display.pins
    assert p.seat_lamps is None and p.shoe is None
    assert p.rules.start_mode == "rng"


def test_sim_shoe_defaults(tmp_path: Path) -> None:
    p = load_profile(write(tmp_path, "b.toml", BACCARAT + "[rules.baccarat]\ndecks = 6\n"))
    assert p.shoe is not None
    assert (p.shoe.baud, p.shoe.watchdog_s, p.shoe.sim_decks) == (115200, 3.0, 6)
    assert p.shoe.sim_seed is None and p.shoe.sim_auto_deal_s is None


def test_seat_lamps_keyed_by_seat_number(tmp_path: Path) -> None:
    p = load_profile(
        write(tmp_path, "t.toml", PAIGOW + "[devices.seat_lamps]\npins = { 1 = 4, 2 = 12 }\n")
    )
    assert p.seat_lamps is not None
    assert p.seat_lamps.pins == {1: 4, 2: 12}
    assert p.seat_lamps.active_high  # the default: a HIGH pin lights the lamp


# -- each class of error --------------------------------------------------------------------------


def test_unknown_key(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + "[devices.buttons.extra]\nx = 1\n")
    e = refused(f)
    assert str(e).startswith(f"{f}: devices.buttons.extra: unknown key")


def test_unknown_top_level_table(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + "[printer]\nport = 1\n")
    assert str(refused(f)).startswith(f"{f}: printer: unknown key")


def test_misspelt_optional_key_names_the_right_one(tmp_path: Path) -> None:
    f = write(
        tmp_path,
        "t.toml",
        PAIGOW.replace("[devices.buttons]\n", "[devices.buttons]\nbounce_msec = 20\n"),
    )
    assert str(refused(f)) == (
        f"{f}: devices.buttons.bounce_msec: unknown key (did you mean 'bounce_ms'?)"
    )


def test_misspelt_required_key_names_the_right_one(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW.replace('common = "cathode"', 'comon = "cathode"'))
    assert str(refused(f)) == f"{f}: devices.display.comon: unknown key (did you mean 'common'?)"


def test_misspelt_segment_pin(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW.replace("g = 20", "gg = 20"))
    e = refused(f)
    assert e.key == "devices.display.pins.gg"
    assert "unknown segment (did you mean 'g'?)" in str(e)


def test_key_after_table_header_is_explained(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", 'gpio_backend = "sim"\n[console]\ngame = "paigow"\n')
    e = refused(f)
    assert e.key == "game"
    assert "found console.game instead" in str(e)


def test_wrong_type(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW.replace("a = 5", 'a = "5"'))
    assert str(refused(f)) == (
        f'{f}: devices.display.pins.a: wrong type: expected a whole number, got "5" (str)'
    )


def test_bool_is_not_a_number(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + "[console]\nbaud = true\n")
    assert "console.baud: wrong type: expected a whole number, got true" in str(refused(f))


def test_table_where_a_value_belongs(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + "[journal]\npath = { a = 1 }\n")
    assert "journal.path: wrong type: expected a non-empty string" in str(refused(f))


def test_pin_out_of_range(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW.replace("a = 5", "a = 28"))
    assert str(refused(f)) == f"{f}: devices.display.pins.a: 28 is out of range 2..27"


@pytest.mark.parametrize("pin", [0, 1, 28, -3])
def test_pins_outside_bcm_2_27(tmp_path: Path, pin: int) -> None:
    f = write(tmp_path, "t.toml", PAIGOW.replace("draw = 17", f"draw = {pin}"))
    assert "devices.buttons.pins.draw: " in str(refused(f))


def test_nonstandard_baud(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", BACCARAT.replace('port = "sim"', 'port = "sim"\nbaud = 9601'))
    e = refused(f)
    assert e.key == "devices.shoe.baud" and "9601 is not one of 1200, 2400" in str(e)


@pytest.mark.parametrize(
    ("text", "key", "problem"),
    [
        ("[journal]\nretain_days = 89\n", "journal.retain_days", "89 is out of range 90..3650"),
        ("[journal]\nretain_days = 30\n", "journal.retain_days", "30 is out of range 90..3650"),
        ('[journal]\nclock_floor = "2026-01-01"\n', "journal.clock_floor", "wrong type"),
        ("[journal]\nclock_floor = 2026-01-01T00:00:00\n", "journal.clock_floor", "wrong type"),
        (
            '[console]\nport = "ttyS0"\n',
            "console.port",
            "'ttyS0' is not 'stdio' or 'none' or an absolute path",
        ),
        ('gpio_backend = "pigpio"\n', "gpio_backend", "'pigpio' is not one of rpi, sim"),
    ],
)
def test_out_of_range_values(tmp_path: Path, text: str, key: str, problem: str) -> None:
    body = PAIGOW.replace('gpio_backend = "sim"\n', "") if key == "gpio_backend" else PAIGOW
    f = write(tmp_path, "t.toml", text + body if "[" not in text else body + text)
    e = refused(f)
    assert e.key == key and problem in str(e) and str(e).startswith(f"{f}: {key}: ")


def test_shoe_watchdog_range(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", BACCARAT.replace('port = "sim"', 'port = "sim"\nwatchdog_s = 0'))
    assert "devices.shoe.watchdog_s: 0 is out of range 1.0..30.0" in str(refused(f))


def test_sim_settings_only_with_sim_shoe(tmp_path: Path) -> None:
    f = write(
        tmp_path, "t.toml", BACCARAT.replace('port = "sim"', 'port = "/dev/ttyUSB0"\nsim_seed = 3')
    )
    assert 'devices.shoe.sim_seed: not allowed: only with port = "sim"' in str(refused(f))


def test_sim_decks_must_match_rules(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", BACCARAT.replace('port = "sim"', 'port = "sim"\nsim_decks = 6'))
    assert "devices.shoe.sim_decks: 6 differs from rules.baccarat.decks 8" in str(refused(f))


def test_driver_specific_keys_refused(tmp_path: Path) -> None:
    f = write(
        tmp_path,
        "t.toml",
        PAIGOW.replace('driver = "seven-segment"', 'driver = "seven-segment"\nport = "sim"'),
    )
    assert "devices.display.port: not allowed: only with driver serial-led" in str(refused(f))


def test_duplicate_pin_names_both_users(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW.replace("draw = 17", "draw = 13"))
    assert str(refused(f)) == (
        f"{f}: devices.buttons.pins.draw: GPIO 13 is also used by devices.display.pins.c ({f})"
    )


def test_duplicate_pin_across_files_names_both_files(tmp_path: Path) -> None:
    base = write(tmp_path, "boards/b.toml", PAIGOW)
    top = write(
        tmp_path, "t.toml", 'include = "boards/b.toml"\n[devices.seat_lamps]\npins = { 1 = 5 }\n'
    )
    e = refused(top)
    assert str(e) == (
        f"{top}: devices.seat_lamps.pins.1: GPIO 5 is also used by devices.display.pins.a ({base})"
    )


def test_header_uart_pins_refused_when_console_uses_it(tmp_path: Path) -> None:
    text = (
        PAIGOW.replace('gpio_backend = "sim"', 'gpio_backend = "rpi"').replace(
            "draw = 17", "draw = 14"
        )
        + '[console]\nport = "/dev/serial0"\n'
    )
    f = write(tmp_path, "t.toml", text)
    assert str(refused(f)) == (
        f"{f}: devices.buttons.pins.draw: GPIO 14 is the header UART's"
        " TXD, used by console.port /dev/serial0"
    )


def test_missing_required_device(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW.split("[devices.buttons]")[0])
    assert str(refused(f)) == (f"{f}: devices.buttons: missing: game paigow needs this device")


def test_missing_required_baccarat_device(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", BACCARAT.replace('[devices.shoe]\nport = "sim"\n', ""))
    assert str(refused(f)) == f"{f}: devices.shoe: missing: game baccarat needs this device"


def test_device_of_the_other_game_refused(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + '[devices.shoe]\nport = "sim"\n')
    assert str(refused(f)) == (
        f"{f}: devices.shoe: not used by game paigow (it uses display, buttons, seat_lamps,"
        " power_fail, door)"
    )


def test_missing_required_button(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW.replace(", settled = 8", ""))
    assert str(refused(f)) == (
        f"{f}: devices.buttons.pins.settled: missing: button required for paigow; needs"
        " shuffled, no_more_bets, draw, dealt, hands_set, settled"
    )


def test_button_of_the_other_game_refused(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", BACCARAT.replace("settled = 8", "settled = 8, draw = 17"))
    e = refused(f)
    assert e.key == "devices.buttons.pins.draw"
    assert "unknown button for baccarat; known: shuffled, no_more_bets, settled, disclose" in str(e)


def test_seat_out_of_range(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + "[devices.seat_lamps]\npins = { 9 = 4 }\n")
    assert "devices.seat_lamps.pins.9: unknown seat" in str(refused(f))


def test_unknown_rule_setting(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + "[rules.paigow]\nvig_percnt = 5\n")
    assert str(refused(f)) == (
        f"{f}: rules.paigow.vig_percnt: unknown key: no such setting"
        " (did you mean paigow.vig_percent?)"
    )


def test_rule_setting_out_of_range(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + "[rules.baccarat]\ndecks = 4\n")
    assert str(refused(f)) == (
        f"{f}: rules.baccarat.decks: not allowed: 4 is out of range"
        " 6..8 (5324.20(a)(4) (at least six))"
    )


def test_rule_setting_wrong_type(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + '[rules]\nrecall_depth = "20"\n')
    assert "rules.recall_depth: wrong type: expected a whole number" in str(refused(f))


def test_rule_error_names_the_file_that_set_it(tmp_path: Path) -> None:
    base = write(tmp_path, "base.toml", PAIGOW + "[rules.baccarat]\ndecks = 5\n")
    top = write(tmp_path, "t.toml", 'include = "base.toml"\n[rules]\njurisdiction = "NY"\n')
    e = refused(top)
    assert e.file == str(base) and e.key == "rules.baccarat.decks"


def test_bad_toml_names_file_and_line(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + "[devices.seat_lamps\n")
    e = refused(f)
    line = PAIGOW.count("\n") + 1
    assert str(e).startswith(f"{f}: invalid TOML: ")
    assert f"line {line}" in str(e)


def test_duplicate_key_in_one_file_is_bad_toml(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", 'game = "paigow"\n' + PAIGOW)
    assert f"{f}: invalid TOML: " in str(refused(f))


def test_missing_file(tmp_path: Path) -> None:
    f = tmp_path / "nope.toml"
    assert str(refused(f)) == f"{f}: file not found"


# -- includes -------------------------------------------------------------------------------------


def test_include_missing_file(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", 'include = "boards/none.toml"\n' + PAIGOW)
    assert str(refused(f)) == (
        f"{f}: include: included file not found: {tmp_path / 'boards' / 'none.toml'}"
    )


def test_include_cycle(tmp_path: Path) -> None:
    write(tmp_path, "a.toml", 'include = "b.toml"\n')
    b = write(tmp_path, "b.toml", 'include = "a.toml"\n')
    e = refused(tmp_path / "a.toml")
    assert str(e) == f"{b}: include: include cycle: a.toml -> b.toml -> a.toml"


def test_include_of_itself(tmp_path: Path) -> None:
    f = write(tmp_path, "a.toml", 'include = "a.toml"\n' + PAIGOW)
    assert str(refused(f)) == f"{f}: include: include cycle: a.toml -> a.toml"


def test_include_wrong_type(tmp_path: Path) -> None:
    f = write(tmp_path, "a.toml", "include = 3\n" + PAIGOW)
    assert str(refused(f)) == f"{f}: include: expected a file name, got 3"


def test_include_chain_override_and_deep_merge(tmp_path: Path) -> None:
    write(
        tmp_path,
        "boards/board.toml",
        'gpio_backend = "rpi"\n[console]\nport = "/dev/serial0"\nbaud = 115200\n',
    )
    write(
        tmp_path,
        "boards/table.toml",
        'include = "board.toml"\n' + PAIGOW.replace('gpio_backend = "sim"\n', ""),
    )
    top = write(
        tmp_path,
        "local.toml",
        'include = "boards/table.toml"\n[console]\nbaud = 9600\n'
        "[devices.display.pins]\na = 23\n"
        "[rules.paigow]\nsurrender_offered = true\n",
    )
    p = load_profile(top)
    assert p.source_files == (
        str(tmp_path / "boards/board.toml"),
        str(tmp_path / "boards/table.toml"),
        str(top),
    )
    # the override wins; its siblings from the lower layers stay (deep merge)
    assert p.console.baud == 9600 and p.console.port == "/dev/serial0"
    assert p.display is not None and p.display.pins is not None
    assert p.display.pins["a"] == 23 and p.display.pins["b"] == 6
    assert p.gpio_backend == "rpi"
    assert p.rules.paigow.surrender_offered is True


def test_override_replaces_a_table_with_a_value_refused(tmp_path: Path) -> None:
    base = write(tmp_path, "base.toml", PAIGOW)
    top = write(tmp_path, "t.toml", 'include = "base.toml"\n[devices]\ndisplay = 3\n')
    assert str(refused(top)) == f"{top}: devices.display: is a value here but a table in {base}"


def test_report_names_every_value_and_its_file(tmp_path: Path) -> None:
    base = write(tmp_path, "base.toml", PAIGOW)
    top = write(tmp_path, "t.toml", 'include = "base.toml"\n[console]\nbaud = 9600\n')
    text = check_profile_report(top)
    lines = {
        ln.split("#")[0].strip(): ln.rsplit("# ", 1)[1]
        for ln in text.splitlines()
        if " = " in ln and "#" in ln
    }
    assert lines["console.baud = 9600"] == str(top)
    assert lines['console.port = "stdio"'] == "(default)"
    assert lines["devices.display.pins.a = 5"] == str(base)
    assert lines['rules.jurisdiction = "NY"'] == "(default)"
    assert lines["rules.baccarat.decks = 8"] == "(default)"
    assert f"  {base}\n  {top}" in text


# -- stable serial names, the display's acknowledgement --------------------------------------------


@pytest.mark.parametrize("port", ["/dev/ttyUSB0", "/dev/ttyACM12"])
def test_a_numbered_usb_serial_port_is_warned_not_refused(tmp_path: Path, port: str) -> None:
    """/dev/ttyUSBn and /dev/ttyACMn are numbered in detection order and can swap between boots:
    check-profile warns (naming the key and the stable names), the profile still loads."""
    write(tmp_path, "base.toml", BACCARAT)
    f = write(tmp_path, "t.toml", f'include = "base.toml"\n[devices.shoe]\nport = "{port}"\n')
    assert load_profile(f).shoe.port == port  # type: ignore[union-attr]
    warnings = [ln for ln in check_profile_report(f).splitlines() if ln.startswith("WARNING")]
    assert len(warnings) == 1
    assert f'devices.shoe.port = "{port}"' in warnings[0] and "/dev/tc-shoe" in warnings[0]


def test_each_numbered_port_is_pointed_to_its_own_udev_name(tmp_path: Path) -> None:
    """The udev rules name the console adapter /dev/tc-console, the shoe's /dev/tc-shoe and the
    dealer display's /dev/tc-display (systemd/udev/70-table-controller-serial.rules)."""
    rules = (ROOT / "systemd" / "udev" / "70-table-controller-serial.rules").read_text()
    write(tmp_path, "base.toml", BACCARAT)
    f = write(
        tmp_path,
        "t.toml",
        'include = "base.toml"\n[console]\nport = "/dev/ttyUSB2"\n'
        '[devices.shoe]\nport = "/dev/ttyUSB0"\n'
        '[devices.dealer_display]\ndriver = "serial-text"\nport = "/dev/ttyACM1"\n',
    )
    warnings = [ln for ln in check_profile_report(f).splitlines() if ln.startswith("WARNING")]
    for key, port, name in (
        ("console.port", "/dev/ttyUSB2", "tc-console"),
        ("devices.shoe.port", "/dev/ttyUSB0", "tc-shoe"),
        ("devices.dealer_display.port", "/dev/ttyACM1", "tc-display"),
    ):
        (mine,) = [w for w in warnings if f'{key} = "{port}"' in w]
        assert f"/dev/{name} " in mine and f'SYMLINK+="{name}"' in rules
        others = {"tc-console", "tc-shoe", "tc-display"} - {name}
        assert not [o for o in others if f"/dev/{o}" in mine], mine


@pytest.mark.parametrize(
    "port", ["/dev/tc-shoe", "/dev/serial/by-path/platform-xhci-hcd.0-usb-0:1:1.0-port0", "sim"]
)
def test_a_stable_or_simulated_port_is_not_warned(tmp_path: Path, port: str) -> None:
    write(tmp_path, "base.toml", BACCARAT)
    f = write(tmp_path, "t.toml", f'include = "base.toml"\n[devices.shoe]\nport = "{port}"\n')
    assert "WARNING" not in check_profile_report(f)


def test_the_shipped_pi_profiles_name_their_serial_devices_by_usb_port() -> None:
    for path in SHIPPED:
        if path.name.startswith(("rpi4-", "rpi5-")):
            assert "WARNING" not in check_profile_report(path), path.name


@pytest.mark.parametrize("ack", [True, False])
def test_a_serial_display_ack_is_read_as_documented(tmp_path: Path, ack: bool) -> None:
    """docs/drivers-display-buttons.md: ``ack = false`` sends without waiting for OK."""
    f = write(
        tmp_path,
        "t.toml",
        BACCARAT.replace(
            'driver = "sim"',
            f'driver = "serial-text"\nport = "/dev/tc-display"\nack = {str(ack).lower()}',
        ),
    )
    assert load_profile(f).dealer_display.ack is ack  # type: ignore[union-attr]
    g = write(
        tmp_path,
        "p.toml",
        PAIGOW.replace(
            PAIGOW[
                PAIGOW.index('driver = "seven-segment"') : PAIGOW.index("\n\n[devices.buttons]")
            ],
            f'driver = "serial-led"\nport = "/dev/tc-display"\nack = {str(ack).lower()}',
        ),
    )
    assert load_profile(g).display.ack is ack  # type: ignore[union-attr]


def test_ack_is_refused_with_a_display_that_has_no_serial_line(tmp_path: Path) -> None:
    write(tmp_path, "base.toml", PAIGOW)
    f = write(tmp_path, "t.toml", 'include = "base.toml"\n[devices.display]\nack = false\n')
    assert "only with driver serial-led" in str(refused(f))
