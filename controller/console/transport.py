"""Console transports: read lines from stdio or a serial port and post them to the loop.

The transport frames lines and writes replies; the command interpreter runs on the loop thread
(controller.console.interpreter). Two line disciplines (docs/design.md "Technician console"):

* a terminal line (:class:`LineEditor`, ``[console] line_editing = true``, the default): what a
  technician's terminal (screen, minicom, PuTTY) needs. It echoes what is typed, shows a ``> ``
  prompt when idle, edits at the cursor (Left/Right, Home/End, BS or DEL before it, the Delete
  key under it), recalls earlier lines with Up/Down, clears the line with Ctrl-U, cancels it
  with Ctrl-C, skips function keys and rings the bell for any other control byte or a line
  past ``MAX_LINE``. An ``!`` line that arrives while a technician is
  typing is printed over the prompt and the typed text is shown again under it.
* a machine peer (:class:`LineFramer`, ``line_editing = false``: the HIL rig, a host script):
  no echo, no prompt; a line over ``MAX_LINE`` bytes or with a non-printable byte is refused
  with ``ERR SYNTAX`` before it reaches the interpreter, and the refusal is journaled.

A reply and an unsolicited ``!`` line never interleave: both are written whole under one lock.
A serial console whose device disappears (a USB adapter unplugged) is reopened with back-off;
the loop is told (:class:`controller.events.ConsolePortLost` / ``ConsolePortBack``) so it
journals and alarms it on the other consoles.
"""

from __future__ import annotations

import os
import select
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Final

from controller.events import ConsoleLine, ConsolePortBack, ConsolePortLost, ConsoleRejected

if TYPE_CHECKING:
    from serial import Serial

MAX_LINE: Final = 200
#: How long the reader waits for a command's reply before reading the next line anyway; a
#: command that reports progress (``rng capture``) extends it with every progress line.
REPLY_TIMEOUT_S: Final = 10.0
#: How often a waiting reader looks at the stop flag, so close() ends it within its timeout.
POLL_S: Final = 0.2
#: The prompt a terminal line shows when the console waits for a command.
PROMPT: Final = "> "
#: Reopening a vanished serial console: the first retry after this, doubling up to the cap.
REOPEN_FIRST_S: Final = 0.5
REOPEN_MAX_S: Final = 10.0

_CR, _LF, _BS, _DEL = 0x0D, 0x0A, 0x08, 0x7F
_CTRL_C, _CTRL_D, _CTRL_U, _ESC = 0x03, 0x04, 0x15, 0x1B
_BEL: Final = b"\x07"
#: The longest escape sequence skipped (ECMA-48 CSI parameters are short; a longer run is junk).
_MAX_ESCAPE = 16


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
            if byte == _LF and self._last_cr:  # LF of a CRLF pair
                self._last_cr = False
                continue
            self._last_cr = byte == _CR
            if byte in (_LF, _CR):
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
    other control byte included: docs/console.md refuses non-printable bytes)."""
    if any(b < 0x20 or b > 0x7E for b in raw):
        return None
    return raw.decode("ascii")


# -- the terminal line -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Echo:
    """Bytes to write back to the terminal; ``shown`` is the typed text on screen after them
    and ``cursor`` where in it the terminal's cursor then stands (0: after the prompt)."""

    data: bytes
    shown: str
    cursor: int = -1

    @property
    def back(self) -> int:
        """How many columns the cursor stands left of the end of the text shown."""
        return 0 if self.cursor < 0 else len(self.shown) - self.cursor


@dataclass(frozen=True, slots=True)
class Submit:
    """A finished, non-empty line for the interpreter."""

    text: str


@dataclass(frozen=True, slots=True)
class EndOfInput:
    """Ctrl-D on an empty line (the end of a terminal's input)."""


EditorOutput = Echo | Submit | EndOfInput


#: Commands whose arguments are a PIN: the line editor echoes them as ``*`` and never keeps
#: such a line in its history.
SECRET_COMMANDS: Final = frozenset({"login", "passwd"})
#: Lines the terminal line keeps for Up and Down (this session's, in memory only).
HISTORY: Final = 50

