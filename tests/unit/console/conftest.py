"""A small application for the console: a real journal, settings and RNG; a fake table whose
round, faults and actions the test sets."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from controller.config.profile import JournalSettings
from controller.config.settings import ConfigStore, RuleSettings
from controller.console.interpreter import Console
from controller.journal.trust import JournalTrust, acknowledgment_lines, open_journal
from controller.loop.faults import Faults
from controller.rng.certified import CertifiedRng
from controller.tables.paigow.commands import house_way_lines
from controller.tables.table import Refused


class HashCounterSource:
    """Deterministic bytes (SHA-256 in counter mode): pass the health tests, same every run."""

    def __init__(self) -> None:
        self._counter = 0
        self._buf = b""

    def __call__(self, count: int) -> bytes:
        while len(self._buf) < count:
            self._buf += hashlib.sha256(self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
        out, self._buf = self._buf[:count], self._buf[count:]
        return out


@dataclass
class FakeProfile:
    name: str = "unit"
    game: str = "paigow"
    source_files: tuple[str, ...] = ()


class _EveryWord(tuple[str, ...]):
    """A fake table's action names: it takes every word (help lists the ones named)."""

    def __contains__(self, word: object) -> bool:
        return True


@dataclass
class FakeTable:
    """The Table protocol, with knobs: ``in_round``, ``table_faults``, recorded actions."""

    game: str = "paigow"
    in_round: bool = False
    table_faults: list[str] = field(default_factory=list)
    actions: list[tuple[str, list[str], str]] = field(default_factory=list)
    odds_result: Any = None
    #: like the baccarat table: clear_fault() with no table fault raises Refused
    refuse_clear_when_clean: bool = False

    def action(self, name: str, args: list[str], who: str) -> list[str]:
        self.actions.append((name, list(args), who))
        if name == "sim":
            return [f"sim {' '.join(args)} done"]
        if name == "test-mode":
            return [f"display: TEST MODE {args[0].upper()}"]
        if name == "refuse":
            raise Refused("not now", "STATE")
        raise Refused(f"no such command: {name}", "UNKNOWN")

    def status(self) -> dict[str, str]:
        return {"state": "in_round" if self.in_round else "idle", "round": "7", "last_rng": "3"}

    def action_help(self) -> dict[str, Any]:
        return {}

    def query(self, name: str, args: list[str]) -> list[str]:
        """The pai gow table's ``houseway`` (its own function); nothing else."""
        if self.game == "paigow" and name == "houseway":
            return house_way_lines(args, "default")
        raise Refused(f"no {name}", "UNKNOWN")

    def action_names(self) -> tuple[str, ...]:
        """Every word: the fake's :meth:`action` answers an unknown one itself."""
        return _EveryWord(("sim", "test-mode", "refuse"))

    def round_in_progress(self) -> bool:
        return self.in_round

    def faults(self) -> list[str]:
        return list(self.table_faults)

    def clear_fault(self, who: str) -> list[str]:
        if self.refuse_clear_when_clean and not self.table_faults:
            raise Refused("no table fault to clear", "STATE")
        if any("stuck" in f for f in self.table_faults):
            raise Refused("the stuck fault cannot be cleared", "FAULT")
        cleared = [f"cleared: {f}" for f in self.table_faults]
        self.table_faults.clear()
        return cleared


class FakeApp:
    """The Application attributes the console uses."""

    def __init__(self, state_dir: Path, table: FakeTable, with_rng: bool = True) -> None:
        self.state_dir = state_dir
        settings = JournalSettings()
        opened = open_journal(settings, lambda name: state_dir / name, "console-test")
        self.journal = opened.journal
        # The notary and the scrub are not started: nothing runs on another thread here.
        self.trust = JournalTrust(
            opened,
            settings,
            lambda name: state_dir / name,
            post=lambda fn: fn(),
            raise_fault=self._raise_fault,
        )
        self.trust.check_at_start()
        self.config = ConfigStore(self.journal, RuleSettings())
        self.table = table
        self.rng = (
            CertifiedRng(HashCounterSource(), hwrng_path=None, entropy_ready=lambda: True)
            if with_rng
            else None
        )
        self.profile = FakeProfile(game=table.game)
        self.alarms: list[str] = []
        self.app_faults = Faults(lambda kind, data: self.journal.append(kind, data), self.alarm)
        #: As the console's port: every reply at once, one row per repeated event.
        self.defers_replies = False
        self.summaries = None

    def post(self, event: object) -> None:
        raise AssertionError(f"the console's tests run no loop: {event!r}")

    def alarm(self, text: str) -> None:
        self.alarms.append(text)

    def _raise_fault(self, text: str) -> None:
        self.app_faults.latch(text)

    def acknowledge_journal(self, who: str) -> list[str]:
        """As Application.acknowledge_journal (no table hook here)."""
        if not self.trust.findings:
            return []
        return acknowledgment_lines(self.trust.acknowledge(who))

    def journal_fault(self, exc: Exception) -> None:
        """As Application.journal_fault: latch the fault (it cannot be journaled)."""
        self.app_faults.latch(f"journal: {exc}")

    def faults(self) -> list[str]:
        return [*self.app_faults, *self.table.faults()]

    def status(self) -> dict[str, str]:
        info = {"game": self.profile.game, "profile": self.profile.name}
        info.update(self.table.status())
        info["faults"] = "; ".join(self.faults()) or "none"
        return info

    def kinds(self) -> list[str]:
        return [e.kind for e in self.journal.events()]


class Clock:
    """The console's monotonic clock, moved by the test. It starts where the real one is: the
    journal stamps its rows with the real monotonic clock, and a console restarted in the same
    boot measures the lockout's time since the newest row on its own clock (a fixed start, such
    as 1000 s, made the lockout run out at once on a machine up for less than that)."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def __call__(self) -> float:
        return self.now


@dataclass
class Rig:
    app: FakeApp
    console: Console
    clock: Clock

    def run(self, line: str, source: str = "serial") -> list[str]:
        reply = self.console.execute(line, source)
        assert reply[-1] == "OK" or reply[-1].startswith("ERR "), reply
        return reply

    def ok(self, line: str, source: str = "serial") -> list[str]:
        reply = self.run(line, source)
        assert reply[-1] == "OK", reply
        return reply[:-1]

    def err(self, line: str, code: str, source: str = "serial") -> str:
        reply = self.run(line, source)
        assert reply[-1].startswith(f"ERR {code} "), reply
        return reply[-1]

    def login(self, source: str = "serial") -> None:
        if self.app.journal.last(["console.pin_set"]) is None:
            self.ok("passwd 2468101212", source)
        self.ok("login 2468101212", source)


@pytest.fixture
def make_rig(tmp_path: Path) -> Iterator[Callable[..., Rig]]:
    apps: list[FakeApp] = []

    def make(game: str = "paigow", with_rng: bool = True, **kwargs: Any) -> Rig:
        clock = Clock()
        app = FakeApp(tmp_path, FakeTable(game=game), with_rng)
        apps.append(app)
        return Rig(app, Console(app, clock=clock, scrypt_n=16, **kwargs), clock)

    yield make
    for app in apps:
        app.journal.close()


@pytest.fixture
def rig(make_rig: Callable[..., Rig]) -> Rig:
    return make_rig()
