"""A serial LED number display, and the line link it shares with the dealer's text display.

Protocol (docs/drivers-display-buttons.md): ASCII lines ending CR LF, host to display::

    D<n>   show the number n, one digit 1-8      B   blank
    F      show the fault pattern                T   lamp test (every segment lit)

The display answers each line with ``OK`` or ``ERR <reason>`` (CR LF).  Waiting for that answer
(``ack=True``, the default) is what tells the controller a dead or unplugged display from a
working one; ``ack=False`` is for ``loop://`` and write-only hardware.  Ports are opened with
pySerial ``serial_for_url`` so ``loop://``, ``spy://`` and pty paths work unchanged, lazily, and
reopened with back-off while missing (:class:`SerialLineLink`).
"""

from __future__ import annotations

import os
import termios
import threading
import time
from collections.abc import Callable
from typing import NamedTuple

import serial

from drivers.errors import DeviceTimeout, DeviceUnavailable, DriverError, ProtocolError
from drivers.number_display import check_number

__all__ = [
    "REOPEN_FIRST_S",
    "REOPEN_MAX_S",
    "DeviceLinkChanged",
    "SerialLedDisplay",
    "SerialLineLink",
    "encode_line",
]

_MAX_LINE = 64  # longest frame either protocol sends, with margin
#: A lost or missing port is tried again after this long, the wait doubling each failure ...
REOPEN_FIRST_S = 0.5
#: ... up to this (a display plugged in is found within this many seconds).
REOPEN_MAX_S = 10.0


def encode_line(text: str) -> bytes:
    """Frame one command: printable ASCII plus CR LF; anything else is a ProtocolError."""
    if not text or len(text) > _MAX_LINE or not all(" " <= ch <= "~" for ch in text):
        raise ProtocolError(f"a command is 1-{_MAX_LINE} printable ASCII characters: {text!r}")
    return text.encode("ascii") + b"\r\n"


class DeviceLinkChanged(NamedTuple):
    """A serial device's port opened again (``up``) or was lost: posted to the controller's
    loop by :class:`SerialLineLink` (from its reopening thread, or from the command that found
    the port gone). ``device`` is the profile's name of it (``display``, ``dealer_display``)."""

    device: str
    port: str
    up: bool
    reason: str
    monotonic_ns: int


