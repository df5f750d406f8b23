"""Coded significant events: one catalogue (docs/events.md is generated from it) and the reading
of journal rows as events.

An event is never journaled apart from its row: the row that raised it (``app.start``,
``paigow.rng_fault``, ``console.locked`` ...) IS its journal record, so each event is journaled
exactly once and a replay of the journal gives the same events. :class:`EventReader` reads rows in
sequence order and yields the events they raise, with the code, the row's time, its round and
details; the feed publishes them on ``tc/<site>/<table>/events`` (docs/feed.md).

Codes are stable: a code is never reused for another event. Codes marked reserved are in the
catalogue (so a host can map them) but nothing raises them yet.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from controller.floor.meters import (
    BACCARAT_IN_COUP,
    PAIGOW_IN_ROUND,
    STARTPOS_IN_ROUND,
    STARTPOS_STEPS,
    MeterRow,
)

Severity = Literal["info", "warning", "alarm", "fault"]


@dataclass(frozen=True, slots=True)
class EventType:
    """One entry of the catalogue."""

    code: int
    name: str
    severity: Severity
    raised_by: str
    cleared_by: str
    reference: str
    reserved: bool = False


CATALOGUE: Final[tuple[EventType, ...]] = (
    EventType(
        100,
        "power up",
        "info",
        "every start of the controller (`app.start`)",
        "-",
        "G2S cabinet class: the device's power-up",
    ),
    EventType(
        101,
        "power lost during a round",
        "alarm",
        "a start after a stop that was not a clean shutdown, the journal showing a round or coup"
        " under way (`paigow.recovered`, `baccarat.recovery`, the newest `startpos.*` round row)",
        "-: the round resumes or is voided by the recovery rules",
        "5324.50 (the journaled number is shown again, never re-drawn); 5324.20(i)",
    ),
    EventType(
        110,
        "door open",
        "alarm",
        "the enclosure door's switch opens (`door.opened`, `sim door open` on a simulated table)",
        "door closed",
        "G2S cabinet class: door events",
    ),
    EventType(
        111,
        "door closed",
        "info",
        "the enclosure door's switch closes (`door.closed`)",
        "-",
        "G2S cabinet class: door events",
    ),
    EventType(
        120,
        "RNG fault",
        "fault",
        "the RNG's health tests or a read failed (`paigow.rng_fault`, `startpos.rng_fault`):"
        " dice mode",
        "RNG fault cleared",
        "5324.50(a)(3)-(4): the dice replace the RNG",
    ),
    EventType(
        121,
        "RNG fault cleared",
        "info",
        "a technician's `fault clear` after a passing test (`paigow.rng_fault_cleared`,"
        " `startpos.rng_fault_cleared`)",
        "-",
        "5324.50(a)(3)-(4)",
    ),
    EventType(
        130,
        "program fault",
        "fault",
        "the start-up check found a changed program or profile file (`program.checked` not ok)",
        "a restart with the released files",
        "G2S GAT class: program authentication",
    ),
    EventType(
        131,
        "program verified",
        "info",
        "`verify` or `verify SEED` on the console or from the host (`program.verified`,"
        " `program.hmac`)",
        "-",
        "G2S GAT class: program authentication",
    ),
    EventType(
        140,
        "journal finding",
        "fault",
        "the journal's start-up check or scrub found rows lost or rewritten (`journal.finding`)",
        "journal finding acknowledged",
        'docs/journal.md "A fault that stops play"',
    ),
    EventType(
        141,
        "journal finding acknowledged",
        "warning",
        "a supervisor's `fault clear` (`journal.acknowledged`)",
        "-",
        'docs/journal.md "A fault that stops play"',
    ),
    EventType(
        150,
        "shoe session lost",
        "alarm",
        "the shoe came back with a new session (`shoe.session` naming the previous one): the"
        " frames the old session had not delivered are gone; mid-coup or burn the table halts",
        "shoe session confirmed (`shoe resume`), or the reshuffle after a halt",
        "5324.20(i); docs/shoe-protocol.md",
    ),
    EventType(
        151,
        "new shoe",
        "info",
        "a shoe put in play (`baccarat.shoe.start`)",
        "-",
        "5324.20(e)",
    ),
    EventType(
        152,
        "shoe session confirmed",
        "info",
        "`shoe resume`: no card left the shoe while it was off (`baccarat.shoe.resumed`)",
        "-",
        "docs/shoe-protocol.md",
    ),
    EventType(
        153,
        "shoe session new",
        "info",
        "the first session of a shoe this table knows (`shoe.session`, no previous one)",
        "-",
        "docs/shoe-protocol.md",
    ),
    EventType(
        160,
        "console lockout",
        "alarm",
        "repeated refused PINs lock a role (`console.locked`)",
        "the lockout's end",
        'docs/console.md "Logins"',
    ),
    EventType(
        170,
        "supervisor void",
        "alarm",
        "a round voided after its number was out or a coup voided with cards out"
        " (`paigow.void_after_draw`, `baccarat.void_mid_coup`, `startpos.voided` with"
        " `number_out`)",
        "-: counted for the shift",
        "5324.50(i); 5324.20(i)",
    ),
    EventType(
        180,
        "setting changed",
        "info",
        "`config set KEY VALUE` (`config.changed`)",
        "-",
        "docs/configuration.md",
    ),
    EventType(
        190,
        "table disabled",
        "warning",
        "the host's signed `disable` (`table.disabled`, docs/host-commands.md)",
        "table enabled",
        "G2S cabinet class: disable",
    ),
    EventType(
        191,
        "table enabled",
        "info",
        "the host's signed `enable` or a supervisor's `table enable` (`table.enabled`)",
        "-",
        "G2S cabinet class: enable",
    ),
    EventType(
        200,
        "release changed",
        "warning",
        "a start with a release other than the previous start's (`program.release_changed`)",
        "-",
        "G2S GAT class; the install log (docs/program-verification.md)",
    ),
    EventType(
        210,
        "clock warning",
        "warning",
        "the wall clock unset, behind the journal or jumping (`clock.warning`)",
        "-",
        'docs/journal.md "Row"',
    ),
    EventType(
        220,
        "meters went back",
        "alarm",
        "the journal's lifetime meters are lower than those the feed last published"
        " (`meters.went_back`): the journal restored from an older copy",
        "-",
        'docs/meters.md "Never back"',
    ),
    EventType(
        230,
        "undervoltage",
        "alarm",
        "the board's supply fell below the Pi's threshold (`power.undervoltage` active)",
        "undervoltage ended (the same row kind, not active)",
        "docs/power-and-storage.md",
    ),
    EventType(
        231,
        "throttling",
        "warning",
        "the SoC throttled for heat (`power.throttled` active)",
        "throttling ended",
        "docs/power-and-storage.md",
    ),
    EventType(
        232,
        "power failing",
        "alarm",
        "the UPS's power-fail signal asserted (`power.fail`): no new round",
        "the signal dropped",
        "docs/power-and-storage.md",
    ),
    EventType(
        233,
        "power condition ended",
        "info",
        "undervoltage, throttling or the power-fail signal ended (`power.*` not active)",
        "-",
        "docs/power-and-storage.md",
    ),
)

BY_CODE: Final[Mapping[int, EventType]] = {e.code: e for e in CATALOGUE}


@dataclass(frozen=True, slots=True)
class Event:
    """One event: its code, the row that raised it (seq, time, round) and details."""

    code: int
    seq: int
    ts: int
    round: int | None
    details: dict[str, object]

    @property
    def type(self) -> EventType:
        return BY_CODE[self.code]

    def as_dict(self) -> dict[str, object]:
        """The event as the feed publishes it."""
        t = self.type
        return {
            "code": self.code,
            "name": t.name,
            "severity": t.severity,
            "seq": self.seq,
            "ts": self.ts,
            "round": self.round,
            "details": self.details,
        }


#: Row kinds that raise an event by themselves: kind -> (code, the data fields kept as details;
#: None: all of them).
_DIRECT: Final[Mapping[str, tuple[int, tuple[str, ...] | None]]] = {
    "paigow.rng_fault": (120, ("reason",)),
    "paigow.rng_fault_cleared": (121, ("who",)),
    "startpos.rng_fault": (120, ("reason",)),
    "startpos.rng_fault_cleared": (121, ("who",)),
    "program.verified": (131, ("manifest", "ok", "problems", "source")),
    "journal.finding": (140, None),
    "journal.acknowledged": (141, ("who", "found")),
    "baccarat.shoe.start": (151, ("shoe", "decks")),
    "baccarat.shoe.resumed": (152, ("who", "sid")),
    "console.locked": (160, ("role", "source", "seconds")),
    "paigow.void_after_draw": (170, ("trigger", "number", "mode", "who", "reason")),
    "baccarat.void_mid_coup": (170, ("shoe", "coup", "cards", "who", "reason")),
    "config.changed": (180, ("key", "old", "new", "value", "who")),
    "program.release_changed": (200, ("old", "new")),
    "clock.warning": (210, ("warning", "wall_ns", "step_s")),
    "meters.went_back": (220, ("meters",)),
    "door.opened": (110, ("pin", "count")),
    "door.closed": (111, ("pin", "count")),
    "table.disabled": (190, ("reason", "source", "who")),
    "table.enabled": (191, ("source", "who", "was")),
}


#: The board's power rows (docs/power-and-storage.md): kind -> the code raised when it begins.
_POWER: Final[Mapping[str, int]] = {
    "power.undervoltage": 230,
    "power.throttled": 231,
    "power.fail": 232,
}


@dataclass
class EventReader:
    """Reads rows in sequence order and yields their events (:meth:`events`). It keeps only
    what a start needs to know of the rows before it (whether the last stop was clean)."""

    last_seq: int = 0
    _running: bool = False
    _pending_power_check: bool = False
    #: the newest starting-position round row's state (that table writes no recovery row)
    _startpos_state: str = ""
    counts: dict[int, int] = field(default_factory=dict)

    def events(self, row: MeterRow, ts: int = 0) -> list[Event]:
        """The events ``row`` raises (none for a row fed twice or carried forward)."""
        if row.seq <= self.last_seq:
            return []
        self.last_seq = row.seq
        data = row.data if isinstance(row.data, dict) else {}
        if "carried_from" in data:
            return []
        out = [
            Event(code, row.seq, ts, row.round, details)
            for code, details in self._read(row.kind, data)
        ]
        for e in out:
            self.counts[e.code] = self.counts.get(e.code, 0) + 1
        return out

    def _read(
        self, kind: str, data: Mapping[str, object]
    ) -> Iterator[tuple[int, dict[str, object]]]:
        direct = _DIRECT.get(kind)
        if direct is not None:
            code, fields = direct
            keep = data.keys() if fields is None else fields
            yield code, {k: data[k] for k in keep if k in data}
        elif kind == "app.start":
            self._pending_power_check = self._running
            yield 100, {k: data[k] for k in ("profile", "game", "pid") if k in data}
            if self._running and self._startpos_state in STARTPOS_IN_ROUND:
                yield 101, {"state": self._startpos_state}
            self._running = True
        elif kind == "app.shutdown":
            self._running = False
        elif kind in STARTPOS_STEPS:
            self._startpos_state = str(data.get("state", ""))
            if kind == "startpos.voided" and data.get("number_out") is not None:
                fields = ("round", "number_out", "source_out", "reason")
                yield 170, {k: data[k] for k in fields if k in data}
        elif kind in ("paigow.recovered", "baccarat.recovery") and self._pending_power_check:
            self._pending_power_check = False
            states = PAIGOW_IN_ROUND if kind == "paigow.recovered" else BACCARAT_IN_COUP
            if str(data.get("state")) in states or (
                kind == "baccarat.recovery" and data.get("coup")
            ):
                yield 101, {k: data[k] for k in ("state", "rule", "coup") if k in data}
        elif kind in _POWER:
            active = data.get("asserted" if kind == "power.fail" else "active")
            yield (
                (_POWER[kind] if active else 233),
                {k: data[k] for k in ("detail", "pin", "count") if k in data}
                | {"condition": kind.removeprefix("power.")},
            )
        elif kind == "program.hmac" and "error" not in data:
            # `verify SEED` (the console's or the host's): the seeded HMAC a lab recomputes; a
            # run whose HMAC could not be computed verified nothing
            yield (
                131,
                {k: data[k] for k in ("seed", "hmac", "files", "source", "count") if k in data},
            )
        elif kind == "program.checked" and not data.get("ok", True):
            yield 130, {"problems": data.get("problems", [])}
        elif kind == "shoe.session":
            fields = ("sid", "model", "firmware", "previous")
            yield (150 if data.get("previous") else 153), {k: data[k] for k in fields if k in data}


def catalogue_markdown() -> str:
    """The catalogue as the table docs/events.md holds (a test keeps the two equal)."""
    lines = [
        "| code | event | severity | raised by | cleared by | regulation or standard |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for e in CATALOGUE:
        name = f"{e.name} (reserved: not raised yet)" if e.reserved else e.name
        lines.append(
            f"| {e.code} | {name} | {e.severity} | {e.raised_by} | {e.cleared_by} | {e.reference} |"
        )
    return "\n".join(lines) + "\n"
