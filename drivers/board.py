"""The board's own health, read from sysfs without ``vcgencmd``: undervoltage and the SoC's
temperature from hwmon, and the real-time clock (docs/power-and-storage.md).

- Undervoltage: the firmware's voltage sensor is the hwmon device named ``rpi_volt`` (Linux
  ``drivers/hwmon/raspberrypi-hwmon.c``, ``Documentation/hwmon/raspberrypi-hwmon.rst``); its
  ``in0_lcrit_alarm`` reads 1 while the supply is under voltage. The firmware also slows the
  clocks then, so this alarm is the undervoltage throttle.
- Throttling for heat: the SoC's sensor is the hwmon device ``cpu_thermal`` (``temp1_input``, in
  millidegrees Celsius). Between 80 and 85 degrees the firmware throttles the Arm cores, at 85 the
  GPU too (Raspberry Pi documentation, "Frequency management and thermal control").
- The RTC: ``<rtc root>/rtc0`` (the Pi 5's own, or a DS3231 on a Pi 4 through
  ``dtoverlay=i2c-rtc,ds3231``); its ``name`` says which, ``hctosys`` whether it set the system
  clock at boot.

Every root is a path the profile names (``[board]``), so the simulated twin
(``drivers.sim.board``) is only another directory. :class:`BoardMonitor` reads on a thread of
its own and only posts :class:`BoardCondition` events; the controller's loop journals them.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

__all__ = [
    "CONDITIONS",
    "BoardCondition",
    "BoardMonitor",
    "BoardReading",
    "BoardSensors",
    "RtcInfo",
    "SensorSource",
    "detect_rtc",
    "find_hwmon",
]

#: The hwmon devices read, by the name their ``name`` file holds.
VOLT_SENSOR: Final = "rpi_volt"
THERMAL_SENSOR: Final = "cpu_thermal"
#: The conditions a :class:`BoardCondition` names.
CONDITIONS: Final = ("undervoltage", "throttled")
#: A temperature condition clears this far below the threshold, so a SoC hovering at the
#: threshold does not write a row a second.
HYSTERESIS_MC: Final = 5_000
#: sysfs attributes are a few bytes; anything longer is not one.
_MAX_READ: Final = 64


@dataclass(frozen=True, slots=True)
class BoardCondition:
    """A board condition began (``active``) or ended: ``condition`` is one of
    :data:`CONDITIONS`; ``detail`` says what was read, for the journal and the console."""

    condition: str
    active: bool
    detail: str


@dataclass(frozen=True, slots=True)
class BoardReading:
    """One read of the sensors. None: the sensor is not there (or said nothing readable)."""

    undervoltage: bool | None
    temp_mc: int | None


def _read_small(path: Path) -> str | None:
    """A sysfs attribute's text, or None when it is absent, unreadable or not a short text."""
    try:
        with path.open("rb") as f:
            raw = f.read(_MAX_READ + 1)
    except OSError:
        return None
    if len(raw) > _MAX_READ:
        return None
    try:
        return raw.strip().decode("ascii")
    except UnicodeDecodeError:
        return None


def _read_int(path: Path) -> int | None:
    text = _read_small(path)
    if text is None or re.fullmatch(r"-?[0-9]+", text) is None:
        return None
    return int(text)


def find_hwmon(root: Path, name: str) -> Path | None:
    """The hwmon device under ``root`` whose ``name`` file holds ``name``, or None. Looked up
    by name each time: the ``hwmonN`` numbers follow probe order and can change between boots."""
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return None
    for entry in entries:
        if _read_small(entry / "name") == name:
            return entry
    return None


class SensorSource(Protocol):
    """What :class:`BoardMonitor` reads: one reading of the board's sensors."""

    def read(self) -> BoardReading: ...


class BoardSensors:
    """Reads the voltage alarm and the SoC temperature under one hwmon root (sysfs, or the
    simulated board's directory)."""

    def __init__(self, hwmon_root: Path) -> None:
        self.hwmon_root = Path(hwmon_root)

    def read(self) -> BoardReading:
        volt = find_hwmon(self.hwmon_root, VOLT_SENSOR)
        alarm = _read_int(volt / "in0_lcrit_alarm") if volt is not None else None
        thermal = find_hwmon(self.hwmon_root, THERMAL_SENSOR)
        temp = _read_int(thermal / "temp1_input") if thermal is not None else None
        return BoardReading(
            undervoltage=None if alarm not in (0, 1) else alarm == 1,
            temp_mc=temp,
        )


class BoardMonitor:
    """Polls :class:`BoardSensors` every ``poll_s`` on its own thread and posts a
    :class:`BoardCondition` each time a condition begins or ends (one present at the first read
    is posted as begun). ``throttle_mc``: the temperature at which the firmware throttles."""

    def __init__(
        self,
        sensors: SensorSource,
        post: Callable[[BoardCondition], None],
        *,
        poll_s: float = 2.0,
        throttle_mc: int = 80_000,
    ) -> None:
        self.sensors = sensors
        self.poll_s = poll_s
        self.throttle_mc = throttle_mc
        self._post = post
        self._lock = threading.Lock()
        self._active: dict[str, bool] = dict.fromkeys(CONDITIONS, False)
        #: The newest reading (for ``status``; replaced whole, never changed in place).
        self.last = BoardReading(None, None)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="board-monitor", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            self.poll_once()
            if self._stop.wait(self.poll_s):
                return

    def poll_once(self) -> list[BoardCondition]:
        """Read once and post what changed (also returned). Safe from any thread."""
        reading = self.sensors.read()
        with self._lock:
            self.last = reading
            changes: list[BoardCondition] = []
            if (
                reading.undervoltage is not None
                and reading.undervoltage != self._active["undervoltage"]
            ):
                self._active["undervoltage"] = reading.undervoltage
                changes.append(
                    BoardCondition(
                        "undervoltage",
                        reading.undervoltage,
                        f"{VOLT_SENSOR} in0_lcrit_alarm = {int(reading.undervoltage)}",
                    )
                )
            if reading.temp_mc is not None:
                hot = self._active["throttled"]
                now_hot = (
                    reading.temp_mc >= self.throttle_mc
                    if not hot
                    else reading.temp_mc > self.throttle_mc - HYSTERESIS_MC
                )
                if now_hot != hot:
                    self._active["throttled"] = now_hot
                    changes.append(
                        BoardCondition(
                            "throttled",
                            now_hot,
                            f"SoC at {reading.temp_mc / 1000:.1f} C"
                            f" (the firmware throttles from {self.throttle_mc / 1000:.0f} C)",
                        )
                    )
        for change in changes:
            self._post(change)
        return changes


@dataclass(frozen=True)
class RtcInfo:
    """A real-time clock: its device name (``rtc0``), its driver's name, whether it set the
    system clock at boot (``hctosys``), and whether its device node is there."""

    device: str
    name: str
    set_clock_at_boot: bool
    node: bool


def detect_rtc(class_root: Path, dev_root: Path = Path("/dev")) -> RtcInfo | None:
    """The first RTC under ``class_root`` (``/sys/class/rtc``), or None when the board has none."""
    try:
        devices = sorted(p for p in Path(class_root).iterdir() if p.name.startswith("rtc"))
    except OSError:
        return None
    for dev in devices:
        name = _read_small(dev / "name")
        if name is None:
            continue
        return RtcInfo(
            device=dev.name,
            name=name.split()[0] if name else "unknown",
            set_clock_at_boot=_read_small(dev / "hctosys") == "1",
            node=(Path(dev_root) / dev.name).exists(),
        )
    return None