class SerialLineLink:
    """One serial port carrying CR LF command lines, each optionally acknowledged.

    Opened lazily: never at construction, so a display missing or late at boot stops nothing.
    :meth:`start` tries once and starts a thread that, while the port is closed (never opened,
    or lost: a write or read that fails, a USB adapter unplugged), reopens it after
    ``reopen_first_s``, doubling up to ``reopen_max_s``, as the shoe's reader does
    (drivers/serial_shoe.py). Each change is posted as a :class:`DeviceLinkChanged`: down once
    per outage, up when it reopens. A reopened display is sent the last command again, so it
    shows what the table last asked for. Without :meth:`start` (tools, tests), the first command
    opens the port and a failure is only raised.
    """

    def __init__(
        self,
        port_url: str,
        baud: int = 9600,
        write_timeout: float = 0.5,
        ack: bool = True,
        ack_timeout: float = 0.5,
        *,
        device: str = "display",
        post: Callable[[object], None] | None = None,
        reopen_first_s: float = REOPEN_FIRST_S,
        reopen_max_s: float = REOPEN_MAX_S,
    ) -> None:
        if write_timeout <= 0 or ack_timeout <= 0:
            raise ValueError("serial timeouts must be positive: a port never blocks forever")
        if reopen_first_s <= 0 or reopen_max_s <= 0:
            raise ValueError("reopen delays must be positive")
        self._url = port_url
        self._baud = baud
        self._write_timeout = write_timeout
        self._ack = ack
        self._ack_timeout = ack_timeout
        self._device = device
        self._post = post
        self._reopen_first = reopen_first_s
        self._reopen_max = max(reopen_max_s, reopen_first_s)
        # The port is shared by the loop thread's commands and the reopening thread.
        self._lock = threading.Lock()
        self._port: serial.Serial | None = None
        self._wanted: str | None = None  # the last command: what the device should show
        self._down_reported = False
        self._closed = False
        self._stop = threading.Event()
        self._lost = threading.Event()  # wakes the reopening thread
        self._thread: threading.Thread | None = None
        #: Times the port was opened again after it had been closed or missing.
        self.reopens = 0

    # -- the controller's side ----------------------------------------------------------------

    def start(self) -> None:
        """Try to open the port now, then keep it open from a thread of its own."""
        if self._thread is not None:
            raise DriverError(f"{self._device} link already started")
        self._lost.set()  # the thread's first turn: open, unless the try below did
        with self._lock:
            self._try_open()
        self._thread = threading.Thread(
            target=self._run, name=f"{self._device}:{self._url}", daemon=True
        )
        self._thread.start()

    def command(self, text: str) -> None:
        """Send one line; with ``ack``, wait for ``OK`` (ERR -> ProtocolError, none -> timeout).
        A port that is not open is DeviceUnavailable at once (the thread is reopening it)."""
        frame = encode_line(text)
        with self._lock:
            if self._closed:
                raise DeviceUnavailable(f"{self._device} port {self._url!r} is closed")
            self._wanted = text
            if self._port is None and self._thread is None:
                if not self._try_open():
                    raise DeviceUnavailable(f"cannot open {self._device} port {self._url!r}")
            if self._port is None:
                raise DeviceUnavailable(
                    f"{self._device} port {self._url!r} is not connected (reopening)"
                )
            self._exchange(frame, text)

    def close(self) -> None:
        """Stop reopening and close the port (idempotent)."""
        self._stop.set()
        self._lost.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        with self._lock:
            self._closed = True
            self._close_port()

    @property
    def is_open(self) -> bool:
        """Whether the port is open now."""
        return self._port is not None

    # -- the port, under the lock -----------------------------------------------------------

    def _try_open(self) -> bool:
        """Open the port; on a reopen send the last command again. True when it is open."""
        try:
            port = serial.serial_for_url(
                self._url,
                baudrate=self._baud,
                timeout=self._ack_timeout,
                write_timeout=self._write_timeout,
            )
        except (serial.SerialException, OSError, ValueError) as exc:
            # pySerial repeats the path and the errno in its text: the errno's words suffice
            errno = exc.errno if isinstance(exc, OSError) else None
            self._report(False, os.strerror(errno) if errno else f"cannot open: {exc}")
            return False
        self._port = port
        if self._down_reported:
            self.reopens += 1
            if self._wanted is not None:
                try:
                    self._exchange(encode_line(self._wanted), self._wanted)
                except DeviceTimeout:
                    pass  # the adapter is back, the display is silent: the next command says so
                except DeviceUnavailable:
                    return False  # lost again (reported by _exchange)
                except ProtocolError:
                    pass  # it answered: the table's next command reports what it says
            self._report(True, "opened")
        return True

    def _exchange(self, frame: bytes, text: str) -> None:
        port = self._port
        assert port is not None  # the callers hold the lock and checked it
        try:
            if self._ack:
                port.reset_input_buffer()  # drop a late answer to an earlier command
            port.write(frame)
            port.flush()
            if not self._ack:
                return
            reply = port.read_until(b"\n", _MAX_LINE)
        except serial.SerialTimeoutException as exc:
            raise DeviceTimeout(f"write to {self._device} {self._url!r} timed out") from exc
        except (serial.SerialException, OSError, termios.error) as exc:
            # the device went away (a USB adapter unplugged: termios reports EIO as its own
            # error on a flush): closed, reopened by the thread
            reason = f"{self._device} port {self._url!r} failed: {exc}"
            self._close_port()
            self._report(False, reason)
            raise DeviceUnavailable(reason) from exc
        if not reply.endswith(b"\n"):
            raise DeviceTimeout(f"{self._device} {self._url!r} did not answer {text!r} in time")
        answer = reply.rstrip(b"\r\n")
        if answer == b"OK":
            return
        if answer.startswith(b"ERR"):
            raise ProtocolError(f"{self._device} {self._url!r} refused {text!r}: {answer!r}")
        raise ProtocolError(f"{self._device} {self._url!r} sent {answer!r} in answer to {text!r}")

    def _close_port(self) -> None:
        port, self._port = self._port, None
        if port is not None:
            try:
                port.close()
            except (serial.SerialException, OSError):
                pass  # the device is already gone; nothing left to release
            self._lost.set()

    def _report(self, up: bool, reason: str) -> None:
        """Post a change: down once per outage, up only after a down."""
        if up == (not self._down_reported):
            return
        self._down_reported = not up
        if self._post is not None:
            try:
                self._post(
                    DeviceLinkChanged(
                        self._device, self._url, up, reason[:200], time.monotonic_ns()
                    )
                )
            except Exception:  # noqa: BLE001 - the link must outlive a failing consumer
                pass

    # -- the reopening thread ---------------------------------------------------------------

    def _run(self) -> None:
        delay = self._reopen_first
        while not self._stop.is_set():
            self._lost.wait(1.0)
            if self._stop.is_set():
                return
            if self._port is not None:
                self._lost.clear()
                delay = self._reopen_first
                continue
            if self._stop.wait(delay):
                return
            with self._lock:
                if self._closed or self._port is not None:
                    continue
                opened = self._try_open()
            delay = self._reopen_first if opened else min(delay * 2, self._reopen_max)


class SerialLedDisplay:
    """A ``NumberDisplay`` on a serial LED display speaking the D/B/F/T line protocol."""

    def __init__(
        self,
        port_url: str,
        baud: int = 9600,
        write_timeout: float = 0.5,
        ack: bool = True,
        ack_timeout: float = 0.5,
        *,
        post: Callable[[object], None] | None = None,
    ) -> None:
        self._link = SerialLineLink(
            port_url, baud, write_timeout, ack, ack_timeout, device="display", post=post
        )

    def start(self) -> None:
        """Open the port if it is there, and keep reopening it while it is not."""
        self._link.start()

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
        if self._link.is_open:
            try:
                self.blank()
            except (DeviceUnavailable, ProtocolError):
                pass  # closing anyway; the next power-up lamp test shows the state
        self._link.close()
