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
        "/dev/tpmrm0",
    ):
        assert device in allowed
    # Never gives up restarting: no start limit (a burst of failures would stop the table, and
    # its technician console with it, for good).
    assert s["StartLimitIntervalSec"] == ["0"]
    assert "StartLimitBurst" not in s
    # These would hide or freeze what the serial ports and GPIO need (see the unit's comments).
    assert s.get("PrivateDevices", ["no"]) == ["no"]
    assert s.get("ProtectKernelTunables", ["no"]) == ["no"]
    assert "ProcSubset" not in s


#: What each kind of device name a shipped Pi profile uses is, as the unit's DeviceAllow=
#: names it: the udev names /dev/tc-* are links to a USB adapter's ttyUSBn or ttyACMn; the Pi 4's
#: /dev/serial0 is a link to the PL011 (ttyAMA0) or the mini UART (ttyS0).
_LINKS = {
    "/dev/tc-shoe": ("char-ttyUSB", "char-ttyACM"),
    "/dev/tc-display": ("char-ttyUSB", "char-ttyACM"),
    "/dev/tc-console": ("char-ttyUSB", "char-ttyACM"),
    "/dev/serial0": ("char-ttyAMA", "char-ttyS"),
}


def _device_classes(path: str) -> tuple[str, ...]:
    """The DeviceAllow= entries that would let the service open ``path``."""
    if path in _LINKS:
        return _LINKS[path]
    for major in ("ttyUSB", "ttyACM", "ttyAMA", "ttyS"):
        if path.removeprefix("/dev/").rstrip("0123456789") == major:
            return (f"char-{major}",)
    return (path,)


def test_the_unit_allows_every_device_a_shipped_pi_profile_opens() -> None:
    """DevicePolicy=closed denies every device not named: a TPM variant (journal.counter on
    /dev/tpmrm0) would fail its journal at every start if the unit left its TPM out."""
    from controller.config.profile import load_profile

    allowed: dict[str, str] = {}
    for entry in _settings()["DeviceAllow"]:
        device, _, access = entry.partition(" ")
        allowed[device] = access
    opened: dict[str, str] = {}  # device -> the access the program needs
    profiles = sorted((REPO / "hw_profiles").glob("rpi*.toml"))
    assert any(p.name.endswith("-tpm.toml") for p in profiles)
    for path in profiles:
        profile = load_profile(path)
        opened[profile.console.port] = "rw"
        for port in (
            profile.shoe.port if profile.shoe else None,
            profile.dealer_display.port if profile.dealer_display else None,
            profile.display.port if profile.display else None,
        ):
            if port is not None:
                opened[port] = "rw"
        if profile.rng.hwrng_path is not None:
            opened[profile.rng.hwrng_path] = "r"
        if profile.journal.counter.startswith("device:"):
            opened[profile.journal.counter.removeprefix("device:")] = "rw"
    assert "/dev/tpmrm0" in opened  # the TPM variants' counter
    for device, access in opened.items():
        grants = [allowed[c] for c in _device_classes(device) if c in allowed]
        assert grants, f"{device}: the unit's DeviceAllow= does not name it"
        assert all(set(access) <= set(g) for g in grants), (device, access, grants)


WATCHDOG = REPO / "systemd" / "system.conf.d" / "60-table-controller-watchdog.conf"
SERIAL_RULES = REPO / "systemd" / "udev" / "70-table-controller-serial.rules"
#: The Raspberry Pi's watchdog (the kernel's bcm2835_wdt.c): a 20-bit count of 1/65536 s.
PI_WATCHDOG_MAX_S = 0xFFFFF >> 16


def _seconds(value: str) -> int:
    """A systemd time span of whole seconds or minutes (``14s``, ``2min``, ``14``)."""
    for suffix, factor in (("min", 60), ("s", 1), ("", 1)):
        if value.endswith(suffix) and value[: len(value) - len(suffix)].isdigit():
            return int(value[: len(value) - len(suffix)]) * factor
    raise ValueError(value)


def test_the_hardware_watchdog_is_armed_within_what_the_pi_can_count() -> None:
    """The unit's WatchdogSec only restarts the service; PID 1's RuntimeWatchdogSec pets the
    SoC's watchdog, so a hung kernel or PID 1 resets the board (off by default on Bookworm)."""
    lines = [ln.strip() for ln in WATCHDOG.read_text().splitlines()]
    assert "[Manager]" in lines
    (runtime,) = [ln.split("=", 1)[1] for ln in lines if ln.startswith("RuntimeWatchdogSec=")]
    assert 0 < _seconds(runtime) <= PI_WATCHDOG_MAX_S == 15


def test_the_serial_rules_name_each_role_by_usb_port_on_both_boards() -> None:
    rules = [ln for ln in SERIAL_RULES.read_text().splitlines() if ln and not ln.startswith("#")]
    named = [ln for ln in rules if "SYMLINK+=" in ln]
    for link in ("tc-shoe", "tc-display", "tc-console"):
        mine = [ln for ln in named if ln.endswith(f'SYMLINK+="{link}"')]
        assert len(mine) == 2, link  # a Pi 4 port and a Pi 5 port
        assert all(ln.startswith('ENV{ID_PATH}=="platform-') for ln in mine)
    paths = [ln.split('"')[1] for ln in named]
    assert len(set(paths)) == len(paths)  # one port, one role
    assert 'SUBSYSTEM!="tty", GOTO="table_controller_serial_end"' in rules


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


def test_the_install_ships_the_serial_names_and_arms_the_watchdog(staged: Staged) -> None:
    etc = staged.stage / "etc"
    assert (etc / "udev" / "rules.d" / SERIAL_RULES.name).read_bytes() == SERIAL_RULES.read_bytes()
    conf = etc / "systemd" / "system.conf.d" / WATCHDOG.name
    assert conf.read_bytes() == WATCHDOG.read_bytes()


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
