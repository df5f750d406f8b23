"""The real process on the sim profile: draw, SIGKILL, restart -- the same round shows the same
number (docs/design.md "Durability and trust": a power cycle can never re-roll a draw)."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "hw_profiles" / "sim-paigow.toml"
REPLY_TIMEOUT_S = 20.0
PIN = "31415926"


class Controller:
    """``python -m controller run`` with its console on pipes; every wait has a timeout."""

    def __init__(self, state_dir: Path) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "controller",
                "run",
                "--profile",
                str(PROFILE),
                "--state-dir",
                str(state_dir),
                "--console",
                "stdio",
            ],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\r\n"))
        self.lines.put(None)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def ask(self, command: str) -> list[str]:
        """Send one line; return the reply lines up to and including ``OK`` / ``ERR ...``;
        unsolicited ``!`` lines are left out."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        reply: list[str] = []
        while True:
            try:
                line = self.lines.get(timeout=REPLY_TIMEOUT_S)
            except queue.Empty:
                raise AssertionError(
                    f"no reply to {command!r} within {REPLY_TIMEOUT_S} s; "
                    f"got {reply}; stderr {''.join(self.stderr)[-2000:]}"
                ) from None
            if line is None:
                raise AssertionError(
                    f"controller exited during {command!r}: {''.join(self.stderr)[-2000:]}"
                )
            if line.startswith("!"):
                continue
            reply.append(line)
            if line == "OK" or line.startswith("ERR "):
                return reply

    def ok(self, command: str) -> list[str]:
        reply = self.ask(command)
        assert reply[-1] == "OK", f"{command!r} -> {reply}"
        return reply[:-1]

    def status(self) -> dict[str, str]:
        return dict(line.split(": ", 1) for line in self.ok("status") if ": " in line)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=REPLY_TIMEOUT_S)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=REPLY_TIMEOUT_S)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def test_sigkill_after_the_draw_shows_the_same_number(tmp_path: Path) -> None:
    first = Controller(tmp_path)
    try:
        first.ok(f"passwd {PIN}")
        for button in ("shuffled", "no_more_bets", "draw"):
            first.ok(f"sim button {button}")
        before = first.status()
        assert before["state"] == "dealing"
        assert before["number"] in {str(n) for n in range(1, 9)}
        first.kill()
        assert first.proc.returncode == -signal.SIGKILL
    finally:
        first.stop()

    second = Controller(tmp_path)
    try:
        after = second.status()
        assert after["state"] == "dealing"
        assert after["round"] == before["round"]
        assert after["number"] == before["number"]
        assert after["start_position"] == before["start_position"]
        # A second press of draw after the restart is refused; the number stays.
        second.ok(f"login {PIN}")
        refused = second.ask("sim button draw")  # the reply says what the press did
        assert refused[-1].startswith(
            "ERR STATE draw refused: the table is in state dealing, where it takes"
        ), refused
        again = second.status()
        assert (again["state"], again["round"], again["number"]) == (
            "dealing",
            before["round"],
            before["number"],
        )
        second.ok("sim button dealt")
        assert second.status()["state"] == "setting_hands"
    finally:
        second.stop()

    export = subprocess.run(
        [sys.executable, "-m", "controller", "journal", "export", "--state-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=REPLY_TIMEOUT_S,
        check=True,
    )
    kinds = [line for line in export.stdout.splitlines() if '"kind":"paigow.drawn"' in line]
    assert len(kinds) == 1
