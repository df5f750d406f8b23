"""Shared harness for the reliability suite (tests/reliability and bench/): the REAL
``table-controller run`` process with its console on stdio pipes, profiles derived from the sim
profiles, and read-only access to the journal it writes.

Every wait has a timeout; a process that dies while we wait raises :class:`ControllerDied`
(that is what a SIGKILL looks like from the technician's side). Nothing here is imported by the
program.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.hil.rig import Reply as RigReply

REPO = Path(__file__).resolve().parents[2]
PROFILES = REPO / "hw_profiles"
PIN = "97531864"
READY_TIMEOUT_S = 30.0
REPLY_TIMEOUT_S = 20.0

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


class ControllerDied(Exception):
    """The process exited (or was killed) while we waited for it."""


class HarnessTimeout(AssertionError):
    """Nothing came within the timeout."""


@dataclass
class Reply(RigReply):
    """A console reply (the HIL rig's), plus ``key: value`` lines as a mapping."""

    def fields(self) -> dict[str, str]:
        return dict(line.split(": ", 1) for line in self.lines if ": " in line)


def write_profile(
    folder: Path,
    base: str,
    *,
    shoe_port: str | None = None,
    extra: str = "",
    name: str = "rel-profile.toml",
) -> Path:
    """A profile including ``hw_profiles/<base>.toml``; optionally the shoe on ``shoe_port``."""
    folder.mkdir(parents=True, exist_ok=True)
    # The scoreboard on any free port: runs at once never collide on the sim profiles' ports.
    text = f'include = "{(PROFILES / (base + ".toml")).resolve()}"\nscoreboard.port = 0\n{extra}\n'
    if shoe_port is not None:
        text += f'\n[devices.shoe]\nport = "{shoe_port}"\n'
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@dataclass
class Controller:
    """``python -m controller run --console stdio`` on pipes."""

    profile: Path
    state_dir: Path
    env: Mapping[str, str] | None = None
    wrapper: Sequence[str] = ()
    alarms: list[str] = field(default_factory=list)
    stderr_lines: list[str] = field(default_factory=list)
    started_at: float = 0.0
    ready_at: float | None = None

    def __post_init__(self) -> None:
        env = dict(os.environ if self.env is None else self.env)
        env["PYTHONUNBUFFERED"] = "1"
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._ready = threading.Event()
        self.started_at = time.monotonic()
        self.proc = subprocess.Popen(
            [
                *self.wrapper,
                sys.executable,
                "-m",
                "controller",
                "run",
                "--profile",
                str(self.profile),
                "--state-dir",
                str(self.state_dir),
                "--console",
                "stdio",
            ],
            cwd=str(REPO),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    # -- readers -------------------------------------------------------------------------------

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line.startswith("!"):
                self.alarms.append(line)
            else:
                self._lines.put(line)
        self._lines.put(None)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            self.stderr_lines.append(line)
            if line.startswith("table-controller ready"):
                self.ready_at = time.monotonic()
                self._ready.set()

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.05):
            if self.proc.poll() is not None:
                raise ControllerDied(
                    f"exited {self.proc.returncode} before ready: "
                    + "\n".join(self.stderr_lines[-20:])
                )
            if time.monotonic() > deadline:
                raise HarnessTimeout(
                    f"not ready within {timeout} s: " + "\n".join(self.stderr_lines[-20:])
                )

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(REPLY_TIMEOUT_S)

    def stop(self, timeout: float = REPLY_TIMEOUT_S) -> int:
        """End of console input (a clean shutdown: ``Shutdown("console end of input")``), then
        SIGTERM, then SIGKILL after the timeouts; the exit status."""
        if self.proc.poll() is None and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(5.0)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout)
        self.close_pipes()
        return int(self.proc.returncode)

    def close_pipes(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    def rss_kb(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    # -- console -------------------------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as exc:
            raise ControllerDied(f"console write failed: {exc}") from None

    def read_reply(self, timeout: float = REPLY_TIMEOUT_S) -> Reply:
        lines: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise HarnessTimeout(
                    f"no OK/ERR within {timeout} s; got {lines!r}; stderr "
                    + "\n".join(self.stderr_lines[-10:])
                )
            try:
                line = self._lines.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            if line is None:
                self._lines.put(None)  # stay dead for the next reader
                raise ControllerDied(f"console closed (exit {self.proc.poll()})")
            if line == "OK" or line.startswith("ERR "):
                return Reply(lines, line)
            lines.append(line)

    def ask(self, line: str, timeout: float = REPLY_TIMEOUT_S) -> Reply:
        self.send_raw(line.encode("utf-8") + b"\n")
        return self.read_reply(timeout)

    def ok(self, line: str) -> list[str]:
        reply = self.ask(line)
        if not reply.ok:
            raise AssertionError(f"{line!r} -> {reply.lines} {reply.status}")
        return reply.lines

    def status(self) -> dict[str, str]:
        return self.ask("status").fields()

    def login(self) -> None:
        reply = self.ask(f"login {PIN}")
        if reply.ok:
            return
        if reply.code != "AUTH":
            raise AssertionError(f"login: {reply.status}")
        self.ok(f"passwd {PIN}")


class KillTimer:
    """SIGKILL a process after ``delay`` seconds unless cancelled (the 'random moment')."""

    def __init__(self, proc: subprocess.Popen[bytes], delay: float) -> None:
        self.fired = threading.Event()
        self._cancel = threading.Event()
        self._proc = proc
        self._delay = delay
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        if self._cancel.wait(self._delay):
            return
        if self._proc.poll() is None:
            try:
                self._proc.send_signal(signal.SIGKILL)
                self.fired.set()
            except ProcessLookupError:
                pass

    def cancel(self) -> None:
        self._cancel.set()
        self._thread.join(5.0)


def open_journal(state_dir: Path) -> Any:
    """The journal the process writes, read-only (safe while the process runs: WAL)."""
    from controller.journal.store import Journal

    return Journal(state_dir / "journal.sqlite", readonly=True)


def fast_tmpdir(prefix: str) -> Path:
    """A scratch directory on tmpfs where there is one: tests of ordering and recovery do not
    measure the disk (the benches do), and fsync on tmpfs is cheap."""
    import tempfile

    base = "/dev/shm" if Path("/dev/shm").is_dir() else None
    return Path(tempfile.mkdtemp(prefix=prefix, dir=base))


def journal_rows(state_dir: Path, kinds: Iterable[str] | None = None) -> list[Any]:
    j = open_journal(state_dir)
    try:
        return list(j.events(kinds=kinds))
    finally:
        j.close()


def verify_offline(state_dir: Path) -> tuple[bool, str]:
    """``table-controller journal verify`` (the CLI an auditor runs)."""
    out = subprocess.run(
        [sys.executable, "-m", "controller", "journal", "verify", "--state-dir", str(state_dir)],
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=60,
    )
    return out.returncode == 0, (out.stdout + out.stderr).strip()


def machine_info() -> dict[str, str]:
    """CPU model, cores, Python, kernel: the machine a figure came from."""
    import platform

    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": model,
        "cores": str(os.cpu_count()),
        "python": platform.python_version(),
        "kernel": platform.release(),
    }
