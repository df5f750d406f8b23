"""The UPS's power-fail input on the simulated GPIO (drivers/power_fail.py): whatever the line
does, edges inside the debounce included, what is posted alternates asserted / dropped and,
once the loop's tick has re-read the line, ends where the line is."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.power_fail import BOUNCE_MS, PowerFailChanged, PowerFailInput
from drivers.sim.gpio import DEBOUNCE_MODES, DebounceMode, SimGPIO

PIN = 10


def test_asserted_at_start_is_posted_once() -> None:
    gpio = SimGPIO()
    gpio.drive(PIN, gpio.LOW)  # the UPS is on battery before the controller starts
    posted: list[PowerFailChanged] = []
    ups = PowerFailInput(gpio, PIN, posted.append)
    ups.poll()
    assert posted == [PowerFailChanged(True, PIN)]


@pytest.mark.parametrize("debounce", DEBOUNCE_MODES)
def test_active_high_polarity(debounce: DebounceMode) -> None:
    gpio = SimGPIO(debounce=debounce)
    posted: list[PowerFailChanged] = []
    PowerFailInput(gpio, PIN, posted.append, active_low=False)
    assert gpio.pull(PIN) == gpio.PUD_DOWN
    gpio.drive(PIN, gpio.HIGH)
    gpio.clock.advance(BOUNCE_MS)  # rpi-lgpio reports the edge once the line was stable
    assert posted == [PowerFailChanged(True, PIN)]


@settings(max_examples=80, deadline=None)
@given(
    steps=st.lists(st.tuples(st.sampled_from([0, 1]), st.floats(0, 50), st.booleans()), max_size=30)
)
def test_what_is_posted_follows_the_line(steps: list[tuple[int, float, bool]]) -> None:
    gpio = SimGPIO()
    posted: list[PowerFailChanged] = []
    ups = PowerFailInput(gpio, PIN, posted.append)  # active low, pulled up: not asserted
    for level, wait_ms, tick in steps:
        gpio.drive(PIN, level)
        gpio.clock.advance(wait_ms)
        if tick:
            ups.poll()
    ups.poll()
    states = [p.asserted for p in posted]
    assert all(a != b for a, b in zip(states, states[1:], strict=False))
    assert not states or states[0] is True
    final = gpio.input(PIN) == gpio.LOW
    assert (states[-1] if states else False) is final
    ups.close()
