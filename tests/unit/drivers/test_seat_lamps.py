"""SeatLamps lights exactly the starting position's lamp."""

from __future__ import annotations

import pytest

from drivers.errors import DeviceUnavailable, DisplayValueError, PinError
from drivers.seat_lamps import SeatLamps
from drivers.sim.gpio import SimGPIO

PINS = {1: 4, 2: 17, 3: 27, 4: 22, 5: 23, 6: 24, 7: 25}


def test_light_one_position_only() -> None:
    gpio = SimGPIO()
    lamps = SeatLamps(gpio, PINS)
    assert all(gpio.level(p) == 0 for p in PINS.values())
    lamps.light(3)
    assert [gpio.level(PINS[k]) for k in range(1, 8)] == [0, 0, 1, 0, 0, 0, 0]
    lamps.light(7)
    assert [gpio.level(PINS[k]) for k in range(1, 8)] == [0, 0, 0, 0, 0, 0, 1]
    assert lamps.lit() == {7}


def test_lamp_test_and_all_off() -> None:
    gpio = SimGPIO()
    lamps = SeatLamps(gpio, PINS)
    lamps.lamp_test()
    assert all(gpio.level(p) == 1 for p in PINS.values())
    lamps.all_off()
    assert all(gpio.level(p) == 0 for p in PINS.values())


def test_active_low_inverts() -> None:
    gpio = SimGPIO()
    lamps = SeatLamps(gpio, {1: 4, 2: 17}, active_high=False)
    assert (gpio.level(4), gpio.level(17)) == (1, 1)
    lamps.light(2)
    assert (gpio.level(4), gpio.level(17)) == (1, 0)


def test_refusals() -> None:
    gpio = SimGPIO()
    lamps = SeatLamps(gpio, {1: 4, 2: 17})
    lamps.light(1)
    with pytest.raises(DisplayValueError, match="no seat lamp at position 3"):
        lamps.light(3)
    assert lamps.lit() == {1}
    with pytest.raises(PinError):
        SeatLamps(SimGPIO(), {0: 4})
    with pytest.raises(PinError):
        SeatLamps(SimGPIO(), {1: 4, 2: 4})
    lamps.close()
    assert gpio.level(4) == 0 and gpio.function(4) is None
    with pytest.raises(DeviceUnavailable):
        lamps.light(1)
