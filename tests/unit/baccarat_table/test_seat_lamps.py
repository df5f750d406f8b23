"""A baccarat table whose profile wires seat lamps (the reference design's rpi*-baccarat: eight
lamps on GPIO 16-23) lights every one at power-up, read back from the output pins, and turns them
off after the lamp test, so bring-up sees a dead lamp (docs/hardware.md "Bring-up"). A lamp
driver that fails is said on the consoles, never stops the table."""

from __future__ import annotations

from pathlib import Path

from controller.config.settings import ConfigStore, RuleSettings
from controller.journal.store import Journal
from controller.tables.baccarat.table import LAMP_TEST_NS, BaccaratTable
from controller.tables.table import Devices, TableContext
from drivers.errors import DeviceUnavailable
from drivers.seat_lamps import SeatLamps
from drivers.sim.dealer_display import SimDealerDisplay
from drivers.sim.gpio import SimGPIO
from tests.unit.baccarat_table.helpers import FakeShoeReader

#: rpi4-baccarat's lamps, seat -> GPIO
PINS = {seat: 15 + seat for seat in range(1, 9)}
T0 = 5_000_000_000


def _table(tmp: Path, lamps: object, alarms: list[str]) -> BaccaratTable:
    journal = Journal(tmp / "journal.db")
    ctx = TableContext(
        journal=journal,
        settings=ConfigStore(journal, RuleSettings()),
        devices=Devices(dealer_display=SimDealerDisplay(), seat_lamps=lamps),  # type: ignore[arg-type]
        alarm=alarms.append,
        announce=lambda lines, skip: alarms.extend(lines),
    )
    table = BaccaratTable(ctx, clock_ns=lambda: T0)
    table.link.reader = FakeShoeReader()  # stands in for the shoe's serial link
    return table


def test_every_lamp_is_lit_at_power_up_then_dark(tmp_path: Path) -> None:
    gpio = SimGPIO()
    lamps = SeatLamps(gpio, PINS)
    table = _table(tmp_path, lamps, [])
    assert [gpio.input(pin) for pin in PINS.values()] == [gpio.HIGH] * 8  # read from the pins
    table.tick(T0 + LAMP_TEST_NS - 1)
    assert lamps.lit() == frozenset(PINS)
    table.tick(T0 + LAMP_TEST_NS)
    assert [gpio.input(pin) for pin in PINS.values()] == [gpio.LOW] * 8
    table.tick(T0 + 2 * LAMP_TEST_NS)
    assert lamps.lit() == frozenset()


def test_active_low_lamps_are_lit_low(tmp_path: Path) -> None:
    gpio = SimGPIO()
    _table(tmp_path, SeatLamps(gpio, PINS, active_high=False), [])
    assert [gpio.input(pin) for pin in PINS.values()] == [gpio.LOW] * 8


class _DeadLamps:
    """A lamp driver whose pins are gone."""

    def lamp_test(self) -> None:
        raise DeviceUnavailable("seat lamps are closed")

    def all_off(self) -> None:
        raise AssertionError("no lamp test ran, so nothing to end")


def test_a_lamp_driver_that_fails_is_said_and_the_table_runs(tmp_path: Path) -> None:
    alarms: list[str] = []
    table = _table(tmp_path, _DeadLamps(), alarms)
    assert alarms == ["FAULT seat lamps: seat lamps are closed"]
    table.tick(T0 + LAMP_TEST_NS)  # no lamp test to end
    assert table.state == "shuffle"
