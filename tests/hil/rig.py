"""The test rig: the real ``table-controller`` process and a technician's end of its console.

One set of end-to-end scenarios (tests/hil/) runs against a :class:`Rig`:

* simulated (default): the process runs a profile that includes a sim profile and puts the
  console on a pseudo-terminal whose master side the test holds;
* hardware (``pytest --hil PROFILE --hil-console-peer PORT``): the process runs PROFILE with its
  real serial ports and GPIO; the test talks to the console through PORT, the other end of a
  cable wired to the profile's console port (docs/hil-rig.md).

Every wait has a hard timeout. Nothing here is imported by the program.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time
import tty
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

REPO = Path(__file__).resolve().parents[2]
PROFILES = REPO / "hw_profiles"
READY_TIMEOUT_S = 30.0
REPLY_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 15.0
PIN = "24681357"


class RigError(AssertionError):
    """The rig did not get what it waited for within the timeout."""


class LinePort(Protocol):
    """The technician's end of the console: raw bytes in and out."""

    def write(self, data: bytes) -> None: ...

    def read(self, timeout: float) -> bytes: ...

    def close(self) -> None: ...


class PtyMaster:
    """A pseudo-terminal pair: the process opens ``slave_path``; the test keeps the master."""

    def __init__(self) -> None:
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)  # no echo or line editing before the process opens it
        self.slave_path = os.ttyname(self._slave)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self.master, view)
            view = view[written:]

    def read(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self.master], [], [], max(0.0, timeout))
        if not ready:
            return b""
        try:
            return os.read(self.master, 4096)
        except OSError:  # EIO while no one has the slave open
            time.sleep(min(0.05, max(0.0, timeout)))
            return b""

    def close(self) -> None:
        for fd in (self.master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass


class SerialPeer:
    """A real serial port wired to the table's console (HIL), through pySerial."""

    def __init__(self, url: str, baud: int = 115200) -> None:
        import serial  # type: ignore[import-untyped,unused-ignore]

        self._port = serial.serial_for_url(url, baudrate=baud, timeout=0.05, write_timeout=5)

    def write(self, data: bytes) -> None:
        self._port.write(data)

    def read(self, timeout: float) -> bytes:
        # One byte with the timeout, then whatever is waiting: a reply is read when it ends,
        # not when 4096 bytes or the timeout have come.
        self._port.timeout = max(0.0, min(timeout, 0.2))
        data: bytes = self._port.read(1)
        if data:
            waiting = int(self._port.in_waiting)
            if waiting:
                data += self._port.read(waiting)
        return data

    def close(self) -> None:
        self._port.close()


class PtyCable:
    """Two pseudo-terminals joined like a null-modem cable: each end is a path a program opens
    as a serial port (CI's stand-in for a real cable between two USB-serial adapters)."""

    def __init__(self, link_a: Path, link_b: Path) -> None:
        self._ends = [PtyMaster(), PtyMaster()]
        self.links = (link_a, link_b)
        for end, link in zip(self._ends, self.links, strict=True):
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(end.slave_path)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._relay, name="pty-cable", daemon=True)
        self._thread.start()

    def _relay(self) -> None:
        a, b = self._ends
        peer = {a.master: b, b.master: a}
        by_fd = {a.master: a, b.master: b}
        while not self._stop.is_set():
            ready, _, _ = select.select(list(peer), [], [], 0.1)
            for fd in ready:
                data = by_fd[fd].read(0)
                if not data:  # EIO: nobody has that end open yet; don't spin
                    time.sleep(0.01)
                    continue
                try:
                    peer[fd].write(data)
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2.0)
        for end, link in zip(self._ends, self.links, strict=True):
            end.close()
            if link.is_symlink():
                link.unlink()


@dataclass
class Reply:
    lines: list[str]
    status: str

    @property
    def ok(self) -> bool:
        return self.status == "OK"

    @property
    def code(self) -> str:
        return self.status.split()[1] if self.status.startswith("ERR ") else ""

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def override_profile(
    folder: Path,
    base: Path,
    console_port: str | None,
    extra: str = "",
    scoreboard_port: int | None = 0,
) -> Path:
    """A profile that includes ``base`` (by absolute path), moves the console to a port (None:
    leaves it) and makes it a machine peer's line: the rig reads replies, not a terminal's echo
    and prompt (``[console] line_editing = false``). It serves the scoreboard on
    ``scoreboard_port``: by default any free port, so tests running at once never collide on
    the sim profiles' fixed ports (None: as ``base`` says)."""
    path = folder / "rig-profile.toml"
    board = "" if scoreboard_port is None else f"scoreboard.port = {scoreboard_port}\n"
    port = "" if console_port is None else f'port = "{console_port}"\n'
    path.write_text(
        f'include = "{base.resolve()}"\n{board}{extra}\n[console]\n{port}line_editing = false\n',
        encoding="utf-8",
    )
    return path


