"""Build the table's device drivers from a hardware profile.

Real or simulated is chosen by name in the profile (``gpio_backend = "sim"``, ``port = "sim"``),
never by an ``if`` in a table: the simulated GPIO is a twin of RPi.GPIO, so the real display and
button drivers run against it, and a simulated serial device sits on the far end of a
pseudo-terminal, so the real serial drivers read and write a real port.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from drivers.errors import BackendUnavailable
from drivers.gpio import BACKENDS, GpioApi


def build_devices(profile: Any, post: Callable[[object], None], state_dir: Path) -> dict[str, Any]:
    """Return the drivers the profile names, keyed ``gpio``, ``display``, ``buttons``,
    ``seat_lamps``, ``dealer_display``, ``shoe_open``, ``shoe_sim``, ``power_fail`` (absent when
    not fitted), and ``board`` (the board's sensors, started by the application), ``rtc``
    (where to look for the clock: class root and /dev), ``board_sim`` (a simulated board).

    ``shoe_open`` builds the serial shoe reader: the baccarat table opens it, because it knows
    from its journal which SEQ the shoe resumes from.
    """
    devices: dict[str, Any] = {"_closers": []}
    closers: list[Callable[[], object]] = devices["_closers"]
    needs_gpio = (
        profile.buttons is not None
        or profile.seat_lamps is not None
        or (profile.display is not None and profile.display.driver == "seven-segment")
        or profile.power_fail is not None
        or profile.door is not None
    )
    gpio: Any = None
    if needs_gpio:
        from drivers.gpio import ensure_bcm

        gpio = load_gpio(profile.gpio_backend, profile.gpio_sim_debounce)
        ensure_bcm(gpio)
        devices["gpio"] = gpio
        used = sorted(_pins_in_use(profile))
        closers.append(lambda: gpio.cleanup(used))

    disp = profile.display
    if disp is not None:
        if disp.driver == "seven-segment":
            from drivers.number_display import SevenSegmentDisplay

            devices["display"] = SevenSegmentDisplay(gpio, dict(disp.pins), disp.common)
        else:
            from drivers.serial_display import SerialLedDisplay

            port = disp.port
            if port == "sim":
                from drivers.sim.serial_display import SimLedDevice

                twin = SimLedDevice()
                devices["display_sim"] = twin
                closers.append(twin.close)
                port = twin.port
            # Opened lazily and reopened while missing: a display absent at boot is a fault
            # the loop is told of (DeviceLinkChanged), never a failed start.
            led = SerialLedDisplay(
                port, baud=disp.baud or 9600, ack=disp.ack is not False, post=post
            )
            led.start()
            devices["display"] = led
        closers.insert(0, devices["display"].close)

    if profile.buttons is not None:
        from drivers.buttons import DealerButtons

        buttons = DealerButtons(
            gpio,
            dict(profile.buttons.pins),
            post,
            bounce_ms=profile.buttons.bounce_ms,
            active_low=profile.buttons.active_low,
        )
        devices["buttons"] = buttons
        devices["button_pins"] = dict(profile.buttons.pins)
        devices["buttons_active_low"] = profile.buttons.active_low
        closers.insert(0, buttons.close)

    if profile.seat_lamps is not None:
        from drivers.seat_lamps import SeatLamps

        lamps = SeatLamps(
            gpio, dict(profile.seat_lamps.pins), active_high=profile.seat_lamps.active_high
        )
        devices["seat_lamps"] = lamps
        closers.insert(0, lamps.close)

    if profile.power_fail is not None:
        from drivers.power_fail import PowerFailInput

        ups = PowerFailInput(
            gpio, profile.power_fail.pin, post, active_low=profile.power_fail.active_low
        )
        devices["power_fail"] = ups
        closers.insert(0, ups.close)

    if profile.door is not None:
        from drivers.door import DoorInput

        door = DoorInput(
            gpio,
            profile.door.pin,
            post,
            active_low=profile.door.active_low,
            bounce_ms=profile.door.bounce_ms,
        )
        devices["door"] = door
        closers.insert(0, door.close)

    _build_board(profile.board, post, state_dir, devices, closers)

    dd = profile.dealer_display
    if dd is not None:
        if dd.driver == "sim":
            from drivers.sim.dealer_display import SimDealerDisplay

            devices["dealer_display"] = SimDealerDisplay()
        else:
            from drivers.dealer_display import SerialTextDisplay

            text = SerialTextDisplay(
                dd.port, baud=dd.baud or 9600, ack=dd.ack is not False, post=post
            )
            text.start()  # lazily, as the number display above
            devices["dealer_display"] = text
            closers.insert(0, text.close)

    shoe = profile.shoe
    if shoe is not None:
        url = shoe.port
        if shoe.port == "sim":
            from drivers.sim.shoe import SimShoe, SimShoeError

            # The simulated shoe outlives the controller process, as a real shoe does: its
            # state (cards, session, frames held) is kept in the state directory, so a
            # restarted controller finds the same powered-on shoe (docs/shoe-protocol.md).
            state_file = Path(state_dir) / "sim-shoe.json"
            try:
                sim = SimShoe(decks=shoe.sim_decks, seed=shoe.sim_seed, state_path=state_file)
            except SimShoeError:
                state_file.replace(state_file.with_suffix(".bad"))  # unreadable: a new shoe
                sim = SimShoe(decks=shoe.sim_decks, seed=shoe.sim_seed, state_path=state_file)
            url = sim.create_pty()
            devices["shoe_sim"] = sim
            closers.append(sim.stop)
        from drivers.serial_shoe import SerialShoe

        # Opened by the table, which knows from its journal where the shoe resumes.
        devices["shoe_open"] = functools.partial(
            SerialShoe, url, post, baud=shoe.baud, watchdog_s=shoe.watchdog_s
        )
    return devices


def _build_board(
    board: Any,
    post: Callable[[object], None],
    state_dir: Path,
    devices: dict[str, Any],
    closers: list[Callable[[], object]],
) -> None:
    """The board's sensors and clock (``[board]``): sysfs, or a simulated board kept in the
    state directory when a root is ``sim``."""
    from drivers.board import BoardMonitor, BoardSensors

    hwmon, rtc, dev = Path(board.hwmon), Path(board.rtc), Path("/dev")
    if "sim" in (board.hwmon, board.rtc):
        from drivers.sim.board import SimBoard

        sim = SimBoard(Path(state_dir) / "sim-board")
        devices["board_sim"] = sim
        if board.hwmon == "sim":
            hwmon = sim.hwmon_root
        if board.rtc == "sim":
            rtc, dev = sim.rtc_root, sim.dev_root
    monitor = BoardMonitor(
        BoardSensors(hwmon),
        post,
        poll_s=board.poll_s,
        throttle_mc=round(board.throttle_c * 1000),
    )
    devices["board"] = monitor
    devices["rtc"] = (rtc, dev)
    closers.insert(0, monitor.stop)


def load_gpio(backend: str, sim_debounce: str = "rpi-lgpio") -> GpioApi:
    """The GPIO backend the profile names: "rpi" (rpi-lgpio, the ``RPi.GPIO`` module) or "sim"
    (a fresh twin with ``sim_debounce``'s debounce: "rpi-lgpio", as the release, or "rpi-gpio")."""
    if backend == "sim":
        from drivers.sim.gpio import DEBOUNCE_MODES, SimGPIO

        for mode in DEBOUNCE_MODES:
            if mode == sim_debounce:
                return SimGPIO(debounce=mode)
        raise BackendUnavailable(
            f"unknown simulated GPIO debounce {sim_debounce!r}; expected one of {DEBOUNCE_MODES}"
        )
    if backend == "rpi":
        from drivers.gpio import load_rpi_gpio

        return load_rpi_gpio()
    raise BackendUnavailable(f"unknown GPIO backend {backend!r}; expected one of {BACKENDS}")


def _pins_in_use(profile: Any) -> set[int]:
    pins: set[int] = set()
    if profile.display is not None and profile.display.pins:
        pins.update(profile.display.pins.values())
    if profile.buttons is not None:
        pins.update(profile.buttons.pins.values())
    if profile.seat_lamps is not None:
        pins.update(profile.seat_lamps.pins.values())
    if profile.power_fail is not None:
        pins.add(profile.power_fail.pin)
    if profile.door is not None:
        pins.add(profile.door.pin)
    return pins


def close_devices(devices: dict[str, Any]) -> list[str]:
    """Close every driver in order, once: a second call closes nothing. Return the errors (never
    raise: shutting down)."""
    errors: list[str] = []
    closers: list[Callable[[], object]] = devices.pop("_closers", [])
    for closer in closers:
        try:
            closer()
        except Exception as exc:  # noqa: BLE001 - shutting down; report, keep closing
            errors.append(f"{getattr(closer, '__qualname__', closer)}: {exc}")
    return errors