#: Keys sent as escape sequences (ECMA-48 CSI ``ESC [ params final`` or SS3 ``ESC O final``,
#: as VT100, xterm, PuTTY, minicom and screen send them), by (params, final byte).
_KEYS: Final[dict[tuple[bytes, int], str]] = {
    **{
        (b"", ord(final)): key
        for final, key in zip("ABCDHF", ("up", "down", "right", "left", "home", "end"), strict=True)
    },
    (b"1", 0x7E): "home",
    (b"7", 0x7E): "home",
    (b"4", 0x7E): "end",
    (b"8", 0x7E): "end",
    (b"3", 0x7E): "delete",
}


class LineEditor:
    """A terminal line discipline, pure: keystrokes in, what to echo and the lines out.

    Printable ASCII is inserted at the cursor and echoed (a PIN as ``*``: :attr:`shown`), up to
    ``max_line`` characters, then the bell; CR, LF or CRLF ends the line (an empty line only
    shows the prompt again); Left/Right move the cursor, Home/End to either end; BS and DEL
    erase the character before the cursor, the Delete key the one under it; Up and Down walk
    through the last ``history`` lines run (never one with a PIN), and Down past the newest
    brings back what was being typed; Ctrl-U erases the line; Ctrl-C cancels it (``^C`` and a
    new prompt); Ctrl-D on an empty line is the end of input; other escape sequences (function
    keys) are skipped; any other control byte, or a byte above 0x7E, rings the bell and is
    dropped. The terminal is driven with BS, spaces and the characters themselves only, so
    any terminal that shows what it is sent keeps the line right.
    """

    def __init__(
        self, max_line: int = MAX_LINE, prompt: str = PROMPT, history: int = HISTORY
    ) -> None:
        self._buf = ""
        self._cursor = 0
        self._max = max_line
        self._prompt = prompt.encode("ascii")
        self._last_cr = False
        self._escape = 0  # 0 none, 1 after ESC, 2 in a CSI sequence, 3 after ESC O
        self._params = bytearray()
        self._history: list[str] = []
        self._keep = history
        self._recalled: int | None = None  # the history line shown, None: the draft
        self._draft = ("", False)  # what was being typed before Up, and whether it is secret
        self._secret = False  # this line has held a PIN: it stays hidden until it ends

    @property
    def text(self) -> str:
        """The line typed so far."""
        return self._buf

    @property
    def cursor(self) -> int:
        """Where the next character goes (0: the start of the line)."""
        return self._cursor

    @property
    def history(self) -> tuple[str, ...]:
        """The lines Up recalls, oldest first."""
        return tuple(self._history)

    @property
    def shown(self) -> str:
        """The line as the terminal shows it: a PIN is never echoed (``login PIN``,
        ``passwd [supervisor] [CURRENT-PIN] NEW-PIN``: everything after the command word
        shows as ``*``, so both PINs of a change are hidden). A line that held a PIN stays
        hidden, all of it once its command word is edited away, until it is run or erased."""
        text = self._buf
        head, space, rest = text.lstrip(" ").partition(" ")
        if space and head.lower() in SECRET_COMMANDS:
            return text[: len(text) - len(rest)] + "*" * len(rest)
        return "*" * len(text) if self._secret else text

    def _is_secret(self) -> bool:
        head, space, _ = self._buf.lstrip(" ").partition(" ")
        return bool(space) and head.lower() in SECRET_COMMANDS

    def feed(self, data: bytes) -> list[EditorOutput]:
        """Echoes (consecutive ones merged), finished lines and end of input, in order."""
        out: list[EditorOutput] = []

        def echo(data: bytes) -> None:
            if not data:
                return
            shown, cursor = self.shown, self._cursor
            if out and isinstance(out[-1], Echo):
                out[-1] = Echo(out[-1].data + data, shown, cursor)
            else:
                out.append(Echo(data, shown, cursor))

        for byte in data:
            if self._escape:
                key = self._escape_key(byte)
                if key is not None:
                    if key:
                        echo(self._key(key))
                    continue
            if byte == _LF and self._last_cr:
                self._last_cr = False
                continue
            self._last_cr = byte == _CR
            if byte in (_CR, _LF):
                line, secret = self._buf, self._secret or self._is_secret()
                self._set("", 0)
                self._secret, self._recalled = False, None
                if line.strip():
                    echo(b"\r\n")
                    if not secret and (not self._history or self._history[-1] != line):
                        self._history = [*self._history, line][-self._keep :]
                    out.append(Submit(line))
                else:
                    echo(b"\r\n" + self._prompt)
            elif byte in (_BS, _DEL):
                if self._cursor:
                    c = self._cursor
                    echo(self._edit(self._buf[: c - 1] + self._buf[c:], c - 1))
            elif byte == _CTRL_U:
                echo(self._edit("", 0))
                self._secret = False
            elif byte == _CTRL_C:
                self._set("", 0)
                self._secret, self._recalled = False, None
                echo(b"^C\r\n" + self._prompt)
            elif byte == _CTRL_D:
                if self._buf:
                    echo(_BEL)
                else:
                    out.append(EndOfInput())
            elif byte == _ESC:
                self._escape = 1
                self._params.clear()
            elif 0x20 <= byte <= 0x7E:
                if len(self._buf) < self._max:
                    c = self._cursor
                    echo(self._edit(self._buf[:c] + chr(byte) + self._buf[c:], c + 1))
                else:
                    echo(_BEL)
            else:
                echo(_BEL)
        return out

    def _escape_key(self, byte: int) -> str | None:
        """Take ``byte`` into the escape sequence being read: the key it ends (``""`` for one
        this line does not use, or while the sequence goes on), or None when ``byte`` is not
        part of a sequence and is to be handled as typed."""
        if self._escape == 1:
            self._escape = 2 if byte == 0x5B else 3 if byte == 0x4F else 0
            return "" if self._escape else None
        if self._escape == 3:
            self._escape = 0
            if not 0x20 <= byte <= 0x7E:
                return None
            return _KEYS.get((b"", byte), "")
        if 0x40 <= byte <= 0x7E:
            self._escape = 0
            return _KEYS.get((bytes(self._params), byte), "")
        if 0x20 <= byte <= 0x3F and len(self._params) < _MAX_ESCAPE:
            self._params.append(byte)
            return ""
        self._escape = 0  # not a sequence after all (or a runaway one): drop it
        return None if byte < 0x20 or byte > 0x7E else ""

    def _key(self, key: str) -> bytes:
        """What a cursor, editing or history key does to the line, as bytes to echo."""
        c, n = self._cursor, len(self._buf)
        if key == "left":
            return self._edit(self._buf, c - 1) if c else b""
        if key == "right":
            return self._edit(self._buf, c + 1) if c < n else b""
        if key == "home":
            return self._edit(self._buf, 0)
        if key == "end":
            return self._edit(self._buf, n)
        if key == "delete":
            return self._edit(self._buf[:c] + self._buf[c + 1 :], c) if c < n else b""
        if key == "up":
            if self._recalled == 0 or not self._history:
                return _BEL
            if self._recalled is None:
                self._draft = (self._buf, self._secret)
                self._recalled = len(self._history)
            self._recalled -= 1
            return self._replace(self._history[self._recalled], False)
        if key == "down":
            if self._recalled is None:
                return _BEL
            if self._recalled + 1 < len(self._history):
                self._recalled += 1
                return self._replace(self._history[self._recalled], False)
            self._recalled = None
            return self._replace(*self._draft)
        return b""

    def _replace(self, text: str, secret: bool) -> bytes:
        """The whole line replaced (a history line, or the draft back), the cursor at its end."""
        old_shown, old_cursor = self.shown, self._cursor
        self._set(text, len(text))
        self._secret = secret
        return _redraw(old_shown, old_cursor, self.shown, self._cursor)

    def _edit(self, text: str, cursor: int) -> bytes:
        """Change the line and the cursor; the bytes that bring the terminal from the old line
        to the new one. A line that shows a PIN hidden stays hidden (:attr:`shown`)."""
        old_shown, old_cursor = self.shown, self._cursor
        self._secret = self._secret or self._is_secret()
        self._set(text, cursor)
        self._secret = self._secret or self._is_secret()
        return _redraw(old_shown, old_cursor, self.shown, self._cursor)

    def _set(self, text: str, cursor: int) -> None:
        self._buf = text
        self._cursor = max(0, min(cursor, len(text)))


