"""The floor page's reads and writes of the store on a real PostgreSQL (the SQLite case:
tests/unit/feed/test_floor_page.py): a collector's health kept per instance with the time its
connection last changed, alarms open until acknowledged and open again when they repeat, a
forked table acknowledged from the page, a table ``unknown`` while no collector holds the
broker."""

from __future__ import annotations

from pathlib import Path

from controller.feed.floorpage import FloorPage, RequestError, Snapshots
from controller.feed.store import Store, TableRecord

SITE = "site1"


def test_the_floor_pages_store_on_postgresql(postgres_url: str, tmp_path: Path) -> None:
    store = Store.open(postgres_url)
    try:
        store.save_table(TableRecord(SITE, "table-07", status="online", forked_ns=5, forked_seq=4))
        store.save_table(TableRecord(SITE, "table-08", status="online"))
        first = store.add_alarm(10, SITE, "table-08", "gap", "rows 4-6 missing")
        store.add_alarm(11, SITE, "table-07", "fork", "row 4 differs")
        store.set_health("c1", SITE, True, 100)
        store.set_health("c1", SITE, True, 200)  # no change: since stays
        store.commit()
        (health,) = store.health()
        assert (health.connected, health.since_ns, health.updated_ns) == (True, 100, 200)
        store.set_health("c1", SITE, False, 300)
        store.commit()
        assert store.health()[0].since_ns == 300
        data = Snapshots(store, SITE).build(now_ns=301)
        assert data["broker"] == "lost"
        assert {t["table"]: (t["presence"], t["integrity"]) for t in data["tables"]} == {
            "table-07": ("unknown", "forked"),
            "table-08": ("unknown", "gap"),
        }
        store.set_health("c1", SITE, True, 400)
        store.commit()
        data = Snapshots(store, SITE).build(now_ns=401)
        assert [t["presence"] for t in data["tables"]] == ["online", "online"]
        assert {a["kind"] for a in data["alarms"]} == {"gap", "fork"}
    finally:
        store.close()

    page = FloorPage(postgres_url, ("127.0.0.1", 0), None, site=SITE)
    try:
        assert page.acknowledge("J. Doe", {"alarm": first, "note": "replayed"})["alarm"] == first
        assert page.acknowledge("J. Doe", {"table": f"{SITE}/table-07", "note": "restored"})
        try:
            page.acknowledge("J. Doe", {"table": f"{SITE}/table-07", "note": "again"})
        except RequestError as exc:
            assert exc.status == 409 and "already acknowledged by J. Doe" in exc.message
        else:
            raise AssertionError("a second acknowledgement of the same divergence")
    finally:
        page.close()

    store = Store.open(postgres_url)
    try:
        opened, total = store.open_alarms(10)
        assert [a.kind for a in opened] == ["fork"] and total == 1
        store.repeat_alarm(first, 500)  # the gap again: open again
        store.commit()
        assert {a.id for a in store.open_alarms(10)[0]} == {first, opened[0].id}
        assert store.alarm_acks()[first].by == "J. Doe"
        data = Snapshots(store, SITE).build(now_ns=401)
        by = {t["table"]: t for t in data["tables"]}
        assert by["table-07"]["integrity"] != "forked" and by["table-07"]["fork_acked"]
    finally:
        store.close()


def test_the_tables_meters_and_events_on_postgresql(postgres_url: str) -> None:
    """The newest meters per table (an older copy never replaces them), each event once, the
    newest event and the disabled tables (docs/feed.md "Events and meters")."""
    from controller.feed.floor import TABLE_DISABLED, TABLE_ENABLED, disabled
    from tests.feed_hostile import honest_event, honest_meters

    store = Store.open(postgres_url)
    try:
        store.save_meters(SITE, "table-07", honest_meters("table-07", seq=9), 1)
        store.save_meters(SITE, "table-07", honest_meters("table-07", seq=5), 2)
        assert store.add_table_event(SITE, "table-07", honest_event("table-07", 3), 1)
        assert not store.add_table_event(SITE, "table-07", honest_event("table-07", 3), 2)
        off = honest_event("table-08", 4, TABLE_DISABLED)
        assert store.add_table_event(SITE, "table-08", off, 3)
        store.commit()
        assert store.meters()[(SITE, "table-07")]["seq"] == 9
        assert [(e.seq, e.code) for e in store.table_events(SITE, "table-07")] == [(3, 120)]
        assert set(disabled(store)) == {(SITE, "table-08")}
        store.add_table_event(SITE, "table-08", honest_event("table-08", 5, TABLE_ENABLED), 4)
        store.commit()
        assert disabled(store) == {}
        newest = store.newest_events()
        assert newest[(SITE, "table-08")].code == TABLE_ENABLED
        assert newest[(SITE, "table-07")].seq == 3
    finally:
        store.close()
