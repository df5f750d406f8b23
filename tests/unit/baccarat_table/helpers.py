"""A baccarat table on a real journal in a temp dir, fed shoe events directly (no port)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from controller.config.settings import ConfigStore, RuleSettings
from controller.journal.store import Journal
from controller.tables.baccarat.table import BaccaratTable
from controller.tables.table import Devices, Refused, TableContext
from drivers.buttons import ButtonPressed
from drivers.shoe_events import ShoeFrameAccepted, ShoeSession
from drivers.shoe_protocol import SessionPosition
from drivers.sim.dealer_display import SimDealerDisplay

#: The session id of the Rig's shoe until it power-cycles (``Rig.session``).
SID = "5A1E0001"


class FakeShoeReader:
    """Records acknowledge() calls in order (the real SerialShoe sends $ACK for them)."""

    def __init__(self) -> None:
        self.acked: list[int] = []
        self.acked_sids: list[str] = []
        self.resyncs: list[int] = []
        self.stopped = False

    def acknowledge(self, sid: str, seq: int) -> None:
        self.acked.append(seq)
        self.acked_sids.append(sid)

    def resync(self, seq: int) -> None:
        self.resyncs.append(seq)

    def stop(self, timeout: float = 2.0) -> bool:
        self.stopped = True
        return True


class Rig:
    """One table, its journal, display, alarms and a shoe SEQ counter."""

    def __init__(
        self, tmp: Path, *, deferred_vig: bool = False, journal: Journal | None = None, seq: int = 0
    ) -> None:
        self.tmp = tmp
        self.journal = journal or Journal(tmp / "journal.db")
        base = RuleSettings()
        rules = dataclasses.replace(
            base, baccarat=dataclasses.replace(base.baccarat, deferred_vig=deferred_vig)
        )
        self.settings = ConfigStore(self.journal, rules)
        self.alarms: list[str] = []
        #: ``!DISPLAY`` lines (what the dealer display shows), apart from the alarms
        self.displays: list[str] = []
        self.display = SimDealerDisplay()
        self.reader = FakeShoeReader()
        self.ctx = TableContext(
            journal=self.journal,
            settings=self.settings,
            devices=Devices(dealer_display=self.display),
            alarm=self._alarm,
            announce=lambda lines, skip: [self._alarm(x) for x in lines],
        )
        self.table = BaccaratTable(self.ctx)
        self.table.link.reader = self.reader  # stands in for the shoe's serial link
        self.seq = seq
        self.sid = SID
        self.sessions = 0
        if journal is None:
            # a fresh install: the shoe's first session (nothing before it to lose)
            self.table.handle(ShoeSession(SID, "SIM", "2.0", self.seq, b"", 0, None))
            self.seq = (self.seq + 1) % 10000

    def _alarm(self, text: str) -> None:
        (self.displays if text.startswith("DISPLAY ") else self.alarms).append(text)

    # -- inputs --------------------------------------------------------------------------------

    def frame(self, ftype: str, *fields: str, known: bool = True, at_ns: int = 0) -> None:
        self.table.handle(
            ShoeFrameAccepted(ftype, self.seq, self.sid, tuple(fields), b"", at_ns, known)
        )
        self.seq = (self.seq + 1) % 10000

    def cards(self, codes: Iterable[str] | str) -> None:
        for code in codes.split() if isinstance(codes, str) else codes:
            self.frame("CARD", code)

    def session(self, seq: int | None = None) -> str:
        """The shoe powers up: a new session id, its $HELO at ``seq`` (default: the next SEQ).
        Returns the new SID."""
        previous = SessionPosition(self.sid, self.seq)
        self.sessions += 1
        self.sid = f"5A1E{self.sessions + 1:04X}"
        if seq is not None:
            self.seq = seq
        self.table.handle(ShoeSession(self.sid, "SIM", "2.0", self.seq, b"", 0, previous))
        self.seq = (self.seq + 1) % 10000
        return self.sid

    def press(self, name: str) -> None:
        """A dealer's button; a refusal (said on the consoles as ``!REFUSED``) is raised here,
        so a test can assert on it."""
        self.table.handle(ButtonPressed(name, 0))
        if self.table.last_refusal is not None:
            raise self.table.last_refusal

    def act(self, line: str, who: str = "tech") -> list[str]:
        name, *args = line.split()
        return self.table.action(name, args, who)

    def refused(self, fn: Any, *args: Any) -> Refused:
        try:
            fn(*args)
        except Refused as exc:
            return exc
        raise AssertionError(f"{fn} {args} was not refused (state {self.table.state})")

    # -- set-ups -------------------------------------------------------------------------------

    def open_shoe(self, burn: str = "2S AH AD", curator: int = 1) -> None:
        """Shuffled, burned (a 2 face up and two cards), curator accepted: betting."""
        self.press("shuffled")
        self.cards(burn)
        self.act(f"curator {curator}")
        assert self.table.state == "betting"

    def rows(self, kind: str) -> list[Any]:
        return list(self.journal.events(kinds=[kind]))

    def reopen(self) -> Rig:
        """A new table on the same journal (a controller restart), recovered."""
        self.table.close()
        rig = Rig.__new__(Rig)
        rig.__dict__.update(self.__dict__)
        rig.alarms = []
        rig.displays = []
        rig.display = SimDealerDisplay()
        rig.reader = FakeShoeReader()
        rig.ctx = TableContext(
            journal=self.journal,
            settings=self.settings,
            devices=Devices(dealer_display=rig.display),
            alarm=rig._alarm,
            announce=lambda lines, skip: [rig._alarm(x) for x in lines],
        )
        rig.table = BaccaratTable(rig.ctx)
        rig.table.link.reader = rig.reader  # stands in for the shoe's serial link
        rig.notes = rig.table.recover()
        return rig
