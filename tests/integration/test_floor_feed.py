"""Events and meters on a real Mosquitto (docs/feed.md "Topics and messages", docs/events.md):
the publisher reads a real journal; each coded event arrives on ``.../events`` with the code,
the row's seq, time and round; the meters arrive retained on ``.../meters`` after a round
closed, counting what was journaled."""

from __future__ import annotations

import json
from pathlib import Path

from controller.feed.publisher import Publisher, PublisherSettings
from controller.floor.feed import FloorFeed
from controller.journal.store import Journal
from tests.feed_rig import table_broker, wait_for
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
