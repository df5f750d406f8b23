"""The real process (``table-controller run``) with its serial display missing at start: it
comes up (no exit), ``status`` shows the fault, and once the display's path appears (a pty twin
behind a symlink, as udev makes /dev/tc-display when the adapter is plugged in) the fault clears
and the display is driven; end of input then stops it cleanly (exit 0)."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from drivers.sim.serial_display import LedState, SimLedDevice

REPO = Path(__file__).resolve().parents[2]
WAIT_S = 30.0

PROFILE = """\
name = "late-display"
game = "paigow"
gpio_backend = "sim"

[console]
port = "stdio"
line_editing = false

[devices.display]
driver = "serial-led"
port = "{port}"

[devices.buttons]
pins = {{ shuffled = 9, no_more_bets = 11, draw = 17, dealt = 27, hands_set = 22, settled = 8 }}

[rules]
jurisdiction = "NY"
start_mode = "rng"
"""


def _reader(stream: object, lines: queue.SimpleQueue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        lines.put(line.rstrip("\n"))


def _status_faults(proc: subprocess.Popen[str], lines: queue.SimpleQueue[str]) -> str:
    """Send ``status`` and return its ``faults:`` line (the reply ends with OK)."""
    assert proc.stdin is not None
    proc.stdin.write("status\n")
    proc.stdin.flush()
    faults = ""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        line = lines.get(timeout=WAIT_S)
        if line.startswith("faults: "):
            faults = line[len("faults: ") :]
        elif line == "OK":
            return faults
    raise AssertionError("no status reply")


def test_the_process_runs_without_its_display_and_drives_it_once_plugged_in(
    tmp_path: Path,
) -> None:
    port = tmp_path / "tc-display"
    profile = tmp_path / "late.toml"
    profile.write_text(PROFILE.format(port=port))
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET",)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--profile", str(profile)]
        + ["--state-dir", str(tmp_path / "state")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=REPO,
        env=env,
    )
    lines: queue.SimpleQueue[str] = queue.SimpleQueue()
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    twin: SimLedDevice | None = None
    try:
        deadline = time.monotonic() + WAIT_S
        while "display not connected" not in _status_faults(proc, lines):
            assert proc.poll() is None, "the process exited"
            assert time.monotonic() < deadline, "no fault on status"
            time.sleep(0.2)
        twin = SimLedDevice()
        os.symlink(twin.port, port)  # plugged in
        deadline = time.monotonic() + WAIT_S
        while _status_faults(proc, lines) != "none":
            assert time.monotonic() < deadline, "the fault did not clear"
            time.sleep(0.2)
        twin.wait_for_lines(1, timeout=WAIT_S)  # driven again: what the table last asked for
        assert twin.shown in (LedState("blank"), LedState("lamp_test"))
        assert proc.stdin is not None
        proc.stdin.close()  # end of input: the console stops the table
        assert proc.wait(timeout=WAIT_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if twin is not None:
            twin.close()
