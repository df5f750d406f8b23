"""A slow or silent hardware generator, and one the service user cannot read (issue 15).

A VM's virtio-rng gives 3-9 kB/s in bursts; the start-up test used to give up after 0.5 s
without data and the table fell to dice mode about one start in five. The generator is modelled
here by a FIFO a writer thread feeds at that pace, with pauses: a slow source is waited for, and
only silence longer than the bound is a fault."""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.rng.certified import HWRNG_SILENCE_S, CertifiedRng, RngFault, readable_hwrng
from controller.rng.health import STARTUP_SAMPLES
from tests.unit.rng.sources import SlowGenerator


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[list[SlowGenerator]]:
    made: list[SlowGenerator] = []
    yield made
    for gen in made:
        gen.close()


def rng_on(path: Path, **kwargs: float) -> CertifiedRng:
    return CertifiedRng(os.urandom, hwrng_path=str(path), entropy_ready=lambda: True, **kwargs)


def test_a_slow_generator_with_a_pause_passes_the_start_up_test(
    tmp_path: Path, fifo: list[SlowGenerator]
) -> None:
    # 3.2 kB/s, and a 1.5 s pause in the middle of the 1,024 start-up bytes (three times the
    # 0.5 s that used to be a fault)
    fifo.append(SlowGenerator(tmp_path / "hwrng", pause_after=512, pause_s=1.5))
    rng = rng_on(tmp_path / "hwrng")
    started = time.monotonic()
    report = rng.self_test()
    assert report.passed, report.failure
    assert time.monotonic() - started >= 1.5
    assert "hardware RNG" in report.monitors and not rng.faulted
    assert 1 <= rng.draw() <= 8  # a draw reads and tests hardware bytes too


def test_a_silent_generator_is_a_fault_after_the_silence_bound(
    tmp_path: Path, fifo: list[SlowGenerator]
) -> None:
    fifo.append(SlowGenerator(tmp_path / "hwrng", stop_after=256))
    rng = rng_on(tmp_path / "hwrng", hwrng_silence_s=0.5)
    report = rng.self_test()
    assert not report.passed
    assert report.failure is not None and "gave no data for 0.5 s" in report.failure
    assert rng.faulted
    with pytest.raises(RngFault):
        rng.draw()


def test_the_silence_bound_is_ten_seconds() -> None:
    """Issue 15: only a failed health test, or a source silent for more than 10 s, is a fault."""
    assert HWRNG_SILENCE_S == 10.0


def test_a_slow_generator_never_latches_a_fault_during_a_long_capture(
    tmp_path: Path, fifo: list[SlowGenerator]
) -> None:
    from controller.rng import lab

    fifo.append(
        SlowGenerator(
            tmp_path / "hwrng",
            burst=32,
            every_s=0.01,
            pause_after=STARTUP_SAMPLES + 1000,
            pause_s=1.2,
        )
    )
    rng = rng_on(tmp_path / "hwrng")
    seen: list[tuple[int, int]] = []
    lab.capture_raw(rng, 3000, tmp_path / "raw.bin", progress=lambda d, t: seen.append((d, t)))
    assert (tmp_path / "raw.bin").stat().st_size == 3000 and not rng.faulted
    assert seen and seen[-1][1] == 3000


# -- as the service user ---------------------------------------------------------------------

_CHECK = """
import sys
from controller.rng.certified import CertifiedRng, readable_hwrng
path = sys.argv[1]
found, note = readable_hwrng(path)
print("default:", found, "|", note)
rng = CertifiedRng(hwrng_path=path)
report = rng.self_test()
print("named:", report.passed, report.failure)
"""


def _as_service_user() -> tuple[dict[str, object], str]:
    """Run as an unprivileged user: ``nobody`` when the tests run as root, else ourselves."""
    if os.geteuid() != 0:
        return {}, pwd.getpwuid(os.geteuid()).pw_name
    nobody = pwd.getpwnam("nobody")
    return {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}, "nobody"


def _service_python() -> str:
    """A Python the service user may run: the virtual environment's may live under /root."""
    if os.geteuid() != 0:
        return sys.executable
    system = "/usr/bin/python3"
    assert os.path.exists(system), "no /usr/bin/python3 to run the check as user nobody"
    return system


def _readable_copy_of_the_program() -> Iterator[Path]:
    """The ``controller`` package copied to a temporary folder anyone may read: the checkout
    may be one ``nobody`` cannot enter (a clone in /root or in a 0700 directory)."""
    repo = Path(__file__).resolve().parents[3]
    folder = Path(tempfile.mkdtemp(prefix="tc-program-"))
    try:
        shutil.copytree(
            repo / "controller", folder / "controller", ignore=shutil.ignore_patterns("__pycache__")
        )
        for dirpath, _dirs, files in os.walk(folder):
            os.chmod(dirpath, 0o755)
            for name in files:
                os.chmod(os.path.join(dirpath, name), 0o644)
        blocked = [str(p) for p in folder.parents if not p.stat().st_mode & stat.S_IXOTH]
        if blocked and os.geteuid() == 0:
            pytest.skip(
                f"the temporary folder {folder} is under {blocked[0]}, which user"
                " nobody cannot enter (set TMPDIR to a folder anyone may traverse)"
            )
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run_check(device: str) -> str:
    how, _user = _as_service_user()
    for program in _readable_copy_of_the_program():
        result = subprocess.run(
            [_service_python(), "-B", "-c", _CHECK, device],
            capture_output=True,
            text=True,
            timeout=60,
            cwd="/",
            env={"PYTHONPATH": str(program), "PATH": os.environ.get("PATH", "")},
            **how,
        )  # type: ignore[call-overload]
    assert result.returncode == 0, result.stderr
    return result.stdout


def _root_only_device() -> Iterator[str]:
    folder = tempfile.mkdtemp(prefix="hwrng-")
    os.chmod(folder, 0o755)
    path = os.path.join(folder, "hwrng")
    with open(path, "wb") as fh:
        fh.write(os.urandom(4096))
    os.chmod(path, 0o600)
    try:
        yield path
    finally:
        os.unlink(path)
        os.rmdir(folder)


def test_as_the_service_user_an_unreadable_generator_is_named_not_a_silent_fault() -> None:
    """/dev/hwrng is root-only on Debian and Raspberry Pi OS. As the service user, the default
    leaves it unmonitored and says why; a profile that names it gets a fault naming the fix."""
    if os.geteuid() != 0 and os.access("/dev/hwrng", os.R_OK):
        pytest.skip("this user can read /dev/hwrng: nothing to check as the service user")
    for device in _root_only_device():
        _how, user = _as_service_user()
        out = _run_check(device)
        assert f"default: None | {device} is not readable by user {user}" in out
        assert f"named: False cannot read {device} as user {user}: permission denied" in out
        assert "udev rule" in out


def test_the_real_device_as_the_service_user() -> None:
    if not os.path.exists("/dev/hwrng"):
        pytest.skip("no /dev/hwrng on this machine")
    mode = os.stat("/dev/hwrng").st_mode
    out = _run_check("/dev/hwrng")
    if mode & stat.S_IROTH:
        assert "named: True" in out
    else:
        assert "default: None | /dev/hwrng is not readable" in out
        assert "named: False cannot read /dev/hwrng" in out


def test_readable_default_when_present_and_readable(tmp_path: Path) -> None:
    device = tmp_path / "hwrng"
    device.write_bytes(os.urandom(2048))
    assert readable_hwrng(str(device)) == (str(device), f"{device} monitored")
    assert readable_hwrng(str(tmp_path / "none"))[0] is None
