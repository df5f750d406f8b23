"""The certified random number generator that replaces the pai gow shaker (9 NYCRR 5324.50(a)(4)).

It selects a number from ``low`` through ``high`` (1 through 8 at the table) from the operating
system's CSPRNG, only once the kernel reports its generator initialised, and only while the
SP 800-90B health tests (:mod:`controller.rng.health`) pass on every byte it takes.

Scaling is fixed so a lab can replay raw bytes into outcomes (:func:`outcomes_from_raw`): with
``n = high - low + 1`` and ``k = (n - 1).bit_length()``, each attempt takes ``ceil(k / 8)`` bytes,
reads them big-endian, keeps the low ``k`` bits and rejects a value ``>= n``; the result is
``low + value``. Never modulo. When ``n == 1`` (``k == 0``) a draw takes no bytes and returns
``low``, but still refuses while the generator is in fault.

Faults latch: after a failed health test (or a source that errs or returns short), every draw
raises :class:`RngFault` until a technician runs :meth:`CertifiedRng.self_test` and it passes, then
:meth:`CertifiedRng.clear_fault`. Meanwhile the dealer falls back to dice (5324.50(a)(3)).
"""

from __future__ import annotations

import enum
import errno
import os
import select
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from controller.rng.health import (
    HWRNG_PARAMS,
    OS_SOURCE_PARAMS,
    STARTUP_SAMPLES,
    HealthMonitor,
    HealthParams,
    HealthTestFailure,
)

__all__ = [
    "RngError",
    "RngFault",
    "RngNotReady",
    "RngRangeError",
    "ByteSource",
    "HWRNG_DEFAULT_PATH",
    "CertifiedRng",
    "SelfTestReport",
    "kernel_rng_initialised",
    "readable_hwrng",
    "scaling_plan",
    "outcomes_from_raw",
]

ByteSource = Callable[[int], bytes]
"""Returns exactly the number of bytes asked for (``os.urandom`` is one)."""

HWRNG_DEFAULT_PATH: Final = "/dev/hwrng"

# Rejection is below 1/2 per attempt, so a healthy source needs more than 128 attempts with
# probability below 2**-128; a source that keeps producing rejected values is broken.
_MAX_ATTEMPTS: Final = 128
#: A hardware generator silent for longer than this is a fault. A slow one is waited for: a
#: VM's virtio-rng gives 3-9 kB/s in bursts, so the 1,024 start-up bytes may take a second, and a
#: pause of a second between bursts is normal; only silence this long means a dead generator.
HWRNG_SILENCE_S: Final = 10.0
#: How long a non-blocking read that found nothing waits before it asks again (a device with no
#: poll support, like /dev/hwrng, reports itself always ready).
_HWRNG_RETRY_S: Final = 0.005


class _Default(enum.Enum):
    HWRNG = "the board's /dev/hwrng when it exists"


class RngError(Exception):
    """Base class of every error raised by ``controller.rng.certified``."""


class RngFault(RngError, RuntimeError):
    """The generator cannot draw: a health test failed, or the source failed.

    Latched: every later draw raises it too, until :meth:`CertifiedRng.clear_fault` succeeds.
    ``reason`` says what failed, for the journal and the console.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RngNotReady(RngFault):
    """The kernel's generator is not initialised yet. Not latched: the next draw tries again."""


class RngRangeError(RngError, ValueError):
    """``draw(low, high)`` with ``high < low``: a programming error, not a fault."""


def kernel_rng_initialised() -> bool:
    """True once the kernel's CSPRNG is initialised (Linux ``getrandom`` without blocking).

    Where ``os.getrandom`` does not exist (not Linux), ``os.urandom`` itself blocks until the
    system generator is seeded, so there is nothing to wait for.
    """
    getrandom = getattr(os, "getrandom", None)
    if getrandom is None:
        return True
    try:
        getrandom(1, os.GRND_NONBLOCK)
    except BlockingIOError:
        return False
    return True


@dataclass(frozen=True)
class _Plan:
    low: int
    n: int
    nbytes: int
    mask: int

    def value_of(self, chunk: bytes) -> int | None:
        """The outcome one attempt's bytes give, or None when the attempt is rejected."""
        value = int.from_bytes(chunk, "big") & self.mask
        return self.low + value if value < self.n else None


