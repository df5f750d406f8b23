"""A serial display missing at start (its adapter unplugged, or late at boot) is a fault shown on
the console's ``status``, the monitor's view and in the journal (which the feed carries), never a
failed start; plugged in later (the simulated port's path appears, as a udev by-path name does),
it is reopened, the fault clears and the display shows what the table drives."""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.app import Application
from controller.config.profile import load_profile
from controller.events import Shutdown
from drivers.buttons import ButtonPressed
from drivers.sim.serial_display import LedState, SimLedDevice

WAIT_S = 20.0  # the display driver reopens after 0.5 s, doubling up to 10 s

PROFILE = """\
name = "late-display"
game = "paigow"
gpio_backend = "sim"

[console]
port = "none"

[devices.display]
driver = "serial-led"
port = "{port}"

[devices.buttons]
pins = {{ shuffled = 9, no_more_bets = 11, draw = 17, dealt = 27, hands_set = 22, settled = 8 }}

[rules]
jurisdiction = "NY"
start_mode = "rng"
"""


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {WAIT_S} s: {what}")
        time.sleep(0.05)


def _faults(app: Application) -> str:
    """What the console's ``status`` says under ``faults``."""
    status = app.call(app.status)
    assert isinstance(status, dict)
    return str(status["faults"])


def _rows(app: Application) -> list[tuple[str, dict[str, Any]]]:
    """Every journal row's kind and data (read on the loop thread)."""
    return app.call(lambda: [(e.kind, e.data) for e in app.journal.events()])  # type: ignore[return-value]


@pytest.fixture
def port_path(tmp_path: Path) -> Path:
    return tmp_path / "dev" / "tc-display"


@pytest.fixture
def app(tmp_path: Path, port_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Application]:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    port_path.parent.mkdir()
    profile = tmp_path / "late.toml"
    profile.write_text(PROFILE.format(port=port_path))
    application = Application(load_profile(profile), tmp_path / "state", console_port="none")
    yield application
    application.close()


def test_a_display_plugged_in_after_start_ends_working_and_the_fault_clears(
    app: Application, port_path: Path
) -> None:
    app.start()
    loop = threading.Thread(target=app.run, daemon=True)
    loop.start()
    twin: SimLedDevice | None = None
    try:
        _until(lambda: "display not connected" in _faults(app), "the fault raised")
        # What the technician reads names the device, its port and why (the errno's words, as
        # the kernel says them), and what to check; no internal name.
        fault = _faults(app)
        assert fault.startswith(f"display not connected on {port_path}")
        assert f"({os.strerror(errno.ENOENT)})" in fault
        assert "check its cable" in fault and "USB adapter" in fault
        assert "clears itself" in fault
        assert "_" not in fault.replace(str(port_path), "")
        assert app.publication.latest()[1]["devices_down"] == ["display"]  # the monitor's view
        assert loop.is_alive()  # never an exit

        twin = SimLedDevice()
        os.symlink(twin.port, port_path)  # the adapter is plugged in: its name appears
        _until(lambda: _faults(app) == "none", "the fault cleared")
        assert app.publication.latest()[1]["devices_down"] == []

        for button in ("shuffled", "no_more_bets", "draw"):
            app.post(ButtonPressed(button, time.monotonic_ns()))
        _until(lambda: any(k == "paigow.drawn" for k, _ in _rows(app)), "the draw")
        number = next(d for k, d in _rows(app) if k == "paigow.drawn")["record"]["number"]
        _until(lambda: twin is not None and twin.shown == LedState("digit", number), "shown")

        faults = [(k, d) for k, d in _rows(app) if k in ("fault.raised", "fault.cleared")]
        assert [k for k, _ in faults] == ["fault.raised", "fault.cleared"]
        assert all(d["device"] == "display" and d["port"] == str(port_path) for _, d in faults)
    finally:
        app.post(Shutdown("test"))
        loop.join(WAIT_S)
        if twin is not None:
            twin.close()
