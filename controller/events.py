"""Events the controller loop consumes that are not owned by a driver module.

Drivers define their own event dataclasses (``drivers.buttons.ButtonPressed``,
``drivers.shoe_events.*``); every one of them arrives on the application's single queue and is
handled on the loop thread, the only thread that touches table state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ConsoleLine:
    """One line a technician typed; ``reply`` writes the whole reply back to that console and
    ends it; ``progress`` writes lines of a reply still running (``rng capture``)."""

    text: str
    reply: Callable[[list[str]], None]
    source: str = "console"
    progress: Callable[[list[str]], None] | None = None


@dataclass(frozen=True, slots=True)
class ConsoleRejected:
    """A console line refused by the transport (too long, non-printable bytes): journaled."""

    reason: str
    source: str = "console"


@dataclass(frozen=True, slots=True)
class ConsolePortLost:
    """A serial console's device failed or vanished (a USB adapter unplugged); the transport
    reopens it with back-off. Journaled and alarmed on the other consoles."""

    source: str
    port: str
    reason: str


@dataclass(frozen=True, slots=True)
class ConsolePortBack:
    """A serial console's device is open again after :class:`ConsolePortLost`."""

    source: str
    port: str


@dataclass(frozen=True, slots=True)
class Call:
    """Run ``fn`` on the loop thread (tests, benchmarks and the scripted dealer use this)."""

    fn: Callable[[], object]
    done: Callable[[object], None] | None = None


@dataclass(frozen=True, slots=True)
class Shutdown:
    """Stop the loop after the events queued before it."""

    reason: str
