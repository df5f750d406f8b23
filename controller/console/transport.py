"""Console transports: read lines from stdio or a serial port and post them to the loop.

The transport only frames lines and writes replies; the command interpreter runs on the loop
thread (controller.console.interpreter). A reply and an unsolicited ``!`` line never
interleave: both are written whole under one lock. Lines over ``MAX_LINE`` bytes or with
non-printable bytes are refused here, before they reach the interpreter (DESIGN.md "Technician
console").
"""

from __future__ import annotations

import os
import select
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from controller.events import ConsoleLine, ConsoleRejected

MAX_LINE = 200
#: How long the reader waits for a command's reply before reading the next line anyway.
REPLY_TIMEOUT_S = 10.0
#: How often a waiting reader looks at the stop flag, so close() ends it within its timeout.
POLL_S = 0.2


class LineFramer:
    """Splits a byte stream into lines ending in CR, LF or CRLF; flags long or binary lines."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self._buf = bytearray()
        self._max = max_line
        self._overflow = False
        self._last_cr = False

    def feed(self, data: bytes) -> list[bytes | str]:
        """Return complete lines (bytes) and refusals (str reasons) in arrival order."""
        out: list[bytes | str] = []
        for byte in data:
            if byte == 0x0A and self._last_cr:      # LF of a CRLF pair
                self._last_cr = False
                continue
            self._last_cr = byte == 0x0D
            if byte in (0x0A, 0x0D):
                if self._overflow:
                    out.append(f"line longer than {self._max} bytes")
                else:
                    out.append(bytes(self._buf))
                self._buf.clear()
                self._overflow = False
                continue
            if len(self._buf) >= self._max:
                self._overflow = True
                continue
            self._buf.append(byte)
        return out


def decode_line(raw: bytes) -> str | None:
    """The line as text, or None when it holds a byte that is not printable ASCII (a TAB or any
    other control byte included: DESIGN.md refuses non-printable bytes)."""
    if any(b < 0x20 or b > 0x7E for b in raw):
        return None
    return raw.decode("ascii")


class ConsoleTransport:
    """Base: a reader thread that posts ConsoleLine events and a locked writer."""

    name = "console"

    def __init__(self, post: Callable[[object], None], *, echo: bool = False) -> None:
        self._post = post
        self._echo = echo
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._framer = LineFramer()

    # subclasses provide these two
    def _read(self) -> bytes | None:
        """Some bytes, ``b""`` at end of input, or None when nothing came within ``POLL_S``."""
        raise NotImplementedError

    def _write(self, data: bytes) -> None:
        raise NotImplementedError

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"{self.name}-reader",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._read()
            except (OSError, ValueError):
                if self._stop.wait(0.5):
                    return
                continue
            if data is None:
                continue
            if data == b"":
                if self._eof():
                    return
                continue
            if self._echo:
                self.send_raw(data)
            for item in self._framer.feed(data):
                if self._stop.is_set():
                    return
                if isinstance(item, str):
                    self._reject(item)
                    continue
                text = decode_line(item)
                if text is None:
                    self._reject("line holds non-printable bytes")
                    continue
                self._submit(text)

    def _reject(self, reason: str) -> None:
        """Refuse a malformed line at once, and have the loop journal the refusal (bad input is
        journaled; the loop folds a flood of it into one counted row a second)."""
        self.send_lines([f"ERR SYNTAX {reason}"])
        self._post(ConsoleRejected(reason, self.name))

    def _submit(self, text: str) -> None:
        """Post one line and wait for its reply before reading on: one command at a time, so
        whatever a command posts itself (a simulated button press) is handled before the next
        line, and a flood of input cannot pile up on the loop's queue."""
        done = threading.Event()

        def reply(lines: list[str]) -> None:
            self.send_lines(lines)
            done.set()

        self._post(ConsoleLine(text, reply, self.name))
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while not done.wait(POLL_S):
            if self._stop.is_set():
                return  # shutting down: the loop that would reply has stopped
            if time.monotonic() >= deadline:
                self.send_lines([f"!WARN no reply within {REPLY_TIMEOUT_S:.0f} s; reading on"])
                return

    def _eof(self) -> bool:
        """End of input: stop reading (stdio) or keep waiting (a serial port)."""
        return True

    def send_raw(self, data: bytes) -> None:
        with self._lock:
            self._write(data)

    def send_lines(self, lines: list[str]) -> None:
        """Write a whole reply (or alarm) at once; never interleaved with another."""
        data = "".join(line + "\r\n" for line in lines).encode("ascii", "replace")
        with self._lock:
            try:
                self._write(data)
            except (OSError, ValueError):
                pass

    send_unsolicited = send_lines

    def close(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)


class StdioTransport(ConsoleTransport):
    """The console on standard input/output (``--console stdio``)."""

    name = "stdio"

    def __init__(self, post: Callable[[object], None], *, echo: bool = False,
                 stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None,
                 on_eof: Callable[[], None] | None = None) -> None:
        super().__init__(post, echo=echo)
        self._in = stdin or sys.stdin.buffer
        self._out = stdout or sys.stdout.buffer
        self._on_eof = on_eof
        # The process's own stdin is read with os.read on its descriptor, never through
        # sys.stdin.buffer: a daemon thread blocked inside BufferedReader holds its lock, and
        # interpreter shutdown after SIGTERM then aborts ("could not acquire lock for
        # <_io.BufferedReader name='<stdin>'>", exit -6). os.read holds no Python-level lock.
        self._fd: int | None = None if stdin is not None else sys.stdin.fileno()

    def _read(self) -> bytes | None:
        if self._fd is not None:
            # Wait with a timeout, so close() can end this thread (os.read alone blocks forever).
            ready, _, _ = select.select([self._fd], [], [], POLL_S)
            return os.read(self._fd, 256) if ready else None
        read1 = getattr(self._in, "read1", None)
        data: bytes = read1(256) if read1 is not None else self._in.read(1)
        return data

    def _write(self, data: bytes) -> None:
        self._out.write(data)
        self._out.flush()

    def _eof(self) -> bool:
        if self._on_eof is not None:
            self._on_eof()
        return True


class SerialTransport(ConsoleTransport):
    """The console on a serial port (115200 8N1 by default), through pySerial."""

    name = "serial"

    def __init__(self, post: Callable[[object], None], url: str, *, baud: int = 115200,
                 echo: bool = False) -> None:
        super().__init__(post, echo=echo)
        import serial  # type: ignore[import-untyped,unused-ignore]

        self._port: Any = serial.serial_for_url(url, baudrate=baud, timeout=0.2,
                                                write_timeout=0.5)

    def _read(self) -> bytes:
        # One byte with the port's timeout, then whatever is already waiting: a line is handled
        # as soon as it ends, not when 256 bytes or the timeout have come.
        first: bytes = self._port.read(1)
        if not first:
            return b""
        waiting = int(self._port.in_waiting)
        rest: bytes = self._port.read(min(waiting, 4096)) if waiting else b""
        return first + rest

    def _write(self, data: bytes) -> None:
        self._port.write(data)

    def _eof(self) -> bool:
        return False

    def close(self, timeout: float = 2.0) -> None:
        super().close(timeout)
        self._port.close()