def _redraw(old: str, old_cursor: int, new: str, new_cursor: int) -> bytes:
    """The bytes that turn line ``old`` with the cursor at ``old_cursor`` into ``new`` with
    the cursor at ``new_cursor`` on a terminal: BS moves left, a character written moves right
    (what is already there is written again), spaces blank what the line lost."""
    if old == new:
        step = new_cursor - old_cursor
        return ("\b" * -step if step < 0 else new[old_cursor:new_cursor]).encode("ascii")
    same = 0
    while same < min(len(old), len(new)) and old[same] == new[same]:
        same += 1
    out = "\b" * (old_cursor - same) if same < old_cursor else ""
    out += new[min(same, old_cursor) :]
    end = max(len(old), len(new))
    out += " " * (end - len(new)) + "\b" * (end - new_cursor)
    return out.encode("ascii")


# -- transports --------------------------------------------------------------------------------


class ConsoleTransport:
    """Base: a reader thread that posts ConsoleLine events, and a locked writer."""

    name = "console"

    def __init__(self, post: Callable[[object], None], *, line_editing: bool = False) -> None:
        self._post = post
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._framer = LineFramer()
        self._editor: LineEditor | None = LineEditor() if line_editing else None
        self._idle = False  # a terminal line shows the prompt (no command in flight)
        self._shown = ""  # what the technician has typed after that prompt
        self._back = 0  # how far left of its end the cursor stands in it

    @property
    def line_editing(self) -> bool:
        return self._editor is not None

    # subclasses provide these two
    def _read(self) -> bytes | None:
        """Some bytes, ``b""`` at end of input, or None when nothing came within ``POLL_S``."""
        raise NotImplementedError

    def _write(self, data: bytes) -> None:
        raise NotImplementedError

    def start(self) -> None:
        if self._editor is not None:
            self._show_prompt()
        self._thread = threading.Thread(target=self._run, name=f"{self.name}-reader", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._read()
            except (OSError, ValueError) as exc:
                if not self._read_failed(exc):
                    return
                continue
            if data is None:
                continue
            if data == b"":
                if self._eof():
                    return
                continue
            if not self._take(data):
                return

    def _read_failed(self, exc: BaseException) -> bool:
        """A read raised; False stops the reader. The base waits a little and goes on."""
        return not self._stop.wait(0.5)

    def _take(self, data: bytes) -> bool:
        """Handle bytes read; False when the reader must stop."""
        if self._editor is None:
            return self._take_framed(data)
        for item in self._editor.feed(data):
            if self._stop.is_set():
                return False
            if isinstance(item, Echo):
                with self._lock:
                    self._write_quietly(item.data)
                    self._shown, self._back = item.shown, item.back
            elif isinstance(item, EndOfInput):
                if self._eof():
                    return False
            else:
                with self._lock:
                    self._idle = False
                    self._shown, self._back = "", 0
                self._submit(item.text)
        return True

    def _take_framed(self, data: bytes) -> bool:
        for item in self._framer.feed(data):
            if self._stop.is_set():
                return False
            if isinstance(item, str):
                self._reject(item)
                continue
            text = decode_line(item)
            if text is None:
                self._reject("line holds non-printable bytes")
                continue
            self._submit(text)
        return True

    def _reject(self, reason: str) -> None:
        """Refuse a malformed line at once, and have the loop journal the refusal (bad input is
        journaled; the loop folds a flood of it into one counted row a second)."""
        self.send_reply([f"ERR SYNTAX {reason}"])
        self._post(ConsoleRejected(reason, self.name))

    def _submit(self, text: str) -> None:
        """Post one line and wait for its reply before reading on: one command at a time, so
        whatever a command posts itself (a simulated button press) is handled before the next
        line, and a flood of input cannot pile up on the loop's queue. A command that reports
        progress keeps the reader waiting; one silent for ``REPLY_TIMEOUT_S`` does not."""
        done = threading.Event()
        heard = [time.monotonic()]

        def reply(lines: list[str]) -> None:
            self.send_reply(lines)
            done.set()

        def progress(lines: list[str]) -> None:
            heard[0] = time.monotonic()
            self.send_lines(lines)

        self._post(ConsoleLine(text, reply, self.name, progress))
        while not done.wait(POLL_S):
            if self._stop.is_set():
                return  # shutting down: the loop that would reply has stopped
            if time.monotonic() - heard[0] >= REPLY_TIMEOUT_S:
                self.send_reply([f"!WARN no reply within {REPLY_TIMEOUT_S:.0f} s; reading on"])
                return

    def _eof(self) -> bool:
        """End of input: stop reading (stdio) or keep waiting (a serial port)."""
        return True

    def _write_quietly(self, data: bytes) -> None:
        """Write with the lock held; a port that fails is the reader's business, not a reply's."""
        try:
            self._write(data)
        except (OSError, ValueError):
            pass

    def _show_prompt(self) -> None:
        with self._lock:
            self._idle = True
            self._shown, self._back = "", 0
            self._write_quietly(PROMPT.encode("ascii"))

    def send_raw(self, data: bytes) -> None:
        with self._lock:
            self._write_quietly(data)

    def send_lines(self, lines: list[str]) -> None:
        """Write whole lines at once (part of a reply); never interleaved with another write."""
        data = "".join(line + "\r\n" for line in lines).encode("ascii", "replace")
        with self._lock:
            self._write_quietly(data)

    def send_reply(self, lines: list[str]) -> None:
        """The end of a reply: its lines, then (a terminal line) the prompt."""
        data = "".join(line + "\r\n" for line in lines)
        with self._lock:
            if self._editor is not None:
                data += PROMPT
                self._idle = True
                self._shown, self._back = "", 0
            self._write_quietly(data.encode("ascii", "replace"))

    def send_unsolicited(self, lines: list[str]) -> None:
        """``!`` lines the table sends unasked. On a terminal line that shows the prompt, they
        are written over it and the prompt and what was typed are shown again below them, so a
        technician never finds an alarm glued to half a command (the cursor back where it was
        in the line)."""
        if not lines:
            return
        with self._lock:
            if self._editor is None or not self._idle:
                data = "".join(line + "\r\n" for line in lines)
            else:
                typed = len(PROMPT) + len(self._shown)
                first = lines[0].ljust(typed)
                data = "\r" + "".join(line + "\r\n" for line in [first, *lines[1:]])
                data += PROMPT + self._shown + "\b" * self._back
            self._write_quietly(data.encode("ascii", "replace"))

    def close(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)


class StdioTransport(ConsoleTransport):
    """The console on standard input/output (``--console stdio``). The terminal line applies
    only where both are a terminal (``./run-sim``): the terminal is then put in raw mode for the
    run and restored at close; on pipes (systemd, scripts) the console is a machine peer."""

    name = "stdio"

    def __init__(
        self,
        post: Callable[[object], None],
        *,
        line_editing: bool = False,
        stdin: IO[bytes] | None = None,
        stdout: IO[bytes] | None = None,
        on_eof: Callable[[], None] | None = None,
    ) -> None:
        self._in = stdin or sys.stdin.buffer
        self._out = stdout or sys.stdout.buffer
        self._on_eof = on_eof
        # The process's own stdin is read with os.read on its descriptor, never through
        # sys.stdin.buffer: a daemon thread blocked inside BufferedReader holds its lock, and
        # interpreter shutdown after SIGTERM then aborts ("could not acquire lock for
        # <_io.BufferedReader name='<stdin>'>", exit -6). os.read holds no Python-level lock.
        self._fd: int | None = None if stdin is not None else sys.stdin.fileno()
        self._saved_tty: list[int | list[bytes | int]] | None = None
        terminal = (
            self._fd is not None and os.isatty(self._fd) and stdout is None and sys.stdout.isatty()
        )
        super().__init__(post, line_editing=line_editing and terminal)
        if self.line_editing and self._fd is not None:
            self._raw_terminal(self._fd)

    def _raw_terminal(self, fd: int) -> None:
        """Keystrokes straight to the line editor: no kernel echo, line editing or signals
        (Ctrl-C cancels a line here; Ctrl-D on an empty line ends the run)."""
        import termios

        self._saved_tty = termios.tcgetattr(fd)
        attrs = termios.tcgetattr(fd)
        attrs[0] &= ~(termios.ICRNL | termios.IXON | termios.INLCR | termios.IGNCR)
        attrs[3] &= ~(termios.ICANON | termios.ECHO | termios.ISIG | termios.IEXTEN)
        attrs[6][termios.VMIN] = 1
        attrs[6][termios.VTIME] = 0
        termios.tcsetattr(fd, termios.TCSADRAIN, attrs)

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

    def close(self, timeout: float = 2.0) -> None:
        super().close(timeout)
        if self._saved_tty is not None and self._fd is not None:
            import termios

            with self._lock:
                self._write_quietly(b"\r\n")
            try:
                termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved_tty)
            except termios.error:
                pass
            self._saved_tty = None


