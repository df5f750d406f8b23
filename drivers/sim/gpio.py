"""SimGPIO: a simulated twin of the ``RPi.GPIO`` module, so the real driver code runs in tests.

It implements the calls the drivers use with RPi.GPIO's constants, argument checks and error
types/messages for misuse (RPi.GPIO 0.7.x ``source/py_gpio.c``, ``event_gpio.c``).  Time comes
from an injectable ``SimClock`` so bouncetime handling is deterministic.

Debounce (``bouncetime``) behaves as one of the two libraries that provide the ``RPi.GPIO``
module, chosen by name (:data:`DEBOUNCE_MODES`, the profile's ``gpio_sim_debounce``):

- ``"rpi-lgpio"`` (the default; the release ships rpi-lgpio): an edge is reported only once the
  line has been stable for ``bouncetime`` ms, so a press arrives one debounce period after the
  contact settles and a pulse shorter than ``bouncetime`` is never reported (rpi-lgpio
  ``docs/differences.rst``, "Debounce"). The report is made when the clock reaches that moment
  (:meth:`SimClock.advance` stops there), on the thread that advances the clock.
- ``"rpi-gpio"`` (RPi.GPIO 0.7.x ``event_gpio.c``): the first edge is reported at once, then
  every edge within ``bouncetime`` ms of the last reported one is dropped.

Test-side stimulus (``drive``, ``release``, ``bounce``, ``level``, ``history``, ``function``) lives
on this object only; production code must never call it.  Edge callbacks run synchronously on
the thread that calls ``drive``/``bounce`` (RPi.GPIO runs them on its own event thread); an
exception raised by a callback propagates to the test instead of being printed and dropped.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol

from drivers.errors import PinError

__all__ = ["DEBOUNCE_MODES", "ClockWatcher", "DebounceMode", "PinChange", "SimClock", "SimGPIO"]

DebounceMode = Literal["rpi-lgpio", "rpi-gpio"]
#: The debounce behaviours the twin offers, the release's first (rpi-lgpio, arm64 release).
DEBOUNCE_MODES: Final[tuple[DebounceMode, ...]] = ("rpi-lgpio", "rpi-gpio")

_NS_PER_MS = 1_000_000

# RPi.GPIO BOARD numbering: physical header pin -> BCM number (40-pin header, rev 2+ boards).
_BOARD_TO_BCM: dict[int, int] = {
    3: 2,
    5: 3,
    7: 4,
    8: 14,
    10: 15,
    11: 17,
    12: 18,
    13: 27,
    15: 22,
    16: 23,
    18: 24,
    19: 10,
    21: 9,
    22: 25,
    23: 11,
    24: 8,
    26: 7,
    27: 0,
    28: 1,
    29: 5,
    31: 6,
    32: 12,
    33: 13,
    35: 19,
    36: 16,
    37: 26,
    38: 20,
    40: 21,
}
_BCM_MAX = 53  # RPi.GPIO accepts BCM 0-53 (the SoC's GPIO bank), not only header pins.

_MSG_NO_MODE = (
    "Please set pin numbering mode using GPIO.setmode(GPIO.BOARD) or GPIO.setmode(GPIO.BCM)"
)
_MSG_BAD_CHANNEL = "The channel sent is invalid on a Raspberry Pi"
_MSG_CHANNEL_TYPE = "Channel must be an integer or list/tuple of integers"


class ClockWatcher(Protocol):
    """Something that acts at a moment of the simulated clock (rpi-lgpio's debounce)."""

    def next_due_ns(self) -> int | None:
        """The earliest moment it must act at, or None."""
        ...

    def run_due(self, now_ns: int) -> None:
        """Act on everything due at or before ``now_ns``."""
        ...


class SimClock:
    """A monotonic nanosecond clock that only moves when a test advances it.

    A watcher (:meth:`watch`) is run at each moment it is due: :meth:`advance` stops there on
    its way, so what it reports carries that moment's time, not the end of the step.
    """

    def __init__(self, start_ns: int = 1_000_000_000) -> None:
        self._now_ns = start_ns
        self._lock = threading.Lock()
        self._watchers: list[ClockWatcher] = []

    def watch(self, watcher: ClockWatcher) -> None:
        """Run ``watcher`` whenever the clock reaches a moment it is due at."""
        with self._lock:
            self._watchers.append(watcher)

    def monotonic_ns(self) -> int:
        """Current time in nanoseconds, like ``time.monotonic_ns``."""
        with self._lock:
            return self._now_ns

    def advance(self, ms: float) -> None:
        """Move time forward by ``ms`` milliseconds (never backwards)."""
        if ms < 0:
            raise ValueError(f"cannot move the clock backwards ({ms} ms)")
        with self._lock:
            target = self._now_ns + round(ms * _NS_PER_MS)
            watchers = list(self._watchers)
        # A watcher may schedule more (a callback drives a pin): bounded, each step moves on or
        # clears what was due.
        for _ in range(100_000):
            dues = [d for w in watchers if (d := w.next_due_ns()) is not None]
            if not dues or min(dues) > target:
                break
            with self._lock:
                self._now_ns = max(self._now_ns, min(dues))
                now = self._now_ns
            for w in watchers:
                w.run_due(now)
        with self._lock:
            self._now_ns = max(self._now_ns, target)


#: Output changes kept per pin: the twin runs for days in a soak or a sim table, so its record
#: of what was written keeps only the newest ones (an unbounded list grew ~8 kB a pai gow round).
HISTORY_MAX = 4096


@dataclass(frozen=True)
class PinChange:
    """One level written to an output pin, for ``SimGPIO.history``."""

    monotonic_ns: int
    level: int


@dataclass
class _Channel:
    function: int | None = None  # None: never set up (or cleaned up)
    pull: int = 20  # PUD_OFF
    out_level: int = 0
    external: int | None = None  # level a test drives onto the pin, None when released
    edge: int | None = None
    bouncetime_ms: int | None = None
    callbacks: list[Callable[[int], object]] = field(default_factory=list)
    last_call_ns: int = 0
    event_flag: bool = False
    history: list[PinChange] = field(default_factory=list)
    # rpi-lgpio's debounce: the level last reported, and when the line last changed (None: no
    # change waiting to be reported)
    stable_level: int = 0
    changed_ns: int | None = None


class SimGPIO:
    """The ``RPi.GPIO`` API over simulated pins (one instance is one fresh board)."""

    # Same values as RPi.GPIO so code comparing against literals behaves the same.
    LOW = 0
    HIGH = 1
    OUT = 0
    IN = 1
    BOARD = 10
    BCM = 11
    PUD_OFF = 20
    PUD_DOWN = 21
    PUD_UP = 22
    RISING = 31
    FALLING = 32
    BOTH = 33

    def __init__(self, clock: SimClock | None = None, debounce: DebounceMode = "rpi-lgpio") -> None:
        if debounce not in DEBOUNCE_MODES:
            raise PinError(f"debounce must be one of {DEBOUNCE_MODES}, not {debounce!r}")
        self.clock = clock if clock is not None else SimClock()
        self.debounce: DebounceMode = debounce
        self._mode: int | None = None
        self._warnings = True
        self._channels: dict[int, _Channel] = {}
        self._lock = threading.RLock()
        if debounce == "rpi-lgpio":
            self.clock.watch(self)

    # ----------------------------------------------------------------- RPi.GPIO API
    def setmode(self, mode: int) -> None:
        """Choose BOARD or BCM numbering; a different mode than the one set is an error."""
        if mode not in (self.BOARD, self.BCM):
            raise ValueError("An invalid mode was passed to setmode()")
        with self._lock:
            if self._mode is not None and self._mode != mode:
                raise ValueError("A different mode has already been set!")
            self._mode = mode

    def getmode(self) -> int | None:
        """The numbering mode set, or None."""
        return self._mode

    def setwarnings(self, flag: bool) -> None:
        """Enable or disable the 'channel already in use' RuntimeWarning."""
        self._warnings = bool(flag)

    def setup(
        self,
        channel: int | Sequence[int],
        direction: int,
        pull_up_down: int = PUD_OFF,
        initial: int = -1,
    ) -> None:
        """Configure one channel or a list of channels as input or output."""
        with self._lock:
            bcms = self._resolve_many(channel)
            if direction not in (self.IN, self.OUT):
                raise ValueError("An invalid direction was passed to setup()")
            if direction == self.OUT and pull_up_down != self.PUD_OFF:
                raise ValueError("pull_up_down parameter is not valid for outputs")
            if direction == self.IN and initial != -1:
                raise ValueError("initial parameter is not valid for inputs")
            if pull_up_down not in (self.PUD_OFF, self.PUD_UP, self.PUD_DOWN):
                raise ValueError(
                    "Invalid value for pull_up_down - should be either PUD_OFF, PUD_UP or PUD_DOWN"
                )
            for bcm in bcms:
                ch = self._channels.setdefault(bcm, _Channel())
                if self._warnings and ch.function is not None:
                    warnings.warn(
                        "This channel is already in use, continuing anyway.  "
                        "Use GPIO.setwarnings(False) to disable warnings.",
                        RuntimeWarning,
                        stacklevel=2,
                    )
                if ch.edge is not None:
                    # RPi.GPIO drops edge detection when a channel is set up again.
                    self._remove_edge(ch)
                ch.function = direction
                ch.pull = pull_up_down
                if direction == self.OUT:
                    ch.out_level = 1 if initial not in (-1, 0) else 0
                    if initial != -1:
                        self._record(ch)

    def output(self, channel: int | Sequence[int], value: int | bool | Sequence[int]) -> None:
        """Write a level to output channel(s); a channel not set up as output is an error."""
        with self._lock:
            bcms = self._resolve_many(channel)
            values = self._values_for(bcms, value)
            for bcm in bcms:
                ch = self._channels.get(bcm)
                if ch is None or ch.function != self.OUT:
                    raise RuntimeError("The GPIO channel has not been set up as an OUTPUT")
            for bcm, v in zip(bcms, values, strict=True):
                ch = self._channels[bcm]
                ch.out_level = 1 if v else 0
                self._record(ch)

    def input(self, channel: int) -> int:
        """Read a channel's level (an output reads back the level last written)."""
        with self._lock:
            bcm = self._resolve(channel)
            ch = self._channels.get(bcm)
            if ch is None or ch.function is None:
                raise RuntimeError("You must setup() the GPIO channel first")
            return self._level_of(ch)

    def add_event_detect(
        self,
        channel: int,
        edge: int,
        callback: Callable[[int], object] | None = None,
        bouncetime: int | None = None,
    ) -> None:
        """Watch an input channel for RISING/FALLING/BOTH edges (software bouncetime in ms)."""
        with self._lock:
            bcm = self._resolve(channel)
            ch = self._channels.get(bcm)
            if ch is None or ch.function != self.IN:
                raise RuntimeError("You must setup() the GPIO channel as an input first")
            if edge not in (self.RISING, self.FALLING, self.BOTH):
                raise ValueError("The edge must be set to RISING, FALLING or BOTH")
            if bouncetime is not None and bouncetime <= 0:
                raise ValueError("Bouncetime must be greater than 0")
            if ch.edge is not None:
                raise RuntimeError(
                    "Conflicting edge detection already enabled for this GPIO channel"
                )
            ch.edge = edge
            ch.bouncetime_ms = bouncetime
            ch.last_call_ns = 0
            ch.event_flag = False
            ch.stable_level = self._level_of(ch)
            ch.changed_ns = None
            ch.callbacks = [callback] if callback is not None else []

    def add_event_callback(self, channel: int, callback: Callable[[int], object]) -> None:
        """Add another callback to a channel that already has edge detection."""
        with self._lock:
            ch = self._channels.get(self._resolve(channel))
            if ch is None or ch.edge is None:
                raise RuntimeError(
                    "Add event detection using add_event_detect first before adding a callback"
                )
            ch.callbacks.append(callback)

    def remove_event_detect(self, channel: int) -> None:
        """Stop watching a channel for edges."""
        with self._lock:
            ch = self._channels.get(self._resolve(channel))
            if ch is not None:
                self._remove_edge(ch)

    def event_detected(self, channel: int) -> bool:
        """True once after an accepted edge on the channel (then the flag clears)."""
        with self._lock:
            ch = self._channels.get(self._resolve(channel))
            if ch is None:
                return False
            flag, ch.event_flag = ch.event_flag, False
            return flag

    def cleanup(self, channel: int | Sequence[int] | None = None) -> None:
        """Return channel(s), or every channel and the numbering mode, to the power-on state."""
        with self._lock:
            if channel is None:
                for each in self._channels.values():
                    self._reset(each)
                self._mode = None
                return
            for bcm in self._resolve_many(channel):
                ch = self._channels.get(bcm)
                if ch is not None:
                    self._reset(ch)

    # ------------------------------------------------------------- test-side stimulus
    def drive(self, pin: int, level: int) -> None:
        """Drive ``pin`` (BCM) to ``level`` from outside, firing edge callbacks like hardware."""
        if level not in (0, 1):
            raise PinError(f"level must be 0 or 1, not {level!r}")
        with self._lock:
            ch = self._sim_channel(pin)
            if ch.function == self.OUT:
                raise PinError(f"BCM {pin} is an output: driving it from outside is a short")
            before = self._level_of(ch) if ch.function is not None else None
            ch.external = level
            callbacks = self._edge_callbacks(ch, before, level)
        self._fire(pin, callbacks)

    def release(self, pin: int) -> None:
        """Stop driving ``pin``; it falls back to its pull resistor."""
        with self._lock:
            ch = self._sim_channel(pin)
            before = self._level_of(ch) if ch.function is not None else None
            ch.external = None
            after = self._level_of(ch)
            callbacks = self._edge_callbacks(ch, before, after)
        self._fire(pin, callbacks)

    def bounce(self, pin: int, final: int, transitions: int = 5, interval_ms: float = 1.0) -> None:
        """Simulate a bouncing contact settling at ``final``.

        The pin toggles ``transitions`` times (odd counts end at ``final``; the first toggle goes
        away from the current level) with ``interval_ms`` between toggles, advancing the clock.
        """
        if transitions < 1:
            raise PinError("a bounce needs at least one transition")
        if final not in (0, 1):
            raise PinError(f"level must be 0 or 1, not {final!r}")
        for i in range(transitions):
            if i:
                self.clock.advance(interval_ms)
            level = final if (transitions - 1 - i) % 2 == 0 else 1 - final
            self.drive(pin, level)
        if self.level(pin) != final:
            self.clock.advance(interval_ms)
            self.drive(pin, final)

    def level(self, pin: int) -> int:
        """The level on ``pin`` (BCM) now: output latch, external drive, or pull."""
        with self._lock:
            return self._level_of(self._sim_channel(pin))

    def history(self, pin: int) -> list[PinChange]:
        """Every level written to output ``pin`` (BCM), oldest first."""
        with self._lock:
            return list(self._sim_channel(pin).history)

    def function(self, pin: int) -> int | None:
        """``IN``, ``OUT`` or None (not set up) for ``pin`` (BCM)."""
        with self._lock:
            return self._sim_channel(pin).function

    def pull(self, pin: int) -> int:
        """The pull resistor configured on ``pin`` (BCM)."""
        with self._lock:
            return self._sim_channel(pin).pull

    def has_edge_detect(self, pin: int) -> bool:
        """Whether edge detection is enabled on ``pin`` (BCM)."""
        with self._lock:
            return self._sim_channel(pin).edge is not None

    # ------------------------------------------------ rpi-lgpio's debounce (ClockWatcher)
    def next_due_ns(self) -> int | None:
        """The moment the first waiting edge has been stable for its bouncetime, or None."""
        with self._lock:
            dues = [
                ch.changed_ns + ch.bouncetime_ms * _NS_PER_MS
                for ch in self._channels.values()
                if ch.changed_ns is not None and ch.bouncetime_ms is not None
            ]
        return min(dues, default=None)

    def run_due(self, now_ns: int) -> None:
        """Report every edge whose line has been stable for its bouncetime by ``now_ns``."""
        fire: list[tuple[int, list[Callable[[int], object]]]] = []
        with self._lock:
            for pin, ch in self._channels.items():
                if ch.changed_ns is None or ch.bouncetime_ms is None:
                    continue
                if now_ns - ch.changed_ns < ch.bouncetime_ms * _NS_PER_MS:
                    continue
                ch.changed_ns = None
                level = self._level_of(ch)
                if level == ch.stable_level:
                    continue  # back where it was reported: a pulse shorter than bouncetime
                ch.stable_level = level
                if self._edge_wanted(ch, level):
                    ch.event_flag = True
                    fire.append((pin, list(ch.callbacks)))
        for pin, callbacks in fire:
            self._fire(pin, callbacks)

    # ------------------------------------------------------------------- internals
    def _resolve(self, channel: object) -> int:
        if self._mode is None:
            raise RuntimeError(_MSG_NO_MODE)
        if isinstance(channel, bool) or not isinstance(channel, int):
            raise ValueError(_MSG_CHANNEL_TYPE)
        if self._mode == self.BCM:
            if not 0 <= channel <= _BCM_MAX:
                raise ValueError(_MSG_BAD_CHANNEL)
            return channel
        if channel not in _BOARD_TO_BCM:
            raise ValueError(_MSG_BAD_CHANNEL)
        return _BOARD_TO_BCM[channel]

    def _resolve_many(self, channel: object) -> list[int]:
        if isinstance(channel, (list, tuple)):
            return [self._resolve(c) for c in channel]
        return [self._resolve(channel)]

    @staticmethod
    def _values_for(bcms: list[int], value: object) -> list[int]:
        msg = "Value must be an integer/boolean or a list/tuple of integers/booleans"
        if isinstance(value, (list, tuple)):
            if len(value) != len(bcms):
                raise RuntimeError("Number of channels != number of values")
            vals: Iterable[object] = value
        else:
            vals = [value] * len(bcms)
        out = []
        for v in vals:
            if not isinstance(v, int):
                raise ValueError(msg)
            out.append(1 if v else 0)
        return out

    def _sim_channel(self, pin: int) -> _Channel:
        if isinstance(pin, bool) or not isinstance(pin, int) or not 0 <= pin <= _BCM_MAX:
            raise PinError(f"BCM pin must be an int 0-{_BCM_MAX}, not {pin!r}")
        return self._channels.setdefault(pin, _Channel())

    def _level_of(self, ch: _Channel) -> int:
        if ch.function == self.OUT:
            return ch.out_level
        if ch.external is not None:
            return ch.external
        # A floating input reads noise on hardware; the twin reads LOW.
        return 1 if ch.pull == self.PUD_UP else 0

    def _record(self, ch: _Channel) -> None:
        ch.history.append(PinChange(self.clock.monotonic_ns(), ch.out_level))
        if len(ch.history) > 2 * HISTORY_MAX:
            del ch.history[:-HISTORY_MAX]

    def _edge_callbacks(
        self, ch: _Channel, before: int | None, after: int
    ) -> list[Callable[[int], object]]:
        if ch.function != self.IN or ch.edge is None or before is None or before == after:
            return []
        now = self.clock.monotonic_ns()
        if self.debounce == "rpi-lgpio" and ch.bouncetime_ms is not None:
            # lgpio: wait until the line has been stable for bouncetime (run_due reports it)
            ch.changed_ns = now
            return []
        if self.debounce == "rpi-lgpio":
            ch.stable_level = after  # no debounce: every edge is reported at once
        if not self._edge_wanted(ch, after):
            return []
        if self.debounce == "rpi-lgpio":
            ch.event_flag = True
            return list(ch.callbacks)
        # event_gpio.c: an edge within bouncetime of the last *accepted* edge is dropped.
        if (
            ch.bouncetime_ms is not None
            and ch.last_call_ns != 0
            and now - ch.last_call_ns <= ch.bouncetime_ms * _NS_PER_MS
        ):
            return []
        ch.last_call_ns = now
        ch.event_flag = True
        return list(ch.callbacks)

    def _edge_wanted(self, ch: _Channel, after: int) -> bool:
        rising = after == 1
        return not (ch.edge == self.RISING and not rising or ch.edge == self.FALLING and rising)

    def _fire(self, pin: int, callbacks: list[Callable[[int], object]]) -> None:
        if not callbacks:
            return
        channel = pin
        if self._mode == self.BOARD:
            channel = next(b for b, m in _BOARD_TO_BCM.items() if m == pin)
        for cb in callbacks:
            cb(channel)

    def _remove_edge(self, ch: _Channel) -> None:
        ch.edge = None
        ch.bouncetime_ms = None
        ch.callbacks = []
        ch.event_flag = False
        ch.last_call_ns = 0
        ch.changed_ns = None

    def _reset(self, ch: _Channel) -> None:
        self._remove_edge(ch)
        ch.function = None
        ch.pull = self.PUD_OFF
        ch.out_level = 0
