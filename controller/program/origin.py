"""Where this process's program came from: the release it was started from, and what the
start-up check of that release found.

Why a module of its own: the boot check (:mod:`controller.program.boot`) records it before the
application is imported, and the manifest's readers (:mod:`controller.program.manifest`) ask it
which root and which manifest the process is checked against; both import this module, neither
imports the other's caller, so the part has no import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class BootCheck:
    """What the start-up check of a release found, and what it cost."""

    root: Path
    problems: list[str] = field(default_factory=list)
    files: int = 0
    bytes: int = 0
    seconds: float = 0.0
    checked: bool = False


#: The process's record: set once by the release's entry script (through ``boot``), read after.
_started: list[BootCheck] = []


def record(check: BootCheck) -> None:
    """Remember ``check`` as this process's start-up check (the release's entry script)."""
    _started[:] = [check]


def release_root() -> Path | None:
    """The install root of the release this process was started from, or None."""
    return _started[0].root if _started else None


def boot_check() -> BootCheck | None:
    """The start-up check of this process's release (None outside a release)."""
    return _started[0] if _started else None
