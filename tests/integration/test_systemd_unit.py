"""The systemd unit: ``systemd-analyze verify`` against a real install of the program at the
path the unit names, and the options the issue requires (never a weakened unit).

The program is installed by ``systemd/install.sh --stage DIR`` (a venv with the package, the
profile, the manifest); a private mount namespace then shows DIR/opt as /opt, so the unit's
ExecStart=/opt/table-controller/venv/bin/table-controller is the installed program, without
touching the host's /opt.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "systemd" / "table-controller.service"
INSTALL = REPO / "systemd" / "install.sh"


def _settings() -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for raw in UNIT.read_text().splitlines():
        line = raw.strip()
        if line and not line.startswith(("#", "[")) and "=" in line:
            key, _, value = line.partition("=")
            values.setdefault(key, []).append(value)
    return values


def test_unit_has_the_required_options() -> None:
    s = _settings()
    assert s["Type"] == ["notify"]
    assert s["Restart"] == ["on-failure"]
    assert s["WatchdogSec"] and s["WatchdogSec"][0].endswith("s")
    assert s["User"] == ["table-controller"]
    assert set(s["SupplementaryGroups"][0].split()) == {"dialout", "gpio"}
    assert s["StateDirectory"] == ["table-controller"]
    assert s["ExecStart"][0].startswith("/opt/table-controller/venv/bin/table-controller run ")
    assert "--state-dir /var/lib/table-controller" in s["ExecStart"][0]
    for key, value in (("ProtectSystem", "strict"), ("ProtectHome", "yes"),
                       ("PrivateTmp", "yes"), ("NoNewPrivileges", "yes"),
                       ("DevicePolicy", "closed")):
        assert s[key] == [value], key
    allowed = " ".join(s["DeviceAllow"])
    for device in ("char-ttyUSB", "char-ttyACM", "char-ttyAMA", "char-gpiochip", "/dev/gpiomem",
                   "/dev/hwrng"):
        assert device in allowed
    # These would hide or freeze what the serial ports and GPIO need (see the unit's comments).
    assert s.get("PrivateDevices", ["no"]) == ["no"]
    assert s.get("ProtectKernelTunables", ["no"]) == ["no"]
    assert "ProcSubset" not in s


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    stage = tmp_path_factory.mktemp("stage")
    env = dict(os.environ, PYTHON=sys.executable)
    result = subprocess.run(
        [str(INSTALL), "--profile", str(REPO / "hw_profiles" / "rpi4-paigow.toml"),
         "--extra", "pi", "--stage", str(stage)],
        capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return stage


def test_staged_install_runs_and_its_manifest_matches(staged: Path) -> None:
    opt = staged / "opt" / "table-controller"
    profile = staged / "etc" / "table-controller" / "profile.toml"
    assert (staged / "etc" / "table-controller" / "boards" / "rpi4-base.toml").is_file()
    check = subprocess.run([str(opt / "venv" / "bin" / "table-controller"), "check-profile",
                            str(profile)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr
    verify = subprocess.run([str(opt / "venv" / "bin" / "python"), "-m",
                             "controller.program.manifest",
                             "check", str(opt / "manifest.json"), "--profile-of", str(profile)],
                            capture_output=True, text=True, timeout=60)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "all files match" in verify.stdout


def test_the_service_user_is_given_the_hardware_generator(staged: Path) -> None:
    """/dev/hwrng is root-only on Raspberry Pi OS and Debian: the install gives the service's
    group read access, or the RNG's hardware health test could not run as the service user."""
    rule = (staged / "etc" / "udev" / "rules.d" / "60-table-controller-hwrng.rules").read_text()
    lines = [line for line in rule.splitlines() if line and not line.startswith("#")]
    assert lines == ['KERNEL=="hw_random", GROUP="table-controller", MODE="0440"']


def test_systemd_analyze_verify_passes_on_the_installed_program(staged: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is absent: install the Debian package 'systemd'")
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is absent: cannot show the staged /opt at /opt")
    script = ('mount --bind "$1" /opt && '
              'test -x /opt/table-controller/venv/bin/table-controller && '
              'exec systemd-analyze verify "$2"')
    result = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                             script, "sh", str(staged / "opt"), str(UNIT)],
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 0 and ("unshare failed" in result.stderr
                                   or "Operation not permitted" in result.stderr
                                   and "mount" in result.stderr):
        pytest.skip(f"no private mount namespace here (needs root): {result.stderr.strip()}")
    assert result.returncode == 0, result.stdout + result.stderr
    complaints = [line for line in (result.stdout + result.stderr).splitlines()
                  if "table-controller.service" in line]
    assert complaints == []


def test_the_scoreboard_drop_in_verifies_and_is_installed_only_when_served(
        staged: Path, tmp_path: Path) -> None:
    # rpi4-paigow does not serve the scoreboard ([scoreboard] enabled = false): no drop-in.
    assert not (staged / "etc" / "systemd" / "system" / "table-controller.service.d"
                / "scoreboard.conf").exists()
    if shutil.which("systemd-analyze") is None or shutil.which("unshare") is None:
        pytest.skip("systemd-analyze or unshare is absent")
    # The unit with the drop-in beside it (systemd-analyze reads NAME.service.d/ next to it).
    shutil.copy(UNIT, tmp_path / UNIT.name)
    (tmp_path / "table-controller.service.d").mkdir()
    shutil.copy(REPO / "systemd" / "table-controller.service.d" / "scoreboard.conf",
                tmp_path / "table-controller.service.d" / "scoreboard.conf")
    script = 'mount --bind "$1" /opt && exec systemd-analyze verify "$2"'
    result = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                             script, "sh", str(staged / "opt"), str(tmp_path / UNIT.name)],
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 0 and "unshare failed" in result.stderr:
        pytest.skip(f"no private mount namespace here: {result.stderr.strip()}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert [line for line in (result.stdout + result.stderr).splitlines()
            if "scoreboard.conf" in line or "table-controller.service" in line] == []
