"""A serial LED number display, and the line link it shares with the dealer's text display.

Protocol (docs/drivers-display-buttons.md): ASCII lines ending CR LF, host to display::

    D<n>   show the number n, one digit 1-8      B   blank
    F      show the fault pattern                T   lamp test (every segment lit)

The display answers each line with ``OK`` or ``ERR <reason>`` (CR LF).  Waiting for that answer
(``ack=True``, the default) is what tells the controller a dead or unplugged display from a
working one; ``ack=False`` is for ``loop://`` and write-only hardware.  Ports are opened with
pySerial ``serial_for_url`` so ``loop://``, ``spy://`` and pty paths work unchanged.
"""

from __future__ import annotations

import serial

from drivers.errors import DeviceTimeout, DeviceUnavailable, ProtocolError
from drivers.number_display import check_number

__all__ = ["SerialLedDisplay", "SerialLineLink", "encode_line"]

_MAX_LINE = 64  # longest frame either protocol sends, with margin


def encode_line(text: str) -> bytes:
    """Frame one command: printable ASCII plus CR LF; anything else is a ProtocolError."""
    if not text or len(text) > _MAX_LINE or not all(" " <= ch <= "~" for ch in text):
        raise ProtocolError(f"a command is 1-{_MAX_LINE} printable ASCII characters: {text!r}")
    return text.encode("ascii") + b"\r\n"


class SerialLineLink:
    """One serial port carrying CR LF command lines, each optionally acknowledged."""

    def __init__(
        self,
        port_url: str,
        baud: int = 9600,
        write_timeout: float = 0.5,
        ack: bool = True,
        ack_timeout: float = 0.5,
    ) -> None:
        if write_timeout <= 0 or ack_timeout <= 0:
            raise ValueError("serial timeouts must be positive: a port never blocks forever")
        self._url = port_url
        self._ack = ack
        try:
            self._port = serial.serial_for_url(
                port_url, baudrate=baud, timeout=ack_timeout, write_timeout=write_timeout
            )
        except (serial.SerialException, ValueError) as exc:
            raise DeviceUnavailable(f"cannot open display port {port_url!r}: {exc}") from exc

    def command(self, text: str) -> None:
        """Send one line; with ``ack``, wait for ``OK`` (ERR -> ProtocolError, none -> timeout)."""
        frame = encode_line(text)
        if not self._port.is_open:
            raise DeviceUnavailable(f"display port {self._url!r} is closed")
        try:
            if self._ack:
                self._port.reset_input_buffer()  # drop a late answer to an earlier command
            self._port.write(frame)
            self._port.flush()
            if not self._ack:
                return
            reply = self._port.read_until(b"\n", _MAX_LINE)
        except serial.SerialTimeoutException as exc:
            raise DeviceTimeout(f"write to display {self._url!r} timed out") from exc
        except serial.SerialException as exc:
            raise DeviceUnavailable(f"display port {self._url!r} failed: {exc}") from exc
        if not reply.endswith(b"\n"):
            raise DeviceTimeout(f"display {self._url!r} did not answer {text!r} in time")
        answer = reply.rstrip(b"\r\n")
        if answer == b"OK":
            return
        if answer.startswith(b"ERR"):
            raise ProtocolError(f"display {self._url!r} refused {text!r}: {answer!r}")
        raise ProtocolError(f"display {self._url!r} sent {answer!r} in answer to {text!r}")

    def close(self) -> None:
        """Close the port (idempotent)."""
        self._port.close()

    @property
    def is_open(self) -> bool:
        """Whether the port is open."""
        return bool(self._port.is_open)


class SerialLedDisplay:
    """A ``NumberDisplay`` on a serial LED display speaking the D/B/F/T line protocol."""

    def __init__(
        self,
        port_url: str,
        baud: int = 9600,
        write_timeout: float = 0.5,
        ack: bool = True,
        ack_timeout: float = 0.5,
    ) -> None:
        self._link = SerialLineLink(port_url, baud, write_timeout, ack, ack_timeout)

    def show(self, n: int) -> None:
        """Show the number ``n`` (1-8)."""
        self._link.command(f"D{check_number(n)}")

    def blank(self) -> None:
        """Show nothing."""
        self._link.command("B")

    def fault(self) -> None:
        """Show the display's fault pattern."""
        self._link.command("F")

    def lamp_test(self) -> None:
        """Light every segment until the next command."""
        self._link.command("T")

    def close(self) -> None:
        """Blank (best effort: the port may already be gone) and close the port."""
        if not self._link.is_open:
            return
        try:
            self.blank()
        except (DeviceUnavailable, ProtocolError):
            pass  # closing anyway; the next power-up lamp test shows the state
        finally:
            self._link.close()
