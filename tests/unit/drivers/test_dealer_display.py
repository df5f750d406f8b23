"""Dealer text display: validation, the serial protocol over a pty, the in-memory twin."""

from __future__ import annotations

import os
import queue
from collections.abc import Iterator
from pathlib import Path

import pytest

from drivers.dealer_display import DealerDisplay, SerialTextDisplay, check_lines
from drivers.errors import DeviceUnavailable, DisplayValueError
from drivers.serial_display import DeviceLinkChanged
from drivers.sim.dealer_display import SimDealerDisplay, SimTextDevice


@pytest.fixture
def twin() -> Iterator[SimTextDevice]:
    device = SimTextDevice()
    yield device
    device.close()


def test_check_lines_pads_to_two() -> None:
    assert check_lines([]) == ("", "")
    assert check_lines(["BANKER WINS"]) == ("BANKER WINS", "")
    assert check_lines(("P 7", "B 6")) == ("P 7", "B 6")
    assert check_lines(["x" * 20, "y" * 20]) == ("x" * 20, "y" * 20)


@pytest.mark.parametrize(
    "bad",
    ["BANKER", ["a", "b", "c"], ["x" * 21], ["a|b"], ["tab\there"], ["é"], [3], b"ab"],
)
def test_check_lines_refuses(bad: object) -> None:
    with pytest.raises(DisplayValueError):
        check_lines(bad)  # type: ignore[arg-type]


def test_serial_text_display_over_pty(twin: SimTextDevice) -> None:
    disp = SerialTextDisplay(twin.port, ack_timeout=2)
    disp.show(["PLAYER 8", "NATURAL"])
    assert twin.lines == ("PLAYER 8", "NATURAL")
    disp.show(["TIE"])
    assert twin.lines == ("TIE", "")
    disp.clear()
    assert twin.lines == ("", "")
    assert twin.received == ["SPLAYER 8|NATURAL", "STIE|", "X"]
    with pytest.raises(DisplayValueError):
        disp.show(["x" * 21])
    assert len(twin.received) == 3
    disp.close()


def test_exact_bytes_over_loop() -> None:
    disp = SerialTextDisplay("loop://", ack=False)
    disp.show(["A", "B"])
    disp.clear()
    port = disp._link._port
    port.timeout = 1
    assert port.read(9) == b"SA|B\r\nX\r\n"


def test_sim_dealer_display_records() -> None:
    sim = SimDealerDisplay()
    d: DealerDisplay = sim
    d.show(["BANKER 9"])
    d.clear()
    assert sim.history == [("BANKER 9", ""), ("", "")]
    with pytest.raises(DisplayValueError):
        d.show(["a", "b", "c"])
    assert sim.lines == ("", "")


def test_unplugged_and_plugged_back_the_display_is_reopened_and_shows_the_last_lines(
    tmp_path: Path,
) -> None:
    """A display whose adapter goes away (its pty closed: writes fail) is reported down once,
    reopened by the link's thread when its path leads to a device again (a udev name does),
    reported up, and sent the last lines asked for."""
    path = tmp_path / "tc-display"
    events: queue.SimpleQueue[object] = queue.SimpleQueue()
    first = SimTextDevice()
    os.symlink(first.port, path)
    disp = SerialTextDisplay(str(path), ack_timeout=2, post=events.put)
    disp.start()
    second: SimTextDevice | None = None
    try:
        disp.show(["PLACE YOUR BETS", "COUP 1"])
        assert first.lines == ("PLACE YOUR BETS", "COUP 1")
        first.close()  # unplugged
        path.unlink()
        with pytest.raises(DeviceUnavailable):
            disp.clear()  # the write fails: the table reports it
        down = events.get(timeout=10)
        assert isinstance(down, DeviceLinkChanged) and not down.up
        assert (down.device, down.port) == ("dealer_display", str(path))
        with pytest.raises(DeviceUnavailable, match="not connected"):
            disp.show(["NO MORE BETS", ""])  # while missing: at once; kept as what to show
        second = SimTextDevice()
        os.symlink(second.port, path)  # plugged back
        up = events.get(timeout=20)
        assert isinstance(up, DeviceLinkChanged) and up.up
        second.wait_for_lines(1, timeout=5)
        assert second.lines == ("NO MORE BETS", "")  # the last lines asked for
        assert events.empty()  # one down, one up: once per outage
    finally:
        disp.close()
        if second is not None:
            second.close()
