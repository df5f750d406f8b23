"""The systemd unit: ``systemd-analyze verify`` against a real install of the program at the
path the unit names, and the options the issue requires (never a weakened unit).

The release is installed by ``systemd/install.sh --release ARTIFACT --stage DIR`` (run from
``/``, tests/integration/release.py); a private mount namespace then shows DIR/opt as /opt, so
the unit's ExecStart=/opt/table-controller/python/bin/python3.11 ... is the installed release,
without touching the host's /opt.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.integration.release import REPO, Staged, install

UNIT = REPO / "systemd" / "table-controller.service"


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
    # the release's interpreter, isolated (-I -S -B), running the release's entry point
    assert s["ExecStart"][0].startswith(
        "/opt/table-controller/python/bin/python3.11 -I -S -B -u"
        " /opt/table-controller/bin/table-controller run "
    )
    assert "--state-dir /var/lib/table-controller" in s["ExecStart"][0]
    assert not [e for e in s.get("Environment", []) if e.startswith(("PYTHON", "LD_"))]
    unset = " ".join(s["UnsetEnvironment"]).split()
    assert {"PYTHONPATH", "PYTHONHOME", "LD_PRELOAD", "LD_LIBRARY_PATH"} <= set(unset)
    for key, value in (
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("NoNewPrivileges", "yes"),
        ("DevicePolicy", "closed"),
    ):
        assert s[key] == [value], key
    allowed = " ".join(s["DeviceAllow"])
    for device in (
        "char-ttyUSB",
        "char-ttyACM",
        "char-ttyAMA",
        "char-gpiochip",
        "/dev/gpiomem",
        "/dev/hwrng",
    ):
        assert device in allowed
    # These would hide or freeze what the serial ports and GPIO need (see the unit's comments).
    assert s.get("PrivateDevices", ["no"]) == ["no"]
    assert s.get("ProtectKernelTunables", ["no"]) == ["no"]
    assert "ProcSubset" not in s


@pytest.fixture(scope="module")
def staged(release_artifact: Path, tmp_path_factory: pytest.TempPathFactory) -> Staged:
    return install(release_artifact, tmp_path_factory.mktemp("stage"), "rpi4-paigow")


def test_staged_install_runs_and_its_manifest_matches(staged: Staged) -> None:
    assert (staged.etc / "boards" / "rpi4-base.toml").is_file()
    check = staged.run("check-profile", str(staged.profile))
    assert check.returncode == 0, check.stderr
    verify = staged.run("manifest", "check", "--profile-of", str(staged.profile))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "all files match" in verify.stdout
    assert (staged.opt / "share" / "table-controller.service").read_bytes() == UNIT.read_bytes()


def test_the_service_user_is_given_the_hardware_generator(staged: Staged) -> None:
    """/dev/hwrng is root-only on Raspberry Pi OS and Debian: the install gives the service's
    group read access, or the RNG's hardware health test could not run as the service user."""
    rule = (
        staged.stage / "etc" / "udev" / "rules.d" / "60-table-controller-hwrng.rules"
    ).read_text()
    lines = [line for line in rule.splitlines() if line and not line.startswith("#")]
    assert lines == ['KERNEL=="hw_random", GROUP="table-controller", MODE="0440"']


def test_systemd_analyze_verify_passes_on_the_installed_program(staged: Staged) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is absent: install the Debian package 'systemd'")
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is absent: cannot show the staged /opt at /opt")
    script = (
        'mount --bind "$1" /opt && '
        "test -x /opt/table-controller/python/bin/python3.11 && "
        'exec systemd-analyze verify "$2"'
    )
    result = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            "sh",
            str(staged.stage / "opt"),
            str(UNIT),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode != 0 and (
        "unshare failed" in result.stderr
        or "Operation not permitted" in result.stderr
        and "mount" in result.stderr
    ):
        pytest.skip(f"no private mount namespace here (needs root): {result.stderr.strip()}")
    assert result.returncode == 0, result.stdout + result.stderr
    complaints = [
        line
        for line in (result.stdout + result.stderr).splitlines()
        if "table-controller.service" in line
    ]
    assert complaints == []


def test_the_scoreboard_drop_in_verifies_and_is_installed_only_when_served(
    staged: Staged, tmp_path: Path
) -> None:
    # rpi4-paigow does not serve the scoreboard ([scoreboard] enabled = false): no drop-in.
    assert not (
        staged.stage
        / "etc"
        / "systemd"
        / "system"
        / "table-controller.service.d"
        / "scoreboard.conf"
    ).exists()
    if shutil.which("systemd-analyze") is None or shutil.which("unshare") is None:
        pytest.skip("systemd-analyze or unshare is absent")
    # The unit with the drop-in beside it (systemd-analyze reads NAME.service.d/ next to it).
    shutil.copy(UNIT, tmp_path / UNIT.name)
    (tmp_path / "table-controller.service.d").mkdir()
    shutil.copy(
        REPO / "systemd" / "table-controller.service.d" / "scoreboard.conf",
        tmp_path / "table-controller.service.d" / "scoreboard.conf",
    )
    script = 'mount --bind "$1" /opt && exec systemd-analyze verify "$2"'
    result = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            "sh",
            str(staged.stage / "opt"),
            str(tmp_path / UNIT.name),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode != 0 and "unshare failed" in result.stderr:
        pytest.skip(f"no private mount namespace here: {result.stderr.strip()}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert [
        line
        for line in (result.stdout + result.stderr).splitlines()
        if "scoreboard.conf" in line or "table-controller.service" in line
    ] == []
