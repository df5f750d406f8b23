"""Twin devices on the far end of a pseudo-terminal, for the serial display drivers.

``PtyLineDevice`` owns an ``os.openpty()`` pair: the driver opens ``device.port`` (the slave
path) with pySerial; a reader thread on the master side splits CR LF lines, hands each to the
device's own parser (written separately from the driver's encoder, as a real display's firmware
would be) and answers ``OK`` / ``ERR <reason>``.  Test-side stimulus: ``silent`` (a dead display
that never answers), ``received``, ``wait_for_lines``.
"""

from __future__ import annotations

import os
import select
import threading
import tty
from dataclasses import dataclass

from drivers.errors import DeviceTimeout, ProtocolError

__all__ = ["LedState", "PtyLineDevice", "SimLedDevice"]


class PtyLineDevice:
    """Base twin: a pty pair with a reader thread that answers each line."""

    def __init__(self) -> None:
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)  # no echo, no CR/LF translation: bytes as on a UART
        self.port = os.ttyname(self._slave)
        self.silent = False
        self._received: list[str] = []
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"twin {self.port}", daemon=True)
        self._thread.start()

    def handle(self, line: str) -> None:
        """Apply one command; raise ProtocolError to answer ERR.  Subclasses override."""
        raise NotImplementedError

    @property
    def received(self) -> list[str]:
        """Every line received, in order, decoded (undecodable bytes as U+FFFD)."""
        with self._cond:
            return list(self._received)

    def wait_for_lines(self, count: int, timeout: float = 2.0) -> list[str]:
        """Block until ``count`` lines have arrived or ``timeout`` s pass (then DeviceTimeout)."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._received) >= count, timeout):
                raise DeviceTimeout(f"twin got {len(self._received)} of {count} lines")
            return list(self._received)

    def close(self) -> None:
        """Stop the reader thread and close both ends."""
        self._stop.set()
        self._thread.join(timeout=2)
        for fd in (self._master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> PtyLineDevice:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self) -> None:
        buf = b""
        while not self._stop.is_set():
            ready, _, _ = select.select([self._master], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(self._master, 1024)
            except OSError:
                return
            buf += chunk
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                self._line(raw)

    def _line(self, raw: bytes) -> None:
        if not raw.endswith(b"\r"):
            reply = b"ERR framing\r\n"
            text = raw.decode("ascii", "replace")
        else:
            text = raw[:-1].decode("ascii", "replace")
            try:
                with self._cond:
                    self.handle(text)
                reply = b"OK\r\n"
            except ProtocolError as exc:
                reply = f"ERR {exc}".encode("ascii", "replace")[:60] + b"\r\n"
        with self._cond:
            self._received.append(text)
            self._cond.notify_all()
        if not self.silent:
            os.write(self._master, reply)


@dataclass(frozen=True)
class LedState:
    """What the LED display shows: kind is "digit", "blank", "fault" or "lamp_test"."""

    kind: str
    digit: int | None = None


class SimLedDevice(PtyLineDevice):
    """Twin of the serial LED number display (D<n>/B/F/T)."""

    def __init__(self) -> None:
        self.shown = LedState("blank")
        self.history: list[LedState] = []
        super().__init__()

    def handle(self, line: str) -> None:
        if line in ("B", "F", "T"):
            state = LedState({"B": "blank", "F": "fault", "T": "lamp_test"}[line])
        elif len(line) == 2 and line[0] == "D" and line[1] in "12345678":
            state = LedState("digit", int(line[1]))
        else:
            raise ProtocolError(f"unknown command {line!r}")
        self.shown = state
        self.history.append(state)
