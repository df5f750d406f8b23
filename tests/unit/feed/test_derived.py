"""The tables' meters and coded events at the collector (docs/feed.md "Events and meters"):
what controller/floor/feed.py publishes is decoded, kept (the newest meters per table, each
event once per table, row and code) and shown by ``table-controller floor``; a message with any
defect is the ``malformed`` alarm and nothing is kept (docs/feed.md "Malformed messages")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

from controller.feed.floor import TABLE_DISABLED, TABLE_ENABLED, floor_lines
from controller.feed.messages import MessageError, decode_event, decode_meters
from controller.floor.events import CATALOGUE
from controller.floor.feed import FloorFeed
from tests.feed_hostile import honest_event, honest_meters, hostile_derived
from tests.feed_journal import TableJournal
from tests.unit.feed.test_verifier import SITE, Rig

TABLE = "table-07"


def _bytes(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode()


class _NoRows:
    def events(self, kinds: Any = None, since_seq: int = 0, round_id: Any = None) -> Any:
        return iter(())

    def close(self) -> None:
        pass


def _published(rows: list[tuple[str, int | None, dict[str, Any]]]) -> list[tuple[str, bytes]]:
    """What the table's own feed (controller/floor/feed.py) sends for these rows."""
    feed = FloorFeed(TABLE, _NoRows, None)
    out: list[tuple[str, bytes]] = []
    for seq, (kind, rnd, data) in enumerate(rows, start=1):
        row = {"seq": seq, "kind": kind, "round": rnd, "data": data, "ts": 1_800_000_000 * 10**9}
        out += feed.after_row(row)
    return out


ROUND: list[tuple[str, int | None, dict[str, Any]]] = [
    ("app.start", None, {"game": "paigow", "profile": "t"}),
    ("paigow.drawn", 1, {"record": {"number": 6}}),
    ("paigow.rng_fault", 1, {"reason": "stuck output"}),
    ("paigow.settled", 1, {"record": {"number": 6}}),
]


def test_what_a_table_publishes_decodes() -> None:
    messages = _published(ROUND)
    meters = [decode_meters(p) for c, p in messages if c == "meters"]
    events = [decode_event(p) for c, p in messages if c == "events"]
    assert meters[-1]["seq"] == 4
    assert meters[-1]["lifetime"]["paigow.games_played"] == 1
    assert [(e["code"], e["seq"]) for e in events] == [(100, 1), (120, 3)]


def test_meters_and_events_are_kept_newest_and_once(tmp_path: Path) -> None:
    t = TableJournal(TABLE)
    rig = Rig(tmp_path, t)
    for channel, payload in _published(ROUND):
        rig.raw(f"tc/{SITE}/{TABLE}/{channel}", payload)
        rig.raw(f"tc/{SITE}/{TABLE}/{channel}", payload)  # at least once: delivered twice
    older = honest_meters(TABLE, seq=2)
    rig.raw(f"tc/{SITE}/{TABLE}/meters", _bytes(older))  # a late retained copy
    stored = rig.store.meters()[(SITE, TABLE)]
    assert stored["seq"] == 4 and stored["lifetime"]["paigow.games_played"] == 1
    events = rig.store.table_events(SITE, TABLE)
    assert [(e.seq, e.code) for e in events] == [(3, 120), (1, 100)]
    assert rig.store.alarms() == []
    lines = floor_lines(rig.store, site=SITE)
    summary = [line for line in lines if line.startswith(f"  {TABLE}:")]
    assert summary and "games 1 (1 this shift)" in summary[0]
    assert "last event" in summary[0] and "120 RNG fault" in summary[0]
    assert "DISABLED" not in "\n".join(lines)


def test_a_table_disabled_by_the_host_shows_until_enabled(tmp_path: Path) -> None:
    t = TableJournal(TABLE)
    rig = Rig(tmp_path, t)
    off = honest_event(TABLE, seq=10, code=TABLE_DISABLED)
    off.update(name="table disabled", severity="warning", details={"reason": "audit"})
    rig.raw(f"tc/{SITE}/{TABLE}/events", _bytes(off))
    lines = "\n".join(floor_lines(rig.store, site=SITE))
    assert "DISABLED by the host" in lines and "(audit)" in lines
    on = honest_event(TABLE, seq=11, code=TABLE_ENABLED)
    on.update(name="table enabled", severity="info", details={})
    rig.raw(f"tc/{SITE}/{TABLE}/events", _bytes(on))
    assert "DISABLED" not in "\n".join(floor_lines(rig.store, site=SITE))


def test_the_disable_codes_are_the_catalogues() -> None:
    names = {e.code: e.name for e in CATALOGUE}
    assert names[TABLE_DISABLED] == "table disabled"
    assert names[TABLE_ENABLED] == "table enabled"


