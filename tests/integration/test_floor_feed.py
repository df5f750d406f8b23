"""Events and meters on a real Mosquitto (docs/feed.md "Topics and messages", docs/events.md):
the publisher reads a real journal; each coded event arrives on ``.../events`` with the code,
the row's seq, time and round; the meters arrive retained on ``.../meters`` after a round
closed, counting what was journaled."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from controller.feed.floor import floor_lines
from controller.feed.publisher import Publisher, PublisherSettings
from controller.feed.store import Store
from controller.floor.feed import FloorFeed
from controller.journal.store import Journal
from tests.feed_hostile import honest_meters, hostile_derived
from tests.feed_journal import TableJournal
from tests.feed_rig import CollectorThread, table_broker, wait_for, write_keys
from tests.services.mosquitto import MosquittoBroker
from tests.services.mqtt import MqttTestClient


def test_events_and_retained_meters_reach_the_broker(
    mosquitto_broker: MosquittoBroker, tmp_path: Path
) -> None:
    broker = mosquitto_broker
    journal = Journal(tmp_path / "journal.sqlite")
    journal.append("app.start", {"game": "paigow", "profile": "t"})
    journal.append("paigow.drawn", {"record": {"number": 6}}, round_id=1)
    journal.append("paigow.rng_fault", {"reason": "stuck output"}, round_id=1)
    journal.append("paigow.settled", {"record": {"number": 6}}, round_id=1)
    settings = PublisherSettings(
        table_broker(broker, "table-07"), broker.site, "table-07", tmp_path / "feed.position"
    )
    derived = FloorFeed("table-07", journal.reader, None)
    pub = Publisher(settings, journal.reader, derived=derived)
    with MqttTestClient.connect_to(broker, "collector") as c:
        c.subscribe(broker.topic("table-07", "events"))
        pub.start()
        try:
            wait_for(lambda: pub.state().acked_seq == 4, 20.0, "rows acknowledged")
            events = [json.loads(c.expect(timeout=10).payload) for _ in range(2)]
        finally:
            pub.stop()
    assert [(e["code"], e["seq"], e["round"]) for e in events] == [(100, 1, None), (120, 3, 1)]
    assert events[1]["details"] == {"reason": "stuck output"}
    assert events[1]["ts"] > 0
    # the meters are retained: a client that subscribes afterwards gets them
    with MqttTestClient.connect_to(broker, "collector") as late:
        late.subscribe(broker.topic("table-07", "meters"))
        meters = json.loads(late.expect(timeout=10).payload)
    assert meters["lifetime"] == {
        "power_ups": 1,
        "paigow.rng.6": 1,
        "faults.rng": 1,
        "paigow.games_played": 1,
    }
    assert meters["seq"] == 4
    journal.close()


def _wait_stored(url: str, ready: Callable[[Store], bool], what: str) -> None:
    def check() -> bool:
        store = Store.open(url)
        try:
            return ready(store)
        finally:
            store.close()

    wait_for(check, 20.0, what)


def test_a_tables_meters_and_events_reach_the_store_and_the_floor(
    mosquitto_broker: MosquittoBroker, tmp_path: Path
) -> None:
    """A real table's journal through its publisher, a real Mosquitto and the collector into
    the store (docs/feed.md "Events and meters"); ``table-controller floor`` shows them."""
    broker = mosquitto_broker
    url = f"sqlite:///{tmp_path / 'collector.sqlite'}"
    keys = write_keys(tmp_path / "keys", TableJournal("table-07"))
    journal = Journal(tmp_path / "journal.sqlite")
    journal.append("app.start", {"game": "paigow", "profile": "t"})
    journal.append("paigow.drawn", {"record": {"number": 6}}, round_id=1)
    journal.append("paigow.rng_fault", {"reason": "stuck output"}, round_id=1)
    journal.append("paigow.settled", {"record": {"number": 6}}, round_id=1)
    settings = PublisherSettings(
        table_broker(broker, "table-07"), broker.site, "table-07", tmp_path / "feed.position"
    )
    collector = CollectorThread(broker, url, keys)
    pub = Publisher(settings, journal.reader, derived=FloorFeed("table-07", journal.reader, None))
    pub.start()
    try:
        _wait_stored(
            url,
            lambda s: (
                (broker.site, "table-07") in s.meters()
                and len(s.table_events(broker.site, "table-07")) == 2
            ),
            "meters and events stored",
        )
    finally:
        pub.stop()
        collector.stop()
        journal.close()
    store = Store.open(url)
    try:
        meters = store.meters()[(broker.site, "table-07")]
        events = store.table_events(broker.site, "table-07")
        lines = floor_lines(store, site=broker.site)
        assert store.alarms() == []
    finally:
        store.close()
    # counted independently: one start, one round settled, one drawn 6, one RNG fault
    assert meters["seq"] == 4
    assert meters["lifetime"]["paigow.games_played"] == 1
    assert meters["lifetime"]["power_ups"] == 1
    assert [(e.seq, e.code, e.round) for e in events] == [(3, 120, 1), (1, 100, None)]
    (summary,) = [line for line in lines if line.startswith("  table-07:")]
    assert "games 1 (1 this shift)" in summary and "120 RNG fault" in summary


@pytest.fixture
def collector_on_broker(
    mosquitto_broker: MosquittoBroker, tmp_path: Path
) -> Iterator[tuple[CollectorThread, MqttTestClient, str]]:
    url = f"sqlite:///{tmp_path / 'collector.sqlite'}"
    keys = write_keys(tmp_path / "keys", TableJournal("table-07"))
    collector = CollectorThread(mosquitto_broker, url, keys)
    table = MqttTestClient.connect_to(mosquitto_broker, "table-07")
    try:
        yield collector, table, url
    finally:
        table.close()
        collector.stop()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(message=hostile_derived("table-07"))
def test_hostile_meters_and_events_are_malformed_and_the_collector_goes_on(
    collector_on_broker: tuple[CollectorThread, MqttTestClient, str],
    mosquitto_broker: MosquittoBroker,
    message: tuple[str, bytes],
) -> None:
    """With the table's own certificate (docs/feed.md "Malformed messages"): each hostile
    meters or events message is the ``malformed`` alarm, nothing is kept, and an honest one
    after it is."""
    collector, table, url = collector_on_broker
    counters = collector.collector.verifier.counters
    refused = counters.refused
    channel, payload = message
    table.publish(mosquitto_broker.topic("table-07", channel), payload)
    wait_for(lambda: counters.refused == refused + 1, 20.0, "hostile message refused")
    assert collector.thread.is_alive()
    seq = counters.meters_stored + 10
    honest = json.dumps(honest_meters("table-07", seq=seq)).encode()
    table.publish(mosquitto_broker.topic("table-07", "meters"), honest)
    _wait_stored(
        url,
        lambda s: s.meters().get((mosquitto_broker.site, "table-07"), {}).get("seq") == seq,
        "honest meters stored after the hostile one",
    )
    store = Store.open(url)
    try:
        assert {a.kind for a in store.alarms()} == {"malformed"}
        assert store.table_events(mosquitto_broker.site, "table-07") == []
    finally:
        store.close()
