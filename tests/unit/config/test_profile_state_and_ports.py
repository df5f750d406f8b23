"""Profiles that would point the table's record out of its state directory, or give one serial
device two roles (issue 15): refused like a GPIO pin used twice, naming file, key and why."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.app import Application
from controller.config.profile import load_profile
from controller.journal.store import JournalError
from tests.unit.config.test_profile import BACCARAT, PAIGOW, refused, write


@pytest.mark.parametrize("key", ["path", "key_path"])
@pytest.mark.parametrize("value", ["/var/log/journal.sqlite", "/tmp/device.key"])
def test_an_absolute_journal_or_key_path_is_refused(tmp_path: Path, key: str, value: str) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + f'[journal]\n{key} = "{value}"\n')
    e = refused(f)
    assert e.key == f"journal.{key}" and "outside the state directory" in e.problem


@pytest.mark.parametrize("value", ["../journal.sqlite", "sub/../../x", "a/../../../etc/passwd"])
def test_a_path_climbing_out_with_dotdot_is_refused(tmp_path: Path, value: str) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + f'[journal]\npath = "{value}"\n')
    e = refused(f)
    assert e.key == "journal.path" and "'..'" in e.problem


def test_paths_inside_the_state_directory_are_kept(tmp_path: Path) -> None:
    f = write(
        tmp_path,
        "t.toml",
        PAIGOW + '[journal]\npath = "db/journal.sqlite"\nkey_path = "keys/device.key"\n',
    )
    p = load_profile(f)
    assert (p.journal.path, p.journal.key_path) == ("db/journal.sqlite", "keys/device.key")


def test_a_second_medium_must_be_an_absolute_directory(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW + '[journal]\nsecond_medium = "usb"\n')
    assert refused(f).key == "journal.second_medium"
    f = write(tmp_path, "u.toml", PAIGOW + '[journal]\nsecond_medium = "/media/anchor"\n')
    assert load_profile(f).journal.second_medium == "/media/anchor"
    # the journal itself never goes there: only the anchor may
    f = write(
        tmp_path,
        "v.toml",
        PAIGOW + '[journal]\nsecond_medium = "/media/anchor"\n'
        'path = "/media/anchor/journal.sqlite"\n',
    )
    assert "outside the state directory" in refused(f).problem


def test_a_symlink_out_of_the_state_directory_is_refused_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    state = tmp_path / "state"
    state.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (state / "journal.sqlite").symlink_to(elsewhere / "journal.sqlite")
    f = write(tmp_path, "t.toml", PAIGOW)
    with pytest.raises(JournalError) as info:
        Application(load_profile(f), state, console_port="none")
    assert "outside the state directory" in str(info.value)
    assert not (elsewhere / "journal.sqlite").exists()


def test_one_serial_device_for_the_console_and_the_shoe_is_refused(tmp_path: Path) -> None:
    text = BACCARAT.replace('port = "sim"', 'port = "/dev/ttyUSB0"')
    f = write(tmp_path, "t.toml", text + '[console]\nport = "/dev/ttyUSB0"\n')
    e = refused(f)
    assert e.key == "devices.shoe.port"
    assert "also console.port" in e.problem and "one serial device, one role" in e.problem


def test_a_symlink_to_the_same_device_is_the_same_device(tmp_path: Path) -> None:
    tty = tmp_path / "ttyAMA0"
    tty.write_text("")
    alias = tmp_path / "serial0"
    alias.symlink_to(tty)
    text = BACCARAT.replace('port = "sim"', f'port = "{tty}"')
    f = write(tmp_path, "t.toml", text + f'[console]\nport = "{alias}"\n')
    e = refused(f)
    assert f"both are {os.path.realpath(tty)}" in e.problem


def test_the_shoe_and_the_dealer_display_on_one_port_are_refused(tmp_path: Path) -> None:
    text = BACCARAT.replace('port = "sim"', 'port = "/dev/ttyUSB1"').replace(
        '[devices.dealer_display]\ndriver = "sim"',
        '[devices.dealer_display]\ndriver = "serial-text"\nport = "/dev/ttyUSB1"',
    )
    e = refused(write(tmp_path, "t.toml", text))
    assert e.key == "devices.dealer_display.port"


def test_different_devices_are_fine(tmp_path: Path) -> None:
    text = BACCARAT.replace('port = "sim"', 'port = "/dev/ttyUSB0"')
    p = load_profile(write(tmp_path, "t.toml", text + '[console]\nport = "/dev/ttyUSB2"\n'))
    assert p.shoe is not None and p.shoe.port == "/dev/ttyUSB0"


def test_console_on_the_command_line_naming_the_shoe_port_is_refused(tmp_path: Path) -> None:
    from controller.cli import main

    text = BACCARAT.replace('port = "sim"', 'port = "/dev/ttyUSB0"')
    f = write(tmp_path, "t.toml", text)
    assert (
        main(
            [
                "run",
                "--profile",
                str(f),
                "--state-dir",
                str(tmp_path / "s"),
                "--console",
                "/dev/ttyUSB0",
            ]
        )
        == 1
    )
    assert not (tmp_path / "s").exists()