def test_another_tables_name_or_an_unknown_table_is_refused(tmp_path: Path) -> None:
    t = TableJournal(TABLE)
    rig = Rig(tmp_path, t)
    rig.raw(f"tc/{SITE}/{TABLE}/meters", _bytes(honest_meters("table-08")))
    rig.raw(f"tc/{SITE}/table-09/events", _bytes(honest_event("table-09")))
    kinds = sorted(a.kind for a in rig.store.alarms())
    assert kinds == ["malformed", "unknown-table"]
    assert rig.store.meters() == {} and rig.store.table_events(SITE, "table-09") == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_derived(TABLE))
def test_a_hostile_message_does_not_decode(message: tuple[str, bytes]) -> None:
    channel, payload = message
    decode = decode_meters if channel == "meters" else decode_event
    try:
        body = decode(payload)
    except MessageError:
        return
    # well-formed but naming another table than its topic's: the verifier refuses it
    assert body["table"] != TABLE, f"accepted {payload[:200]!r}"


def test_hostile_messages_through_the_verifier(tmp_path: Path) -> None:
    t = TableJournal(TABLE)
    rig = Rig(tmp_path, t)
    seen: list[tuple[str, bytes]] = []

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(hostile_derived(TABLE))
    def run(message: tuple[str, bytes]) -> None:
        seen.append(message)
        rig.raw(f"tc/{SITE}/{TABLE}/{message[0]}", message[1])

    run()
    assert rig.v.counters.refused == len(seen)
    assert rig.store.meters() == {} and rig.store.table_events(SITE, TABLE) == []
    assert {a.kind for a in rig.store.alarms()} == {"malformed"}
    # and the collector goes on: an honest meters message after them is kept
    rig.raw(f"tc/{SITE}/{TABLE}/meters", _bytes(honest_meters(TABLE)))
    assert rig.store.meters()[(SITE, TABLE)]["seq"] == 4


def test_the_floor_page_shows_the_newest_event_the_meters_and_disabled(tmp_path: Path) -> None:
    from controller.feed.floorhtml import PAGE
    from controller.feed.floorpage import Snapshots
    from controller.feed.messages import status_payload

    t = TableJournal(TABLE)
    rig = Rig(tmp_path, t)
    rig.raw(f"tc/{SITE}/{TABLE}/status", status_payload("online", 1))
    for channel, payload in _published(ROUND):
        rig.raw(f"tc/{SITE}/{TABLE}/{channel}", payload)
    snaps = Snapshots(rig.store, SITE)  # read all once, then only what arrives
    (row,) = snaps.build()["tables"]
    assert row["event"]["code"] == 120 and row["event"]["name"] == "RNG fault"
    assert row["disabled"] is None
    assert row["meters"].startswith("games 1 (1 this shift)")
    every = Snapshots(rig.store, SITE).meters(SITE, TABLE)
    assert every is not None and ["paigow.games_played", 1, 1] in every["meters"]
    off = honest_event(TABLE, seq=10, code=TABLE_DISABLED)
    off.update(name="table disabled", severity="warning", details={"reason": "audit"})
    rig.clock.advance(1)
    rig.raw(f"tc/{SITE}/{TABLE}/events", _bytes(off))
    for fresh in (snaps, Snapshots(rig.store, SITE)):  # the incremental read and a first one
        (row,) = fresh.build()["tables"]
        assert row["disabled"] == {"since": off["ts"], "reason": "audit"}
        assert row["event"]["code"] == TABLE_DISABLED
    on = honest_event(TABLE, seq=11, code=TABLE_ENABLED)
    on.update(name="table enabled", severity="info", details={})
    rig.clock.advance(1)
    rig.raw(f"tc/{SITE}/{TABLE}/events", _bytes(on))
    (row,) = snaps.build()["tables"]
    assert row["disabled"] is None and row["event"]["code"] == TABLE_ENABLED
    (row,) = Snapshots(rig.store, SITE).build()["tables"]
    assert row["disabled"] is None and row["event"]["code"] == TABLE_ENABLED
    assert b"<th>newest event</th><th>meters</th>" in PAGE and b"DISABLED by the host" in PAGE


def test_meters_that_go_back_are_alarmed(tmp_path: Path) -> None:
    """A lifetime meter never goes back (docs/meters.md): newer meters lower than the stored
    ones (a table restored from an older copy) are ``meters-back``; they are kept as the
    table's newest word."""
    t = TableJournal(TABLE)
    rig = Rig(tmp_path, t)
    rig.raw(f"tc/{SITE}/{TABLE}/meters", _bytes(honest_meters(TABLE, seq=40)))
    lower = honest_meters(TABLE, seq=50)
    lower["lifetime"] = {"power_ups": 1, "paigow.games_played": 0}
    rig.raw(f"tc/{SITE}/{TABLE}/meters", _bytes(lower))
    (alarm,) = rig.store.alarms()
    assert alarm.kind == "meters-back" and "paigow.games_played: 1 -> 0" in alarm.detail
    assert rig.store.meters()[(SITE, TABLE)]["seq"] == 50
