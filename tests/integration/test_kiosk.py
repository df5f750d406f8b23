"""The kiosk on the Pi (systemd/kiosk/): the autostart entry, the install script, and the kiosk
script itself against a real scoreboard server -- with a stand-in browser that records how it
was started, and with Debian's real Chromium (headless) taking the page's screenshot through
the same script. Also the service's loopback-only network drop-in the scoreboard needs."""

from __future__ import annotations

import configparser
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.app import Publication
from controller.config.profile import ScoreboardSettings
from controller.scoreboard.server import ScoreboardServer

REPO = Path(__file__).resolve().parents[2]
KIOSK = REPO / "systemd" / "kiosk"
SCRIPT = KIOSK / "scoreboard-kiosk.sh"
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture
def board() -> Iterator[ScoreboardServer]:
    pub = Publication()
    pub.publish(
        {
            "game": "paigow",
            "state": "dealing",
            "round": 4,
            "showing": True,
            "number": 5,
            "start_position": 5,
            "position_name": "seat 4",
            "seat": 4,
            "style": "house_way_from_right",
            "start_mode": "rng",
            "dice_mode": False,
        }
    )
    b = ScoreboardServer(ScoreboardSettings(enabled=True, port=0), pub, "paigow")
    b.start()
    yield b
    b.close()


def run_kiosk(
    tmp_path: Path,
    url: str,
    browser: str,
    extra: str = "",
    wait_s: int = 10,
    **monitor: str,
) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ,
        HOME=str(tmp_path),
        SCOREBOARD_ONCE="1",
        SCOREBOARD_WAIT_S=str(wait_s),
        SCOREBOARD_BROWSER=browser,
        SCOREBOARD_EXTRA_ARGS=extra,
        **{f"SCOREBOARD_{k.upper()}": v for k, v in monitor.items()},
    )
    env.pop("DISPLAY", None)
    # Its own process group: on a timeout the browser goes too, not only the script.
    proc = subprocess.Popen(
        ["sh", str(SCRIPT), url],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def stand_in_browser(tmp_path: Path) -> tuple[Path, Path]:
    record = tmp_path / "argv.txt"
    fake = tmp_path / "fake-chromium"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{record}"\n')
    fake.chmod(0o755)
    return fake, record


def test_scripts_parse() -> None:
    assert subprocess.run(["sh", "-n", str(SCRIPT)], timeout=30).returncode == 0
    assert (
        subprocess.run(["bash", "-n", str(KIOSK / "install-kiosk.sh")], timeout=30).returncode == 0
    )


def test_the_autostart_entry() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(KIOSK / "scoreboard-kiosk.desktop")
    d = entry["Desktop Entry"]
    assert d["Type"] == "Application" and d["Terminal"] == "false"
    assert d["Exec"] == "/opt/table-controller/share/kiosk/scoreboard-kiosk.sh"  # the release's


def test_the_kiosk_waits_for_the_page_then_starts_the_browser_in_kiosk_mode(
    tmp_path: Path, board: ScoreboardServer
) -> None:
    fake, record = stand_in_browser(tmp_path)
    done = run_kiosk(tmp_path, board.url, str(fake))
    assert done.returncode == 0, done.stderr
    argv = record.read_text().splitlines()
    assert "--kiosk" in argv and "--noerrdialogs" in argv and argv[-1] == board.url
    assert f"--user-data-dir={tmp_path}/.cache/scoreboard-kiosk" in argv


def test_the_kiosk_opens_the_page_with_the_table_it_expects_and_its_own_choices(
    tmp_path: Path, board: ScoreboardServer
) -> None:
    fake, record = stand_in_browser(tmp_path)
    done = run_kiosk(
        tmp_path, board.url, str(fake), table="PG-3", lang="zh-Hant,en", density="large"
    )
    assert done.returncode == 0, done.stderr
    assert record.read_text().splitlines()[-1] == (
        board.url + "?table=PG-3&lang=zh-Hant,en&density=large"
    )
    # nothing but a table id, a language list and a density gets into the address
    record.unlink()
    for bad in ({"table": "PG-3&lang=x"}, {"lang": "fr"}, {"density": "huge"}):
        done = run_kiosk(tmp_path, board.url, str(fake), **bad)
        assert done.returncode == 2 and "is not allowed" in done.stderr, bad
        assert not record.exists()


def test_no_page_no_browser(tmp_path: Path) -> None:
    fake, record = stand_in_browser(tmp_path)
    done = run_kiosk(tmp_path, "http://127.0.0.1:9/", str(fake), wait_s=2)
    assert done.returncode == 1 and "no answer" in done.stderr
    assert not record.exists()


def test_the_real_browser_shows_the_page_through_the_kiosk_script(
    tmp_path: Path, board: ScoreboardServer
) -> None:
    if not os.access(CHROMIUM, os.X_OK):
        if os.environ.get("TC_REQUIRE_SERVICES") == "1":
            pytest.fail("no /usr/bin/chromium (TC_REQUIRE_SERVICES=1: CI must have it)")
        pytest.skip("no /usr/bin/chromium: apt-get install chromium")
    shot = tmp_path / "kiosk.png"
    done = run_kiosk(
        tmp_path,
        board.url,
        str(CHROMIUM),
        f"--headless=new --no-sandbox --disable-gpu --window-size=1920,1080 --screenshot={shot}",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.stat().st_size > 10_000
    assert board.stats.pages >= 1


def test_install_kiosk_stages_the_script_and_the_autostart_entry(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            "bash",
            str(KIOSK / "install-kiosk.sh"),
            "--user",
            "table",
            "--url",
            "http://127.0.0.1:8081/",
            "--stage",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    # nothing goes into the release's tree (its manifest covers every file there): the script
    # is the release's own copy (share/kiosk/, tests/integration/test_release.py)
    assert not (tmp_path / "opt").exists()
    entry = (
        tmp_path / "home" / "table" / ".config" / "autostart" / "scoreboard-kiosk.desktop"
    ).read_text()
    assert (
        "Exec=/opt/table-controller/share/kiosk/scoreboard-kiosk.sh http://127.0.0.1:8081/\n"
        in entry
    )
    done = subprocess.run(
        [
            "bash",
            str(KIOSK / "install-kiosk.sh"),
            "--user",
            "table",
            "--table",
            "BAC-7",
            "--lang",
            "zh-Hant,en",
            "--stage",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    entry = (
        tmp_path / "home" / "table" / ".config" / "autostart" / "scoreboard-kiosk.desktop"
    ).read_text()
    assert (
        "Exec=env SCOREBOARD_TABLE=BAC-7 SCOREBOARD_LANG=zh-Hant,en"
        " /opt/table-controller/share/kiosk/scoreboard-kiosk.sh\n" in entry
    )
    bad = subprocess.run(
        [
            "bash",
            str(KIOSK / "install-kiosk.sh"),
            "--user",
            "t",
            "--url",
            "file:///etc/passwd",
            "--stage",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2


def test_the_service_drop_in_opens_loopback_only() -> None:
    values: dict[str, str] = {}
    text = (REPO / "systemd" / "table-controller.service.d" / "scoreboard.conf").read_text()
    for raw in text.splitlines():
        line = raw.strip()
        if line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            values[key] = value
    assert values == {
        "PrivateNetwork": "no",
        "RestrictAddressFamilies": "AF_UNIX AF_INET AF_INET6",
        "IPAddressAllow": "localhost",
    }
    # The unit keeps denying every other address.
    unit = (REPO / "systemd" / "table-controller.service").read_text()
    assert "\nIPAddressDeny=any\n" in unit