def scaling_plan(low: int, high: int) -> tuple[int, int]:
    """``(k, bytes per attempt)`` for a draw from ``low`` through ``high``."""
    plan = _plan(low, high)
    return plan.mask.bit_length(), plan.nbytes


@lru_cache(maxsize=64, typed=True)  # typed: True must not hit the cached plan of 1
def _plan(low: int, high: int) -> _Plan:
    if isinstance(low, bool) or isinstance(high, bool):
        raise RngRangeError(f"draw bounds must be integers, got {low!r}, {high!r}")
    if not isinstance(low, int) or not isinstance(high, int):
        raise RngRangeError(f"draw bounds must be integers, got {low!r}, {high!r}")
    if high < low:
        raise RngRangeError(f"empty range: high {high} < low {low}")
    n = high - low + 1
    k = (n - 1).bit_length()
    return _Plan(low=low, n=n, nbytes=(k + 7) // 8, mask=(1 << k) - 1)


def outcomes_from_raw(raw: bytes, low: int = 1, high: int = 8) -> list[int]:
    """Replay raw source bytes into outcomes exactly as :meth:`CertifiedRng.draw` scales them.

    ``raw`` must end on a draw's last byte (a capture of whole draws); otherwise ValueError.
    """
    plan = _plan(low, high)
    if plan.nbytes == 0:
        raise ValueError("a range of one value consumes no bytes: nothing to replay")
    outcomes: list[int] = []
    pending = False
    for start in range(0, len(raw) - plan.nbytes + 1, plan.nbytes):
        value = plan.value_of(raw[start : start + plan.nbytes])
        pending = value is None
        if value is not None:
            outcomes.append(value)
    if pending or len(raw) % plan.nbytes:
        raise ValueError("raw bytes end in the middle of a draw")
    return outcomes


@dataclass(frozen=True)
class SelfTestReport:
    """Result of :meth:`CertifiedRng.self_test`: the start-up health test run afresh."""

    passed: bool
    samples: int
    monitors: tuple[str, ...]
    failure: str | None

    def format(self) -> str:
        verdict = "PASS" if self.passed else f"FAIL: {self.failure}"
        return f"RNG self-test over {self.samples} samples of {', '.join(self.monitors)}: {verdict}"


class _HwrngFile:
    """Reads the hardware generator's device: a slow generator is waited for, a silent one is
    an error after ``silence_s`` without a byte, an unreadable one names the fix."""

    def __init__(self, path: str, silence_s: float = HWRNG_SILENCE_S) -> None:
        self.path = path
        self._silence_s = silence_s
        self._fd: int | None = None

    def _open(self) -> int:
        try:
            return os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except PermissionError as exc:
            raise OSError(
                exc.errno,
                f"cannot read {self.path} as user {_user()}: permission "
                "denied (give the service user read access: "
                "systemd/install.sh installs a udev rule)",
                self.path,
            ) from None

    def __call__(self, count: int) -> bytes:
        if self._fd is None:
            self._fd = self._open()
        data = bytearray()
        deadline = time.monotonic() + self._silence_s
        while len(data) < count:
            left = deadline - time.monotonic()
            if left <= 0:
                raise OSError(
                    errno.ETIMEDOUT,
                    f"{self.path} gave no data for {self._silence_s:g} s",
                    self.path,
                )
            ready, _, _ = select.select([self._fd], [], [], left)
            if not ready:
                continue
            try:
                chunk = os.read(self._fd, count - len(data))
            except BlockingIOError:
                chunk = b""
            if not chunk:
                time.sleep(min(_HWRNG_RETRY_S, max(0.0, left)))
                continue
            data += chunk
            deadline = time.monotonic() + self._silence_s  # slow is fine; silent is not
        return bytes(data)


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return str(os.geteuid())


def readable_hwrng(path: str = HWRNG_DEFAULT_PATH) -> tuple[str | None, str]:
    """The board's generator to monitor by default: ``(path, note)`` when this user can read it,
    ``(None, why not)`` when it is absent or unreadable (then only the kernel's generator is
    tested; a profile that names ``rng.hwrng_path`` makes an unreadable one a fault)."""
    if not os.path.exists(path):
        return None, f"no {path} on this machine"
    if not os.access(path, os.R_OK):
        return None, (
            f"{path} is not readable by user {_user()}: not monitored (name it in "
            "the profile's rng.hwrng_path to make that a fault)"
        )
    return path, f"{path} monitored"


class CertifiedRng:
    """Draws uniform integers for the table, with SP 800-90B health tests and a latched fault.

    ``source`` is the byte source draws come from (``os.urandom``). ``hwrng_path`` is the board's
    hardware generator whose raw output is health-tested alongside (never used for draws): by
    default ``/dev/hwrng`` when it exists, ``None`` for none; ``hwrng_reader`` replaces the device
    read (tests). ``entropy_ready`` reports whether the kernel's generator is initialised.

    One lock serialises draws, self-tests and clears, so a console thread cannot interleave with
    the table's draw.
    """

    def __init__(
        self,
        source: ByteSource = os.urandom,
        *,
        hwrng_path: str | None | _Default = _Default.HWRNG,
        hwrng_reader: ByteSource | None = None,
        hwrng_silence_s: float = HWRNG_SILENCE_S,
        entropy_ready: Callable[[], bool] = kernel_rng_initialised,
        source_health: HealthParams = OS_SOURCE_PARAMS,
        hwrng_health: HealthParams = HWRNG_PARAMS,
        startup_samples: int = STARTUP_SAMPLES,
    ) -> None:
        if startup_samples < STARTUP_SAMPLES:
            raise ValueError(f"SP 800-90B 4.3: start-up test needs >= {STARTUP_SAMPLES} samples")
        self.hwrng_note = "hardware generator not monitored"
        if hwrng_path is _Default.HWRNG:
            hwrng_path, self.hwrng_note = readable_hwrng(HWRNG_DEFAULT_PATH)
        elif isinstance(hwrng_path, str):
            self.hwrng_note = f"{hwrng_path} monitored"
        if hwrng_reader is None and isinstance(hwrng_path, str):
            hwrng_reader = _HwrngFile(hwrng_path, hwrng_silence_s)
        elif hwrng_reader is not None and not isinstance(hwrng_path, str):
            self.hwrng_note = "hardware generator (a given reader) monitored"
        self._source = source
        self._hwrng = hwrng_reader
        self._entropy_ready = entropy_ready
        self._startup_samples = startup_samples
        self._source_monitor = HealthMonitor("kernel CSPRNG", source_health)
        self._hwrng_monitor = (
            HealthMonitor("hardware RNG", hwrng_health) if hwrng_reader is not None else None
        )
        self._lock = threading.Lock()
        self._kernel_ready = False
        self._started = False  # the start-up test has passed since construction
        self._fault: str | None = None
        self._fault_epoch = 0
        self._self_test_passed_epoch = -1
        self._last_raw = b""

    # -- status -------------------------------------------------------------------------------

    @property
    def faulted(self) -> bool:
        return self._fault is not None

    @property
    def fault_reason(self) -> str | None:
        return self._fault

    @property
    def monitors_hwrng(self) -> bool:
        return self._hwrng_monitor is not None

    @property
    def last_raw(self) -> bytes:
        """Raw source bytes the last successful draw consumed (every attempt, rejected ones too)."""
        return self._last_raw

    # -- drawing --------------------------------------------------------------------------------

    def draw(self, low: int = 1, high: int = 8) -> int:
        """A uniform integer from ``low`` through ``high`` inclusive. Raises :class:`RngFault`."""
        return self.draw_with_raw(low, high)[0]

    def draw_with_raw(self, low: int = 1, high: int = 8) -> tuple[int, bytes]:
        """``(value, raw bytes consumed)``: the raw bytes go to the journal so a lab can replay."""
        plan = _plan(low, high)
        with self._lock:
            self._ready_to_draw()
            if plan.nbytes == 0:
                self._last_raw = b""
                return low, b""
            raw = bytearray()
            for _ in range(_MAX_ATTEMPTS):
                chunk = self._take(plan.nbytes)
                raw += chunk
                value = plan.value_of(chunk)
                if value is not None:
                    self._monitor_hwrng(len(raw))
                    self._last_raw = bytes(raw)
                    return value, self._last_raw
            raise self._latch(f"{_MAX_ATTEMPTS} attempts in a row rejected: the source is broken")

    def read_raw(self, count: int) -> bytes:
        """``count`` health-tested bytes of the source, before any scaling (lab capture)."""
        if count < 0:
            raise ValueError(f"byte count must be >= 0, got {count}")
        with self._lock:
            self._ready_to_draw()
            data = self._take(count)
            self._monitor_hwrng(count)
            return data

    # -- technician -----------------------------------------------------------------------------

    def self_test(self) -> SelfTestReport:
        """Run the start-up health test afresh on every monitored source.

        A failure latches the fault (if not already latched). A pass does not clear a fault by
        itself; it allows :meth:`clear_fault`. Raises :class:`RngNotReady` (and latches nothing)
        while the kernel's generator is not initialised.
        """
        with self._lock:
            self._check_kernel_ready()
            return self._run_startup_test()

    def clear_fault(self) -> None:
        """Leave the fault state; only after a passing :meth:`self_test` run since the fault.

        The console must let only a logged-in technician call this. Raises :class:`RngFault` when
        no self-test has passed since the fault was latched.
        """
        with self._lock:
            if self._fault is None:
                return
            if self._self_test_passed_epoch != self._fault_epoch:
                raise RngFault(
                    f"cannot clear the RNG fault ({self._fault}): run a self-test that passes first"
                )
            self._fault = None

    # -- internals (called with the lock held) ---------------------------------------------------

    def _ready_to_draw(self) -> None:
        if self._fault is not None:
            raise RngFault(
                f"RNG in fault: {self._fault}; a technician must run a passing self-test "
                "and clear the fault"
            )
        self._check_kernel_ready()
        if not self._started:
            report = self._run_startup_test()
            if not report.passed:
                raise RngFault(f"RNG start-up test failed: {report.failure}")

    def _check_kernel_ready(self) -> None:
        if not self._kernel_ready:
            if not self._entropy_ready():
                raise RngNotReady("the kernel's random number generator is not initialised yet")
            self._kernel_ready = True

    def _latch(self, reason: str) -> RngFault:
        if self._fault is None:
            self._fault = reason
            self._fault_epoch += 1
        return RngFault(reason)

    def _run_startup_test(self) -> SelfTestReport:
        monitors: list[tuple[HealthMonitor, ByteSource]] = [(self._source_monitor, self._source)]
        if self._hwrng_monitor is not None and self._hwrng is not None:
            monitors.append((self._hwrng_monitor, self._hwrng))
        names = tuple(monitor.name for monitor, _ in monitors)
        failure: str | None = None
        for monitor, read in monitors:
            monitor.reset()
            try:
                # Start-up samples are tested and discarded, never drawn from.
                monitor.feed(_read_exact(read, self._startup_samples, monitor.name))
            except (HealthTestFailure, OSError) as exc:
                failure = _reason(exc)
                break
        if failure is not None:
            self._started = False
            self._latch(f"self-test failed: {failure}")
            return SelfTestReport(False, self._startup_samples, names, failure)
        self._started = True
        self._self_test_passed_epoch = self._fault_epoch
        return SelfTestReport(True, self._startup_samples, names, None)

    def _take(self, count: int) -> bytes:
        try:
            data = _read_exact(self._source, count, self._source_monitor.name)
            self._source_monitor.feed(data)
        except (HealthTestFailure, OSError) as exc:
            raise self._latch(_reason(exc)) from exc
        return data

    def _monitor_hwrng(self, count: int) -> None:
        """Test as many of the hardware generator's raw bytes as the draw took from the source."""
        if self._hwrng_monitor is None or self._hwrng is None:
            return
        try:
            self._hwrng_monitor.feed(_read_exact(self._hwrng, count, self._hwrng_monitor.name))
        except (HealthTestFailure, OSError) as exc:
            raise self._latch(_reason(exc)) from exc


def _reason(exc: BaseException) -> str:
    """What failed, for the journal and the console: an OSError's own words, without the
    ``[Errno N]`` and file name Python adds around them."""
    if isinstance(exc, OSError) and exc.strerror:
        return str(exc.strerror)
    return str(exc)


def _read_exact(read: ByteSource, count: int, name: str) -> bytes:
    data = read(count)
    if not isinstance(data, bytes | bytearray) or len(data) != count:
        got = len(data) if isinstance(data, bytes | bytearray) else type(data).__name__
        raise OSError(errno.EIO, f"{name}: asked for {count} bytes, got {got}")
    return bytes(data)
