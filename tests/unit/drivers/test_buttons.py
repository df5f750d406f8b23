"""DealerButtons posts exactly one event per debounced press, from the GPIO thread only.

Every test runs under both debounce behaviours of the ``RPi.GPIO`` module's providers
(drivers/sim/gpio.py): rpi-lgpio's, which the release ships (an edge is reported once the line
has been stable for the bouncetime: rpi-lgpio docs/differences.rst, "Debounce"), and RPi.GPIO's
(the first edge at once, then a lockout). Where they differ, the expected outcome of each is
stated from that document.
"""

from __future__ import annotations

import dataclasses
import queue
import threading

import pytest

from drivers.buttons import ButtonPressed, DealerButtons
from drivers.errors import PinError
from drivers.sim.gpio import DEBOUNCE_MODES, DebounceMode, SimGPIO

PINS = {"draw": 5, "deal": 6}
MS = 1_000_000


@pytest.fixture(params=DEBOUNCE_MODES)
def mode(request: pytest.FixtureRequest) -> DebounceMode:
    value: DebounceMode = request.param
    return value


def delay(mode: DebounceMode, bounce_ms: int = 30) -> int:
    """How long after the line settles a press is reported (ns)."""
    return bounce_ms * MS if mode == "rpi-lgpio" else 0


def make(
    mode: DebounceMode, bounce_ms: int = 30
) -> tuple[SimGPIO, DealerButtons, list[ButtonPressed]]:
    gpio = SimGPIO(debounce=mode)
    events: list[ButtonPressed] = []
    buttons = DealerButtons(
        gpio, PINS, events.append, bounce_ms=bounce_ms, clock=gpio.clock.monotonic_ns
    )
    return gpio, buttons, events


def press(gpio: SimGPIO, pin: int, hold_ms: float = 100) -> None:
    gpio.drive(pin, 0)
    gpio.clock.advance(hold_ms)
    gpio.drive(pin, 1)


def test_wiring_is_pull_up_input_with_edge_detect(mode: DebounceMode) -> None:
    gpio, _, events = make(mode)
    for pin in PINS.values():
        assert gpio.function(pin) == gpio.IN
        assert gpio.pull(pin) == gpio.PUD_UP
        assert gpio.has_edge_detect(pin)
        assert gpio.level(pin) == 1  # idle high
    assert events == []


def test_one_press_posts_exactly_one_event_with_time(mode: DebounceMode) -> None:
    gpio, _, events = make(mode)
    t0 = gpio.clock.monotonic_ns()
    press(gpio, 5)
    # RPi.GPIO: on the first edge; rpi-lgpio: once the line has been low for bounce_ms
    assert events == [ButtonPressed("draw", t0 + delay(mode))]


def test_bouncing_contact_posts_one(mode: DebounceMode) -> None:
    gpio, _, events = make(mode, bounce_ms=30)
    gpio.bounce(5, 0, transitions=7, interval_ms=2)  # 12 ms of chatter on press
    gpio.clock.advance(150)
    gpio.bounce(5, 1, transitions=7, interval_ms=2)  # and on release
    gpio.clock.advance(150)
    assert [e.name for e in events] == ["draw"]


def test_two_presses_further_apart_than_bounce_post_two(mode: DebounceMode) -> None:
    gpio, _, events = make(mode, bounce_ms=30)
    press(gpio, 5, hold_ms=80)
    gpio.clock.advance(80)
    press(gpio, 5, hold_ms=80)
    assert [e.name for e in events] == ["draw", "draw"]
    assert events[1].monotonic_ns - events[0].monotonic_ns == 160_000_000


def test_buttons_are_independent(mode: DebounceMode) -> None:
    gpio, _, events = make(mode)
    gpio.drive(5, 0)
    gpio.drive(6, 0)  # same instant, other pin: not locked out
    gpio.clock.advance(30)
    assert [e.name for e in events] == ["draw", "deal"]


def test_button_held_at_boot_is_not_a_press(mode: DebounceMode) -> None:
    gpio = SimGPIO(debounce=mode)
    gpio.drive(5, 0)
    events: list[ButtonPressed] = []
    buttons = DealerButtons(gpio, PINS, events.append, clock=gpio.clock.monotonic_ns)
    assert buttons.is_held("draw")
    gpio.clock.advance(100)
    gpio.drive(5, 1)
    gpio.clock.advance(30)
    assert events == [] and not buttons.is_held("draw")


def test_noise_while_held_invents_no_press(mode: DebounceMode) -> None:
    # A glitch read as a release: the driver may think the button is up, but posts nothing
    # until a real new press.
    gpio, _, events = make(mode)
    gpio.drive(5, 0)
    gpio.clock.advance(200)
    gpio.drive(5, 1)  # 0.1 ms glitch high while held
    gpio.clock.advance(0.1)
    gpio.drive(5, 0)
    gpio.clock.advance(200)
    gpio.drive(5, 1)  # real release
    assert len(events) == 1
    gpio.clock.advance(200)
    press(gpio, 5)
    assert len(events) == 2


