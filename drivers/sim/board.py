"""SimBoard: a simulated twin of the sysfs files :mod:`drivers.board` reads.

It lays out, under one directory, what a Raspberry Pi's kernel shows: ``hwmon/hwmon0`` named
``cpu_thermal`` (``temp1_input``), ``hwmon/hwmon1`` named ``rpi_volt`` (``in0_lcrit_alarm``),
and, when the board has one, ``rtc/rtc0`` (``name``, ``hctosys``) with its ``dev/rtc0`` node.
The real readers run against it unchanged: the profile's ``[board]`` roots point here.

Test-side stimulus (``undervoltage``, ``temperature``, ``write_alarm``) lives on this object only;
production code never calls it.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SimBoard"]


class SimBoard:
    """A board's sensors and clock as files under ``root`` (made if missing)."""

    def __init__(self, root: Path, *, rtc: str | None = "rpi-rtc soc:rpi-rtc") -> None:
        self.root = Path(root)
        self.hwmon_root = self.root / "hwmon"
        self.rtc_root = self.root / "rtc"
        self.dev_root = self.root / "dev"
        thermal = self.hwmon_root / "hwmon0"
        volt = self.hwmon_root / "hwmon1"
        for d in (thermal, volt, self.rtc_root, self.dev_root):
            d.mkdir(parents=True, exist_ok=True)
        (thermal / "name").write_text("cpu_thermal\n")
        (volt / "name").write_text("rpi_volt\n")
        self._alarm = volt / "in0_lcrit_alarm"
        self._temp = thermal / "temp1_input"
        self.undervoltage(False)
        self.temperature(45.0)
        if rtc is not None:
            (self.rtc_root / "rtc0").mkdir(exist_ok=True)
            (self.rtc_root / "rtc0" / "name").write_text(rtc + "\n")
            (self.rtc_root / "rtc0" / "hctosys").write_text("1\n")
            (self.dev_root / "rtc0").touch()

    def undervoltage(self, on: bool) -> None:
        """The supply drops below (``on``) or comes back above the firmware's threshold."""
        self.write_alarm(b"1\n" if on else b"0\n")

    def write_alarm(self, raw: bytes) -> None:
        """Write anything into ``in0_lcrit_alarm`` (a test of what the reader does with it)."""
        tmp = self._alarm.with_suffix(".tmp")
        tmp.write_bytes(raw)
        tmp.replace(self._alarm)

    def temperature(self, celsius: float) -> None:
        """The SoC's temperature as ``cpu_thermal`` reports it (millidegrees)."""
        tmp = self._temp.with_suffix(".tmp")
        tmp.write_text(f"{round(celsius * 1000)}\n")
        tmp.replace(self._temp)
