"""Build the table's device drivers from a hardware profile.

Real or simulated is chosen by name in the profile (``gpio_backend = "sim"``, ``port = "sim"``),
never by an ``if`` in a table: the simulated GPIO is a twin of RPi.GPIO, so the real display and
button drivers run against it, and a simulated serial device sits on the far end of a
pseudo-terminal, so the real serial drivers read and write a real port.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from controller.tables.kernel.press import ButtonWiring, SimPins
from controller.tables.kernel.sim import SimControls, SimShoeControls
from controller.tables.table import Devices, OpenShoe
from drivers.dealer_display import DealerDisplay
from drivers.errors import BackendUnavailable
from drivers.gpio import BACKENDS, GpioApi
from drivers.number_display import NumberDisplay
from drivers.seat_lamps import SeatLamps

if TYPE_CHECKING:
    from controller.config.profile import BoardSettings, Profile
    from drivers.board import BoardMonitor
    from drivers.buttons import DealerButtons
    from drivers.door import DoorInput
    from drivers.power_fail import PowerFailInput
    from drivers.sim.board import SimBoard


@dataclass(frozen=True)
class BuiltDevices:
    """What the wiring built from the profile: the table's :class:`Devices`, the dealer
    buttons (the loop polls them) and how to close it all, in order, once."""

    table: Devices
    buttons: DealerButtons | None = None
    #: The GPIO backend (None: no GPIO device in the profile), for tools and benches.
    gpio: GpioApi | None = None
    #: The UPS's power-fail input (the loop polls it), when fitted.
    power_fail: PowerFailInput | None = None
    #: The enclosure door's switch (the loop polls it), when fitted.
    door: DoorInput | None = None
    #: The board's sensors (started by the application), where to look for the clock (class
    #: root and /dev), and the simulated board when a root is ``sim``.
    board: BoardMonitor | None = None
    rtc: tuple[Path, Path] | None = None
    board_sim: SimBoard | None = None
    closers: list[Callable[[], object]] = field(default_factory=list, compare=False)


def build_devices(
    profile: Profile, post: Callable[[object], None], state_dir: Path
) -> BuiltDevices:
    """Return the drivers the profile names (None when not fitted) and the simulator's controls.

    ``open_shoe`` builds the serial shoe reader: the baccarat table opens it, because it knows
    from its journal which SEQ the shoe resumes from.
    """
    closers: list[Callable[[], object]] = []
    needs_gpio = (
        profile.buttons is not None
        or profile.seat_lamps is not None
        or (profile.display is not None and profile.display.driver == "seven-segment")
        or profile.power_fail is not None
        or profile.door is not None
    )
    gpio: GpioApi | None = None
    sim_gpio: SimPins | None = None
    if needs_gpio:
        from drivers.gpio import ensure_bcm

        gpio = load_gpio(profile.gpio_backend, profile.gpio_sim_debounce)
        if profile.gpio_backend == "sim":
            from drivers.sim.gpio import SimGPIO

            assert isinstance(gpio, SimGPIO)
            sim_gpio = gpio
        ensure_bcm(gpio)
        used = sorted(_pins_in_use(profile))
        closers.append(lambda: gpio.cleanup(used))

    display: NumberDisplay | None = None
    disp = profile.display
    if disp is not None:
        if disp.driver == "seven-segment":
            from drivers.number_display import SevenSegmentDisplay

            # the profile reader requires the pins and the common for this driver
            assert gpio is not None and disp.pins is not None and disp.common is not None
            display = SevenSegmentDisplay(gpio, dict(disp.pins), disp.common)
        else:
            from drivers.serial_display import SerialLedDisplay

            port = disp.port
            assert port is not None  # the profile reader requires it for a serial display
            if port == "sim":
                from drivers.sim.serial_display import SimLedDevice

                twin = SimLedDevice()
                closers.append(twin.close)
                port = twin.port
            # Opened lazily and reopened while missing: a display absent at boot is a fault
            # the loop is told of (DeviceLinkChanged), never a failed start.
            led = SerialLedDisplay(
                port, baud=disp.baud or 9600, ack=disp.ack is not False, post=post
            )
            led.start()
            display = led
        closers.insert(0, display.close)

    buttons: DealerButtons | None = None
    wiring: ButtonWiring | None = None
    if profile.buttons is not None:
        from drivers.buttons import DealerButtons

        assert gpio is not None
        buttons = DealerButtons(
            gpio,
            dict(profile.buttons.pins),
            post,
            bounce_ms=profile.buttons.bounce_ms,
            active_low=profile.buttons.active_low,
        )
        wiring = ButtonWiring(
            dict(profile.buttons.pins),
            active_low=profile.buttons.active_low,
            bounce_ms=profile.buttons.bounce_ms,
        )
        closers.insert(0, buttons.close)

    lamps: SeatLamps | None = None
    if profile.seat_lamps is not None:
        from drivers.seat_lamps import SeatLamps

        assert gpio is not None
        lamps = SeatLamps(
            gpio, dict(profile.seat_lamps.pins), active_high=profile.seat_lamps.active_high
        )
        closers.insert(0, lamps.close)

    ups: PowerFailInput | None = None
    if profile.power_fail is not None:
        from drivers.power_fail import PowerFailInput

        assert gpio is not None
        ups = PowerFailInput(
            gpio, profile.power_fail.pin, post, active_low=profile.power_fail.active_low
        )
        closers.insert(0, ups.close)

    door: DoorInput | None = None
    if profile.door is not None:
        from drivers.door import DoorInput

        assert gpio is not None
        if sim_gpio is not None:
            # the simulated switch is wired and the door shut at power-up, as on a table in
            # service (an unwired pin reads open: the pull holds it there); `sim door open`
            # opens it
            sim_gpio.drive(profile.door.pin, 1 if profile.door.active_low else 0)
        door = DoorInput(
            gpio,
            profile.door.pin,
            post,
            active_low=profile.door.active_low,
            bounce_ms=profile.door.bounce_ms,
        )
        closers.insert(0, door.close)

    board = _build_board(profile.board, post, state_dir, closers)

    dealer_display: DealerDisplay | None = None
    dd = profile.dealer_display
    if dd is not None:
        if dd.driver == "sim":
            from drivers.sim.dealer_display import SimDealerDisplay

            dealer_display = SimDealerDisplay()
        else:
            from drivers.dealer_display import SerialTextDisplay

            assert dd.port is not None  # the profile reader requires it for a serial display

            text = SerialTextDisplay(
                dd.port, baud=dd.baud or 9600, ack=dd.ack is not False, post=post
            )
            text.start()  # lazily, as the number display above
            dealer_display = text
            closers.insert(0, text.close)

    open_shoe: OpenShoe | None = None
    sim_shoe: SimShoeControls | None = None
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
            sim_shoe = sim
            closers.append(sim.stop)
        from drivers.serial_shoe import SerialShoe

        # Opened by the table, which knows from its journal where the shoe resumes.
        open_shoe = functools.partial(
            SerialShoe, url, post, baud=shoe.baud, watchdog_s=shoe.watchdog_s
        )
    table = Devices(
        display=display,
        seat_lamps=lamps,
        dealer_display=dealer_display,
        open_shoe=open_shoe,
        sim=SimControls(
            gpio=sim_gpio if wiring is not None else None, buttons=wiring, shoe=sim_shoe
        ),
    )
    return BuiltDevices(
        table,
        buttons=buttons,
        gpio=gpio,
        power_fail=ups,
        door=door,
        board=board.monitor,
        rtc=board.rtc,
        board_sim=board.sim,
        closers=closers,
    )


@dataclass(frozen=True)
class _Board:
    monitor: BoardMonitor
    rtc: tuple[Path, Path]
    sim: SimBoard | None


def _build_board(
    board: BoardSettings,
    post: Callable[[object], None],
    state_dir: Path,
    closers: list[Callable[[], object]],
) -> _Board:
    """The board's sensors and clock (``[board]``): sysfs, or a simulated board kept in the
    state directory when a root is ``sim``."""
    from drivers.board import BoardMonitor, BoardSensors

    hwmon, rtc, dev = Path(board.hwmon), Path(board.rtc), Path("/dev")
    sim: SimBoard | None = None
    if "sim" in (board.hwmon, board.rtc):
        from drivers.sim.board import SimBoard

        sim = SimBoard(Path(state_dir) / "sim-board")
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
    closers.insert(0, monitor.stop)
    return _Board(monitor, (rtc, dev), sim)


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


def _pins_in_use(profile: Profile) -> set[int]:
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


def close_devices(devices: BuiltDevices) -> list[str]:
    """Close every driver in order, once: a second call closes nothing. Return the errors (never
    raise: shutting down)."""
    errors: list[str] = []
    closers = list(devices.closers)
    devices.closers.clear()
    for closer in closers:
        try:
            closer()
        except Exception as exc:  # noqa: BLE001 - shutting down; report, keep closing
            errors.append(f"{getattr(closer, '__qualname__', closer)}: {exc}")
    return errors
