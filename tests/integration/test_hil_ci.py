"""CI runs the ``--hil`` path itself: ``pytest --hil PROFILE tests/hil`` in a subprocess, with a
baccarat profile whose serial ports are pseudo-terminals joined by pty "cables" to the ports the
HIL run uses: the console's to ``--hil-console-peer``, the shoe's to ``--hil-shoe-peer``, where
the run starts the standalone shoe emulator (``python -m drivers.sim.shoe --port PEER``) and
drives it through its stdin, as on a real rig. Only GPIO stays simulated (CI has none), so the
code a technician runs on a real build (real serial ports, the emulator, the lock) runs here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hil.rig import PROFILES, REPO, PtyCable

TIMEOUT_S = 480.0


def hil_ci_profile(folder: Path, console: Path, shoe: Path) -> Path:
    """The generated hil-ci-baccarat profile: sim-baccarat with both serial ports on ptys, six
    decks (the fewest 5324.20(a)(4) allows: the shoe scenario deals a whole shoe)."""
    path = folder / "hil-ci-baccarat.toml"
    path.write_text(
        f'include = "{(PROFILES / "sim-baccarat.toml").resolve()}"\n'
        'name = "hil-ci-baccarat"\n\n'
        "[rules.baccarat]\ndecks = 6\n\n"
        f'[console]\nport = "{console}"\n\n'
        f'[devices.shoe]\nport = "{shoe}"\n',
        encoding="utf-8",
    )
    return path


def test_hil_path_runs_against_pty_ports(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    if request.config.getoption("--hil"):
        pytest.skip("already a HIL run")
    # Two pty "cables": the console's, and the shoe's, whose far end the HIL run gives the shoe
    # emulator process (--hil-shoe-peer), driven through its stdin as on a real rig.
    console = PtyCable(tmp_path / "console", tmp_path / "console-peer")
    shoe = PtyCable(tmp_path / "shoe", tmp_path / "shoe-peer")
    try:
        profile = hil_ci_profile(tmp_path, tmp_path / "console", tmp_path / "shoe")
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-rs",
                "-p",
                "no:cacheprovider",
                "--hil",
                str(profile),
                "--hil-console-peer",
                str(tmp_path / "console-peer"),
                "--hil-shoe-peer",
                str(tmp_path / "shoe-peer"),
                "--hil-lock",
                str(tmp_path / "hil.lock"),
                "tests/hil",
            ],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            cwd=str(REPO),
            env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"),
        )
    finally:
        shoe.close()
        console.close()
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    # The baccarat scenarios (the shoe emulator dealing) and the hardware-only test ran; the
    # pai gow ones were skipped by name.
    assert "failed" not in out
    assert "is a baccarat table, not paigow" in out
    assert "needs real hardware" not in out
    assert "no shoe emulator" not in out
    summary = [line for line in out.splitlines() if " passed" in line][-1]
    assert int(summary.split(" passed")[0].split()[-1]) >= 10, summary
