"""SerialLedDisplay over loop:// (exact bytes) and a real pty pair to the twin device."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from drivers.errors import DeviceTimeout, DeviceUnavailable, DisplayValueError, ProtocolError
from drivers.number_display import NumberDisplay
from drivers.serial_display import SerialLedDisplay, SerialLineLink, encode_line
from drivers.sim.serial_display import LedState, SimLedDevice


@pytest.fixture
def twin() -> Iterator[SimLedDevice]:
    device = SimLedDevice()
    yield device
    device.close()


def test_exact_bytes_on_the_wire_over_loop() -> None:
    disp = SerialLedDisplay("loop://", ack=False)
    disp.show(7)  # opens the port (lazily: never at construction)
    port = disp._link._port  # test reads back the loop; production never does
    disp.blank()
    disp.fault()
    disp.lamp_test()
    port.timeout = 1
    assert port.read(13) == b"D7\r\nB\r\nF\r\nT\r\n"


def test_twin_shows_what_driver_sends_over_pty(twin: SimLedDevice) -> None:
    disp = SerialLedDisplay(twin.port, ack_timeout=2)
    disp.lamp_test()
    assert twin.shown == LedState("lamp_test")
    for n in range(1, 9):
        disp.show(n)
        assert twin.shown == LedState("digit", n)  # acked: already applied, no wait needed
    disp.fault()
    assert twin.shown == LedState("fault")
    disp.blank()
    assert twin.received == ["T", *(f"D{n}" for n in range(1, 9)), "F", "B"]
    disp.close()
    assert twin.shown == LedState("blank")


def test_bad_numbers_never_reach_the_wire(twin: SimLedDevice) -> None:
    disp: NumberDisplay = SerialLedDisplay(twin.port, ack_timeout=2)
    for bad in (0, 9, True, "3"):
        with pytest.raises(DisplayValueError):
            disp.show(bad)  # type: ignore[arg-type]
    disp.show(2)
    assert twin.received == ["D2"]
    disp.close()


def test_silent_display_times_out(twin: SimLedDevice) -> None:
    twin.silent = True
    disp = SerialLedDisplay(twin.port, ack_timeout=0.2)
    with pytest.raises(DeviceTimeout, match="did not answer"):
        disp.show(5)
    twin.wait_for_lines(1, timeout=2)
    disp._link.close()


def test_device_error_answer_is_protocol_error(twin: SimLedDevice) -> None:
    link = SerialLineLink(twin.port, ack_timeout=2)
    with pytest.raises(ProtocolError, match="refused"):
        link.command("D9")  # the twin's own parser refuses it
    link.close()


def test_echoing_port_is_not_mistaken_for_ack() -> None:
    disp = SerialLedDisplay("loop://", ack_timeout=0.2)
    with pytest.raises(ProtocolError, match="in answer to"):
        disp.show(1)


def test_unopenable_port_is_device_unavailable_at_first_use_not_at_construction() -> None:
    missing = SerialLedDisplay("/dev/nonexistent-display-port")  # a missing display: no error
    with pytest.raises(DeviceUnavailable, match="cannot open"):
        missing.show(1)
    with pytest.raises(DeviceUnavailable):
        SerialLedDisplay("nosuchscheme://x").blank()


def test_encode_line_refuses_non_printable() -> None:
    assert encode_line("D3") == b"D3\r\n"
    for bad in ("", "D\r3", "é", "x" * 65):
        with pytest.raises(ProtocolError):
            encode_line(bad)


def test_closed_display_is_unavailable() -> None:
    disp = SerialLedDisplay("loop://", ack=False)
    disp.close()
    with pytest.raises(DeviceUnavailable):
        disp.show(1)
    disp.close()


def test_timeouts_must_be_positive() -> None:
    with pytest.raises(ValueError):
        SerialLedDisplay("loop://", write_timeout=0)