def test_a_tap_shorter_than_bounce_costs_one_press_never_invents(mode: DebounceMode) -> None:
    # RPi.GPIO: the tap posts, its release edge is lost in the lockout, so the next press only
    # re-arms. rpi-lgpio: the tap never stays low for bounce_ms, so it is not reported at all.
    gpio, _, events = make(mode, bounce_ms=30)
    t_tap = gpio.clock.monotonic_ns()
    press(gpio, 5, hold_ms=10)
    gpio.clock.advance(200)
    t_second = gpio.clock.monotonic_ns()
    press(gpio, 5)
    gpio.clock.advance(200)
    t_third = gpio.clock.monotonic_ns()
    press(gpio, 5)
    gpio.clock.advance(200)
    expected = {
        "rpi-gpio": [t_tap, t_third],
        "rpi-lgpio": [t_second + 30 * MS, t_third + 30 * MS],
    }
    assert [e.monotonic_ns for e in events] == expected[mode]


def test_poll_rearms_after_a_missed_release_so_the_next_press_posts(mode: DebounceMode) -> None:
    # The loop's tick calls poll(): a lost release edge costs no press at all.
    gpio, buttons, events = make(mode, bounce_ms=30)
    press(gpio, 5, hold_ms=10)
    # RPi.GPIO: the release edge falls inside the bounce lockout: lost. rpi-lgpio: the tap is
    # dropped whole, the button never held.
    assert buttons.is_held("draw") == (mode == "rpi-gpio")
    gpio.clock.advance(200)
    buttons.poll()
    assert not buttons.is_held("draw")
    press(gpio, 5)
    gpio.clock.advance(200)
    taps = 1 if mode == "rpi-gpio" else 0
    assert [e.name for e in events] == ["draw"] * (taps + 1)


def test_poll_never_releases_a_held_button_or_one_mid_bounce(mode: DebounceMode) -> None:
    gpio, buttons, events = make(mode, bounce_ms=30)
    gpio.drive(5, 0)
    gpio.clock.advance(500)
    buttons.poll()  # still held down: stays held, nothing posted
    assert buttons.is_held("draw") and len(events) == 1
    gpio.drive(5, 1)
    gpio.clock.advance(200)
    if mode == "rpi-gpio":
        press(gpio, 5, hold_ms=10)  # second press; its release edge is lost in the lockout
        assert len(events) == 2
        gpio.clock.advance(20)  # 30 ms after the last edge: could still be bouncing
    else:
        press(gpio, 5, hold_ms=40)  # reported 30 ms into it; the release 30 ms after it ends
        assert len(events) == 2
        gpio.clock.advance(20)  # its release is not reported yet: still held
    buttons.poll()
    assert buttons.is_held("draw")
    gpio.clock.advance(100)
    buttons.poll()
    assert not buttons.is_held("draw")
    assert len(events) == 2  # poll itself never posts


def test_callback_only_posts_on_the_gpio_thread(mode: DebounceMode) -> None:
    gpio = SimGPIO(debounce=mode)
    q: queue.Queue[tuple[ButtonPressed, str]] = queue.Queue()

    def post(ev: ButtonPressed) -> None:
        q.put((ev, threading.current_thread().name))

    DealerButtons(gpio, PINS, post, clock=gpio.clock.monotonic_ns)

    def edge() -> None:  # rpi-lgpio reports once the line has been stable: on the clock
        gpio.drive(6, 0)
        gpio.clock.advance(30)

    edge_thread = threading.Thread(target=edge, name="gpio-events")
    edge_thread.start()
    edge_thread.join(timeout=5)
    assert not edge_thread.is_alive()
    ev, thread_name = q.get(timeout=5)
    assert ev.name == "deal" and thread_name == "gpio-events"
    assert q.empty()
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.name = "draw"  # type: ignore[misc]


def test_active_high_wiring_uses_pull_down(mode: DebounceMode) -> None:
    gpio = SimGPIO(debounce=mode)
    events: list[ButtonPressed] = []
    DealerButtons(gpio, {"draw": 5}, events.append, active_low=False, clock=gpio.clock.monotonic_ns)
    assert gpio.pull(5) == gpio.PUD_DOWN
    gpio.drive(5, 1)
    gpio.clock.advance(30)
    assert [e.name for e in events] == ["draw"]


def test_close_stops_events_and_releases_pins(mode: DebounceMode) -> None:
    gpio, buttons, events = make(mode)
    buttons.close()
    assert not gpio.has_edge_detect(5) and gpio.function(5) is None
    gpio.drive(5, 0)
    gpio.clock.advance(100)
    assert events == []


@pytest.mark.parametrize(
    "pins, bounce",
    [
        ({"draw": 5, "deal": 5}, 30),
        ({"not a name": 5}, 30),
        ({"draw": 40}, 30),
        ({"draw": 5}, 0),
        ({}, 30),
    ],
)
def test_bad_configuration(pins: dict[str, int], bounce: int) -> None:
    with pytest.raises(PinError):
        DealerButtons(SimGPIO(), pins, lambda e: None, bounce_ms=bounce)
