"""The board's sensors and clock read from sysfs files (drivers/board.py) against the simulated
board (drivers/sim/board.py): what the kernel's rpi_volt and cpu_thermal hwmon devices and the
RTC class show, and what the reader makes of anything else written there."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.board import BoardCondition, BoardMonitor, BoardSensors, detect_rtc, find_hwmon
from drivers.sim.board import SimBoard


def _monitor(board: SimBoard) -> tuple[BoardMonitor, list[BoardCondition]]:
    posted: list[BoardCondition] = []
    return BoardMonitor(BoardSensors(board.hwmon_root), posted.append, poll_s=60.0), posted


def test_the_sensors_are_found_by_name_not_by_number(tmp_path: Path) -> None:
    board = SimBoard(tmp_path)
    assert find_hwmon(board.hwmon_root, "rpi_volt") == board.hwmon_root / "hwmon1"
    assert find_hwmon(board.hwmon_root, "cpu_thermal") == board.hwmon_root / "hwmon0"
    assert find_hwmon(tmp_path / "absent", "rpi_volt") is None


def test_undervoltage_began_and_ended_are_posted_once_each(tmp_path: Path) -> None:
    board = SimBoard(tmp_path)
    monitor, posted = _monitor(board)
    assert monitor.poll_once() == []  # in0_lcrit_alarm = 0: nothing to say
    board.undervoltage(True)
    monitor.poll_once()
    monitor.poll_once()  # still under voltage: not posted again
    board.undervoltage(False)
    monitor.poll_once()
    assert [(c.condition, c.active) for c in posted] == [
        ("undervoltage", True),
        ("undervoltage", False),
    ]
    assert "in0_lcrit_alarm = 1" in posted[0].detail


def test_undervoltage_present_at_the_first_read_is_posted(tmp_path: Path) -> None:
    board = SimBoard(tmp_path)
    board.undervoltage(True)
    monitor, posted = _monitor(board)
    monitor.poll_once()
    assert [(c.condition, c.active) for c in posted] == [("undervoltage", True)]


def test_throttling_from_the_temperature_with_hysteresis(tmp_path: Path) -> None:
    # 80 C: the firmware throttles the Arm cores from there (Raspberry Pi documentation)
    board = SimBoard(tmp_path)
    monitor, posted = _monitor(board)
    board.temperature(79.9)
    monitor.poll_once()
    board.temperature(80.0)
    monitor.poll_once()
    board.temperature(76.0)  # within 5 C of the threshold: still hot
    monitor.poll_once()
    board.temperature(74.9)
    monitor.poll_once()
    assert [(c.condition, c.active) for c in posted] == [("throttled", True), ("throttled", False)]


def test_a_board_without_the_sensors_posts_nothing(tmp_path: Path) -> None:
    posted: list[BoardCondition] = []
    monitor = BoardMonitor(BoardSensors(tmp_path / "no-hwmon"), posted.append)
    assert monitor.poll_once() == []
    assert monitor.last.undervoltage is None and monitor.last.temp_mc is None


@settings(max_examples=60, deadline=None)
@given(raw=st.binary(max_size=80))
def test_anything_in_the_alarm_file_is_read_or_ignored_never_a_crash(raw: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        board = SimBoard(Path(tmp))
        board.write_alarm(raw)
        reading = BoardSensors(board.hwmon_root).read()
    # sysfs: a decimal number and a newline; 1 is the alarm, 0 none, anything else unreadable
    number = re.fullmatch(rb"-?[0-9]+", raw.strip())
    expected = None if number is None or len(raw) > 64 else {0: False, 1: True}.get(int(number[0]))
    assert reading.undervoltage is expected


def test_the_pi_5_rtc_is_reported_with_its_driver_name(tmp_path: Path) -> None:
    board = SimBoard(tmp_path)
    rtc = detect_rtc(board.rtc_root, board.dev_root)
    assert rtc is not None
    assert (rtc.device, rtc.name, rtc.set_clock_at_boot, rtc.node) == (
        "rtc0",
        "rpi-rtc",
        True,
        True,
    )


def test_a_ds3231_and_no_rtc(tmp_path: Path) -> None:
    ds = SimBoard(tmp_path / "pi4", rtc="rtc-ds1307 1-0068")
    rtc = detect_rtc(ds.rtc_root, ds.dev_root)
    assert rtc is not None and rtc.name == "rtc-ds1307"
    none = SimBoard(tmp_path / "bare", rtc=None)
    assert detect_rtc(none.rtc_root, none.dev_root) is None
    assert detect_rtc(tmp_path / "missing") is None
