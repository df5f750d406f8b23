"""What the console may read of the controller and ask of it: its narrow port.

The application is one implementation (controller/app.py); the console's tests hold another. The
console reaches the table only through :class:`controller.tables.table.Table` and the rest of the
controller only through what is named here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from controller.journal.store import Journal, JournalError
from controller.tables.table import Table

if TYPE_CHECKING:
    from controller.config.profile import Profile
    from controller.config.settings import ConfigStore
    from controller.journal.summary import Summaries
    from controller.journal.trust import JournalTrust
    from controller.rng.certified import CertifiedRng
    from controller.tables.gate import DisableLatch, DoorWatch


class HeldFaults(Protocol):
    """The faults the controller holds besides the table's (controller/loop/faults.py)."""

    def raise_fault(self, text: str, source: str = "app") -> None: ...
    def clear(self, who: str) -> list[str]: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...


class ConsoleHost(Protocol):
    """The controller as the console sees it."""

    journal: Journal
    table: Table
    config: ConfigStore
    trust: JournalTrust
    state_dir: Path
    #: Faults the controller holds (journal, program, settings) besides the table's.
    app_faults: HeldFaults
    #: True when a reply may come later (the loop answers once the events it caused are
    #: handled); False where the console's caller wants every reply at once.
    defers_replies: bool
    #: Counted summary rows for repeated events (None: one row each).
    summaries: Summaries | None
    #: The host's ``disable`` latch (``table enable`` lifts it) and the door's switch (``door
    #: ack``; None when the profile has none): controller/tables/gate.py.
    disable_latch: DisableLatch
    door: DoorWatch | None

    @property
    def profile(self) -> Profile: ...

    @property
    def rng(self) -> CertifiedRng | None: ...

    def alarm(self, text: str) -> None: ...
    def post(self, event: object) -> None: ...
    def journal_fault(self, exc: JournalError) -> None: ...
    def faults(self) -> list[str]: ...
    def status(self) -> dict[str, str]: ...
    def acknowledge_journal(self, who: str) -> list[str]: ...
    def sim_door(self, want_open: bool) -> str: ...
