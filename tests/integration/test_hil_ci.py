"""CI runs the ``--hil`` path itself: ``pytest --hil PROFILE tests/hil`` in a subprocess, with a
baccarat profile whose serial ports are pseudo-terminals -- the shoe's driven by the standalone
shoe emulator process (``python -m drivers.sim.shoe --pty --link``), the console's joined by a
pty "cable" to the port the HIL run talks through. Only GPIO stays simulated (CI has none), so
the code a technician runs on a real build (real serial ports, the emulator, the lock) runs here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hil.rig import PROFILES, REPO, PtyCable

TIMEOUT_S = 300.0


def hil_ci_profile(folder: Path, console: Path, shoe: Path) -> Path:
    """The generated hil-ci-baccarat profile: sim-baccarat with both serial ports on ptys."""
    path = folder / "hil-ci-baccarat.toml"
    path.write_text(
        f'include = "{(PROFILES / "sim-baccarat.toml").resolve()}"\n'
        'name = "hil-ci-baccarat"\n\n'
        f'[console]\nport = "{console}"\n\n'
        f'[devices.shoe]\nport = "{shoe}"\n', encoding="utf-8")
    return path


@pytest.fixture
def shoe_emulator(tmp_path: Path) -> Iterator[Path]:
    link = tmp_path / "shoe"
    proc = subprocess.Popen([sys.executable, "-m", "drivers.sim.shoe", "--pty", "--link",
                             str(link)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, cwd=str(REPO))
    deadline = time.monotonic() + 20
    while not link.is_symlink():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("the shoe emulator did not create its pty")
        time.sleep(0.05)
    yield link
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def test_hil_path_runs_against_pty_ports(request: pytest.FixtureRequest, tmp_path: Path,
                                         shoe_emulator: Path) -> None:
    if request.config.getoption("--hil"):
        pytest.skip("already a HIL run")
    cable = PtyCable(tmp_path / "console", tmp_path / "console-peer")
    try:
        profile = hil_ci_profile(tmp_path, tmp_path / "console", shoe_emulator)
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
             "--hil", str(profile), "--hil-console-peer", str(tmp_path / "console-peer"),
             "--hil-lock", str(tmp_path / "hil.lock"), "tests/hil"],
            capture_output=True, text=True, timeout=TIMEOUT_S, cwd=str(REPO),
            env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    finally:
        cable.close()
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    # The baccarat scenarios and the hardware-only test ran; pai gow ones were skipped by name.
    assert "failed" not in out
    assert "is a baccarat table, not paigow" in out
    assert "needs real hardware" not in out
    summary = [line for line in out.splitlines() if " passed" in line][-1]
    assert int(summary.split(" passed")[0].split()[-1]) >= 5, summary
