"""The profile's ``[scoreboard]`` section: off when absent, on with loopback port 8080 when
present; port and address checked; a non-loopback address is warned about by check-profile and
the sim profiles serve their pages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from controller.config.profile import (
    ProfileError,
    ScoreboardSettings,
    check_profile_report,
    load_profile,
    profile_warnings,
)

from .test_profile import PAIGOW, ROOT, refused, write


def test_absent_is_off_and_present_is_on_with_loopback_defaults(tmp_path: Path) -> None:
    assert load_profile(write(tmp_path, "a.toml", PAIGOW)).scoreboard == ScoreboardSettings()
    assert ScoreboardSettings().enabled is False
    board = load_profile(write(tmp_path, "b.toml", PAIGOW + "\n[scoreboard]\n")).scoreboard
    assert board == ScoreboardSettings(enabled=True, address="127.0.0.1", port=8080, max_clients=16)
    assert board.loopback
    off = load_profile(write(tmp_path, "c.toml", PAIGOW + "\n[scoreboard]\nenabled = false\n"))
    assert off.scoreboard.enabled is False


def test_the_sim_profiles_serve_their_pages() -> None:
    for game, port in (("paigow", 8080), ("baccarat", 8081)):
        board = load_profile(ROOT / "hw_profiles" / f"sim-{game}.toml").scoreboard
        assert board.enabled and board.loopback and board.port == port


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("port = 65536", "out of range 0..65535"),
        ("port = -1", "out of range 0..65535"),
        ('port = "8080"', "wrong type"),
        ("max_clients = 0", "out of range 1..256"),
        ('address = "localhost"', "is not an IP address (use 127.0.0.1)"),
        ('address = "127.0.0.256"', "is not an IP address"),
        ('address = ""', "wrong type"),
        ("enabled = 1", "wrong type"),
        ("prot = 80", "unknown key (did you mean 'port'?)"),
        ('table_name = "' + "T" * 33 + '"', "at most 32 fit the monitor"),
        ('table_name = "BACCARAT\\n7"', "holds a control character"),
        ("table_name = 7", "wrong type"),
        ('languages = ["en", "zh"]', "is not one of en, zh-Hant, zh-Hans"),
        ('languages = ["en", "en"]', "names a language twice"),
        ('languages = ["en", "zh-Hant", "zh-Hans"]', "a list of one or two languages"),
        ("languages = []", "a list of one or two languages"),
        ("idle_minutes = -1", "out of range"),
        ("idle_minutes = 0.01", "0 (never) or 0.05..1440"),
        ("idle_minutes = 1441", "out of range"),
        ('idle_text = ["' + "x" * 61 + '"]', "at most 60"),
        ('idle_text = "WELCOME"', "a list of at most 16 strings"),
        ('density = "huge"', "is not one of standard, large, dense"),
    ],
)
def test_mistakes_are_refused(tmp_path: Path, text: str, problem: str) -> None:
    err = refused(write(tmp_path, "p.toml", PAIGOW + f"\n[scoreboard]\n{text}\n"))
    assert err.key.startswith("scoreboard.") and problem in err.problem


def test_port_zero_and_ipv6_are_accepted(tmp_path: Path) -> None:
    text = PAIGOW + '\n[scoreboard]\naddress = "::1"\nport = 0\n'
    board = load_profile(write(tmp_path, "p.toml", text)).scoreboard
    assert board.port == 0 and board.address == "::1" and board.loopback


@pytest.mark.parametrize(
    ("address", "warned"),
    [
        ("127.0.0.1", False),
        ("127.1.2.3", False),
        ("::1", False),
        ("0.0.0.0", True),
        ("192.168.1.20", True),
        ("::", True),
    ],
)
def test_check_profile_warns_when_not_loopback(tmp_path: Path, address: str, warned: bool) -> None:
    path = write(tmp_path, "p.toml", PAIGOW + f'\n[scoreboard]\naddress = "{address}"\n')
    report = check_profile_report(path)
    assert ("WARNING scoreboard.address" in report) is warned
    assert bool(profile_warnings(load_profile(path))) is warned
    # Off: nothing is served, nothing to warn about.
    path.write_text(PAIGOW + f'\n[scoreboard]\nenabled = false\naddress = "{address}"\n')
    assert "WARNING" not in check_profile_report(path)


def test_check_profile_command_prints_the_warning(tmp_path: Path) -> None:
    path = write(tmp_path, "p.toml", PAIGOW + '\n[scoreboard]\naddress = "0.0.0.0"\n')
    done = subprocess.run(
        [sys.executable, "-m", "controller", "check-profile", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0
    assert 'WARNING scoreboard.address = "0.0.0.0" is not loopback' in done.stdout


def test_error_is_a_profile_error(tmp_path: Path) -> None:
    with pytest.raises(ProfileError):
        load_profile(write(tmp_path, "p.toml", PAIGOW + "\n[scoreboard]\nport = 99999\n"))


def test_names_kiosk_and_per_peer_are_read_and_checked(tmp_path: Path) -> None:
    board = load_profile(write(tmp_path, "d.toml", PAIGOW + "\n[scoreboard]\n")).scoreboard
    assert board.names == () and board.kiosk == ("127.0.0.1", "::1") and board.per_peer == 4
    text = PAIGOW + (
        '\n[scoreboard]\nnames = ["Table7.Floor.Example."]\n'
        'kiosk = ["127.0.0.1", "::ffff:10.0.0.5"]\nper_peer = 2\n'
    )
    board = load_profile(write(tmp_path, "e.toml", text)).scoreboard
    assert board.names == ("table7.floor.example",) and board.per_peer == 2
    assert board.kiosk == ("127.0.0.1", "::ffff:a00:5")
    for bad, problem in (
        ('names = ["http://x"]', "is not a host name"),
        ('names = ["x:8080"]', "is not a host name"),
        ('names = "x"', "a list of at most 16 strings"),
        ('kiosk = ["localhost"]', "is not an IP address"),
        ("per_peer = 0", "out of range 1..256"),
    ):
        err = refused(write(tmp_path, "f.toml", PAIGOW + f"\n[scoreboard]\n{bad}\n"))
        assert err.key.startswith("scoreboard.") and problem in err.problem, bad


def test_what_the_monitor_shows_is_read_with_its_defaults(tmp_path: Path) -> None:
    board = load_profile(write(tmp_path, "a.toml", PAIGOW + "\n[scoreboard]\n")).scoreboard
    assert (board.table_name, board.languages, board.idle_minutes) == ("", ("en",), 10.0)
    assert (board.idle_text, board.density) == ((), "standard")
    text = (
        PAIGOW + "\n[scoreboard]\n"
        'table_name = "百家樂 7"\nlanguages = ["zh-Hant", "en"]\nidle_minutes = 0.05\n'
        'idle_text = ["WELCOME", "歡迎光臨"]\ndensity = "large"\n'
    )
    board = load_profile(write(tmp_path, "b.toml", text)).scoreboard
    assert board.table_name == "百家樂 7" and board.languages == ("zh-Hant", "en")
    assert board.idle_minutes == 0.05 and board.idle_text == ("WELCOME", "歡迎光臨")
    assert board.density == "large"
    never = load_profile(write(tmp_path, "c.toml", PAIGOW + "\n[scoreboard]\nidle_minutes = 0\n"))
    assert never.scoreboard.idle_minutes == 0


def test_check_profile_warns_about_a_text_the_monitor_s_font_lacks(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "p.toml",
        PAIGOW + '\n[scoreboard]\ntable_name = "牌九 3"\nidle_text = ["歡迎光臨", "龘"]\n',
    )
    done = subprocess.run(
        [sys.executable, "-m", "controller", "check-profile", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stdout.splitlines() if line.startswith("WARNING")]
    assert warned == [
        "WARNING scoreboard.idle_text '龘': the monitor's Chinese font has no 龘 (it carries the"
        " labels' characters and common words: controller/scoreboard/labels.py EXTRA); the page"
        " would show a box instead"
    ]