class SerialTransport(ConsoleTransport):
    """The console on a serial port (115200 8N1 by default), through pySerial.

    A port that fails (a USB adapter unplugged: reads raise) is closed and reopened, first after
    :data:`REOPEN_FIRST_S`, then doubling up to :data:`REOPEN_MAX_S`, until the device is back;
    the loop is told when it goes and when it returns. A port that cannot be opened at start is
    handled the same way: the table plays on and the console comes when the device does.
    """

    name = "serial"

    def __init__(
        self,
        post: Callable[[object], None],
        url: str,
        *,
        baud: int = 115200,
        line_editing: bool = False,
    ) -> None:
        super().__init__(post, line_editing=line_editing)
        self._url = url
        self._baud = baud
        self._port: Serial | None = None
        self._retry_s = REOPEN_FIRST_S
        self._lost = False
        try:
            self._port = self._open()
        except (OSError, ValueError) as exc:
            self._lost = True
            self._post(ConsolePortLost(self.name, url, _reason(exc)))

    def _open(self) -> Serial:
        import serial  # type: ignore[import-untyped,unused-ignore]

        return serial.serial_for_url(
            self._url, baudrate=self._baud, timeout=POLL_S, write_timeout=0.5
        )

    def _read(self) -> bytes | None:
        port = self._port
        if port is None:
            self._reopen()
            return None
        # One byte with the port's timeout, then whatever is already waiting: a line is handled
        # as soon as it ends, not when 256 bytes or the timeout have come.
        first: bytes = port.read(1)
        if not first:
            return None
        waiting = int(port.in_waiting)
        rest: bytes = port.read(min(waiting, 4096)) if waiting else b""
        return first + rest

    def _read_failed(self, exc: BaseException) -> bool:
        """The device failed or vanished: close it, tell the loop, reopen with back-off."""
        with self._lock:
            port, self._port = self._port, None
        if port is not None:
            try:
                port.close()
            except (OSError, ValueError):
                pass
        if not self._lost:
            self._lost = True
            self._retry_s = REOPEN_FIRST_S
            self._post(ConsolePortLost(self.name, self._url, _reason(exc)))
        return not self._stop.is_set()

    def _reopen(self) -> None:
        if self._stop.wait(self._retry_s):
            return
        try:
            port = self._open()
        except (OSError, ValueError):
            self._retry_s = min(REOPEN_MAX_S, self._retry_s * 2)
            return
        with self._lock:
            self._port = port
        self._lost = False
        self._retry_s = REOPEN_FIRST_S
        self._post(ConsolePortBack(self.name, self._url))
        if self._editor is not None:
            self._show_prompt()

    def _write(self, data: bytes) -> None:
        if self._port is None:
            return  # gone: what it would have shown is in the journal and on other consoles
        self._port.write(data)

    def _eof(self) -> bool:
        return False

    @property
    def connected(self) -> bool:
        return self._port is not None

    def close(self, timeout: float = 2.0) -> None:
        super().close(timeout)
        with self._lock:
            port, self._port = self._port, None
        if port is not None:
            port.close()


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text[:200]