@dataclass
class Rig:
    """The running controller and the technician's end of its console."""

    profile: Path
    state_dir: Path
    port: LinePort
    env: Mapping[str, str] | None = None
    hardware: bool = False
    cwd: Path = REPO
    alarms: list[str] = field(default_factory=list)
    stderr_lines: list[str] = field(default_factory=list)
    _proc: subprocess.Popen[bytes] | None = None
    _buffer: bytes = b""
    _ready: threading.Event = field(default_factory=threading.Event)
    game: str = ""
    #: Who deals the cards on a baccarat rig (tests/hil/shoe.py), None when nobody can.
    shoe: Any = None
    #: The program to start (default: this interpreter's ``-m controller``; an installed
    #: release's entry point in tests/integration/test_release.py).
    program: Sequence[str] = ()

    # -- process -----------------------------------------------------------------------------

    def start(self, extra_args: Sequence[str] = ()) -> Rig:
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("PYTHONUNBUFFERED", "1")
        self._ready.clear()
        program = list(self.program) or [sys.executable, "-m", "controller"]
        self._proc = subprocess.Popen(
            [
                *program,
                "run",
                "--profile",
                str(self.profile),
                "--state-dir",
                str(self.state_dir),
                *extra_args,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            cwd=str(self.cwd),
        )
        threading.Thread(target=self._read_stderr, args=(self._proc,), daemon=True).start()
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not self._ready.wait(0.1):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RigError(
                    "the controller did not become ready:\n" + "\n".join(self.stderr_lines[-30:])
                )
        self.game = self.status().get("game", "")
        return self

    def _read_stderr(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            self.stderr_lines.append(line)
            if line.startswith("table-controller ready"):
                self._ready.set()

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after the timeout; the exit status."""
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(STOP_TIMEOUT_S)
        self._proc = None
        return proc.returncode

    def close(self) -> None:
        self.stop()
        self.port.close()

    # -- console -------------------------------------------------------------------------------

    def command(self, line: str, timeout: float = REPLY_TIMEOUT_S) -> Reply:
        """Send one line and collect the reply up to its OK / ERR line (``!`` lines aside)."""
        self.port.write(line.encode("ascii") + b"\r\n")
        return self.read_reply(timeout)

    def read_reply(self, timeout: float = REPLY_TIMEOUT_S) -> Reply:
        lines: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self._buffer:
                raw, _, self._buffer = self._buffer.partition(b"\n")
                text = raw.rstrip(b"\r").decode("ascii", "replace")
                if text.startswith("!"):
                    self.alarms.append(text)
                elif text == "OK" or text.startswith("ERR "):
                    return Reply(lines, text)
                else:
                    lines.append(text)
            left = deadline - time.monotonic()
            if left <= 0:
                raise RigError(f"no OK/ERR within {timeout} s; got {lines!r}")
            self._buffer += self.port.read(min(left, 0.2))

    def ok(self, line: str) -> list[str]:
        reply = self.command(line)
        assert reply.ok, f"{line!r}: {reply.lines} {reply.status}"
        return reply.lines

    def err(self, line: str, code: str) -> Reply:
        reply = self.command(line)
        assert reply.code == code, f"{line!r}: expected ERR {code}, got {reply.status}"
        return reply

    def status(self) -> dict[str, str]:
        return dict(line.split(": ", 1) for line in self.ok("status") if ": " in line)

    def wait_status(
        self, key: str, wanted: str | Sequence[str], timeout: float = REPLY_TIMEOUT_S
    ) -> dict[str, str]:
        """Poll ``status`` until ``key`` has one of the wanted values (events are asynchronous:
        a button press reaches the loop through the GPIO driver's debounce)."""
        want = (wanted,) if isinstance(wanted, str) else tuple(wanted)
        deadline = time.monotonic() + timeout
        while True:
            status = self.status()
            if status.get(key) in want:
                return status
            if time.monotonic() > deadline:
                raise RigError(f"status {key} stayed {status.get(key)!r}, wanted {want}")
            time.sleep(0.1)

    def login(self) -> None:
        """Set the PIN on a fresh journal, else log in with it."""
        reply = self.command(f"login {PIN}")
        if reply.ok:
            return
        assert reply.code == "AUTH", reply.status
        self.ok(f"passwd {PIN}")
