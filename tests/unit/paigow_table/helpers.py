"""A pai gow table on sim drivers and a temp-dir journal, without the whole application."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from controller.config.settings import ConfigStore, PaigowSettings, RuleSettings
from controller.journal.store import Journal
from controller.rng.certified import CertifiedRng
from controller.tables.kernel.press import ButtonWiring
from controller.tables.kernel.sim import SimControls
from controller.tables.paigow.table import PaigowTable
from controller.tables.table import Devices, Refused, TableContext
from drivers.buttons import ButtonPressed
from drivers.number_display import DIGIT_SEGMENTS, FAULT_SEGMENTS, SevenSegmentDisplay
from drivers.seat_lamps import SeatLamps
from drivers.sim.gpio import SimGPIO

SEGMENT_PINS = {"a": 5, "b": 6, "c": 13, "d": 19, "e": 26, "f": 16, "g": 20}
LAMP_PINS = {1: 4, 2: 12, 3: 18, 4: 23, 5: 24, 6: 25}
BUTTON_PINS = {
    "shuffled": 9,
    "no_more_bets": 11,
    "draw": 17,
    "dealt": 27,
    "hands_set": 22,
    "settled": 8,
    "void": 7,
}
BUTTONS = frozenset(BUTTON_PINS) - {"void"}
BLANK: frozenset[str] = frozenset()
ALL_LIT = frozenset(SEGMENT_PINS)
FAULT = FAULT_SEGMENTS
EVERYTHING = 10**18  # a monotonic time long after the power-up lamp test


def digit(n: int) -> frozenset[str]:
    return DIGIT_SEGMENTS[n]


def seeded_source(seed: int = 7) -> Callable[[int], bytes]:
    """A deterministic byte source that passes the health tests (random.Random bytes)."""
    gen = random.Random(seed)
    return gen.randbytes


def stuck_source(count: int) -> bytes:
    """A dead source: the repetition count test fails within the start-up test."""
    return b"\x00" * count


def good_rng(seed: int = 7) -> CertifiedRng:
    return CertifiedRng(seeded_source(seed), hwrng_path=None, entropy_ready=lambda: True)


def stuck_rng() -> CertifiedRng:
    return CertifiedRng(stuck_source, hwrng_path=None, entropy_ready=lambda: True)


def settings(**paigow: Any) -> RuleSettings:
    """Rule settings with bank, co-bank and surrender offered (overridable)."""
    base = {"surrender_offered": True, "bank_offered": True, "cobank_offered": True}
    base.update(paigow)
    top = {k: base.pop(k) for k in ("start_mode", "jurisdiction") if k in base}
    return replace(RuleSettings(), paigow=PaigowSettings(**base), **top)


class DisplaySpy:
    """Wraps the real seven-segment driver; records each call with the journal's last seq."""

    def __init__(self, inner: SevenSegmentDisplay, journal: Journal) -> None:
        self.inner = inner
        self.journal = journal
        self.calls: list[tuple[str, int | None, int]] = []

    def _note(self, name: str, n: int | None = None) -> None:
        self.calls.append((name, n, self.journal.last_seq))

    def show(self, n: int) -> None:
        self._note("show", n)
        self.inner.show(n)

    def blank(self) -> None:
        self._note("blank")
        self.inner.blank()

    def fault(self) -> None:
        self._note("fault")
        self.inner.fault()

    def lamp_test(self) -> None:
        self._note("lamp_test")
        self.inner.lamp_test()

    def close(self) -> None:
        self.inner.close()

    def lit(self) -> frozenset[str]:
        return self.inner.read_back()


@dataclass
class Rig:
    """One table and its parts; ``reopen`` is a power cycle on the same state directory."""

    path: Path
    journal: Journal
    table: PaigowTable
    display: DisplaySpy
    lamps: SeatLamps
    gpio: SimGPIO
    rules: RuleSettings
    rng: Any
    alarms: list[str] = field(default_factory=list)
    posted: list[object] = field(default_factory=list)

    @property
    def state(self) -> str:
        return self.table.model.state

    def press(self, name: str) -> None:
        self.table.handle(ButtonPressed(name, 0))

    def act(self, line: str, who: str = "technician@test") -> list[str]:
        words = line.split()
        return self.table.action(words[0], words[1:], who)

    def try_act(self, line: str, who: str = "technician@test") -> Refused | None:
        try:
            self.act(line, who)
        except Refused as exc:
            return exc
        return None

    def rows(self, prefix: str = "paigow.") -> list[Any]:
        return [e for e in self.journal.events() if e.kind.startswith(prefix)]

    def last(self) -> Any:
        return list(self.journal.events())[-1]


def make_rig(
    path: Path,
    rules: RuleSettings | None = None,
    rng: Any = "good",
    journal: Journal | None = None,
    recover: bool = True,
) -> Rig:
    path.mkdir(parents=True, exist_ok=True)
    if journal is None:
        journal = Journal(path / "journal.sqlite")
    rules = rules or settings()
    gpio = SimGPIO()
    gpio.setmode(gpio.BCM)
    display = DisplaySpy(SevenSegmentDisplay(gpio, SEGMENT_PINS, "cathode"), journal)
    lamps = SeatLamps(gpio, LAMP_PINS)
    if rng == "good":
        rng = good_rng()
    alarms: list[str] = []
    posted: list[object] = []
    devices = Devices(
        display=display,
        seat_lamps=lamps,
        sim=SimControls(gpio=gpio, buttons=ButtonWiring(dict(BUTTON_PINS), active_low=True)),
    )
    ctx = TableContext(
        journal=journal,
        settings=ConfigStore(journal, rules),
        devices=devices,
        alarm=alarms.append,
        announce=lambda lines, skip: alarms.extend(lines),
        rng=rng,
    )
    table = PaigowTable(ctx)
    rig = Rig(path, journal, table, display, lamps, gpio, rules, rng, alarms, posted)
    if recover:
        table.recover()
        table.tick(EVERYTHING)
    return rig


def reopen(rig: Rig, rng: Any = "good") -> Rig:
    """Power cycle: close the journal, open it again from disk, build a new table and recover."""
    rig.journal.close()
    return make_rig(rig.path, rig.rules, rng)


ROUND = ("shuffled", "no_more_bets", "draw", "dealt", "hands_set", "settled")


def play_round(rig: Rig) -> None:
    for name in ROUND:
        rig.press(name)
